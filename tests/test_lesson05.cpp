// Lesson 05: every tiled kernel against the reference on the course's sizes, and the tiled
// kernel with weights that are not all ones against a host evaluation of the generic formula:
// it checks the edge rule inside the tile (absent halo cells loaded as zero, left out of the
// weight sum), on grids smaller than a tile, larger, and an exact multiple of the tile.
#include <array>

#include "gs/lessons.hpp"
#include "lesson_suite.hpp"

GS_LESSON_SUITE(lesson05::implementations());

namespace {

TEST(Lesson05TiledWeights, SkewedWeightsMatchTheHostFormula) {
  GS_REQUIRE_GPU();
  const int steps = 12;
  // Smaller than one 32x8 tile, several tiles with partial ones at the edges, exact tiles.
  for (const std::array<int, 2> size :
       {std::array<int, 2>{5, 9}, std::array<int, 2>{37, 71}, std::array<int, 2>{16, 64}}) {
    const gs::State start = gs::random_state(size[0], size[1], 29);
    const gs::Params params = gs::test::params_for(start);
    auto stepper = lesson05::make_tiled_stepper(gs::test::kSkewedWeights);
    const gs::State got = gs::test::run_stepper(*stepper, start, params, {steps});

    gs::State expected = start;
    gs::reference_advance_weighted(expected, params, gs::test::kSkewedWeights, steps);
    EXPECT_TRUE(gs::test::states_match(got, expected, gs::test::kTolerance))
        << "grid " << size[0] << "x" << size[1];
  }
}

}  // namespace
