// Lesson 03's point in its CPU suites (Thrust's OpenMP backend; tests/CMakeLists.txt adds this
// file to test_lesson03_exercise_cpu and test_lesson03_solution_cpu): one fused_transform() is
// one parallel pass over the cells (tests/point/lesson03_point.hpp). A transform per field gives
// the right numbers in two passes (its fixture, tests/fixtures/03_thrust/one_transform_per_field/,
// is run by lesson03_cpu.point_fixture).
#include <gtest/gtest.h>

#include <string>

#include "lesson03_point.hpp"

TEST(Lesson03Point, OneStepIsOneParallelPassOverTheCells) {
  const std::string problem = lesson03_point::check_one_pass_per_step();
  EXPECT_EQ(problem, "") << problem;
}
