// Lesson 04's point, checked on the host: x runs along the row. The threads of a warp are
// consecutive in x, so neighbouring threads in x must update neighbouring cells of one row (the
// same rows, the next column): then a warp's loads and stores are 32 consecutive floats, one
// coalesced transaction, instead of 32 rows' worth of sectors. A kernel that runs x down the
// columns, with a launch whose grid is transposed to match, gives the same numbers on every grid
// (every test of the suite passes) at the cost section 2 of the README measures.
//
// The walk: kernels.cuh compiled for the host (nvcc's host pass only; CUDA's names given their
// host meaning), each kernel run for one thread at a time, as a launch of each launch shape of
// kLaunchShapes (and checked_step in 32 x 8 blocks) would run it, the outputs poisoned with NaN
// before each thread: the cells it wrote are the ones no longer NaN. It looks at which cells
// each thread writes, not at the numbers (the suite's job). Used by tests/point/lesson04_point.cu
// (compiled into both suites, test_lesson04.cpp calls it) and by
// tests/point/test_lesson04_wrong_answer.cu (the fixture of a wrong answer,
// tests/fixtures/04_cuda_kernels/x_down_the_column/, which must fail it).
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "gs/cuda_check.hpp"
#include "gs/gpu_stencil.hpp"
#include "gs/params.hpp"

// Host code only: in nvcc's device pass none of this exists (the walk's kernels are host
// functions, and the suites' own kernels come from the lesson's stencil.cu).
#if !defined(__CUDA_ARCH__)

namespace lesson04_point::walk {

struct Index {
  unsigned x, y, z;
};
inline Index thread_index{0, 0, 0};
inline Index block_index{0, 0, 0};
inline Index block_dim{1, 1, 1};

}  // namespace lesson04_point::walk

// kernels.cuh (and cells.cuh, which it includes), at file scope, compiled as host functions: its
// names, of internal linkage (kernels::, and cells.cuh's anonymous namespace), are this
// translation unit's own, not the suite's (stencil.cu's) kernels. What they include from outside
// the lesson is included above.
#pragma push_macro("__global__")
#pragma push_macro("__device__")
#pragma push_macro("__constant__")
#pragma push_macro("__ldg")
#pragma push_macro("threadIdx")
#pragma push_macro("blockIdx")
#pragma push_macro("blockDim")
#undef __global__
#undef __device__
#undef __constant__
#define __global__
#define __device__
#define __constant__
#define __ldg(pointer) (*(pointer))
#define threadIdx ::lesson04_point::walk::thread_index
#define blockIdx ::lesson04_point::walk::block_index
#define blockDim ::lesson04_point::walk::block_dim
#include <kernels.cuh>  // the learner's (or the fixture's); launch_step() is never called here
#pragma pop_macro("blockDim")
#pragma pop_macro("blockIdx")
#pragma pop_macro("threadIdx")
#pragma pop_macro("__ldg")
#pragma pop_macro("__constant__")
#pragma pop_macro("__device__")
#pragma pop_macro("__global__")

