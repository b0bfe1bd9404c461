// Lesson 06 - the fused 3x3 stencil, temporal blocking and CUDA graphs.
//
// JAX's 3x3 version compiles the whole time loop (fori_loop) into one program for the GPU. This
// lesson does the same by hand, in three measured moves (README.md):
//   1. one specialised kernel per step: the nine unit weights written out as a 3x3 box sum, u and
//      v updated in one pass, each thread walking down a column so that it loads every row once
//      ("l06-fused");
//   2. the launches of one advance(n) recorded once as a CUDA graph and replayed, so that the
//      GPU no longer waits for the CPU between steps ("l06-fused-graph");
//   3. several steps per launch ("temporal blocking", the course's pyramids): each warp loads a
//      strip of the grid wider and taller than the part it writes, by one cell per step on each
//      side, and advances it T steps in registers. Rows stream through a sliding window, the left
//      and right neighbours come from the next lanes through warp shuffles: a step touches no
//      shared memory and waits at no barrier ("l06-temporal", replayed as a graph: the best, and
//      what gray_scott uses on a GPU; "l06-temporal-launches" without the graph).
// Cells outside the grid are "absent": they count as 0 in every sum and each cell divides by
// the number of cells of its 3x3 box that exist. In a pyramid they must stay absent at every
// intermediate step, not be computed as if they were cells.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gs/cuda_check.hpp"
#include "gs/lessons.hpp"

