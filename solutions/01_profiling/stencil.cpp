// Lesson 01 - profiling a scalar loop.
//
// Three ways to advance the state, all scalar and single-threaded:
//   l01-naive        the course's naive C++: a generic 3x3 stencil whose weights are data,
//                    with a bounds check for every one of the nine neighbours;
//   l01-naive-alloc  the same loop, but allocating its temporaries every step, as array code
//                    (NumPy) does: measure what the allocations cost;
//   l01-regular      the exercise: a branch-free interior plus a separate edge path.
// Measure first (README.md): time per frame, where the time goes (perf, callgrind), and how
// many allocations each variant makes (heaptrack). Then optimize, and measure again.
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "gs/lessons.hpp"
#include "gs/reference.hpp"

namespace {

using gs::Params;
using gs::State;

// One cell of the generic stencil: sum of w * (neighbour - centre) over the in-grid
// neighbours, then the reaction. Every neighbour pays for a bounds check.
inline void update_cell_generic(const State& in, State& out, const Params& p,
                                const float (&weights)[3][3], int row, int col) {
  const std::size_t centre = in.index(row, col);
  const float u = in.u[centre];
  const float v = in.v[centre];
  float laplacian_u = 0.0f;
  float laplacian_v = 0.0f;
  for (int dr = -1; dr <= 1; ++dr) {
    for (int dc = -1; dc <= 1; ++dc) {
      const int r = row + dr;
      const int c = col + dc;
      if (r < 0 || r >= in.rows || c < 0 || c >= in.cols) continue;
      const float weight = weights[dr + 1][dc + 1];
      laplacian_u += weight * (in.u[in.index(r, c)] - u);
      laplacian_v += weight * (in.v[in.index(r, c)] - v);
    }
  }
  const float uvv = u * v * v;
  out.u[centre] = u + p.dt * (p.diffusion_u * laplacian_u - uvv + p.feed_rate * (1.0f - u));
  out.v[centre] = v + p.dt * (p.diffusion_v * laplacian_v + uvv - (p.feed_rate + p.kill_rate) * v);
}

void naive_step(const State& in, State& out, const Params& p) {
  for (int row = 0; row < in.rows; ++row) {
    for (int col = 0; col < in.cols; ++col) {
      update_cell_generic(in, out, p, gs::kUnitWeights, row, col);
    }
  }
}

// The "regular" step: the interior, where all eight neighbours exist, needs no bounds check
// and no weights (all ones): L(a) = (sum of the eight neighbours) - 8 a. Only the cells of the
// four edges take the generic path.
void regular_step(const State& in, State& out, const Params& p) {
  const int rows = in.rows;
  const int cols = in.cols;
  // GS_EXERCISE_BEGIN(interior)
  for (int row = 1; row < rows - 1; ++row) {
    const float* u_up = &in.u[in.index(row - 1, 0)];
    const float* u_mid = &in.u[in.index(row, 0)];
    const float* u_down = &in.u[in.index(row + 1, 0)];
    const float* v_up = &in.v[in.index(row - 1, 0)];
    const float* v_mid = &in.v[in.index(row, 0)];
    const float* v_down = &in.v[in.index(row + 1, 0)];
    float* u_out = &out.u[out.index(row, 0)];
    float* v_out = &out.v[out.index(row, 0)];
    for (int col = 1; col < cols - 1; ++col) {
      const float u = u_mid[col];
      const float v = v_mid[col];
      const float laplacian_u = u_up[col - 1] + u_up[col] + u_up[col + 1] + u_mid[col - 1] +
                                u_mid[col + 1] + u_down[col - 1] + u_down[col] + u_down[col + 1] -
                                8.0f * u;
      const float laplacian_v = v_up[col - 1] + v_up[col] + v_up[col + 1] + v_mid[col - 1] +
                                v_mid[col + 1] + v_down[col - 1] + v_down[col] + v_down[col + 1] -
                                8.0f * v;
      const float uvv = u * v * v;
      u_out[col] = u + p.dt * (p.diffusion_u * laplacian_u - uvv + p.feed_rate * (1.0f - u));
      v_out[col] = v + p.dt * (p.diffusion_v * laplacian_v + uvv - (p.feed_rate + p.kill_rate) * v);
    }
  }
  // GS_EXERCISE_END
  // The edges: first and last row, first and last column (each cell once).
  for (int col = 0; col < cols; ++col) {
    update_cell_generic(in, out, p, gs::kUnitWeights, 0, col);
    if (rows > 1) update_cell_generic(in, out, p, gs::kUnitWeights, rows - 1, col);
  }
  for (int row = 1; row < rows - 1; ++row) {
    update_cell_generic(in, out, p, gs::kUnitWeights, row, 0);
    if (cols > 1) update_cell_generic(in, out, p, gs::kUnitWeights, row, cols - 1);
  }
}

// Two buffers allocated once in load(); each step reads one and writes the other, then swaps.
template <void (*Step)(const State&, State&, const Params&)>
class BufferedStepper final : public gs::Stepper {
 public:
  void load(const State& state, const Params& params) override {
    current_ = state;
    next_ = State(state.rows, state.cols);
    params_ = params;
  }
  void advance(int steps) override {
    for (int step = 0; step < steps; ++step) {
      Step(current_, next_, params_);
      std::swap(current_, next_);
    }
  }
  void fetch(State& state) override { state = current_; }

