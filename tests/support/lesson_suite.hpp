/// @file lesson_suite.hpp
/// @brief The tests every lesson runs on every implementation it ships: advance a state on the
///        course's odd grid sizes and compare with the reference of common/, output poisoned
///        first; a generic implementation again with weights that are not all ones; a specialised
///        one must refuse them. Include it once in tests/test_lessonNN.cpp and instantiate it with
///        GS_LESSON_SUITE(GS_LESSON_NAMESPACE::implementations()).
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <limits>
#include <memory>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "check.hpp"
#include "gs/lesson.hpp"
#include "gs/reference.hpp"
#include "gs/stepper.hpp"

namespace gs {
/// @brief How gtest prints an implementation in a failure message.
inline void PrintTo(const Implementation& implementation, std::ostream* out) {
  *out << implementation.name;
}
}  // namespace gs

namespace gs::test {

/// @brief One comparison: a grid, a starting state and a number of steps.
struct Case {
  int rows;            ///< Grid rows.
  int cols;            ///< Grid columns.
  bool random;         ///< Random state (true) or the canonical initial condition (false).
  int steps;           ///< Steps to advance.
  std::uint64_t seed;  ///< Seed of the random state.
};

/// @brief The course's sizes, the most telling first: one step on a small odd grid (a learner's
///        first failure points at the formula), then the degenerate grids (1 x 1, one row, one
///        column), odd sizes that are not multiples of any vector or block width, many steps,
///        and one full 1080 x 1920 frame for a few steps.
inline std::vector<Case> standard_cases() {
  return {{5, 7, true, 1, 10},      {1, 1, true, 3, 11},       {1, 7, true, 5, 12},
          {7, 1, true, 5, 13},      {2, 3, true, 9, 14},       {17, 33, true, 1, 15},
          {17, 33, true, 37, 16},   {67, 131, true, 37, 17},   {67, 131, false, 64, 0},
          {255, 257, true, 20, 18}, {255, 257, false, 101, 0}, {1080, 1920, false, 4, 0},
          {1080, 1920, true, 3, 19}};
}

/// @brief How gtest prints a case in a failure message.
inline void PrintTo(const Case& c, std::ostream* out) {
  *out << c.rows << " x " << c.cols
       << (c.random ? " random (seed " + std::to_string(c.seed) + ")" : " canonical") << ", "
       << c.steps << " steps";
}

/// @brief A name made of letters, digits and underscores (what gtest accepts).
inline std::string test_name(std::string name) {
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

/// @brief Readable test name: implementation, size, state, steps.
inline std::string case_name(const std::string& implementation, const Case& c) {
  return test_name(implementation + "_" + std::to_string(c.rows) + "x" + std::to_string(c.cols) +
                   (c.random ? "_random_" : "_canonical_") + std::to_string(c.steps) + "steps");
}

/// @brief Parameter of the suite: an implementation (by name) and a case.
using SuiteParam = std::tuple<Implementation, Case>;

/// @brief The value-parameterized fixture behind GS_LESSON_SUITE.
class MatchesReference : public ::testing::TestWithParam<SuiteParam> {};

/// @brief The fixture of the tests with skewed stencil weights, one per implementation.
class StencilWeightsRule : public ::testing::TestWithParam<Implementation> {};

/// @brief Advances @p start with @p implementation and with the reference and compares.
inline void expect_matches_reference(const Implementation& implementation, const State& start,
                                     int steps) {
  const Rates rates;
  std::unique_ptr<Stepper> stepper = implementation.create();
  const State got = run_stepper(*stepper, start, rates, {steps});

  State expected = start;
  reference_advance(expected, rates, steps);
  EXPECT_TRUE(states_match(got, expected, kTolerance))
      << implementation.name << " after " << steps << " steps";

  // fetch_v must agree with fetch (it is what the output path uses).
  std::vector<float> v(start.size(), std::numeric_limits<float>::quiet_NaN());
  stepper->fetch_v(v.data());
  EXPECT_TRUE(
      fields_match("v (fetch_v)", start.rows, start.cols, v.data(), expected.v.data(), kTolerance));
}

/// @brief A generic implementation with kSkewedWeights on grids smaller than, larger than and
///        a multiple of common block shapes, against the reference in double; a specialised one
///        must refuse the weights in load() (it would silently compute the unit stencil).
inline void expect_weights_rule(const Implementation& implementation) {
  const Rates skewed = rates_with(kSkewedWeights);
  if (!implementation.generic) {
    const State start = random_state(9, 5, 23);
    std::unique_ptr<Stepper> stepper = implementation.create();
    EXPECT_THROW(stepper->load(start, skewed), InvalidParameter)
        << implementation.name << " hard-codes the unit stencil and must refuse other weights";
    return;
  }
  const int steps = 12;
  for (const auto& size :
       {std::pair<int, int>{9, 5}, std::pair<int, int>{37, 71}, std::pair<int, int>{16, 64}}) {
    const State start = random_state(size.first, size.second, 23);
    std::unique_ptr<Stepper> stepper = implementation.create();
    const State got = run_stepper(*stepper, start, skewed, {steps});
    State expected = start;
    reference_advance_in_double(expected, skewed, steps);
    EXPECT_TRUE(states_match(got, expected, kTolerance))
        << implementation.name << " with skewed weights, grid " << size.first << "x" << size.second;
  }
}

}  // namespace gs::test

/// @brief Defines the suite's tests and instantiates them for every implementation in
///        @p IMPLEMENTATIONS (a std::vector<gs::Implementation>): every standard case against
///        the reference, and the stencil-weights rule.
#define GS_LESSON_SUITE(IMPLEMENTATIONS)                                                          \
  TEST_P(MatchesReference, OnStandardCase) {                                                      \
    const ::gs::Implementation& impl = std::get<0>(GetParam());                                   \
    const ::gs::test::Case& c = std::get<1>(GetParam());                                          \
    if (impl.device == ::gs::Device::gpu) GS_REQUIRE_GPU();                                       \
    const ::gs::State start = c.random ? ::gs::random_state(c.rows, c.cols, c.seed)               \
                                       : ::gs::initial_state(c.rows, c.cols);                     \
    ::gs::test::expect_matches_reference(impl, start, c.steps);                                   \
  }                                                                                               \
  INSTANTIATE_TEST_SUITE_P(                                                                       \
      Lesson, MatchesReference,                                                                   \
      ::testing::Combine(::testing::ValuesIn(IMPLEMENTATIONS),                                    \
                         ::testing::ValuesIn(::gs::test::standard_cases())),                      \
      [](const ::testing::TestParamInfo<::gs::test::SuiteParam>& param_info) {                    \
        return ::gs::test::case_name(std::get<0>(param_info.param).name,                          \
                                     std::get<1>(param_info.param));                              \
      });                                                                                         \
  TEST_P(StencilWeightsRule, GenericMatchesSpecialisedRefuses) {                                  \
    if (GetParam().device == ::gs::Device::gpu) GS_REQUIRE_GPU();                                 \
    ::gs::test::expect_weights_rule(GetParam());                                                  \
  }                                                                                               \
  INSTANTIATE_TEST_SUITE_P(Lesson, StencilWeightsRule, ::testing::ValuesIn(IMPLEMENTATIONS),      \
                           [](const ::testing::TestParamInfo<::gs::Implementation>& param_info) { \
                             return ::gs::test::test_name(param_info.param.name);                 \
                           })

using gs::test::MatchesReference;
using gs::test::StencilWeightsRule;
