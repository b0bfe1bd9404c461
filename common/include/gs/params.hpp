/// @file params.hpp
/// @brief The simulation parameters every program shares, with the course defaults and the
///        checks that refuse a run before any work is done.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace gs {

/// @brief Everything that defines one run of the Gray-Scott simulation (shared/PROBLEM.md).
///
/// The defaults are the official benchmark: 1080 x 1920 cells, 1000 frames of 32 steps.
struct Params {
  int rows = 1080;                   ///< R, grid rows (`-r, --nbrow`).
  int cols = 1920;                   ///< C, grid columns (`-c, --nbcol`).
  int frames = 1000;                 ///< Frames written (`-n, --nbimage`).
  int steps_per_frame = 32;          ///< Steps between two frames (`-e, --nbextrastep`).
  std::string output = "output.h5";  ///< HDF5 output file (`-o, --output`).
  float kill_rate = 0.054f;          ///< k (`-k, --killrate`).
  float feed_rate = 0.014f;          ///< F (`-f, --feedrate`).
  float dt = 1.0f;                   ///< Time step (`-t, --deltat`).
  float diffusion_u = 0.1f;          ///< Du (`-u, --diffusion-u`).
  float diffusion_v = 0.05f;         ///< Dv (`-v, --diffusion-v`).

  /// @brief Number of cells, R * C, as a 64-bit count.
  std::int64_t cells() const { return std::int64_t{rows} * cols; }
  /// @brief Steps in the whole run: frames * steps_per_frame.
  std::int64_t total_steps() const { return std::int64_t{frames} * steps_per_frame; }
  /// @brief Bytes of the HDF5 dataset: frames * R * C float32 values.
  std::int64_t output_bytes() const {
    return std::int64_t{frames} * cells() * std::int64_t{sizeof(float)};
  }
};

/// @brief The five rates of one step as plain floats: what a kernel or a Thrust functor takes to
///        the device by value (Params holds a std::string, which cannot go there).
struct Rates {
  float diffusion_u;  ///< Du
  float diffusion_v;  ///< Dv
  float feed;         ///< F
  float kill;         ///< k
  float dt;           ///< time step
};

/// @brief The rates of @p params.
inline Rates rates_of(const Params& params) {
  return {params.diffusion_u, params.diffusion_v, params.feed_rate, params.kill_rate, params.dt};
}

/// @brief Largest dt * max(Du, Dv) for which explicit Euler is stable with this stencil
///        (its most negative eigenvalue is -12, so dt * D * 12 <= 2).
inline constexpr double kStabilityLimit = 1.0 / 6.0;

/// @brief Largest number of cells a grid may have: kernels index cells with 32-bit integers.
inline constexpr std::int64_t kMaxCells = (std::int64_t{1} << 31) - 1;

/// @brief Thrown when a parameter is outside its allowed range; the message names the flag.
class InvalidParameter : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// @brief Lists every problem with @p params, one message per problem, naming the flag and the
///        allowed range. An empty list means the parameters are valid.
std::vector<std::string> find_problems(const Params& params);

/// @brief Throws InvalidParameter (all problems in one message) unless @p params is valid.
void validate(const Params& params);

}  // namespace gs
