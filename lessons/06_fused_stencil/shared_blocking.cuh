// Lesson 06, the file you edit, in namespace blocking: the update of one cell specialised to the
// nine unit weights; a kernel that makes several steps per launch on a tile in shared memory; and
// the replay of a frame's launches as a CUDA graph. It sees only layout.cuh: Coefficients, the
// device layout (Grid, ConstFields, Fields, offset()), FrameGraphs and GS_CUDA_CHECK.
//
// HINTS.md, beside this file, has hints in three levels; open them one at a time.
#pragma once

#include "layout.cuh"

namespace blocking {
// ---- Exercise 1: one cell, nine unit weights --------------------------------------------------
// One explicit Euler step of one cell from its value, the sum `box` of its 3x3 box (centre
// included, absent cells counting 0) and the number `cells` of the box's cells that exist.
__device__ __forceinline__ void nine_term_update(float u, float v, float box_u, float box_v,
                                                 float cells, const Coefficients& c, float& u_next,
                                                 float& v_next) {
  // TODO(lesson 06): u_next and v_next from the coefficients c (README.md, section 2), in fused
  // multiply-adds. As shipped nothing changes.
  (void)box_u, (void)box_v, (void)cells, (void)c;
  u_next = u;
  v_next = v;
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
  // TODO(lesson 06): the tile and its halo of both fields in shared memory; kSteps steps there,
  // each with nine_term_update() and one barrier; then the tile's cells back to `out`. Cells
  // outside the grid are absent at every step (README.md, sections 4 and 5). As shipped nothing is
  // written.
  (void)in, (void)out, (void)g, (void)c;
}

// ---- Exercise 3: a frame as a CUDA graph ------------------------------------------------------
// Advances the state by `steps` steps on `stream` through a CUDA graph. enqueue(steps) puts the
// launches on the stream and flips `parity` (which buffer holds the state) once per launch. The
// first time a (steps, parity) comes, its launches are recorded and instantiated; every time,
// the graph is replayed and `parity` left where those launches leave the state.
template <class Enqueue>
void advance_through_graph(FrameGraphs& graphs, cudaStream_t stream, int steps, int& parity,
                           Enqueue&& enqueue) {
  // TODO(lesson 06): record (stream capture) once per key of `graphs`, instantiate, replay. If
  // enqueue() throws while recording, end the capture before passing the exception on. As
  // shipped nothing runs.
  (void)graphs, (void)stream, (void)steps, (void)parity, (void)enqueue;
}
}  // namespace blocking
