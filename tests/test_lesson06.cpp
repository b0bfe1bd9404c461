// Lesson 06: every implementation against the reference on the course's sizes (GS_LESSON_SUITE),
// then what temporal blocking and graph replay can get wrong: step counts that are not
// multiples of the steps per launch (the shorter last launch), one advance() split into
// several (graphs recorded per step count and per buffer), a second load(), and the official
// grid through the launch plan that the benchmark uses.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "gs/reference.hpp"
#include "lesson_suite.hpp"

GS_LESSON_SUITE(GS_LESSON_NAMESPACE::implementations());

namespace {

const gs::Implementation& implementation(const std::string& name) {
  static const std::vector<gs::Implementation> all = GS_LESSON_NAMESPACE::implementations();
  const gs::Implementation* found = gs::find_implementation(all, name);
  if (found == nullptr) throw std::runtime_error("lesson 06 has no implementation " + name);
  return *found;
}

// Runs `name` from `start` through the given advance() calls and returns the state (fetched
// into a NaN-poisoned state, so unwritten cells show).
gs::State run(const std::string& name, const gs::State& start, const std::vector<int>& calls) {
  auto stepper = implementation(name).create();
  return gs::test::run_stepper(*stepper, start, gs::Rates{}, calls);
}

gs::State reference(const gs::State& start, int steps) {
  gs::State expected = start;
  gs::reference_advance(expected, gs::Rates{}, steps);
  return expected;
}

struct Grid {
  int rows;
  int cols;
  std::uint64_t seed;
};

const std::vector<std::string> kGpuImplementations = {"l06-temporal", "l06-temporal-launches",
                                                      "l06-fused-graph", "l06-fused"};

class Lesson06StepCounts : public ::testing::TestWithParam<std::tuple<std::string, Grid>> {};

// Step counts around every launch boundary: every remainder path of the launch loop.
TEST_P(Lesson06StepCounts, MatchReferenceForEveryStepCount) {
  GS_REQUIRE_GPU();
  const std::string& name = std::get<0>(GetParam());
  const Grid grid = std::get<1>(GetParam());
  const gs::State start = gs::random_state(grid.rows, grid.cols, grid.seed);
  // Every count from 1 to 9 and a few larger ones: for any steps per launch up to 8 (the tuning
  // constant kStepsPerLaunch, cell_update.cuh) that covers one launch, one more, and every
  // remainder of the last, shorter launch.
  for (int steps : {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 37, 100}) {
    SCOPED_TRACE(name + ", " + std::to_string(steps) + " steps in one advance()");
    EXPECT_TRUE(gs::test::states_match(run(name, start, {steps}), reference(start, steps),
                                       gs::test::kTolerance));
  }
}

// advance(5); advance(32); advance(1) is advance(38); and a frame of 32 steps replayed from
// the other buffer (a second recorded graph) still continues the same run.
TEST_P(Lesson06StepCounts, SplitAdvanceEqualsOneAdvance) {
  GS_REQUIRE_GPU();
  const std::string& name = std::get<0>(GetParam());
  const Grid grid = std::get<1>(GetParam());
  const gs::State start = gs::random_state(grid.rows, grid.cols, grid.seed + 1);
  const gs::State whole = run(name, start, {38});
  const gs::State split = run(name, start, {5, 32, 1});
  EXPECT_TRUE(gs::test::states_match(split, whole, gs::test::kTolerance / 10))
      << "advance(5); advance(32); advance(1) against advance(38)";
  EXPECT_TRUE(gs::test::states_match(split, reference(start, 38), gs::test::kTolerance));
  const gs::State longer = run(name, start, {5, 32, 1, 32, 32, 0, 3});
  EXPECT_TRUE(gs::test::states_match(longer, reference(start, 105), gs::test::kTolerance))
      << "advance(5, 32, 1, 32, 32, 0, 3)";
}

// load() again starts from the new state: nothing recorded for the old one is replayed.
TEST_P(Lesson06StepCounts, SecondLoadStartsAfresh) {
  GS_REQUIRE_GPU();
  const std::string& name = std::get<0>(GetParam());
  const Grid grid = std::get<1>(GetParam());
  const gs::State first = gs::random_state(grid.rows, grid.cols, grid.seed + 2);
  const gs::State second = gs::random_state(grid.rows + 3, grid.cols - 5, grid.seed + 3);
  gs::Rates rates;
  auto stepper = implementation(name).create();
  stepper->load(first, rates);
  stepper->advance(32);
  rates.feed = 0.03f;  // new rates too
  stepper->load(second, rates);
  stepper->advance(32);
  gs::State got = gs::test::poisoned_state(second.rows, second.cols);
  stepper->fetch(got);
  gs::State expected = second;
  gs::reference_advance(expected, rates, 32);
  EXPECT_TRUE(gs::test::states_match(got, expected, gs::test::kTolerance));
}

// The official grid through the launch plan the benchmark uses (plan_tiling): side strips and
// inner strips cut into row chunks of different heights, chunks offset from the top of the
// grid, two launches of T steps and a shorter one (11 = 2 * 4 + 3 steps).
TEST(Lesson06Tiling, OfficialGridMatchesReference) {
  GS_REQUIRE_GPU();
  const gs::State start = gs::random_state(1080, 1920, 19);  // finite for these 11 steps
  const gs::State expected = reference(start, 11);
  for (const std::string name : {"l06-temporal", "l06-temporal-launches"}) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(gs::test::states_match(run(name, start, {11}), expected, gs::test::kTolerance));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Lesson06, Lesson06StepCounts,
    ::testing::Combine(::testing::ValuesIn(kGpuImplementations),
                       ::testing::Values(Grid{67, 131, 61}, Grid{255, 257, 62})),
    [](const ::testing::TestParamInfo<std::tuple<std::string, Grid>>& param_info) {
      std::string name = std::get<0>(param_info.param) + "_" +
                         std::to_string(std::get<1>(param_info.param).rows) + "x" +
                         std::to_string(std::get<1>(param_info.param).cols);
      for (char& ch : name) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return name;
    });

}  // namespace
