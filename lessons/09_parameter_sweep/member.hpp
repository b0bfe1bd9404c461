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
// row_sums(), kMaxResidentThreads and kMaxRowsPerPass. HINTS.md has the hints, in levels.
#pragma once

#include "member_api.hpp"

// Namespace batch_members: sweep.cpp calls batch_members::member_offset(),
// batch_members::member_rates(), batch_members::for_each_member() and launches
// batch_members::resident_kernel<rows per thread>.
namespace batch_members {

// The index of cell (0, 0) of member `member` in a field of members of `rows` x `cols` cells.
GS_HOST_DEVICE inline std::size_t member_offset(int member, int rows, int cols) {
  // TODO(lesson 09): where member `member`'s cells start. A batch may hold more than 2^31 cells.
  // As shipped every member reads and writes member 0's cells.
  (void)member, (void)rows, (void)cols;
  return 0;
}

// The rates of member `member`'s steps: the batch's Du, Dv and dt, and the member's own F and k.
GS_HOST_DEVICE inline MemberRates member_rates(const SharedRates& shared,
                                               const float* __restrict__ feed,
                                               const float* __restrict__ kill, int member) {
  // TODO(lesson 09): the member's own F and k. As shipped every member gets member 0's.
  (void)member;
  return {shared.diffusion_u, shared.diffusion_v, shared.dt, feed[0], kill[0]};
}

// The CPU path: calls advance_member(m) once for every member m = 0 .. members - 1.
template <typename AdvanceMember>
inline void for_each_member(int members, const AdvanceMember& advance_member) {
  // TODO(lesson 09): share the members among OpenMP threads, each member advanced by one thread
  // from its first step to its last. As shipped one thread does every member: right numbers,
  // one core.
  for (int member = 0; member < members; ++member) advance_member(member);
}

#if GS_HAVE_CUDA
// The resident kernel: block b advances member b by `steps` steps without leaving the chip.
// Launched with one block per member, 2 * rows * cols floats of dynamic shared memory (one copy
// of u, then one of v) and at least cols * ceil(rows / kRowsPerThread) threads: one thread for
// each segment of kRowsPerThread rows of one column (sweep.cpp, plan_gpu()). At 1024 threads a
// thread has 64 registers: it can hold the new values of kMaxRowsPerPass rows, not more.
//
// The contract, which the tests check on every machine by running this kernel on the host, one
// std::thread per CUDA thread (tests/point/lesson09_point.hpp): the member's cells in global
// memory are read before the block's first __syncthreads() and written after its last one,
// never between (at the first barrier the tests replace them with NaN, and watch them at every
// later one); one member's F and k change only that member. The host run gives the kernel
// threadIdx, blockIdx, blockDim, __syncthreads(), member_fields below and member_api.hpp: use
// nothing else of CUDA here.
template <int kRowsPerThread>
__global__ void __launch_bounds__(kMaxResidentThreads)
    resident_kernel(float* __restrict__ u, float* __restrict__ v, const float* __restrict__ feed,
                    const float* __restrict__ kill, SharedRates shared, int rows, int cols,
                    int steps) {
  // The block's dynamic shared memory, 2 * rows * cols floats. Keep its name: the host run of
  // the tests provides it under this one.
  extern __shared__ float member_fields[];
  // TODO(lesson 09): advance this block's member `steps` steps with its own rates while its
  // cells stay in shared memory, so that global memory is read and written once per launch, not
  // once per step. What must hold: every new value comes from the old values of its 3 x 3 box,
  // though shared memory has room for one copy of each field only; and every thread, busy or
  // not, reaches every barrier. HINTS.md has the hints, in levels. As shipped the kernel does
  // nothing: every member comes back as it went in.
  (void)u, (void)v, (void)feed, (void)kill, (void)shared, (void)rows, (void)cols, (void)steps;
  (void)member_fields;
}
#endif  // GS_HAVE_CUDA

}  // namespace batch_members
