// Lesson 11's tiles: how the grid is cut into one tile per block, each tile padded by a halo as
// deep as the steps between two exchanges, and where a tile's cells live in shared memory and in
// the global buffers. What the learner's exchange (exchange.hpp) is given; plain C++ that the
// kernel (on the GPU) and the host model of the same run (on the CPU, for the tests) share.
#pragma once

#include <cstddef>

#include "gs/host_device.hpp"

namespace on_chip {

/// @brief The cut of a rows x cols grid into tiles_y x tiles_x tiles, one per block.
struct TilePlan {
  int rows = 0;          ///< Grid rows.
  int cols = 0;          ///< Grid columns.
  int pitch = 0;         ///< Floats from one row of a global buffer (a mailbox) to the next.
  int tiles_y = 0;       ///< Tiles down the grid.
  int tiles_x = 0;       ///< Tiles across the grid.
  int tile_rows = 0;     ///< Rows a tile owns (the last tiles may be cut short by the grid).
  int tile_cols = 0;     ///< Columns a tile owns.
  int halo = 0;          ///< Depth of the halo: the steps between two exchanges.
  int padded_rows = 0;   ///< tile_rows + 2 halo: the rows a block keeps.
  int padded_cols = 0;   ///< tile_cols + 2 halo.
  int shared_pitch = 0;  ///< Floats from one row of the kept tile to the next (>= padded_cols).

  /// @brief Number of tiles, one per block.
  GS_HOST_DEVICE int tiles() const { return tiles_y * tiles_x; }
  /// @brief Global row of the kept tile's row 0 (its halo's first row; may be negative).
  GS_HOST_DEVICE int first_row(int tile) const { return (tile / tiles_x) * tile_rows - halo; }
  /// @brief Global column of the kept tile's column 0.
  GS_HOST_DEVICE int first_col(int tile) const { return (tile % tiles_x) * tile_cols - halo; }
  /// @brief Whether the global cell (row, col) lies in the grid.
  GS_HOST_DEVICE bool in_grid(int row, int col) const {
    return row >= 0 && row < rows && col >= 0 && col < cols;
  }
  /// @brief Offset of the kept tile's (row, col) in one field's shared memory.
  GS_HOST_DEVICE int kept(int row, int col) const { return row * shared_pitch + col; }
  /// @brief Offset of the global cell (row, col) in a global buffer.
  GS_HOST_DEVICE std::size_t global(int row, int col) const {
    return static_cast<std::size_t>(row) * static_cast<std::size_t>(pitch) +
           static_cast<std::size_t>(col);
  }
};

/// @brief Reads a value another block wrote during this launch. On the GPU the load goes to L2
///        (`__ldcg`): an SM's L1 is not kept coherent with the other SMs' writes, so a plain load
///        could return what this SM's L1 kept from an earlier exchange through the same buffer.
GS_HOST_DEVICE inline float read_posted(const float* address) {
#if defined(__CUDA_ARCH__)
  return __ldcg(address);
#else
  return *address;
#endif
}

}  // namespace on_chip
