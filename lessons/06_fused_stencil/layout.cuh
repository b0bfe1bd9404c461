// Lesson 06: what the learner's file (shared_blocking.cuh) is given: the coefficients of the
// update, the device layout every kernel indexes, the graphs a stepper records, and the CUDA
// error checks (gs/cuda_check.hpp). Read, not edited; stencil.cu includes it first.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <utility>

#include "gs/cuda_check.hpp"
#include "gs/step_coefficients.hpp"

// Internal linkage, as in stencil.cu's anonymous namespace where these were defined: other
// lessons of the same program have a Grid or Fields of their own.
namespace {

// The rates of one step folded into the few numbers the update needs: dt_du, dt_dv, dt, dt_feed,
// keep_u = 1 - dt F, keep_v = 1 - dt (F + k) (common/'s gs::StepCoefficients, computed on the
// host by gs::step_coefficients()).
using Coefficients = gs::StepCoefficients;

// The device layout, shared by every kernel: each field is `rows` rows of `pitch` floats; pitch
// is cols rounded up to 32 floats, so every row starts on a 128-byte line and 16-byte vector
// accesses stay aligned. The padding columns hold zeros.
constexpr int kRowAlignment = 32;

struct Grid {
  int rows;
  int cols;
  int pitch;
};

struct ConstFields {
  const float* u;
  const float* v;
};

struct Fields {
  float* u;
  float* v;
};

__device__ __forceinline__ std::size_t offset(const Grid& g, int row, int col) {
  return static_cast<std::size_t>(row) * static_cast<std::size_t>(g.pitch) +
         static_cast<std::size_t>(col);
}

// The graphs a stepper has recorded, by (steps, which buffer holds the state before): a graph
// names the buffers its kernels read and write, and an odd number of launches leaves the state
// in the other buffer.
struct RecordedGraph {
  cudaGraphExec_t graph;
  int parity_after;  // which buffer holds the state once the graph has run
};
using FrameGraphs = std::map<std::pair<int, int>, RecordedGraph>;

}  // namespace
