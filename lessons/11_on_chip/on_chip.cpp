// Lesson 11 - the whole simulation on the chip: one block per SM keeps its tile of u and v in
// shared memory for a whole frame, and the tiles trade their edges every few steps through L2.
//
// Lesson 06's register pyramid reads and writes the whole state from memory every 4 steps. Yet
// the state of the official run (16.6 MB of u and v) is smaller than the shared memory of an
// H100's 132 SMs (132 x 227 KiB = 30 MB). So:
//   1. the grid is cut into one tile per SM, each padded by a halo `halo` cells deep (plan_tiles);
//   2. a cooperative launch makes every block resident at once, so that they may wait for each
//      other (grid.sync()); each block loads its kept tile once per launch (a frame);
//   3. each block advances its kept tile `halo` steps in shared memory: every warp owns a band of
//      rows and walks down it, updating in place (walk_band); the rows just above and below the
//      band belong to other warps and are read before anyone writes (read_band_edges, then a
//      __syncthreads());
//   4. every `halo` steps the exchange (exchange.hpp, the file you edit): each block posts the
//      cells the others' halos need into a mailbox in global memory, the grid waits, each block
//      collects its halo; the mailboxes alternate between the two buffers, so that no block
//      posts into the buffer another is still collecting from;
//   5. at the end of the frame each block writes the tile it owns back, once.
// Per frame of 32 steps the state crosses memory twice, against 16 times in lesson 06; the price
// (the exchange, the barrier, the halo's cells computed twice) is modelled in README.md.
//
// The warp's walk is written once, for two kinds of warp (warps.hpp): on the GPU each lane runs
// it on its own columns (DeviceWarp); on the host (advance_on_host) one call runs a warp's 32
// lanes in lockstep (HostWarp). So the tests check the kernel's own walk, bands, barriers and
// exchanges on any machine. The stepper around the kernel is in stepper.cuh.
#include "on_chip.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include "gs/lesson.hpp"
#include "gs/step_coefficients.hpp"

// Angle brackets: the build picks lessons/11_on_chip/exchange.hpp (your stubs) or the solution's.
#include <exchange.hpp>

#if GS_HAVE_CUDA
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "gs/cuda_check.hpp"
#include "gs/device_limits.hpp"
#include "gs/device_stepper.hpp"
#endif

// The two kinds of warp the walk runs on, and the macros of a host-and-device walk.
#include "warps.hpp"

