// Lesson 11's point, checked on the host: each block posts into the mailbox what its neighbours'
// halos need — the owned cells within `halo` of its tile's border — and nothing deeper. Posting
// the whole owned tile gives the same numbers (every test of the run passes), but moves the whole
// state through L2 at every exchange instead of its edges: the traffic the lesson's model counts
// and its kernel avoids. Used by tests/test_lesson11.cpp (the exercise and the solution) and by
// tests/point/test_lesson11_wrong_answer.cpp (the fixture of a wrong answer, which must fail it).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <exchange.hpp>  // the learner's (or the fixture's) post_edges()

namespace lesson11_point {

// A 2 x 2 cut of a 50 x 70 grid, halo 3: each tile's owned cells 25 x 35, so every tile has cells
// deeper than the halo, and borders it shares with other tiles as well as with the grid's edge.
inline on_chip::TilePlan small_plan() {
  on_chip::TilePlan plan;
  plan.rows = 50;
  plan.cols = 70;
  plan.pitch = 72;
  plan.tiles_y = 2;
  plan.tiles_x = 2;
  plan.tile_rows = 25;
  plan.tile_cols = 35;
  plan.halo = 3;
  plan.padded_rows = plan.tile_rows + 2 * plan.halo;
  plan.padded_cols = plan.tile_cols + 2 * plan.halo;
  plan.shared_pitch = plan.padded_cols + 1;
  return plan;
}

// Every tile posts (five pretend threads each) into one NaN-poisoned mailbox; each kept cell
// holds a value that names it. Returns "" when exactly the cells a neighbour needs were posted
// (and with the owner's values), else the first cell that says otherwise.
inline std::string check_posts_only_edges() {
  const on_chip::TilePlan plan = small_plan();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> mailbox(static_cast<std::size_t>(plan.rows) * plan.pitch, nan);
  std::vector<std::vector<float>> kept(plan.tiles());
  for (int tile = 0; tile < plan.tiles(); ++tile) {
    kept[tile].assign(static_cast<std::size_t>(plan.padded_rows) * plan.shared_pitch, nan);
    for (int row = 0; row < plan.padded_rows; ++row) {
      for (int col = 0; col < plan.padded_cols; ++col) {
        const int global_row = plan.first_row(tile) + row, global_col = plan.first_col(tile) + col;
        kept[tile][plan.kept(row, col)] = 1.0f + static_cast<float>(global_row * 1000 + global_col);
      }
    }
    constexpr int kThreads = 5;
    for (int thread = 0; thread < kThreads; ++thread)
      on_chip::post_edges(plan, tile, thread, kThreads, kept[tile].data(), mailbox.data());
  }
  const int h = plan.halo;
  for (int row = 0; row < plan.rows; ++row) {
    for (int col = 0; col < plan.cols; ++col) {
      const int tile_y = row / plan.tile_rows, tile_x = col / plan.tile_cols;
      const int top = row - tile_y * plan.tile_rows, left = col - tile_x * plan.tile_cols;
      const int bottom = plan.tile_rows - 1 - top, right = plan.tile_cols - 1 - left;
      // Within h of a border shared with another tile: a neighbour's halo needs it.
      const bool needed = (top < h && tile_y > 0) || (bottom < h && tile_y + 1 < plan.tiles_y) ||
                          (left < h && tile_x > 0) || (right < h && tile_x + 1 < plan.tiles_x);
      const bool near_border = top < h || bottom < h || left < h || right < h;
      const float posted = mailbox[plan.global(row, col)];
      const float owner = 1.0f + static_cast<float>(row * 1000 + col);
      std::ostringstream where;
      where << "cell (" << row << ", " << col << ") of the " << plan.rows << " x " << plan.cols
            << " grid, in tiles of " << plan.tile_rows << " x " << plan.tile_cols << ", halo " << h
            << ": ";
      if (needed && !(posted == owner)) {
        return where.str() + "a neighbour's halo needs it, and the mailbox holds " +
               std::to_string(posted) + " instead of its owner's value";
      }
      if (!near_border && !std::isnan(posted)) {
        return where.str() + "it lies " + std::to_string(std::min({top, bottom, left, right})) +
               " cells inside its tile, deeper than the halo, and was posted: only the edges "
               "should cross L2 at an exchange, not the whole tile";
      }
    }
  }
  return "";
}

}  // namespace lesson11_point
