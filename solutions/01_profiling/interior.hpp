// Lesson 01, the file you edit: the interior of the "regular" step.
//
// It sees only what it includes: gs::State and gs::Rates. update_interior() updates every cell
// whose eight neighbours all exist: rows 1 .. rows - 2, columns 1 .. cols - 2. stencil.cpp
// calls it (interior::update_interior(): the file's code is in namespace interior), then does the
// four edges with the generic, checked update.
#pragma once

#include "gs/params.hpp"
#include "gs/state.hpp"

namespace interior {

// With all nine weights 1 and no neighbour missing, L(a) = (sum of the eight neighbours) - 8 a:
// no bounds check, no weight. Pointers to the rows above, at and below the current one turn
// every neighbour into an offset the compiler can see.
inline void update_interior(const gs::State& in, gs::State& out, const gs::Rates& r) {
  for (int row = 1; row < in.rows - 1; ++row) {
    const float* u_up = &in.u[in.index(row - 1, 0)];
    const float* u_mid = &in.u[in.index(row, 0)];
    const float* u_down = &in.u[in.index(row + 1, 0)];
    const float* v_up = &in.v[in.index(row - 1, 0)];
    const float* v_mid = &in.v[in.index(row, 0)];
    const float* v_down = &in.v[in.index(row + 1, 0)];
    float* u_out = &out.u[out.index(row, 0)];
    float* v_out = &out.v[out.index(row, 0)];
    for (int col = 1; col < in.cols - 1; ++col) {
      const float u = u_mid[col];
      const float v = v_mid[col];
      const float laplacian_u = u_up[col - 1] + u_up[col] + u_up[col + 1] + u_mid[col - 1] +
                                u_mid[col + 1] + u_down[col - 1] + u_down[col] + u_down[col + 1] -
                                8.0f * u;
      const float laplacian_v = v_up[col - 1] + v_up[col] + v_up[col + 1] + v_mid[col - 1] +
                                v_mid[col + 1] + v_down[col - 1] + v_down[col] + v_down[col + 1] -
                                8.0f * v;
      const float uvv = u * v * v;
      u_out[col] = u + r.dt * (r.diffusion_u * laplacian_u - uvv + r.feed * (1.0f - u));
      v_out[col] = v + r.dt * (r.diffusion_v * laplacian_v + uvv - (r.feed + r.kill) * v);
    }
  }
}

}  // namespace interior
