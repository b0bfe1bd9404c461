// Lesson 11's two kinds of warp, for the one walk down a band (on_chip.cpp) that both run: the
// GPU's (DeviceWarp: a value is one lane's float, the neighbours' values come through shuffles)
// and the host's (HostWarp: a value is the 32 lanes' floats side by side, advanced in lockstep),
// which lets the tests run the kernel's own walk on a machine without a GPU. Included once, by
// on_chip.cpp.
#pragma once

#if GS_HAVE_CUDA
#include <cuda_runtime.h>
#endif

// The walk below is a host-and-device template that calls the device warp's __device__
// functions only when instantiated for it: nvcc's check of that call is turned off for it.
// Loops over a lane's columns are unrolled on the GPU, so that its values stay in registers.
#if defined(__CUDACC__)
#define GS_WARP_TEMPLATE _Pragma("nv_exec_check_disable")
#else
#define GS_WARP_TEMPLATE
#endif
#if defined(__CUDA_ARCH__)
#define GS_UNROLL _Pragma("unroll")
#else
#define GS_UNROLL
#endif

namespace on_chip {
namespace {

constexpr int kWarpSize = 32;

// ---------------------------------------------------------------------------------------------
// Two kinds of warp
// ---------------------------------------------------------------------------------------------

// The host's warp: the 32 lanes' values side by side, advanced in lockstep.
struct Lanes {
  float lane[kWarpSize];
};
inline Lanes operator+(const Lanes& a, const Lanes& b) {
  Lanes r;
  for (int l = 0; l < kWarpSize; ++l) r.lane[l] = a.lane[l] + b.lane[l];
  return r;
}
inline Lanes operator*(const Lanes& a, const Lanes& b) {
  Lanes r;
  for (int l = 0; l < kWarpSize; ++l) r.lane[l] = a.lane[l] * b.lane[l];
  return r;
}
inline Lanes operator*(float a, const Lanes& b) {
  Lanes r;
  for (int l = 0; l < kWarpSize; ++l) r.lane[l] = a * b.lane[l];
  return r;
}

struct HostWarp {
  using Value = Lanes;
  // Lane l's columns of one kept row: [l kColumns, (l + 1) kColumns).
  template <int kColumns>
  static void load_row(const float* row, Value (&out)[kColumns]) {
    for (int l = 0; l < kWarpSize; ++l) {
      for (int j = 0; j < kColumns; ++j) out[j].lane[l] = row[l * kColumns + j];
    }
  }
  template <int kColumns>
  static void store_row(float* row, const Value (&in)[kColumns]) {
    for (int l = 0; l < kWarpSize; ++l) {
      for (int j = 0; j < kColumns; ++j) row[l * kColumns + j] = in[j].lane[l];
    }
  }
  // The value of the lane to the left and to the right (0 for lanes 0 and 31; the walk needs no
  // particular value there).
  static Value from_left(const Value& a) {
    Value r;
    r.lane[0] = 0.0f;
    for (int l = 1; l < kWarpSize; ++l) r.lane[l] = a.lane[l - 1];
    return r;
  }
  static Value from_right(const Value& a) {
    Value r;
    for (int l = 0; l + 1 < kWarpSize; ++l) r.lane[l] = a.lane[l + 1];
    r.lane[kWarpSize - 1] = 0.0f;
    return r;
  }
  static Value splat(float x) {
    Value r;
    for (float& value : r.lane) value = x;
    return r;
  }
  // f(lane) for each lane.
  template <class F>
  static Value per_lane(F f) {
    Value r;
    for (int l = 0; l < kWarpSize; ++l) r.lane[l] = f(l);
    return r;
  }
  // a b + c, lane by lane.
  static Value fma(const Value& a, const Value& b, const Value& c) {
    Value r;
    for (int l = 0; l < kWarpSize; ++l) r.lane[l] = a.lane[l] * b.lane[l] + c.lane[l];
    return r;
  }
};

#if GS_HAVE_CUDA
// The GPU's warp: each lane holds its own values; the neighbours' come through shuffles.
struct DeviceWarp {
  using Value = float;
  static constexpr unsigned kFullWarp = 0xffffffffu;
  // The lane's kColumns consecutive columns, in 16- or 8-byte accesses.
  template <int kColumns>
  __device__ static void load_row(const float* row, float (&out)[kColumns]) {
    const float* at = row + (threadIdx.x % kWarpSize) * kColumns;
    if constexpr (kColumns % 4 == 0) {
#pragma unroll
      for (int j = 0; j < kColumns; j += 4) {
        const float4 q = *reinterpret_cast<const float4*>(at + j);
        out[j] = q.x, out[j + 1] = q.y, out[j + 2] = q.z, out[j + 3] = q.w;
      }
    } else {
#pragma unroll
      for (int j = 0; j < kColumns; j += 2) {
        const float2 q = *reinterpret_cast<const float2*>(at + j);
        out[j] = q.x, out[j + 1] = q.y;
      }
    }
  }
  template <int kColumns>
  __device__ static void store_row(float* row, const float (&in)[kColumns]) {
    float* at = row + (threadIdx.x % kWarpSize) * kColumns;
    if constexpr (kColumns % 4 == 0) {
#pragma unroll
      for (int j = 0; j < kColumns; j += 4) {
        *reinterpret_cast<float4*>(at + j) = make_float4(in[j], in[j + 1], in[j + 2], in[j + 3]);
      }
    } else {
#pragma unroll
      for (int j = 0; j < kColumns; j += 2) {
        *reinterpret_cast<float2*>(at + j) = make_float2(in[j], in[j + 1]);
      }
    }
  }
  // Lane 0 gets its own value from the left and lane 31 its own from the right: the walk needs
  // no particular value there (on_chip.cpp says why), so no select is spent on it.
  __device__ static float from_left(float a) {
    return __shfl_up_sync(kFullWarp, a, 1);
  }
  __device__ static float from_right(float a) {
    return __shfl_down_sync(kFullWarp, a, 1);
  }
  __device__ static float splat(float x) {
    return x;
  }
  template <class F>
  __device__ static float per_lane(F f) {
    return f(static_cast<int>(threadIdx.x % kWarpSize));
  }
  __device__ static float fma(float a, float b, float c) {
    return fmaf(a, b, c);
  }
};
#endif

}  // namespace
}  // namespace on_chip
