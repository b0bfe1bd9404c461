// Lesson 03: what the learner's file (fused_step.hpp) is given, in both builds of the lesson
// (Thrust's CUDA backend, GS_THRUST_CUDA = 1, and its OpenMP backend, GS_THRUST_CUDA = 0): the
// Thrust the lesson uses, the functor marking nvcc needs, where algorithms run, the raw pointer
// of a device_vector, and what the per-frame reduction computes. Read, not edited; stencil.cpp
// includes it first.
#pragma once

#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/transform.h>
#include <thrust/tuple.h>

#include <cfloat>

#include "gs/params.hpp"

// Functors run on the GPU and on the host: nvcc must compile them for both (GS_HOST_DEVICE).
#include "gs/host_device.hpp"

// Internal linkage, as in stencil.cpp's anonymous namespace where these were defined: the two
// builds define on_device() differently, and one program links both.
namespace {

// Where Thrust algorithms run. Thrust's default CUDA policy (thrust::device) waits for the GPU
// at the end of every algorithm; par_nosync lets the launches of a frame queue up behind each
// other, as CuPy's do. The reduction at the end of a frame is where the host waits.
#if GS_THRUST_CUDA
inline auto on_device() {
  return thrust::cuda::par_nosync;
}
#else
inline auto on_device() {
  return thrust::device;
}
#endif

// The rates of the step (gs::Rates: plain floats, passed by value to the device).
using gs::Rates;

// The raw device pointer behind a device_vector, for functors that index neighbours.
template <typename T>
T* raw(thrust::device_vector<T>& vector) {
  return thrust::raw_pointer_cast(vector.data());
}
template <typename T>
const T* raw(const thrust::device_vector<T>& vector) {
  return thrust::raw_pointer_cast(vector.data());
}

// What the reduction at the end of every frame computes over v (stencil.cpp, section 3): how
// many values are not finite, and the sum, minimum and maximum of the finite ones.
struct FieldSummary {
  double sum;                     // of the finite values (double: 2 million floats add up)
  float min;                      // of the finite values
  float max;                      // of the finite values
  unsigned long long non_finite;  // NaN, +inf and -inf values
};

// The summary of no values at all: what a reduction starts from.
constexpr FieldSummary kEmptySummary{0.0, FLT_MAX, -FLT_MAX, 0};

}  // namespace