namespace on_chip {
namespace {

// The rates of one step folded into the few numbers the update needs (common/).
using Coefficients = gs::StepCoefficients;

// The cells of the 3 x 3 box around a cell at global (row or column) `index` that lie in a grid
// of `size` along that direction: 3 inside, 2 on an edge, 1 when the grid is one cell wide.
GS_HOST_DEVICE inline int box_cells(int index, int size) {
  return (index - 1 >= 0) + 1 + (index + 1 < size);
}

// The kept width a warp spans with 2, 4, 6 or 8 columns per lane; 0 when wider than 8.
int kept_pitch_for(int padded_cols) {
  for (int columns : {2, 4, 6, 8}) {
    if (padded_cols <= kWarpSize * columns) return kWarpSize * columns;
  }
  return 0;
}

// Whether the walk takes its rows two at a time (walk_band): with 2 or 4 columns a lane; with 6
// or 8 the registers of two rows in flight would spill at 16 warps (measured in README.md,
// Results; GS_L11_PAIRED_ROWS=0 or 1 overrides it on the GPU, for measuring).
GS_HOST_DEVICE constexpr bool paired_rows_for(int columns) {
  return columns <= 4;
}

// Threads per block for `columns` columns per lane: as many warps as the registers allow (each
// lane holds a few rows of its columns for both fields), so that shared-memory latency hides;
// at least one row per warp.
GS_HOST_DEVICE constexpr int max_threads(int columns, bool paired_rows) {
  return columns >= 8   ? (paired_rows ? 256 : 384)
         : columns >= 6 ? (paired_rows ? 384 : 512)
         : columns >= 4 ? 512
                        : 1024;
}

int threads_for(const TilePlan& p, bool paired_rows) {
  return std::min(max_threads(p.shared_pitch / kWarpSize, paired_rows), kWarpSize * p.padded_rows);
}

// ---------------------------------------------------------------------------------------------
// A warp's band of rows, one step
// ---------------------------------------------------------------------------------------------
//
// The walk is lean: per cell and step it does what the update needs and little else.
//  - Column sums first, then box sums: a level keeps `pair`, the sum of rows r-1 and r, so that
//    rows r-1 + r + r+1 costs one add and the next pair another; across the lane's columns the
//    sums of adjacent columns are shared (1.5 adds per column instead of 2).
//  - No masks: the rates of each of the lane's columns are numbers in registers (ColumnRates),
//    zero for a column outside the grid or past the kept width, which therefore stays 0 without
//    a select. Only the grid's first and last rows (a different box count) and rows outside the
//    grid (left at 0, not computed) take another path, and a warp's whole row takes it at once.
//  - No shuffle selects: lane 0's left neighbour and lane 31's right one are whatever the
//    shuffle returns; they feed only the kept tile's outermost columns, which lie in the halo
//    (wrong cells there spread one column a step and are overwritten by the exchange every
//    `halo` steps) or outside the grid (their rates are 0).
//  - No register copies: the row loop is unrolled (by four rows when rows go two at a time, else
//    by two), the rows in registers trading roles, so every value stays where it was loaded.
//  - Rows two at a time (with 2 or 4 columns a lane): both rows below are read before either row
//    is written, and two inner rows make one branch-free stretch the compiler interleaves.

// The rates of the lane's columns for a row whose box has `row_cells` rows in the grid (3
// inside, 2 on the grid's first or last row): u' = keep_u u + diffuse_u box_u - dt u v^2 + feed,
// v' = keep_v v + diffuse_v box_v + dt u v^2, all 0 for a column that is absent.
template <int kColumns, class Warp>
struct ColumnRates {
  typename Warp::Value keep_u[kColumns], keep_v[kColumns];
  typename Warp::Value diffuse_u[kColumns], diffuse_v[kColumns];
  typename Warp::Value feed[kColumns];
};

GS_WARP_TEMPLATE
template <int kColumns, class Warp>
GS_HOST_DEVICE inline void column_rates(const TilePlan& p, const Coefficients& k, int tile,
                                        int row_cells, ColumnRates<kColumns, Warp>& rates) {
  const int col0 = p.first_col(tile);
  GS_UNROLL
  for (int j = 0; j < kColumns; ++j) {
    // Per lane: whether the column is present (in the grid and in the kept width), and its box.
    const auto present = [&](int lane) {
      const int c = lane * kColumns + j, col = col0 + c;
      return c < p.padded_cols && col >= 0 && col < p.cols;
    };
    const auto cells = [&](int lane) {
      return static_cast<float>(row_cells * box_cells(col0 + lane * kColumns + j, p.cols));
    };
    rates.keep_u[j] = Warp::per_lane(
        [&](int lane) { return present(lane) ? k.keep_u - k.dt_du * cells(lane) : 0.0f; });
    rates.keep_v[j] = Warp::per_lane(
        [&](int lane) { return present(lane) ? k.keep_v - k.dt_dv * cells(lane) : 0.0f; });
    rates.diffuse_u[j] = Warp::per_lane([&](int lane) { return present(lane) ? k.dt_du : 0.0f; });
    rates.diffuse_v[j] = Warp::per_lane([&](int lane) { return present(lane) ? k.dt_dv : 0.0f; });
    rates.feed[j] = Warp::per_lane([&](int lane) { return present(lane) ? k.dt_feed : 0.0f; });
  }
}

// One row of the lane's columns, both fields.
template <int kColumns, class Warp>
struct Row {
  typename Warp::Value u[kColumns], v[kColumns];
};

// The rows [first, end) of the kept tile that warp `warp` of `warps` walks down: the rows shared
// as evenly as possible.
GS_HOST_DEVICE inline void band_of(const TilePlan& p, int warp, int warps, int& first, int& end) {
  const int base = p.padded_rows / warps, extra = p.padded_rows % warps;
  first = warp * base + (warp < extra ? warp : extra);
  end = first + base + (warp < extra ? 1 : 0);
}

// What a warp reads before a step, while no warp writes: the rows just above and below its band
// (0 past the kept tile). Its own rows it reads as it walks.
template <int kColumns, class Warp>
struct BandEdges {
  Row<kColumns, Warp> above, below;
};

GS_WARP_TEMPLATE
template <int kColumns, class Warp>
GS_HOST_DEVICE inline void load_both(const TilePlan& p, const float* kept_u, const float* kept_v,
                                     int r, Row<kColumns, Warp>& row) {
  Warp::template load_row<kColumns>(kept_u + p.kept(r, 0), row.u);
  Warp::template load_row<kColumns>(kept_v + p.kept(r, 0), row.v);
}

GS_WARP_TEMPLATE
template <int kColumns, class Warp>
GS_HOST_DEVICE inline void read_band_edges(const TilePlan& p, const float* kept_u,
                                           const float* kept_v, int first, int end,
                                           BandEdges<kColumns, Warp>& edges) {
  if (first > 0) {
    load_both<kColumns, Warp>(p, kept_u, kept_v, first - 1, edges.above);
  } else {
    GS_UNROLL
    for (int j = 0; j < kColumns; ++j) edges.above.u[j] = edges.above.v[j] = Warp::splat(0.0f);
  }
  if (end < p.padded_rows) {
    load_both<kColumns, Warp>(p, kept_u, kept_v, end, edges.below);
  } else {
    GS_UNROLL
    for (int j = 0; j < kColumns; ++j) edges.below.u[j] = edges.below.v[j] = Warp::splat(0.0f);
  }
}

// The box sums of row r from `pair` (rows r-1 + r) and the row below; `pair` moves down a row.
// Every row of the walk makes them, also a row outside the grid, so that the shuffles are
// reached by the whole warp outside any branch (no convergence checks around them).
GS_WARP_TEMPLATE
template <int kColumns, class Warp>
GS_HOST_DEVICE inline void box_sums(const Row<kColumns, Warp>& centre,
                                    const Row<kColumns, Warp>& below, Row<kColumns, Warp>& pair,
                                    Row<kColumns, Warp>& box) {
  using Value = typename Warp::Value;
  Value column_u[kColumns], column_v[kColumns];  // rows r-1 + r + r+1 of each column
  GS_UNROLL
  for (int j = 0; j < kColumns; ++j) {
    column_u[j] = pair.u[j] + below.u[j];
    column_v[j] = pair.v[j] + below.v[j];
    pair.u[j] = centre.u[j] + below.u[j];
    pair.v[j] = centre.v[j] + below.v[j];
  }
  const Value left_u = Warp::from_left(column_u[kColumns - 1]);
  const Value left_v = Warp::from_left(column_v[kColumns - 1]);
  const Value right_u = Warp::from_right(column_u[0]);
  const Value right_v = Warp::from_right(column_v[0]);
  GS_UNROLL
  for (int j = 0; j < kColumns; j += 2) {
    // Columns j and j+1 share the sum of their two column sums.
    const Value shared_u = column_u[j] + column_u[j + 1];
    const Value shared_v = column_v[j] + column_v[j + 1];
    box.u[j] = (j == 0 ? left_u : column_u[j > 0 ? j - 1 : 0]) + shared_u;
    box.v[j] = (j == 0 ? left_v : column_v[j > 0 ? j - 1 : 0]) + shared_v;
    box.u[j + 1] = shared_u + (j + 2 == kColumns ? right_u : column_u[(j + 2) % kColumns]);
    box.v[j + 1] = shared_v + (j + 2 == kColumns ? right_v : column_v[(j + 2) % kColumns]);
  }
}

// The update of row r from its old values `centre` and its box sums, written in place.
// kGridEdgeRow: the row is the grid's first or last, whose boxes have fewer rows (one such row
// per edge tile).
GS_WARP_TEMPLATE
template <int kColumns, class Warp, bool kGridEdgeRow>
GS_HOST_DEVICE inline void update_row(const TilePlan& p, const Coefficients& k, int tile, int r,
                                      const ColumnRates<kColumns, Warp>& rates,
                                      const Row<kColumns, Warp>& centre,
                                      const Row<kColumns, Warp>& box, float* kept_u,
                                      float* kept_v) {
  using Value = typename Warp::Value;
  Row<kColumns, Warp> next;
  GS_UNROLL
  for (int j = 0; j < kColumns; ++j) {
    Value keep_u = rates.keep_u[j], keep_v = rates.keep_v[j];
    if constexpr (kGridEdgeRow) {
      // 2 rows in its boxes (1 in a grid of one row), not 3: the keep rates gain
      // diffuse x (3 - rows) x the column's box cells (0 for an absent column).
      const int missing_rows = p.rows > 1 ? 1 : 2, col0 = p.first_col(tile);
      const Value missing = Warp::per_lane([&](int lane) {
        return static_cast<float>(missing_rows * box_cells(col0 + lane * kColumns + j, p.cols));
      });
      keep_u = Warp::fma(rates.diffuse_u[j], missing, keep_u);
      keep_v = Warp::fma(rates.diffuse_v[j], missing, keep_v);
    }
    const Value u = centre.u[j], v = centre.v[j];
    const Value uvv = u * v * v;
    next.u[j] = Warp::fma(
        keep_u, u,
        Warp::fma(rates.diffuse_u[j], box.u[j], Warp::fma(Warp::splat(-k.dt), uvv, rates.feed[j])));
    next.v[j] = Warp::fma(keep_v, v, Warp::fma(rates.diffuse_v[j], box.v[j], k.dt * uvv));
  }
  Warp::template store_row<kColumns>(kept_u + p.kept(r, 0), next.u);
  Warp::template store_row<kColumns>(kept_v + p.kept(r, 0), next.v);
}

// Row r of the walk: an inner row, the grid's first or last row, or a row outside the grid (it
// stays 0: no update). The choice is the whole warp's; an inner row costs one comparison.
GS_WARP_TEMPLATE
template <int kColumns, class Warp>
GS_HOST_DEVICE inline void walk_row(const TilePlan& p, const Coefficients& k, int tile, int r,
                                    const ColumnRates<kColumns, Warp>& rates,
                                    const Row<kColumns, Warp>& centre,
                                    const Row<kColumns, Warp>& below, Row<kColumns, Warp>& pair,
                                    float* kept_u, float* kept_v) {
  Row<kColumns, Warp> box;
  box_sums<kColumns, Warp>(centre, below, pair, box);
  const int row = p.first_row(tile) + r;
  // 0 < row < rows - 1, in one unsigned comparison (row - 1 wraps around for rows <= 0).
  const unsigned inner_rows = p.rows > 2 ? static_cast<unsigned>(p.rows - 2) : 0u;
  if (static_cast<unsigned>(row - 1) < inner_rows) {
    update_row<kColumns, Warp, false>(p, k, tile, r, rates, centre, box, kept_u, kept_v);
  } else if (row >= 0 && row < p.rows) {
    update_row<kColumns, Warp, true>(p, k, tile, r, rates, centre, box, kept_u, kept_v);
  }
}

// Rows r and r + 1, from their old values (`centre`, `below`) and the row under them: when both
// are inner rows (nearly always), one branch-free stretch of code, so that the two rows'
// shuffles and arithmetic interleave; else one row after the other.
GS_WARP_TEMPLATE
template <int kColumns, class Warp>
GS_HOST_DEVICE inline void walk_two_rows(const TilePlan& p, const Coefficients& k, int tile, int r,
                                         const ColumnRates<kColumns, Warp>& rates,
                                         const Row<kColumns, Warp>& centre,
                                         const Row<kColumns, Warp>& below,
                                         const Row<kColumns, Warp>& under,
                                         Row<kColumns, Warp>& pair, float* kept_u, float* kept_v) {
  const int row = p.first_row(tile) + r;
  if (row >= 1 && row + 2 < p.rows) {
    Row<kColumns, Warp> box, box_below;
    box_sums<kColumns, Warp>(centre, below, pair, box);
    box_sums<kColumns, Warp>(below, under, pair, box_below);
    update_row<kColumns, Warp, false>(p, k, tile, r, rates, centre, box, kept_u, kept_v);
    update_row<kColumns, Warp, false>(p, k, tile, r + 1, rates, below, box_below, kept_u, kept_v);
  } else {
    walk_row<kColumns, Warp>(p, k, tile, r, rates, centre, below, pair, kept_u, kept_v);
    walk_row<kColumns, Warp>(p, k, tile, r + 1, rates, below, under, pair, kept_u, kept_v);
  }
}

// One step of the band [first, end), in place: row r is written once rows r + 1 and r + 2 are
// read. Four rows an iteration, in two halves that each read their two rows below before they
// write anything (the reads' latencies overlap); the three rows in registers trade roles so
// that nothing is copied. The last row's "below" is the next band's first row, read before the
// barrier (edges.below).
GS_WARP_TEMPLATE
template <int kColumns, class Warp, bool kPairedRows>
GS_HOST_DEVICE inline void walk_band(const TilePlan& p, const Coefficients& k, int tile,
                                     float* kept_u, float* kept_v, int first, int end,
                                     BandEdges<kColumns, Warp>& edges,
                                     const ColumnRates<kColumns, Warp>& rates) {
  Row<kColumns, Warp>& pair = edges.above;  // rows r-1 + r, from the band's first row on
  Row<kColumns, Warp> a, b, c;              // the centre row, the rows below, in turn
  load_both<kColumns, Warp>(p, kept_u, kept_v, first, a);
  GS_UNROLL
  for (int j = 0; j < kColumns; ++j) {
    pair.u[j] = pair.u[j] + a.u[j];
    pair.v[j] = pair.v[j] + a.v[j];
  }
  int r = first;
  for (; kPairedRows && r + 4 < end; r += 4) {
    load_both<kColumns, Warp>(p, kept_u, kept_v, r + 1, b);
    load_both<kColumns, Warp>(p, kept_u, kept_v, r + 2, c);
    walk_two_rows<kColumns, Warp>(p, k, tile, r, rates, a, b, c, pair, kept_u, kept_v);
    load_both<kColumns, Warp>(p, kept_u, kept_v, r + 3, b);
    load_both<kColumns, Warp>(p, kept_u, kept_v, r + 4, a);
    walk_two_rows<kColumns, Warp>(p, k, tile, r + 2, rates, c, b, a, pair, kept_u, kept_v);
  }
  for (; r + 2 < end; r += 2) {
    load_both<kColumns, Warp>(p, kept_u, kept_v, r + 1, b);
    walk_row<kColumns, Warp>(p, k, tile, r, rates, a, b, pair, kept_u, kept_v);
    load_both<kColumns, Warp>(p, kept_u, kept_v, r + 2, a);
    walk_row<kColumns, Warp>(p, k, tile, r + 1, rates, b, a, pair, kept_u, kept_v);
  }
  if (r + 1 < end) {  // two rows left: the second one's below is the next band's
    load_both<kColumns, Warp>(p, kept_u, kept_v, r + 1, b);
    walk_row<kColumns, Warp>(p, k, tile, r, rates, a, b, pair, kept_u, kept_v);
    walk_row<kColumns, Warp>(p, k, tile, r + 1, rates, b, edges.below, pair, kept_u, kept_v);
  } else {
    walk_row<kColumns, Warp>(p, k, tile, r, rates, a, edges.below, pair, kept_u, kept_v);
  }
}

}  // namespace

std::int64_t kept_bytes(const TilePlan& plan) {
  return 2 * static_cast<std::int64_t>(sizeof(float)) * plan.padded_rows * plan.shared_pitch;
}

std::optional<TilePlan> plan_tiles(int rows, int cols, int halo, int blocks,
                                   std::int64_t shared_bytes, std::string* why) {
  std::optional<TilePlan> best;
  std::int64_t best_cells = 0;
  for (int down = 1; down <= std::min(blocks, rows); ++down) {
    const int across = std::min(blocks / down, cols);
    TilePlan p;
    p.rows = rows;
    p.cols = cols;
    p.pitch = (cols + 31) / 32 * 32;
    p.tile_rows = (rows + down - 1) / down;
    p.tile_cols = (cols + across - 1) / across;
    p.tiles_y = (rows + p.tile_rows - 1) / p.tile_rows;  // no tile left empty
    p.tiles_x = (cols + p.tile_cols - 1) / p.tile_cols;
    p.halo = halo;
    p.padded_rows = p.tile_rows + 2 * halo;
    p.padded_cols = p.tile_cols + 2 * halo;
    p.shared_pitch = kept_pitch_for(p.padded_cols);
    if (p.shared_pitch == 0 || kept_bytes(p) > shared_bytes) continue;
    const std::int64_t cells = static_cast<std::int64_t>(p.padded_rows) * p.shared_pitch;
    if (!best || cells < best_cells) {
      best = p;
      best_cells = cells;
    }
  }
  if (!best && why != nullptr) {
    std::ostringstream text;
    const double state_mb = 8.0 * rows * cols / 1e6;
    text << "the state of " << rows << " x " << cols << " cells (" << state_mb
         << " MB) with halos of " << halo << " does not fit in the shared memory of " << blocks
         << " blocks of " << shared_bytes / 1024 << " KiB, one per SM, in tiles at most "
         << kMaxKeptCols << " columns wide";
    *why = text.str();
  }
  return best;
}

}  // namespace on_chip