 private:
  State current_;
  State next_;
  Params params_;
};

// Array style, like NumPy: every step builds new arrays for its temporaries (the two
// Laplacians, u*v*v) and for the result. Same arithmetic, five allocations per step.
class AllocatingStepper final : public gs::Stepper {
 public:
  void load(const State& state, const Params& params) override {
    current_ = state;
    params_ = params;
  }
  void advance(int steps) override {
    const Params& p = params_;
    const std::size_t n = current_.size();
    for (int step = 0; step < steps; ++step) {
      std::vector<float> laplacian_u(n, 0.0f);
      std::vector<float> laplacian_v(n, 0.0f);
      for (int row = 0; row < current_.rows; ++row) {
        for (int col = 0; col < current_.cols; ++col) {
          const std::size_t centre = current_.index(row, col);
          for (int dr = -1; dr <= 1; ++dr) {
            for (int dc = -1; dc <= 1; ++dc) {
              const int r = row + dr;
              const int c = col + dc;
              if (r < 0 || r >= current_.rows || c < 0 || c >= current_.cols) continue;
              const float weight = gs::kUnitWeights[dr + 1][dc + 1];
              laplacian_u[centre] +=
                  weight * (current_.u[current_.index(r, c)] - current_.u[centre]);
              laplacian_v[centre] +=
                  weight * (current_.v[current_.index(r, c)] - current_.v[centre]);
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
        next.u[i] = u + p.dt * (p.diffusion_u * laplacian_u[i] - uvv[i] + p.feed_rate * (1.0f - u));
        next.v[i] =
            v + p.dt * (p.diffusion_v * laplacian_v[i] + uvv[i] - (p.feed_rate + p.kill_rate) * v);
      }
      current_ = std::move(next);
    }
  }
  void fetch(State& state) override { state = current_; }

 private:
  State current_;
  Params params_;
};

}  // namespace

namespace lesson01 {

std::vector<gs::Implementation> implementations() {
  return {
      {"l01-regular", "01_profiling", "branch-free interior + separate edge path (the exercise)",
       gs::Device::cpu, [] { return std::make_unique<BufferedStepper<regular_step>>(); }},
      {"l01-naive", "01_profiling", "generic 3x3 weights as data, bounds check per neighbour",
       gs::Device::cpu, [] { return std::make_unique<BufferedStepper<naive_step>>(); }},
      {"l01-naive-alloc", "01_profiling",
       "naive, allocating its temporaries every step (NumPy style)", gs::Device::cpu,
       [] { return std::make_unique<AllocatingStepper>(); }},
  };
}

}  // namespace lesson01
