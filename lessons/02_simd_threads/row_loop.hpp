// Lesson 02, the file you edit: one row of the step, vectorized, and the rows of one step
// shared among threads.
//
// Included by stencil.cpp, where Rates is gs::Rates. The layout (stencil.cpp, PaddedField):
// `u` and `v` point at column 0 of a row; the row above is at -stride, the row below at +stride,
// and a ring of zero "ghost" cells surrounds the grid, so every cell, edges included, can read
// all eight neighbours. A zero ghost adds nothing to the sum, so
//   L(a) = (sum of the eight neighbours) - N * a,   N = rows_in_grid * columns_in_grid[col] - 1,
// where rows_in_grid (1 to 3) counts which of the rows above, at and below exist and
// columns_in_grid[col] the same for the columns: lesson 01's edge rule with no branch at all.
#pragma once

inline void update_row(const float* __restrict__ u, const float* __restrict__ v,
                       float* __restrict__ u_next, float* __restrict__ v_next,
                       const float* __restrict__ columns_in_grid, float rows_in_grid, int cols,
                       std::ptrdiff_t stride, const Rates& rates) {
  // TODO(lesson 02): update the `cols` cells of this row, u and v in one pass, in a loop the
  // compiler can vectorize: no branch, no weight. Neighbours: u[col - 1], u[col + 1], and the
  // rows u - stride and u + stride (v likewise); L(u) = (sum of the eight) - N * u[col] with N
  // as above; then lesson 01's reaction terms with rates.dt, rates.diffusion_u, ... Put
  // `#pragma omp simd` on the loop and read the vectorization report (README.md, "Did it
  // vectorize?"). Until this is written every cell keeps its old value and the tests fail.
  std::copy_n(u, cols, u_next);
  std::copy_n(v, cols, v_next);
  (void)columns_in_grid;  // (the casts only silence "unused parameter" until your loop uses them)
  (void)rows_in_grid;
  (void)stride;
  (void)rates;
}

// Calls update_one_row(row) for rows 0 .. rows - 1: all of one step.
template <typename UpdateOneRow>
inline void update_rows(int rows, bool threads, const UpdateOneRow& update_one_row) {
  // TODO(lesson 02): share these rows among OpenMP threads with one pragma (rows are independent
  // within a step); add the clause `if (threads)` so that l02-simd stays on one thread. Then
  // compare OMP_NUM_THREADS=1 and 2 (README.md, "Threads"). As shipped, one thread does it all.
  (void)threads;
  for (int row = 0; row < rows; ++row) update_one_row(row);
}
