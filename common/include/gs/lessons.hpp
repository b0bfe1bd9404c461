/// @file lessons.hpp
/// @brief The course map as code: each lesson's source defines the implementations() of its
///        namespace; the lesson programs, the tests, the main program and the benchmark call it.
#pragma once

#include <memory>
#include <vector>

#include "gs/reference.hpp"
#include "gs/stepper.hpp"

/// @brief Declares `std::vector<gs::Implementation> NAMESPACE::implementations()`.
#define GS_DECLARE_LESSON(NAMESPACE)                 \
  namespace NAMESPACE {                              \
  std::vector<gs::Implementation> implementations(); \
  }

/// @brief Lesson 01, profiling a scalar loop: the naive generic loop and the "regular" one.
GS_DECLARE_LESSON(lesson01)
/// @brief Lesson 02, SIMD and threads.
GS_DECLARE_LESSON(lesson02)
/// @brief Lesson 03, Thrust transforms, CUDA backend.
GS_DECLARE_LESSON(lesson03)
/// @brief Lesson 03, Thrust transforms, OpenMP backend (the same source, on the CPU).
GS_DECLARE_LESSON(lesson03_cpu)
/// @brief Lesson 04, raw CUDA kernels.
GS_DECLARE_LESSON(lesson04)
/// @brief Lesson 05, shared-memory tiling.
GS_DECLARE_LESSON(lesson05)
/// @brief Lesson 06, fused 3x3 stencil and temporal blocking.
GS_DECLARE_LESSON(lesson06)

namespace lesson04 {
/// @brief Lesson 04's generic stepper with any @p weights and launch shape (block of
///        @p block_cols x @p block_rows threads, @p rows_per_thread = 1, 2 or 4): the tests check
///        it against gs::reference_advance_weighted().
std::unique_ptr<gs::Stepper> make_generic_stepper(const gs::StencilWeights& weights, int block_cols,
                                                  int block_rows, int rows_per_thread);
}  // namespace lesson04

namespace lesson05 {
/// @brief Lesson 05's tiled stepper ("l05-tiled") with any @p weights, for the same check.
std::unique_ptr<gs::Stepper> make_tiled_stepper(const gs::StencilWeights& weights);
}  // namespace lesson05
