// Lesson 09: a batch is many simulations, and each member must be exactly the simulation it
// stands for. Every member of a batch equals a single run with that member's own (F, k): bitwise
// on the CPU against the same batched code run with a batch of one, and to rounding against the
// reference of common/; on the GPU bitwise against a GPU batch of one and to rounding against the
// reference, for both kernels (the resident one is the learner's, member.hpp: every segment
// length the plan gives, 1 to 32 rows per thread, is run). The launch plan follows the device's
// limits: a member too large for one block of this GPU (or of the smaller card GS_DEVICE_LIMITS
// names) is refused by the resident kernel and streamed by the automatic path, on the CPU for
// given limits and on the GPU for its own. Odd grids, batches of 1, 3 and 17,
// random and canonical starts, outputs poisoned with NaN. Members do not leak into each other: a
// member whose (F, k) kill the pattern stays dead beside live ones, and a member's result does not
// depend on its place in the batch. The program end to end: its files, its refusals (nothing
// written), a signal, the benchmark.
#include <gtest/gtest.h>
#include <omp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <numeric>
#include <ostream>
#include <string>
#include <vector>

#include "batch.hpp"
#include "check.hpp"
#include "gs/device_limits.hpp"
#include "gs/hdf5_io.hpp"
#include "gs/reference.hpp"
#include "openmp_threads.hpp"
#include "process.hpp"

namespace {
namespace fs = std::filesystem;
namespace lesson = GS_LESSON_NAMESPACE;
using lesson::BatchRates;
using lesson::BatchState;
using lesson::BatchStepper;
using lesson::GpuPath;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

// Rates of a batch of `members`: every member its own (F, k), spread over the region of the map
// where patterns form, none equal to another.
BatchRates spread_rates(int members) {
  BatchRates rates;
  for (int m = 0; m < members; ++m) {
    rates.feed.push_back(0.010f + 0.002f * static_cast<float>(m));
    rates.kill.push_back(0.045f + 0.001f * static_cast<float>((m * 7) % 17));
  }
  return rates;
}

// The start of member m: its own random state, or the course's initial state for all.
gs::State member_start(int rows, int cols, bool random, int member) {
  return random ? gs::random_state(rows, cols, 900 + static_cast<std::uint64_t>(member))
                : gs::initial_state(rows, cols);
}

BatchState start_batch(int members, int rows, int cols, bool random) {
  BatchState batch(members, rows, cols);
  for (int m = 0; m < members; ++m)
    lesson::set_member(batch, m, member_start(rows, cols, random, m));
  return batch;
}

// Loads, advances once per entry of `calls`, fetches into a NaN-poisoned batch; checks that
// fetch_v() agrees with fetch().
BatchState run_batch(BatchStepper& stepper, const BatchState& start, const BatchRates& rates,
                     const std::vector<int>& calls) {
  stepper.load(start, rates);
  for (const int steps : calls) stepper.advance(steps);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  BatchState got(start.members, start.rows, start.cols, nan, nan);
  stepper.fetch(got);
  std::vector<float> v(start.size(), nan);
  stepper.fetch_v(v.data());
  EXPECT_EQ(std::memcmp(v.data(), got.v.data(), v.size() * sizeof(float)), 0)
      << "fetch_v() differs from fetch().v";
  return got;
}

// The batch of one: member m alone, with its own start (and its own rates, rates_of()).
BatchState alone(const BatchState& batch, int m) {
  return lesson::repeat_state(lesson::member_state(batch, m), 1);
}

BatchRates rates_of(const BatchRates& rates, int m) {
  BatchRates one = rates;
  one.feed = {rates.feed[m]};
  one.kill = {rates.kill[m]};
  return one;
}

// Bitwise equality of two states, naming the first cell that differs.
::testing::AssertionResult same_bits(const gs::State& got, const gs::State& expected) {
  if (got.rows != expected.rows || got.cols != expected.cols) {
    return ::testing::AssertionFailure() << "the sizes differ";
  }
  const std::vector<float>* fields[2][2] = {{&got.u, &expected.u}, {&got.v, &expected.v}};
  for (int field = 0; field < 2; ++field) {
    const std::vector<float>& a = *fields[field][0];
    const std::vector<float>& b = *fields[field][1];
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) {
        return ::testing::AssertionFailure()
               << "field " << (field == 0 ? "u" : "v") << " differs first at row "
               << i / static_cast<std::size_t>(got.cols) << ", col "
               << i % static_cast<std::size_t>(got.cols) << ": " << a[i] << " instead of " << b[i];
      }
    }
  }
  return ::testing::AssertionSuccess();
}

std::unique_ptr<BatchStepper> make_stepper(const std::string& path) {
  if (path == "cpu") return lesson::make_cpu_stepper();
  if (path == "auto") return lesson::make_gpu_stepper(GpuPath::automatic);
  return lesson::make_gpu_stepper(path == "resident" ? GpuPath::resident : GpuPath::streaming);
}

