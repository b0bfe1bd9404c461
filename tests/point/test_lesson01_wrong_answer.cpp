// The wrong answers lesson 01's point test must catch, for the right reason, one executable per
// fixture (tests/fixtures/01_profiling/<name>/interior.hpp, chosen by the include path):
//  - generic_cell_on_the_interior (GS_FIXTURE_GENERIC_ON_INTERIOR): the generic cell, bounds
//    checks and weights, on the interior cells. The test must say that it read the weights.
//  - generic_cell_everywhere (GS_FIXTURE_GENERIC_EVERYWHERE): the generic cell on every cell. The
//    test must name an edge cell it wrote.
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "lesson01_point.hpp"

namespace {

std::string said(const std::string& problem) {
  return problem.empty() ? std::string("nothing (it passed)") : problem;
}

}  // namespace

#if defined(GS_FIXTURE_GENERIC_ON_INTERIOR)
TEST(Lesson01PointFixture, TheGenericCellOnTheInteriorFailsThePointTest) {
  const std::string problem = lesson01_point::check_interior_only_and_no_weights();
  std::cout << "the point test says: " << said(problem) << "\n";
  EXPECT_NE(problem.find("update_interior() read the weights"), std::string::npos)
      << "the point test should fail the fixture that runs the generic cell on the interior, "
         "saying that it read the weights; it said: "
      << said(problem);
}
#elif defined(GS_FIXTURE_GENERIC_EVERYWHERE)
TEST(Lesson01PointFixture, TheGenericCellEverywhereFailsThePointTest) {
  const std::string problem = lesson01_point::check_interior_only_and_no_weights();
  std::cout << "the point test says: " << said(problem) << "\n";
  EXPECT_NE(problem.find("an edge cell, was written"), std::string::npos)
      << "the point test should fail the fixture that runs the generic cell on every cell, "
         "naming an edge cell it wrote; it said: "
      << said(problem);
}
#else
#error "name the fixture: GS_FIXTURE_GENERIC_ON_INTERIOR or GS_FIXTURE_GENERIC_EVERYWHERE"
#endif