namespace {

// ---------------------------------------------------------------------------------------------
// 1. The update of one cell, specialised to the nine unit weights
// ---------------------------------------------------------------------------------------------

// The rates of one step folded into the few numbers the update needs (computed on the host).
struct Coefficients {
  float dt_du;    // dt * Du
  float dt_dv;    // dt * Dv
  float dt;       // dt
  float dt_feed;  // dt * F
  float keep_u;   // 1 - dt * F: the share of u that feeding leaves
  float keep_v;   // 1 - dt * (F + k): the share of v that feeding and killing leave
};

Coefficients make_coefficients(const gs::Params& p) {
  return {
      p.dt * p.diffusion_u, p.dt * p.diffusion_v,      p.dt,
      p.dt * p.feed_rate,   1.0f - p.dt * p.feed_rate, 1.0f - p.dt * (p.feed_rate + p.kill_rate)};
}

// One explicit Euler step of one cell. With all nine weights equal to 1 the Laplacian is
//   L(a) = sum over the in-grid neighbours of (neighbour - a) = box - cells * a,
// where box is the sum of the 3x3 box around the cell (centre included, absent cells counting 0)
// and cells the number of its cells that exist (9 inside, 6 on an edge, 4 in a corner). Then
//   u' = u + dt * (Du * (box_u - cells * u) - u v^2 + F * (1 - u))
//      = (keep_u - dt_du * cells) * u + dt_du * box_u - dt * u v^2 + dt_feed
//   v' = (keep_v - dt_dv * cells) * v + dt_dv * box_v + dt * u v^2
// which is three fused multiply-adds per field once u v^2 is known.
__device__ __forceinline__ void nine_term_update(float u, float v, float box_u, float box_v,
                                                 float cells, const Coefficients& c, float& u_next,
                                                 float& v_next) {
  // GS_EXERCISE_BEGIN(nine_term_update)
  // TODO(lesson 06): the specialised update of one cell. L(a) = box - cells * a (the nine unit
  // weights: box is the 3x3 sum, centre included, absent cells 0; cells is how many exist).
  // Compute u v^2 once, then u_next and v_next with the formula above: three fused
  // multiply-adds per field (fmaf). The stub below changes nothing, so every test fails.
  (void)box_u;
  (void)box_v;
  (void)cells;
  (void)c;
  u_next = u;
  v_next = v;
  // GS_EXERCISE_END
}

// ---------------------------------------------------------------------------------------------
// The device layout, shared by both kernels
// ---------------------------------------------------------------------------------------------

// Each field is `rows` rows of `pitch` floats; pitch is cols rounded up to 32 floats, so every
// row starts on a 128-byte line and 16-byte vector accesses stay aligned. The padding columns
// hold zeros.
constexpr int kRowAlignment = 32;

struct Grid {
  int rows;
  int cols;
  int pitch;
};

struct ConstFields {
  const float* u;
  const float* v;
};

struct Fields {
  float* u;
  float* v;
};

__device__ __forceinline__ std::size_t offset(const Grid& g, int row, int col) {
  return static_cast<std::size_t>(row) * static_cast<std::size_t>(g.pitch) +
         static_cast<std::size_t>(col);
}

// ---------------------------------------------------------------------------------------------
// 2. One step per launch: the fused kernel
// ---------------------------------------------------------------------------------------------

// A block is one warp wide (32 consecutive columns: 128-byte loads) and walks 32 rows down.
constexpr int kFusedBlockCols = 32;
constexpr int kFusedBlockRows = 4;
constexpr int kFusedRowsPerThread = 8;

// The three cells of one row around `col` for both fields: the centre values and the sums
// (left + centre + right, an absent neighbour counting 0).
struct RowSums {
  float centre_u;
  float centre_v;
  float sum_u;
  float sum_v;
};

__device__ __forceinline__ RowSums row_sums(const ConstFields& in, const Grid& g, int row, int col,
                                            bool has_left, bool has_right) {
  const std::size_t at = offset(g, row, col);
  RowSums s;
  s.centre_u = __ldg(in.u + at);
  s.centre_v = __ldg(in.v + at);
  const float left_u = has_left ? __ldg(in.u + at - 1) : 0.0f;
  const float left_v = has_left ? __ldg(in.v + at - 1) : 0.0f;
  const float right_u = has_right ? __ldg(in.u + at + 1) : 0.0f;
  const float right_v = has_right ? __ldg(in.v + at + 1) : 0.0f;
  s.sum_u = left_u + s.centre_u + right_u;
  s.sum_v = left_v + s.centre_v + right_v;
  return s;
}

// Each thread owns one column of kFusedRowsPerThread cells. It first loads the rows it needs
// (its cells plus one row above and one below, each row once instead of three times, u and v
// together), so that all those loads are in flight at once, then updates its cells. The left and
// right neighbours are loaded by the next threads too and come from L1.
__global__ void __launch_bounds__(kFusedBlockCols* kFusedBlockRows)
    fused_step_kernel(ConstFields in, Fields out, Grid g, Coefficients c) {
  const int col = static_cast<int>(blockIdx.x) * kFusedBlockCols + static_cast<int>(threadIdx.x);
  const int row_begin =
      (static_cast<int>(blockIdx.y) * kFusedBlockRows + static_cast<int>(threadIdx.y)) *
      kFusedRowsPerThread;
  if (col >= g.cols || row_begin >= g.rows) return;
  const bool has_left = col > 0;
  const bool has_right = col + 1 < g.cols;
  const float cols_present = 1.0f + static_cast<float>(has_left) + static_cast<float>(has_right);

  RowSums sums[kFusedRowsPerThread + 2];  // rows row_begin - 1 ... row_begin + kFusedRowsPerThread
#pragma unroll
  for (int i = 0; i < kFusedRowsPerThread + 2; ++i) {
    const int row = row_begin - 1 + i;
    sums[i] = (0 <= row && row < g.rows) ? row_sums(in, g, row, col, has_left, has_right)
                                         : RowSums{0.0f, 0.0f, 0.0f, 0.0f};
  }
#pragma unroll
  for (int i = 0; i < kFusedRowsPerThread; ++i) {
    const int row = row_begin + i;
    if (row >= g.rows) break;
    const float rows_present =
        1.0f + static_cast<float>(row > 0) + static_cast<float>(row + 1 < g.rows);
    // The nine unit weights: three rows of three cells.
    const float box_u = sums[i].sum_u + sums[i + 1].sum_u + sums[i + 2].sum_u;
    const float box_v = sums[i].sum_v + sums[i + 1].sum_v + sums[i + 2].sum_v;
    float u_next;
    float v_next;
    nine_term_update(sums[i + 1].centre_u, sums[i + 1].centre_v, box_u, box_v,
                     rows_present * cols_present, c, u_next, v_next);
    out.u[offset(g, row, col)] = u_next;
    out.v[offset(g, row, col)] = v_next;
  }
}

// ---------------------------------------------------------------------------------------------
// 3. Several steps per launch: temporal blocking in registers
// ---------------------------------------------------------------------------------------------
//
// One warp owns a strip of 32 * kCols columns (kCols adjacent columns per lane, loaded as one
// float2 or float4) and a chunk of rows. To advance kSteps steps it streams rows down the strip,
// and each row climbs a pyramid of kSteps levels held in registers: level s holds the state
// after s steps, and needs rows r-1, r, r+1 of level s-1 to produce its row r. Vertical sums come
// from the rows a lane already holds, horizontal ones from the neighbouring lanes through warp
// shuffles: a step touches no shared memory and waits at no barrier.
//
// Two tricks keep the arithmetic units busy:
//  - the levels run top-down within one row-iteration, so level s takes the row that level s-1
//    made in the PREVIOUS iteration: the kSteps levels of an iteration are independent of each
//    other, and a warp has kSteps * kCols * 2 chains of arithmetic in flight instead of
//    kCols * 2 (few warps hide the latencies, so the chunks can be tall);
//  - the rows live in two buffers that alternate from one iteration to the next (the phase),
//    so the one a level receives is the one it reads, and nothing is copied.
// Level s therefore lags two rows behind level s-1, and the top level writes row q - 2 kSteps
// when row q is loaded.
//
// Each step spoils one column at each end of the strip (its outer neighbours are unknown) and
// one row at each end of the chunk, so a warp loads kHaloCols columns and kSteps rows more on
// each side than it writes. Those halo cells are computed by two warps: the price of the pyramid.

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
    nine_term_update(centre.u[j], centre.v[j], box_u[j], box_v[j], rows_present * cols_present, c,
                     out.u[j], out.v[j]);
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
    // GS_EXERCISE_BEGIN(absent_rows)
    // TODO(lesson 06): a row outside the grid (row < 0 or row >= g.rows) must stay absent (0) at
    // every level of the pyramid, or the next level adds it to its sums. For such a row call
    // absent_row(); for an edge row, pyramid_step with kRowEdges = true. The stub below
    // computes every row as if it were a row of cells.
    pyramid_step<kCols, true, kColEdges>(pair, centre, below, made, row, g.rows, columns, c);
    // GS_EXERCISE_END
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

template <int kSteps, int kCols>
__global__ void __launch_bounds__(kTemporalMaxThreads)
    temporal_kernel(ConstFields in, Fields out, Grid g, Coefficients c, Tiling tiling) {
  using S = Strip<kSteps, kCols>;
  const int thread = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int warp = thread / kWarpSize;
  const int lane = thread % kWarpSize;
  if (warp >= warps_of(tiling)) return;  // whole warps leave together
  // The side strips' warps first, then the inner strips' (neighbouring warps: neighbouring
  // strips of one chunk of rows).
  const int sides = side_strips(tiling);
  int strip;
  int chunk_rows;
  int chunk;
  if (warp < sides * tiling.side_chunks) {
    strip = warp % sides == 0 ? 0 : tiling.strips - 1;
    chunk_rows = tiling.side_chunk_rows;
    chunk = warp / sides;
  } else {
    const int inner = warp - sides * tiling.side_chunks;
    const int inner_strips = tiling.strips - sides;
    strip = 1 + inner % inner_strips;
    chunk_rows = tiling.chunk_rows;
    chunk = inner / inner_strips;
  }
  const int row_begin = max(0, chunk * chunk_rows - chunk_offset(kSteps));
  const int row_end = min((chunk + 1) * chunk_rows - chunk_offset(kSteps), g.rows);
  const int strip_first_col = strip * S::kOutCols - S::kHaloCols;
  const int first_col = strip_first_col + lane * kCols;
  const bool lane_writes =
      S::kHaloLanes <= lane && lane < kWarpSize - S::kHaloLanes && first_col < g.cols;
  // Only the strips at the left and right edges pay for per-column checks.
  const bool touches_side = strip_first_col < 1 || strip_first_col + S::kWidth > g.cols - 1;
  if (touches_side) {
    StripWalker<kSteps, kCols, true> walker{in,        out,         g,         c,
                                            first_col, lane_writes, row_begin, row_end};
    walker.walk();
  } else {
    StripWalker<kSteps, kCols, false> walker{in,        out,         g,         c,
                                             first_col, lane_writes, row_begin, row_end};
    walker.walk();
  }
}

// ---------------------------------------------------------------------------------------------
// Plumbing: buffers, launches, graphs
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
  int sm_count;
  int warps_per_sm;  // wanted; capped at what fits on a multiprocessor
  int threads_per_block;
  float side_cost;  // time per row of a side strip's warp over an inner strip's
};

