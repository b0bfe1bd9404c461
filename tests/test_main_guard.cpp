// How a program ends (gs/main_guard.hpp): a check made before any work, refused or passed, gives
// the course's exit code and one line on stderr, as guarded_main() would at the end of a run.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "gs/main_guard.hpp"
#include "gs/params.hpp"
#include "gs/program.hpp"

namespace {

struct Checked {
  int exit_code;
  std::string stderr_text;
};

Checked check(const std::function<void()>& body) {
  testing::internal::CaptureStderr();
  const int exit_code = gs::check_before_work("prog", body);
  return {exit_code, testing::internal::GetCapturedStderr()};
}

TEST(CheckBeforeWork, APassedCheckReturnsZeroAndPrintsNothing) {
  bool ran = false;
  const Checked got = check([&] { ran = true; });
  EXPECT_TRUE(ran);
  EXPECT_EQ(got.exit_code, gs::kExitSuccess);
  EXPECT_EQ(got.stderr_text, "");
}

TEST(CheckBeforeWork, AnInvalidParameterIsAUsageError) {
  const Checked got = check([] { throw gs::InvalidParameter("GS_DEVICE_LIMITS=sms=0: no"); });
  EXPECT_EQ(got.exit_code, gs::kExitUsage);
  EXPECT_EQ(got.stderr_text, "prog: error: GS_DEVICE_LIMITS=sms=0: no\n");
}

TEST(CheckBeforeWork, AnyOtherExceptionIsAFailureOnOneLine) {
  const Checked got = check([] { throw std::runtime_error("no CUDA-capable device"); });
  EXPECT_EQ(got.exit_code, gs::kExitFailure);
  EXPECT_EQ(got.stderr_text, "prog: error: no CUDA-capable device\n");
}

TEST(CheckBeforeWork, ARefusalKeepsItsExitCode) {
  const Checked got = check([] { throw gs::Refusal{gs::kExitNoGpu, "no GPU"}; });
  EXPECT_EQ(got.exit_code, gs::kExitNoGpu);
  EXPECT_EQ(got.stderr_text, "prog: error: no GPU\n");
}

}  // namespace
