// Lesson 04: every kernel and launch shape against the reference on the course's sizes, and the
// generic kernel with weights that are not all ones against a host evaluation of the generic
// formula (the unit weights cannot tell a transposed or mis-indexed weight matrix apart).
#include <array>

#include "gs/lessons.hpp"
#include "lesson_suite.hpp"

GS_LESSON_SUITE(lesson04::implementations());

namespace {

struct LaunchShape {
  int block_cols;
  int block_rows;
  int rows_per_thread;
};

TEST(Lesson04GenericWeights, SkewedWeightsMatchTheHostFormula) {
  GS_REQUIRE_GPU();
  const int steps = 12;
  for (const LaunchShape shape :
       {LaunchShape{32, 8, 1}, LaunchShape{32, 4, 2}, LaunchShape{64, 2, 4}}) {
    for (const std::array<int, 2> size : {std::array<int, 2>{37, 71}, std::array<int, 2>{9, 5}}) {
      const gs::State start = gs::random_state(size[0], size[1], 23);
      const gs::Params params = gs::test::params_for(start);
      auto stepper = lesson04::make_generic_stepper(gs::test::kSkewedWeights, shape.block_cols,
                                                    shape.block_rows, shape.rows_per_thread);
      const gs::State got = gs::test::run_stepper(*stepper, start, params, {steps});

      gs::State expected = start;
      gs::reference_advance_weighted(expected, params, gs::test::kSkewedWeights, steps);
      EXPECT_TRUE(gs::test::states_match(got, expected, gs::test::kTolerance))
          << "blocks " << shape.block_cols << "x" << shape.block_rows << ", "
          << shape.rows_per_thread << " row(s) per thread, grid " << size[0] << "x" << size[1];
    }
  }
}

}  // namespace
