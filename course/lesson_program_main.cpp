// The program of a lesson that has a program of its own (GS_LESSON_NAMESPACE::program, e.g.
// lesson 08's ranks); cmake/GsLesson.cmake sets GS_LESSON_NAMESPACE and GS_PROGRAM_NAME.
#include "gs/lesson.hpp"

int main(int argc, char** argv) {
  return GS_LESSON_NAMESPACE::program(argc, argv, GS_PROGRAM_NAME);
}
