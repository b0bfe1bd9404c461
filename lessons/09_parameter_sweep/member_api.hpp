// Lesson 09's interface for the learner's file (member.hpp): what one member's code is given.
// The rates the batch shares and a member's own, the update of one cell (CPU and GPU share it),
// and with CUDA the resident kernel's budget and the sums of a row. sweep.cpp includes it before
// member.hpp; member.hpp includes it too, so that it compiles on its own.
#pragma once

#include <cstddef>

#include "gs/host_device.hpp"  // GS_HOST_DEVICE

namespace {

// The rates the whole batch shares, and those of one member's steps. Plain floats: they are
// passed to kernels by value.
struct SharedRates {
  float diffusion_u;
  float diffusion_v;
  float dt;
};

struct MemberRates {
  float diffusion_u;
  float diffusion_v;
  float dt;
  float feed;
  float kill;
};

// One explicit Euler step of one cell from its values u and v, the sums box_u and box_v of its
// 3x3 box (centre included, cells outside the grid counting 0) and the number `cells` of the
// box's cells inside the grid (9, 6 on an edge, 4 in a corner). With the unit stencil the
// Laplacian is box - cells * centre: the definition of docs/PROBLEM.md with the edge rule
// (neighbours outside the grid skipped), the form lesson 06 derives. CPU and GPU share it.
GS_HOST_DEVICE inline void update_cell(float u, float v, float box_u, float box_v, float cells,
                                       const MemberRates& r, float& u_next, float& v_next) {
  const float laplacian_u = box_u - cells * u;
  const float laplacian_v = box_v - cells * v;
  const float uvv = u * v * v;
  u_next = u + r.dt * (r.diffusion_u * laplacian_u - uvv + r.feed * (1.0f - u));
  v_next = v + r.dt * (r.diffusion_v * laplacian_v + uvv - (r.feed + r.kill) * v);
}

// The resident kernel's budget: at most 1024 threads a block (sweep.cpp's plan explains the
// choice of rows per thread).
constexpr int kMaxResidentThreads = 1024;

#if GS_HAVE_CUDA
constexpr int kMaxRowsPerPass = 8;

// One row of the 3x3 box around (row, col): the centre values and the sums left + centre +
// right, a cell outside the grid counting 0 (a row outside the grid is all zeros).
struct RowSums {
  float centre_u;
  float centre_v;
  float sum_u;
  float sum_v;
};

__device__ __forceinline__ RowSums row_sums(const float* u, const float* v, int row, int rows,
                                            int cols, int col, bool has_left, bool has_right) {
  if (row < 0 || row >= rows) return {0.0f, 0.0f, 0.0f, 0.0f};
  const int at = row * cols + col;
  RowSums s;
  s.centre_u = u[at];
  s.centre_v = v[at];
  s.sum_u = (has_left ? u[at - 1] : 0.0f) + s.centre_u + (has_right ? u[at + 1] : 0.0f);
  s.sum_v = (has_left ? v[at - 1] : 0.0f) + s.centre_v + (has_right ? v[at + 1] : 0.0f);
  return s;
}
#endif

}  // namespace
