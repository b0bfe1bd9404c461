// The program of every lesson that provides steppers: the course's flags, the frame loop, the
// output and the report come from common/; the lesson supplies only its implementations
// (GS_LESSON_NAMESPACE and GS_PROGRAM_NAME are set by cmake/GsLesson.cmake). The subcommand
// `benchmark` times them instead: `lesson04_exercise benchmark -n 100`. An exercise program
// (built from the learner's files) first checks its implementations against the reference on a
// small grid and says so when they disagree: a stub's speed is not a result.
#include <string>

#include "gs/benchmark.hpp"
#include "gs/lesson.hpp"
#include "gs/program.hpp"
#include "gs/reference_check.hpp"
#include "gs_commit.hpp"

int main(int argc, char** argv) {
  const std::vector<gs::Implementation> implementations = GS_LESSON_NAMESPACE::implementations();
  const gs::ReferenceCheck check =
      std::string(GS_PROGRAM_NAME).find("_exercise") != std::string::npos
          ? gs::ReferenceCheck::before_work
          : gs::ReferenceCheck::off;
  if (argc > 1 && std::string(argv[1]) == "benchmark") {
    return gs::run_benchmark(argc - 1, argv + 1, implementations, GS_PROGRAM_NAME " benchmark",
                             GS_GIT_COMMIT, gs::synchronous_frame_loop(), check);
  }
  return gs::run_program(argc, argv, implementations, GS_PROGRAM_NAME,
                         "Gray-Scott School: " GS_PROGRAM_NAME " (`" GS_PROGRAM_NAME
                         " benchmark --help` times its implementations)",
                         gs::synchronous_frame_loop(), check);
}
