/// @file check.hpp
/// @brief What every test of the course uses: NaN-poisoned outputs, comparisons that name the
///        worst cell, and a skip with a reason when no GPU is there.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gs/gpu.hpp"
#include "gs/params.hpp"
#include "gs/reference.hpp"
#include "gs/state.hpp"
#include "gs/stepper.hpp"

namespace gs::test {

/// @brief A state whose every value is NaN: a cell an implementation forgets to write stays NaN
///        and shows up in the comparison.
State poisoned_state(int rows, int cols);

/// @brief Loads @p start into @p stepper with @p rates, calls advance() once for each entry of
///        @p calls (that many steps), and fetches the result into a NaN-poisoned state, so that
///        a cell the stepper never wrote shows up as NaN.
State run_stepper(Stepper& stepper, const State& start, const Rates& rates,
                  const std::vector<int>& calls);

/// @brief Compares @p got with @p expected cell by cell (u and v). Passes when every value is
///        finite and within @p tolerance; otherwise the message names the worst cell (field,
///        row, column, both values, the error), how many cells are off and how many are NaN.
::testing::AssertionResult states_match(const State& got, const State& expected, double tolerance);

/// @brief The same check for one field given as flat arrays (e.g. a frame read from HDF5).
::testing::AssertionResult fields_match(const char* field, int rows, int cols, const float* got,
                                        const float* expected, double tolerance);

/// @brief Absolute tolerance of the comparisons with the reference: far above float32 rounding
///        over tens of steps (about 1e-6) and far below the error of a real bug (about 1e-2).
inline constexpr double kTolerance = 1e-4;

/// @brief Weights for the generic implementations' tests: asymmetric, with a centre weight that
///        must be ignored, so a kernel that reads w[c][r] instead of w[r][c], or counts the
///        centre, gets other numbers than gs::reference_advance_in_double().
inline constexpr StencilWeights kSkewedWeights = {{{0.50f, 1.00f, 0.25f},  //
                                                   {2.00f, 7.00f, 1.50f},
                                                   {0.75f, 1.25f, 0.40f}}};

/// @brief The course's default rates with the stencil @p weights.
inline Rates rates_with(const StencilWeights& weights) {
  Rates rates;
  rates.weights = weights;
  return rates;
}

}  // namespace gs::test

/// @brief Skips the current test, with the reason, unless a CUDA device answers.
#define GS_REQUIRE_GPU()                                                          \
  do {                                                                            \
    if (!::gs::gpu_status().available) GTEST_SKIP() << ::gs::gpu_status().reason; \
  } while (0)
