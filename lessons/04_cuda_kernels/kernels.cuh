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
  // TODO(lesson 04): launch `kernel` on enough blocks to cover all rows x cols cells, and check
  // the launch. As shipped nothing runs and every test fails.
  (void)kernel, (void)block, (void)rows_per_thread, (void)rows, (void)cols;
  (void)u, (void)v, (void)u_next, (void)v_next, (void)rates;
}

// 2. The first kernel: one thread per cell, every neighbour checked.
__global__ void checked_step(int rows, int cols, const float* __restrict__ u,
                             const float* __restrict__ v, float* __restrict__ u_next,
                             float* __restrict__ v_next, Rates rates) {
  // TODO(lesson 04): update this thread's cell (x runs along the columns) by the definition,
  // update_cell_checked(). The grid of blocks may hold more threads than the grid has cells.
  // As shipped the kernel writes nothing and l04-checked-32x8 fails its tests.
  (void)rows, (void)cols, (void)u, (void)v, (void)u_next, (void)v_next, (void)rates;
}

// 3. The generic kernel. Each thread owns kRowsPerThread cells of one column.
template <int kRowsPerThread>
__global__ void generic_step(int rows, int cols, const float* __restrict__ u,
                             const float* __restrict__ v, float* __restrict__ u_next,
                             float* __restrict__ v_next, Rates rates) {
  // TODO(lesson 04): update this thread's kRowsPerThread cells of one column with the weights of
  // c_stencil, loading each value it needs once, with no check where all eight neighbours
  // exist; cells on an edge of the grid follow the definition. x runs along the columns here
  // too: threads neighbouring in x update the same rows of neighbouring columns (the suite
  // checks it, thread by thread). As shipped the kernel writes nothing and every l04-generic*
  // test fails.
  (void)rows, (void)cols, (void)u, (void)v, (void)u_next, (void)v_next, (void)rates;
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
