// Lesson 01: every implementation against the reference on the course's sizes, the allocation
// behaviour the lesson measures (the reusing loop allocates nothing per step), and the lesson's
// point: update_interior() updates the interior, and only it, reading no weight.
#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include "lesson_suite.hpp"
#include "point/lesson01_point.hpp"

// Counts every allocation of this test program: what heaptrack shows in the lesson, as a test.
// (GCC cannot see that these operators pair malloc with free on purpose.)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
static std::atomic<long> g_allocations{0};
void* operator new(std::size_t bytes) {
  ++g_allocations;
  if (void* memory = std::malloc(bytes == 0 ? 1 : bytes)) return memory;
  throw std::bad_alloc();
}
void operator delete(void* memory) noexcept {
  std::free(memory);
}
void operator delete(void* memory, std::size_t) noexcept {
  std::free(memory);
}

GS_LESSON_SUITE(GS_LESSON_NAMESPACE::implementations());

namespace {

long allocations_during_advance(const char* name, int steps) {
  const std::vector<gs::Implementation> all = GS_LESSON_NAMESPACE::implementations();
  const gs::Implementation* impl = gs::find_implementation(all, name);
  if (impl == nullptr) return -1;
  auto stepper = impl->create();
  stepper->load(gs::initial_state(40, 60), gs::Rates{});
  const long before = g_allocations.load();
  stepper->advance(steps);
  return g_allocations.load() - before;
}

TEST(Lesson01Allocations, BufferedLoopsAllocateNothingPerStep) {
  EXPECT_EQ(allocations_during_advance("l01-naive", 10), 0);
  EXPECT_EQ(allocations_during_advance("l01-regular", 10), 0);
}

TEST(Lesson01Allocations, ArrayStyleAllocatesFiveArraysPerStep) {
  EXPECT_EQ(allocations_during_advance("l01-naive-alloc", 10), 10 * 5);
}

// The lesson's point (tests/point/lesson01_point.hpp): the interior loop is the regular part of
// the grid, so it writes no edge cell and reads no weight. The generic cell pasted into
// interior.hpp gives the right numbers with both (its fixtures, tests/fixtures/01_profiling/, are
// run by lesson01.point_fixture.*).
TEST(Lesson01Point, TheInteriorLoopLeavesTheEdgesAndReadsNoWeight) {
  const std::string problem = lesson01_point::check_interior_only_and_no_weights();
  EXPECT_EQ(problem, "") << problem;
}

}  // namespace
