// The programs of a lesson whose body is a Python module, lesson 10's (gs_add_python_lesson(),
// cmake/GsPythonLesson.cmake, builds this file four times, and once more per point fixture):
//   lesson10_exercise / lesson10_solution ARGS...          the Python the module was built for,
//                                                          with that variant's grayscott first on
//                                                          its path: python3 ARGS...
//   test_lesson10_exercise / test_lesson10_solution FLAGS  the same Python running the lesson's
//                                                          pytest suite: python3 -m pytest FLAGS
// A module is built for one interpreter (its ABI, its NumPy), so the programs start that one,
// whatever `python3` means in the shell. The process is replaced (exec): Ctrl-C, the exit status
// and compute-sanitizer see Python itself.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {

void prepend_path(const char* variable, const std::string& folder) {
  const char* old = std::getenv(variable);
  const std::string value = old != nullptr && *old != '\0' ? folder + ":" + old : folder;
  setenv(variable, value.c_str(), 1);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> arguments{GS_PYTHON_EXECUTABLE};
#if GS_RUN_PYTEST
  // -p no:cacheprovider: no .pytest_cache in the source tree; -rs: every skip with its reason.
  arguments.insert(arguments.end(), {"-m", "pytest", "-p", "no:cacheprovider", "-rs", "--rootdir",
                                     GS_BUILD_DIR, GS_TEST_FILE});
#endif
  for (int i = 1; i < argc; ++i) arguments.emplace_back(argv[i]);

  prepend_path("PYTHONPATH", GS_MODULE_DIR);
  setenv("GS_LESSON10_VARIANT", GS_LESSON_VARIANT, 1);
  setenv("GS_BUILD_DIR", GS_BUILD_DIR, 1);
#ifdef GS_GRAY_SCOTT
  // The gray_scott of the module's registry, whose list and messages the suite compares with the
  // module's: gray_scott itself for the solution, one of the exercise's registry for the exercise.
  setenv("GS_GRAY_SCOTT", GS_GRAY_SCOTT, 1);
#endif
  setenv("PYTHONDONTWRITEBYTECODE", "1", 0);  // no __pycache__ beside the tests and scripts
  // JAX takes 75 % of the GPU's memory at its first array unless told not to; CuPy and PyTorch
  // in the same process need some too.
  setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "false", 0);
  if (std::strlen(GS_ASAN_RUNTIME) > 0) {
    // A sanitized build: the module's AddressSanitizer runtime must be the first library of the
    // process; the interpreter's own allocations, kept until it exits, are not leaks to report.
    prepend_path("LD_PRELOAD", GS_ASAN_RUNTIME);
    setenv("ASAN_OPTIONS", "detect_leaks=0", 0);
    const std::string ubsan =
        std::string("halt_on_error=1:print_stacktrace=1:suppressions=") + GS_UBSAN_SUPPRESSIONS;
    setenv("UBSAN_OPTIONS", ubsan.c_str(), 0);
  }

  std::vector<char*> pointers;
  for (std::string& argument : arguments) pointers.push_back(argument.data());
  pointers.push_back(nullptr);
  execv(pointers[0], pointers.data());
  std::cerr << GS_PROGRAM_NAME << ": error: cannot start " << GS_PYTHON_EXECUTABLE << ": "
            << std::strerror(errno) << " (configure with -DPython_EXECUTABLE=...)\n";
  return 127;
}
