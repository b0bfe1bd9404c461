// Lesson 06 - the fused 3x3 stencil, temporal blocking and CUDA graphs.
//
// JAX's 3x3 version compiles the whole time loop (fori_loop) into one program for the GPU. This
// lesson does the same by hand, in measured moves (README.md):
//   1. one specialised kernel per step: the nine unit weights written out as a 3x3 box sum, u and
//      v updated in one pass, each thread walking down a column so that it loads every row once
//      ("l06-fused");
//   2. the launches of one advance(n) recorded once as a CUDA graph and replayed, so that the
//      GPU no longer waits for the CPU between steps ("l06-fused-graph");
//   3. several steps per launch ("temporal blocking", the course's pyramids): a block loads a
//      tile with a halo as deep as the steps into shared memory and advances it there, one
//      barrier per step ("l06-shared-blocking", "l06-shared-blocking-graph": the learner's
//      kernel, shared_blocking.cuh);
//   4. the same idea without shared memory: each warp streams rows down a strip and keeps the
//      pyramid in registers, the left and right neighbours coming from the next lanes through
//      warp shuffles; no barrier ("l06-temporal", replayed as a graph: the best, and what
//      gray_scott uses on a GPU; "l06-temporal-launches" without the graph; engine.cuh).
// Cells outside the grid are "absent": they count as 0 in every sum and each cell's update uses
// the number of cells of its 3x3 box that exist. In a pyramid they must stay absent at every
// intermediate step, not be computed as if they were cells.
//
// The file you edit is shared_blocking.cuh: the update of one cell, the shared-memory blocking
// kernel, and the replay of a frame as a CUDA graph. engine.cuh holds the machinery (the register
// pyramid, its launch plan, the stepper every implementation shares, on common/'s
// gs::DeviceStepper: the buffers): read it, do not edit it.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "gs/cuda_check.hpp"
#include "gs/device_limits.hpp"
#include "gs/lesson.hpp"
#include "launch_fit.hpp"
// What shared_blocking.cuh is given (it opens an anonymous namespace of its own): Coefficients,
// the device layout (Grid, ConstFields, Fields, offset()) and FrameGraphs.
#include "layout.cuh"

// ---------------------------------------------------------------------------------------------
// 1. The update of one cell, specialised to the nine unit weights
// ---------------------------------------------------------------------------------------------

// The exercise, in namespace blocking: nine_term_update(), the update of one cell;
// shared_blocking_kernel(), several steps per launch in shared memory; advance_through_graph(), a
// frame replayed as a CUDA graph. Angle brackets: the build picks
// lessons/06_fused_stencil/shared_blocking.cuh (your stubs) or the solution's copy. It compiles
// on its own (LEARNER_ALONE): it sees layout.cuh, not this file.
#include <shared_blocking.cuh>

// The register pyramid, its launch plan and the stepper every implementation shares (it includes
// layout.cuh and shared_blocking.cuh itself).
#include "engine.cuh"

namespace {

// The register pyramid's tuning constants, which sweeps on an H100 found fastest (README.md,
// section 7): columns per lane (1, 2 or 4: one float, float2 or float4 per load), steps per
// launch, warps per multiprocessor the row chunks aim at, threads per block (at most 128), and
// how much longer a side strip's warp takes per row than an inner one's.
constexpr int kColumnsPerLane = 2;
constexpr int kStepsPerLaunch = 4;
constexpr int kMaxStepsPerLaunch = kStepsPerLaunch;  // kernels are compiled for 1 ... this
constexpr int kWarpsPerSm = 12;
constexpr int kThreadsPerBlock = 128;
constexpr float kSideCost = 1.4f;

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
    blocking::nine_term_update(sums[i + 1].centre_u, sums[i + 1].centre_v, box_u, box_v,
                               rows_present * cols_present, c, u_next, v_next);
    out.u[offset(g, row, col)] = u_next;
    out.v[offset(g, row, col)] = v_next;
  }
}

// ---------------------------------------------------------------------------------------------
// 3. Several steps per launch in shared memory: the learner's kernel
// ---------------------------------------------------------------------------------------------

// The learner's kernel made for `steps` (1 <= steps <= kMaxSteps), as the runtime names it.
template <int kMaxSteps>
const void* shared_blocking_entry(int steps) {
  if (steps == kMaxSteps) {
    return reinterpret_cast<const void*>(blocking::shared_blocking_kernel<kMaxSteps>);
  }
  if constexpr (kMaxSteps > 1) return shared_blocking_entry<kMaxSteps - 1>(steps);
  return nullptr;
}

