// Lesson 02: every implementation against the reference on the course's sizes, and the promise
// threads must keep: the headline implementation gives the same numbers with 1, 2 or 3 OpenMP
// threads (a row split differently among threads must not change any cell).
#include <omp.h>

#include <string>
#include <vector>

#include "gs/lessons.hpp"
#include "gs/reference.hpp"
#include "lesson_suite.hpp"

GS_LESSON_SUITE(lesson02::implementations());

namespace {

// Sets OpenMP's thread count for the lifetime of the object and puts the previous one back,
// even when an assertion returns early.
class ThreadCount {
 public:
  explicit ThreadCount(int threads) : previous_(omp_get_max_threads()) {
    omp_set_num_threads(threads);
  }
  ~ThreadCount() { omp_set_num_threads(previous_); }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;

 private:
  int previous_;
};

gs::State advance_with_threads(const gs::Implementation& impl, const gs::State& start,
                               const gs::Params& params, int steps, int threads) {
  const ThreadCount scoped(threads);
  auto stepper = impl.create();
  stepper->load(start, params);
  stepper->advance(steps);
  gs::State result = gs::test::poisoned_state(start.rows, start.cols);
  stepper->fetch(result);
  return result;
}

TEST(Lesson02Threads, HeadlineIsTheThreadedVectorLoop) {
  const std::vector<gs::Implementation> all = lesson02::implementations();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front().name, "l02-simd-omp") << "the best variant must come first";
}

TEST(Lesson02Threads, SameNumbersWithOneTwoAndThreeThreads) {
  const std::vector<gs::Implementation> all = lesson02::implementations();
  const gs::Implementation* headline = gs::find_implementation(all, "l02-simd-omp");
  ASSERT_NE(headline, nullptr);
  const int threads_before = omp_get_max_threads();

  const int rows = 67;
  const int cols = 131;
  const int steps = 37;
  gs::Params params;
  params.rows = rows;
  params.cols = cols;
  const gs::State start = gs::random_state(rows, cols, 2026);
  gs::State expected = start;
  gs::reference_advance(expected, params, steps);

  const gs::State one = advance_with_threads(*headline, start, params, steps, 1);
  EXPECT_TRUE(gs::test::states_match(one, expected, gs::test::kTolerance)) << "1 thread";
  for (int threads : {2, 3}) {
    const gs::State many = advance_with_threads(*headline, start, params, steps, threads);
    EXPECT_TRUE(gs::test::states_match(many, expected, gs::test::kTolerance))
        << threads << " threads against the reference";
    EXPECT_TRUE(gs::test::states_match(many, one, gs::test::kTolerance))
        << threads << " threads against 1 thread";
  }
  EXPECT_EQ(omp_get_max_threads(), threads_before) << "the thread count was not restored";
}

}  // namespace
