// Lesson 03: every implementation against the reference on the course's sizes, and the per-frame
// reduction of v seen through the Stepper interface: it must find every NaN and infinity (and
// count them), summarize the finite values like a host loop does, name the frame a diverging
// run broke at, and never stop a stable run. Built twice: against the CUDA backend
// (GS_LESSON_NAMESPACE = lesson03) and against the OpenMP backend (lesson03_cpu).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "gs/reference.hpp"
#include "lesson_suite.hpp"

GS_LESSON_SUITE(GS_LESSON_NAMESPACE::implementations());

namespace {

// Runs one advance(); returns the Diverged message, or "" when the call did not throw.
std::string divergence_of(gs::Stepper& stepper, int steps) {
  try {
    stepper.advance(steps);
  } catch (const gs::Diverged& error) {
    return error.what();
  }
  return "";
}

bool all_finite(const std::vector<float>& values) {
  for (float value : values) {
    if (!std::isfinite(value)) return false;
  }
  return true;
}

class Lesson03Check : public ::testing::TestWithParam<gs::Implementation> {
 protected:
  void SetUp() override {
    if (GetParam().device == gs::Device::gpu) GS_REQUIRE_GPU();
  }
  std::unique_ptr<gs::Stepper> make() const { return GetParam().create(); }
};

// Three non-finite values where a reduction most easily misses one: the first cell, the last
// cell (a partial last block), and one in the middle. advance(0) checks the loaded state itself.
TEST_P(Lesson03Check, ReductionCountsNonFiniteValuesAndSummarizesTheRest) {
  gs::State state = gs::random_state(67, 131, 31);
  const std::size_t last = state.size() - 1;
  state.v[0] = std::numeric_limits<float>::quiet_NaN();
  state.v[last / 2] = -std::numeric_limits<float>::infinity();
  state.v[last] = std::numeric_limits<float>::infinity();

  double sum = 0.0;
  float min = std::numeric_limits<float>::max();
  float max = -std::numeric_limits<float>::max();
  std::size_t finite = 0;
  for (float value : state.v) {
    if (!std::isfinite(value)) continue;
    sum += value;
    min = std::min(min, value);
    max = std::max(max, value);
    ++finite;
  }
  ASSERT_EQ(finite, state.size() - 3);

  auto stepper = make();
  stepper->load(state, gs::Rates{});
  const std::string message = divergence_of(*stepper, 0);
  ASSERT_NE(message, "") << "a state with NaN and infinities in v did not stop the run";
  EXPECT_NE(message.find("the simulation diverged at frame 1: 3 of 8777 values of v are not "
                         "finite"),
            std::string::npos)
      << message;

  std::smatch numbers;
  const std::regex summary(R"(mean ([-+0-9.eE]+), min ([-+0-9.eE]+), max ([-+0-9.eE]+))");
  ASSERT_TRUE(std::regex_search(message, numbers, summary)) << message;
  EXPECT_NEAR(std::stod(numbers[1].str()), sum / static_cast<double>(finite), 1e-6) << message;
  EXPECT_EQ(std::stof(numbers[2].str()), min) << message;
  EXPECT_EQ(std::stof(numbers[3].str()), max) << message;
}

// F = 50 is far outside the stable range: the state overflows within a few frames. The stepper
// must stop at the first frame whose v the reference finds not finite, and say which one
// (frames are advance() calls, counted from 1).
TEST_P(Lesson03Check, StopsADivergingRunAtTheFrameItDiverged) {
  const gs::State start = gs::random_state(33, 17, 41);
  gs::Rates rates;
  rates.feed = 50.0f;
  constexpr int kStepsPerFrame = 3;
  constexpr int kMaxFrames = 30;

  gs::State expected = start;
  int diverged_frame = 0;
  for (int frame = 1; frame <= kMaxFrames && diverged_frame == 0; ++frame) {
    gs::reference_advance(expected, rates, kStepsPerFrame);
    if (!all_finite(expected.v)) diverged_frame = frame;
  }
  ASSERT_GT(diverged_frame, 1) << "the test needs a run that stays finite for a frame or more";

  auto stepper = make();
  stepper->load(start, rates);
  int calls = 0;
  std::string message;
  while (message.empty() && calls < kMaxFrames) {
    message = divergence_of(*stepper, kStepsPerFrame);
    ++calls;
  }
  ASSERT_NE(message, "") << "no Diverged after " << kMaxFrames << " frames; the reference's v "
                         << "was not finite from frame " << diverged_frame;
  EXPECT_EQ(calls, diverged_frame) << message;
  EXPECT_NE(message.find("diverged at frame " + std::to_string(calls) + ":"), std::string::npos)
      << message;
}

// A stable run must never be stopped, and its frames still match the reference.
TEST_P(Lesson03Check, AStableRunIsNeverStopped) {
  const gs::State start = gs::initial_state(64, 96);
  const gs::Rates rates;
  auto stepper = make();
  stepper->load(start, rates);
  for (int frame = 1; frame <= 12; ++frame) {
    ASSERT_EQ(divergence_of(*stepper, 4), "") << "frame " << frame;
  }
  gs::State got;
  stepper->fetch(got);
  gs::State expected = start;
  gs::reference_advance(expected, rates, 12 * 4);
  EXPECT_TRUE(gs::test::states_match(got, expected, gs::test::kTolerance));
}

// load() starts a new run: the frame count starts again at 1 (gs_benchmark loads twice).
TEST_P(Lesson03Check, LoadRestartsTheFrameCount) {
  const gs::State finite = gs::random_state(9, 11, 51);
  auto stepper = make();
  stepper->load(finite, gs::Rates{});
  ASSERT_EQ(divergence_of(*stepper, 2), "");
  ASSERT_EQ(divergence_of(*stepper, 2), "");

  gs::State broken = finite;
  broken.v[40] = std::numeric_limits<float>::quiet_NaN();
  stepper->load(broken, gs::Rates{});
  const std::string message = divergence_of(*stepper, 0);
  EXPECT_NE(message.find("diverged at frame 1: 1 of 99 values"), std::string::npos)
      << (message.empty() ? "no Diverged for a NaN in v" : message);
}

INSTANTIATE_TEST_SUITE_P(Lesson, Lesson03Check,
                         ::testing::ValuesIn(GS_LESSON_NAMESPACE::implementations()),
                         [](const ::testing::TestParamInfo<gs::Implementation>& param_info) {
                           std::string name = param_info.param.name;
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

}  // namespace
