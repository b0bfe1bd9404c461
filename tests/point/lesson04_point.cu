// Lesson 04's point test, compiled into both suites (test_lesson04_exercise and _solution) by
// tests/CMakeLists.txt: nvcc's host pass compiles the learner's kernels here as host functions,
// for the walk. tests/test_lesson04.cpp declares and calls this.
#include <string>

#include "lesson04_point.cuh"

#if !defined(__CUDA_ARCH__)
namespace lesson04_point_entry {

std::string check_threads_along_rows() {
  return lesson04_point::check_threads_along_rows();
}

}  // namespace lesson04_point_entry
#endif
