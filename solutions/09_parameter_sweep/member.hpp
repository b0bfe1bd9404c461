// Lesson 09, the file you edit: one member of a batch — where it lives, its rates, the CPU loop
// over members, and the GPU kernel that keeps a whole member in one block's shared memory.
//
// A batch is B independent simulations ("members") of R x C cells. Each field is one array of
// B * R * C floats, member after member: cell (row, col) of member m is element
// member_offset(m, R, C) + row * C + col. Each member has its own feed rate F and kill rate k,
// feed[m] and kill[m]; Du, Dv and dt (SharedRates) are the same for the whole batch.
//
// It sees member_api.hpp, the lesson's interface: SharedRates, MemberRates, update_cell(),
// GS_HOST_DEVICE (`__host__ __device__` when nvcc compiles the lesson) and, with CUDA, RowSums,
// row_sums(), kMaxResidentThreads and kMaxRowsPerPass.
#pragma once

#include "member_api.hpp"

// Namespace batch_members: sweep.cpp calls batch_members::member_offset(),
// batch_members::member_rates(), batch_members::for_each_member() and launches
// batch_members::resident_kernel<rows per thread>.
namespace batch_members {

// The index of cell (0, 0) of member `member` in a field of members of `rows` x `cols` cells.
GS_HOST_DEVICE inline std::size_t member_offset(int member, int rows, int cols) {
  // 64-bit arithmetic from the first multiplication on: a batch easily holds more than 2^31
  // cells (1024 members of 1080 x 1920 are 2.1e9), and `member * rows * cols` in int would wrap
  // around before the conversion.
  return static_cast<std::size_t>(member) * static_cast<std::size_t>(rows) *
         static_cast<std::size_t>(cols);
}

// The rates of member `member`'s steps: the batch's Du, Dv and dt, and the member's own F and k.
GS_HOST_DEVICE inline MemberRates member_rates(const SharedRates& shared,
                                               const float* __restrict__ feed,
                                               const float* __restrict__ kill, int member) {
  return {shared.diffusion_u, shared.diffusion_v, shared.dt, feed[member], kill[member]};
}

// The CPU path: calls advance_member(m) once for every member m = 0 .. members - 1. Members are
// independent, so OpenMP may hand them to its threads in any order; each member is advanced by
// one thread from its first step to its last, so its result does not depend on the thread count.
// schedule(dynamic, 1): a member is millions of cell-updates, so handing them out one at a time
// costs nothing, and a thread that finishes early takes the next one instead of waiting.
template <typename AdvanceMember>
inline void for_each_member(int members, const AdvanceMember& advance_member) {
#pragma omp parallel for schedule(dynamic, 1)
  for (int member = 0; member < members; ++member) advance_member(member);
}

#if GS_HAVE_CUDA
// The resident kernel: block b advances member b by `steps` steps without leaving the chip.
// Launched with one block per member, 2 * rows * cols floats of dynamic shared memory and at
// least cols * ceil(rows / kRowsPerThread) threads (sweep.cpp, plan_gpu()).
//
// Shared memory holds one copy of u and v; registers hold the second. Thread t owns a segment of
// kRowsPerThread rows of column t % cols (a warp: 32 consecutive columns, one bank each) and
// walks down it with a window of three rows, each row read once (row_sums) for three cells. A
// pass computes up to kMaxRowsPerPass new values into registers while every thread reads old
// values; a barrier; every thread writes its pass. What a later pass needs from rows already
// overwritten, it keeps in registers: the sums of the row above the pass (the window carries
// them over) and of the row below the segment (the next segment's first row, overwritten in
// that segment's first pass: read before the first barrier). A step is kPasses + 1 barriers.
template <int kRowsPerThread>
__global__ void __launch_bounds__(kMaxResidentThreads)
    resident_kernel(float* __restrict__ u, float* __restrict__ v, const float* __restrict__ feed,
                    const float* __restrict__ kill, SharedRates shared, int rows, int cols,
                    int steps) {
  constexpr int kRowsPerPass = kRowsPerThread < kMaxRowsPerPass ? kRowsPerThread : kMaxRowsPerPass;
  constexpr int kPasses = kRowsPerThread / kRowsPerPass;
  static_assert(kPasses * kRowsPerPass == kRowsPerThread, "whole passes only");
  // The block's dynamic shared memory, 2 * rows * cols floats. Keep its name: the host run of
  // the tests provides it under this one.
  extern __shared__ float member_fields[];
  const int cells = rows * cols;
  float* const su = member_fields;
  float* const sv = member_fields + cells;
  const int member = static_cast<int>(blockIdx.x);
  float* const gu = u + member_offset(member, rows, cols);
  float* const gv = v + member_offset(member, rows, cols);
  const MemberRates r = member_rates(shared, feed, kill, member);

  const int threads = static_cast<int>(blockDim.x);
  const int thread = static_cast<int>(threadIdx.x);
  for (int i = thread; i < cells; i += threads) {  // coalesced: consecutive threads, cells
    su[i] = gu[i];
    sv[i] = gv[i];
  }
  const int col = thread % cols;
  const int first_row = (thread / cols) * kRowsPerThread;
  const bool active = first_row < rows;  // threads past the last segment only join the barriers
  const bool has_left = col > 0;
  const bool has_right = col + 1 < cols;
  const float cols_present = 1.0f + static_cast<float>(has_left) + static_cast<float>(has_right);
  __syncthreads();

  for (int step = 0; step < steps; ++step) {
    RowSums above{};          // the row above the current row
    RowSums here{};           // the current row
    RowSums below_segment{};  // the row below the segment
    if (active) {
      above = row_sums(su, sv, first_row - 1, rows, cols, col, has_left, has_right);
      here = row_sums(su, sv, first_row, rows, cols, col, has_left, has_right);
      below_segment =
          row_sums(su, sv, first_row + kRowsPerThread, rows, cols, col, has_left, has_right);
    }
    // One pass after the other, as a loop: fully unrolled (#pragma unroll), the passes' values
    // stay live together and the kernel spills at 16 and 32 rows per thread (-Xptxas -v).
#pragma unroll 1
    for (int pass = 0; pass < kPasses; ++pass) {
      const int pass_row = first_row + pass * kRowsPerPass;
      float u_new[kRowsPerPass];
      float v_new[kRowsPerPass];
      if (active) {
#pragma unroll
        for (int i = 0; i < kRowsPerPass; ++i) {
          const int row = pass_row + i;
          const bool last = pass == kPasses - 1 && i == kRowsPerPass - 1;
          const RowSums below =
              last ? below_segment
                   : row_sums(su, sv, row + 1, rows, cols, col, has_left, has_right);
          const float rows_present =
              1.0f + static_cast<float>(row > 0) + static_cast<float>(row + 1 < rows);
          update_cell(here.centre_u, here.centre_v, above.sum_u + here.sum_u + below.sum_u,
                      above.sum_v + here.sum_v + below.sum_v, rows_present * cols_present, r,
                      u_new[i], v_new[i]);
          above = here;
          here = below;
        }
      }
      __syncthreads();  // every thread has read the old values this pass needs
      if (active) {
#pragma unroll
        for (int i = 0; i < kRowsPerPass; ++i) {
          const int row = pass_row + i;
          if (row < rows) {
            su[row * cols + col] = u_new[i];
            sv[row * cols + col] = v_new[i];
          }
        }
      }
    }
    __syncthreads();  // the new values are in place before the next step reads them
  }

  for (int i = thread; i < cells; i += threads) {
    gu[i] = su[i];
    gv[i] = sv[i];
  }
}
#endif  // GS_HAVE_CUDA

}  // namespace batch_members