// The same run on the host, for the tests: advance_on_host().
#include "host_run.hpp"

#if GS_HAVE_CUDA
namespace on_chip {
namespace {

namespace cg = cooperative_groups;

// One launch advances the state by `steps` (a frame). The state is in the buffers (u0, v0); the
// exchanges post into (u1, v1), then (u0, v0), alternately, and the tiles are written back into
// the buffer the next exchange would have used (see OnChipStepper::advance).
template <int kColumns, bool kPairedRows>
__global__ void __launch_bounds__(max_threads(kColumns, kPairedRows), 1)
    on_chip_kernel(TilePlan p, Coefficients k, float* u0, float* v0, float* u1, float* v1,
                   int steps) {
  cg::grid_group grid = cg::this_grid();
  extern __shared__ float4 shared_memory[];
  float* kept_u = reinterpret_cast<float*>(shared_memory);
  float* kept_v = kept_u + static_cast<std::size_t>(p.padded_rows) * p.shared_pitch;
  const int tile = blockIdx.x;
  const int row0 = p.first_row(tile), col0 = p.first_col(tile);

  // The kept tile, once (cells outside the grid and past the kept width: 0): a warp per row, lane
  // l loading columns l, l + 32, ... (consecutive addresses across the warp). A row's loads are
  // all issued before its first store, and two rows at a time: a load from L2 or DRAM takes
  // hundreds of cycles, which one load after another would pay each time.
  const int lane = threadIdx.x % kWarpSize, warps = blockDim.x / kWarpSize;
  bool lane_column_present[kColumns];
#pragma unroll
  for (int j = 0; j < kColumns; ++j) {
    const int c = lane + kWarpSize * j, col = col0 + c;
    lane_column_present[j] = c < p.padded_cols && col >= 0 && col < p.cols;
  }
#pragma unroll 2
  for (int r = threadIdx.x / kWarpSize; r < p.padded_rows; r += warps) {
    const int row = row0 + r;
    const bool row_present = row >= 0 && row < p.rows;
    float loaded_u[kColumns], loaded_v[kColumns];
#pragma unroll
    for (int j = 0; j < kColumns; ++j) {
      const bool present = row_present && lane_column_present[j];
      const std::size_t at = present ? p.global(row, col0 + lane + kWarpSize * j) : 0;
      loaded_u[j] = present ? u0[at] : 0.0f;
      loaded_v[j] = present ? v0[at] : 0.0f;
    }
#pragma unroll
    for (int j = 0; j < kColumns; ++j) {
      kept_u[p.kept(r, lane + kWarpSize * j)] = loaded_u[j];
      kept_v[p.kept(r, lane + kWarpSize * j)] = loaded_v[j];
    }
  }
  __syncthreads();

  int first = 0, end = 0;
  band_of(p, threadIdx.x / kWarpSize, warps, first, end);
  ColumnRates<kColumns, DeviceWarp> rates;  // of the inner rows, in registers for the launch
  column_rates<kColumns, DeviceWarp>(p, k, tile, 3, rates);

  int mailbox = 1;
  for (int done = 0; done < steps;) {
    const int burst = min(p.halo, steps - done);
    for (int s = 0; s < burst; ++s) {
      BandEdges<kColumns, DeviceWarp> edges;
      read_band_edges<kColumns, DeviceWarp>(p, kept_u, kept_v, first, end, edges);
      __syncthreads();  // every warp has read the rows around its band: now anyone may write
      walk_band<kColumns, DeviceWarp, kPairedRows>(p, k, tile, kept_u, kept_v, first, end, edges,
                                                   rates);
      __syncthreads();
    }
    done += burst;
    if (done == steps) break;
    // The exchange (exchange.hpp): post, wait for the whole grid, collect.
    float* mailbox_u = mailbox == 1 ? u1 : u0;
    float* mailbox_v = mailbox == 1 ? v1 : v0;
    post_edges(p, tile, threadIdx.x, blockDim.x, kept_u, mailbox_u);
    post_edges(p, tile, threadIdx.x, blockDim.x, kept_v, mailbox_v);
    grid.sync();
    collect_halo(p, tile, threadIdx.x, blockDim.x, mailbox_u, kept_u);
    collect_halo(p, tile, threadIdx.x, blockDim.x, mailbox_v, kept_v);
    __syncthreads();
    mailbox ^= 1;
  }
  // The owned tile, once, into the buffer the next exchange would have used: no block still
  // collects from it (the last collection read the other one).
  float* out_u = mailbox == 1 ? u1 : u0;
  float* out_v = mailbox == 1 ? v1 : v0;
  for (int r = p.halo + threadIdx.x / kWarpSize; r < p.halo + p.tile_rows; r += warps) {
    for (int c = p.halo + lane; c < p.halo + p.tile_cols; c += kWarpSize) {
      const int row = row0 + r, col = col0 + c;
      if (!p.in_grid(row, col)) continue;
      out_u[p.global(row, col)] = kept_u[p.kept(r, c)];
      out_v[p.global(row, col)] = kept_v[p.kept(r, c)];
    }
  }
}

}  // namespace
}  // namespace on_chip

