// Lesson 11 - the file you edit: the exchange between tiles that keeps the state on the chip.
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
/// TODO(lesson 11): post what the neighbours' halos need, and no more: the mailbox traffic is what
/// this lesson pays for keeping the state on the chip (the README's model counts it). Cells outside
/// the grid are never posted (the mailbox has no place for them).
GS_HOST_DEVICE inline void post_edges(const TilePlan& plan, int tile, int thread, int threads,
                                      const float* kept, float* mailbox) {
  (void)plan, (void)tile, (void)thread, (void)threads, (void)kept, (void)mailbox;
}

/// @brief Fills the halo of the kept tile @p kept of one field (every kept cell the tile does
///        not own) from @p mailbox, after every tile posted its edges and the grid waited; the
///        work shared among @p threads threads, this one being @p thread.
///
/// TODO(lesson 11): a halo cell inside the grid gets what its owner posted (read it with
/// read_posted(): another SM wrote it during this launch); a halo cell outside the grid is absent
/// and must hold 0, as the update counts on.
GS_HOST_DEVICE inline void collect_halo(const TilePlan& plan, int tile, int thread, int threads,
                                        const float* mailbox, float* kept) {
  (void)plan, (void)tile, (void)thread, (void)threads, (void)mailbox, (void)kept;
}

}  // namespace on_chip
