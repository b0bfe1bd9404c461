// Lesson 04 - raw CUDA kernels.
//
// The step written as CUDA kernels, with nothing between us and the hardware: a 2-D grid of
// 2-D thread blocks, one thread per cell (or per short column of cells), the global index
// computed from blockIdx, blockDim and threadIdx, and a bounds check for the threads that the
// rounded-up grid adds past the last row and column. The stencil is generic: its nine weights
// are data, held in __constant__ memory. Both fields stay on the device from load() to fetch()
// in two ping-pong buffers each; every runtime call and every launch is checked; CUDA events
// time the steps on the GPU's own clock.
//
// Implementations, best first:
//   l04-generic            the generic kernel with the best launch shape of the sweep below
//                          (on an H100: 64x2 blocks, 4 cells per thread);
//   l04-generic-WxH        the same kernel, W x H thread blocks, one cell per thread (the
//                          block-size sweep of README.md);
//   l04-generic-WxH-Nrows  each thread updates N cells of one column, loading each value once;
//   l04-checked-32x8       the first kernel everyone writes: a bounds check for every neighbour
//                          of every cell.
// The exercise: the bodies of checked_step and generic_step (README.md, "The exercise").
#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gs/cuda_check.hpp"
#include "gs/lessons.hpp"
#include "gs/reference.hpp"

namespace lesson04 {

/// @brief The nine stencil weights, row by row (gs::StencilWeights; the centre one is ignored).
using Weights = gs::StencilWeights;

}  // namespace lesson04