// How many steps each launch of the learner's kernel makes on a device with `limits`: the
// tile's halo grows with the steps, and so does its shared memory, so a block of kBlockingSteps
// steps may not fit a smaller GPU's 48 KiB (or what GS_DEVICE_LIMITS says) where fewer steps do.
struct SharedBlockingPlan {
  int steps_per_launch;         // kBlockingSteps, or fewer where that does not fit; 0: none fits
  std::int64_t shared_bytes;    // the kernel's static shared memory at that many steps
  std::string not_at_the_most;  // why kBlockingSteps does not fit, or ""
};

SharedBlockingPlan plan_shared_blocking(const gs::DeviceLimits& limits) {
  SharedBlockingPlan plan{0, 0, ""};
  for (int steps = blocking::kBlockingSteps; steps >= 1; --steps) {
    const gs::KernelResources resources =
        gs::kernel_resources(shared_blocking_entry<blocking::kBlockingSteps>(steps));
    const std::string problem =
        gs::launch_problem(limits, resources, blocking::kBlockingThreads, 0);
    if (problem.empty()) {
      plan.steps_per_launch = steps;
      plan.shared_bytes = resources.static_shared_bytes;
      return plan;
    }
    if (plan.not_at_the_most.empty()) plan.not_at_the_most = problem;
  }
  return plan;
}

// Launches the learner's kernel made for `steps` (1 <= steps <= kMaxSteps): the step count is a
// template parameter, so that the tile's size is known when the kernel is compiled.
template <int kMaxSteps>
void launch_shared_blocking(int steps, ConstFields in, Fields out, const Grid& g,
                            const Coefficients& c, cudaStream_t stream) {
  if (steps == kMaxSteps) {
    const dim3 blocks(static_cast<unsigned>(ceil_div(g.cols, blocking::kBlockingTileCols)),
                      static_cast<unsigned>(ceil_div(g.rows, blocking::kBlockingTileRows)));
    blocking::shared_blocking_kernel<kMaxSteps>
        <<<blocks, blocking::kBlockingThreads, 0, stream>>>(in, out, g, c);
    GS_CUDA_CHECK_LAUNCH();
  } else if constexpr (kMaxSteps > 1) {
    launch_shared_blocking<kMaxSteps - 1>(steps, in, out, g, c, stream);
  }
}

// ---------------------------------------------------------------------------------------------
// 4. Several steps per launch: temporal blocking in registers
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
// 5. Launches and steppers
// ---------------------------------------------------------------------------------------------

// The kernel made for `steps` (1 <= steps <= kMaxSteps), as the runtime names it.
template <int kMaxSteps, int kCols>
const void* temporal_entry(int steps) {
  if (steps == kMaxSteps) return reinterpret_cast<const void*>(temporal_kernel<kMaxSteps, kCols>);
  if constexpr (kMaxSteps > 1) return temporal_entry<kMaxSteps - 1, kCols>(steps);
  return nullptr;
}

// blocks_per_sm: how many blocks of this kernel an SM holds at once (registers decide; the
// device's limits may say fewer), asked once per load (TemporalStepper::plan_launches).
template <int kSteps, int kCols>
void launch_temporal_exactly(ConstFields in, Fields out, const Grid& g, const Coefficients& c,
                             const LaunchShape& shape, int blocks_per_sm, cudaStream_t stream) {
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
                     const LaunchShape& shape, const int* blocks_per_sm, cudaStream_t stream) {
  if (steps == kMaxSteps) {
    launch_temporal_exactly<kMaxSteps, kCols>(in, out, g, c, shape, blocks_per_sm[kMaxSteps],
                                              stream);
  } else if constexpr (kMaxSteps > 1) {
    launch_temporal<kMaxSteps - 1, kCols>(steps, in, out, g, c, shape, blocks_per_sm, stream);
  }
}

// One launch of the fused kernel per step.
class FusedStepper final : public GpuStepper {
 public:
  using GpuStepper::GpuStepper;

 private:
  void plan_launches(const gs::DeviceLimits&) override {
    gs::require_launch_fits("l06-fused", reinterpret_cast<const void*>(fused_step_kernel),
                            kFusedBlockCols * kFusedBlockRows, 0);
  }

  void enqueue(int steps) override {
    const Grid g = grid();
    const dim3 block(kFusedBlockCols, kFusedBlockRows);
    const dim3 blocks(
        static_cast<unsigned>(ceil_div(g.cols, kFusedBlockCols)),
        static_cast<unsigned>(ceil_div(g.rows, kFusedBlockRows * kFusedRowsPerThread)));
    for (int step = 0; step < steps; ++step) {
      fused_step_kernel<<<blocks, block, 0, stream()>>>(current_fields(), next_fields(), g,
                                                        coefficients());
      GS_CUDA_CHECK_LAUNCH();
      swap();
    }
  }
};

// The learner's shared-memory kernel: launches of kBlockingSteps steps, and one shorter launch
// for a step count that is not a multiple.
class SharedBlockingStepper final : public GpuStepper {
 public:
  using GpuStepper::GpuStepper;

