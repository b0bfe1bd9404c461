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
  // TODO(lesson 09): return where member `member`'s cells start: the members before it, each
  // rows * cols cells. Mind the type: a batch easily holds more than 2^31 cells. As shipped every
  // member reads and writes member 0's cells, and the tests fail.
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
  // TODO(lesson 09): share the members among OpenMP threads with one pragma, each member advanced
  // by one thread from its first step to its last. Which schedule, and why? (README.md). As
  // shipped one thread does every member: right numbers, one core.
  for (int member = 0; member < members; ++member) advance_member(member);
}
