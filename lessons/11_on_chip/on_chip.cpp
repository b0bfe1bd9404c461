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
// Per frame of 32 steps the state crosses memory twice (in and out), against 16 times in lesson
// 06; the price is the exchange, the barrier, and the halo's cells computed twice. README.md
// models the three and predicts the time.
//
// The warp's walk is written once, for two kinds of warp: on the GPU each lane runs it on its own
// columns (DeviceWarp: a value is one float); on the host (advance_on_host) one call runs the 32
// lanes of a warp in lockstep (HostWarp: a value is the 32 lanes' floats). So the tests check the
// kernel's own walk, bands, barriers and exchanges on any machine, and the kernel on a GPU.
// The two kinds of warp are in warps.hpp; the stepper around the kernel (the plan for the
// device, the buffers, the launch) in stepper.cuh.
#include "on_chip.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <sstream>
#include <vector>

#include "gs/lesson.hpp"
#include "gs/step_coefficients.hpp"

// Angle brackets: the build picks lessons/11_on_chip/exchange.hpp (your stubs) or the
// solution's copy.
#include <exchange.hpp>

#if GS_HAVE_CUDA
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "gs/cuda_check.hpp"
#include "gs/device_limits.hpp"
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

// Threads per block for `columns` columns per lane: as many warps as the registers allow (each
// lane holds a few rows of its columns for both fields), so that shared-memory latency hides;
// at least one row per warp.
GS_HOST_DEVICE constexpr int max_threads(int columns) {
  return columns >= 8 ? 512 : columns >= 6 ? 640 : columns >= 4 ? 768 : 1024;
}

int threads_for(const TilePlan& p) {
  return std::min(max_threads(p.shared_pitch / kWarpSize), kWarpSize * p.padded_rows);
}

// ---------------------------------------------------------------------------------------------
// A warp's band of rows, one step
// ---------------------------------------------------------------------------------------------

// Each column's sum over its row neighbourhood (left, itself, right). The warp spans the whole
// kept width, so the lane's outer neighbours come from the next lanes, and past the warp is 0.
GS_WARP_TEMPLATE
template <int kColumns, class Warp>
GS_HOST_DEVICE inline void row_sums(const typename Warp::Value (&a)[kColumns],
                                    typename Warp::Value (&sums)[kColumns]) {
  const typename Warp::Value left = Warp::from_left(a[kColumns - 1]);
  const typename Warp::Value right = Warp::from_right(a[0]);
  GS_UNROLL
  for (int j = 0; j < kColumns; ++j) {
    sums[j] = (j == 0 ? left : a[j - 1]) + a[j] + (j == kColumns - 1 ? right : a[j + 1]);
  }
}

// The rows [first, end) of the kept tile that warp `warp` of `warps` walks down: the rows shared
// as evenly as possible.
GS_HOST_DEVICE inline void band_of(const TilePlan& p, int warp, int warps, int& first, int& end) {
  const int base = p.padded_rows / warps, extra = p.padded_rows % warps;
  first = warp * base + (warp < extra ? warp : extra);
  end = first + base + (warp < extra ? 1 : 0);
}

// What a warp reads from the other warps' rows before a step: the row sums just above and below
// its band (0 past the kept tile).
template <int kColumns, class Warp>
struct BandEdges {
  typename Warp::Value above_u[kColumns], above_v[kColumns];
  typename Warp::Value below_u[kColumns], below_v[kColumns];
};

GS_WARP_TEMPLATE
template <int kColumns, class Warp>
GS_HOST_DEVICE inline void read_band_edges(const TilePlan& p, const float* kept_u,
                                           const float* kept_v, int first, int end,
                                           BandEdges<kColumns, Warp>& edges) {
  typename Warp::Value a[kColumns];
  GS_UNROLL
  for (int j = 0; j < kColumns; ++j) {
    edges.above_u[j] = edges.above_v[j] = edges.below_u[j] = edges.below_v[j] = Warp::splat(0.0f);
  }
  if (first > 0) {
    Warp::template load_row<kColumns>(kept_u + p.kept(first - 1, 0), a);
    row_sums<kColumns, Warp>(a, edges.above_u);
    Warp::template load_row<kColumns>(kept_v + p.kept(first - 1, 0), a);
    row_sums<kColumns, Warp>(a, edges.above_v);
  }
  if (end < p.padded_rows) {
    Warp::template load_row<kColumns>(kept_u + p.kept(end, 0), a);
    row_sums<kColumns, Warp>(a, edges.below_u);
    Warp::template load_row<kColumns>(kept_v + p.kept(end, 0), a);
    row_sums<kColumns, Warp>(a, edges.below_v);
  }
}

