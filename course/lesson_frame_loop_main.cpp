// The program of a lesson that provides a frame loop (lesson 07): every solution's steppers
// (the registry), run through this lesson's loop. GS_LESSON_NAMESPACE and GS_PROGRAM_NAME are
// set by cmake/GsLesson.cmake.
#include "gs/lesson.hpp"
#include "gs/program.hpp"
#include "gs/registry.hpp"

int main(int argc, char** argv) {
  return gs::run_program(argc, argv, gs::all_implementations(), GS_PROGRAM_NAME,
                         "Gray-Scott School: " GS_PROGRAM_NAME
                         " (every solution's steppers through this lesson's frame loop)",
                         GS_LESSON_NAMESPACE::frame_loop());
}
