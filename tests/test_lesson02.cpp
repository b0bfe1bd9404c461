// Lesson 02: every implementation against the reference on the course's sizes, the promise
// threads must keep: each threaded implementation gives the same numbers with 1, 2 or 3 OpenMP
// threads (rows split differently among threads must not change any cell), and the lesson's
// point for the row loop: the ghost ring, not branches on the column, makes the edges.
#include <omp.h>

#include <string>
#include <vector>

#include "gs/reference.hpp"
#include "lesson_suite.hpp"
#include "openmp_threads.hpp"
#include "point/lesson02_point.hpp"

GS_LESSON_SUITE(GS_LESSON_NAMESPACE::implementations());

namespace GS_LESSON_NAMESPACE {
// Defined by the lesson's body: how many OpenMP threads update_rows() (row_loop.hpp) puts to work
// on `rows` rows when OpenMP may use `threads`.
int threads_in_update_rows(int rows, int threads);
}  // namespace GS_LESSON_NAMESPACE

namespace {

using gs::test::ThreadCount;

gs::State advance_with_threads(const gs::Implementation& impl, const gs::State& start,
                               const gs::Rates& rates, int steps, int threads) {
  const ThreadCount scoped(threads);
  auto stepper = impl.create();
  return gs::test::run_stepper(*stepper, start, rates, {steps});
}

// The row loop must really share the rows among threads: a serial loop gives the same numbers,
// so only this test tells that the `parallel for` is missing.
TEST(Lesson02Threads, UpdateRowsSharesTheRowsAmongThreads) {
  EXPECT_EQ(GS_LESSON_NAMESPACE::threads_in_update_rows(64, 2), 2)
      << "update_rows() ran every row on one thread: the rows are not shared among threads";
  EXPECT_EQ(GS_LESSON_NAMESPACE::threads_in_update_rows(64, 3), 3);
}

// The lesson's point for the row loop (tests/point/lesson02_point.hpp): every column alike, its
// neighbours from memory and N from rows_in_grid and columns_in_grid. A loop that tests the
// column's index for the edges gives the right numbers on whole rows (its fixture,
// tests/fixtures/02_simd_threads/edge_columns_by_branches/, is run by lesson02.point_fixture).
TEST(Lesson02Point, TheRowLoopTakesTheEdgesFromTheLayout) {
  const std::string problem = lesson02_point::check_row_loop_takes_the_edges_from_the_layout();
  EXPECT_EQ(problem, "") << problem;
}

TEST(Lesson02Threads, FastestFirst) {
  const std::vector<gs::Implementation> all = GS_LESSON_NAMESPACE::implementations();
  ASSERT_GE(all.size(), 2u);
  // docs/BENCHMARKS.md: the exercise's threaded loop beats the cache-blocked one on both of the
  // course's machines.
  EXPECT_EQ(all[0].name, "l02-simd-omp") << "the best variant must come first";
  EXPECT_NE(gs::find_implementation(all, "l02-blocked-omp"), nullptr);
}

// Every threaded variant; the blocked one also cuts the grid into a number of bands that
// depends on the thread count, so 1, 2 and 3 threads cut it three ways.
TEST(Lesson02Threads, SameNumbersWithOneTwoAndThreeThreads) {
  const int threads_before = omp_get_max_threads();
  const int rows = 67;
  const int cols = 131;
  const int steps = 37;  // not a multiple of the blocked variant's 4 steps
  const gs::Rates rates;
  const gs::State start = gs::random_state(rows, cols, 2026);
  gs::State expected = start;
  gs::reference_advance(expected, rates, steps);

  int threaded = 0;
  for (const gs::Implementation& impl : GS_LESSON_NAMESPACE::implementations()) {
    if (impl.name.find("-omp") == std::string::npos) continue;
    ++threaded;
    const gs::State one = advance_with_threads(impl, start, rates, steps, 1);
    EXPECT_TRUE(gs::test::states_match(one, expected, gs::test::kTolerance))
        << impl.name << ", 1 thread";
    for (int threads : {2, 3}) {
      const gs::State many = advance_with_threads(impl, start, rates, steps, threads);
      EXPECT_TRUE(gs::test::states_match(many, expected, gs::test::kTolerance))
          << impl.name << ", " << threads << " threads against the reference";
      EXPECT_TRUE(gs::test::states_match(many, one, gs::test::kTolerance))
          << impl.name << ", " << threads << " threads against 1 thread";
    }
  }
  EXPECT_GE(threaded, 2) << "l02-simd-omp and l02-blocked-omp at least";
  EXPECT_EQ(omp_get_max_threads(), threads_before) << "the thread count was not restored";
}

}  // namespace
