// The wrong answer lesson 04's point test must catch, for the right reason:
// tests/fixtures/04_cuda_kernels/x_down_the_column/kernels.cuh gives the right numbers (its
// launch transposes the grid to match its kernels) but runs x down the columns: a warp's 32
// threads touch 32 rows. The point test must name two neighbours in a warp that are not
// neighbours in a row.
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "lesson04_point.cuh"

#if !defined(__CUDA_ARCH__)
TEST(Lesson04PointFixture, XDownTheColumnFailsThePointTest) {
  const std::string problem = lesson04_point::check_threads_along_rows();
  std::cout << "the point test says: " << (problem.empty() ? "nothing (it passed)" : problem)
            << "\n";
  EXPECT_NE(problem.find("neighbours in a warp"), std::string::npos)
      << "the point test should fail the fixture whose x runs down the columns, naming two "
         "neighbours in a warp that are not neighbours in a row; it said: "
      << (problem.empty() ? std::string("nothing (it passed)") : problem);
}
#endif
