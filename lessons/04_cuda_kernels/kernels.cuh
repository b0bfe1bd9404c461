// Lesson 04, the file you edit: the two kernels, and the launch shapes the sweep measures.
//
// Included by stencil.cu after what the kernels use: Rates (gs::Rates, by value), c_stencil (the
// nine weights and their off-centre sum in constant memory), update_cell_checked() (one cell by
// the definition, every neighbour checked), write_cell() (reaction and Euler update from the two
// Laplacians), load_three() (three neighbouring values of a row) and StepKernel (the type of a
// step kernel).
#pragma once

// The first kernel: one thread per cell, every neighbour checked.
__global__ void checked_step(int rows, int cols, const float* __restrict__ u,
                             const float* __restrict__ v, float* __restrict__ u_next,
                             float* __restrict__ v_next, Rates rates) {
  // TODO(lesson 04): compute this thread's global (row, col) from blockIdx, blockDim and
  // threadIdx (x runs along columns), return at once if the cell lies outside the grid (the
  // grid of blocks is rounded up), then call update_cell_checked() for the cell. Until this is
  // written the kernel writes nothing and l04-checked-32x8 fails its tests.
  (void)rows, (void)cols, (void)u, (void)v, (void)u_next, (void)v_next, (void)rates;
}

// The generic kernel. Each thread owns kRowsPerThread cells of one column.
template <int kRowsPerThread>
__global__ void generic_step(int rows, int cols, const float* __restrict__ u,
                             const float* __restrict__ v, float* __restrict__ u_next,
                             float* __restrict__ v_next, Rates rates) {
  // TODO(lesson 04): the fast generic kernel. This thread owns kRowsPerThread cells of column
  // col, starting at row first_row = (global y index) * kRowsPerThread. Return if col or
  // first_row is outside the grid. If any of its cells lies on an edge row or column, update
  // them one by one with update_cell_checked() and return. Otherwise keep the 3x3 window of u
  // and v in registers (load_three() reads three values of a row), compute
  //   L(a) = sum of c_stencil.weights.w[r][c] * window[r][c] over the 8 off-centre entries
  //          - c_stencil.off_centre_sum * centre,
  // call write_cell(), slide the window down one row and load only the new row below.
  // Until this is written the kernel writes nothing and every l04-generic* test fails.
  (void)rows, (void)cols, (void)u, (void)v, (void)u_next, (void)v_next, (void)rates;
}

// generic_step compiled for a run of 1, 2 or 4 cells per thread.
inline StepKernel generic_kernel(int rows_per_thread) {
  switch (rows_per_thread) {
    case 1:
      return generic_step<1>;
    case 2:
      return generic_step<2>;
    case 4:
      return generic_step<4>;
    default:
      throw std::invalid_argument("lesson04: rows_per_thread must be 1, 2 or 4, not " +
                                  std::to_string(rows_per_thread));
  }
}

// The launch shapes of the block-size sweep (README.md): blocks of block_cols x block_rows
// threads, each thread updating rows_per_thread cells of one column. The first is the default,
// the best of the sweep on an H100.
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
