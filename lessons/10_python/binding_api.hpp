// Lesson 10: what binding.hpp, the learner's file, works with (its interface): where a state is
// computed (Target), the work advance_released() drives (Work), how many steps run between two
// looks at Python (Batching), and whether two arrays overlap; with arrays.hpp, what the module
// knows of an array (ArrayInfo, ArrayError, place_of()). module.cpp implements the rest: the
// kinds of Work and the classes Python sees.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "arrays.hpp"
#include "gs/interrupt.hpp"
#include "gs/stepper.hpp"
#include "gs/timing.hpp"

namespace lesson10 {

// Where a state is computed: its grid, and where the chosen implementation runs.
struct Target {
  int rows = 0;
  int cols = 0;
  gs::Device device = gs::Device::cpu;
  int device_id = 0;           // the GPU the stepper was made on
  std::string implementation;  // its name, for messages
};

// What advance_released() advances: the simulation's own state, or the caller's arrays.
class Work {
 public:
  virtual ~Work() = default;
  // Queues `steps` steps (a GPU stepper returns before they are done).
  virtual void advance(int steps) = 0;
  // Returns when every step queued so far is done.
  virtual void wait() = 0;
};

// How many steps advance_released() runs between two looks at Python: a power of two sized from
// the measured speed to take about 0.1 s, so that Ctrl-C stops a long call within a fraction of
// a second. A call of up to one batch is one stepper call, with no wait: frames of a few dozen
// steps keep a GPU's launches queued back to back. Until measured, a batch is
// gs::first_batch_steps() of the grid, the programs' first batch: 64 steps on small grids, fewer
// on large ones, one step from 4096 x 4096 on (a call of 64 steps there is seconds to minutes of
// work that Ctrl-C would wait for).
class Batching {
 public:
  explicit Batching(std::int64_t cells) : batch_(gs::first_batch_steps(cells)) {}
  bool one_call(std::int64_t steps) const { return steps <= batch_; }
  int next(std::int64_t left) const {
    return static_cast<int>(std::min<std::int64_t>(left, batch_));
  }
  void took(int steps, double seconds) {
    constexpr double kTarget = 0.1;
    const double wanted = seconds > 0.0 ? steps * kTarget / seconds : 8.0 * steps;
    int batch = 1;  // at most 8 times the last batch: a first batch that ran cold
    while (batch * 2 <= wanted && batch < 8 * steps && batch < (1 << 29)) batch *= 2;
    batch_ = batch;
  }

 private:
  int batch_;
};

// Whether the cells of u and v, as the grid uses them, share any byte.
inline bool overlaps(const ArrayInfo& u, const ArrayInfo& v, const Target& target) {
  const auto span = [&target](const ArrayInfo& a) {
    const auto begin = reinterpret_cast<std::uintptr_t>(a.data);
    const std::int64_t pitch = target.rows > 1 ? a.strides[0] : target.cols;
    const auto cells = static_cast<std::uintptr_t>((target.rows - 1) * pitch + target.cols);
    return std::pair<std::uintptr_t, std::uintptr_t>{begin, begin + cells * sizeof(float)};
  };
  const auto [u_begin, u_end] = span(u);
  const auto [v_begin, v_end] = span(v);
  return u.device == v.device && u_begin < v_end && v_begin < u_end;
}

}  // namespace lesson10
