// Counts the OpenMP parallel regions a test program starts: what one Thrust algorithm on Thrust's
// OpenMP backend is (its for_each_n, under transform, copy and fill, is one `omp parallel for`).
// GCC compiles `#pragma omp parallel` into a call of libgomp's GOMP_parallel; the program is
// linked with --wrap=GOMP_parallel (tests/CMakeLists.txt), so every such call in its own code,
// Thrust's templates instantiated in it included, comes here first, is counted and goes on to
// libgomp. Used by lesson 03's point test (tests/point/lesson03_point.hpp).
#include <atomic>

#include "lesson03_point.hpp"

extern "C" {
void __real_GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags);
void __wrap_GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags);
}

namespace {
std::atomic<long> g_parallel_regions{0};
}  // namespace

void __wrap_GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) {
  ++g_parallel_regions;
  __real_GOMP_parallel(fn, data, num_threads, flags);
}

long lesson03_point::parallel_regions_started() {
  return g_parallel_regions.load();
}
