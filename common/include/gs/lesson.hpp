/// @file lesson.hpp
/// @brief What a lesson's body defines, in the namespace the build names GS_LESSON_NAMESPACE
///        (lesson01, lesson03_cpu, ...: cmake/GsLesson.cmake). The body, the lesson's program
///        and its test suite include this header; a body defines the one function its
///        gs_add_lesson(PROVIDES ...) promises.
#pragma once

#include <vector>

#include "gs/program.hpp"
#include "gs/stepper.hpp"

#ifdef GS_LESSON_NAMESPACE
namespace GS_LESSON_NAMESPACE {
/// @brief PROVIDES implementations: the lesson's steppers, fastest first.
std::vector<gs::Implementation> implementations();
/// @brief PROVIDES frame_loop: how the lesson gets frames to the file.
gs::FrameLoop frame_loop();
/// @brief PROVIDES program: a program of its own, named @p name in its messages.
int program(int argc, char** argv, const char* name);
}  // namespace GS_LESSON_NAMESPACE
#endif
