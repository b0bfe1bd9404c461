// The program of every lesson that provides steppers: the course's flags, the frame loop, the
// output and the report come from common/; the lesson supplies only its implementations
// (GS_LESSON_NAMESPACE and GS_PROGRAM_NAME are set by cmake/GsLesson.cmake). The subcommand
// `benchmark` times them instead: `lesson04_exercise benchmark -n 100`.
#include <string>

#include "gs/benchmark.hpp"
#include "gs/lesson.hpp"
#include "gs/program.hpp"
#include "gs_commit.hpp"

int main(int argc, char** argv) {
  const std::vector<gs::Implementation> implementations = GS_LESSON_NAMESPACE::implementations();
  if (argc > 1 && std::string(argv[1]) == "benchmark") {
    return gs::run_benchmark(argc - 1, argv + 1, implementations, GS_PROGRAM_NAME " benchmark",
                             GS_GIT_COMMIT);
  }
  return gs::run_program(argc, argv, implementations, GS_PROGRAM_NAME,
                         "Gray-Scott School: " GS_PROGRAM_NAME " (`" GS_PROGRAM_NAME
                         " benchmark --help` times its implementations)");
}