namespace lesson04_point {

// The cells (row, col) one thread wrote.
struct Cell {
  int row, col;
};

// One launch shape: the threads of three blocks of a rows x cols grid (the first, one inside,
// the last) walked one at a time through `kernel`; "" when each thread wrote cells of one column
// and its neighbour in x the same rows of the next column, else the first pair that did not.
inline std::string check_shape(const std::string& name, StepKernel kernel, int block_cols,
                               int block_rows, int rows_per_thread) {
  constexpr int kRows = 45, kCols = 150;
  const int grid_x = (kCols + block_cols - 1) / block_cols;
  const int grid_y = (kRows + block_rows * rows_per_thread - 1) / (block_rows * rows_per_thread);
  // The fields with room around them: a thread that reads or writes past the grid stays in
  // memory of the walk's own (its writes there are reported).
  const std::size_t before = 4 * kCols, cells = static_cast<std::size_t>(kRows) * kCols;
  const std::size_t size = before + cells + static_cast<std::size_t>(kRows * 8 + 64) * kCols;
  std::vector<float> u(size, 0.5f), v(size, 0.25f);
  for (std::size_t i = 0; i < cells; ++i) {
    u[before + i] = 0.5f + 0.4f * std::sin(0.37f * static_cast<float>(i));
    v[before + i] = 0.25f + 0.2f * std::cos(0.53f * static_cast<float>(i));
  }
  const float poison = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> u_next(size, poison), v_next(size, poison);
  c_stencil = gs::gpu_stencil(gs::Rates{}.weights);
  walk::block_dim = {static_cast<unsigned>(block_cols), static_cast<unsigned>(block_rows), 1};

  std::ostringstream shape;
  shape << name << " (blocks of " << block_cols << " x " << block_rows << " threads, "
        << rows_per_thread << (rows_per_thread == 1 ? " cell" : " cells") << " per thread) on a "
        << kRows << " x " << kCols << " grid: ";
  std::string missing;  // the first thread of a block inside the grid that wrote nothing
  const int last_x = grid_x - 1, last_y = grid_y - 1;
  const int blocks[3][2] = {{0, 0}, {1 < grid_x ? 1 : 0, 1 < grid_y ? 1 : 0}, {last_x, last_y}};
  for (const auto& block : blocks) {
    walk::block_index = {static_cast<unsigned>(block[0]), static_cast<unsigned>(block[1]), 0};
    std::vector<std::vector<Cell>> wrote(static_cast<std::size_t>(block_cols) * block_rows);
    for (int ty = 0; ty < block_rows; ++ty) {
      for (int tx = 0; tx < block_cols; ++tx) {
        walk::thread_index = {static_cast<unsigned>(tx), static_cast<unsigned>(ty), 0};
        kernel(kRows, kCols, u.data() + before, v.data() + before, u_next.data() + before,
               v_next.data() + before, gs::Rates{});
        std::vector<Cell>& mine = wrote[static_cast<std::size_t>(ty) * block_cols + tx];
        for (std::size_t i = before; i < before + cells; ++i) {
          if (std::isnan(u_next[i]) && std::isnan(v_next[i])) continue;
          u_next[i] = poison;
          v_next[i] = poison;
          const int cell = static_cast<int>(i - before);
          mine.push_back({cell / kCols, cell % kCols});
          if (mine.back().col != mine.front().col) {
            return shape.str() + "thread (" + std::to_string(tx) + ", " + std::to_string(ty) +
                   ") of block (" + std::to_string(block[0]) + ", " + std::to_string(block[1]) +
                   ") wrote cells of two columns, " + std::to_string(mine.front().col) + " and " +
                   std::to_string(mine.back().col) + ": each thread updates cells of one column";
          }
        }
      }
    }
    // Outside the grid, once per block (nothing may be written there).
    for (std::size_t i = 0; i < size; ++i) {
      if (i == before) i += cells;
      if (!std::isnan(u_next[i]) || !std::isnan(v_next[i])) {
        return shape.str() + "a thread of block (" + std::to_string(block[0]) + ", " +
               std::to_string(block[1]) + ") wrote outside the grid";
      }
    }
    // A block inside the grid has no thread past its edge: each thread updates cells.
    const bool inside = (block[0] + 1) * block_cols <= kCols &&
                        (block[1] + 1) * block_rows * rows_per_thread <= kRows;
    for (std::size_t thread = 0; inside && thread < wrote.size(); ++thread) {
      if (!wrote[thread].empty()) continue;
      const int tx = static_cast<int>(thread) % block_cols,
                ty = static_cast<int>(thread) / block_cols;
      // Reported after the pairs below: a kernel whose threads all write shows its map first.
      missing = shape.str() + "thread (" + std::to_string(tx) + ", " + std::to_string(ty) +
                ") of block (" + std::to_string(block[0]) + ", " + std::to_string(block[1]) +
                "), a block inside the grid, updated no cell: each thread of the launch updates " +
                std::to_string(rows_per_thread) + (rows_per_thread == 1 ? " cell" : " cells") +
                " of one column";
      break;
    }
    // Neighbours in x (neighbours in a warp): the same rows, the next column.
    for (int ty = 0; ty < block_rows; ++ty) {
      for (int tx = 0; tx + 1 < block_cols; ++tx) {
        const std::vector<Cell>& left = wrote[static_cast<std::size_t>(ty) * block_cols + tx];
        const std::vector<Cell>& right = wrote[static_cast<std::size_t>(ty) * block_cols + tx + 1];
        if (left.empty() || right.empty()) continue;  // past the grid's edge
        const bool along_the_row =
            left.front().row == right.front().row && right.front().col == left.front().col + 1;
        if (along_the_row) continue;
        std::ostringstream pair;
        pair << "threads (" << tx << ", " << ty << ") and (" << tx + 1 << ", " << ty
             << ") of block (" << block[0] << ", " << block[1]
             << "), neighbours in a warp, updated cell (" << left.front().row << ", "
             << left.front().col << ") and cell (" << right.front().row << ", " << right.front().col
             << ") first. x runs along the row: threads consecutive in x "
             << "update consecutive cells of one row (the same rows, the next column), so that "
             << "a warp reads 32 neighbouring floats, one coalesced transaction, not 32 rows "
             << "(README.md, section 2)";
        return shape.str() + pair.str();
      }
    }
    if (!missing.empty()) return missing;
  }
  return "";
}

// checked_step in 32 x 8 blocks, and generic_step as every launch shape of kLaunchShapes.
inline std::string check_threads_along_rows() {
  std::string problem = check_shape("checked_step", kernels::checked_step, 32, 8, 1);
  for (const kernels::LaunchShape& shape : kernels::kLaunchShapes) {
    if (!problem.empty()) break;
    StepKernel kernel = nullptr;
    try {
      kernel = kernels::generic_kernel(shape.rows_per_thread);
    } catch (const std::exception& error) {
      return std::string(shape.name) + ": " + error.what();
    }
    problem = check_shape(
        std::string("generic_step<") + std::to_string(shape.rows_per_thread) + "> as " + shape.name,
        kernel, shape.block_cols, shape.block_rows, shape.rows_per_thread);
  }
  return problem;
}

}  // namespace lesson04_point

#endif  // !defined(__CUDA_ARCH__)
