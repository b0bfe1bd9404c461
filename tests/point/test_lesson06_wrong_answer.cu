// The wrong answer lesson 06's point test must catch, for the right reason:
// tests/fixtures/06_fused_stencil/one_step_per_launch/shared_blocking.cuh gives the right numbers
// (its kernel is right for one step, and kBlockingSteps = 1 never asks it for more) but crosses
// DRAM at every step. The point test must name kBlockingSteps on any machine, and on a GPU the
// launch of shared_blocking_kernel<2> that does not make two steps.
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "gs/gpu.hpp"
#include "lesson06_point.cuh"

TEST(Lesson06PointFixture, OneStepPerLaunchFailsThePointTest) {
  const std::string plan = lesson06_point::plan_problem();
  std::cout << "the point test says: " << (plan.empty() ? "nothing (it passed)" : plan) << "\n";
  EXPECT_NE(plan.find("kBlockingSteps is 1"), std::string::npos)
      << "the point test should fail the fixture that makes one step per launch, naming "
         "kBlockingSteps; it said: "
      << (plan.empty() ? std::string("nothing (it passed)") : plan);
  if (!gs::gpu_status().available) {
    std::cout << "no GPU (" << gs::gpu_status().reason << "): the launches are not checked\n";
    return;
  }
  const std::string launch = lesson06_point::launch_problem();
  std::cout << "the point test says: " << (launch.empty() ? "nothing (it passed)" : launch) << "\n";
  EXPECT_NE(launch.find("shared_blocking_kernel<2>"), std::string::npos)
      << "on a GPU, the point test should find that one launch of the kernel made for 2 steps "
         "does not advance 2 steps; it said: "
      << (launch.empty() ? std::string("nothing (it passed)") : launch);
}