// One step of the band [first, end), in place: row r is written once row r + 1 is read, and the
// old row r lives on in registers as the next row's "above". `column_cells` and `column_present`
// are the lane's columns' box counts and whether they lie in the grid (and in the kept width).
GS_WARP_TEMPLATE
template <int kColumns, class Warp>
GS_HOST_DEVICE inline void walk_band(const TilePlan& p, const Coefficients& k, int tile,
                                     float* kept_u, float* kept_v, int first, int end,
                                     const BandEdges<kColumns, Warp>& edges,
                                     const typename Warp::Value (&column_cells)[kColumns],
                                     const typename Warp::Value (&column_present)[kColumns]) {
  using Value = typename Warp::Value;
  Value above_u[kColumns], above_v[kColumns], u[kColumns], v[kColumns];
  Value sum_u[kColumns], sum_v[kColumns];
  GS_UNROLL
  for (int j = 0; j < kColumns; ++j) above_u[j] = edges.above_u[j], above_v[j] = edges.above_v[j];
  Warp::template load_row<kColumns>(kept_u + p.kept(first, 0), u);
  Warp::template load_row<kColumns>(kept_v + p.kept(first, 0), v);
  row_sums<kColumns, Warp>(u, sum_u);
  row_sums<kColumns, Warp>(v, sum_v);
  for (int r = first; r < end; ++r) {
    Value next_u[kColumns], next_v[kColumns], below_u[kColumns], below_v[kColumns];
    if (r + 1 < end) {
      Warp::template load_row<kColumns>(kept_u + p.kept(r + 1, 0), next_u);
      Warp::template load_row<kColumns>(kept_v + p.kept(r + 1, 0), next_v);
      row_sums<kColumns, Warp>(next_u, below_u);
      row_sums<kColumns, Warp>(next_v, below_v);
    } else {
      GS_UNROLL
      for (int j = 0; j < kColumns; ++j) {
        next_u[j] = next_v[j] = Warp::splat(0.0f);
        below_u[j] = edges.below_u[j], below_v[j] = edges.below_v[j];
      }
    }
    const int row = p.first_row(tile) + r;
    const bool row_present = row >= 0 && row < p.rows;
    const float row_cells = static_cast<float>(box_cells(row, p.rows));
    Value new_u[kColumns], new_v[kColumns];
    GS_UNROLL
    for (int j = 0; j < kColumns; ++j) {
      // The unit stencil: L(a) = box sum - cells * a; then the reaction and the feed.
      const Value cells = row_cells * column_cells[j];
      const Value uvv = u[j] * v[j] * v[j];
      const Value next_u_value = k.keep_u * u[j] +
                                 k.dt_du * (above_u[j] + sum_u[j] + below_u[j] - cells * u[j]) -
                                 k.dt * uvv + k.dt_feed;
      const Value next_v_value = k.keep_v * v[j] +
                                 k.dt_dv * (above_v[j] + sum_v[j] + below_v[j] - cells * v[j]) +
                                 k.dt * uvv;
      // An absent cell (outside the grid or past the kept width) stays 0.
      const Value present = row_present ? column_present[j] : Warp::splat(0.0f);
      new_u[j] = Warp::keep_present(present, next_u_value);
      new_v[j] = Warp::keep_present(present, next_v_value);
    }
    Warp::template store_row<kColumns>(kept_u + p.kept(r, 0), new_u);
    Warp::template store_row<kColumns>(kept_v + p.kept(r, 0), new_v);
    GS_UNROLL
    for (int j = 0; j < kColumns; ++j) {
      above_u[j] = sum_u[j], above_v[j] = sum_v[j];
      sum_u[j] = below_u[j], sum_v[j] = below_v[j];
      u[j] = next_u[j], v[j] = next_v[j];
    }
  }
}

