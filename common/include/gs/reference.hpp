/// @file reference.hpp
/// @brief The scalar reference step: the definition of docs/PROBLEM.md written as plainly as
///        possible. Every test compares against it; no lesson should be slower to read.
#pragma once

#include <cstddef>

#include "gs/params.hpp"
#include "gs/state.hpp"

namespace gs {

/// @brief One explicit Euler step of both fields, in any floating-point type.
///
/// Reads @p u, @p v (rows * cols values each) and writes @p u_next, @p v_next. Neighbours that
/// lie outside the grid are skipped (zero flux at the edges). Each in-grid neighbour's difference
/// from the centre is multiplied by its weight in @p rates.weights; with the canonical unit
/// weights that is a multiplication by one, exact in any precision. The template lets the tests
/// evaluate the same definition in double precision.
/// @tparam Real float for the reference itself, double for the high-precision check.
template <typename Real>
void reference_step(int rows, int cols, const Real* u, const Real* v, Real* u_next, Real* v_next,
                    const Rates& rates) {
  const Real du = rates.diffusion_u;
  const Real dv = rates.diffusion_v;
  const Real feed = rates.feed;
  const Real kill = rates.kill;
  const Real dt = rates.dt;
  for (int row = 0; row < rows; ++row) {
    for (int col = 0; col < cols; ++col) {
      const std::size_t centre = static_cast<std::size_t>(row) * cols + col;
      Real laplacian_u = 0;
      Real laplacian_v = 0;
      for (int dr = -1; dr <= 1; ++dr) {
        for (int dc = -1; dc <= 1; ++dc) {
          const int r = row + dr;
          const int c = col + dc;
          if (r < 0 || r >= rows || c < 0 || c >= cols) continue;  // outside: skipped
          const std::size_t neighbour = static_cast<std::size_t>(r) * cols + c;
          const Real weight = rates.weights.w[dr + 1][dc + 1];
          laplacian_u += weight * (u[neighbour] - u[centre]);
          laplacian_v += weight * (v[neighbour] - v[centre]);
        }
      }
      const Real uvv = u[centre] * v[centre] * v[centre];
      const Real du_dt = du * laplacian_u - uvv + feed * (Real{1} - u[centre]);
      const Real dv_dt = dv * laplacian_v + uvv - (feed + kill) * v[centre];
      u_next[centre] = u[centre] + dt * du_dt;
      v_next[centre] = v[centre] + dt * dv_dt;
    }
  }
}

/// @brief Advances @p state by @p steps reference steps in place (two buffers, swapped): the
///        oracle of every test.
void reference_advance(State& state, const Rates& rates, int steps);

/// @brief The same steps evaluated in double and rounded to float after each step, as a float
///        kernel's state is: the oracle for the generic kernels' tests with weights that are not
///        all ones (a transposed or mis-indexed weight matrix gives the same numbers when every
///        weight is one).
void reference_advance_in_double(State& state, const Rates& rates, int steps);

}  // namespace gs
