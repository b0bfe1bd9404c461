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
  const int band = h * plan.tile_cols;  // one of the row bands
  const int side_rows = plan.tile_rows > 2 * h ? plan.tile_rows - 2 * h : 0;
  const int side = side_rows * h;  // one of the column bands
  const int row0 = plan.first_row(tile), col0 = plan.first_col(tile);
  for (int i = thread; i < 2 * band + 2 * side; i += threads) {
    int row, col;  // in the owned tile's coordinates
    if (i < 2 * band) {
      const int j = i % band;
      row = j / plan.tile_cols + (i < band ? 0 : plan.tile_rows - h);
      col = j % plan.tile_cols;
    } else {
      const int j = (i - 2 * band) % side;
      row = h + j / h;
      col = j % h + (i - 2 * band < side ? 0 : plan.tile_cols - h);
    }
    // A band of a tile thinner than the halo reaches past it:
    if (row < 0 || row >= plan.tile_rows || col < 0 || col >= plan.tile_cols) continue;
    const int global_row = row0 + h + row, global_col = col0 + h + col;
    if (!plan.in_grid(global_row, global_col)) continue;
    mailbox[plan.global(global_row, global_col)] = kept[plan.kept(h + row, h + col)];
  }
}

/// @brief Fills the halo of the kept tile @p kept of one field (every kept cell the tile does
///        not own) from @p mailbox, after every tile posted its edges and the grid waited; the
///        work shared among @p threads threads, this one being @p thread.
///
/// The halo is a ring: `halo` full rows above and below, and `halo` columns on each side of the
/// owned rows. A cell outside the grid is absent: 0.
GS_HOST_DEVICE inline void collect_halo(const TilePlan& plan, int tile, int thread, int threads,
                                        const float* mailbox, float* kept) {
  const int h = plan.halo;
  const int band = h * plan.padded_cols;  // rows above (and below) the owned ones
  const int side = plan.tile_rows * h;    // columns left (and right) of the owned ones
  const int row0 = plan.first_row(tile), col0 = plan.first_col(tile);
  for (int i = thread; i < 2 * band + 2 * side; i += threads) {
    int row, col;  // in the kept tile's coordinates
    if (i < 2 * band) {
      const int j = i % band;
      row = j / plan.padded_cols + (i < band ? 0 : h + plan.tile_rows);
      col = j % plan.padded_cols;
    } else {
      const int j = (i - 2 * band) % side;
      row = h + j / h;
      col = j % h + (i - 2 * band < side ? 0 : h + plan.tile_cols);
    }
    const int global_row = row0 + row, global_col = col0 + col;
    kept[plan.kept(row, col)] = plan.in_grid(global_row, global_col)
                                    ? read_posted(mailbox + plan.global(global_row, global_col))
                                    : 0.0f;
  }
}

}  // namespace on_chip
