/// @file step_coefficients.hpp
/// @brief The rates of one explicit Euler step folded into the few numbers a kernel specialised
///        to the unit stencil needs, computed once on the host and passed to kernels by value
///        (lessons 06 and 11).
#pragma once

#include "gs/params.hpp"

namespace gs {

/// @brief dt and the rates, premultiplied: u' = keep_u u + dt_du L(u) - dt u v^2 + dt_feed,
///        v' = keep_v v + dt_dv L(v) + dt u v^2.
struct StepCoefficients {
  float dt_du;    ///< dt * Du
  float dt_dv;    ///< dt * Dv
  float dt;       ///< dt
  float dt_feed;  ///< dt * F
  float keep_u;   ///< 1 - dt * F: the share of u that feeding leaves
  float keep_v;   ///< 1 - dt * (F + k): the share of v that feeding and killing leave
};

/// @brief The StepCoefficients of @p rates.
inline StepCoefficients step_coefficients(const Rates& rates) {
  return {rates.dt * rates.diffusion_u,
          rates.dt * rates.diffusion_v,
          rates.dt,
          rates.dt * rates.feed,
          1.0f - rates.dt * rates.feed,
          1.0f - rates.dt * (rates.feed + rates.kill)};
}

}  // namespace gs
