// Parameter validation: every bad input is refused with a message naming its flag.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <limits>
#include <string>

#include "gs/params.hpp"

namespace {

std::string problems_of(const gs::Params& params) {
  std::string all;
  for (const std::string& problem : gs::find_problems(params)) all += problem + "\n";
  return all;
}

TEST(Params, DefaultsAreTheOfficialBenchmark) {
  const gs::Params p;
  EXPECT_EQ(p.rows, 1080);
  EXPECT_EQ(p.cols, 1920);
  EXPECT_EQ(p.frames, 1000);
  EXPECT_EQ(p.steps_per_frame, 32);
  EXPECT_EQ(p.output, "output.h5");
  EXPECT_FLOAT_EQ(p.rates.kill, 0.054f);
  EXPECT_FLOAT_EQ(p.rates.feed, 0.014f);
  EXPECT_FLOAT_EQ(p.rates.dt, 1.0f);
  EXPECT_FLOAT_EQ(p.rates.diffusion_u, 0.1f);
  EXPECT_FLOAT_EQ(p.rates.diffusion_v, 0.05f);
  EXPECT_TRUE(gs::is_unit_stencil(p.rates.weights));
  EXPECT_EQ(p.total_steps(), 32000);
  EXPECT_EQ(p.output_bytes(), 8294400000LL);
  EXPECT_TRUE(gs::find_problems(p).empty()) << problems_of(p);
  EXPECT_NO_THROW(gs::validate(p));
}

struct BadInput {
  const char* what;
  void (*apply)(gs::Params&);
  const char* flag;
};

class RefusesBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(RefusesBadInput, WithAMessageNamingTheFlag) {
  gs::Params params;
  GetParam().apply(params);
  const std::string problems = problems_of(params);
  EXPECT_NE(problems.find(GetParam().flag), std::string::npos)
      << GetParam().what << ": got \"" << problems << "\"";
  EXPECT_THROW(gs::validate(params), gs::InvalidParameter);
}

INSTANTIATE_TEST_SUITE_P(
    Params, RefusesBadInput,
    ::testing::Values(
        BadInput{"zero rows", [](gs::Params& p) { p.rows = 0; }, "-r/--nbrow must be at least 1"},
        BadInput{"negative cols", [](gs::Params& p) { p.cols = -3; }, "-c/--nbcol"},
        BadInput{"zero frames", [](gs::Params& p) { p.frames = 0; }, "-n/--nbimage"},
        BadInput{"zero steps", [](gs::Params& p) { p.steps_per_frame = 0; }, "-e/--nbextrastep"},
        BadInput{"zero kill", [](gs::Params& p) { p.rates.kill = 0.0f; }, "-k/--killrate"},
        BadInput{"negative feed", [](gs::Params& p) { p.rates.feed = -0.01f; }, "-f/--feedrate"},
        BadInput{"NaN dt", [](gs::Params& p) { p.rates.dt = std::nanf(""); }, "-t/--deltat"},
        BadInput{"zero Du", [](gs::Params& p) { p.rates.diffusion_u = 0.0f; }, "-u/--diffusion-u"},
        BadInput{
            "infinite Dv",
            [](gs::Params& p) { p.rates.diffusion_v = std::numeric_limits<float>::infinity(); },
            "-v/--diffusion-v"},
        BadInput{"subnormal feed", [](gs::Params& p) { p.rates.feed = 1e-40f; },
                 "-f/--feedrate is too small for float32"},
        BadInput{"unstable dt", [](gs::Params& p) { p.rates.dt = 2.0f; }, "unstable"},
        BadInput{"unstable Du", [](gs::Params& p) { p.rates.diffusion_u = 0.17f; }, "at most 1/6"},
        BadInput{"too many cells", [](gs::Params& p) { p.rows = p.cols = 50000; },
                 "at most 2147483647 cells"},
        BadInput{"empty output", [](gs::Params& p) { p.output.clear(); }, "-o/--output"}),
    [](const ::testing::TestParamInfo<BadInput>& param_info) {
      std::string name = param_info.param.what;
      for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      return name;
    });

TEST(Params, StabilityLimitIsInclusive) {
  gs::Params params;
  params.rates.dt = 1.0f;
  params.rates.diffusion_u = 1.0f / 6.0f;  // rounds just below 1/6 in float
  EXPECT_TRUE(gs::find_problems(params).empty()) << problems_of(params);
  params.rates.diffusion_u = 0.1667f;
  EXPECT_FALSE(gs::find_problems(params).empty());
}

TEST(Params, AllProblemsAreReportedTogether) {
  gs::Params params;
  params.rows = 0;
  params.cols = 0;
  params.rates.dt = 5.0f;
  EXPECT_EQ(gs::find_problems(params).size(), 3u) << problems_of(params);
}

// A rate given on a command line must become a normal float32 (or 0): not inf, not a subnormal.
TEST(Params, Float32ProblemNamesTheRange) {
  for (const double fine : {0.0, 0.014, -0.5, 3.4e38, -3.4e38, 1.2e-38, 1.0 / 6.0}) {
    EXPECT_EQ(gs::float32_problem(fine), "") << fine;
  }
  EXPECT_NE(gs::float32_problem(1e39).find("is too large for float32 (its magnitude must be at "
                                           "most 3.40282e+38; it would become infinite)"),
            std::string::npos);
  EXPECT_NE(gs::float32_problem(-1e39).find("too large"), std::string::npos);
  EXPECT_NE(gs::float32_problem(1e-46).find("is too small for float32 (its magnitude must be 0 or "
                                            "at least 1.17549e-38; it would become 0 or a "
                                            "subnormal number)"),
            std::string::npos);
  EXPECT_NE(gs::float32_problem(1e-40).find("too small"), std::string::npos) << "subnormal";
  EXPECT_EQ(gs::float32_problem(std::nan("")), "is not a finite number");
  EXPECT_EQ(gs::float32_problem(-std::numeric_limits<double>::infinity()),
            "is not a finite number");
}

// The size of the output saturates instead of overflowing a signed integer: a run that large is
// refused by the disk-room check with its size, not by undefined behaviour.
TEST(Params, OutputBytesSaturates) {
  gs::Params params;
  params.rows = 46340;
  params.cols = 46340;
  params.frames = 2147483647;
  EXPECT_EQ(params.output_bytes(), std::numeric_limits<std::int64_t>::max());
  params.frames = 2;
  EXPECT_EQ(params.output_bytes(), std::int64_t{46340} * 46340 * 4 * 2);
}

}  // namespace
