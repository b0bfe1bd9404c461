// Lesson 06's engine: what the register pyramid and the steppers stand on, read but not edited.
// The strips, chunks and the launch plan (plan_tiling); the per-warp walk down a strip with its
// pyramid of levels in registers (StripWalker); the graph replay every stepper shares (GpuStepper,
// on common/'s gs::DeviceStepper: the buffers, the stream, the copies in and out). It includes
// what it uses: the device layout (layout.cuh) and the learner's file (shared_blocking.cuh:
// blocking::nine_term_update(), blocking::advance_through_graph()). stencil.cu includes it at file
// scope.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "gs/cuda_check.hpp"
#include "gs/device_limits.hpp"
#include "gs/device_stepper.hpp"
#include "gs/params.hpp"
#include "gs/state.hpp"
#include "gs/step_coefficients.hpp"
#include "gs/stepper.hpp"
#include "layout.cuh"

// Angle brackets, as stencil.cu's: the build picks the learner's stubs or the solution's copy.
#include <shared_blocking.cuh>

// Internal linkage, as layout.cuh's: other lessons of the same program have kernels and steppers
// of their own.
namespace {

// What a level of the register pyramid does with a row near the top or bottom of the grid (the
// walk asks only for rows <= 0 or >= rows - 1, and beyond): an edge row is a row of cells that
// lacks the row above or below; an absent row lies outside the grid and must stay 0 at every
// level, or the next level would add it to its sums.
enum class RowKind { edge, absent };

__device__ __forceinline__ RowKind edge_row_kind(int row, int rows) {
  return (row < 0 || row >= rows) ? RowKind::absent : RowKind::edge;
}

// ---------------------------------------------------------------------------------------------
// Strips, chunks and the pyramid (section 4 of stencil.cu tells the idea)
// ---------------------------------------------------------------------------------------------

constexpr int kWarpSize = 32;
constexpr unsigned kFullWarp = 0xffffffffu;
constexpr int kTemporalMaxThreads = 128;

template <int kSteps, int kCols>
struct Strip {
  static constexpr int kHaloLanes = (kSteps + kCols - 1) / kCols;  // lanes that only feed others
  static constexpr int kHaloCols = kHaloLanes * kCols;             // >= kSteps
  static constexpr int kWidth = kWarpSize * kCols;                 // columns loaded
  static constexpr int kOutCols = kWidth - 2 * kHaloCols;          // columns written
  static_assert(kOutCols > 0, "the halo of kSteps steps leaves nothing to write");
};

// Chunks of a multiple of 4 rows: the walk goes 4 rows at a time (StripWalker::kRing), and
// starts at row_begin - steps + 2 rounded down to a multiple of 4. Chunk k covers rows
// [k chunk_rows - offset, (k + 1) chunk_rows - offset) within the grid, where the offset makes
// row_begin - steps + 2 a multiple of 4: no iteration of the walk is wasted.
constexpr int kChunkAlignment = 4;

__host__ __device__ constexpr int chunk_offset(int steps) {
  return (steps + 2) % kChunkAlignment;
}

// How the launch cuts the grid: strips of columns, chunks of rows, one warp per pair. The side
// strips (the first and the last: they take the slower path with per-column checks) are cut
// into shorter chunks than the inner strips, so that all warps finish at about the same time.
struct Tiling {
  int strips;
  int side_chunks;  // chunks of each side strip
  int side_chunk_rows;
  int chunks;  // chunks of each inner strip
  int chunk_rows;
};

__host__ __device__ inline int side_strips(const Tiling& t) {
  return t.strips < 2 ? t.strips : 2;
}

__host__ __device__ inline int warps_of(const Tiling& t) {
  return side_strips(t) * t.side_chunks + (t.strips - side_strips(t)) * t.chunks;
}

template <int kCols>
__device__ __forceinline__ void load_columns(const float* address, float (&values)[kCols]) {
  static_assert(kCols == 1 || kCols == 2 || kCols == 4, "kCols must be 1, 2 or 4");
  if constexpr (kCols == 4) {
    const float4 pack = __ldg(reinterpret_cast<const float4*>(address));
    values[0] = pack.x;
    values[1] = pack.y;
    values[2] = pack.z;
    values[3] = pack.w;
  } else if constexpr (kCols == 2) {
    const float2 pack = __ldg(reinterpret_cast<const float2*>(address));
    values[0] = pack.x;
    values[1] = pack.y;
  } else {
    values[0] = __ldg(address);
  }
}

template <int kCols>
__device__ __forceinline__ void store_columns(float* address, const float (&values)[kCols]) {
  if constexpr (kCols == 4) {
    *reinterpret_cast<float4*>(address) = make_float4(values[0], values[1], values[2], values[3]);
  } else if constexpr (kCols == 2) {
    *reinterpret_cast<float2*>(address) = make_float2(values[0], values[1]);
  } else {
    *address = values[0];
  }
}

// The 3x3 box sums of this lane's columns from their vertical 3-sums `column` and those of the
// columns just left and right of the lane. Adjacent pairs are added once and shared.
template <int kCols>
__device__ __forceinline__ void horizontal_sums(float left, const float (&column)[kCols],
                                                float right, float (&box)[kCols]) {
  if constexpr (kCols == 1) {
    box[0] = left + column[0] + right;
  } else {
#pragma unroll
    for (int j = 0; j < kCols; j += 2) {
      const float pair = column[j] + column[j + 1];
      const float before = j == 0 ? left : column[j > 0 ? j - 1 : 0];
      const float after = j + 2 == kCols ? right : column[j + 2 < kCols ? j + 2 : 0];
      box[j] = before + pair;
      box[j + 1] = pair + after;
    }
  }
}

// What a lane knows about its columns: which lie inside the grid and, for those, how many of
// the three columns c-1, c, c+1 do.
template <int kCols>
struct ColumnInfo {
  bool inside[kCols];
  float present[kCols];
};

// One row of a lane's columns, both fields.
template <int kCols>
struct Row {
  float u[kCols];
  float v[kCols];
};

// One level of the pyramid makes its row r from rows r-1, r, r+1 of the level below: `below` is
// row r+1, `centre` row r, and `pair` the sum of rows r-1 and r, which the level keeps from one
// iteration to the next. Writes row r into `out` and moves `pair` down one row.
// kRowEdges: the row may be an edge row or lie outside the grid (else it is an inner row);
// kColEdges: some of the warp's columns are edge columns or lie outside the grid.
template <int kCols, bool kRowEdges, bool kColEdges>
__device__ __forceinline__ void pyramid_step(Row<kCols>& pair, const Row<kCols>& centre,
                                             const Row<kCols>& below, Row<kCols>& out, int row,
                                             int rows, const ColumnInfo<kCols>& columns,
                                             const Coefficients& c) {
  float column_u[kCols];  // rows r-1 + r + r+1, per column
  float column_v[kCols];
#pragma unroll
  for (int j = 0; j < kCols; ++j) {
    column_u[j] = pair.u[j] + below.u[j];
    column_v[j] = pair.v[j] + below.v[j];
    pair.u[j] = centre.u[j] + below.u[j];
    pair.v[j] = centre.v[j] + below.v[j];
  }
  // The column sums just left and right of this lane live in the neighbouring lanes. Lanes 0
  // and 31 get their own value back: wrong, but they are in the halo, which every step spoils.
  const float left_u = __shfl_up_sync(kFullWarp, column_u[kCols - 1], 1);
  const float left_v = __shfl_up_sync(kFullWarp, column_v[kCols - 1], 1);
  const float right_u = __shfl_down_sync(kFullWarp, column_u[0], 1);
  const float right_v = __shfl_down_sync(kFullWarp, column_v[0], 1);
  float box_u[kCols];
  float box_v[kCols];
  horizontal_sums<kCols>(left_u, column_u, right_u, box_u);
  horizontal_sums<kCols>(left_v, column_v, right_v, box_v);

  // An inner row has the rows above and below; an edge row (kRowEdges) lacks one of them.
  float rows_present = 3.0f;
  if constexpr (kRowEdges) {
    rows_present = 1.0f + static_cast<float>(row > 0) + static_cast<float>(row + 1 < rows);
  }
#pragma unroll
  for (int j = 0; j < kCols; ++j) {
    const float cols_present = kColEdges ? columns.present[j] : 3.0f;
    blocking::nine_term_update(centre.u[j], centre.v[j], box_u[j], box_v[j],
                               rows_present * cols_present, c, out.u[j], out.v[j]);
    if (kColEdges && !columns.inside[j]) {  // a column outside the grid stays absent
      out.u[j] = 0.0f;
      out.v[j] = 0.0f;
    }
  }
}

// A level whose row r lies outside the grid: the row stays absent (0), and only the pair moves
// down, for the next row.
template <int kCols>
__device__ __forceinline__ void absent_row(Row<kCols>& pair, const Row<kCols>& centre,
                                           const Row<kCols>& below, Row<kCols>& out) {
#pragma unroll
  for (int j = 0; j < kCols; ++j) {
    pair.u[j] = centre.u[j] + below.u[j];
    pair.v[j] = centre.v[j] + below.v[j];
    out.u[j] = 0.0f;
    out.v[j] = 0.0f;
  }
}

// One warp's walk down its chunk: the state that moves with it, and the walk itself.
//
// Iteration q loads row q + 2 and lets every level make one row: level s makes row q - 2 s from
// the rows that level s - 1 made in the two iterations before. The rows loaded from memory
// (level 0) live in a ring of four register slots, row q in ring[q mod 4]: row q is requested
// at the end of iteration q - 2 and first used in iteration q + 1, so about three iterations of
// arithmetic hide each load. The walk is unrolled by four, so that every slot and phase is a
// compile-time register: nothing is copied, and no register waits for a load before it is due.
template <int kSteps, int kCols, bool kColEdges>
struct StripWalker {
  static constexpr int kRing = 4;

