// Lesson 11: the tiles kept on the chip. On every machine, the run the kernel makes, made on the
// host with the kernel's own walk of the warps' bands (on_chip::advance_on_host: a warp's 32
// lanes in lockstep, the kernel's order of barriers, the learner's post_edges() and
// collect_halo() between the tiles, the mailboxes poisoned with NaN so that a halo cell nobody
// posted shows), against the reference: odd grids, random states, more tiles than the grid has
// rows, tiles thinner than the halo, halos from 1 to 6 steps, step counts that are not multiples
// of the halo, advance() split into several calls. The cut itself: every cell in one tile,
// within the shared memory and the blocks given, and a clear refusal where the state does not
// fit. On a GPU, the kernel on the same cases, the official grid, its refusal of a grid larger
// than the chip, and where it leads gray_scott's default choice.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "check.hpp"
#include "gs/device_limits.hpp"
#include "gs/lesson.hpp"
#include "gs/reference.hpp"
#include "on_chip.hpp"
#include "point/lesson11_point.hpp"

namespace {

struct TileCase {
  int rows;
  int cols;
  int blocks;              // tiles at most
  int halo;                // steps between exchanges
  std::vector<int> calls;  // advance() calls, in steps
  bool random;
  std::uint64_t seed;
};

void PrintTo(const TileCase& c, std::ostream* out) {
  *out << c.rows << " x " << c.cols << ", " << c.blocks << " blocks, halo " << c.halo << ", "
       << (c.random ? "random" : "canonical") << " state";
}

std::string case_name(const ::testing::TestParamInfo<TileCase>& info) {
  const TileCase& c = info.param;
  std::string name = std::to_string(c.rows) + "x" + std::to_string(c.cols) + "_" +
                     std::to_string(c.blocks) + "blocks_halo" + std::to_string(c.halo);
  for (int steps : c.calls) name += "_" + std::to_string(steps);
  return name + (c.random ? "_random" : "_canonical");
}

const std::vector<TileCase> kCases = {
    {17, 33, 4, 4, {37}, true, 21},
    {67, 131, 7, 3, {10, 1, 26}, true, 22},
    {1, 7, 3, 2, {5}, true, 23},
    {7, 1, 3, 2, {5}, true, 24},
    {5, 7, 132, 4, {9}, true, 25},
    {33, 29, 6, 1, {7}, true, 26},
    {61, 77, 12, 6, {13, 6}, true, 27},
    {255, 257, 16, 4, {20}, true, 28},
    {67, 131, 9, 4, {64}, false, 0},
    {40, 300, 5, 2, {3, 3, 3}, true, 29},
    // Tiles thinner than the halo: a band reaching past the tile would post halo cells.
    {10, 10, 25, 3, {9}, true, 30},
    {30, 30, 36, 4, {9}, true, 31},
    // The deepest halo the lesson measures (l11-on-chip-h8), on odd sizes and thin tiles. A
    // stale halo 8 deep reaches the owned cells only after many steps (an error crosses a cell a
    // step, shrinking by the diffusion's factor each time), so these runs are long.
    {23, 41, 10, 8, {40, 9}, true, 32},
    {12, 9, 20, 8, {48}, true, 33},
};

gs::State start_of(const TileCase& c) {
  return c.random ? gs::random_state(c.rows, c.cols, c.seed) : gs::initial_state(c.rows, c.cols);
}

gs::State reference_after(const gs::State& start, const std::vector<int>& calls) {
  gs::State expected = start;
  int steps = 0;
  for (int n : calls) steps += n;
  gs::reference_advance(expected, gs::Rates{}, steps);
  return expected;
}

class HostTiles : public ::testing::TestWithParam<TileCase> {};

TEST_P(HostTiles, MatchReference) {
  const TileCase& c = GetParam();
  // Shared memory is no limit here: the cut is the one the blocks would get.
  const auto plan = on_chip::plan_tiles(c.rows, c.cols, c.halo, c.blocks, std::int64_t{1} << 40);
  ASSERT_TRUE(plan.has_value());
  const gs::State start = start_of(c);
  gs::State got = start;
  for (int n : c.calls) on_chip::advance_on_host(*plan, got, gs::Rates{}, n);
  EXPECT_TRUE(gs::test::states_match(got, reference_after(start, c.calls), gs::test::kTolerance))
      << plan->tiles_y << " x " << plan->tiles_x << " tiles of " << plan->tile_rows << " x "
      << plan->tile_cols;
}

INSTANTIATE_TEST_SUITE_P(Lesson11, HostTiles, ::testing::ValuesIn(kCases), case_name);

// The lesson's point (tests/point/lesson11_point.hpp): a tile posts its edges, not its whole
// self; posting everything passes every test above, and this one fails it (its fixture,
// tests/fixtures/11_on_chip/posts_the_whole_tile/, is run by lesson11.point_fixture).
TEST(Lesson11Point, EachTilePostsItsEdgesAndNothingDeeper) {
  const std::string problem = lesson11_point::check_posts_only_edges();
  EXPECT_TRUE(problem.empty()) << problem;
}

TEST(TilePlan, EveryCellInOneTileWithinTheLimits) {
  for (const auto& [rows, cols, blocks, shared] :
       std::vector<std::tuple<int, int, int, std::int64_t>>{{1080, 1920, 132, 227 * 1024},
                                                            {1080, 1920, 114, 227 * 1024},
                                                            {67, 131, 7, 48 * 1024},
                                                            {1, 1, 132, 48 * 1024},
                                                            {1000, 3, 16, 64 * 1024}}) {
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols) + ", " +
                 std::to_string(blocks) + " blocks");
    const auto plan = on_chip::plan_tiles(rows, cols, on_chip::kDefaultHalo, blocks, shared);
    ASSERT_TRUE(plan.has_value());
    EXPECT_LE(plan->tiles(), blocks);
    EXPECT_LE(on_chip::kept_bytes(*plan), shared);
    EXPECT_GE(plan->tiles_y * plan->tile_rows, rows);
    EXPECT_LT((plan->tiles_y - 1) * plan->tile_rows, rows);  // no empty row of tiles
    EXPECT_GE(plan->tiles_x * plan->tile_cols, cols);
    EXPECT_LT((plan->tiles_x - 1) * plan->tile_cols, cols);
    EXPECT_GE(plan->shared_pitch, plan->padded_cols);
    EXPECT_LE(plan->shared_pitch, on_chip::kMaxKeptCols);
    EXPECT_GE(plan->pitch, cols);
  }
}

