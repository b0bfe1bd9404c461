// Lesson 02, the file you edit: one row of the step, vectorized, and the rows of one step
// shared among threads.
//
// It sees only what it includes (gs::Rates: gs/params.hpp); its code is in namespace row_loop
// (stencil.cpp calls row_loop::update_row() and row_loop::update_rows()). The layout (stencil.cpp,
// PaddedField): `u` and `v` point at column 0 of a row; the row above is at -stride, the row below
// at +stride, and a ring of zero "ghost" cells surrounds the grid, so every cell, edges included,
// can read all eight neighbours. A zero ghost adds nothing to the sum, so
//   L(a) = (sum of the eight neighbours) - N * a,   N = rows_in_grid * columns_in_grid[col] - 1,
// where rows_in_grid (1 to 3) counts which of the rows above, at and below exist and
// columns_in_grid[col] the same for the columns: lesson 01's edge rule with no branch at all.
#pragma once

#include <algorithm>
#include <cstddef>

#include "gs/params.hpp"

namespace row_loop {

// __restrict__ promises that the five arrays do not overlap, so writing u_next[col] cannot
// change an input the loop reads later; without it the compiler must assume the worst. `inline`
// lets the compiler paste the loop into its caller (README.md, "Did it vectorize?").
inline void update_row(const float* __restrict__ u, const float* __restrict__ v,
                       float* __restrict__ u_next, float* __restrict__ v_next,
                       const float* __restrict__ columns_in_grid, float rows_in_grid, int cols,
                       std::ptrdiff_t stride, const gs::Rates& rates) {
  // Copies of the rates in locals: plain values the vector loop broadcasts once into registers.
  const float dt = rates.dt;
  const float diffusion_u = rates.diffusion_u;
  const float diffusion_v = rates.diffusion_v;
  const float feed = rates.feed;
  const float feed_plus_kill = rates.feed + rates.kill;
  const float* u_up = u - stride;
  const float* u_down = u + stride;
  const float* v_up = v - stride;
  const float* v_down = v + stride;
  // Every iteration is independent of the others: `omp simd` tells the compiler so, and it
  // turns the loop into vector instructions that update 8 (AVX2) or 16 (AVX-512) columns at
  // once. The body is lesson 01's formula, with no branch and no weight.
#pragma omp simd
  for (int col = 0; col < cols; ++col) {
    const float u_sum = u_up[col - 1] + u_up[col] + u_up[col + 1] + u[col - 1] + u[col + 1] +
                        u_down[col - 1] + u_down[col] + u_down[col + 1];
    const float v_sum = v_up[col - 1] + v_up[col] + v_up[col + 1] + v[col - 1] + v[col + 1] +
                        v_down[col - 1] + v_down[col] + v_down[col + 1];
    const float neighbours = rows_in_grid * columns_in_grid[col] - 1.0f;
    const float uc = u[col];
    const float vc = v[col];
    const float uvv = uc * vc * vc;
    u_next[col] = uc + dt * (diffusion_u * (u_sum - neighbours * uc) - uvv + feed * (1.0f - uc));
    v_next[col] = vc + dt * (diffusion_v * (v_sum - neighbours * vc) + uvv - feed_plus_kill * vc);
  }
}

// Calls update_one_row(row) for rows 0 .. rows - 1: all of one step. Rows are independent
// within a step, so OpenMP may give each thread a contiguous block of them (schedule(static)).
// The implicit barrier at the end of the loop is what makes the caller's buffer swap safe: no
// thread starts step n + 1 before every row of step n is written. `if (threads)` keeps the
// single-thread variants (l02-simd, ...) on one thread.
template <typename UpdateOneRow>
inline void update_rows(int rows, bool threads, const UpdateOneRow& update_one_row) {
#pragma omp parallel for schedule(static) if (threads)
  for (int row = 0; row < rows; ++row) update_one_row(row);
}

}  // namespace row_loop
