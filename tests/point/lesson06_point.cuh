// Lesson 06's point: a launch of the shared-memory kernel makes several steps from one read of
// global memory. A learner whose kernel is right for one step only can set kBlockingSteps to 1:
// the stepper then launches one step at a time and every run gives the right numbers, with the
// fields crossing DRAM at every step, the cost temporal blocking removes. So this test asks two
// things of the learner's file:
//  - kBlockingSteps >= 2 (checked on any machine that compiles the lesson, GPU or not);
//  - one launch of shared_blocking_kernel<T>, T = 2 and T = kBlockingSteps, advances every cell
//    of a grid of several tiles T steps, from `in` (read once: it is the only copy of the state
//    the kernel is given) into `out` (poisoned with NaN first). A kernel that makes one step
//    whatever T, or that reads its halo only one deep, comes out wrong here.
// Used by tests/point/lesson06_point.cu (compiled into both suites, test_lesson06.cpp calls it)
// and by tests/point/test_lesson06_wrong_answer.cu (the fixture of a wrong answer,
// tests/fixtures/06_fused_stencil/one_step_per_launch/, which must fail it).
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "gs/params.hpp"
#include "gs/reference.hpp"
#include "gs/state.hpp"
#include "gs/step_coefficients.hpp"

#include <shared_blocking.cuh>  // the learner's (or the fixture's) kernel and its shape

namespace lesson06_point {

// What the learner's file decides before any launch: "" when a launch makes several steps.
inline std::string plan_problem() {
  if (blocking::kBlockingSteps >= 2) return "";
  return "kBlockingSteps is " + std::to_string(blocking::kBlockingSteps) +
         ": each launch of shared_blocking_kernel then makes one step, so the fields are read "
         "from and written to DRAM at every step, as with one step per launch (l06-fused). "
         "Temporal blocking makes several steps per launch on a tile whose halo is as deep as "
         "the steps (README.md, sections 4 and 5): kBlockingSteps must be 2 or more";
}

// One launch of shared_blocking_kernel<kSteps> on a rows x cols grid of a random state: "" when
// every cell is the reference's after kSteps steps, else the first cell that is not.
template <int kSteps>
std::string one_launch_problem(int rows, int cols) {
  const gs::Rates rates{};
  const gs::State start = gs::random_state(rows, cols, 606);
  gs::State expected = start;
  gs::reference_advance(expected, rates, kSteps);

  const int pitch = (cols + kRowAlignment - 1) / kRowAlignment * kRowAlignment;
  const std::size_t count = static_cast<std::size_t>(rows) * static_cast<std::size_t>(pitch);
  std::vector<float> host_u(count, 0.0f), host_v(count, 0.0f);
  for (int row = 0; row < rows; ++row) {
    for (int col = 0; col < cols; ++col) {
      host_u[static_cast<std::size_t>(row) * pitch + col] =
          start.u[static_cast<std::size_t>(row) * cols + col];
      host_v[static_cast<std::size_t>(row) * pitch + col] =
          start.v[static_cast<std::size_t>(row) * cols + col];
    }
  }
  // in u, in v, out u, out v; `out` all bits set (NaN), so a cell the kernel leaves shows.
  const gs::DeviceFloats in_u = gs::device_floats(count), in_v = gs::device_floats(count);
  const gs::DeviceFloats out_u = gs::device_floats(count), out_v = gs::device_floats(count);
  GS_CUDA_CHECK(
      cudaMemcpy(in_u.get(), host_u.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  GS_CUDA_CHECK(
      cudaMemcpy(in_v.get(), host_v.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  GS_CUDA_CHECK(cudaMemset(out_u.get(), 0xFF, count * sizeof(float)));
  GS_CUDA_CHECK(cudaMemset(out_v.get(), 0xFF, count * sizeof(float)));
  const Grid g{rows, cols, pitch};
  const dim3 blocks(
      static_cast<unsigned>((cols + blocking::kBlockingTileCols - 1) / blocking::kBlockingTileCols),
      static_cast<unsigned>((rows + blocking::kBlockingTileRows - 1) /
                            blocking::kBlockingTileRows));
  blocking::shared_blocking_kernel<kSteps><<<blocks, blocking::kBlockingThreads>>>(
      ConstFields{in_u.get(), in_v.get()}, Fields{out_u.get(), out_v.get()}, g,
      gs::step_coefficients(rates));
  const cudaError_t launched = cudaGetLastError();
  const cudaError_t ran = launched == cudaSuccess ? cudaDeviceSynchronize() : launched;
  const std::string where = "one launch of shared_blocking_kernel<" + std::to_string(kSteps) +
                            "> on a " + std::to_string(rows) + " x " + std::to_string(cols) +
                            " grid (" + std::to_string(blocks.x * blocks.y) + " tiles of " +
                            std::to_string(blocking::kBlockingTileRows) + " x " +
                            std::to_string(blocking::kBlockingTileCols) + "): ";
  if (ran != cudaSuccess) return where + "the launch failed: " + cudaGetErrorString(ran);
  std::vector<float> got_u(count), got_v(count);
  GS_CUDA_CHECK(
      cudaMemcpy(got_u.data(), out_u.get(), count * sizeof(float), cudaMemcpyDeviceToHost));
  GS_CUDA_CHECK(
      cudaMemcpy(got_v.data(), out_v.get(), count * sizeof(float), cudaMemcpyDeviceToHost));
  for (int row = 0; row < rows; ++row) {
    for (int col = 0; col < cols; ++col) {
      const std::size_t at = static_cast<std::size_t>(row) * pitch + col;
      const std::size_t cell = static_cast<std::size_t>(row) * cols + col;
      const float u = got_u[at], v = got_v[at];
      if (std::fabs(u - expected.u[cell]) <= 1e-4f && std::fabs(v - expected.v[cell]) <= 1e-4f) {
        continue;
      }
      return where + "cell (" + std::to_string(row) + ", " + std::to_string(col) +
             ") is u = " + std::to_string(u) + ", v = " + std::to_string(v) + "; after " +
             std::to_string(kSteps) +
             " steps the reference has u = " + std::to_string(expected.u[cell]) +
             ", v = " + std::to_string(expected.v[cell]) + ". A launch of the kernel made for " +
             std::to_string(kSteps) +
             " steps must advance the state that many steps, on chip, from one read of `in`";
    }
  }
  return "";
}

// The launches (a GPU is needed): T = 2 and T = kBlockingSteps, on a grid of several tiles whose
// sides are not multiples of the tile's.
inline std::string launch_problem() {
  std::string problem = one_launch_problem<2>(3 * blocking::kBlockingTileRows - 5,
                                              2 * blocking::kBlockingTileCols + 7);
  if (problem.empty() && blocking::kBlockingSteps > 2) {
    problem = one_launch_problem<(blocking::kBlockingSteps > 2 ? blocking::kBlockingSteps : 2)>(
        2 * blocking::kBlockingTileRows + 3, 3 * blocking::kBlockingTileCols - 1);
  }
  return problem;
}

}  // namespace lesson06_point
