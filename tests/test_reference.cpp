// The reference step itself: hand-computed values, a fixed point, symmetry, and agreement with
// the same definition evaluated in double precision.
#include <gtest/gtest.h>

#include <cmath>

#include "check.hpp"
#include "gs/reference.hpp"

namespace {

gs::State one_step(const gs::State& start) {
  gs::State state = start;
  gs::reference_advance(state, gs::Rates{}, 1);
  return state;
}

// u = 1..9 row by row, v = 0: the reaction terms vanish except F(1 - u), so each value is
// u + Du * L(u) + F (1 - u), worked out by hand below.
TEST(Reference, HandComputedThreeByThree) {
  gs::State start(3, 3, 0.0f, 0.0f);
  for (int i = 0; i < 9; ++i) start.u[i] = static_cast<float>(i + 1);
  const gs::State next = one_step(start);
  EXPECT_NEAR(next.u[0], 1.8f, 1e-6);    // corner: L = (2-1)+(4-1)+(5-1) = 8
  EXPECT_NEAR(next.u[1], 2.886f, 1e-6);  // edge: L = 19 - 5*2 = 9, F(1-2) = -0.014
  EXPECT_NEAR(next.u[4], 4.944f, 1e-6);  // centre: L = 40 - 8*5 = 0, F(1-5) = -0.056
  EXPECT_NEAR(next.u[8], 8.088f, 1e-5);  // corner: L = 19 - 27 = -8, F(1-9) = -0.112
  for (const float v : next.v) EXPECT_EQ(v, 0.0f);
}

// u = 1, v = (5r + c) / 100: a linear v, whose in-grid Laplacian vanishes in the interior but
// not on the edges, where the missing neighbours are skipped.
TEST(Reference, HandComputedFourByFiveEdgesAndCorners) {
  gs::State start(4, 5, 1.0f, 0.0f);
  for (int i = 0; i < 20; ++i) start.v[i] = static_cast<float>(i) * 0.01f;
  const gs::State next = one_step(start);
  const auto at = [&](const std::vector<float>& field, int r, int c) { return field[r * 5 + c]; };
  // top-right corner: L = 0.03 + 0.08 + 0.09 - 3*0.04 = 0.08, uv^2 = 0.0016
  EXPECT_NEAR(at(next.v, 0, 4), 0.04288f, 1e-6);
  EXPECT_NEAR(at(next.u, 0, 4), 0.9984f, 1e-6);
  // left edge: L = 0.53 - 5*0.10 = 0.03, uv^2 = 0.01
  EXPECT_NEAR(at(next.v, 2, 0), 0.1047f, 1e-6);
  EXPECT_NEAR(at(next.u, 2, 0), 0.99f, 1e-6);
  // interior: L = 0, uv^2 = 0.0049
  EXPECT_NEAR(at(next.v, 1, 2), 0.07014f, 1e-6);
  EXPECT_NEAR(at(next.u, 1, 2), 0.9951f, 1e-6);
  // bottom-right corner: L = 0.45 - 3*0.19 = -0.12, uv^2 = 0.0361
  EXPECT_NEAR(at(next.v, 3, 4), 0.20718f, 1e-6);
  EXPECT_NEAR(at(next.u, 3, 4), 0.9639f, 1e-6);
}

TEST(Reference, OneCellHasOnlyReaction) {
  gs::State start(1, 1, 0.5f, 0.25f);
  const gs::State next = one_step(start);
  // uv^2 = 0.03125; du = -0.03125 + 0.014*0.5; dv = 0.03125 - 0.068*0.25
  EXPECT_NEAR(next.u[0], 0.47575f, 1e-7);
  EXPECT_NEAR(next.v[0], 0.26425f, 1e-7);
}

TEST(Reference, UniformUOneVZeroIsAFixedPoint) {
  gs::State state(9, 14, 1.0f, 0.0f);
  gs::reference_advance(state, gs::Rates{}, 50);
  for (const float u : state.u) ASSERT_EQ(u, 1.0f);
  for (const float v : state.v) ASSERT_EQ(v, 0.0f);
}

TEST(Reference, CentredSeedStaysSymmetricFor100Steps) {
  const int n = 63;
  gs::State state(n, n, 1.0f, 0.0f);
  for (int r = 27; r <= 35; ++r) {
    for (int c = 27; c <= 35; ++c) {
      state.u[state.index(r, c)] = 0.0f;
      state.v[state.index(r, c)] = 1.0f;
    }
  }
  gs::reference_advance(state, gs::Rates{}, 100);
  double worst = 0.0;
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < n; ++c) {
      const float v = state.v[state.index(r, c)];
      worst = std::max({worst, std::abs(double{v} - state.v[state.index(n - 1 - r, c)]),
                        std::abs(double{v} - state.v[state.index(r, n - 1 - c)]),
                        std::abs(double{v} - state.v[state.index(c, r)])});
    }
  }
  EXPECT_LT(worst, 1e-5) << "largest asymmetry of v under flips and transposition";
  // And the pattern did spread: the test is not passing on a state that stayed put.
  EXPECT_GT(state.v[state.index(31, 24)], 0.01f);
}

