/// @file params.hpp
/// @brief The simulation's parameters: the stencil weights and the rates of one step (what a
///        Stepper takes), the run around them (grid, frames, output), the course defaults and
///        the checks that refuse a run before any work is done (docs/PROBLEM.md).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace gs {

/// @brief The nine weights of a 3x3 stencil: `w[1 + dr][1 + dc]` multiplies the difference
///        between the neighbour at row offset dr, column offset dc and the centre. The centre
///        weight is ignored (its term is a - a = 0). A plain aggregate: it can be passed to a
///        kernel by value or placed in constant memory.
struct StencilWeights {
  float w[3][3];  ///< Row by row: w[0] is the row above, w[2] the row below.
};

/// @brief The canonical problem's stencil: all nine weights 1.
inline constexpr StencilWeights kUnitWeights = {{{1.0f, 1.0f, 1.0f},  //
                                                 {1.0f, 1.0f, 1.0f},
                                                 {1.0f, 1.0f, 1.0f}}};

/// @brief True when the eight off-centre weights of @p weights are all 1 (the centre one does not
///        matter): what the specialised implementations, which hard-code the unit stencil, need.
bool is_unit_stencil(const StencilWeights& weights);

/// @brief The sum of the eight off-centre weights (8 for the unit stencil): the weight an interior
///        cell gives its own value, since sum of w (a_n - a_c) = (sum of w a_n) - (sum of w) a_c.
float off_centre_sum(const StencilWeights& weights);

/// @brief What one explicit Euler step needs besides the state: the five rates and the stencil.
///        Every Stepper takes it in load(). Plain floats and an aggregate, so it can be passed to a
///        kernel by value. The defaults are the course's (`-u`, `-v`, `-f`, `-k`, `-t`).
struct Rates {
  float diffusion_u = 0.1f;               ///< Du (`-u, --diffusion-u`)
  float diffusion_v = 0.05f;              ///< Dv (`-v, --diffusion-v`)
  float feed = 0.014f;                    ///< F (`-f, --feedrate`)
  float kill = 0.054f;                    ///< k (`-k, --killrate`)
  float dt = 1.0f;                        ///< time step (`-t, --deltat`)
  StencilWeights weights = kUnitWeights;  ///< the 3x3 stencil; only generic implementations
                                          ///< accept others (Implementation::generic)
};

/// @brief Everything that defines one run (docs/PROBLEM.md). The defaults are the official
///        benchmark: 1080 x 1920 cells, 1000 frames of 32 steps, written to output.h5.
struct Params {
  int rows = 1080;                   ///< R, grid rows (`-r, --nbrow`).
  int cols = 1920;                   ///< C, grid columns (`-c, --nbcol`).
  int frames = 1000;                 ///< Frames written (`-n, --nbimage`).
  int steps_per_frame = 32;          ///< Steps between two frames (`-e, --nbextrastep`).
  std::string output = "output.h5";  ///< HDF5 output file (`-o, --output`).
  /// @brief The starting state: -1 for the canonical one (initial_state()), else the seed of a
  ///        random one (random_state(), `--seed`): what a judge draws so that no code can know
  ///        the state it will be run from.
  std::int64_t seed = -1;
  Rates rates;  ///< The rates of every step and the stencil.

  /// @brief Number of cells, R * C, as a 64-bit count.
  std::int64_t cells() const { return std::int64_t{rows} * cols; }
  /// @brief Steps in the whole run: frames * steps_per_frame.
  std::int64_t total_steps() const { return std::int64_t{frames} * steps_per_frame; }
  /// @brief Bytes of the HDF5 dataset, frames * R * C float32 values, saturated at INT64_MAX for
  ///        sizes no file system holds (so a comparison with free space never overflows).
  std::int64_t output_bytes() const;
};

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

/// @brief What keeps @p value from being a float32 that computes like the number given, or ""
///        when nothing does: 0 and the normal float32 numbers (magnitude from FLT_MIN,
///        1.17549e-38, to FLT_MAX, 3.40282e+38) are fine; NaN and the infinities are "not a finite
///        number"; a larger magnitude "is too large for float32" (it would become infinite); a
///        smaller one "is too small for float32" (it would become 0 or a subnormal number, which
///        computes slowly and without precision). Every rate given on a command line is checked
///        with it before conversion, so that 1e39 is refused instead of running as inf.
std::string float32_problem(double value);

/// @brief Lists every problem with @p rates, one message per problem, naming the flag and the
///        allowed range (non-positive or non-finite rates, rates below float32's normal range,
///        an unstable time step).
std::vector<std::string> find_problems(const Rates& rates);

/// @brief Lists every problem with @p params (its rates included). An empty list means valid.
std::vector<std::string> find_problems(const Params& params);

/// @brief Throws InvalidParameter (all problems in one message) unless @p params is valid.
void validate(const Params& params);

}  // namespace gs
