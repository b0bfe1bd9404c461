// Lesson 05, the file you edit: the cooperative load of a tile and its halo into shared memory,
// and the barrier.
//
// Included by stencil.cu. tiled_step() calls load_tile() with every thread of its block of
// kTileCols x kTileRows threads (threadIdx.x along columns); u_tile[r][c] and v_tile[r][c] must
// then hold grid cell (origin_row - 1 + r, origin_col - 1 + c) of u and v, for r in
// [0, kTileRows + 2) and c in [0, kTileCols + 2): the tile and a one-cell halo on every side.
// A row of the arrays is kRowStride >= kTileCols + 2 floats (padding only moves banks).
#pragma once

template <int kTileCols, int kTileRows, int kRowStride>
__device__ __forceinline__ void load_tile(int rows, int cols, int origin_row, int origin_col,
                                          const float* __restrict__ u, const float* __restrict__ v,
                                          float (&u_tile)[kTileRows + 2][kRowStride],
                                          float (&v_tile)[kTileRows + 2][kRowStride]) {
  // TODO(lesson 05): fill u_tile and v_tile with the (kTileRows + 2) x (kTileCols + 2) cells of
  // the tile and its halo. Let every thread of the block take part: number the cells row by row;
  // the thread of rank threadIdx.y * kTileCols + threadIdx.x takes cells rank,
  // rank + kTileCols * kTileRows, ... A cell outside the grid is absent: store 0.0f and do not
  // read global memory for it. Then put the one barrier the kernel needs, where every thread of
  // the block reaches it. Until this is written the tiles hold whatever shared memory held
  // before and the tests fail.
  (void)rows, (void)cols, (void)origin_row, (void)origin_col, (void)u, (void)v, (void)u_tile,
      (void)v_tile;
}
