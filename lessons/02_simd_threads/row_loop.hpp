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

inline void update_row(const float* __restrict__ u, const float* __restrict__ v,
                       float* __restrict__ u_next, float* __restrict__ v_next,
                       const float* __restrict__ columns_in_grid, float rows_in_grid, int cols,
                       std::ptrdiff_t stride, const gs::Rates& rates) {
  // TODO(lesson 02): the new u and v of the `cols` cells of this row (lesson 01's update, with N
  // as above), in one loop the compiler vectorizes; its vectorization report must say so
  // (README.md, section 2). Hints: HINTS.md. As shipped every cell keeps its old value and the
  // tests fail.
  // The contract the point test (Lesson02Point) checks, calling this function alone: every
  // column alike, whatever its index. Each cell reads its eight neighbours from memory (at
  // column -1 and column `cols` too) and takes N from rows_in_grid and columns_in_grid[col]; the
  // test also passes a span of columns that is not a whole row, whose first and last cells
  // have neighbours in memory and columns_in_grid 3.
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
  // TODO(lesson 02): share these rows among OpenMP threads when `threads` is true, and keep
  // them on the calling thread when it is false. As shipped one thread does them all, and a
  // test says so.
  (void)threads;
  for (int row = 0; row < rows; ++row) update_one_row(row);
}

}  // namespace row_loop
