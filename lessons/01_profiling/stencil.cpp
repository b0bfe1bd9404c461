// Lesson 01 - profiling a scalar loop.
//
// Three ways to advance the state, all scalar and single-threaded:
//   l01-naive        the course's naive C++: a generic 3x3 stencil whose weights are data,
//                    with a bounds check for every one of the nine neighbours;
//   l01-naive-alloc  the same loop, but allocating its temporaries every step, as array code
//                    (NumPy) does: measure what the allocations cost;
//   l01-regular      the exercise: a branch-free interior (interior.hpp, the file you edit)
//                    plus a separate edge path.
// Measure first (README.md): time per frame, where the time goes (perf, callgrind), and how
// many allocations each variant makes (heaptrack). Then optimize, and measure again.
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "gs/lesson.hpp"
#include "gs/params.hpp"
#include "gs/state.hpp"

// The exercise: interior::update_interior(), the branch-free loop over the interior cells. Angle
// brackets: the build picks lessons/01_profiling/interior.hpp (your stubs) or the solution's copy.
// It compiles on its own (gs_add_lesson's LEARNER_ALONE): it sees gs::State and gs::Rates, not
// this file.
#include <interior.hpp>

namespace {

using gs::Rates;
using gs::State;

// One cell of the generic stencil: sum of w * (neighbour - centre) over the in-grid
// neighbours, then the reaction. Every neighbour pays for a bounds check.
inline void update_cell_generic(const State& in, State& out, const Rates& r, int row, int col) {
  const std::size_t centre = in.index(row, col);
  const float u = in.u[centre];
  const float v = in.v[centre];
  float laplacian_u = 0.0f;
  float laplacian_v = 0.0f;
  for (int dr = -1; dr <= 1; ++dr) {
    for (int dc = -1; dc <= 1; ++dc) {
      const int neighbour_row = row + dr;
      const int neighbour_col = col + dc;
      if (neighbour_row < 0 || neighbour_row >= in.rows || neighbour_col < 0 ||
          neighbour_col >= in.cols) {
        continue;
      }
      const float weight = r.weights.w[dr + 1][dc + 1];
      laplacian_u += weight * (in.u[in.index(neighbour_row, neighbour_col)] - u);
      laplacian_v += weight * (in.v[in.index(neighbour_row, neighbour_col)] - v);
    }
  }
  const float uvv = u * v * v;
  out.u[centre] = u + r.dt * (r.diffusion_u * laplacian_u - uvv + r.feed * (1.0f - u));
  out.v[centre] = v + r.dt * (r.diffusion_v * laplacian_v + uvv - (r.feed + r.kill) * v);
}

void naive_step(const State& in, State& out, const Rates& r) {
  for (int row = 0; row < in.rows; ++row) {
    for (int col = 0; col < in.cols; ++col) update_cell_generic(in, out, r, row, col);
  }
}

// The "regular" step: the interior, where all eight neighbours exist, needs no bounds check
// and no weights (all ones): interior::update_interior() of interior.hpp. Only the cells of the
// four edges take the generic path.
void regular_step(const State& in, State& out, const Rates& r) {
  interior::update_interior(in, out, r);
  for (int col = 0; col < in.cols; ++col) {
    update_cell_generic(in, out, r, 0, col);
    if (in.rows > 1) update_cell_generic(in, out, r, in.rows - 1, col);
  }
  for (int row = 1; row < in.rows - 1; ++row) {
    update_cell_generic(in, out, r, row, 0);
    if (in.cols > 1) update_cell_generic(in, out, r, row, in.cols - 1);
  }
}

// Two buffers allocated once in load(); each step reads one and writes the other, then swaps.
template <void (*Step)(const State&, State&, const Rates&), bool kGeneric>
class BufferedStepper final : public gs::Stepper, public gs::HoldsFields {
 public:
  explicit BufferedStepper(const char* name) : name_(name) {}
  void load(const State& state, const Rates& rates) override {
    if (!kGeneric) gs::require_unit_stencil(rates, name_);
    current_ = state;
    next_ = State(state.rows, state.cols);
    rates_ = rates;
  }
  void advance(int steps) override {
    for (int step = 0; step < steps; ++step) {
      Step(current_, next_, rates_);
      std::swap(current_, next_);
    }
  }
  void fetch(State& state) override { state = current_; }
  gs::FieldView fields() override {
    return {current_.u.data(), current_.v.data(), current_.cols, current_.rows,
            current_.cols,     gs::Device::cpu,   nullptr};
  }

 private:
  const char* name_;
  State current_;
  State next_;
  Rates rates_;
};

// Array style, like NumPy: every step builds new arrays for its temporaries (the two
// Laplacians, u*v*v) and for the result. Same arithmetic, five allocations per step.
class AllocatingStepper final : public gs::Stepper {
 public:
  void load(const State& state, const Rates& rates) override {
    current_ = state;
    rates_ = rates;
  }
  void advance(int steps) override {
    const Rates& r = rates_;
    const std::size_t n = current_.size();
    for (int step = 0; step < steps; ++step) {
      std::vector<float> laplacian_u(n, 0.0f);
      std::vector<float> laplacian_v(n, 0.0f);
      for (int row = 0; row < current_.rows; ++row) {
        for (int col = 0; col < current_.cols; ++col) {
          const std::size_t centre = current_.index(row, col);
          for (int dr = -1; dr <= 1; ++dr) {
            for (int dc = -1; dc <= 1; ++dc) {
              const int neighbour_row = row + dr;
              const int neighbour_col = col + dc;
              if (neighbour_row < 0 || neighbour_row >= current_.rows || neighbour_col < 0 ||
                  neighbour_col >= current_.cols) {
                continue;
              }
              const std::size_t neighbour = current_.index(neighbour_row, neighbour_col);
              const float weight = r.weights.w[dr + 1][dc + 1];
              laplacian_u[centre] += weight * (current_.u[neighbour] - current_.u[centre]);
              laplacian_v[centre] += weight * (current_.v[neighbour] - current_.v[centre]);
            }
          }
        }
      }
      std::vector<float> uvv(n);
      for (std::size_t i = 0; i < n; ++i) uvv[i] = current_.u[i] * current_.v[i] * current_.v[i];
      State next(current_.rows, current_.cols);
      for (std::size_t i = 0; i < n; ++i) {
        const float u = current_.u[i];
        const float v = current_.v[i];
        next.u[i] = u + r.dt * (r.diffusion_u * laplacian_u[i] - uvv[i] + r.feed * (1.0f - u));
        next.v[i] = v + r.dt * (r.diffusion_v * laplacian_v[i] + uvv[i] - (r.feed + r.kill) * v);
      }
      current_ = std::move(next);
    }
  }
  void fetch(State& state) override { state = current_; }

 private:
  State current_;
  Rates rates_;
};

}  // namespace

namespace GS_LESSON_NAMESPACE {

std::vector<gs::Implementation> implementations() {
  return {
      {"l01-regular", "01_profiling", "branch-free interior + separate edge path (the exercise)",
       gs::Device::cpu,
       [] { return std::make_unique<BufferedStepper<regular_step, false>>("l01-regular"); }},
      {"l01-naive", "01_profiling", "generic 3x3 weights as data, bounds check per neighbour",
       gs::Device::cpu,
       [] { return std::make_unique<BufferedStepper<naive_step, true>>("l01-naive"); }, true},
      {"l01-naive-alloc", "01_profiling",
       "naive, allocating its temporaries every step (NumPy style)", gs::Device::cpu,
       [] { return std::make_unique<AllocatingStepper>(); }, true},
  };
}

}  // namespace GS_LESSON_NAMESPACE
