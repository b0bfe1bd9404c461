// Lesson 11 - the exchange between tiles that keeps the state on the chip (the solution).
//
// Each block keeps its tile of u and v, padded by a halo `plan.halo` cells deep, in shared memory
// for a whole launch, and advances it `plan.halo` steps on its own: every step, the cells still
// correct shrink by one ring, so after `plan.halo` steps only the tile it owns is. Then the
// blocks trade what each one's halo needs. They cannot read each other's shared memory (not
// across the whole grid), so each one posts into a mailbox, a buffer of the grid's layout in
// global memory that L2 serves, every block waits at a grid-wide barrier, and each one collects
// its halo from the mailbox. The kernel (on_chip.cpp) calls the two functions once per field,
// with the block's threads sharing the work; the tests also call them on the CPU.
//
// The cells, in the kept tile's coordinates (plan.kept(row, col)): rows [0, plan.padded_rows),
// columns [0, plan.padded_cols); the tile owns rows [halo, halo + tile_rows) and the same
// columns' range; global row = plan.first_row(tile) + row (likewise columns).
#pragma once

#include "tiles.hpp"

namespace on_chip {

// How the solution shares the work: the threads in rows of up to 32 (on the GPU, a warp per row:
// a warp's loads and stores then touch consecutive addresses), each row of threads taking whole
// rows of the bands above and below, with no division per cell; the thin side bands (2 halo
// columns per row) as one flat list. On the host the tests pass a few pretend threads: one row
// of them.
struct ThreadRows {
  int lanes;  // threads in a row
  int rows;   // rows of threads
  int lane;   // this thread's place in its row
  int row;    // its row of threads (>= rows: a thread left over, idle in the top and bottom bands)
};

GS_HOST_DEVICE inline ThreadRows thread_rows(int thread, int threads) {
  const int lanes = threads < 32 ? threads : 32;
  return {lanes, threads / lanes, thread % lanes, thread / lanes};
}

/// @brief Posts, from the kept tile @p kept of one field, every cell of @p tile that some other
///        tile's halo will need into @p mailbox (at its global place, plan.global()), sharing the
///        work among @p threads threads, this one being @p thread.
///
/// The cells a neighbour's halo needs are the owned ones within `halo` of the tile's border: two
/// bands of `halo` rows (top, bottom) and, between them, two of `halo` columns. On a tile
/// thinner than two halos the bands overlap, and a cell is posted twice with the same value.
GS_HOST_DEVICE inline void post_edges(const TilePlan& plan, int tile, int thread, int threads,
                                      const float* kept, float* mailbox) {
  const int h = plan.halo;
  const int row0 = plan.first_row(tile) + h, col0 = plan.first_col(tile) + h;  // owned (0, 0)
  const ThreadRows t = thread_rows(thread, threads);
  // The top and bottom bands, row by row (owned rows [0, h) and [tile_rows - h, tile_rows)).
  for (int band_row = t.row; t.row < t.rows && band_row < 2 * h; band_row += t.rows) {
    const int row = band_row < h ? band_row : plan.tile_rows - 2 * h + band_row;
    if (row < 0 || row >= plan.tile_rows || row0 + row >= plan.rows) continue;
    for (int col = t.lane; col < plan.tile_cols && col0 + col < plan.cols; col += t.lanes) {
      mailbox[plan.global(row0 + row, col0 + col)] = kept[plan.kept(h + row, h + col)];
    }
  }
  // The side bands between them: h columns at each side of the owned rows [h, tile_rows - h).
  const int side_rows = plan.tile_rows > 2 * h ? plan.tile_rows - 2 * h : 0;
  for (int i = thread; i < side_rows * 2 * h; i += threads) {
    const int row = h + i / (2 * h), k = i % (2 * h);
    const int col = k < h ? k : plan.tile_cols - 2 * h + k;
    // A band of a tile thinner than the halo reaches past it:
    if (col < 0 || col >= plan.tile_cols) continue;
    if (!plan.in_grid(row0 + row, col0 + col)) continue;
    mailbox[plan.global(row0 + row, col0 + col)] = kept[plan.kept(h + row, h + col)];
  }
}

/// @brief Fills the halo of the kept tile @p kept of one field (every kept cell the tile does
///        not own) from @p mailbox, after every tile posted its edges and the grid waited; the
///        work shared among @p threads threads, this one being @p thread.
///
/// The halo is a ring: `halo` full rows above and below, and `halo` columns on each side of the
/// owned rows. A cell outside the grid is absent: 0. A read from the mailbox comes from L2,
/// hundreds of cycles away: each thread starts its reads of a row before it stores any.
GS_HOST_DEVICE inline void collect_halo(const TilePlan& plan, int tile, int thread, int threads,
                                        const float* mailbox, float* kept) {
  const int h = plan.halo;
  const int row0 = plan.first_row(tile), col0 = plan.first_col(tile);  // kept (0, 0)
  const ThreadRows t = thread_rows(thread, threads);
  const auto posted_or_absent = [&](int row, int col) {
    return plan.in_grid(row0 + row, col0 + col)
               ? read_posted(mailbox + plan.global(row0 + row, col0 + col))
               : 0.0f;
  };
  // The rows above and below the owned ones (kept rows [0, h) and [h + tile_rows, padded_rows)),
  // four cells of a row per thread at a time.
  constexpr int kInFlight = 4;
  for (int band_row = t.row; t.row < t.rows && band_row < 2 * h; band_row += t.rows) {
    const int row = band_row < h ? band_row : plan.tile_rows + band_row;
    for (int first = t.lane; first < plan.padded_cols; first += kInFlight * t.lanes) {
      float value[kInFlight];
      for (int k = 0; k < kInFlight; ++k) {
        const int col = first + k * t.lanes;
        value[k] = col < plan.padded_cols ? posted_or_absent(row, col) : 0.0f;
      }
      for (int k = 0; k < kInFlight; ++k) {
        const int col = first + k * t.lanes;
        if (col < plan.padded_cols) kept[plan.kept(row, col)] = value[k];
      }
    }
  }
  // The columns left and right of the owned rows: h on each side.
  const int side = plan.tile_rows * 2 * h;
  for (int first = thread; first < side; first += kInFlight * threads) {
    float value[kInFlight];
    int at[kInFlight];
    for (int k = 0; k < kInFlight; ++k) {
      const int i = first + k * threads;
      const int row = h + i / (2 * h), j = i % (2 * h);
      const int col = j < h ? j : plan.tile_cols + j;
      at[k] = i < side ? plan.kept(row, col) : -1;
      value[k] = i < side ? posted_or_absent(row, col) : 0.0f;
    }
    for (int k = 0; k < kInFlight; ++k) {
      if (at[k] >= 0) kept[at[k]] = value[k];
    }
  }
}

}  // namespace on_chip
