// Lesson 01's point, checked on the learner's update_interior() alone: the regular step splits the
// grid into a regular interior and an irregular edge, and the interior loop is the regular part.
// It updates the cells that have all eight neighbours, and no other, with the unit stencil
// written out: no weight (the stepper accepts only the unit stencil, so every weight is 1) and no
// question about a neighbour that always exists.
//
// A bounds check that never fires cannot be seen from outside the function; what comes with it
// can. The generic cell of stencil.cpp pasted into interior.hpp gives the right numbers (every
// test of the suite passes) but keeps what the lesson removes: its weights, and, where the loop
// runs over the whole grid, the edge cells that regular_step() updates again afterwards. So the
// test calls update_interior() on its own:
//  - with the canonical rates: every interior cell matches the reference's step, and every edge
//    cell of `out` still holds the value the test put there;
//  - with every weight NaN: the same output, bit for bit (a weight read anywhere turns a cell
//    into NaN).
// Used by tests/test_lesson01.cpp (the exercise and the solution) and by
// tests/point/test_lesson01_wrong_answer.cpp (the fixtures of wrong answers,
// tests/fixtures/01_profiling/, which must fail it).
#pragma once

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "gs/params.hpp"
#include "gs/reference.hpp"
#include "gs/state.hpp"

#include <interior.hpp>  // the learner's (or a fixture's) interior::update_interior()

namespace lesson01_point {

// What every edge cell of `out` holds before the call: no step of the tests' states gives it, so
// an edge cell that holds anything else afterwards was written by update_interior().
inline constexpr float kEdgeMark = -4096.5f;

inline bool same_bits(float a, float b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

inline bool is_edge(const gs::State& grid, int row, int col) {
  return row == 0 || col == 0 || row == grid.rows - 1 || col == grid.cols - 1;
}

// `out` as the test hands it over: interior cells NaN (a cell not written stays NaN), edge cells
// kEdgeMark.
inline gs::State marked_output(int rows, int cols) {
  gs::State out(rows, cols);
  for (int row = 0; row < rows; ++row) {
    for (int col = 0; col < cols; ++col) {
      const float value =
          is_edge(out, row, col) ? kEdgeMark : std::numeric_limits<float>::quiet_NaN();
      out.u[out.index(row, col)] = value;
      out.v[out.index(row, col)] = value;
    }
  }
  return out;
}

inline std::string where(int rows, int cols, int row, int col, const char* field) {
  std::ostringstream text;
  text << field << " of cell (" << row << ", " << col << ") of a " << rows << " x " << cols
       << " grid";
  return text.str();
}

// Returns "" when update_interior() keeps the contract on every grid, else what broke it first.
inline std::string check_interior_only_and_no_weights() {
  const int sizes[][2] = {{9, 13}, {3, 3}, {4, 17}, {2, 5}, {1, 1}};
  for (const auto& size : sizes) {
    const int rows = size[0], cols = size[1];
    const gs::State in = gs::random_state(rows, cols, 4000 + rows * 100 + cols);
    const gs::Rates unit;  // the canonical rates, all nine weights 1
    gs::State expected = in;
    gs::reference_advance(expected, unit, 1);

    gs::State out = marked_output(rows, cols);
    interior::update_interior(in, out, unit);
    for (int row = 0; row < rows; ++row) {
      for (int col = 0; col < cols; ++col) {
        const std::size_t cell = out.index(row, col);
        for (const char* field : {"u", "v"}) {
          const bool is_u = field[0] == 'u';
          const float got = is_u ? out.u[cell] : out.v[cell];
          const float want = is_u ? expected.u[cell] : expected.v[cell];
          if (is_edge(out, row, col)) {
            if (!same_bits(got, kEdgeMark)) {
              return where(rows, cols, row, col, field) + ", an edge cell, was written (it held " +
                     std::to_string(kEdgeMark) + " before the call, " + std::to_string(got) +
                     " after): update_interior() must leave the edges alone (rows 1 .. rows - 2, "
                     "columns 1 .. cols - 2 only); regular_step() does them with the generic, "
                     "checked update, and the interior loop needs no check because it never "
                     "meets an edge";
            }
          } else if (!(std::fabs(got - want) <= 1e-4f)) {
            return where(rows, cols, row, col, field) + ", an interior cell, holds " +
                   std::to_string(got) + (std::isnan(got) ? " (not written)" : "") +
                   " after update_interior(); one step of the reference gives " +
                   std::to_string(want);
          }
        }
      }
    }

    gs::Rates no_weights = unit;
    for (auto& weights_row : no_weights.weights.w) {
      for (float& weight : weights_row) weight = std::numeric_limits<float>::quiet_NaN();
    }
    gs::State out_no_weights = marked_output(rows, cols);
    interior::update_interior(in, out_no_weights, no_weights);
    for (int row = 0; row < rows; ++row) {
      for (int col = 0; col < cols; ++col) {
        const std::size_t cell = out.index(row, col);
        for (const char* field : {"u", "v"}) {
          const bool is_u = field[0] == 'u';
          const float got = is_u ? out_no_weights.u[cell] : out_no_weights.v[cell];
          const float unit_got = is_u ? out.u[cell] : out.v[cell];
          if (!same_bits(got, unit_got)) {
            return where(rows, cols, row, col, field) + " became " + std::to_string(got) +
                   " with every weight of the rates NaN, and " + std::to_string(unit_got) +
                   " with the canonical weights: update_interior() read the weights. The "
                   "stepper accepts only the unit stencil, so every weight is 1 and the "
                   "interior's Laplacian is the sum of the eight neighbours minus 8 times the "
                   "centre, with no weight to load or multiply";
          }
        }
      }
    }
  }
  return "";
}

}  // namespace lesson01_point
