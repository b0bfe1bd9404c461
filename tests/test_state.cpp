// The canonical initial condition, cell by cell, on the sizes the issue names.
#include <gtest/gtest.h>

#include "gs/state.hpp"

namespace {

// Counts the seeded cells and checks each value of u and v against the seed box written out.
void expect_seed(int rows, int cols, int row_begin, int row_end, int col_begin, int col_end) {
  const gs::State state = gs::initial_state(rows, cols);
  ASSERT_EQ(state.u.size(), static_cast<std::size_t>(rows) * cols);
  ASSERT_EQ(state.v.size(), state.u.size());
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const bool seeded = r >= row_begin && r < row_end && c >= col_begin && c < col_end;
      ASSERT_EQ(state.u[state.index(r, c)], seeded ? 0.0f : 1.0f) << "u at " << r << "," << c;
      ASSERT_EQ(state.v[state.index(r, c)], seeded ? 1.0f : 0.0f) << "v at " << r << "," << c;
    }
  }
}

TEST(InitialState, OfficialSizeSeedsRows468To535AndColumns840To959) {
  expect_seed(1080, 1920, 468, 536, 840, 960);
  const gs::SeedBox box = gs::seed_box(1080, 1920);
  EXPECT_EQ(box.row_begin, 468);
  EXPECT_EQ(box.row_end, 536);
  EXPECT_EQ(box.col_begin, 840);
  EXPECT_EQ(box.col_end, 960);
}

TEST(InitialState, SixteenSquareSeedsOneCell) {
  expect_seed(16, 16, 3, 4, 7, 8);
}

TEST(InitialState, SmallGridsClampTheRowsToAnEmptySeed) {
  // 7*3/16 - 4 = -3 and 8*3/16 - 4 = -3: both clamp to 0, no row is seeded.
  expect_seed(3, 5, 0, 0, 2, 2);
  expect_seed(1, 1, 0, 0, 0, 0);
}

TEST(InitialState, OddSize) {
  // 7*41/16 - 4 = 13, 8*41/16 - 4 = 16; 7*53/16 = 23, 8*53/16 = 26.
  expect_seed(41, 53, 13, 16, 23, 26);
}

TEST(RandomState, IsReproducibleAndInUnitInterval) {
  const gs::State a = gs::random_state(13, 7, 42);
  const gs::State b = gs::random_state(13, 7, 42);
  const gs::State c = gs::random_state(13, 7, 43);
  EXPECT_EQ(a.u, b.u);
  EXPECT_EQ(a.v, b.v);
  EXPECT_NE(a.u, c.u);
  for (const float x : a.u) {
    EXPECT_GE(x, 0.0f);
    EXPECT_LT(x, 1.0f);
  }
}

}  // namespace