namespace {

// ---------------------------------------------------------------------------------------------
// The kernels
// ---------------------------------------------------------------------------------------------

// The stencil as data, in constant memory. Every thread of a warp reads the same weight at the
// same moment, and the constant cache serves such a uniform read as one broadcast: the weights
// cost no memory traffic. interior_weight_sum is the sum of the eight off-centre weights, the
// "N" of PROBLEM.md (8 for the unit weights):
//   sum over in-grid neighbours of w * (a_n - a_c) = (sum of w * a_n) - (sum of those w) * a_c.
using Stencil = gs::WeightTable;
__constant__ Stencil c_stencil;

// The rates of the step (gs::Rates: plain floats, passed by value to the device).
using gs::Rates;

// Reaction and explicit Euler update of the cell at `index`, given its two Laplacians.
__device__ __forceinline__ void write_cell(int index, float u, float v, float laplacian_u,
                                           float laplacian_v, const Rates& rates,
                                           float* __restrict__ u_next, float* __restrict__ v_next) {
  const float uvv = u * v * v;
  u_next[index] = u + rates.dt * (rates.diffusion_u * laplacian_u - uvv + rates.feed * (1.0f - u));
  v_next[index] =
      v + rates.dt * (rates.diffusion_v * laplacian_v + uvv - (rates.feed + rates.kill) * v);
}

// One cell by the definition: each of the eight neighbours is checked against the grid and
// skipped when it lies outside (PROBLEM.md's edge rule). Correct everywhere, and slow: nine
// branches and a running weight sum per cell. ([[maybe_unused]]: the exercise, as shipped, does
// not call it yet.)
[[maybe_unused]] __device__ void update_cell_checked(
    int rows, int cols, int row, int col, const float* __restrict__ u, const float* __restrict__ v,
    float* __restrict__ u_next, float* __restrict__ v_next, const Rates& rates) {
  const int centre = row * cols + col;
  float sum_u = 0.0f;
  float sum_v = 0.0f;
  float weight_in_grid = 0.0f;
  for (int dr = -1; dr <= 1; ++dr) {
    for (int dc = -1; dc <= 1; ++dc) {
      const int r = row + dr;
      const int c = col + dc;
      if ((dr == 0 && dc == 0) || r < 0 || r >= rows || c < 0 || c >= cols) continue;
      const float weight = c_stencil.weights[dr + 1][dc + 1];
      sum_u += weight * u[r * cols + c];
      sum_v += weight * v[r * cols + c];
      weight_in_grid += weight;
    }
  }
  const float u_c = u[centre];
  const float v_c = v[centre];
  write_cell(centre, u_c, v_c, sum_u - weight_in_grid * u_c, sum_v - weight_in_grid * v_c, rates,
             u_next, v_next);
}

// The first kernel: one thread per cell, every neighbour checked.
__global__ void checked_step(int rows, int cols, const float* __restrict__ u,
                             const float* __restrict__ v, float* __restrict__ u_next,
                             float* __restrict__ v_next, Rates rates) {
  // GS_EXERCISE_BEGIN(checked_step)
  // TODO(lesson 04): compute this thread's global (row, col) from blockIdx, blockDim and
  // threadIdx (x runs along columns), return at once if the cell lies outside the grid (the
  // grid of blocks is rounded up), then call update_cell_checked() for the cell. Until this
  // is written the kernel writes nothing and l04-checked-32x8 fails its tests.
  // GS_EXERCISE_END
}

// Three neighbouring values of one row, read through the read-only data cache (__ldg).
[[maybe_unused]] __device__ __forceinline__ void load_three(const float* __restrict__ field,
                                                            int index, float (&values)[3]) {
  values[0] = __ldg(field + index - 1);
  values[1] = __ldg(field + index);
  values[2] = __ldg(field + index + 1);
}

// The generic kernel. Each thread owns kRowsPerThread cells of one column. A thread whose cells
// all lie inside the grid (not on an edge row or column) takes the fast path: no check, the
// 3x3 window of each field in registers, each value loaded once and slid down from one cell
// to the next, the weights read from constant memory. Threads that touch an edge take the
// checked path, cell by cell; they are a few warps out of thousands.
template <int kRowsPerThread>
__global__ void generic_step(int rows, int cols, const float* __restrict__ u,
                             const float* __restrict__ v, float* __restrict__ u_next,
                             float* __restrict__ v_next, Rates rates) {
  // GS_EXERCISE_BEGIN(generic_step)
  // TODO(lesson 04): the fast generic kernel. This thread owns kRowsPerThread cells of column
  // col, starting at row first_row = (global y index) * kRowsPerThread. Return if col or
  // first_row is outside the grid. If any of its cells lies on an edge row or column, update
  // them one by one with update_cell_checked() and return. Otherwise keep the 3x3 window of u
  // and v in registers (load_three() reads three values of a row), compute
  //   L(a) = sum of c_stencil.weights[r][c] * window[r][c] over the 8 off-centre entries
  //          - c_stencil.interior_weight_sum * centre,
  // call write_cell(), slide the window down one row and load only the new row below.
  // Until this is written the kernel writes nothing and every l04-generic* test fails.
  // GS_EXERCISE_END
}

// ---------------------------------------------------------------------------------------------
// The plumbing: device buffers, launches, events
// ---------------------------------------------------------------------------------------------

using StepKernel = void (*)(int, int, const float*, const float*, float*, float*, Rates);

// Device memory that frees itself (gs::DeviceFloats, common/).
using DeviceArray = gs::DeviceFloats;
using gs::device_floats;

// Owns the four device arrays (u, v and their next-step buffers) and launches one kernel per
// step on the default stream. Timing: advance() records an event before its first launch and
// one after its last; once they have passed, cudaEventElapsedTime gives the GPU time between
// them. The totals are printed when the stepper is destroyed if GS_EVENT_TIMING is set.
class KernelStepper final : public gs::Stepper {
 public:
  KernelStepper(std::string name, StepKernel kernel, dim3 block, int rows_per_thread,
                const lesson04::Weights& weights)
      : name_(std::move(name)),
        kernel_(kernel),
        block_(block),
        rows_per_thread_(rows_per_thread),
        stencil_(gs::weight_table(weights)) {}