// The stepper around the kernel: the plan for the device, the buffers, the launch of a frame.
#include "stepper.cuh"
#endif

namespace GS_LESSON_NAMESPACE {

#if GS_HAVE_CUDA
namespace {

// Where gray_scott's default takes lesson 11 before lesson 06 (gs::Implementation::leads_on):
// only where it was measured faster, a Hopper GPU (H100, H200) and grids of at least
// kLeadsFromCells cells that fit the chip (measured at 540 x 960, 768 x 1366 and 1080 x 1920),
// at its fastest halo on the official grid (README.md, Results).
constexpr int kFastestHalo = 8;
constexpr std::int64_t kLeadsFromCells = std::int64_t{540} * 960;

std::string leads_on(int rows, int cols) {
  const gs::DeviceLimits& limits = gs::device_limits();
  if (limits.overridden() || limits.compute_major != 9) return std::string();
  if (static_cast<std::int64_t>(rows) * cols < kLeadsFromCells) return std::string();
  return "the state fits the chip, and on a Hopper GPU's grids of 540 x 960 cells or more this "
         "kernel was measured faster than lesson 06's (lessons/11_on_chip/README.md, Results)";
}

}  // namespace
#endif

std::vector<gs::Implementation> implementations() {
#if GS_HAVE_CUDA
  // The lesson's stepper at the model's halo, then at the other depths the model weighs
  // (README.md, section 5): fewer exchanges against more cells computed twice.
  std::vector<gs::Implementation> all;
  for (const int halo : {on_chip::kDefaultHalo, 2, 6, 8}) {
    gs::Implementation on_chip;
    on_chip.name = halo == on_chip::kDefaultHalo ? std::string("l11-on-chip")
                                                 : "l11-on-chip-h" + std::to_string(halo);
    on_chip.lesson = "11_on_chip";
    on_chip.summary =
        "the whole state in shared memory for a frame, one tile per SM, halos traded through L2 "
        "every " +
        std::to_string(halo) + " steps behind a grid-wide barrier";
    on_chip.device = gs::Device::gpu;
    on_chip.create = [halo] { return std::make_unique<on_chip::OnChipStepper>(halo); };
    on_chip.refuses_grid = [halo](int rows, int cols) {
      std::string why;
      if (on_chip::plan_for_device(rows, cols, halo, &why)) return std::string();
      return why + "; lesson 06's kernels run it";
    };
    if (halo == kFastestHalo) on_chip.leads_on = leads_on;
    all.push_back(on_chip);
  }
  return all;
#else
  return {};
#endif
}

}  // namespace GS_LESSON_NAMESPACE