// Whether the resident kernel takes a member of rows x cols cells on this GPU, within its limits
// (GS_DEVICE_LIMITS included). When it does not, checks that it says so: the plan and a load()
// refuse with gs::InvalidParameter, and the automatic path streams, saying why.
bool resident_fits(int rows, int cols) {
  const lesson::GpuPlan automatic = lesson::plan_gpu(rows, cols, GpuPath::automatic);
  if (automatic.path == GpuPath::resident) return true;
  EXPECT_FALSE(automatic.fallback.empty()) << automatic.summary;
  EXPECT_NE(automatic.summary.find(automatic.fallback), std::string::npos) << automatic.summary;
  try {
    lesson::plan_gpu(rows, cols, GpuPath::resident);
    ADD_FAILURE() << "the resident plan accepted a " << rows << " x " << cols
                  << " member the automatic plan streams: " << automatic.summary;
  } catch (const gs::InvalidParameter& error) {
    EXPECT_NE(std::string(error.what()).find("does not fit"), std::string::npos) << error.what();
  }
  BatchState start(1, rows, cols);
  BatchRates rates = spread_rates(1);
  EXPECT_THROW(make_stepper("resident")->load(start, rates), gs::InvalidParameter)
      << rows << " x " << cols << " on the resident kernel, " << gs::device_limits().describe();
  return false;
}

// Every member of a batch against the same stepper run with that member alone (bitwise) and
// against the reference with the member's gs::Rates (to rounding).
void expect_members_are_single_runs(const std::string& path, int members, int rows, int cols,
                                    bool random, const std::vector<int>& calls) {
  const int steps = std::accumulate(calls.begin(), calls.end(), 0);
  const BatchRates rates = spread_rates(members);
  const BatchState start = start_batch(members, rows, cols, random);
  const BatchState got = run_batch(*make_stepper(path), start, rates, calls);
  for (int m = 0; m < members; ++m) {
    const BatchState single =
        run_batch(*make_stepper(path), alone(start, m), rates_of(rates, m), {steps});
    EXPECT_TRUE(same_bits(lesson::member_state(got, m), lesson::member_state(single, 0)))
        << "member " << m << " of " << members << " against the same member alone (" << path << ")";
    gs::State expected = lesson::member_state(start, m);
    gs::reference_advance(expected, rates.member(m), steps);
    EXPECT_TRUE(
        gs::test::states_match(lesson::member_state(got, m), expected, gs::test::kTolerance))
        << "member " << m << " of " << members << " (F = " << rates.feed[m]
        << ", k = " << rates.kill[m] << ") against the reference, " << steps << " steps (" << path
        << ")";
  }
}

struct Case {
  int rows;
  int cols;
  int members;
  bool random;
};

// How gtest prints a case in a failure message.
void PrintTo(const Case& c, std::ostream* out) {
  *out << c.members << " members of " << c.rows << " x " << c.cols
       << (c.random ? ", random starts" : ", canonical start");
}

std::string case_name(const Case& c) {
  return std::to_string(c.rows) + "x" + std::to_string(c.cols) + "_" + std::to_string(c.members) +
         "members_" + (c.random ? "random" : "canonical");
}

std::vector<Case> cases() {
  std::vector<Case> all;
  const std::array<std::array<int, 2>, 6> sizes = {
      {{1, 1}, {1, 7}, {7, 1}, {5, 7}, {17, 33}, {31, 29}}};
  for (const auto& size : sizes) {
    for (const int members : {1, 3, 17}) {
      for (const bool random : {true, false}) all.push_back({size[0], size[1], members, random});
    }
  }
  all.push_back({67, 131, 3, true});
  return all;
}

// ---------------------------------------------------------------------------------------------
// The CPU path
// ---------------------------------------------------------------------------------------------

class CpuBatch : public ::testing::TestWithParam<Case> {};

TEST_P(CpuBatch, EveryMemberIsItsSingleRun) {
  const Case& c = GetParam();
  expect_members_are_single_runs("cpu", c.members, c.rows, c.cols, c.random, {37});
}

TEST_P(CpuBatch, SplitAdvanceIsOneAdvance) {
  const Case& c = GetParam();
  expect_members_are_single_runs("cpu", c.members, c.rows, c.cols, c.random, {1, 4, 32});
}

INSTANTIATE_TEST_SUITE_P(Lesson09, CpuBatch, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           return case_name(param_info.param);
                         });

using gs::test::ThreadCount;

TEST(CpuThreads, ForEachMemberSharesTheMembersAmongThreads) {
  EXPECT_EQ(lesson::threads_in_for_each_member(16, 2), 2)
      << "for_each_member() ran every member on one thread: the members are not shared";
  EXPECT_EQ(lesson::threads_in_for_each_member(16, 3), 3);
}

