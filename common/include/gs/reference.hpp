/// @file reference.hpp
/// @brief The scalar reference step: the definition of shared/PROBLEM.md written as plainly as
///        possible. Every test compares against it; no lesson should be slower to read.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <vector>

#include "gs/params.hpp"
#include "gs/state.hpp"

namespace gs {

/// @brief The nine stencil weights of the canonical problem, row by row (all ones; the centre
///        term contributes a - a = 0 whatever its weight).
inline constexpr float kUnitWeights[3][3] = {
    {1.0f, 1.0f, 1.0f}, {1.0f, 1.0f, 1.0f}, {1.0f, 1.0f, 1.0f}};

/// @brief The nine weights of a generic 3x3 stencil, row by row: element 3 * (1 + dr) + (1 + dc)
///        multiplies the neighbour at row offset dr and column offset dc. The centre weight is
///        ignored (its term is a - a = 0).
using StencilWeights = std::array<float, 9>;

/// @brief kUnitWeights as a StencilWeights: the canonical problem's weights for the generic
///        kernels of the lessons.
inline constexpr StencilWeights kUnitStencilWeights = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f,
                                                       1.0f, 1.0f, 1.0f, 1.0f};

/// @brief A generic stencil as the GPU lessons keep it in constant memory: the weights as a 3x3
///        table and the sum of the eight off-centre ones, which an interior cell multiplies by
///        its own value (sum of w * (a_n - a_c) = sum of w * a_n - (sum of w) * a_c).
struct WeightTable {
  float weights[3][3];        ///< weights[1 + dr][1 + dc]
  float interior_weight_sum;  ///< the eight off-centre weights added up (8 for the unit ones)
};

/// @brief The WeightTable of @p weights.
inline WeightTable weight_table(const StencilWeights& weights) {
  WeightTable table{};
  for (int i = 0; i < 9; ++i) {
    table.weights[i / 3][i % 3] = weights[i];
    if (i != 4) table.interior_weight_sum += weights[i];
  }
  return table;
}

/// @brief One explicit Euler step of both fields, in any floating-point type.
///
/// Reads @p u, @p v (rows * cols values each) and writes @p u_next, @p v_next. Neighbours that
/// lie outside the grid are skipped (zero flux at the edges). The template lets the tests
/// evaluate the same definition in double precision. Each in-grid neighbour's difference is
/// multiplied by its weight; with the canonical unit weights that is a multiplication by one,
/// exact in any precision.
/// @tparam Real float for the reference itself, double for the high-precision check.
template <typename Real>
void reference_step(int rows, int cols, const Real* u, const Real* v, Real* u_next, Real* v_next,
                    const Params& params, const StencilWeights& weights = kUnitStencilWeights) {
  const Real du = params.diffusion_u;
  const Real dv = params.diffusion_v;
  const Real feed = params.feed_rate;
  const Real kill = params.kill_rate;
  const Real dt = params.dt;
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
          const Real weight = weights[3 * (dr + 1) + (dc + 1)];
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

/// @brief Advances @p state by @p steps reference steps in place (two buffers, swapped).
void reference_advance(State& state, const Params& params, int steps);

/// @brief Advances @p state by @p steps steps of the generic stencil with any @p weights,
///        evaluated in double and rounded to float after each step: the oracle for the lessons'
///        generic kernels, which the unit weights alone cannot test (a transposed or mis-indexed
///        weight matrix gives the same numbers when every weight is one). Neighbours outside the
///        grid are skipped, as in reference_step().
void reference_advance_weighted(State& state, const Params& params, const StencilWeights& weights,
                                int steps);

}  // namespace gs
