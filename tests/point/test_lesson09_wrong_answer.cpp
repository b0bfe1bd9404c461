// The wrong answers lesson 09's point tests must catch, for the right reason, one executable per
// fixture (tests/fixtures/09_parameter_sweep/<name>/member.hpp, chosen by the include path):
//  - members_share_a_kill_rate (GS_FIXTURE_SHARED_KILL): every member runs with member 0's k.
//    The independence test must name a member whose result changed with member 0's rates.
//  - global_every_step (GS_FIXTURE_GLOBAL_EVERY_STEP): the right numbers, through global memory
//    at every step. The residency test must name the barrier before which global memory changed.
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "lesson09_point.hpp"

namespace {

std::string said(const std::string& problem) {
  return problem.empty() ? std::string("nothing (it passed)") : problem;
}

}  // namespace

#if defined(GS_FIXTURE_SHARED_KILL)
TEST(Lesson09PointFixture, MembersSharingAKillRateFailTheIndependenceTest) {
  const std::string problem = lesson09_point::check_members_independent();
  std::cout << "the point test says: " << said(problem) << "\n";
  EXPECT_NE(problem.find("changing member 0's F and k changed member"), std::string::npos)
      << "the point test should fail the fixture whose members share member 0's kill rate, "
         "naming a member whose result changed with member 0's rates; it said: "
      << said(problem);
}
#elif defined(GS_FIXTURE_GLOBAL_EVERY_STEP)
TEST(Lesson09PointFixture, AKernelThroughGlobalMemoryEveryStepFailsTheResidencyTest) {
  EXPECT_EQ(lesson09_point::check_members_independent(), "")
      << "the fixture's members are independent: only residency should fail";
  const std::string problem = lesson09_point::check_kernel_stays_resident();
  std::cout << "the point test says: " << said(problem) << "\n";
  EXPECT_NE(problem.find("changed before barrier 2 of"), std::string::npos)
      << "the point test should fail the fixture that goes through global memory at every "
         "step, naming the barrier before which the member's cells in global memory changed; "
         "it said: "
      << said(problem);
}
#else
#error "name the fixture: GS_FIXTURE_SHARED_KILL or GS_FIXTURE_GLOBAL_EVERY_STEP"
#endif
