// The wrong answer lesson 11's point test must catch, for the right reason:
// tests/fixtures/11_on_chip/posts_the_whole_tile/exchange.hpp gives the right numbers (a
// neighbour finds its halo) but posts every owned cell. The point test must name a cell deeper
// than the halo that crossed L2.
#include <gtest/gtest.h>

#include "lesson11_point.hpp"

TEST(Lesson11PointFixture, PostingTheWholeTileFailsThePointTest) {
  const std::string problem = lesson11_point::check_posts_only_edges();
  EXPECT_NE(problem.find("deeper than the halo"), std::string::npos)
      << "the point test should fail the fixture that posts the whole tile, naming a cell "
         "deeper than the halo; it said: "
      << (problem.empty() ? std::string("nothing (it passed)") : problem);
}
