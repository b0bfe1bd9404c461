// Lesson 05 - shared-memory tiling.
//
// Lesson 04's generic kernel reads every value nine times (once for itself, once for each of
// its eight neighbours) and leaves the reuse to the caches. Here each block first copies its
// tile of the grid, plus a one-cell halo on every side, into shared memory: every value
// crosses from global memory once per block, and the nine reads per cell go to shared memory.
// What that takes: a cooperative load (all threads of the block share the halo work), one
// __syncthreads() between the load and the reads, a layout without bank conflicts, and the
// edge rule inside the tile (cells outside the grid are loaded as zero and left out of the
// weight sum). README.md measures what it buys against lesson 04.
//
// Implementations, best first:
//   l05-tiled            32x8 tile, row stride 34: each warp reads one tile row, conflict-free;
//   l05-tiled-16x16      16x16 tile, row stride 18: a warp spans two tile rows and some of its
//                        lanes hit the same bank (a 2-way conflict on every read);
//   l05-tiled-16x16-pad  the same tile padded to a row stride of 48, which moves the second
//                        row of each warp onto the other sixteen banks.
// The exercise is shared_tile.cuh, the file you edit: the cooperative load, the barrier, and
// the update of a cell read from the tiles (README.md, "The exercise"; hints in HINTS.md).
#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "gs/cuda_check.hpp"
#include "gs/device_limits.hpp"
#include "gs/device_stepper.hpp"
#include "gs/gpu_stencil.hpp"
#include "gs/lesson.hpp"
// What shared_tile.cuh is given (it opens an anonymous namespace of its own): c_stencil, the
// weights in constant memory.
#include "constant_stencil.cuh"

// The exercise, in namespace shared_tile: load_tile(), the cooperative load of a tile and its
// halo, and the barrier; and update_from_tile(), one cell's step read from the tiles. Angle
// brackets: the build picks lessons/05_shared_tiling/shared_tile.cuh (your stubs) or the
// solution's copy. It compiles on its own (LEARNER_ALONE): it sees constant_stencil.cuh and
// gs::Rates, not this file.
#include <shared_tile.cuh>

namespace {

// ---------------------------------------------------------------------------------------------
// The kernel
// ---------------------------------------------------------------------------------------------

// The rates of the step (gs::Rates: plain floats, passed by value to the device).
using gs::Rates;

// The sum of the weights whose neighbour of (row, col) lies inside the grid. Absent neighbours
// are zeros in the tile, so they add nothing to the weighted sum of neighbours; this is the
// other half of the edge rule: L(a) = (sum of w * a_n) - (sum of those w) * a_c.
__device__ __forceinline__ float in_grid_weight_sum(int rows, int cols, int row, int col) {
  if (row >= 1 && row <= rows - 2 && col >= 1 && col <= cols - 2) {
    return c_stencil.off_centre_sum;
  }
  float sum = 0.0f;
  for (int dr = -1; dr <= 1; ++dr) {
    for (int dc = -1; dc <= 1; ++dc) {
      const int r = row + dr;
      const int c = col + dc;
      if ((dr == 0 && dc == 0) || r < 0 || r >= rows || c < 0 || c >= cols) continue;
      sum += c_stencil.weights.w[dr + 1][dc + 1];
    }
  }
  return sum;
}

// One block updates a kTileRows x kTileCols tile, one thread per cell. Shared memory holds the
// tile and its halo: tile[r][c] is grid cell (origin_row - 1 + r, origin_col - 1 + c).
// kRowStride >= kTileCols + 2 is the distance between two tile rows in shared memory; padding
// beyond kTileCols + 2 only changes which bank each row starts on.
template <int kTileCols, int kTileRows, int kRowStride>
__global__ void __launch_bounds__((kTileCols * kTileRows))
    tiled_step(int rows, int cols, const float* __restrict__ u, const float* __restrict__ v,
               float* __restrict__ u_next_out, float* __restrict__ v_next_out, Rates rates) {
  constexpr int kHaloCols = kTileCols + 2;
  constexpr int kHaloRows = kTileRows + 2;
  constexpr int kThreads = kTileCols * kTileRows;
  static_assert(kRowStride >= kHaloCols, "a tile row must hold the tile and its halo");
  static_assert(kThreads <= 1024, "a block has at most 1024 threads");
  static_assert(2 * kHaloRows * kRowStride * sizeof(float) <= 48 * 1024,
                "static shared memory: every GPU gives a block 48 KiB, no more");
  __shared__ float u_tile[kHaloRows][kRowStride];
  __shared__ float v_tile[kHaloRows][kRowStride];
  const int origin_row = blockIdx.y * kTileRows;
  const int origin_col = blockIdx.x * kTileCols;

  // The tile and its halo into shared memory, then the barrier (shared_tile.cuh).
  shared_tile::load_tile<kTileCols, kTileRows, kRowStride>(rows, cols, origin_row, origin_col, u, v,
                                                           u_tile, v_tile);

  // Only now may the threads without a cell (past the last row or column) leave.
  const int row = origin_row + static_cast<int>(threadIdx.y);
  const int col = origin_col + static_cast<int>(threadIdx.x);
  if (row >= rows || col >= cols) return;

  // This cell's place in the tile, its update read from the tiles (shared_tile.cuh), and the
  // write to global memory.
  const int tile_row = threadIdx.y + 1;
  const int tile_col = threadIdx.x + 1;
  float u_next;
  float v_next;
  shared_tile::update_from_tile<kTileRows, kRowStride>(u_tile, v_tile, tile_row, tile_col,
                                                       in_grid_weight_sum(rows, cols, row, col),
                                                       rates, u_next, v_next);
  u_next_out[row * cols + col] = u_next;
  v_next_out[row * cols + col] = v_next;
}

// ---------------------------------------------------------------------------------------------
// The stepper: launches (as in lesson 04)
// ---------------------------------------------------------------------------------------------

using StepKernel = void (*)(int, int, const float*, const float*, float*, float*, Rates);

// One launch per step, ping-pong; u, v and their next-step buffers on the device, the copies in
// and out and the wait are gs::DeviceStepper's (common/), on the legacy default stream.
class TiledStepper final : public gs::DeviceStepper {
 public:
  TiledStepper(StepKernel kernel, dim3 tile)
      : gs::DeviceStepper(gs::DeviceStream::legacy_default), kernel_(kernel), tile_(tile) {}

