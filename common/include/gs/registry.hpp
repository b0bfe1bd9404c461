/// @file registry.hpp
/// @brief What this build contains, as the build wrote it (gs_write_lesson_files() in
///        cmake/GsLesson.cmake): every solution's implementations, fastest first, and the best
///        frame loop. What `gray_scott` picks from and what `gs_benchmark` measures.
///
/// The interface only: the definitions are generated from the lessons of the build, into the
/// libraries gs_registry (all_implementations) and gs_best_frame_loop (best_frame_loop), which a
/// target that calls them links. It lives in common/ so that a lesson that runs the registry's
/// steppers (08, 09, 10) includes nothing from the programs above it.
#pragma once

#include <vector>

#include "gs/program.hpp"
#include "gs/stepper.hpp"

namespace gs {

/// @brief The lessons' solutions that were built, GPU lessons first (fastest first within the
///        GPU and the CPU group, as measured in docs/BENCHMARKS.md), then the reference.
std::vector<Implementation> all_implementations();

/// @brief Lesson 07's asynchronous frame loop when it was built, else common/'s synchronous one.
FrameLoop best_frame_loop();

}  // namespace gs