  ConstFields in;
  Fields out;
  Grid g;
  Coefficients c;
  int first_col;  // this lane's first column (negative in the left halo of the first strip)
  bool lane_writes;
  int row_begin;  // the rows this warp writes: [row_begin, row_end)
  int row_end;
  ColumnInfo<kCols> columns;
  // ring[q mod 4]: row q of the input. rows[phase][s], s >= 1: the row level s made in the last
  // iteration of that phase (q mod 2). pairs[s - 1]: rows r-1 + r of the input of level s.
  Row<kCols> ring[kRing];
  Row<kCols> rows[2][kSteps + 1];
  Row<kCols> pairs[kSteps];

  // Requests row q of the input into `row`; absent cells, and rows no output needs, read as 0.
  // `at` is the offset of (q, first_col).
  __device__ __forceinline__ void request_row(Row<kCols>& row, int q, std::ptrdiff_t at) {
    const bool lane_loads = kColEdges ? (0 <= first_col && first_col < g.cols) : true;
    if (0 <= q && q < g.rows && row_begin - kSteps <= q && q < row_end + kSteps && lane_loads) {
      load_columns<kCols>(in.u + at, row.u);
      load_columns<kCols>(in.v + at, row.v);
#pragma unroll
      for (int j = 0; j < kCols; ++j) {
        if (kColEdges && !columns.inside[j]) {  // the padding past the last column
          row.u[j] = 0.0f;
          row.v[j] = 0.0f;
        }
      }
    } else {
#pragma unroll
      for (int j = 0; j < kCols; ++j) {
        row.u[j] = 0.0f;
        row.v[j] = 0.0f;
      }
    }
  }