  void load(const gs::State& state, const Rates& rates) override {
    rates_ = rates;
    stencil_ = gs::gpu_stencil(rates.weights);
    load_fields(state, state.cols);
  }

  void advance(int steps) override {
    if (steps <= 0) return;
    GS_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_stencil, &stencil_, sizeof stencil_, 0,
                                          cudaMemcpyHostToDevice, nullptr));
    // One block per tile, the grid rounded up to whole tiles.
    const dim3 grid((cols() + tile_.x - 1) / tile_.x, (rows() + tile_.y - 1) / tile_.y);
    for (int step = 0; step < steps; ++step) {
      kernel_<<<grid, tile_>>>(rows(), cols(), current().u, current().v, next().u, next().v,
                               rates_);
      GS_CUDA_CHECK_LAUNCH();
      swap();
    }
  }

 private:
  StepKernel kernel_;
  dim3 tile_;
  gs::GpuStencil stencil_{};
  Rates rates_{};
};

// A tile's block must fit this GPU (gs::device_limits(): GS_DEVICE_LIMITS counts): its threads,
// its two tiles of shared memory, the kernel's registers; one that does not is refused before any
// launch, with the reason.
template <int kTileCols, int kTileRows, int kRowStride>
gs::Implementation tiled(const std::string& name, const std::string& summary) {
  return {name,
          "05_shared_tiling",
          summary,
          gs::Device::gpu,
          [name] {
            const StepKernel kernel = tiled_step<kTileCols, kTileRows, kRowStride>;
            gs::require_launch_fits(name, reinterpret_cast<const void*>(kernel),
                                    kTileCols * kTileRows, 0);
            return std::make_unique<TiledStepper>(kernel, dim3(kTileCols, kTileRows));
          },
          true};
}

}  // namespace

namespace GS_LESSON_NAMESPACE {

std::vector<gs::Implementation> implementations() {
  return {
      tiled<32, 8, 34>("l05-tiled", "32x8 tile + halo in shared memory, one barrier per step"),
      tiled<16, 16, 18>("l05-tiled-16x16",
                        "16x16 tile, row stride 18: 2-way bank conflicts on the stencil reads"),
      tiled<16, 16, 48>("l05-tiled-16x16-pad",
                        "16x16 tile padded to row stride 48: no bank conflicts on the reads"),
  };
}

}  // namespace GS_LESSON_NAMESPACE