 private:
  // kBlockingSteps per launch where the tile fits a block of this GPU, else fewer (and says so,
  // once), else a refusal that names what does not fit.
  void plan_launches(const gs::DeviceLimits& limits) override {
    const SharedBlockingPlan plan = plan_shared_blocking(limits);
    if (plan.steps_per_launch == 0) {
      throw gs::InvalidParameter(
          "l06-shared-blocking does not fit this GPU even at one step per launch: " +
          plan.not_at_the_most + " (" + limits.describe() +
          "); make the tile smaller (kBlockingTileRows, kBlockingTileCols, shared_blocking.cuh)");
    }
    if (plan.steps_per_launch < blocking::kBlockingSteps) {
      static std::once_flag said;
      std::call_once(said, [&] {
        std::cerr << "l06-shared-blocking: " << plan.steps_per_launch
                  << " steps per launch instead of " << blocking::kBlockingSteps << ": at "
                  << blocking::kBlockingSteps << ", " << plan.not_at_the_most << " ("
                  << limits.describe() << ")\n";
      });
    }
    steps_per_launch_ = plan.steps_per_launch;
  }

  void enqueue(int steps) override {
    for (int done = 0; done < steps;) {
      const int now = std::min(steps_per_launch_, steps - done);
      launch_shared_blocking<blocking::kBlockingSteps>(now, current_fields(), next_fields(), grid(),
                                                       coefficients(), stream());
      swap();
      done += now;
    }
  }

  int steps_per_launch_ = blocking::kBlockingSteps;
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
  int vector_columns() const override { return kCols; }
  // Every kernel's block must fit this GPU; how many of them an SM holds shapes the plan.
  void plan_launches(const gs::DeviceLimits&) override {
    for (int steps = 1; steps <= kMaxSteps; ++steps) {
      const void* kernel = temporal_entry<kMaxSteps, kCols>(steps);
      gs::require_launch_fits("l06-temporal (" + std::to_string(steps) + " steps per launch)",
                              kernel, threads_per_block_, 0);
      blocks_per_sm_[steps] = gs::resident_blocks(kernel, threads_per_block_, 0);
    }
  }

  void enqueue(int steps) override {
    const LaunchShape shape{sm_count(), warps_per_sm_, threads_per_block_, side_cost_};
    for (int done = 0; done < steps;) {
      const int now = std::min(steps_per_launch_, steps - done);
      launch_temporal<kMaxSteps, kCols>(now, current_fields(), next_fields(), grid(),
                                        coefficients(), shape, blocks_per_sm_, stream());
      swap();
      done += now;
    }
  }

  int steps_per_launch_;
  int warps_per_sm_;
  int threads_per_block_;
  float side_cost_;
  int blocks_per_sm_[kMaxSteps + 1] = {};  // by steps per launch (plan_launches)
};

// The tuning constants (columns per lane, steps per launch, warps per multiprocessor, threads per
// block, the side strips' cost) are at the top of this file.
std::unique_ptr<gs::Stepper> make_temporal(int steps_per_launch, bool replay_as_graph) {
  return std::make_unique<TemporalStepper<kMaxStepsPerLaunch, kColumnsPerLane>>(
      steps_per_launch, replay_as_graph, kWarpsPerSm, kThreadsPerBlock, kSideCost);
}

}  // namespace

namespace GS_LESSON_NAMESPACE {

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
      {"l06-shared-blocking-graph", lesson,
       std::to_string(blocking::kBlockingSteps) +
           " steps per launch on a tile in shared memory (your kernel), replayed as a CUDA graph",
       gs::Device::gpu, [] { return std::make_unique<SharedBlockingStepper>(true); }},
      {"l06-shared-blocking", lesson,
       "the same shared-memory tiles, one launch call per " +
           std::to_string(blocking::kBlockingSteps) + " steps",
       gs::Device::gpu, [] { return std::make_unique<SharedBlockingStepper>(false); }},
      {"l06-fused-graph", lesson, "the fused kernel, one step per launch, replayed as a CUDA graph",
       gs::Device::gpu, [] { return std::make_unique<FusedStepper>(true); }},
      {"l06-fused", lesson,
       "specialised nine-term kernel, u and v in one pass, one launch per step", gs::Device::gpu,
       [] { return std::make_unique<FusedStepper>(false); }},
  };
}

SharedBlockingFit shared_blocking_fit(const gs::DeviceLimits& limits) {
  const SharedBlockingPlan plan = plan_shared_blocking(limits);
  return {plan.steps_per_launch, blocking::kBlockingSteps, plan.shared_bytes, plan.not_at_the_most};
}

}  // namespace GS_LESSON_NAMESPACE