TEST(TilePlan, TheOfficialGridFitsAnH100AndNotAT4) {
  // 132 SMs of 227 KiB: 16.6 MB of state in 30 MB of shared memory.
  EXPECT_TRUE(on_chip::plan_tiles(1080, 1920, on_chip::kDefaultHalo, 132, 227 * 1024));
  // 40 SMs of 64 KiB (a T4): 2.6 MB.
  std::string why;
  EXPECT_FALSE(on_chip::plan_tiles(1080, 1920, on_chip::kDefaultHalo, 40, 64 * 1024, &why));
  EXPECT_NE(why.find("does not fit"), std::string::npos) << why;
  EXPECT_NE(why.find("1080 x 1920"), std::string::npos) << why;
}

// --- On a GPU: the kernel --------------------------------------------------------------------

// The lesson's stepper first (the model's halo), then the other halos it is measured at.
const std::vector<gs::Implementation>& on_chip_implementations() {
  static const std::vector<gs::Implementation> all = GS_LESSON_NAMESPACE::implementations();
  if (all.empty()) throw std::runtime_error("this build has no CUDA: lesson 11 has no kernel");
  return all;
}

const gs::Implementation& on_chip_implementation() {
  return on_chip_implementations().front();
}

class GpuOnChip : public ::testing::TestWithParam<TileCase> {};

TEST_P(GpuOnChip, MatchesReference) {
  GS_REQUIRE_GPU();
  const TileCase& c = GetParam();  // the device's own cut: blocks and halo as the stepper plans
  // Under a smaller card's limits (CTest's lesson11.solution.t4 and .gtx1650) a case that card
  // could not hold is skipped with the reason; on the device's own limits every case must fit.
  const std::string refused = gs::grid_refusal(on_chip_implementation(), c.rows, c.cols);
  if (!refused.empty() && std::getenv("GS_DEVICE_LIMITS") != nullptr) GTEST_SKIP() << refused;
  const gs::State start = start_of(c);
  auto stepper = on_chip_implementation().create();
  const gs::State got = gs::test::run_stepper(*stepper, start, gs::Rates{}, c.calls);
  EXPECT_TRUE(gs::test::states_match(got, reference_after(start, c.calls), gs::test::kTolerance));
}

INSTANTIATE_TEST_SUITE_P(Lesson11, GpuOnChip, ::testing::ValuesIn(kCases), case_name);

TEST(GpuOnChipGrid, TheOfficialGridMatchesReferenceAtEveryHalo) {
  GS_REQUIRE_GPU();
  for (const gs::Implementation& implementation : on_chip_implementations()) {
    SCOPED_TRACE(implementation.name);
    ASSERT_EQ(gs::grid_refusal(implementation, 1080, 1920), "");
    for (const bool random : {true, false}) {
      const gs::State start =
          random ? gs::random_state(1080, 1920, 31) : gs::initial_state(1080, 1920);
      auto stepper = implementation.create();
      const gs::State got = gs::test::run_stepper(*stepper, start, gs::Rates{}, {9, 32});
      EXPECT_TRUE(
          gs::test::states_match(got, reference_after(start, {9, 32}), gs::test::kTolerance));
    }
  }
}

// gray_scott's default takes lesson 11 first only where it was measured faster (README.md,
// Results): at halo 8, on a Hopper GPU's own limits, for grids from 540 x 960 cells that fit.
TEST(GpuOnChipGrid, LeadsTheDefaultChoiceOnlyWhereMeasuredFaster) {
  GS_REQUIRE_GPU();
  const gs::DeviceLimits& limits = gs::device_limits();
  const bool hopper = limits.compute_major == 9 && !limits.overridden();
  for (const gs::Implementation& implementation : on_chip_implementations()) {
    SCOPED_TRACE(implementation.name);
    const std::string official =
        implementation.leads_on ? implementation.leads_on(1080, 1920) : std::string();
    EXPECT_EQ(!official.empty(), hopper && implementation.name == "l11-on-chip-h8") << official;
    if (implementation.leads_on) {
      EXPECT_EQ(implementation.leads_on(100, 100), "");
    }
  }
}

TEST(GpuOnChipGrid, AGridLargerThanTheChipIsRefusedWithTheReason) {
  GS_REQUIRE_GPU();
  const gs::Implementation& implementation = on_chip_implementation();
  const std::string why = gs::grid_refusal(implementation, 8192, 8192);
  EXPECT_NE(why.find("does not fit"), std::string::npos) << why;
  EXPECT_NE(why.find("lesson 06"), std::string::npos) << why;
  auto stepper = implementation.create();
  EXPECT_THROW(stepper->load(gs::initial_state(8192, 8192), gs::Rates{}), gs::InvalidParameter);
}

}  // namespace
