// The program of a lesson that provides a frame loop (lesson 07): the steppers of the lessons it
// uses (its registry, gs_add_lesson's USES), run through this lesson's loop. GS_LESSON_NAMESPACE
// and GS_PROGRAM_NAME are set by cmake/GsLesson.cmake.
#include "gs/lesson.hpp"
#include "gs/program.hpp"
#include "gs/registry.hpp"

int main(int argc, char** argv) {
  return gs::run_program(argc, argv, gs::all_implementations(), GS_PROGRAM_NAME,
                         "Gray-Scott School: " GS_PROGRAM_NAME
                         " (the steppers of the lessons it uses through this lesson's frame loop)",
                         GS_LESSON_NAMESPACE::frame_loop());
}
