// Lesson 06: every implementation against the reference on the course's sizes (GS_LESSON_SUITE),
// then what temporal blocking and graph replay can get wrong: step counts that are not
// multiples of the steps per launch (the shorter last launch), one advance() split into
// several (graphs recorded per step count and per buffer), a second load(), the shared-memory
// kernel on grids that are not multiples of its tile (tall, wide, smaller than one tile), the
// official grid through the launch plans that the benchmark uses, and those plans fitted to the
// device's limits (CTest runs this suite again under GS_DEVICE_LIMITS=t4 and =gtx1650, whose
// plans count 40 and 14 SMs, and under a small block of shared memory, where the shared-memory
// kernel makes fewer steps per launch).
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "gs/device_limits.hpp"
#include "gs/reference.hpp"
#include "launch_fit.hpp"
#include "lesson_suite.hpp"
#include "process.hpp"

GS_LESSON_SUITE(GS_LESSON_NAMESPACE::implementations());

// The lesson's point (tests/point/lesson06_point.cuh, compiled with the learner's kernel in
// tests/point/lesson06_point.cu): a launch makes several steps from one read of global memory.
// kBlockingSteps = 1 with a kernel right for one step gives the right numbers in every run,
// and fails this one (its fixture, tests/fixtures/06_fused_stencil/one_step_per_launch/, is run
// by lesson06.point_fixture).
namespace lesson06_point_entry {
std::string plan_problem();
std::string launch_problem();
}  // namespace lesson06_point_entry

TEST(Lesson06Point, OneLaunchMakesSeveralStepsOnChip) {
  const std::string plan = lesson06_point_entry::plan_problem();
  ASSERT_TRUE(plan.empty()) << plan;
  GS_REQUIRE_GPU();
  const std::string launch = lesson06_point_entry::launch_problem();
  EXPECT_TRUE(launch.empty()) << launch;
}

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

const std::vector<std::string> kGpuImplementations = {
    "l06-temporal",        "l06-temporal-launches", "l06-shared-blocking-graph",
    "l06-shared-blocking", "l06-fused-graph",       "l06-fused"};

const std::vector<std::string> kSharedBlocking = {"l06-shared-blocking",
                                                  "l06-shared-blocking-graph"};

class Lesson06StepCounts : public ::testing::TestWithParam<std::tuple<std::string, Grid>> {};

// Step counts around every launch boundary: every remainder path of the launch loop.
TEST_P(Lesson06StepCounts, MatchReferenceForEveryStepCount) {
  GS_REQUIRE_GPU();
  const std::string& name = std::get<0>(GetParam());
  const Grid grid = std::get<1>(GetParam());
  const gs::State start = gs::random_state(grid.rows, grid.cols, grid.seed);
  // Every count from 1 to 9 and a few larger ones: for any steps per launch up to 8 (the tuning
  // constants kStepsPerLaunch, stencil.cu, and kBlockingSteps, shared_blocking.cuh) that covers
  // one launch, one more, and every remainder of the last, shorter launch.
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

// The official grid through the launch plans the benchmark uses: for the register pyramid
// (plan_tiling) side strips and inner strips cut into row chunks of different heights, chunks
// offset from the top of the grid; for the shared-memory kernel 60 x 34 tiles, the last row of
// tiles cut by the grid; two launches of T steps and a shorter one (11 = 2 * 4 + 3 steps).
TEST(Lesson06Tiling, OfficialGridMatchesReference) {
  GS_REQUIRE_GPU();
  const gs::State start = gs::random_state(1080, 1920, 19);  // finite for these 11 steps
  const gs::State expected = reference(start, 11);
  for (const std::string name : {"l06-temporal", "l06-temporal-launches", "l06-shared-blocking"}) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(gs::test::states_match(run(name, start, {11}), expected, gs::test::kTolerance));
  }
}

// The shared-memory kernel's launches fit this GPU's limits: the learner's kBlockingSteps per
// launch where the tile fits a block, fewer (saying why) where it does not, never a block with
// more shared memory than a block gets.
TEST(Lesson06Limits, SharedBlockingFitsTheDevice) {
  GS_REQUIRE_GPU();
  const gs::DeviceLimits& limits = gs::device_limits();
  const auto fit = GS_LESSON_NAMESPACE::shared_blocking_fit(limits);
  ASSERT_GE(fit.steps_per_launch, 1) << fit.why_fewer << " (" << limits.describe() << ")";
  EXPECT_LE(fit.steps_per_launch, fit.most_steps);
  EXPECT_LE(fit.shared_bytes, limits.shared_per_block) << limits.describe();
  if (fit.steps_per_launch < fit.most_steps) {
    EXPECT_NE(fit.why_fewer.find(gs::bytes_text(limits.shared_per_block)), std::string::npos)
        << fit.why_fewer;
  } else {
    EXPECT_EQ(fit.why_fewer, "");
  }
}

// Less shared memory per block than the kernel takes: fewer steps per launch, each taking less;
// none at all when not even one step's tile fits (the stepper then refuses to load).
TEST(Lesson06Limits, SharedBlockingTakesFewerStepsWhereABlockHoldsLess) {
  GS_REQUIRE_GPU();
  const auto fit = GS_LESSON_NAMESPACE::shared_blocking_fit(gs::device_limits());
  if (fit.shared_bytes == 0) GTEST_SKIP() << "the kernel keeps nothing in shared memory yet";
  const std::string smaller = "shared_per_block=" + std::to_string(fit.shared_bytes - 1);
  const auto fewer =
      GS_LESSON_NAMESPACE::shared_blocking_fit(gs::reduce_limits(gs::device_limits(), smaller));
  EXPECT_LT(fewer.steps_per_launch, fit.steps_per_launch) << smaller;
  EXPECT_LT(fewer.shared_bytes, fit.shared_bytes) << smaller;
  EXPECT_NE(fewer.why_fewer.find("more than"), std::string::npos) << fewer.why_fewer;
  const auto none = GS_LESSON_NAMESPACE::shared_blocking_fit(
      gs::reduce_limits(gs::device_limits(), "shared_per_block=16"));
  EXPECT_EQ(none.steps_per_launch, 0) << "a tile of 16 bytes";
}

