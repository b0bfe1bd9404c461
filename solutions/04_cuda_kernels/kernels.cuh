// Lesson 04, the file you edit, in namespace kernels: the two kernels, the launch, and the sweep's
// launch shapes. It sees only cells.cuh (Rates, by value; c_stencil, the nine weights and their
// off-centre sum in constant memory; update_cell_checked(), one cell by the definition;
// write_cell(), reaction and Euler update from two Laplacians; load_three(), three neighbouring
// values of a row; StepKernel) and gs/cuda_check.hpp (GS_CUDA_CHECK, GS_CUDA_CHECK_LAUNCH).
#pragma once

#include <stdexcept>
#include <string>

#include "cells.cuh"
#include "gs/cuda_check.hpp"

namespace kernels {
namespace {  // internal linkage, as cells.cuh's names (c_stencil)
// 1. One step on the GPU: `kernel` on a grid of blocks of `block` threads, each thread updating
// rows_per_thread cells of one column.
inline void launch_step(StepKernel kernel, dim3 block, int rows_per_thread, int rows, int cols,
                        const float* u, const float* v, float* u_next, float* v_next,
                        const Rates& rates) {
  // Enough blocks to cover the grid, rounded up; the kernels' bounds checks drop the rest.
  const int rows_per_block = static_cast<int>(block.y) * rows_per_thread;
  const dim3 grid((cols + block.x - 1) / block.x, (rows + rows_per_block - 1) / rows_per_block);
  kernel<<<grid, block>>>(rows, cols, u, v, u_next, v_next, rates);
  // A launch returns nothing: ask now whether it started (a block of more than 1024 threads, no
  // code for this GPU). A fault inside the kernel shows at the next call that waits.
  GS_CUDA_CHECK_LAUNCH();
}

// 2. The first kernel: one thread per cell, every neighbour checked.
__global__ void checked_step(int rows, int cols, const float* __restrict__ u,
                             const float* __restrict__ v, float* __restrict__ u_next,
                             float* __restrict__ v_next, Rates rates) {
  // The global index: block coordinates times block size plus the thread's place in its block.
  // x runs along columns, so the 32 threads of a warp read 32 neighbouring floats of one row.
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  // The bounds check: the grid of blocks is rounded up to whole blocks, so the last blocks
  // have threads past the last column or row. They must neither read nor write.
  if (row >= rows || col >= cols) return;
  update_cell_checked(rows, cols, row, col, u, v, u_next, v_next, rates);
}

// 3. The generic kernel. Each thread owns kRowsPerThread cells of one column. A thread whose cells
// all lie inside the grid (not on an edge row or column) takes the fast path: no check, the
// 3x3 window of each field in registers, each value loaded once and slid down from one cell
// to the next, the weights read from constant memory. Threads that touch an edge take the
// checked path, cell by cell; they are a few warps out of thousands.
template <int kRowsPerThread>
__global__ void generic_step(int rows, int cols, const float* __restrict__ u,
                             const float* __restrict__ v, float* __restrict__ u_next,
                             float* __restrict__ v_next, Rates rates) {
  // Global index and bounds check, as in checked_step; y now counts runs of kRowsPerThread rows.
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int first_row = (blockIdx.y * blockDim.y + threadIdx.y) * kRowsPerThread;
  if (col >= cols || first_row >= rows) return;

  const bool interior =
      col >= 1 && col <= cols - 2 && first_row >= 1 && first_row + kRowsPerThread <= rows - 1;
  if (!interior) {
    for (int i = 0; i < kRowsPerThread && first_row + i < rows; ++i) {
      update_cell_checked(rows, cols, first_row + i, col, u, v, u_next, v_next, rates);
    }
    return;
  }

  // window[0], [1], [2]: the row above, at and below the current cell, columns col-1..col+1.
  float u_window[3][3];
  float v_window[3][3];
  load_three(u, (first_row - 1) * cols + col, u_window[0]);
  load_three(v, (first_row - 1) * cols + col, v_window[0]);
  load_three(u, first_row * cols + col, u_window[1]);
  load_three(v, first_row * cols + col, v_window[1]);
#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i) {
    const int centre = (first_row + i) * cols + col;
    load_three(u, centre + cols, u_window[2]);
    load_three(v, centre + cols, v_window[2]);
    float sum_u = 0.0f;
    float sum_v = 0.0f;
#pragma unroll
    for (int r = 0; r < 3; ++r) {
#pragma unroll
      for (int c = 0; c < 3; ++c) {
        if (r == 1 && c == 1) continue;
        sum_u += c_stencil.weights.w[r][c] * u_window[r][c];
        sum_v += c_stencil.weights.w[r][c] * v_window[r][c];
      }
    }
    const float u_c = u_window[1][1];
    const float v_c = v_window[1][1];
    write_cell(centre, u_c, v_c, sum_u - c_stencil.off_centre_sum * u_c,
               sum_v - c_stencil.off_centre_sum * v_c, rates, u_next, v_next);
    // Slide the window down one row (register renaming once the loop is unrolled).
#pragma unroll
    for (int c = 0; c < 3; ++c) {
      u_window[0][c] = u_window[1][c];
      u_window[1][c] = u_window[2][c];
      v_window[0][c] = v_window[1][c];
      v_window[1][c] = v_window[2][c];
    }
  }
}

// generic_step compiled for each number of cells per thread that kLaunchShapes uses: a template
// exists in the program only for the counts it is instantiated with.
inline StepKernel generic_kernel(int rows_per_thread) {
  switch (rows_per_thread) {
    case 1:
      return generic_step<1>;
    case 2:
      return generic_step<2>;
    case 4:
      return generic_step<4>;
    default:
      throw std::invalid_argument("lesson04: generic_kernel() has no case for " +
                                  std::to_string(rows_per_thread) +
                                  " cells per thread: add one to its switch");
  }
}

// 4. The launch shapes of the block-size sweep (README.md): blocks of block_cols x block_rows
// threads, each thread updating rows_per_thread cells of one column. The first is the default:
// the sweep's best in the lesson's measurements (README.md, "Results").
struct LaunchShape {
  const char* name;
  int block_cols;
  int block_rows;
  int rows_per_thread;
  const char* summary;
};

inline constexpr LaunchShape kLaunchShapes[] = {
    {"l04-generic", 64, 2, 4,
     "generic 3x3 kernel, weights in constant memory, 64x2 blocks, 4 cells per thread"},
    {"l04-generic-32x4", 32, 4, 1, "generic kernel, 32x4 blocks, one cell per thread"},
    {"l04-generic-32x8", 32, 8, 1, "generic kernel, 32x8 blocks, one cell per thread"},
    {"l04-generic-32x16", 32, 16, 1, "generic kernel, 32x16 blocks, one cell per thread"},
    {"l04-generic-32x32", 32, 32, 1, "generic kernel, 32x32 blocks, one cell per thread"},
    {"l04-generic-64x4", 64, 4, 1, "generic kernel, 64x4 blocks, one cell per thread"},
    {"l04-generic-128x2", 128, 2, 1, "generic kernel, 128x2 blocks, one cell per thread"},
    {"l04-generic-32x8-2rows", 32, 8, 2,
     "generic kernel, 32x8 blocks, 2 cells of a column per thread"},
    {"l04-generic-32x4-4rows", 32, 4, 4,
     "generic kernel, 32x4 blocks, 4 cells of a column per thread"},
    {"l04-generic-64x2-4rows", 64, 2, 4,
     "generic kernel, 64x2 blocks, 4 cells of a column per thread"},
};
}  // namespace
}  // namespace kernels
