// Lesson 05's point, checked on the host: each block copies its tile and halo from global memory
// into shared memory once — every cell of the (kTileRows + 2) x (kTileCols + 2) tiles stored by
// exactly one thread, the work dealt out among the block's threads — and then waits at the
// barrier. A load_tile() in which every thread copies the 3 x 3 cells around its own gives the
// same numbers (the threads store equal values into the same cells, and every test of the suite
// passes), but reads each value up to nine times from global memory per block: lesson 04's
// traffic, the cost the tile exists to remove. One thread loading the whole tile for the block
// also gives the right numbers, with the other threads idle.
//
// The walk: load_tile() compiled for the host, CUDA's names given their host meaning here, and
// run for one thread of the block at a time, the tiles poisoned with NaN before each thread, so
// that every cell the thread stored shows. A load that needs another thread's stores before its
// barrier is no correct load: running the threads one after another sees every store.
// Used by tests/test_lesson05.cpp (the exercise and the solution) and by
// tests/point/test_lesson05_wrong_answer.cpp (the fixture of a wrong answer,
// tests/fixtures/05_shared_tiling/each_thread_loads_its_neighbours/, which must fail it).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

// What shared_tile.cuh includes, at file scope and compiled for the host as it is (without nvcc,
// cuda_runtime.h gives __device__, __forceinline__ and __constant__ their host meaning).
#include "constant_stencil.cuh"
#include "gs/params.hpp"

namespace lesson05_point::walk {

struct Index {
  unsigned x, y, z;
};
inline Index thread_index{0, 0, 0};
inline int barriers = 0;  // __syncthreads() reached by the thread being walked

inline void sync_threads() {
  ++barriers;
}

// c_stencil (constant_stencil.cuh) is used by update_from_tile(), which the walk does not run:
// named here, so that the host compiler does not call it unused.
inline const gs::GpuStencil& stencil() {
  return c_stencil;
}

}  // namespace lesson05_point::walk

// shared_tile.cuh, with CUDA's names for the host walk (one thread at a time).
#pragma push_macro("threadIdx")
#pragma push_macro("__syncthreads")
#define threadIdx ::lesson05_point::walk::thread_index
#define __syncthreads() ::lesson05_point::walk::sync_threads()
#include <shared_tile.cuh>  // its #pragma unroll: the suites compile with -Wno-unknown-pragmas
#pragma pop_macro("__syncthreads")
#pragma pop_macro("threadIdx")

