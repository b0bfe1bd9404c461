// Lesson 05, the file you edit: the shared-memory tile of tiled_step() (stencil.cu) — its
// cooperative load with the barrier, and the update of one cell read from it.
//
// It sees only what it includes: c_stencil (the nine weights in constant memory,
// constant_stencil.cuh) and gs::Rates. Tile cell [r][c] holds grid cell (origin_row - 1 + r,
// origin_col - 1 + c): the block's kTileRows x kTileCols cells and a one-cell halo on every side.
// A row of the arrays is kRowStride >= kTileCols + 2 floats (padding only moves banks).
#pragma once

#include "constant_stencil.cuh"
#include "gs/params.hpp"

// Namespace shared_tile (stencil.cu calls shared_tile::load_tile() and
// shared_tile::update_from_tile()), its names of internal linkage, as constant_stencil.cuh's: the
// update reads that file's c_stencil, of internal linkage.
namespace shared_tile {
namespace {

// Every thread of the block calls this. Afterwards the tiles hold the tile and its halo (a cell
// outside the grid as 0) and every thread of the block may read every cell.
template <int kTileCols, int kTileRows, int kRowStride>
__device__ __forceinline__ void load_tile(int rows, int cols, int origin_row, int origin_col,
                                          const float* __restrict__ u, const float* __restrict__ v,
                                          float (&u_tile)[kTileRows + 2][kRowStride],
                                          float (&v_tile)[kTileRows + 2][kRowStride]) {
  constexpr int kHaloCols = kTileCols + 2;
  constexpr int kHaloRows = kTileRows + 2;
  constexpr int kThreads = kTileCols * kTileRows;
  // The cells of tile and halo are numbered row by row, and the threads take them in turn,
  // kThreads at a time: consecutive threads take consecutive cells of a row (coalesced global
  // reads, consecutive shared words). A thread whose own cell lies outside the grid takes part
  // too: its share of the halo is needed by the others.
  const int thread_rank = threadIdx.y * kTileCols + threadIdx.x;
  for (int i = thread_rank; i < kHaloRows * kHaloCols; i += kThreads) {
    const int r = i / kHaloCols;  // a division by a constant: a multiplication and a shift
    const int c = i % kHaloCols;
    const int row = origin_row - 1 + r;
    const int col = origin_col - 1 + c;
    // The edge rule: a cell outside the grid is absent, 0 in the sums, and never read from
    // global memory (that read would be out of bounds).
    const bool in_grid = row >= 0 && row < rows && col >= 0 && col < cols;
    u_tile[r][c] = in_grid ? u[row * cols + col] : 0.0f;
    v_tile[r][c] = in_grid ? v[row * cols + col] : 0.0f;
  }
  // One barrier between the last write to the tile and the first read of a neighbour (written by
  // another thread, maybe of another warp). Every thread of the block reaches it: nothing above
  // returns early.
  __syncthreads();
}

// One explicit Euler step of the cell at [tile_row][tile_col] of the tiles, from its eight
// neighbours read in shared memory and the generic weights of c_stencil. `weight_in_grid` is the
// sum of the weights whose neighbour lies inside the grid (in_grid_weight_sum()).
template <int kTileRows, int kRowStride>
__device__ __forceinline__ void update_from_tile(const float (&u_tile)[kTileRows + 2][kRowStride],
                                                 const float (&v_tile)[kTileRows + 2][kRowStride],
                                                 int tile_row, int tile_col, float weight_in_grid,
                                                 const gs::Rates& rates, float& u_next,
                                                 float& v_next) {
  // sum of w * a_n over the eight neighbours; an absent one is 0 in the tile and adds nothing.
  float sum_u = 0.0f;
  float sum_v = 0.0f;
#pragma unroll
  for (int r = 0; r < 3; ++r) {
#pragma unroll
    for (int c = 0; c < 3; ++c) {
      if (r == 1 && c == 1) continue;  // the centre's weight is not part of the stencil
      const float w = c_stencil.weights.w[r][c];
      sum_u += w * u_tile[tile_row - 1 + r][tile_col - 1 + c];
      sum_v += w * v_tile[tile_row - 1 + r][tile_col - 1 + c];
    }
  }
  // L(a) = (sum of w * a_n) - (sum of the in-grid w) * a_c: the other half of the edge rule.
  const float u = u_tile[tile_row][tile_col];
  const float v = v_tile[tile_row][tile_col];
  const float laplacian_u = sum_u - weight_in_grid * u;
  const float laplacian_v = sum_v - weight_in_grid * v;
  const float uvv = u * v * v;
  u_next = u + rates.dt * (rates.diffusion_u * laplacian_u - uvv + rates.feed * (1.0f - u));
  v_next = v + rates.dt * (rates.diffusion_v * laplacian_v + uvv - (rates.feed + rates.kill) * v);
}

}  // namespace
}  // namespace shared_tile