  // One level of the pyramid in iteration q (kSlot = q mod 4): level `level` makes row
  // q - 2 level. kRowEdges: that row may be an edge row or lie outside the grid; each level
  // then checks (the check is the same for the whole warp, so the branch costs no divergence).
  template <int kSlot, bool kRowEdges>
  __device__ __forceinline__ void climb_level(int level, int q) {
    constexpr int kPhase = kSlot % 2;
    Row<kCols>& pair = pairs[level - 1];
    // Rows q - 2 level (centre) and q - 2 level + 1 (below) of the level underneath.
    const Row<kCols>& centre = level == 1 ? ring[(kSlot + 2) % kRing] : rows[kPhase][level - 1];
    const Row<kCols>& below = level == 1 ? ring[(kSlot + 3) % kRing] : rows[1 - kPhase][level - 1];
    Row<kCols>& made = rows[kPhase][level];
    const int row = q - 2 * level;
    if (!kRowEdges || (0 < row && row < g.rows - 1)) {
      pyramid_step<kCols, false, kColEdges>(pair, centre, below, made, row, g.rows, columns, c);
      return;
    }
    // Near the top and bottom of the grid: what the row is decides what the level does with it
    // (edge_row_kind(), above).
    if (edge_row_kind(row, g.rows) == RowKind::absent) {
      absent_row(pair, centre, below, made);
    } else {
      pyramid_step<kCols, true, kColEdges>(pair, centre, below, made, row, g.rows, columns, c);
    }
  }

  // One iteration: every level makes one row (top level first: each reads only what the level
  // below made in earlier iterations, so the levels are independent work), the top level's row
  // is written, and row q + 2 is requested into the slot of row q - 2, which is used no more.
  template <int kSlot, bool kRowEdges>
  __device__ __forceinline__ void climb(int q, std::ptrdiff_t at) {
#pragma unroll
    for (int level = kSteps; level >= 1; --level) climb_level<kSlot, kRowEdges>(level, q);
    const int out_row = q - 2 * kSteps;
    if (lane_writes && row_begin <= out_row && out_row < row_end) {
      const std::ptrdiff_t out_at = at - 2 * kSteps * static_cast<std::ptrdiff_t>(g.pitch);
      store_columns<kCols>(out.u + out_at, rows[kSlot % 2][kSteps].u);
      store_columns<kCols>(out.v + out_at, rows[kSlot % 2][kSteps].v);
    }
    request_row(ring[(kSlot + 2) % kRing], q + 2, at + 2 * static_cast<std::ptrdiff_t>(g.pitch));
  }