  ~KernelStepper() override {
    if (start_ != nullptr) cudaEventDestroy(start_);
    if (stop_ != nullptr) cudaEventDestroy(stop_);
    if (std::getenv("GS_EVENT_TIMING") == nullptr || timed_steps_ == 0) return;
    std::fprintf(stderr, "%s: CUDA events: %lld steps in %.3f ms of GPU time, %.2f us/step\n",
                 name_.c_str(), static_cast<long long>(timed_steps_), gpu_milliseconds_,
                 1000.0 * gpu_milliseconds_ / static_cast<double>(timed_steps_));
  }
  KernelStepper(const KernelStepper&) = delete;
  KernelStepper& operator=(const KernelStepper&) = delete;

  void load(const gs::State& state, const gs::Params& params) override {
    rows_ = state.rows;
    cols_ = state.cols;
    rates_ = gs::rates_of(params);
    const std::size_t cells = state.size();
    u_ = device_floats(cells);
    v_ = device_floats(cells);
    u_next_ = device_floats(cells);
    v_next_ = device_floats(cells);
    GS_CUDA_CHECK(
        cudaMemcpy(u_.get(), state.u.data(), cells * sizeof(float), cudaMemcpyHostToDevice));
    GS_CUDA_CHECK(
        cudaMemcpy(v_.get(), state.v.data(), cells * sizeof(float), cudaMemcpyHostToDevice));
    if (start_ == nullptr) GS_CUDA_CHECK(cudaEventCreate(&start_));
    if (stop_ == nullptr) GS_CUDA_CHECK(cudaEventCreate(&stop_));
    gpu_milliseconds_ = 0.0;
    timed_steps_ = 0;
    pending_steps_ = 0;
  }

  void advance(int steps) override {
    if (steps <= 0) return;
    collect_event_time();  // a previous advance() not yet synchronized: add its time first
    // The weights of this stepper into constant memory, in stream order (another stepper may
    // have put its own there). A pageable-memory upload is staged at once: no host wait.
    GS_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_stencil, &stencil_, sizeof stencil_, 0,
                                          cudaMemcpyHostToDevice, nullptr));
    // Enough blocks to cover the grid, rounded up; the kernels' bounds checks drop the rest.
    const int rows_per_block = static_cast<int>(block_.y) * rows_per_thread_;
    const dim3 grid((cols_ + block_.x - 1) / block_.x,
                    (rows_ + rows_per_block - 1) / rows_per_block);
    GS_CUDA_CHECK(cudaEventRecord(start_));
    for (int step = 0; step < steps; ++step) {
      kernel_<<<grid, block_>>>(rows_, cols_, u_.get(), v_.get(), u_next_.get(), v_next_.get(),
                                rates_);
      GS_CUDA_CHECK_LAUNCH();
      std::swap(u_, u_next_);  // ping-pong: this step's output is the next step's input
      std::swap(v_, v_next_);
    }
    GS_CUDA_CHECK(cudaEventRecord(stop_));
    pending_steps_ = steps;
  }

  void synchronize() override {
    GS_CUDA_CHECK(cudaDeviceSynchronize());
    collect_event_time();
  }

  void fetch(gs::State& state) override {
    synchronize();
    state.rows = rows_;
    state.cols = cols_;
    state.u.resize(cells());
    state.v.resize(cells());
    GS_CUDA_CHECK(
        cudaMemcpy(state.u.data(), u_.get(), cells() * sizeof(float), cudaMemcpyDeviceToHost));
    GS_CUDA_CHECK(
        cudaMemcpy(state.v.data(), v_.get(), cells() * sizeof(float), cudaMemcpyDeviceToHost));
  }

  // The output path needs v only: half the bytes of fetch() cross PCIe.
  void fetch_v(float* v) override {
    synchronize();
    GS_CUDA_CHECK(cudaMemcpy(v, v_.get(), cells() * sizeof(float), cudaMemcpyDeviceToHost));
  }

 private:
  std::size_t cells() const { return static_cast<std::size_t>(rows_) * cols_; }

  // Waits for the stop event of the last advance() and adds the GPU time between its events.
  void collect_event_time() {
    if (pending_steps_ == 0) return;
    GS_CUDA_CHECK(cudaEventSynchronize(stop_));
    float milliseconds = 0.0f;
    GS_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start_, stop_));
    gpu_milliseconds_ += milliseconds;
    timed_steps_ += pending_steps_;
    pending_steps_ = 0;
  }

  std::string name_;
  StepKernel kernel_;
  dim3 block_;
  int rows_per_thread_;
  Stencil stencil_{};
  int rows_ = 0;
  int cols_ = 0;
  Rates rates_{};
  DeviceArray u_, v_, u_next_, v_next_;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  double gpu_milliseconds_ = 0.0;
  long long timed_steps_ = 0;
  int pending_steps_ = 0;
};

