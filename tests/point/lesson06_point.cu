// Lesson 06's point test, compiled into both suites (test_lesson06_exercise and _solution) by
// tests/CMakeLists.txt: nvcc compiles the learner's kernel here, launched by the test itself.
// tests/test_lesson06.cpp declares and calls these.
#include <string>

#include "lesson06_point.cuh"

namespace lesson06_point_entry {

std::string plan_problem() {
  return lesson06_point::plan_problem();
}

std::string launch_problem() {
  return lesson06_point::launch_problem();
}

}  // namespace lesson06_point_entry
