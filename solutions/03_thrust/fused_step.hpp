// Lesson 03, the file you edit: the upload, the per-frame reduction's two functors, and the
// fused step. It sees only what it includes: backend.hpp, which includes the Thrust the lesson
// uses and defines GS_HOST_DEVICE (__host__ __device__ under nvcc), on_device() (the execution
// policy), raw() (the device pointer of a device_vector), Rates, FieldSummary and kEmptySummary;
// and gs::State. The same file is compiled for Thrust's CUDA backend and for its OpenMP backend.
#pragma once

#include "backend.hpp"
#include "gs/state.hpp"

// Namespace fused (stencil.cpp calls fused::upload(), fused::fused_transform(), ...), its names
// of internal linkage, as backend.hpp's: the lesson's two builds (Thrust's CUDA and OpenMP
// backends) both compile this file, and one program links both.
namespace fused {
namespace {

// 1. The one upload: host memory -> device memory, across PCIe. device_vector::assign takes two
// host iterators and copies once.
inline void upload(const gs::State& state, thrust::device_vector<float>& u,
                   thrust::device_vector<float>& v) {
  u.assign(state.u.begin(), state.u.end());
  v.assign(state.v.begin(), state.v.end());
}

// 2. The reduction of v at the end of every frame (a diverging run must stop there): each value
// becomes a FieldSummary (SummarizeValue), and the reduction folds summaries two by two, in any
// grouping and order the parallel machine likes (CombineSummaries), starting from kEmptySummary.
// So the combination must be associative and commutative, and kEmptySummary must change nothing
// it is combined with: a sum of zero, a minimum of +FLT_MAX, a maximum of -FLT_MAX.

// One value of v as a summary. A NaN fails both comparisons and an infinity one of them.
struct SummarizeValue {
  GS_HOST_DEVICE FieldSummary operator()(float value) const {
    if (value >= -FLT_MAX && value <= FLT_MAX) return FieldSummary{value, value, value, 0};
    return FieldSummary{0.0, FLT_MAX, -FLT_MAX, 1};
  }
};

// Two summaries as one: sums and counts add, minima and maxima compare.
struct CombineSummaries {
  GS_HOST_DEVICE FieldSummary operator()(const FieldSummary& a, const FieldSummary& b) const {
    return FieldSummary{a.sum + b.sum, a.min < b.min ? a.min : b.min, a.max > b.max ? a.max : b.max,
                        a.non_finite + b.non_finite};
  }
};

// 3. One cell's whole update. thrust::transform calls it once per cell index (a counting_iterator
// supplies 0, 1, 2, ...) and writes the returned pair into u_next and v_next (a zip_iterator).
// The functor holds raw pointers to the current fields, so it can read the eight neighbours,
// which an element-wise transform could not. Neighbours outside the grid are skipped
// (docs/PROBLEM.md): L(a) = (sum of the in-grid neighbours) - N * a, with N = 8 inside, 5 on an
// edge, 3 in a corner.
struct FusedCellUpdate {
  const float* u;
  const float* v;
  int rows;
  int cols;
  Rates rates;

  GS_HOST_DEVICE thrust::tuple<float, float> operator()(int index) const {
    const float u_centre = u[index];
    const float v_centre = v[index];
    const int row = index / cols;
    const int col = index - row * cols;
    float sum_u = 0.0f;
    float sum_v = 0.0f;
    int neighbours = 0;
    if (row > 0 && row < rows - 1 && col > 0 && col < cols - 1) {
      // Inside: all eight neighbours exist; no check (only threads on an edge take the branch
      // below, so a warp rarely diverges).
      const int up = index - cols;
      const int down = index + cols;
      sum_u = u[up - 1] + u[up] + u[up + 1] + u[index - 1] + u[index + 1] + u[down - 1] + u[down] +
              u[down + 1];
      sum_v = v[up - 1] + v[up] + v[up + 1] + v[index - 1] + v[index + 1] + v[down - 1] + v[down] +
              v[down + 1];
      neighbours = 8;
    } else {
      for (int row_offset = -1; row_offset <= 1; ++row_offset) {
        for (int col_offset = -1; col_offset <= 1; ++col_offset) {
          const int r = row + row_offset;
          const int c = col + col_offset;
          if ((row_offset == 0 && col_offset == 0) || r < 0 || r >= rows || c < 0 || c >= cols) {
            continue;
          }
          sum_u += u[r * cols + c];
          sum_v += v[r * cols + c];
          ++neighbours;
        }
      }
    }
    const float laplacian_u = sum_u - static_cast<float>(neighbours) * u_centre;
    const float laplacian_v = sum_v - static_cast<float>(neighbours) * v_centre;
    const float uvv = u_centre * v_centre * v_centre;
    const float du_dt = rates.diffusion_u * laplacian_u - uvv + rates.feed * (1.0f - u_centre);
    const float dv_dt =
        rates.diffusion_v * laplacian_v + uvv - (rates.feed + rates.kill) * v_centre;
    return thrust::make_tuple(u_centre + rates.dt * du_dt, v_centre + rates.dt * dv_dt);
  }
};

// 4. One step: one transform over the cell indices 0 .. rows * cols - 1 that writes each cell's
// pair into u_next and v_next at once. One kernel on the GPU; on_device() lets the launches of a
// frame queue up without waiting.
inline void fused_transform(const thrust::device_vector<float>& u,
                            const thrust::device_vector<float>& v,
                            thrust::device_vector<float>& u_next,
                            thrust::device_vector<float>& v_next, int rows, int cols,
                            const Rates& rates) {
  const FusedCellUpdate update{raw(u), raw(v), rows, cols, rates};
  thrust::transform(
      on_device(), thrust::counting_iterator<int>(0), thrust::counting_iterator<int>(rows * cols),
      thrust::make_zip_iterator(thrust::make_tuple(u_next.begin(), v_next.begin())), update);
}

}  // namespace
}  // namespace fused
