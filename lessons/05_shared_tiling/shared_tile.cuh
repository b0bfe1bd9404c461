// Lesson 05, the file you edit: the shared-memory tile of tiled_step() (stencil.cu) — its
// cooperative load with the barrier, and the update of one cell read from it.
//
// It sees only what it includes: c_stencil (the nine weights in constant memory,
// constant_stencil.cuh) and gs::Rates. Tile cell [r][c] holds grid cell (origin_row - 1 + r,
// origin_col - 1 + c): the block's kTileRows x kTileCols cells and a one-cell halo on every side.
// A row of the arrays is kRowStride >= kTileCols + 2 floats (padding only moves banks).
//
// HINTS.md, beside this file, has hints in three levels; open them one at a time.
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
  // TODO(lesson 05): fill u_tile and v_tile with the (kTileRows + 2) x (kTileCols + 2) cells of
  // the tile and its halo, every thread of the block taking a share, coalesced, and each cell
  // stored by one thread only: every value crosses from global memory once per block (the
  // suite checks it, thread by thread). A cell outside the grid is absent: 0, and never read
  // from u or v. Then make the tiles safe to read for every thread of the block. As shipped
  // the tiles hold whatever shared memory held.
  (void)rows, (void)cols, (void)origin_row, (void)origin_col, (void)u, (void)v, (void)u_tile,
      (void)v_tile;
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
  // TODO(lesson 05): the step of docs/PROBLEM.md with the weights c_stencil.weights.w[r][c]
  // (r, c = 0, 1, 2; the centre's is not part of the stencil), every value read from the
  // tiles, and weight_in_grid for the neighbours that exist. As shipped nothing changes.
  (void)weight_in_grid, (void)rates;
  u_next = u_tile[tile_row][tile_col];
  v_next = v_tile[tile_row][tile_col];
}

}  // namespace
}  // namespace shared_tile
