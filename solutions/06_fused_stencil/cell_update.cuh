// Lesson 06, the file you edit: the update of one cell specialised to the nine unit weights, what
// a level of the pyramid does with a row near the top or bottom of the grid, and the tuning
// constants of the temporal-blocking kernel.
//
// Included by stencil.cu after Coefficients (the rates folded into the few numbers the update
// needs) and RowKind; engine.cuh, included next, calls both functions.
#pragma once

// One explicit Euler step of one cell. With all nine weights equal to 1 the Laplacian is
//   L(a) = sum over the in-grid neighbours of (neighbour - a) = box - cells * a,
// where box is the sum of the 3x3 box around the cell (centre included, absent cells counting 0)
// and cells the number of its cells that exist (9 inside, 6 on an edge, 4 in a corner). Then
//   u' = u + dt * (Du * (box_u - cells * u) - u v^2 + F * (1 - u))
//      = (keep_u - dt_du * cells) * u + dt_du * box_u - dt * u v^2 + dt_feed
//   v' = (keep_v - dt_dv * cells) * v + dt_dv * box_v + dt * u v^2
// which is three fused multiply-adds per field once u v^2 is known.
__device__ __forceinline__ void nine_term_update(float u, float v, float box_u, float box_v,
                                                 float cells, const Coefficients& c, float& u_next,
                                                 float& v_next) {
  const float uvv = u * v * v;
  u_next = fmaf(c.keep_u - c.dt_du * cells, u, fmaf(c.dt_du, box_u, fmaf(-c.dt, uvv, c.dt_feed)));
  v_next = fmaf(c.keep_v - c.dt_dv * cells, v, fmaf(c.dt_dv, box_v, c.dt * uvv));
}

// A level of the pyramid makes row `row` from the rows above, at and below it of the level
// underneath. The walk asks this only for rows near the top and bottom of the grid (row <= 0 or
// row >= rows - 1, or beyond): an edge row (0 or rows - 1) is a row of cells that lacks a
// neighbour row, computed with its cell count; a row outside [0, rows) is absent and must stay 0
// at every level, or the next level would add it to its sums. It is not a row of cells.
__device__ __forceinline__ RowKind edge_row_kind(int row, int rows) {
  return (row < 0 || row >= rows) ? RowKind::absent : RowKind::edge;
}

// The configuration sweeps on an H100 found fastest (README.md, "Tuning"): columns per lane
// (1, 2 or 4: one float, float2 or float4 per load), steps per launch, warps per multiprocessor
// the row chunks aim at, threads per block (at most 128), and how much longer a side strip's warp
// takes per row than an inner one's (measured per warp with %globaltimer).
constexpr int kColumnsPerLane = 2;
constexpr int kStepsPerLaunch = 4;
constexpr int kMaxStepsPerLaunch = kStepsPerLaunch;  // kernels are compiled for 1 ... this
constexpr int kWarpsPerSm = 12;
constexpr int kThreadsPerBlock = 128;
constexpr float kSideCost = 1.4f;