StepKernel generic_kernel(int rows_per_thread) {
  switch (rows_per_thread) {
    case 1:
      return generic_step<1>;
    case 2:
      return generic_step<2>;
    case 4:
      return generic_step<4>;
    default:
      throw std::invalid_argument("lesson04: rows_per_thread must be 1, 2 or 4, not " +
                                  std::to_string(rows_per_thread));
  }
}

std::unique_ptr<gs::Stepper> generic_stepper(const std::string& name,
                                             const lesson04::Weights& weights, int block_cols,
                                             int block_rows, int rows_per_thread) {
  return std::make_unique<KernelStepper>(name, generic_kernel(rows_per_thread),
                                         dim3(block_cols, block_rows), rows_per_thread, weights);
}

gs::Implementation generic(const std::string& name, int block_cols, int block_rows,
                           int rows_per_thread, const std::string& summary) {
  return {name, "04_cuda_kernels", summary, gs::Device::gpu, [=] {
            return generic_stepper(name, gs::kUnitStencilWeights, block_cols, block_rows,
                                   rows_per_thread);
          }};
}

}  // namespace

namespace lesson04 {

std::unique_ptr<gs::Stepper> make_generic_stepper(const Weights& weights, int block_cols,
                                                  int block_rows, int rows_per_thread) {
  return generic_stepper("l04-generic (custom weights)", weights, block_cols, block_rows,
                         rows_per_thread);
}

std::vector<gs::Implementation> implementations() {
  return {
      generic("l04-generic", 64, 2, 4,
              "generic 3x3 kernel, weights in constant memory, 64x2 blocks, 4 cells per thread"),
      generic("l04-generic-32x4", 32, 4, 1, "generic kernel, 32x4 blocks, one cell per thread"),
      generic("l04-generic-32x8", 32, 8, 1, "generic kernel, 32x8 blocks, one cell per thread"),
      generic("l04-generic-32x16", 32, 16, 1, "generic kernel, 32x16 blocks, one cell per thread"),
      generic("l04-generic-32x32", 32, 32, 1, "generic kernel, 32x32 blocks, one cell per thread"),
      generic("l04-generic-64x4", 64, 4, 1, "generic kernel, 64x4 blocks, one cell per thread"),
      generic("l04-generic-128x2", 128, 2, 1, "generic kernel, 128x2 blocks, one cell per thread"),
      generic("l04-generic-32x8-2rows", 32, 8, 2,
              "generic kernel, 32x8 blocks, 2 cells of a column per thread"),
      generic("l04-generic-32x4-4rows", 32, 4, 4,
              "generic kernel, 32x4 blocks, 4 cells of a column per thread"),
      generic("l04-generic-64x2-4rows", 64, 2, 4,
              "generic kernel, 64x2 blocks, 4 cells of a column per thread"),
      {"l04-checked-32x8", "04_cuda_kernels",
       "one thread per cell, a bounds check for every neighbour (the first kernel)",
       gs::Device::gpu,
       [] {
         return std::make_unique<KernelStepper>("l04-checked-32x8", checked_step, dim3(32, 8), 1,
                                                gs::kUnitStencilWeights);
       }},
  };
}

}  // namespace lesson04