template <int kSteps, int kCols>
void launch_temporal_exactly(ConstFields in, Fields out, const Grid& g, const Coefficients& c,
                             const LaunchShape& shape, cudaStream_t stream) {
  int blocks_per_sm = 0;  // how many blocks of this kernel fit at once (registers decide)
  GS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks_per_sm, temporal_kernel<kSteps, kCols>, shape.threads_per_block, 0));
  const int warps_fit = std::max(1, blocks_per_sm) * (shape.threads_per_block / kWarpSize);
  const Tiling tiling = plan_tiling(g, Strip<kSteps, kCols>::kOutCols, kSteps, shape.sm_count,
                                    std::min(shape.warps_per_sm, warps_fit), shape.side_cost);
  const int threads = warps_of(tiling) * kWarpSize;
  const int blocks = ceil_div(threads, shape.threads_per_block);
  temporal_kernel<kSteps, kCols>
      <<<blocks, shape.threads_per_block, 0, stream>>>(in, out, g, c, tiling);
  GS_CUDA_CHECK_LAUNCH();
}

// Launches the kernel made for `steps` (1 <= steps <= kMaxSteps): the step count is a template
// parameter so that the pyramid's levels unroll into registers.
template <int kMaxSteps, int kCols>
void launch_temporal(int steps, ConstFields in, Fields out, const Grid& g, const Coefficients& c,
                     const LaunchShape& shape, cudaStream_t stream) {
  if (steps == kMaxSteps) {
    launch_temporal_exactly<kMaxSteps, kCols>(in, out, g, c, shape, stream);
  } else if constexpr (kMaxSteps > 1) {
    launch_temporal<kMaxSteps - 1, kCols>(steps, in, out, g, c, shape, stream);
  }
}

