// Lesson 04 - raw CUDA kernels.
//
// The step written as CUDA kernels, with nothing between us and the hardware: a 2-D grid of
// 2-D thread blocks, one thread per cell (or per short column of cells), the global index
// computed from blockIdx, blockDim and threadIdx, and a bounds check for the threads that the
// rounded-up grid adds past the last row and column. The stencil is generic: its nine weights
// are data, held in __constant__ memory. Both fields stay on the device from load() to fetch()
// in two ping-pong buffers each; every runtime call and every launch is checked; CUDA events
// time the steps on the GPU's own clock. The device arrays, the copies in and out and the wait
// are common/'s (gs::DeviceStepper).
//
// Implementations, best first:
//   l04-generic            the generic kernel with the best launch shape of the sweep
//                          (README.md, "Results");
//   l04-generic-WxH        the same kernel, W x H thread blocks, one cell per thread (the
//                          block-size sweep of README.md);
//   l04-generic-WxH-Nrows  each thread updates N cells of one column, loading each value once;
//   l04-checked-32x8       the first kernel everyone writes: a bounds check for every neighbour
//                          of every cell.
// The exercise is kernels.cuh, the file you edit: the launch, the bodies of checked_step and
// generic_step, and the launch shapes of the sweep (README.md, "What to edit").
#include <cuda_runtime.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gs/cuda_check.hpp"
#include "gs/device_limits.hpp"
#include "gs/device_stepper.hpp"
#include "gs/gpu_stencil.hpp"
#include "gs/lesson.hpp"
#include "gs/state.hpp"
// What kernels.cuh is given (it opens an anonymous namespace of its own): c_stencil, Rates,
// write_cell(), update_cell_checked(), load_three() and StepKernel.
#include "cells.cuh"

// ---------------------------------------------------------------------------------------------
// The kernels
// ---------------------------------------------------------------------------------------------

// The exercise, in namespace kernels: launch_step(), checked_step, generic_step<kRowsPerThread>,
// generic_kernel() and the launch shapes of the sweep. Angle brackets: the build picks
// lessons/04_cuda_kernels/kernels.cuh (your stubs) or the solution's copy. It compiles on its own
// (LEARNER_ALONE): it sees cells.cuh and gs/cuda_check.hpp, not this file.
#include <kernels.cuh>

namespace {

// ---------------------------------------------------------------------------------------------
// The stepper: launches, ping-pong, events
// ---------------------------------------------------------------------------------------------

// Launches one kernel per step on the default stream, through launch_step(). The four device
// arrays (u, v and their next-step buffers), the copies in and out and the wait are
// gs::DeviceStepper's (common/), on the legacy default stream. Timing: advance() records an
// event before its first launch and one after its last; once they have passed,
// cudaEventElapsedTime gives the GPU time between them. The totals are printed when the stepper
// is destroyed if GS_EVENT_TIMING is set.
class KernelStepper final : public gs::DeviceStepper {
 public:
  KernelStepper(std::string name, StepKernel kernel, dim3 block, int rows_per_thread)
      : gs::DeviceStepper(gs::DeviceStream::legacy_default),
        name_(std::move(name)),
        kernel_(kernel),
        block_(block),
        rows_per_thread_(rows_per_thread) {}

  ~KernelStepper() override {
    if (start_ != nullptr) cudaEventDestroy(start_);
    if (stop_ != nullptr) cudaEventDestroy(stop_);
    if (std::getenv("GS_EVENT_TIMING") == nullptr || timed_steps_ == 0) return;
    std::fprintf(stderr, "%s: CUDA events: %lld steps in %.3f ms of GPU time, %.2f us/step\n",
                 name_.c_str(), static_cast<long long>(timed_steps_), gpu_milliseconds_,
                 1000.0 * gpu_milliseconds_ / static_cast<double>(timed_steps_));
  }

  // Four cudaMallocs and the upload of u and v (gs::DeviceStepper::load_fields, unpitched).
  void load(const gs::State& state, const Rates& rates) override {
    rates_ = rates;
    stencil_ = gs::gpu_stencil(rates.weights);
    load_fields(state, state.cols);
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
    GS_CUDA_CHECK(cudaEventRecord(start_));
    for (int step = 0; step < steps; ++step) {
      // One launch of the kernel over the whole grid, checked (kernels::launch_step()).
      kernels::launch_step(kernel_, block_, rows_per_thread_, rows(), cols(), current().u,
                           current().v, next().u, next().v, rates_);
      swap();  // ping-pong: this step's output is the next step's input
    }
    GS_CUDA_CHECK(cudaEventRecord(stop_));
    pending_steps_ = steps;
  }

  // The whole device (cudaDeviceSynchronize), then the time of the last advance().
  void synchronize() override {
    gs::DeviceStepper::synchronize();
    collect_event_time();
  }

 private:
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
  gs::GpuStencil stencil_{};
  Rates rates_{};
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  double gpu_milliseconds_ = 0.0;
  long long timed_steps_ = 0;
  int pending_steps_ = 0;
};

// A stepper of the sweep whose blocks fit this GPU (gs::device_limits(): GS_DEVICE_LIMITS
// counts): at most the threads a block may have, and what the kernel's registers allow. A shape
// that does not fit is refused before any launch, with the reason.
std::unique_ptr<gs::Stepper> fitted_stepper(const std::string& name, StepKernel kernel, dim3 block,
                                            int rows_per_thread) {
  gs::require_launch_fits(name, reinterpret_cast<const void*>(kernel),
                          static_cast<int>(block.x * block.y * block.z), 0);
  return std::make_unique<KernelStepper>(name, kernel, block, rows_per_thread);
}

gs::Implementation generic(const kernels::LaunchShape& shape) {
  const std::string name = shape.name;
  return {name,
          "04_cuda_kernels",
          shape.summary,
          gs::Device::gpu,
          [shape, name] {
            return fitted_stepper(name, kernels::generic_kernel(shape.rows_per_thread),
                                  dim3(shape.block_cols, shape.block_rows), shape.rows_per_thread);
          },
          true};
}

}  // namespace

namespace GS_LESSON_NAMESPACE {

std::vector<gs::Implementation> implementations() {
  std::vector<gs::Implementation> all;
  for (const kernels::LaunchShape& shape : kernels::kLaunchShapes) all.push_back(generic(shape));
  all.push_back(
      {"l04-checked-32x8", "04_cuda_kernels",
       "one thread per cell, a bounds check for every neighbour (the first kernel)",
       gs::Device::gpu,
       [] { return fitted_stepper("l04-checked-32x8", kernels::checked_step, dim3(32, 8), 1); },
       true});
  return all;
}

// For the tests: one step of kernels::checked_step on a 40 x 60 grid, launched through
// kernels::launch_step() with blocks of block_cols x block_rows threads; a launch that fails must
// throw here.
void step_with_block(int block_cols, int block_rows) {
  KernelStepper stepper("step_with_block", kernels::checked_step, dim3(block_cols, block_rows), 1);
  stepper.load(gs::initial_state(40, 60), gs::Rates{});
  stepper.advance(1);
  stepper.synchronize();
}

}  // namespace GS_LESSON_NAMESPACE
