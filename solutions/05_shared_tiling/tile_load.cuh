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
  constexpr int kHaloCols = kTileCols + 2;
  constexpr int kHaloRows = kTileRows + 2;
  constexpr int kThreads = kTileCols * kTileRows;
  // The (kTileRows + 2) x (kTileCols + 2) cells of tile and halo are numbered row by row, and
  // the block's threads take them in turn, kThreads at a time. Consecutive threads take
  // consecutive cells of a row: coalesced global reads, and consecutive shared-memory words
  // (different banks). Every thread takes part, also one whose own cell lies outside the grid:
  // its share of the halo is still needed.
  const int thread_rank = threadIdx.y * kTileCols + threadIdx.x;
  for (int i = thread_rank; i < kHaloRows * kHaloCols; i += kThreads) {
    const int r = i / kHaloCols;
    const int c = i % kHaloCols;
    const int row = origin_row - 1 + r;
    const int col = origin_col - 1 + c;
    // The edge rule: a cell outside the grid is "absent", loaded as zero (and never read from
    // global memory, which would be out of bounds).
    const bool in_grid = row >= 0 && row < rows && col >= 0 && col < cols;
    u_tile[r][c] = in_grid ? u[row * cols + col] : 0.0f;
    v_tile[r][c] = in_grid ? v[row * cols + col] : 0.0f;
  }
  // One barrier, after the last write to the tile and before the first read of a neighbour:
  // a thread's neighbours were loaded by other threads, maybe of other warps. Every thread of
  // the block must reach it, so no thread may return before it.
  __syncthreads();
}
