// The wrong answer lesson 02's point test must catch, for the right reason:
// tests/fixtures/02_simd_threads/edge_columns_by_branches/row_loop.hpp gives the right numbers on
// whole rows but finds the edge columns by testing the column's index. The point test must name
// a cell of a span that is not a whole row.
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "lesson02_point.hpp"

TEST(Lesson02PointFixture, EdgeColumnsByBranchesFailThePointTest) {
  const std::string problem = lesson02_point::check_row_loop_takes_the_edges_from_the_layout();
  std::cout << "the point test says: "
            << (problem.empty() ? std::string("nothing (it passed)") : problem) << "\n";
  EXPECT_NE(problem.find("not a test of the column's index"), std::string::npos)
      << "the point test should fail the fixture that finds the edge columns by branches, on "
         "columns that are not a whole row; it said: "
      << (problem.empty() ? std::string("nothing (it passed)") : problem);
}