TEST(Reference, AgreesWithDoublePrecisionOver200Steps) {
  const int rows = 41, cols = 53, steps = 200;
  const gs::Rates rates;
  gs::State single = gs::initial_state(rows, cols);
  std::vector<double> u(single.u.begin(), single.u.end()), v(single.v.begin(), single.v.end());
  std::vector<double> u_next(u.size()), v_next(v.size());
  for (int step = 0; step < steps; ++step) {
    gs::reference_step(rows, cols, u.data(), v.data(), u_next.data(), v_next.data(), rates);
    std::swap(u, u_next);
    std::swap(v, v_next);
  }
  gs::reference_advance(single, rates, steps);
  double error = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    error += (single.v[i] - v[i]) * (single.v[i] - v[i]);
    norm += v[i] * v[i];
  }
  const double relative = std::sqrt(error / norm);
  EXPECT_LT(relative, 1e-5) << "relative L2 error of v, float against double";
  EXPECT_GT(norm, 1.0) << "the seed must still be there";
}

// The weighted oracle of the generic kernels (lessons 01, 04, 05) must itself be right: with unit
// weights it is the reference, its centre weight changes nothing, and each of the eight other
// weights reaches exactly its own neighbour.
TEST(ReferenceWeighted, UnitWeightsGiveTheReference) {
  const gs::State start = gs::random_state(17, 33, 5);
  gs::State expected = start;
  gs::reference_advance(expected, gs::Rates{}, 20);
  gs::State got = start;
  gs::reference_advance_in_double(got, gs::Rates{}, 20);
  EXPECT_TRUE(gs::test::states_match(got, expected, 1e-5));
}

TEST(ReferenceWeighted, CentreWeightIsIgnored) {
  const gs::State start = gs::random_state(9, 7, 6);
  gs::StencilWeights heavy_centre = gs::test::kSkewedWeights;
  heavy_centre.w[1][1] = 100.0f;
  gs::State expected = start;
  gs::reference_advance_in_double(expected, gs::test::rates_with(gs::test::kSkewedWeights), 3);
  gs::State got = start;
  gs::reference_advance_in_double(got, gs::test::rates_with(heavy_centre), 3);
  EXPECT_TRUE(gs::test::states_match(got, expected, 0.0));
}

// The sums the specialised and generic kernels rely on: the eight off-centre weights without the
// centre, and what counts as the unit stencil (the centre weight does not matter).
TEST(ReferenceWeighted, OffCentreSumAndUnitStencil) {
  EXPECT_FLOAT_EQ(gs::off_centre_sum(gs::test::kSkewedWeights),
                  0.5f + 1.0f + 0.25f + 2.0f + 1.5f + 0.75f + 1.25f + 0.4f);
  EXPECT_EQ(gs::off_centre_sum(gs::kUnitWeights), 8.0f);
  EXPECT_TRUE(gs::is_unit_stencil(gs::kUnitWeights));
  gs::StencilWeights centre_only = gs::kUnitWeights;
  centre_only.w[1][1] = 5.0f;
  EXPECT_TRUE(gs::is_unit_stencil(centre_only));
  EXPECT_FALSE(gs::is_unit_stencil(gs::test::kSkewedWeights));
}

// A single u = 1 in the middle of a 3x3 grid of zeros (v = 0): after one step the neighbour at
// offset (dr, dc) holds dt * Du * w(-dr, -dc) + dt * F, because its only non-zero neighbour is
// the centre, seen from the opposite side.
TEST(ReferenceWeighted, EachWeightReachesItsOwnNeighbour) {
  gs::State start(3, 3, 0.0f, 0.0f);
  start.u[start.index(1, 1)] = 1.0f;
  const gs::Rates rates = gs::test::rates_with(gs::test::kSkewedWeights);
  gs::State next = start;
  gs::reference_advance_in_double(next, rates, 1);
  for (int dr = -1; dr <= 1; ++dr) {
    for (int dc = -1; dc <= 1; ++dc) {
      if (dr == 0 && dc == 0) continue;
      const float weight = gs::test::kSkewedWeights.w[1 - dr][1 - dc];
      const double expected = rates.dt * rates.diffusion_u * weight + rates.dt * rates.feed;
      EXPECT_NEAR(next.u[next.index(1 + dr, 1 + dc)], expected, 1e-6)
          << "neighbour at offset (" << dr << ", " << dc << ")";
    }
  }
}

}  // namespace
