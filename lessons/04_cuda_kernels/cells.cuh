// Lesson 04: what the learner's kernels (kernels.cuh) are given: the stencil's weights in constant
// memory, the rates, one cell by the definition, the reaction and Euler update of a cell, three
// neighbouring values of a row, and the type of a step kernel. Read, not edited; stencil.cu
// includes it first.
#pragma once

#include <cuda_runtime.h>

#include "gs/gpu_stencil.hpp"
#include "gs/params.hpp"

// Internal linkage, as in stencil.cu's anonymous namespace where these were defined: lesson 05
// has a c_stencil of its own, in the same program.
namespace {

// The stencil as data, in constant memory. Every thread of a warp reads the same weight at the
// same moment, and the constant cache serves such a uniform read as one broadcast: the weights
// cost no memory traffic. off_centre_sum is the sum of the eight off-centre weights, the "N" of
// docs/PROBLEM.md (8 for the unit weights):
//   sum over in-grid neighbours of w * (a_n - a_c) = (sum of w * a_n) - (sum of those w) * a_c.
__constant__ gs::GpuStencil c_stencil;

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
// skipped when it lies outside (docs/PROBLEM.md's edge rule). Correct everywhere, and slow: nine
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
      const float weight = c_stencil.weights.w[dr + 1][dc + 1];
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

// Three neighbouring values of one row, read through the read-only data cache (__ldg).
[[maybe_unused]] __device__ __forceinline__ void load_three(const float* __restrict__ field,
                                                            int index, float (&values)[3]) {
  values[0] = __ldg(field + index - 1);
  values[1] = __ldg(field + index);
  values[2] = __ldg(field + index + 1);
}

using StepKernel = void (*)(int, int, const float*, const float*, float*, float*, Rates);

}  // namespace
