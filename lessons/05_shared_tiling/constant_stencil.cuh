// Lesson 05: what the learner's file (shared_tile.cuh) is given: the generic stencil in constant
// memory. Read, not edited; stencil.cu includes it first.
#pragma once

#include <cuda_runtime.h>

#include "gs/gpu_stencil.hpp"

// Internal linkage, as in stencil.cu's anonymous namespace where it was defined: lesson 04 has a
// c_stencil of its own, in the same program.
namespace {

// The generic stencil in constant memory, as in lesson 04: the nine weights and the sum of the
// eight off-centre ones (the weight an interior cell subtracts times its own value).
__constant__ gs::GpuStencil c_stencil;

}  // namespace
