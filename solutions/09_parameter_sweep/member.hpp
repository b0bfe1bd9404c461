// Lesson 09, the file you edit: where one member of a batch lives, and the CPU loop over members.
//
// A batch is B independent simulations ("members") of R x C cells. Each field is one array of
// B * R * C floats, member after member: cell (row, col) of member m is element
// member_offset(m, R, C) + row * C + col. Each member has its own feed rate F and kill rate k,
// feed[m] and kill[m]; Du, Dv and dt (SharedRates) are the same for the whole batch.
//
// Included by sweep.cpp after SharedRates, MemberRates and GS_HOST_DEVICE, which is
// `__host__ __device__` when nvcc compiles the lesson: the GPU kernels and the CPU loop call the
// same functions. README.md, "The exercise", has the hints.
#pragma once

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
// independent (no member reads another's cells), so OpenMP may hand them to its threads in any
// order; each member is advanced by one thread from its first step to its last, so its result
// does not depend on the thread count or on its neighbours in the batch. schedule(dynamic, 1):
// a member is thousands of cell-updates, so handing them out one at a time costs nothing, and a
// thread that finishes early (a member whose values became subnormal costs more on the CPU)
// takes the next one instead of waiting at the end.
template <typename AdvanceMember>
inline void for_each_member(int members, const AdvanceMember& advance_member) {
#pragma omp parallel for schedule(dynamic, 1)
  for (int member = 0; member < members; ++member) advance_member(member);
}
