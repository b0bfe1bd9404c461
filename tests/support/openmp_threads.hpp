/// @file openmp_threads.hpp
/// @brief For the tests of OpenMP code: a thread count set for a scope. Header-only, so that only
///        the suites that use OpenMP (lessons 02 and 09) need its flags.
#pragma once

#include <omp.h>

namespace gs::test {

/// @brief Sets OpenMP's thread count for the lifetime of the object and puts the previous one
///        back, even when an assertion returns early.
class ThreadCount {
 public:
  /// @brief Sets @p threads.
  explicit ThreadCount(int threads) : previous_(omp_get_max_threads()) {
    omp_set_num_threads(threads);
  }
  ~ThreadCount() { omp_set_num_threads(previous_); }
  ThreadCount(const ThreadCount&) = delete;             ///< Restores once.
  ThreadCount& operator=(const ThreadCount&) = delete;  ///< Restores once.

 private:
  int previous_;
};

}  // namespace gs::test