// The program says whose limits it plans with: announced once on stderr, beside the device in
// its report and in --device; a value it cannot read is refused before any work (exit 2).
TEST(Lesson06Limits, TheProgramSaysWhoseLimitsItPlansWith) {
  GS_REQUIRE_GPU();
  const std::string program = GS_LESSON_PROGRAM;
  const gs::test::Outcome run =
      gs::test::run("GS_DEVICE_LIMITS=gtx1650 " + program +
                    " --impl l06-temporal -r 64 -c 96 -n 2 -e 5" + " --no-output");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  for (const char* text : {"device limits: the limits of a GeForce GTX 1650 (GS_DEVICE_LIMITS=",
                           "with the limits of a GeForce GTX 1650"}) {
    EXPECT_NE(run.output.find(text), std::string::npos) << text << " in " << run.output;
  }
  const gs::test::Outcome report = gs::test::run("GS_DEVICE_LIMITS=t4 " + program + " --device");
  EXPECT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("limits          the limits of a Tesla T4"), std::string::npos)
      << report.output;
  const gs::test::Outcome refused = gs::test::run(
      "GS_DEVICE_LIMITS=sms=0 " + program + " --impl l06-temporal -r 8 -c 8 -n 1 --no-output");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("GS_DEVICE_LIMITS=sms=0: sms must be at least 1"),
            std::string::npos)
      << refused.output;
  // The same refusal where the device is read first: the device report and the benchmark.
  for (const std::string arguments :
       {" --device", " benchmark --impl l06-temporal -r 8 -c 8 -n 1 -e 1"}) {
    const gs::test::Outcome before = gs::test::run("GS_DEVICE_LIMITS=sms=0 " + program + arguments);
    EXPECT_EQ(before.exit_code, 2) << arguments << ": " << before.output;
    EXPECT_NE(before.output.find(": error: GS_DEVICE_LIMITS=sms=0: sms must be at least 1"),
              std::string::npos)
        << arguments << ": " << before.output;
  }
}

// The shared-memory kernel where a tile and its halo meet the grid's edges in every way: a grid
// smaller than one tile, sizes that are no multiple of the tile, a tall and a wide grid (one
// column or row of tiles, each cut by the grid), random and canonical states, step counts that
// are and are not multiples of the steps per launch. Outputs are poisoned before each fetch.
struct BlockingCase {
  int rows;
  int cols;
  bool random;
};

class Lesson06SharedBlocking
    : public ::testing::TestWithParam<std::tuple<std::string, BlockingCase>> {};

TEST_P(Lesson06SharedBlocking, MatchesReferenceOnOddGrids) {
  GS_REQUIRE_GPU();
  const std::string& name = std::get<0>(GetParam());
  const BlockingCase grid = std::get<1>(GetParam());
  const gs::State start = grid.random ? gs::random_state(grid.rows, grid.cols, 70 + grid.rows)
                                      : gs::initial_state(grid.rows, grid.cols);
  for (int steps : {1, 3, 4, 5, 13}) {
    SCOPED_TRACE(name + ", " + std::to_string(steps) + " steps in one advance()");
    EXPECT_TRUE(gs::test::states_match(run(name, start, {steps}), reference(start, steps),
                                       gs::test::kTolerance));
  }
  SCOPED_TRACE(name + ", advance(2); advance(7); advance(4)");
  EXPECT_TRUE(gs::test::states_match(run(name, start, {2, 7, 4}), reference(start, 13),
                                     gs::test::kTolerance));
}

INSTANTIATE_TEST_SUITE_P(
    Lesson06, Lesson06SharedBlocking,
    ::testing::Combine(::testing::ValuesIn(kSharedBlocking),
                       ::testing::Values(BlockingCase{1, 1, true}, BlockingCase{5, 7, true},
                                         BlockingCase{17, 33, true}, BlockingCase{67, 131, false},
                                         BlockingCase{67, 131, true}, BlockingCase{255, 257, true},
                                         BlockingCase{523, 11, true}, BlockingCase{11, 523, true},
                                         BlockingCase{64, 96, true})),
    [](const ::testing::TestParamInfo<std::tuple<std::string, BlockingCase>>& param_info) {
      const BlockingCase& grid = std::get<1>(param_info.param);
      return gs::test::test_name(std::get<0>(param_info.param) + "_" + std::to_string(grid.rows) +
                                 "x" + std::to_string(grid.cols) +
                                 (grid.random ? "_random" : "_canonical"));
    });

INSTANTIATE_TEST_SUITE_P(
    Lesson06, Lesson06StepCounts,
    ::testing::Combine(::testing::ValuesIn(kGpuImplementations),
                       ::testing::Values(Grid{67, 131, 61}, Grid{255, 257, 62})),
    [](const ::testing::TestParamInfo<std::tuple<std::string, Grid>>& param_info) {
      return gs::test::test_name(std::get<0>(param_info.param) + "_" +
                                 std::to_string(std::get<1>(param_info.param).rows) + "x" +
                                 std::to_string(std::get<1>(param_info.param).cols));
    });

}  // namespace
