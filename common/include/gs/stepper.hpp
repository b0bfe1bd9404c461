/// @file stepper.hpp
/// @brief The one abstraction every lesson implements: something that owns the state in its
///        own layout and advances it. Everything around it (flags, output, timing) is common.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gs/params.hpp"
#include "gs/state.hpp"

namespace gs {

/// @brief Advances a Gray-Scott state; each lesson variant is one Stepper.
///
/// The life cycle is load() once, then advance() and fetch_v() per frame. A GPU stepper uploads
/// in load(), keeps the fields on the device, and downloads only in fetch_v() and fetch():
/// the data crosses PCIe once each way, not once per step.
class Stepper {
 public:
  virtual ~Stepper() = default;

  /// @brief Takes a copy of @p state and the rates of @p params; later calls start from it.
  virtual void load(const State& state, const Params& params) = 0;

  /// @brief Advances the loaded state by @p steps explicit Euler steps (steps >= 0).
  ///        May return before the work is finished (asynchronous devices).
  virtual void advance(int steps) = 0;

  /// @brief Writes the current u and v into @p state (resized to the grid); waits for pending
  ///        work first.
  virtual void fetch(State& state) = 0;

  /// @brief Writes the current v (rows * cols values) to @p v; waits for pending work first.
  ///        The default goes through fetch(); GPU steppers override it to copy v alone.
  virtual void fetch_v(float* v);

  /// @brief Waits until every step asked for so far is done (a no-op on the CPU).
  virtual void synchronize() {}
};

/// @brief Where an implementation runs.
enum class Device { cpu, gpu };

/// @brief A named, selectable implementation: what `--impl`, `--list` and the benchmark see.
struct Implementation {
  std::string name;             ///< Unique, short, used on the command line (e.g. "l04-generic").
  std::string lesson;           ///< The lesson it belongs to (e.g. "04_cuda_kernels"), or "common".
  std::string summary;          ///< One line: what it does and what it teaches.
  Device device = Device::cpu;  ///< Where it runs.
  std::function<std::unique_ptr<Stepper>()> create;  ///< Makes a fresh stepper.
};

/// @brief The scalar reference wrapped as a Stepper (the oracle, and the slowest path).
Implementation reference_implementation();

/// @brief Finds @p name in @p implementations; nullptr when absent.
const Implementation* find_implementation(const std::vector<Implementation>& implementations,
                                          const std::string& name);

}  // namespace gs
