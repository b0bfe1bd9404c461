/// @file lessons.hpp
/// @brief The course map as code: each lesson's source defines the implementations() of its
///        namespace; the lesson programs, the tests, the main program and the benchmark call it.
#pragma once

#include <vector>

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