TEST(CpuThreads, SameBitsWithOneTwoAndThreeThreads) {
  const BatchRates rates = spread_rates(7);
  const BatchState start = start_batch(7, 19, 23, true);
  BatchState one;
  {
    const ThreadCount scoped(1);
    one = run_batch(*lesson::make_cpu_stepper(), start, rates, {21});
  }
  for (const int threads : {2, 3}) {
    const ThreadCount scoped(threads);
    const BatchState many = run_batch(*lesson::make_cpu_stepper(), start, rates, {21});
    for (int m = 0; m < 7; ++m) {
      EXPECT_TRUE(same_bits(lesson::member_state(many, m), lesson::member_state(one, m)))
          << "member " << m << " with " << threads << " threads against 1 thread";
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Members do not leak into each other (both paths)
// ---------------------------------------------------------------------------------------------

// A live member between dead ones and the other way round: (F, k) = (0.01, 0.07) makes the seed
// decay on every grid (v dies out), (0.03, 0.055) makes it grow into a pattern.
void expect_dead_stay_dead(const std::string& path) {
  const int rows = 48;
  const int cols = 48;
  const int steps = 2000;
  BatchRates rates;
  const std::vector<bool> live = {true, false, true, false, false, true};
  for (const bool is_live : live) {
    rates.feed.push_back(is_live ? 0.03f : 0.01f);
    rates.kill.push_back(is_live ? 0.055f : 0.07f);
  }
  const int members = static_cast<int>(live.size());
  const BatchState start = lesson::repeat_state(gs::initial_state(rows, cols), members);
  const BatchState got = run_batch(*make_stepper(path), start, rates, {steps});
  for (int m = 0; m < members; ++m) {
    const gs::State member = lesson::member_state(got, m);
    const float max_v = *std::max_element(member.v.begin(), member.v.end());
    if (live[m]) {
      EXPECT_GT(max_v, 0.1f) << "member " << m << " should carry a pattern (" << path << ")";
    } else {
      EXPECT_LT(max_v, 1e-6f) << "member " << m << " should have died out beside live members ("
                              << path << ")";
    }
    const BatchState single =
        run_batch(*make_stepper(path), alone(start, m), rates_of(rates, m), {steps});
    EXPECT_TRUE(same_bits(member, lesson::member_state(single, 0)))
        << "member " << m << " differs from the same member alone (" << path << ")";
  }
}

// The same members in another order give the same members, bit for bit.
void expect_order_does_not_matter(const std::string& path) {
  const int members = 17;
  const BatchRates rates = spread_rates(members);
  const BatchState start = start_batch(members, 13, 21, true);
  std::vector<int> order(members);
  for (int i = 0; i < members; ++i) order[i] = (i * 5 + 3) % members;  // a permutation
  BatchRates permuted_rates = rates;
  BatchState permuted_start = start;
  for (int i = 0; i < members; ++i) {
    permuted_rates.feed[i] = rates.feed[order[i]];
    permuted_rates.kill[i] = rates.kill[order[i]];
    lesson::set_member(permuted_start, i, lesson::member_state(start, order[i]));
  }
  const BatchState got = run_batch(*make_stepper(path), start, rates, {29});
  const BatchState permuted = run_batch(*make_stepper(path), permuted_start, permuted_rates, {29});
  for (int i = 0; i < members; ++i) {
    EXPECT_TRUE(same_bits(lesson::member_state(permuted, i), lesson::member_state(got, order[i])))
        << "member " << order[i] << " at place " << i << " of the permuted batch (" << path << ")";
  }
}

TEST(CpuIsolation, DeadMembersStayDeadBesideLiveOnes) {
  expect_dead_stay_dead("cpu");
}

TEST(CpuIsolation, OrderOfTheMembersDoesNotMatter) {
  expect_order_does_not_matter("cpu");
}

// ---------------------------------------------------------------------------------------------
// The launch plan for given limits (no GPU needed): an H100's, and the smaller cards'
// ---------------------------------------------------------------------------------------------

// What an H100 (80 GB HBM3) reports.
gs::DeviceLimits h100_limits() {
  gs::DeviceLimits l;
  l.name = "NVIDIA H100 80GB HBM3";
  l.compute_major = 9;
  l.multiprocessors = 132;
  l.shared_per_block = 48 * 1024;
  l.shared_per_block_optin = 227 * 1024;
  l.shared_per_multiprocessor = 228 * 1024;
  l.reserved_shared_per_block = 1024;
  l.registers_per_block = 65536;
  l.registers_per_multiprocessor = 65536;
  l.threads_per_block = 1024;
  l.threads_per_multiprocessor = 2048;
  l.blocks_per_multiprocessor = 32;
  l.memory = std::int64_t{80} << 30;
  return l;
}

TEST(PlanForLimits, ResidentOnAnH100) {
  const lesson::GpuPlan plan = lesson::plan_gpu(128, 128, GpuPath::automatic, h100_limits());
  EXPECT_EQ(plan.path, GpuPath::resident) << plan.summary;
  EXPECT_EQ(plan.shared_bytes, 2 * 128 * 128 * 4);
  EXPECT_EQ(plan.threads_per_block, 1024);
  EXPECT_EQ(plan.rows_per_thread, 16);
  EXPECT_EQ(plan.blocks_per_sm, 1) << "228 KiB per SM hold one block of 128 KiB";
  EXPECT_EQ(plan.sm_count, 132);
  EXPECT_TRUE(plan.fallback.empty()) << plan.fallback;
  EXPECT_EQ(lesson::plan_gpu(199, 141, GpuPath::resident, h100_limits()).rows_per_thread, 32);
}

// Under the T4's and the GTX 1650's limits the default member (128 KiB) streams, and says why;
// asked for the resident kernel it is refused; a member of 70 x 100 cells (56000 bytes) is
// resident on both.
TEST(PlanForLimits, StreamingWhereABlockHoldsLess) {
  for (const char* card : {"t4", "gtx1650"}) {
    SCOPED_TRACE(card);
    const gs::DeviceLimits limits = gs::reduce_limits(h100_limits(), card);
    const lesson::GpuPlan plan = lesson::plan_gpu(128, 128, GpuPath::automatic, limits);
    EXPECT_EQ(plan.path, GpuPath::streaming) << plan.summary;
    EXPECT_EQ(plan.sm_count, limits.multiprocessors);
    for (const std::string& text :
         std::vector<std::string>{"128 KiB", "64 KiB", std::string("GS_DEVICE_LIMITS=") + card}) {
      EXPECT_NE(plan.fallback.find(text), std::string::npos) << text << " in " << plan.fallback;
    }
    EXPECT_NE(plan.summary.find(plan.fallback), std::string::npos) << plan.summary;
    try {
      lesson::plan_gpu(128, 128, GpuPath::resident, limits);
      ADD_FAILURE() << "a 128 KiB member was accepted by the resident kernel under " << card;
    } catch (const gs::InvalidParameter& error) {
      EXPECT_NE(std::string(error.what()).find("does not fit"), std::string::npos) << error.what();
      EXPECT_NE(std::string(error.what()).find("64 KiB"), std::string::npos) << error.what();
    }
    const lesson::GpuPlan fits = lesson::plan_gpu(70, 100, GpuPath::automatic, limits);
    EXPECT_EQ(fits.path, GpuPath::resident) << fits.summary;
    EXPECT_EQ(fits.rows_per_thread, 8) << fits.summary;
    EXPECT_EQ(fits.blocks_per_sm, 1) << "64 KiB per SM hold one block of 56000 bytes";
  }
}

TEST(PlanForLimits, FewerThreadsPerBlockMakeLongerSegments) {
  const gs::DeviceLimits limits = gs::reduce_limits(h100_limits(), "threads_per_block=512");
  const lesson::GpuPlan plan = lesson::plan_gpu(128, 128, GpuPath::automatic, limits);
  EXPECT_EQ(plan.path, GpuPath::resident) << plan.summary;
  EXPECT_EQ(plan.threads_per_block, 512) << plan.summary;
  EXPECT_EQ(plan.rows_per_thread, 32) << plan.summary;
}

TEST(PlanForLimits, StreamingAskedForIsStreamingWithoutExcuse) {
  const lesson::GpuPlan plan = lesson::plan_gpu(16, 16, GpuPath::streaming, h100_limits());
  EXPECT_EQ(plan.path, GpuPath::streaming);
  EXPECT_TRUE(plan.fallback.empty()) << plan.fallback;
  EXPECT_EQ(plan.bytes_per_member, 4 * 16 * 16 * 4 + 8);
}

TEST(PlanForLimits, NoKernelThatFitsIsRefused) {
  const gs::DeviceLimits limits = gs::reduce_limits(h100_limits(), "threads_per_block=128");
  EXPECT_THROW(lesson::plan_gpu(255, 257, GpuPath::automatic, limits), gs::InvalidParameter)
      << "neither the resident kernel nor the streaming one's 256 threads fit";
}

TEST(CpuBatchChecks, LoadRefusesRatesOfAnotherSize) {
  BatchRates rates = spread_rates(3);
  rates.kill.pop_back();
  EXPECT_THROW(lesson::make_cpu_stepper()->load(start_batch(3, 5, 5, true), rates),
               gs::InvalidParameter);
}

// ---------------------------------------------------------------------------------------------
// The GPU paths
// ---------------------------------------------------------------------------------------------

struct GpuCase {
  std::string path;
  Case shape;
};

std::vector<GpuCase> gpu_cases() {
  std::vector<GpuCase> all;
  for (const char* path : {"resident", "streaming"}) {
    for (const Case& c : cases()) all.push_back({path, c});
  }
  return all;
}

void PrintTo(const GpuCase& g, std::ostream* out) {
  *out << g.path << " kernel, ";
  PrintTo(g.shape, out);
}

class GpuBatch : public ::testing::TestWithParam<GpuCase> {};

TEST_P(GpuBatch, EveryMemberIsItsSingleRun) {
  GS_REQUIRE_GPU();
  const GpuCase& g = GetParam();
  if (g.path == "resident" && !resident_fits(g.shape.rows, g.shape.cols)) return;
  expect_members_are_single_runs(g.path, g.shape.members, g.shape.rows, g.shape.cols,
                                 g.shape.random, {5, 32});
}

INSTANTIATE_TEST_SUITE_P(Lesson09, GpuBatch, ::testing::ValuesIn(gpu_cases()),
                         [](const ::testing::TestParamInfo<GpuCase>& param_info) {
                           return param_info.param.path + "_" + case_name(param_info.param.shape);
                         });

// The plan on this GPU is the plan for its limits (GS_DEVICE_LIMITS included): resident at the
// default size where a block may hold 128 KiB (an H100), streaming, saying why, where it may not
// (a T4, a GTX 1650).
TEST(GpuPlan, ResidentWhenAMemberFitsTheDevice) {
  GS_REQUIRE_GPU();
  const gs::DeviceLimits& limits = gs::device_limits();
  const lesson::GpuPlan plan = lesson::plan_gpu(128, 128, GpuPath::automatic);
  const lesson::GpuPlan expected = lesson::plan_gpu(128, 128, GpuPath::automatic, limits);
  EXPECT_EQ(plan.path, expected.path) << plan.summary;
  EXPECT_EQ(plan.sm_count, limits.multiprocessors);
  if (limits.shared_per_block_optin >= 2 * 128 * 128 * 4) {
    EXPECT_EQ(plan.path, GpuPath::resident) << plan.summary;
    EXPECT_EQ(plan.shared_bytes, 2 * 128 * 128 * 4) << "one copy of u and v: 128 KiB";
    EXPECT_EQ(plan.threads_per_block, 1024) << plan.summary;
    EXPECT_EQ(plan.rows_per_thread, 16) << plan.summary;
    EXPECT_GE(plan.blocks_per_sm, 1) << plan.summary;
    EXPECT_LE(plan.blocks_per_sm, expected.blocks_per_sm) << "the limits' model bounds it";
  } else {
    EXPECT_EQ(plan.path, GpuPath::streaming) << plan.summary;
    EXPECT_NE(plan.fallback.find("128 KiB"), std::string::npos) << plan.fallback;
    EXPECT_NE(plan.fallback.find(gs::bytes_text(limits.shared_per_block_optin)), std::string::npos)
        << plan.fallback;
    if (limits.overridden()) {
      EXPECT_NE(plan.fallback.find(limits.override_spec), std::string::npos) << plan.fallback;
    }
  }
}

TEST(GpuPlan, StreamingWhenItDoesNot) {
  GS_REQUIRE_GPU();
  const lesson::GpuPlan plan = lesson::plan_gpu(255, 257, GpuPath::automatic);
  EXPECT_EQ(plan.path, GpuPath::streaming) << plan.summary;
  try {
    lesson::plan_gpu(255, 257, GpuPath::resident);
    ADD_FAILURE() << "a 255 x 257 member (510 KB) was accepted by the resident kernel";
  } catch (const gs::InvalidParameter& error) {
    EXPECT_NE(std::string(error.what()).find("does not fit"), std::string::npos) << error.what();
  }
}

// The size gs_sweep runs by default: 1024 threads of 16 rows each, two passes per step, where a
// block may hold 128 KiB; elsewhere the automatic path, which streams.
TEST(GpuBatchLarge, ResidentAtTheDefaultSize) {
  GS_REQUIRE_GPU();
  expect_members_are_single_runs(resident_fits(128, 128) ? "resident" : "auto", 3, 128, 128, true,
                                 {5, 32});
}

// Every segment length the plan gives besides those of the cases above (1 and 16 rows per
// thread): 2, 4, 8 (one pass of the most rows a pass holds) and 32 (four passes per step), the
// last segment of every column cut short; 199 x 141 is 219 KB of shared memory per block.
TEST(GpuBatchLarge, ResidentAtEverySegmentLength) {
  GS_REQUIRE_GPU();
  const std::array<std::array<int, 3>, 4> shapes = {
      {{45, 41, 2}, {47, 43, 4}, {70, 100, 8}, {199, 141, 32}}};
  for (const auto& shape : shapes) {
    SCOPED_TRACE(std::to_string(shape[0]) + " x " + std::to_string(shape[1]));
    if (!resident_fits(shape[0], shape[1])) continue;  // refused, as it must be
    const lesson::GpuPlan plan = lesson::plan_gpu(shape[0], shape[1], GpuPath::resident);
    ASSERT_EQ(plan.rows_per_thread, shape[2]) << plan.summary;
    expect_members_are_single_runs("resident", 2, shape[0], shape[1], true, {3, 8});
  }
}

TEST(GpuBatchLarge, StreamingMembersTooLargeForSharedMemory) {
  GS_REQUIRE_GPU();
  expect_members_are_single_runs("streaming", 2, 255, 257, true, {3});
}

TEST(GpuIsolation, LongDeadMembersStayDeadBesideLiveOnes) {
  GS_REQUIRE_GPU();
  expect_dead_stay_dead("resident");
  expect_dead_stay_dead("streaming");
}

TEST(GpuIsolation, OrderOfTheMembersDoesNotMatter) {
  GS_REQUIRE_GPU();
  expect_order_does_not_matter("resident");
  expect_order_does_not_matter("streaming");
}

// The resident kernel advances at most a few hundred steps per launch and keeps the state in
// global memory between launches: cutting the same steps differently gives the same bits.
TEST(GpuIsolation, LongLaunchBoundariesDoNotShowInTheResult) {
  GS_REQUIRE_GPU();
  const BatchRates rates = spread_rates(3);
  const BatchState start = start_batch(3, 17, 33, true);
  const BatchState once = run_batch(*make_stepper("resident"), start, rates, {1201});
  const BatchState cut = run_batch(*make_stepper("resident"), start, rates, {250, 1, 700, 250});
  for (int m = 0; m < 3; ++m) {
    EXPECT_TRUE(same_bits(lesson::member_state(cut, m), lesson::member_state(once, m)))
        << "member " << m;
  }
}

// ---------------------------------------------------------------------------------------------
// The HDF5 files of named datasets (common/'s DatasetWriter and DatasetReader)
// ---------------------------------------------------------------------------------------------

fs::path work_dir() {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("gs_lesson09_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

std::string fresh(const std::string& name) {
  const fs::path path = work_dir() / name;
  fs::remove_all(path);
  return path.string();
}

// No partial file of `path` is left in its directory.
void expect_no_partial_left(const std::string& path) {
  const std::string prefix = fs::path(path).filename().string() + ".partial";
  for (const auto& entry : fs::directory_iterator(fs::path(path).parent_path())) {
    EXPECT_NE(entry.path().filename().string().rfind(prefix, 0), 0u)
        << "partial file left: " << entry.path();
  }
}

// Nothing named like the output, partial or not, is left in its directory.
void expect_no_file_left(const std::string& path) {
  EXPECT_FALSE(fs::exists(path)) << path;
  expect_no_partial_left(path);
}

TEST(DatasetFile, WritesReadsAndAppearsOnlyOnCommit) {
  const std::string path = fresh("datasets.h5");
  const std::vector<float> cube = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const std::vector<std::int32_t> flags = {1, 0, 1};
  {
    gs::DatasetWriter writer(path);
    writer.write("cube", {3, 2, 2}, cube.data(), "three 2 x 2 members");
    writer.write("flags", {3}, flags.data());
    writer.set_integer("rows", 2);
    writer.set_number("dt", 0.5);
    writer.set_text("layout", "member, row, col");
    EXPECT_FALSE(fs::exists(path)) << "the file must not appear before commit()";
    EXPECT_TRUE(fs::exists(writer.temporary_path()));
    writer.commit(false);
  }
  gs::DatasetReader reader(path);
  EXPECT_EQ(reader.shape("cube"), (std::vector<std::int64_t>{3, 2, 2}));
  EXPECT_EQ(reader.read_floats("cube"), cube);
  EXPECT_EQ(reader.read_ints("flags"), flags);
  EXPECT_EQ(reader.description("cube"), "three 2 x 2 members");
  EXPECT_EQ(reader.number("rows"), 2.0);
  EXPECT_EQ(reader.number("dt"), 0.5);
  EXPECT_EQ(reader.text("layout"), "member, row, col");
  EXPECT_TRUE(reader.has_dataset("flags"));
  EXPECT_FALSE(reader.has_dataset("nothing"));
  EXPECT_THROW(reader.number("nothing"), gs::OutputError);
}

TEST(DatasetFile, WithoutCommitNothingIsLeft) {
  const std::string path = fresh("abandoned.h5");
  {
    gs::DatasetWriter writer(path);
    const float value = 1.0f;
    writer.write("one", {1}, &value);
  }
  expect_no_file_left(path);
}

// ---------------------------------------------------------------------------------------------
// The program end to end
// ---------------------------------------------------------------------------------------------

using gs::test::Outcome;
using gs::test::run;

const std::string kProgram = GS_LESSON_PROGRAM;

TEST(Program, WritesTheResultsAndTheMap) {
  const std::string h5 = fresh("sweep.h5");
  const std::string png = fresh("sweep.png");
  const int rows = 24;
  const int cols = 20;
  const int steps = 50;
  const Outcome outcome =
      run(kProgram + " --feed 0.02:0.05:3 --kill 0.05:0.065:2 -r 24 -c 20 --steps 50 --window 10" +
          " --device cpu --tile 16 --no-fsync -o " + h5 + " --png " + png);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("cell-updates/s"), std::string::npos) << outcome.output;

  gs::DatasetReader reader(h5);
  ASSERT_EQ(reader.shape("v"), (std::vector<std::int64_t>{6, rows, cols}));
  const std::vector<float> v = reader.read_floats("v");
  const std::vector<float> feed = reader.read_floats("feed");
  const std::vector<float> kill = reader.read_floats("kill");
  ASSERT_EQ(feed.size(), 6u);
  ASSERT_EQ(kill.size(), 6u);
  const std::vector<float> mean_v = reader.read_floats("mean_v");
  const std::vector<float> max_v = reader.read_floats("max_v");
  const std::vector<std::int32_t> died = reader.read_ints("died");
  EXPECT_EQ(reader.number("rows"), rows);
  EXPECT_EQ(reader.number("cols"), cols);
  EXPECT_EQ(reader.number("steps"), steps);
  EXPECT_EQ(reader.number("window"), 10);
  EXPECT_FLOAT_EQ(static_cast<float>(reader.number("deltat")), 1.0f);
  EXPECT_FLOAT_EQ(static_cast<float>(reader.number("diffusion_u")), 0.1f);
  EXPECT_FALSE(reader.description("change").empty());
  const std::size_t cells = static_cast<std::size_t>(rows) * cols;
  for (int m = 0; m < 6; ++m) {
    // Member m = (F index) * 2 + (k index), F from 0.02 to 0.05 in 3, k from 0.05 to 0.065 in 2.
    EXPECT_FLOAT_EQ(feed[m], 0.02f + 0.015f * static_cast<float>(m / 2)) << "member " << m;
    EXPECT_FLOAT_EQ(kill[m], m % 2 == 0 ? 0.05f : 0.065f) << "member " << m;
    gs::Rates member_rates;
    member_rates.feed = feed[m];
    member_rates.kill = kill[m];
    gs::State expected = gs::initial_state(rows, cols);
    gs::reference_advance(expected, member_rates, steps);
    const float* member_v = v.data() + m * cells;
    EXPECT_TRUE(
        gs::test::fields_match("v", rows, cols, member_v, expected.v.data(), gs::test::kTolerance))
        << "member " << m;
    const double mean = std::accumulate(member_v, member_v + cells, 0.0) / cells;
    const float largest = *std::max_element(member_v, member_v + cells);
    EXPECT_NEAR(mean_v[m], mean, 1e-6) << "member " << m;
    EXPECT_EQ(max_v[m], largest) << "member " << m;
    EXPECT_EQ(died[m], largest < 1e-3f ? 1 : 0) << "member " << m;
  }
  std::ifstream picture(png, std::ios::binary);
  ASSERT_TRUE(picture) << png;
  std::array<unsigned char, 24> header{};
  picture.read(reinterpret_cast<char*>(header.data()), header.size());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(header.data()) + 1, 3), "PNG");
  const auto big_endian = [&header](int at) {
    return (header[at] << 24) | (header[at + 1] << 16) | (header[at + 2] << 8) | header[at + 3];
  };
  EXPECT_GT(big_endian(16), 2 * 16) << "width: at least the two columns of tiles";
  EXPECT_GT(big_endian(20), 3 * 16) << "height: at least the three rows of tiles";
  expect_no_partial_left(h5);
  expect_no_partial_left(png);
}

struct BadRun {
  const char* name;
  std::string arguments;
  const char* message;
  int exit_code;
};

class ProgramRefuses : public ::testing::TestWithParam<BadRun> {};

TEST_P(ProgramRefuses, WithItsMessageAndNoFile) {
  const std::string h5 = fresh(std::string(GetParam().name) + ".h5");
  const std::string png = fresh(std::string(GetParam().name) + ".png");
  const Outcome outcome =
      run(kProgram + " --feed 0.02:0.05:2 --kill 0.05:0.06:2 -r 16 -c 16" + " --steps 10 -o " + h5 +
          " --png " + png + " " + GetParam().arguments);
  // The flags come after the defaults above: the last value of a repeated flag wins.
  EXPECT_EQ(outcome.exit_code, GetParam().exit_code) << outcome.output;
  EXPECT_NE(outcome.output.find(GetParam().message), std::string::npos) << outcome.output;
  expect_no_file_left(h5);
  expect_no_file_left(png);
}

INSTANTIATE_TEST_SUITE_P(
    BadInput, ProgramRefuses,
    ::testing::Values(
        BadRun{"inverted", "--feed 0.06:0.01:4", "the range is inverted", 2},
        BadRun{"empty", "--kill 0.05:0.05:4", "the range is empty", 2},
        BadRun{"count_zero", "--feed 0.01:0.06:0", "the count must be between 1", 2},
        BadRun{"two_parts", "--feed 0.01:0.06", "FIRST:LAST:COUNT", 2},
        BadRun{"not_a_number", "--kill abc", "FIRST:LAST:COUNT", 2},
        BadRun{"zero_feed", "--feed 0:0.05:3", "greater than 0", 2},
        BadRun{"negative_kill", "--kill=-0.05", "greater than 0", 2},
        BadRun{"unstable_dt", "-t 2", "unstable", 2},
        BadRun{"unstable_du", "-u 0.2", "unstable", 2},
        BadRun{"zero_du", "-u 0", "-u/--diffusion-u", 2},
        BadRun{"zero_rows", "-r 0", "-r/--nbrow must be at least 1", 2},
        BadRun{"zero_cols", "-c 0", "-c/--nbcol must be at least 1", 2},
        BadRun{"zero_steps", "--steps 0", "--steps must be at least 1", 2},
        BadRun{"zero_window", "--window 0", "--window must be at least 1", 2},
        BadRun{"too_many_members", "--feed 0.01:0.06:300 --kill 0.04:0.07:300", "at most 65535", 2},
        BadRun{"does_not_fit", "--feed 0.01:0.06:100 --kill 0.04:0.07:100 -r 16384 -c 16384",
               "members of this size fit", 2},
        BadRun{"unknown_flag", "--frobnicate", "frobnicate", 2},
        BadRun{"unknown_device", "--device tpu", "--device", 2},
        BadRun{"missing_directory", "-o /nonexistent_gs_dir/out.h5", "does not exist", 1}),
    [](const ::testing::TestParamInfo<BadRun>& param_info) {
      return std::string(param_info.param.name);
    });

TEST(Program, AGpuWithoutOneIsRefused) {
  if (gs::gpu_status().available) GTEST_SKIP() << "a GPU is present";
  const std::string h5 = fresh("nogpu.h5");
  const std::string png = fresh("nogpu.png");
  const Outcome outcome = run(kProgram + " --feed 0.02 --kill 0.05 -r 8 -c 8 --steps 2" +
                              " --device gpu -o " + h5 + " --png " + png);
  EXPECT_EQ(outcome.exit_code, 3) << outcome.output;
  EXPECT_NE(outcome.output.find("--device gpu"), std::string::npos) << outcome.output;
  expect_no_file_left(h5);
  expect_no_file_left(png);
}

TEST(Program, InterruptedRunLeavesNoFile) {
  const std::string h5 = fresh("interrupted.h5");
  const std::string png = fresh("interrupted.png");
  const Outcome outcome =
      run("sh -c '" + kProgram + " --feed 0.02:0.05:2 --kill 0.05:0.06:2 -r 64 -c 64" +
          " --steps 100000000 -o " + h5 + " --png " + png +
          " & pid=$!; sleep 1; kill -INT $pid; wait $pid'");
  EXPECT_EQ(outcome.exit_code, 130) << outcome.output;
  EXPECT_NE(outcome.output.find("interrupted"), std::string::npos) << outcome.output;
  expect_no_file_left(h5);
  expect_no_file_left(png);
}

TEST(Program, BenchmarkPrintsTheTableAndCsvRows) {
  const std::string csv = fresh("benchmark.csv");
  const Outcome outcome = run(kProgram + " benchmark --device cpu --members 4 -r 16 -c 16" +
                              " --steps 20 --official-steps 2 --sequential-members 2 --csv " + csv);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  for (const char* text : {"| run | implementation |", "batch: 4 members of 16 x 16",
                           "one official-size grid", "sequential single runs", "goal"}) {
    EXPECT_NE(outcome.output.find(text), std::string::npos) << text << " in " << outcome.output;
  }
  std::ifstream file(csv);
  std::string line;
  ASSERT_TRUE(std::getline(file, line));
  EXPECT_EQ(line,
            "implementation,lesson,device,kind,seconds,cell_updates_per_s,steps_timed,"
            "extrapolated,device_name,date,commit");
  int rows = 0;
  while (std::getline(file, line)) {
    ++rows;
    EXPECT_NE(line.find(",cpu,sweep,"), std::string::npos) << line;
  }
  EXPECT_EQ(rows, 3);
}

// Under a smaller card's limits gs_sweep says so, streams the default member and says why, and
// refuses the resident kernel with its reason and no file.
TEST(Program, GpuUnderSmallerLimitsSaysWhyItStreams) {
  GS_REQUIRE_GPU();
  const std::string h5 = fresh("t4.h5");
  const std::string png = fresh("t4.png");
  const std::string sweep = "GS_DEVICE_LIMITS=t4 " + kProgram +
                            " --feed 0.02:0.05:2 --kill 0.05 -r 128 -c 128 --steps 20 --window 5" +
                            " --device gpu --no-fsync -o " + h5 + " --png " + png;
  const Outcome streamed = run(sweep);
  ASSERT_EQ(streamed.exit_code, 0) << streamed.output;
  for (const char* text : {"device limits: the limits of a Tesla T4 (GS_DEVICE_LIMITS=t4)",
                           "GPU streaming kernel", "not resident", "128 KiB", "64 KiB"}) {
    EXPECT_NE(streamed.output.find(text), std::string::npos) << text << " in " << streamed.output;
  }
  const std::string h5_resident = fresh("t4_resident.h5");
  const std::string png_resident = fresh("t4_resident.png");
  const Outcome refused =
      run("GS_DEVICE_LIMITS=t4 " + kProgram +
          " --feed 0.02 --kill 0.05 -r 128 -c 128 --steps 20 --window 5" +
          " --device gpu --path resident -o " + h5_resident + " --png " + png_resident);
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("does not fit the resident kernel"), std::string::npos)
      << refused.output;
  expect_no_file_left(h5_resident);
  expect_no_file_left(png_resident);
  const Outcome invalid = run("GS_DEVICE_LIMITS=t5 " + kProgram +
                              " --feed 0.02 --kill 0.05 -r 16 -c 16 --steps 2 --device gpu -o " +
                              h5_resident + " --png " + png_resident);
  EXPECT_EQ(invalid.exit_code, 2) << invalid.output;
  EXPECT_NE(invalid.output.find("GS_DEVICE_LIMITS=t5: no profile named 't5'"), std::string::npos)
      << invalid.output;
  expect_no_file_left(h5_resident);
}

// The same small sweep on the GPU and the CPU: the same numbers, to rounding.
TEST(Program, GpuGivesTheSameMapAsTheCpu) {
  GS_REQUIRE_GPU();
  std::vector<float> v[2];
  const char* devices[2] = {"gpu", "cpu"};
  for (int i = 0; i < 2; ++i) {
    const std::string h5 = fresh(std::string("device_") + devices[i] + ".h5");
    const Outcome outcome =
        run(kProgram + " --feed 0.02:0.05:3 --kill 0.05:0.065:3 -r 40" +
            " -c 36 --steps 60 --no-png --no-fsync --device " + devices[i] + " -o " + h5);
    ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
    v[i] = gs::DatasetReader(h5).read_floats("v");
  }
  ASSERT_EQ(v[0].size(), v[1].size());
  EXPECT_TRUE(gs::test::fields_match("v (9 members, stacked)", 9 * 40, 36, v[0].data(), v[1].data(),
                                     gs::test::kTolerance));
}

}  // namespace