// The four device buffers (u, v for the current state and for the next) in the pitched layout.
// Every copy and memset goes to the stepper's stream, the one the kernels run on: that stream
// does not wait for the legacy default stream (cudaStreamNonBlocking), so a plain cudaMemcpy
// there could still be writing the state while the first kernel reads it.
class DeviceFields {
 public:
  void allocate(int rows, int cols, cudaStream_t stream) {
    stream_ = stream;
    grid_ = {rows, cols, ceil_div(cols, kRowAlignment) * kRowAlignment};
    const std::size_t count = static_cast<std::size_t>(grid_.rows) * grid_.pitch;
    for (gs::DeviceFloats& buffer : buffers_) buffer.reset();  // free the old ones first
    for (gs::DeviceFloats& buffer : buffers_) {
      buffer = gs::device_floats(count);
      GS_CUDA_CHECK(cudaMemsetAsync(buffer.get(), 0, count * sizeof(float), stream_));  // padding
    }
    current_ = 0;
  }

  void upload(const gs::State& state) {
    copy_in(buffer(2 * current_), state.u.data());
    copy_in(buffer(2 * current_ + 1), state.v.data());
  }
  void download_u(float* u) const { copy_out(u, buffer(2 * current_)); }
  void download_v(float* v) const { copy_out(v, buffer(2 * current_ + 1)); }

  const Grid& grid() const { return grid_; }
  ConstFields current() const { return {buffer(2 * current_), buffer(2 * current_ + 1)}; }
  Fields next() const { return {buffer(2 * (1 - current_)), buffer(2 * (1 - current_) + 1)}; }
  int parity() const { return current_; }
  void set_parity(int parity) { current_ = parity; }
  void swap() { current_ = 1 - current_; }

