// The wrong answers lesson 08's point test must catch, for the right reason, each built with one
// fixture of tests/fixtures/08_multi_gpu/ (GS_FIXTURE_ONE_SLOT or GS_FIXTURE_SIGNALS_BEFORE_FENCE):
// one slot for every exchange (a neighbour's unread rows are overwritten), and the flag raised
// before the rows are fenced (a neighbour reads them before they are visible).
#include <gtest/gtest.h>

#include <string>

#include "lesson08_point.hpp"

#if defined(GS_FIXTURE_ONE_SLOT)
constexpr const char* kExpected = "had not unpacked yet";
#else
constexpr const char* kExpected = "before they were fenced";
#endif

TEST(Lesson08PointFixture, ThePointTestFailsTheWrongAnswerForItsReason) {
  const std::string problem = lesson08_point::check_round();
  EXPECT_NE(problem.find(kExpected), std::string::npos)
      << "the point test should fail this fixture, saying \"" << kExpected
      << "\"; it said: " << (problem.empty() ? std::string("nothing (it passed)") : problem);
}