// The box count and the presence of each of the lane's columns, for a tile.
GS_WARP_TEMPLATE
template <int kColumns, class Warp>
GS_HOST_DEVICE inline void lane_columns(const TilePlan& p, int tile,
                                        typename Warp::Value (&column_cells)[kColumns],
                                        typename Warp::Value (&column_present)[kColumns]) {
  const int col0 = p.first_col(tile);
  GS_UNROLL
  for (int j = 0; j < kColumns; ++j) {
    column_cells[j] = Warp::per_lane([&](int lane) {
      return static_cast<float>(box_cells(col0 + lane * kColumns + j, p.cols));
    });
    column_present[j] = Warp::per_lane([&](int lane) {
      const int c = lane * kColumns + j, col = col0 + c;
      return (c < p.padded_cols && col >= 0 && col < p.cols) ? 1.0f : 0.0f;
    });
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

namespace {

// The host's run of the kernel for kColumns columns per lane (advance_on_host).
template <int kColumns>
void advance_tiles_on_host(const TilePlan& p, gs::State& state, const gs::Rates& rates, int steps,
                           int threads) {
  const Coefficients k = gs::step_coefficients(rates);
  const std::size_t kept_size = static_cast<std::size_t>(p.padded_rows) * p.shared_pitch;
  const std::size_t global_size = static_cast<std::size_t>(p.rows) * p.pitch;
  const float poison = std::numeric_limits<float>::quiet_NaN();
  // The two mailboxes of each field, global layout; the state starts in mailbox 0.
  std::vector<float> mailbox_u[2] = {std::vector<float>(global_size, poison),
                                     std::vector<float>(global_size, poison)};
  std::vector<float> mailbox_v[2] = {mailbox_u[0], mailbox_u[0]};
  for (int row = 0; row < p.rows; ++row) {
    for (int col = 0; col < p.cols; ++col) {
      mailbox_u[0][p.global(row, col)] = state.u[state.index(row, col)];
      mailbox_v[0][p.global(row, col)] = state.v[state.index(row, col)];
    }
  }
  // Every tile loads its kept part (cells outside the grid, and past the kept width: 0).
  std::vector<std::vector<float>> kept_u(p.tiles(), std::vector<float>(kept_size, 0.0f));
  std::vector<std::vector<float>> kept_v = kept_u;
  for (int tile = 0; tile < p.tiles(); ++tile) {
    for (int r = 0; r < p.padded_rows; ++r) {
      for (int c = 0; c < p.padded_cols; ++c) {
        const int row = p.first_row(tile) + r, col = p.first_col(tile) + c;
        if (!p.in_grid(row, col)) continue;
        kept_u[tile][p.kept(r, c)] = mailbox_u[0][p.global(row, col)];
        kept_v[tile][p.kept(r, c)] = mailbox_v[0][p.global(row, col)];
      }
    }
  }
  // From here on the mailboxes hold only what is posted: a halo collected from a cell nobody
  // posted reads NaN.
  std::fill(mailbox_u[0].begin(), mailbox_u[0].end(), poison);
  std::fill(mailbox_v[0].begin(), mailbox_v[0].end(), poison);

  // The kernel's warps: each step, every warp reads the rows around its band (the barrier), then
  // every warp walks its band.
  const int warps = threads_for(p) / kWarpSize;
  std::vector<BandEdges<kColumns, HostWarp>> edges(warps);
  int mailbox = 1;
  for (int done = 0; done < steps;) {
    const int burst = std::min(p.halo, steps - done);
    for (int tile = 0; tile < p.tiles(); ++tile) {
      Lanes column_cells[kColumns], column_present[kColumns];
      lane_columns<kColumns, HostWarp>(p, tile, column_cells, column_present);
      for (int s = 0; s < burst; ++s) {
        for (int warp = 0; warp < warps; ++warp) {
          int first = 0, end = 0;
          band_of(p, warp, warps, first, end);
          read_band_edges<kColumns, HostWarp>(p, kept_u[tile].data(), kept_v[tile].data(), first,
                                              end, edges[warp]);
        }
        // (__syncthreads())
        for (int warp = 0; warp < warps; ++warp) {
          int first = 0, end = 0;
          band_of(p, warp, warps, first, end);
          walk_band<kColumns, HostWarp>(p, k, tile, kept_u[tile].data(), kept_v[tile].data(), first,
                                        end, edges[warp], column_cells, column_present);
        }
      }
    }
    done += burst;
    if (done == steps) break;
    for (int tile = 0; tile < p.tiles(); ++tile) {
      for (int thread = 0; thread < threads; ++thread) {
        post_edges(p, tile, thread, threads, kept_u[tile].data(), mailbox_u[mailbox].data());
        post_edges(p, tile, thread, threads, kept_v[tile].data(), mailbox_v[mailbox].data());
      }
    }
    // (grid.sync())
    for (int tile = 0; tile < p.tiles(); ++tile) {
      for (int thread = 0; thread < threads; ++thread) {
        collect_halo(p, tile, thread, threads, mailbox_u[mailbox].data(), kept_u[tile].data());
        collect_halo(p, tile, thread, threads, mailbox_v[mailbox].data(), kept_v[tile].data());
      }
    }
    mailbox ^= 1;
  }
  // Each tile's owned cells back into the state.
  for (int tile = 0; tile < p.tiles(); ++tile) {
    for (int r = p.halo; r < p.halo + p.tile_rows; ++r) {
      for (int c = p.halo; c < p.halo + p.tile_cols; ++c) {
        const int row = p.first_row(tile) + r, col = p.first_col(tile) + c;
        if (!p.in_grid(row, col)) continue;
        state.u[state.index(row, col)] = kept_u[tile][p.kept(r, c)];
        state.v[state.index(row, col)] = kept_v[tile][p.kept(r, c)];
      }
    }
  }
}

}  // namespace

void advance_on_host(const TilePlan& p, gs::State& state, const gs::Rates& rates, int steps,
                     int threads) {
  if (steps <= 0) return;
  switch (p.shared_pitch / kWarpSize) {
    case 2:
      return advance_tiles_on_host<2>(p, state, rates, steps, threads);
    case 4:
      return advance_tiles_on_host<4>(p, state, rates, steps, threads);
    case 6:
      return advance_tiles_on_host<6>(p, state, rates, steps, threads);
    default:
      return advance_tiles_on_host<8>(p, state, rates, steps, threads);
  }
}

}  // namespace on_chip

#if GS_HAVE_CUDA
namespace on_chip {
namespace {

namespace cg = cooperative_groups;

// One launch advances the state by `steps` (a frame). The state is in the buffers (u0, v0); the
// exchanges post into (u1, v1), then (u0, v0), alternately, and the tiles are written back into
// the buffer the next exchange would have used (see OnChipStepper::advance).
template <int kColumns>
__global__ void __launch_bounds__(max_threads(kColumns), 1)
    on_chip_kernel(TilePlan p, Coefficients k, float* u0, float* v0, float* u1, float* v1,
                   int steps) {
  cg::grid_group grid = cg::this_grid();
  extern __shared__ float4 shared_memory[];
  float* kept_u = reinterpret_cast<float*>(shared_memory);
  float* kept_v = kept_u + static_cast<std::size_t>(p.padded_rows) * p.shared_pitch;
  const int tile = blockIdx.x;
  const int row0 = p.first_row(tile), col0 = p.first_col(tile);

  // The kept tile, once (cells outside the grid and past the kept width: 0): a warp per row, so
  // that the loads of a warp are consecutive columns.
  const int lane = threadIdx.x % kWarpSize, warps = blockDim.x / kWarpSize;
  for (int r = threadIdx.x / kWarpSize; r < p.padded_rows; r += warps) {
    for (int c = lane; c < p.shared_pitch; c += kWarpSize) {
      const int row = row0 + r, col = col0 + c;
      const bool present = c < p.padded_cols && p.in_grid(row, col);
      kept_u[p.kept(r, c)] = present ? u0[p.global(row, col)] : 0.0f;
      kept_v[p.kept(r, c)] = present ? v0[p.global(row, col)] : 0.0f;
    }
  }
  __syncthreads();

  int first = 0, end = 0;
  band_of(p, threadIdx.x / kWarpSize, warps, first, end);
  float column_cells[kColumns], column_present[kColumns];
  lane_columns<kColumns, DeviceWarp>(p, tile, column_cells, column_present);

  int mailbox = 1;
  for (int done = 0; done < steps;) {
    const int burst = min(p.halo, steps - done);
    for (int s = 0; s < burst; ++s) {
      BandEdges<kColumns, DeviceWarp> edges;
      read_band_edges<kColumns, DeviceWarp>(p, kept_u, kept_v, first, end, edges);
      __syncthreads();  // every warp has read the rows around its band: now anyone may write
      walk_band<kColumns, DeviceWarp>(p, k, tile, kept_u, kept_v, first, end, edges, column_cells,
                                      column_present);
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
    all.push_back(on_chip);
  }
  return all;
#else
  return {};
#endif
}

}  // namespace GS_LESSON_NAMESPACE
