// Lesson 06, the file you edit, in namespace blocking: the update of one cell specialised to the
// nine unit weights; a kernel that makes several steps per launch on a tile in shared memory; and
// the replay of a frame's launches as a CUDA graph. It sees only layout.cuh: Coefficients, the
// device layout (Grid, ConstFields, Fields, offset()), FrameGraphs and GS_CUDA_CHECK.
#pragma once

#include "layout.cuh"

namespace blocking {
// ---- Exercise 1: one cell, nine unit weights --------------------------------------------------
// One explicit Euler step of one cell from its value, the sum `box` of its 3x3 box (centre
// included, absent cells counting 0) and the number `cells` of the box's cells that exist:
//   u' = (keep_u - dt_du * cells) * u + dt_du * box_u - dt * u v^2 + dt_feed
//   v' = (keep_v - dt_dv * cells) * v + dt_dv * box_v + dt * u v^2
// three fused multiply-adds per field once u v^2 is known.
__device__ __forceinline__ void nine_term_update(float u, float v, float box_u, float box_v,
                                                 float cells, const Coefficients& c, float& u_next,
                                                 float& v_next) {
  const float uvv = u * v * v;
  u_next = fmaf(c.keep_u - c.dt_du * cells, u, fmaf(c.dt_du, box_u, fmaf(-c.dt, uvv, c.dt_feed)));
  v_next = fmaf(c.keep_v - c.dt_dv * cells, v, fmaf(c.dt_dv, box_v, c.dt * uvv));
}

// ---- Exercise 2: several steps per launch in shared memory ------------------------------------
// The kernel's shape (exercise 4 changes it and measures): steps per launch (kernels are compiled
// for 1 ... kBlockingSteps), the cells a block writes, threads per block. Static shared memory,
// two buffers per field: 16 B x (tile rows + 2 steps) x (tile cols + 2 steps), at most 48 KiB
// (49,152 B) or ptxas refuses the kernel: change the tile with the steps at 4 (README, exercise 4).
constexpr int kBlockingSteps = 4;
constexpr int kBlockingTileCols = 32;
constexpr int kBlockingTileRows = 32;
constexpr int kBlockingThreads = 256;

// Advances the block's tile kSteps steps: from `in`, it writes `out` on its kBlockingTileRows x
// kBlockingTileCols cells (those inside the grid), starting at (blockIdx.y * kBlockingTileRows,
// blockIdx.x * kBlockingTileCols). One block of kBlockingThreads per tile.
template <int kSteps>
__global__ void __launch_bounds__(kBlockingThreads)
    shared_blocking_kernel(ConstFields in, Fields out, Grid g, Coefficients c) {
  // The tile and a halo as deep as the steps: after kSteps steps a cell depends on the cells
  // within kSteps of it. Two buffers per field: a step reads one and writes the other.
  constexpr int kRows = kBlockingTileRows + 2 * kSteps;
  constexpr int kCols = kBlockingTileCols + 2 * kSteps;
  __shared__ float u_tile[2][kRows][kCols];
  __shared__ float v_tile[2][kRows][kCols];
  const int top = static_cast<int>(blockIdx.y) * kBlockingTileRows - kSteps;  // grid row of [0]
  const int left = static_cast<int>(blockIdx.x) * kBlockingTileCols - kSteps;
  const int rank = static_cast<int>(threadIdx.x);

  // The load: cells numbered row by row, dealt out to the threads (coalesced, as in lesson 05).
  // A cell outside the grid is absent: 0, never read from memory.
  for (int i = rank; i < kRows * kCols; i += kBlockingThreads) {
    const int r = i / kCols;
    const int k = i % kCols;
    const int row = top + r;
    const int col = left + k;
    const bool inside = 0 <= row && row < g.rows && 0 <= col && col < g.cols;
    u_tile[0][r][k] = inside ? in.u[offset(g, row, col)] : 0.0f;
    v_tile[0][r][k] = inside ? in.v[offset(g, row, col)] : 0.0f;
  }
  __syncthreads();

  // Step s reads buffer (s - 1) % 2 and writes buffer s % 2 on the cells at least s from the
  // tile's border (the pyramid shrinks by one per step). Whole tile rows are dealt out, so a warp
  // reads 32 consecutive words (no bank conflict). One barrier per step: the next step writes
  // the buffer this one read, which nobody reads any more once all have passed the barrier.
#pragma unroll
  for (int s = 1; s <= kSteps; ++s) {
    const int from = (s - 1) % 2;
    const int to = s % 2;
    for (int i = s * kCols + rank; i < (kRows - s) * kCols; i += kBlockingThreads) {
      const int r = i / kCols;
      const int k = i % kCols;
      if (k < s || k >= kCols - s) continue;
      const int row = top + r;
      const int col = left + k;
      float u_next = 0.0f;  // a cell outside the grid stays absent at every step
      float v_next = 0.0f;
      if (0 <= row && row < g.rows && 0 <= col && col < g.cols) {
        float box_u = 0.0f;
        float box_v = 0.0f;
#pragma unroll
        for (int dr = -1; dr <= 1; ++dr) {
#pragma unroll
          for (int dk = -1; dk <= 1; ++dk) {
            box_u += u_tile[from][r + dr][k + dk];
            box_v += v_tile[from][r + dr][k + dk];
          }
        }
        const int cells =
            (1 + (row > 0) + (row + 1 < g.rows)) * (1 + (col > 0) + (col + 1 < g.cols));
        nine_term_update(u_tile[from][r][k], v_tile[from][r][k], box_u, box_v,
                         static_cast<float>(cells), c, u_next, v_next);
      }
      u_tile[to][r][k] = u_next;
      v_tile[to][r][k] = v_next;
    }
    __syncthreads();
  }

  // Only the tile's interior is right after kSteps steps: write it back, inside the grid.
  constexpr int kLast = kSteps % 2;
  for (int i = rank; i < kBlockingTileRows * kBlockingTileCols; i += kBlockingThreads) {
    const int r = kSteps + i / kBlockingTileCols;
    const int k = kSteps + i % kBlockingTileCols;
    const int row = top + r;
    const int col = left + k;
    if (row < g.rows && col < g.cols) {
      out.u[offset(g, row, col)] = u_tile[kLast][r][k];
      out.v[offset(g, row, col)] = v_tile[kLast][r][k];
    }
  }
}

// ---- Exercise 3: a frame as a CUDA graph ------------------------------------------------------
// Advances the state by `steps` steps on `stream` through a CUDA graph. enqueue(steps) puts the
// launches on the stream and flips `parity` (which buffer holds the state) once per launch. The
// first time a (steps, parity) comes, its launches are recorded and instantiated; every time,
// the graph is replayed and `parity` left where those launches leave the state.
template <class Enqueue>
void advance_through_graph(FrameGraphs& graphs, cudaStream_t stream, int steps, int& parity,
                           Enqueue&& enqueue) {
  // A graph names the buffers its kernels read: one per step count and start buffer.
  const std::pair<int, int> key{steps, parity};
  auto found = graphs.find(key);
  if (found == graphs.end()) {
    const int parity_before = parity;
    GS_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      enqueue(steps);  // recorded, not run
    } catch (...) {    // leave no capture open on the stream
      cudaGraph_t broken = nullptr;
      cudaStreamEndCapture(stream, &broken);
      if (broken != nullptr) cudaGraphDestroy(broken);
      parity = parity_before;
      throw;
    }
    cudaGraph_t graph = nullptr;
    GS_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    RecordedGraph recorded{nullptr, parity};
    const cudaError_t status = cudaGraphInstantiate(&recorded.graph, graph, 0);
    cudaGraphDestroy(graph);  // the executable graph is a copy
    GS_CUDA_CHECK(status);
    parity = parity_before;  // nothing has run yet
    found = graphs.emplace(key, recorded).first;
  }
  GS_CUDA_CHECK(cudaGraphLaunch(found->second.graph, stream));
  parity = found->second.parity_after;
}
}  // namespace blocking
