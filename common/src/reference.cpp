// The reference time loops: two buffers, one step, swap.
#include "gs/reference.hpp"

#include <cstddef>
#include <utility>

namespace gs {

void reference_advance(State& state, const Params& params, int steps) {
  State next(state.rows, state.cols);
  for (int step = 0; step < steps; ++step) {
    reference_step(state.rows, state.cols, state.u.data(), state.v.data(), next.u.data(),
                   next.v.data(), params);
    std::swap(state.u, next.u);
    std::swap(state.v, next.v);
  }
}

void reference_advance_weighted(State& state, const Params& params, const StencilWeights& weights,
                                int steps) {
  State next(state.rows, state.cols);
  for (int step = 0; step < steps; ++step) {
    for (int row = 0; row < state.rows; ++row) {
      for (int col = 0; col < state.cols; ++col) {
        const std::size_t centre = state.index(row, col);
        const double u = state.u[centre];
        const double v = state.v[centre];
        double laplacian_u = 0.0;
        double laplacian_v = 0.0;
        for (int dr = -1; dr <= 1; ++dr) {
          for (int dc = -1; dc <= 1; ++dc) {
            const int r = row + dr;
            const int c = col + dc;
            if (r < 0 || r >= state.rows || c < 0 || c >= state.cols) continue;
            const double weight = weights[3 * (dr + 1) + (dc + 1)];
            laplacian_u += weight * (state.u[state.index(r, c)] - u);
            laplacian_v += weight * (state.v[state.index(r, c)] - v);
          }
        }
        const double uvv = u * v * v;
        const double du_dt = params.diffusion_u * laplacian_u - uvv + params.feed_rate * (1.0 - u);
        const double dv_dt =
            params.diffusion_v * laplacian_v + uvv - (params.feed_rate + params.kill_rate) * v;
        next.u[centre] = static_cast<float>(u + params.dt * du_dt);
        next.v[centre] = static_cast<float>(v + params.dt * dv_dt);
      }
    }
    std::swap(state.u, next.u);
    std::swap(state.v, next.v);
  }
}

}  // namespace gs