  // Iterations q ... q + 3 (q a multiple of 4).
  template <bool kRowEdges>
  __device__ __forceinline__ void climb_four(int q, std::ptrdiff_t at) {
    const std::ptrdiff_t pitch = g.pitch;
    climb<0, kRowEdges>(q, at);
    climb<1, kRowEdges>(q + 1, at + pitch);
    climb<2, kRowEdges>(q + 2, at + 2 * pitch);
    climb<3, kRowEdges>(q + 3, at + 3 * pitch);
  }

  __device__ __forceinline__ void walk() {
#pragma unroll
    for (int j = 0; j < kCols; ++j) {
      const int col = first_col + j;
      columns.inside[j] = 0 <= col && col < g.cols;
      columns.present[j] =
          1.0f + static_cast<float>(col > 0) + static_cast<float>(col + 1 < g.cols);
    }
    // Empty rows to start with: for the first chunk the rows above the grid are absent (0); for
    // the others the first rows of every level are spoilt anyway, like the halo.
#pragma unroll
    for (int level = 0; level <= kSteps; ++level) {
#pragma unroll
      for (int j = 0; j < kCols; ++j) {
        rows[0][level].u[j] = rows[0][level].v[j] = 0.0f;
        rows[1][level].u[j] = rows[1][level].v[j] = 0.0f;
        if (level < kSteps) pairs[level].u[j] = pairs[level].v[j] = 0.0f;
        if (level < kRing) ring[level].u[j] = ring[level].v[j] = 0.0f;
      }
    }
    // Iteration q takes in row q + 2 and the top level writes row q - 2 kSteps. The first row
    // that the written rows depend on is row_begin - kSteps; level 1 needs it (with the next) in
    // iteration row_begin - kSteps + 2, where the walk starts, rounded down to a multiple of 4
    // so that q mod 4 is the slot. (The tiling aligns the chunks so that nothing is rounded
    // away: see chunk_offset.) The walk ends once the top level has written row_end - 1.
    const int end = row_end + 2 * kSteps;
    const int start = row_begin - kSteps + 2;
    int q = start - ((start % kRing) + kRing) % kRing;
    // While 2 kSteps + 1 <= q <= g.rows every level works on an inner row: no checks.
    const int inner_lo = 2 * kSteps + 1;
    const int inner_hi = g.rows;
    std::ptrdiff_t at = static_cast<std::ptrdiff_t>(q) * g.pitch + first_col;
    const std::ptrdiff_t pitch = g.pitch;
    request_row(ring[2], q - 2, at - 2 * pitch);  // q is a multiple of 4: slot (q - 2) mod 4
    request_row(ring[3], q - 1, at - pitch);
    request_row(ring[0], q, at);
    request_row(ring[1], q + 1, at + pitch);
    for (; q < end; q += kRing, at += kRing * static_cast<std::ptrdiff_t>(g.pitch)) {
      if (inner_lo <= q && q + kRing - 1 <= inner_hi) {
        climb_four<false>(q, at);
      } else {
        climb_four<true>(q, at);
      }
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Plumbing: launches, graphs, the stepper
// ---------------------------------------------------------------------------------------------

int ceil_div(int a, int b) {
  return (a + b - 1) / b;
}

int round_up(int a, int b) {
  return ceil_div(a, b) * b;
}

// Cuts the grid for one launch: strips of out_cols columns, then row chunks, as few as give
// each multiprocessor warps_per_sm warps, and never more warps than fit at once (one wave: no
// second, half-empty wave of warps that starts when the first ends). Fewer warps make taller
// chunks, so a smaller share of the rows is halo; enough warps hide the latencies.
// A warp's time grows with the rows it walks, its chunk plus about 3 * steps rows while the
// pyramid fills and drains; a side strip's warp walks side_cost times slower per row. So a
// side chunk gets side_rows rows with side_cost * (side_rows + 3 steps) = chunk_rows + 3 steps,
// and the launch ends when the inner warps do instead of waiting for the side ones.
Tiling plan_tiling(const Grid& g, int out_cols, int steps, int sm_count, int warps_per_sm,
                   float side_cost) {
  Tiling t{};
  t.strips = ceil_div(g.cols, out_cols);
  const int one_wave = std::max(1, sm_count * warps_per_sm);
  const int rows = g.rows + chunk_offset(steps);  // the first chunk starts above the grid
  for (int chunks = std::max(1, one_wave / t.strips);; --chunks) {
    t.chunk_rows = round_up(ceil_div(rows, chunks), kChunkAlignment);
    t.chunks = ceil_div(rows, t.chunk_rows);
    const float walk = static_cast<float>(t.chunk_rows + 3 * steps);
    t.side_chunk_rows =
        round_up(std::max(1, static_cast<int>(walk / side_cost) - 3 * steps), kChunkAlignment);
    t.side_chunks = ceil_div(rows, t.side_chunk_rows);
    if (warps_of(t) <= one_wave || chunks == 1) return t;
  }
}

struct LaunchShape {
  int sm_count;      // the device's limits' (gs::device_limits(): GS_DEVICE_LIMITS counts)
  int warps_per_sm;  // wanted; capped at what fits on a multiprocessor
  int threads_per_block;
  float side_cost;  // time per row of a side strip's warp over an inner strip's
};

// What every stepper of this lesson shares: the CUDA graph replay, the coefficients, the
// device's multiprocessors, and the layout.cuh view of the buffers. The buffers themselves (u, v
// for the current state and for the next, in the pitched layout), the stream, the copies in and
// out are gs::DeviceStepper's (common/). A subclass only says which launches advance the state
// by n steps (enqueue).
class GpuStepper : public gs::DeviceStepper, public gs::CallersFields {
 public:
  explicit GpuStepper(bool replay_as_graph)
      : gs::DeviceStepper(gs::DeviceStream::own), replay_as_graph_(replay_as_graph) {}
  ~GpuStepper() override { forget_graphs(); }

  void load(const gs::State& state, const gs::Rates& rates) override {
    gs::require_unit_stencil(rates, "lesson 06's steppers");
    // What the plans may count on: this device's limits, or a smaller card's (GS_DEVICE_LIMITS);
    // the subclass checks that its kernels fit them.
    const gs::DeviceLimits& limits = gs::device_limits();
    sm_count_ = limits.multiprocessors;
    plan_launches(limits);
    synchronize();
    forget_graphs();  // they name the old buffers and rates
    // Rows of cols rounded up to 32 floats (layout.cuh), the padding zero.
    load_fields(state, ceil_div(state.cols, kRowAlignment) * kRowAlignment);
    coefficients_ = gs::step_coefficients(rates);
  }

  void advance(int steps) override {
    if (steps <= 0) return;
    gs::NvtxRange range("l06 advance");
    if (!replay_as_graph_) {
      enqueue(steps);
      return;
    }
    // A frame of 32 steps is recorded the first time and replayed ever after, in one call
    // instead of one launch per kernel (advance_through_graph(), shared_blocking.cuh).
    blocking::advance_through_graph(graphs_, stream(), steps, parity(),
                                    [this](int n) { enqueue(n); });
  }

  // Lesson 10: the caller's device fields advanced where they lie, when the kernels can take
  // their layout: vector_columns() columns per load and store (gs::DeviceStepper, common/).
  gs::FieldsAdvance advance_fields(const gs::FieldView& caller, int steps) override {
    return advance_callers_fields(caller, steps, vector_columns(), [this](int n) { enqueue(n); });
  }

 protected:
  // Columns a thread loads and stores as one vector (2 for float2).
  virtual int vector_columns() const { return 1; }

  // Enqueues on stream() the launches that advance the state by `steps`, from current_fields()
  // into next_fields(); after each launch it calls swap(), so the next launch reads what this
  // one wrote.
  virtual void enqueue(int steps) = 0;
  // Fits the launches to the device's `limits` (at every load()): throws
  // gs::InvalidParameter when a kernel cannot run within them, or picks a smaller plan.
  virtual void plan_launches(const gs::DeviceLimits& limits) = 0;

  // The buffers as the kernels take them (layout.cuh).
  Grid grid() const { return {rows(), cols(), pitch()}; }
  ConstFields current_fields() const { return {current().u, current().v}; }
  Fields next_fields() const { return {next().u, next().v}; }
  const Coefficients& coefficients() const { return coefficients_; }
  int sm_count() const { return sm_count_; }

 private:
  void forget_graphs() {
    for (auto& entry : graphs_) cudaGraphExecDestroy(entry.second.graph);
    graphs_.clear();
  }

  bool replay_as_graph_;
  int sm_count_ = 1;
  Coefficients coefficients_{};
  FrameGraphs graphs_;
};

}  // namespace
