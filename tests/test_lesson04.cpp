// Lesson 04: every kernel and launch shape against the reference on the course's sizes, and (as
// every generic implementation of the course) with weights that are not all ones against the
// reference in double: the unit weights cannot tell a transposed or mis-indexed weight matrix
// apart. The block-size sweep's shapes differ in blocks and cells per thread, so the weights test
// covers every launch path (lesson_suite.hpp). And the launch itself must be checked: a launch
// that cannot start is caught at the launch, and leaves no error behind for the next one. And
// the lesson's point, on the host: x runs along the row (tests/point/lesson04_point.cuh).
#include <exception>
#include <string>

#include "lesson_suite.hpp"

GS_LESSON_SUITE(GS_LESSON_NAMESPACE::implementations());

namespace GS_LESSON_NAMESPACE {
// Defined by the lesson's body: one step of checked_step on a small grid, launched through
// launch_step() (kernels.cuh) with blocks of block_cols x block_rows threads.
void step_with_block(int block_cols, int block_rows);
}  // namespace GS_LESSON_NAMESPACE

namespace {

// A block of 64 x 32 = 2048 threads is more than any CUDA GPU allows (1024): the launch fails
// without running, and only a check right after it (cudaGetLastError) says so.
TEST(Lesson04Launch, ALaunchThatCannotStartIsCaught) {
  GS_REQUIRE_GPU();
  ASSERT_NO_THROW(GS_LESSON_NAMESPACE::step_with_block(32, 8)) << "a valid launch must pass";
  bool caught = false;
  try {
    GS_LESSON_NAMESPACE::step_with_block(64, 32);
  } catch (const std::exception&) {
    caught = true;
  }
  EXPECT_TRUE(caught) << "a launch of 64 x 32 = 2048 threads per block (the limit is 1024) went "
                         "unnoticed: launch_step() must check its launch";
  // The error was reported once; the next launch must not inherit it.
  EXPECT_NO_THROW(GS_LESSON_NAMESPACE::step_with_block(32, 8))
      << "a valid launch after a failed one must pass: the check must clear the error it reads";
}

}  // namespace

namespace lesson04_point_entry {
// tests/point/lesson04_point.cu: the learner's kernels walked on the host, thread by thread.
std::string check_threads_along_rows();
}  // namespace lesson04_point_entry

namespace {

// The lesson's point, on the host (any machine): x runs along the row. Threads neighbouring in x
// (in a warp) update the same rows of neighbouring columns, in checked_step and in every launch
// shape of generic_step; a kernel whose x runs down the columns, launched on a transposed grid,
// gives the right numbers with uncoalesced warps.
TEST(Lesson04Point, ThreadsNeighbouringInXUpdateNeighbouringCellsOfARow) {
  const std::string problem = lesson04_point_entry::check_threads_along_rows();
  EXPECT_EQ(problem, "") << problem;
}

}  // namespace
