// The main program's menu. CMake defines GS_HAVE_<lesson> for each solution it built.
#include "registry.hpp"

#include "gs/lessons.hpp"

namespace gs {

std::vector<Implementation> all_implementations() {
  std::vector<Implementation> all;
  [[maybe_unused]] auto add = [&all](std::vector<Implementation> more) {
    for (Implementation& impl : more) all.push_back(std::move(impl));
  };
  // GPU, fastest first.
#ifdef GS_HAVE_lesson06
  add(lesson06::implementations());
#endif
#ifdef GS_HAVE_lesson05
  add(lesson05::implementations());
#endif
#ifdef GS_HAVE_lesson04
  add(lesson04::implementations());
#endif
#ifdef GS_HAVE_lesson03
  add(lesson03::implementations());
#endif
  // CPU, fastest first.
#ifdef GS_HAVE_lesson02
  add(lesson02::implementations());
#endif
#ifdef GS_HAVE_lesson03_cpu
  add(lesson03_cpu::implementations());
#endif
#ifdef GS_HAVE_lesson01
  add(lesson01::implementations());
#endif
  all.push_back(reference_implementation());
  return all;
}

}  // namespace gs
