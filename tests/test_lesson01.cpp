// Lesson 01: every implementation against the reference on the course's sizes, and the
// allocation behaviour the lesson measures (the reusing loop allocates nothing per step).
#include <atomic>
#include <cstdlib>
#include <new>

#include "lesson_suite.hpp"

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

}  // namespace
