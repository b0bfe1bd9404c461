// The canonical initial condition, cell by cell, on the sizes the issue names; and the choice
// between implementations when one refuses the grid (Implementation::refuses_grid).
#include <gtest/gtest.h>

#include <iostream>
#include <sstream>

#include "captured.hpp"
#include "gs/benchmark.hpp"
#include "gs/program.hpp"
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

// --- Implementations that refuse a grid (lesson 11: the state must fit on the chip) ----------

namespace {

gs::Implementation cpu_implementation(const std::string& name, int max_cells) {
  gs::Implementation implementation = gs::reference_implementation();
  implementation.name = name;
  if (max_cells > 0) {
    implementation.refuses_grid = [max_cells](int rows, int cols) {
      return rows * cols > max_cells ? "only " + std::to_string(max_cells) + " cells fit" : "";
    };
  }
  return implementation;
}

// Runs select_implementation() with std::cerr captured.
const gs::Implementation* select(const std::vector<gs::Implementation>& all,
                                 const std::string& name, int rows, int cols, std::string& said,
                                 int& exit_code) {
  const gs::test::Captured err(std::cerr);
  const gs::Implementation* chosen =
      gs::select_implementation(all, name, rows, cols, "test", exit_code);
  said = err.str();
  return chosen;
}

}  // namespace

TEST(GridRefusal, TheDefaultChoicePassesOverAnImplementationThatRefusesTheGridSayingWhy) {
  const std::vector<gs::Implementation> all = {cpu_implementation("small-only", 100),
                                               cpu_implementation("any", 0)};
  std::string said;
  int exit_code = 0;
  const gs::Implementation* chosen = select(all, "", 10, 10, said, exit_code);
  ASSERT_NE(chosen, nullptr);
  EXPECT_EQ(chosen->name, "small-only");
  EXPECT_EQ(said, "");
  chosen = select(all, "", 11, 10, said, exit_code);
  ASSERT_NE(chosen, nullptr);
  EXPECT_EQ(chosen->name, "any");
  EXPECT_NE(said.find("passing over small-only: only 100 cells fit"), std::string::npos) << said;
}

TEST(GridRefusal, NamingAnImplementationThatRefusesTheGridIsAUsageErrorWithTheReason) {
  const std::vector<gs::Implementation> all = {cpu_implementation("small-only", 100)};
  std::string said;
  int exit_code = 0;
  EXPECT_EQ(select(all, "small-only", 11, 10, said, exit_code), nullptr);
  EXPECT_EQ(exit_code, gs::kExitUsage);
  EXPECT_NE(said.find("'small-only' cannot run this grid: only 100 cells fit"), std::string::npos)
      << said;
  EXPECT_EQ(gs::grid_refusal(all.front(), 10, 10), "");
  EXPECT_EQ(gs::grid_refusal(gs::reference_implementation(), 100000, 100000), "");
}

TEST(GridRefusal, TheBenchmarkLeavesOutAnImplementationThatRefusesTheGridSayingWhy) {
  const std::vector<gs::Implementation> all = {cpu_implementation("small-only", 100),
                                               cpu_implementation("any", 0)};
  const char* arguments[] = {"benchmark", "-r", "11", "-c", "10", "-n", "1", "-e", "1"};
  const gs::test::Captured out(std::cout), err(std::cerr);
  const int code = gs::run_benchmark(9, const_cast<char**>(arguments), all, "benchmark", "test");
  EXPECT_EQ(code, 0) << err.str();
  EXPECT_NE(err.str().find("skipping small-only: only 100 cells fit"), std::string::npos)
      << err.str();
  EXPECT_NE(out.str().find("| any |"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("| small-only |"), std::string::npos) << out.str();
}

TEST(GridRefusal, WhenEveryImplementationRefusesTheGridTheErrorSaysSoNotThatAGpuIsMissing) {
  const std::vector<gs::Implementation> all = {cpu_implementation("small-only", 100)};
  std::string said;
  int exit_code = 0;
  EXPECT_EQ(select(all, "", 11, 10, said, exit_code), nullptr);
  EXPECT_EQ(exit_code, gs::kExitUsage);
  EXPECT_NE(said.find("no implementation of this program can run a 11 x 10 grid here"),
            std::string::npos)
      << said;
  EXPECT_EQ(said.find("needs a GPU"), std::string::npos) << said;
}