namespace lesson05_point {

// The value of grid cell (row, col) of a field: a whole number that names the cell and the field,
// exact in float.
inline float cell_value(int field, int row, int col) {
  return static_cast<float>(1 + field * 100000 + row * 300 + col);
}

// Walks the threads of block (block_row, block_col) of a rows x cols grid through load_tile():
// "" when every cell of the tiles was stored by one thread with the right value (0 outside the
// grid), no thread stored more than its share and every thread reached the barrier; else what
// went wrong, naming the first cell or thread.
template <int kTileCols, int kTileRows, int kRowStride>
std::string check_block(int rows, int cols, int block_row, int block_col) {
  constexpr int kHaloRows = kTileRows + 2;
  constexpr int kHaloCols = kTileCols + 2;
  constexpr int kThreads = kTileCols * kTileRows;
  constexpr int kCells = kHaloRows * kHaloCols;
  // An even deal gives each thread ceil(kCells / kThreads) cells of each field; four times that
  // leaves room for any sensible split (threads on the tile's edge that also load the halo beside
  // them, say) and none for a few threads loading the tile for the whole block.
  constexpr int kMostPerThread = 4 * ((kCells + kThreads - 1) / kThreads);
  std::vector<float> u(static_cast<std::size_t>(rows) * cols), v(u.size());
  for (int row = 0; row < rows; ++row) {
    for (int col = 0; col < cols; ++col) {
      u[static_cast<std::size_t>(row) * cols + col] = cell_value(0, row, col);
      v[static_cast<std::size_t>(row) * cols + col] = cell_value(1, row, col);
    }
  }
  const int origin_row = block_row * kTileRows, origin_col = block_col * kTileCols;
  std::ostringstream block;
  block << "load_tile<" << kTileCols << ", " << kTileRows << ", " << kRowStride << ">, block ("
        << block_row << ", " << block_col << ") of a " << rows << " x " << cols
        << " grid (tile origin (" << origin_row << ", " << origin_col << ")): ";

  // Poison with NaN: every value a load stores is finite (the grid's, or 0), so a store shows.
  const float poison = std::numeric_limits<float>::quiet_NaN();
  float u_tile[kHaloRows][kRowStride], v_tile[kHaloRows][kRowStride];
  // Per field (u, v): how many threads stored cell [r][c], and the first of them.
  std::vector<int> stores[2] = {std::vector<int>(kCells, 0), std::vector<int>(kCells, 0)};
  std::vector<int> first_thread[2] = {std::vector<int>(kCells, -1), std::vector<int>(kCells, -1)};
  const char* const names[2] = {"u", "v"};
  int most_stored = 0, busiest = 0, busiest_field = 0;  // the thread that stored the most cells
  int no_barrier = -1;  // the first thread that never reached __syncthreads()
  for (int thread = 0; thread < kThreads; ++thread) {
    for (int r = 0; r < kHaloRows; ++r) {
      std::fill(u_tile[r], u_tile[r] + kRowStride, poison);
      std::fill(v_tile[r], v_tile[r] + kRowStride, poison);
    }
    walk::thread_index = {static_cast<unsigned>(thread % kTileCols),
                          static_cast<unsigned>(thread / kTileCols), 0};
    walk::barriers = 0;
    shared_tile::load_tile<kTileCols, kTileRows, kRowStride>(rows, cols, origin_row, origin_col,
                                                             u.data(), v.data(), u_tile, v_tile);
    std::ostringstream who;
    who << "thread (" << thread % kTileCols << ", " << thread / kTileCols << ") ";
    if (walk::barriers == 0 && no_barrier < 0) no_barrier = thread;
    for (int field = 0; field < 2; ++field) {
      const auto& tile = field == 0 ? u_tile : v_tile;
      int stored = 0;
      for (int r = 0; r < kHaloRows; ++r) {
        for (int c = 0; c < kHaloCols; ++c) {
          if (std::isnan(tile[r][c])) continue;
          const int row = origin_row - 1 + r, col = origin_col - 1 + c;
          const bool in_grid = row >= 0 && row < rows && col >= 0 && col < cols;
          const float expected = in_grid ? cell_value(field, row, col) : 0.0f;
          if (!(tile[r][c] == expected)) {
            std::ostringstream wrong;
            wrong << who.str() << "stored " << tile[r][c] << " into " << names[field] << "_tile["
                  << r << "][" << c << "], grid cell (" << row << ", " << col << "), instead of "
                  << expected << (in_grid ? "" : " (the cell is outside the grid: absent, 0)");
            return block.str() + wrong.str();
          }
          ++stored;
          if (stores[field][r * kHaloCols + c]++ == 0)
            first_thread[field][r * kHaloCols + c] = thread;
        }
      }
      if (stored > most_stored) {
        most_stored = stored;
        busiest = thread;
        busiest_field = field;
      }
    }
  }
  for (int field = 0; field < 2; ++field) {
    for (int r = 0; r < kHaloRows; ++r) {
      for (int c = 0; c < kHaloCols; ++c) {
        const int count = stores[field][r * kHaloCols + c];
        if (count == 1) continue;
        std::ostringstream cell;
        cell << names[field] << "_tile[" << r << "][" << c << "] (grid cell (" << origin_row - 1 + r
             << ", " << origin_col - 1 + c << ")) ";
        if (count == 0) return block.str() + cell.str() + "was stored by no thread of the block";
        const int first = first_thread[field][r * kHaloCols + c];
        return block.str() + cell.str() + "was stored by " + std::to_string(count) +
               " threads of the block (the first: thread (" + std::to_string(first % kTileCols) +
               ", " + std::to_string(first / kTileCols) +
               ")): each value of the tile and its halo should cross from global memory once per "
               "block, loaded by one thread for all, not by every thread that needs it";
      }
    }
  }
  if (no_barrier >= 0) {
    return block.str() + "thread (" + std::to_string(no_barrier % kTileCols) + ", " +
           std::to_string(no_barrier / kTileCols) +
           ") never reached __syncthreads(): the other threads could read the tiles before its "
           "cells were stored";
  }
  if (most_stored > kMostPerThread) {
    return block.str() + "thread (" + std::to_string(busiest % kTileCols) + ", " +
           std::to_string(busiest / kTileCols) + ") stored " + std::to_string(most_stored) +
           " of the " + std::to_string(kCells) + " cells of " + names[busiest_field] +
           "_tile, in a block of " + std::to_string(kThreads) + " threads (an even share is " +
           std::to_string((kCells + kThreads - 1) / kThreads) +
           "): the threads of the block share the load, each a few cells";
  }
  return "";
}

// One tile shape at three blocks of a 37 x 71 grid of partial tiles: the grid's top-left corner,
// one inside, and the bottom-right one, cut by the grid's edge.
template <int kTileCols, int kTileRows, int kRowStride>
std::string check_tile() {
  constexpr int kRows = 37, kCols = 71;
  const int last_row = (kRows + kTileRows - 1) / kTileRows - 1;
  const int last_col = (kCols + kTileCols - 1) / kTileCols - 1;
  for (const auto& [block_row, block_col] :
       {std::pair{0, 0}, std::pair{1, 1}, std::pair{last_row, last_col}}) {
    const std::string problem =
        check_block<kTileCols, kTileRows, kRowStride>(kRows, kCols, block_row, block_col);
    if (!problem.empty()) return problem;
  }
  return "";
}

// The tiles of the lesson's three implementations (stencil.cu): 32 x 8 with row stride 34,
// 16 x 16 with 18 and with 48.
inline std::string check_loads_once_per_block() {
  std::string problem = check_tile<32, 8, 34>();
  if (problem.empty()) problem = check_tile<16, 16, 18>();
  if (problem.empty()) problem = check_tile<16, 16, 48>();
  return problem;
}

}  // namespace lesson05_point
