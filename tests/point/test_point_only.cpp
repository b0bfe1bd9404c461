// A lesson's point test alone, built from the learner's file (or the solution's: the include
// folders say which) and nothing else of the course's lessons: the feedback of seconds for the
// lessons whose suites run on other lessons' steppers (07: a ring fed by lessons 02 and 06; 08:
// ranks running lessons 02 and 06; 09: the batch beside lessons 02 and 06). GS_POINT_LESSON picks
// the lesson. Targets test_lessonNN_point_exercise and test_lessonNN_point_solution.
#include <gtest/gtest.h>

#if GS_POINT_LESSON == 7
#include "lesson07_point.hpp"
TEST(PointOnly, Lesson07TheComputingThreadWaitsOnlyWhenTheRingIsFull) {
  EXPECT_EQ(lesson07_point::check_ring_waits_only_when_full(), "");
}
#elif GS_POINT_LESSON == 8
#include "lesson08_point.hpp"
TEST(PointOnly, Lesson08ThePeerRoundKeepsItsContractInEveryOrder) {
  EXPECT_EQ(lesson08_point::check_round(), "");
}
#elif GS_POINT_LESSON == 9
#include "lesson09_point.hpp"
TEST(PointOnly, Lesson09OneMembersRatesChangeOnlyItsOwnResult) {
  EXPECT_EQ(lesson09_point::check_members_independent(), "");
}
TEST(PointOnly, Lesson09TheResidentKernelTouchesGlobalMemoryOncePerLaunch) {
  EXPECT_EQ(lesson09_point::check_kernel_stays_resident(), "");
}
#else
#error "GS_POINT_LESSON must be 7, 8 or 9"
#endif
