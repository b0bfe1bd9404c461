/// @file gpu_stencil.hpp
/// @brief The generic stencil as the GPU lessons (04, 05) keep it in constant memory: the nine
///        weights and the sum of the eight off-centre ones, computed once on the host. Plain C++:
///        the kernels' files declare `__constant__ gs::GpuStencil`.
#pragma once

#include "gs/params.hpp"

namespace gs {

/// @brief The weights and their off-centre sum, which an interior cell multiplies by its own
///        value: sum of w * (a_n - a_c) = (sum of w * a_n) - (sum of w) * a_c.
struct GpuStencil {
  StencilWeights weights;  ///< weights.w[1 + dr][1 + dc]
  float off_centre_sum;    ///< the eight off-centre weights added up (8 for the unit stencil)
};

/// @brief The GpuStencil of @p weights.
inline GpuStencil gpu_stencil(const StencilWeights& weights) {
  return {weights, off_centre_sum(weights)};
}

}  // namespace gs
