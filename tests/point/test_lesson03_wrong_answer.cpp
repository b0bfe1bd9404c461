// The wrong answer lesson 03's point test must catch, for the right reason:
// tests/fixtures/03_thrust/one_transform_per_field/fused_step.hpp gives the right numbers in two
// passes, one transform per field. The point test must count two passes.
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "lesson03_point.hpp"

TEST(Lesson03PointFixture, OneTransformPerFieldFailsThePointTest) {
  const std::string problem = lesson03_point::check_one_pass_per_step();
  const std::string said = problem.empty() ? std::string("nothing (it passed)") : problem;
  std::cout << "the point test says: " << said << "\n";
  EXPECT_NE(problem.find("started 2 parallel passes"), std::string::npos)
      << "the point test should fail the fixture that makes one transform per field, counting "
         "two passes; it said: "
      << said;
}
