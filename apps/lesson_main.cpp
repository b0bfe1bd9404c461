// The program of every lesson: the course's flags, the frame loop, the output and the report
// come from common/; the lesson supplies only its implementations (GS_LESSON_NAMESPACE is set
// by cmake/GsLesson.cmake, e.g. lesson01).
#include "gs/lessons.hpp"
#include "gs/program.hpp"

int main(int argc, char** argv) {
  return gs::run_program(argc, argv, GS_LESSON_NAMESPACE::implementations(), GS_PROGRAM_NAME,
                         "Gray-Scott School: " GS_PROGRAM_NAME);
}