 private:
  float* buffer(int index) const { return buffers_[index].get(); }
  std::size_t pitch_bytes() const { return static_cast<std::size_t>(grid_.pitch) * sizeof(float); }
  std::size_t row_bytes() const { return static_cast<std::size_t>(grid_.cols) * sizeof(float); }
  // Copies between pageable host memory and the device, in stream order; each waits until its
  // copy is done, so the host memory can be reused as soon as it returns.
  void copy_in(float* device, const float* host) {
    GS_CUDA_CHECK(cudaMemcpy2DAsync(device, pitch_bytes(), host, row_bytes(), row_bytes(),
                                    static_cast<std::size_t>(grid_.rows), cudaMemcpyHostToDevice,
                                    stream_));
    GS_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void copy_out(float* host, const float* device) const {
    GS_CUDA_CHECK(cudaMemcpy2DAsync(host, row_bytes(), device, pitch_bytes(), row_bytes(),
                                    static_cast<std::size_t>(grid_.rows), cudaMemcpyDeviceToHost,
                                    stream_));
    GS_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  cudaStream_t stream_ = nullptr;
  Grid grid_{0, 0, 0};
  gs::DeviceFloats buffers_[4];  // u0, v0, u1, v1
  int current_ = 0;
};

// What every stepper of this lesson shares: the buffers, a stream, and the CUDA graph replay.
// A subclass only says which launches advance the state by n steps (enqueue).
class GpuStepper : public gs::Stepper {
 public:
  explicit GpuStepper(bool replay_as_graph) : replay_as_graph_(replay_as_graph) {}
  GpuStepper(const GpuStepper&) = delete;
  GpuStepper& operator=(const GpuStepper&) = delete;
  ~GpuStepper() override {
    forget_graphs();
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  void load(const gs::State& state, const gs::Params& params) override {
    if (stream_ == nullptr) {
      GS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
      int device = 0;
      GS_CUDA_CHECK(cudaGetDevice(&device));
      GS_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device));
    }
    GS_CUDA_CHECK(cudaStreamSynchronize(stream_));
    forget_graphs();  // they name the old buffers and rates
    fields_.allocate(state.rows, state.cols, stream_);
    fields_.upload(state);
    coefficients_ = make_coefficients(params);
  }

  void advance(int steps) override {
    if (steps <= 0) return;
    gs::NvtxRange range("l06 advance");
    if (!replay_as_graph_) {
      enqueue(steps);
      return;
    }
    // One graph per (steps, which buffer holds the state): a frame of 32 steps is recorded the
    // first time and replayed ever after, in one call instead of one launch per kernel.
    const std::pair<int, int> key{steps, fields_.parity()};
    auto found = graphs_.find(key);
    if (found == graphs_.end()) found = graphs_.emplace(key, record(steps)).first;
    GS_CUDA_CHECK(cudaGraphLaunch(found->second.graph, stream_));
    fields_.set_parity(found->second.parity_after);
  }

  void fetch(gs::State& state) override {
    synchronize();
    const Grid& g = fields_.grid();
    state.rows = g.rows;
    state.cols = g.cols;
    state.u.resize(static_cast<std::size_t>(g.rows) * static_cast<std::size_t>(g.cols));
    state.v.resize(state.u.size());
    fields_.download_u(state.u.data());
    fields_.download_v(state.v.data());
  }

  void fetch_v(float* v) override {
    synchronize();
    fields_.download_v(v);
  }

  void synchronize() override {
    if (stream_ != nullptr) GS_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

 protected:
  // Enqueues on stream() the launches that advance the state by `steps`; after each launch it
  // calls fields().swap(), so the next launch reads what this one wrote.
  virtual void enqueue(int steps) = 0;

  cudaStream_t stream() const { return stream_; }
  DeviceFields& fields() { return fields_; }
  const Coefficients& coefficients() const { return coefficients_; }
  int sm_count() const { return sm_count_; }

 private:
  struct RecordedGraph {
    cudaGraphExec_t graph;
    int parity_after;  // which buffer holds the state once the graph has run
  };

  RecordedGraph record(int steps) {
    const int parity_before = fields_.parity();
    GS_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    try {
      enqueue(steps);  // recorded, not run
    } catch (...) {
      cudaGraph_t broken = nullptr;
      cudaStreamEndCapture(stream_, &broken);
      if (broken != nullptr) cudaGraphDestroy(broken);
      fields_.set_parity(parity_before);
      throw;
    }
    cudaGraph_t graph = nullptr;
    GS_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
    RecordedGraph recorded{nullptr, fields_.parity()};
    const cudaError_t status = cudaGraphInstantiate(&recorded.graph, graph, 0);
    cudaGraphDestroy(graph);
    GS_CUDA_CHECK(status);
    fields_.set_parity(parity_before);
    return recorded;
  }

  void forget_graphs() {
    for (auto& entry : graphs_) cudaGraphExecDestroy(entry.second.graph);
    graphs_.clear();
  }

  bool replay_as_graph_;
  cudaStream_t stream_ = nullptr;
  int sm_count_ = 1;
  DeviceFields fields_;
  Coefficients coefficients_{};
  std::map<std::pair<int, int>, RecordedGraph> graphs_;
};

// One launch of the fused kernel per step.
class FusedStepper final : public GpuStepper {
 public:
  using GpuStepper::GpuStepper;

 private:
  void enqueue(int steps) override {
    const Grid& g = fields().grid();
    const dim3 block(kFusedBlockCols, kFusedBlockRows);
    const dim3 blocks(
        static_cast<unsigned>(ceil_div(g.cols, kFusedBlockCols)),
        static_cast<unsigned>(ceil_div(g.rows, kFusedBlockRows * kFusedRowsPerThread)));
    for (int step = 0; step < steps; ++step) {
      fused_step_kernel<<<blocks, block, 0, stream()>>>(fields().current(), fields().next(), g,
                                                        coefficients());
      GS_CUDA_CHECK_LAUNCH();
      fields().swap();
    }
  }
};

// Launches of up to steps_per_launch steps each; a step count that is not a multiple ends with
// one shorter launch (kMaxSteps kernels are compiled, one per step count).
template <int kMaxSteps, int kCols>
class TemporalStepper final : public GpuStepper {
 public:
  TemporalStepper(int steps_per_launch, bool replay_as_graph, int warps_per_sm,
                  int threads_per_block, float side_cost)
      : GpuStepper(replay_as_graph),
        steps_per_launch_(std::clamp(steps_per_launch, 1, kMaxSteps)),
        warps_per_sm_(warps_per_sm),
        threads_per_block_(threads_per_block),
        side_cost_(side_cost) {}

 private:
  void enqueue(int steps) override {
    const LaunchShape shape{sm_count(), warps_per_sm_, threads_per_block_, side_cost_};
    for (int done = 0; done < steps;) {
      const int now = std::min(steps_per_launch_, steps - done);
      launch_temporal<kMaxSteps, kCols>(now, fields().current(), fields().next(), fields().grid(),
                                        coefficients(), shape, stream());
      fields().swap();
      done += now;
    }
  }

  int steps_per_launch_;
  int warps_per_sm_;
  int threads_per_block_;
  float side_cost_;
};

// The configuration sweeps on an H100 found fastest (README.md, "Tuning"): columns per lane,
// steps per launch, warps per multiprocessor the row chunks aim at, threads per block, and how
// much longer a side strip's warp takes per row (measured per warp with %globaltimer).
constexpr int kColumnsPerLane = 2;
constexpr int kStepsPerLaunch = 4;
constexpr int kMaxStepsPerLaunch = kStepsPerLaunch;  // kernels for 1 ... T steps
constexpr int kWarpsPerSm = 12;
constexpr int kThreadsPerBlock = 128;
constexpr float kSideCost = 1.4f;

std::unique_ptr<gs::Stepper> make_temporal(int steps_per_launch, bool replay_as_graph) {
  return std::make_unique<TemporalStepper<kMaxStepsPerLaunch, kColumnsPerLane>>(
      steps_per_launch, replay_as_graph, kWarpsPerSm, kThreadsPerBlock, kSideCost);
}

}  // namespace

namespace lesson06 {

std::vector<gs::Implementation> implementations() {
  const char* lesson = "06_fused_stencil";
  return {
      {"l06-temporal", lesson,
       std::to_string(kStepsPerLaunch) +
           " steps per launch in registers (pyramids, warp shuffles), replayed as a CUDA graph",
       gs::Device::gpu, [] { return make_temporal(kStepsPerLaunch, true); }},
      {"l06-temporal-launches", lesson,
       "the same pyramids, one launch call per " + std::to_string(kStepsPerLaunch) + " steps",
       gs::Device::gpu, [] { return make_temporal(kStepsPerLaunch, false); }},
      {"l06-fused-graph", lesson, "the fused kernel, one step per launch, replayed as a CUDA graph",
       gs::Device::gpu, [] { return std::make_unique<FusedStepper>(true); }},
      {"l06-fused", lesson,
       "specialised nine-term kernel, u and v in one pass, one launch per step", gs::Device::gpu,
       [] { return std::make_unique<FusedStepper>(false); }},
  };
}

}  // namespace lesson06
