// The wrong answer lesson 05's point test must catch, for the right reason:
// tests/fixtures/05_shared_tiling/each_thread_loads_its_neighbours/shared_tile.cuh gives the
// right numbers (each thread stores the 3 x 3 cells around its own, every cell of the tiles with
// its value) but loads each value up to nine times per block. The point test must name a cell of
// the tiles stored by several threads.
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "lesson05_point.hpp"

TEST(Lesson05PointFixture, EachThreadLoadingItsNeighboursFailsThePointTest) {
  const std::string problem = lesson05_point::check_loads_once_per_block();
  std::cout << "the point test says: " << (problem.empty() ? "nothing (it passed)" : problem)
            << "\n";
  EXPECT_NE(problem.find("threads of the block (the first"), std::string::npos)
      << "the point test should fail the fixture in which every thread loads its neighbours, "
         "naming a cell of the tiles stored by several threads; it said: "
      << (problem.empty() ? std::string("nothing (it passed)") : problem);
}
