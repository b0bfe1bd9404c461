// Lesson 02's point for the row loop, checked on the learner's update_row() alone: the zero ghost
// ring replaces the edge branches, so the loop treats every column alike. Each cell's eight
// neighbours are read from memory (the ghost cells hold 0), and N, the count of neighbours in
// the grid, comes from the numbers the caller gives: rows_in_grid * columns_in_grid[col] - 1.
// The loop asks no question of a column's index.
//
// A loop that keeps lesson 01's edge rule as branches on the column (skip the neighbours left of
// column 0 and right of column cols - 1, count them with tests of `col`) gives the right numbers
// on every whole row, because there the skipped ghosts hold 0: every test of the suite that
// compares numbers passes. It is the branchy loop the layout was made to remove, and it is
// wrong as soon as the columns it is given are not a whole row. So the test calls update_row()
// on columns 5 .. 20 of a row of 26: the cells left of its column 0 and right of its last
// column are real cells with non-zero values, and columns_in_grid says 3 for every column. It
// also calls it on a whole row, ghosts 0 and columns_in_grid 2 at the ends, to check the edges
// the layout's way.
// Used by tests/test_lesson02.cpp (the exercise and the solution) and by
// tests/point/test_lesson02_wrong_answer.cpp (the fixture of a wrong answer,
// tests/fixtures/02_simd_threads/, which must fail it).
#pragma once

#include <cmath>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

#include "gs/params.hpp"

#include <row_loop.hpp>  // the learner's (or the fixture's) row_loop::update_row()

namespace lesson02_point {

// Three rows of a field (above, at, below) in a row-major block of `stride` floats per row, with
// one ghost column either side of the grid's kColumns columns: column c is at 1 + c.
inline constexpr int kColumns = 26;
inline constexpr std::ptrdiff_t kStride = kColumns + 2 + 4;  // padded, as PaddedField's rows

struct Rows {
  std::vector<float> u, v;
  Rows() : u(3 * kStride, 0.0f), v(3 * kStride, 0.0f) {}
  // Row 0 is the row above, 1 the row updated, 2 the row below.
  float* at(std::vector<float>& field, int row, int col) {
    return field.data() + row * kStride + 1 + col;
  }
};

// Distinct, non-zero values in [0.1, 0.9] everywhere in the grid; the ghost columns (col -1 and
// col kColumns) hold 0, as the layout's ring does.
inline Rows sample_rows() {
  Rows rows;
  for (int row = 0; row < 3; ++row) {
    for (int col = 0; col < kColumns; ++col) {
      *rows.at(rows.u, row, col) =
          0.1f + 0.8f * static_cast<float>((row * 37 + col * 11) % 29) / 29.0f;
      *rows.at(rows.v, row, col) =
          0.1f + 0.8f * static_cast<float>((row * 13 + col * 7) % 31) / 31.0f;
    }
  }
  return rows;
}

// The new (u, v) of the cell at `col` of the middle row, lesson 01's update with N neighbours in
// the grid; the neighbours outside it read 0, which adds nothing.
inline void expected_cell(Rows& rows, int col, float neighbours, const gs::Rates& r, float& u_new,
                          float& v_new) {
  double sum_u = 0.0, sum_v = 0.0;
  for (int dr = 0; dr < 3; ++dr) {
    for (int dc = -1; dc <= 1; ++dc) {
      if (dr == 1 && dc == 0) continue;
      sum_u += *rows.at(rows.u, dr, col + dc);
      sum_v += *rows.at(rows.v, dr, col + dc);
    }
  }
  const double u = *rows.at(rows.u, 1, col), v = *rows.at(rows.v, 1, col);
  const double uvv = u * v * v;
  u_new = static_cast<float>(
      u + r.dt * (r.diffusion_u * (sum_u - neighbours * u) - uvv + r.feed * (1.0 - u)));
  v_new = static_cast<float>(
      v + r.dt * (r.diffusion_v * (sum_v - neighbours * v) + uvv - (r.feed + r.kill) * v));
}

// Calls update_row() on columns first .. first + count - 1 of the middle row and compares each
// cell with expected_cell(); `columns_in_grid` holds the caller's counts for those columns.
inline std::string check_span(int first, int count, const std::vector<float>& columns_in_grid,
                              const std::string& what) {
  const gs::Rates rates;
  Rows rows = sample_rows();
  std::vector<float> u_next(static_cast<std::size_t>(count), -1.0f);
  std::vector<float> v_next(static_cast<std::size_t>(count), -1.0f);
  const float rows_in_grid = 3.0f;
  row_loop::update_row(rows.at(rows.u, 1, first), rows.at(rows.v, 1, first), u_next.data(),
                       v_next.data(), columns_in_grid.data(), rows_in_grid, count, kStride, rates);
  for (int col = 0; col < count; ++col) {
    float u_want = 0.0f, v_want = 0.0f;
    const float neighbours = rows_in_grid * columns_in_grid[static_cast<std::size_t>(col)] - 1.0f;
    expected_cell(rows, first + col, neighbours, rates, u_want, v_want);
    const float u_got = u_next[static_cast<std::size_t>(col)];
    const float v_got = v_next[static_cast<std::size_t>(col)];
    if (!(std::fabs(u_got - u_want) <= 1e-5f) || !(std::fabs(v_got - v_want) <= 1e-5f)) {
      std::ostringstream text;
      text << "update_row() on " << what << ": its column " << col << " (of " << count
           << ") became (u, v) = (" << u_got << ", " << v_got << "), where its eight neighbours "
           << "in memory and N = rows_in_grid * columns_in_grid[" << col << "] - 1 = " << neighbours
           << " give (" << u_want << ", " << v_want << ")";
      return text.str();
    }
  }
  return "";
}

// Returns "" when update_row() takes a cell's neighbours from memory and its count of neighbours
// from rows_in_grid and columns_in_grid, whatever its column; else the first cell that differs.
inline std::string check_row_loop_takes_the_edges_from_the_layout() {
  // A whole row, as the steppers call it: the ghost cells at -1 and kColumns hold 0, and
  // columns_in_grid counts 2 at either end.
  std::vector<float> whole(kColumns, 3.0f);
  whole.front() = 2.0f;
  whole.back() = 2.0f;
  std::string problem = check_span(0, kColumns, whole, "a whole row of 26 columns");
  if (!problem.empty()) return problem;
  // Columns 5 .. 20: every cell has its eight neighbours, those of the first and the last column
  // included, and columns_in_grid says 3 throughout.
  problem = check_span(5, 16, std::vector<float>(16, 3.0f),
                       "columns 5 .. 20 of a row of 26 (columns_in_grid 3 throughout: the cells "
                       "left of its column 0 and right of its last column are in the grid, with "
                       "values in memory)");
  if (!problem.empty()) {
    return problem +
           ". The loop must treat every column alike: the zero ghost ring, not a test of the "
           "column's index, makes the edges, and N comes from rows_in_grid and "
           "columns_in_grid";
  }
  return "";
}

}  // namespace lesson02_point
