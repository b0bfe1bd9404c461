// Lesson 05: every tiled kernel against the reference on the course's sizes, and (as every
// generic implementation) with weights that are not all ones against the reference in double: it
// checks the edge rule inside the tile (absent halo cells loaded as zero, left out of the weight
// sum) on grids smaller than a tile (9 x 5), larger (37 x 71) and an exact multiple (16 x 64).
// And the lesson's point, on the host (any machine): each block loads its tile and halo from
// global memory once, the threads sharing the work (tests/point/lesson05_point.hpp).
#include "lesson05_point.hpp"
#include "lesson_suite.hpp"

GS_LESSON_SUITE(GS_LESSON_NAMESPACE::implementations());

namespace {

TEST(Lesson05Point, EachBlockLoadsItsTileAndHaloOnce) {
  const std::string problem = lesson05_point::check_loads_once_per_block();
  EXPECT_EQ(problem, "") << problem;
}

}  // namespace
