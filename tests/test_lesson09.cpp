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
// written), a signal, the benchmark. On several GPUs (multi_gpu.hpp): the split of the members
// into shares and the threads' errors on the CPU; where two GPUs are present, a sweep spread over
// them gives the one-GPU sweep's bits, each GPU holds only its share, and the benchmark times
// one GPU and both.
#include <gtest/gtest.h>
#include <omp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <memory>
#include <numeric>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "batch.hpp"
#include "check.hpp"
#include "device_profiles.hpp"
#include "gs/device_limits.hpp"
#include "gs/hdf5_io.hpp"
#include "gs/output_file.hpp"
#include "gs/reference.hpp"
#include "multi_gpu.hpp"  // apps/gs_sweep/
#include "openmp_threads.hpp"
#include "point/lesson09_point.hpp"
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

// The lesson's points (tests/point/lesson09_point.hpp), on the host: members are independent
// (one member's F and k change its own result only), on the CPU path and in the resident kernel;
// and the resident kernel, walked thread by thread, reads global memory before its first barrier
// and writes it after its last, never between. Their fixtures of wrong answers,
// tests/fixtures/09_parameter_sweep/, are run by lesson09.point_fixture.*.
TEST(Lesson09Point, OneMembersRatesChangeOnlyItsOwnResult) {
  const std::string problem = lesson09_point::check_members_independent();
  EXPECT_TRUE(problem.empty()) << problem;
}

TEST(Lesson09Point, TheResidentKernelTouchesGlobalMemoryOncePerLaunch) {
  const std::string problem = lesson09_point::check_kernel_stays_resident();
  EXPECT_TRUE(problem.empty()) << problem;
}

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

using gs::test::h100_limits;  // what an H100 (80 GB HBM3) reports

// ---------------------------------------------------------------------------------------------
// Several GPUs: the split into shares, and one thread per share (multi_gpu.hpp), on the CPU
// ---------------------------------------------------------------------------------------------

// Every member in exactly one share, the shares in member order and on the devices in the order
// given, none empty, their sizes within one of each other, the larger ones first.
TEST(MemberSplit, SharesCoverEveryMemberOnceInOrderAndEvenly) {
  const std::vector<std::vector<int>> device_lists = {
      {0}, {0, 1}, {0, 1, 2}, {3, 1}, {0, 1, 2, 3, 4, 5, 6, 7}};
  for (const int members : {1, 2, 3, 5, 7, 8, 17, 1000, 1023, 65535}) {
    for (const std::vector<int>& devices : device_lists) {
      SCOPED_TRACE(std::to_string(members) + " members on " + std::to_string(devices.size()) +
                   " device(s)");
      const std::vector<lesson::Share> shares = lesson::split_members(members, devices);
      ASSERT_EQ(shares.size(), std::min<std::size_t>(members, devices.size()));
      int next = 0;
      for (std::size_t i = 0; i < shares.size(); ++i) {
        EXPECT_EQ(shares[i].device, devices[i]) << "share " << i;
        EXPECT_EQ(shares[i].first, next) << "share " << i << " does not start where the last ended";
        EXPECT_GE(shares[i].count, 1) << "share " << i << " is empty";
        EXPECT_LE(shares[i].count, shares.front().count) << "share " << i;
        EXPECT_GE(shares[i].count, shares.front().count - 1) << "share " << i;
        if (i > 0) {
          EXPECT_LE(shares[i].count, shares[i - 1].count) << "larger shares first";
        }
        next = shares[i].first + shares[i].count;
      }
      EXPECT_EQ(next, members) << "the shares end at the last member";
    }
  }
}

TEST(MemberSplit, MoreGpusThanMembersLeavesTheLastGpusOut) {
  const std::vector<lesson::Share> shares = lesson::split_members(3, {0, 1, 2, 3, 4, 5, 6, 7});
  ASSERT_EQ(shares.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(shares[i].device, i);
    EXPECT_EQ(shares[i].first, i);
    EXPECT_EQ(shares[i].count, 1);
  }
  const std::vector<lesson::Share> odd = lesson::split_members(1025, {0, 1});
  ASSERT_EQ(odd.size(), 2u);
  EXPECT_EQ(odd[0].count, 513);
  EXPECT_EQ(odd[1].first, 513);
  EXPECT_EQ(odd[1].count, 512);
  EXPECT_THROW(lesson::split_members(0, {0, 1}), gs::InvalidParameter);
  EXPECT_THROW(lesson::split_members(4, {}), gs::InvalidParameter);
}

TEST(MemberSplit, AShareHasItsMembersRates) {
  BatchRates rates = spread_rates(7);
  rates.diffusion_u = 0.09f;
  rates.dt = 0.5f;
  const lesson::Share share{1, 4, 3};
  const BatchRates part = lesson::share_rates(rates, share);
  EXPECT_EQ(part.feed, std::vector<float>(rates.feed.begin() + 4, rates.feed.end()));
  EXPECT_EQ(part.kill, std::vector<float>(rates.kill.begin() + 4, rates.kill.end()));
  EXPECT_EQ(part.diffusion_u, 0.09f);
  EXPECT_EQ(part.diffusion_v, rates.diffusion_v);
  EXPECT_EQ(part.dt, 0.5f);
}

// Shares without a device (kNoDevice: no cudaSetDevice) test the threads on any machine.
std::vector<lesson::Share> deviceless_shares(int count) {
  std::vector<lesson::Share> shares;
  for (int i = 0; i < count; ++i) shares.push_back({lesson::kNoDevice, i, 1});
  return shares;
}

TEST(ShareThreads, OneShareRunsOnTheCallingThreadSeveralOnAThreadEach) {
  std::thread::id one;
  lesson::run_shares(deviceless_shares(1), [&one](std::size_t, const std::atomic<bool>&) {
    one = std::this_thread::get_id();
  });
  EXPECT_EQ(one, std::this_thread::get_id());
  std::vector<std::thread::id> ids(3);
  lesson::run_shares(deviceless_shares(3), [&ids](std::size_t i, const std::atomic<bool>&) {
    ids[i] = std::this_thread::get_id();
  });
  for (std::size_t i = 0; i < ids.size(); ++i) {
    EXPECT_NE(ids[i], std::thread::id()) << "share " << i << " did not run";
    EXPECT_NE(ids[i], std::this_thread::get_id()) << "share " << i;
    for (std::size_t j = 0; j < i; ++j) EXPECT_NE(ids[i], ids[j]) << "shares " << j << ", " << i;
  }
}

// Share 1 fails at once; the others run until told to stop (a bound of 20 s stands for a hang),
// one of them failing again on its way out. The first failure comes back once, with its type,
// after every thread has ended.
TEST(ShareThreads, TheFirstErrorComesBackOnceAndStopsTheOthers) {
  std::atomic<int> stopped{0};
  std::atomic<int> running{0};
  try {
    lesson::run_shares(deviceless_shares(4), [&](std::size_t i, const std::atomic<bool>& stop) {
      ++running;
      struct Leave {
        std::atomic<int>& running;
        ~Leave() { --running; }
      } leave{running};
      if (i == 1) throw gs::InvalidParameter("share 1 failed");
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (std::chrono::steady_clock::now() < give_up) {
        if (stop.load()) {
          ++stopped;
          if (i == 3) throw std::runtime_error("share 3 failed too, later");
          lesson::throw_if_stopped(stop);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    ADD_FAILURE() << "run_shares() returned although share 1 failed";
  } catch (const gs::InvalidParameter& error) {
    EXPECT_STREQ(error.what(), "share 1 failed");
  }
  EXPECT_EQ(stopped.load(), 3) << "every other share saw `stop`";
  EXPECT_EQ(running.load(), 0) << "a share was still running when run_shares() returned";
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
        BadRun{"window_beyond_steps", "--window 11",
               "--window must be at most --steps (10): the change is measured over the last W "
               "steps of the run (got 11)",
               2},
        // The members compute in float32: an end of a range, or a shared rate, that does not
        // convert to a normal float32 is refused, never run as inf or 0.
        BadRun{"feed_beyond_float32", "--feed 1e39",
               "--feed 1e39: 1e39 is too large for float32 (its magnitude must be at most "
               "3.40282e+38",
               2},
        BadRun{"feed_below_float32", "--feed 1e-46",
               "--feed 1e-46: 1e-46 is too small for float32 (its magnitude must be 0 or at least "
               "1.17549e-38",
               2},
        BadRun{"kill_end_subnormal", "--kill 1e-40:0.05:3", "1e-40 is too small for float32", 2},
        BadRun{"dt_beyond_float32", "-t 1e39", "--deltat: 1e39 is too large for float32", 2},
        BadRun{"vmax_nan", "--vmax nan", "--vmax: nan is not a finite number", 2},
        BadRun{"vmax_beyond_float32", "--vmax 1e39", "--vmax: 1e39 is too large for float32", 2},
        BadRun{"too_many_members", "--feed 0.01:0.06:300 --kill 0.04:0.07:300", "at most 65535", 2},
        BadRun{"does_not_fit", "--feed 0.01:0.06:100 --kill 0.04:0.07:100 -r 16384 -c 16384",
               "members of this size fit", 2},
        BadRun{"unknown_flag", "--frobnicate", "frobnicate", 2},
        BadRun{"unknown_device", "--device tpu", "--device", 2},
        BadRun{"gpus_zero", "--gpus 0", "--gpus takes `all` or a number of GPUs of at least 1", 2},
        BadRun{"gpus_word", "--gpus two", "--gpus takes `all` or a number of GPUs", 2},
        BadRun{"gpus_on_the_cpu", "--device cpu --gpus 2", "--device cpu for none", 2},
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

// ---------------------------------------------------------------------------------------------
// The program's files follow common/'s output rules (gs/output_file.hpp)
// ---------------------------------------------------------------------------------------------

// A quick sweep (4 members of 16 x 16, 10 steps, on the CPU) and one of half an hour: a file
// refused only after the work would make a test of the latter run into its `timeout`.
const std::string kQuickSweep = kProgram +
                                " --feed 0.02:0.05:2 --kill 0.05:0.06:2 -r 16 -c 16 --steps 10" +
                                " --device cpu --no-fsync";
const std::string kEndlessSweep = "timeout 20 " + kProgram +
                                  " --feed 0.02:0.05:2 --kill 0.05:0.06:2 -r 64 -c 64" +
                                  " --steps 100000000 --device cpu";

std::string fresh_directory(const std::string& name) {
  const std::string dir = fresh(name);
  fs::create_directories(dir);
  return dir;
}

std::string read_all(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

mode_t mode_of(const std::string& path) {
  struct stat status {};
  EXPECT_EQ(::stat(path.c_str(), &status), 0) << path;
  return status.st_mode & 07777;
}

double seconds_of(const std::function<void()>& work) {
  const auto start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Found by an attacker: the map was written to `<png>.partial-<pid>`, following a link planted
// there. The shell plants links at both files' old names for its own process id, which the
// program keeps (exec).
TEST(ProgramOutput, ALinkPlantedAtTheOldTemporaryNameIsNotFollowed) {
  const std::string dir = fresh_directory("planted");
  std::ofstream(dir + "/victim") << "precious";
  const Outcome outcome = run("cd '" + dir + "' && sh -c 'ln -s victim map.png.partial-$$ && " +
                              "ln -s victim sweep.h5.partial-$$ && exec " + kQuickSweep +
                              " -o sweep.h5 --png map.png'");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_EQ(read_all(dir + "/victim"), "precious") << "a planted link was followed";
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(dir + "/map.png")));
  EXPECT_EQ(read_all(dir + "/map.png").substr(1, 3), "PNG");
  EXPECT_EQ(gs::DatasetReader(dir + "/sweep.h5").shape("v"),
            (std::vector<std::int64_t>{4, 16, 16}));
}

// Case 4: `-o x.h5 --png ./x.h5` replaced x.h5 by a file whose `v` held PNG bytes.
TEST(ProgramOutput, TwoFlagsNamingOneFileAreRefusedBeforeAnyWork) {
  const std::string dir = fresh_directory("same_file");
  fs::create_directories(dir + "/sub");
  ASSERT_EQ(run("cd '" + dir + "' && " + kQuickSweep + " -o x.h5 --no-png").exit_code, 0);
  const std::string before = read_all(dir + "/x.h5");
  fs::create_symlink("x.h5", dir + "/link.png");
  for (const std::string png : {"./x.h5", "sub/../x.h5", "link.png"}) {
    Outcome outcome;
    const double took = seconds_of(
        [&] { outcome = run("cd '" + dir + "' && " + kEndlessSweep + " -o x.h5 --png " + png); });
    EXPECT_EQ(outcome.exit_code, 1) << png << ": " << outcome.output;
    EXPECT_NE(outcome.output.find("-o 'x.h5' and --png '" + png + "' name the same file"),
              std::string::npos)
        << outcome.output;
    EXPECT_LT(took, 10.0) << "refused before computing";
    EXPECT_EQ(read_all(dir + "/x.h5"), before) << png << ": the previous file was changed";
    expect_no_partial_left(dir + "/x.h5");
  }
}

// Case 5: symbolic links were replaced by regular files, and a 0600 file became 0644.
TEST(ProgramOutput, LinksAreWrittenThroughAndModesKept) {
  const std::string dir = fresh_directory("links");
  fs::create_directories(dir + "/real");
  ASSERT_EQ(run(kQuickSweep + " -o " + dir + "/real/r.h5 --png " + dir + "/real/r.png").exit_code,
            0);
  ASSERT_EQ(::chmod((dir + "/real/r.h5").c_str(), 0600), 0);
  ASSERT_EQ(::chmod((dir + "/real/r.png").c_str(), 0600), 0);
  const std::string old_png = read_all(dir + "/real/r.png");
  fs::create_symlink("real/r.h5", dir + "/latest.h5");
  fs::create_symlink("real/r.png", dir + "/latest.png");
  const Outcome outcome = run(kQuickSweep + " --feed 0.03 --kill 0.055 -o " + dir +
                              "/latest.h5 --png " + dir + "/latest.png");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  for (const char* name : {"latest.h5", "latest.png"}) {
    EXPECT_TRUE(fs::is_symlink(dir + "/" + name)) << name << " was replaced by a file";
  }
  EXPECT_EQ(gs::DatasetReader(dir + "/real/r.h5").read_floats("feed"), std::vector<float>{0.03f})
      << "the file the link points to was not written";
  EXPECT_NE(read_all(dir + "/real/r.png"), old_png);
  EXPECT_EQ(mode_of(dir + "/real/r.h5"), 0600u);
  EXPECT_EQ(mode_of(dir + "/real/r.png"), 0600u);
  expect_no_partial_left(dir + "/real/r.h5");
  expect_no_partial_left(dir + "/real/r.png");
}

// Case 6: `gs_sweep benchmark --csv FIFO` (or --markdown) waited for a reader forever.
TEST(ProgramOutput, TheBenchmarkRefusesAFifoWithoutHanging) {
  const std::string dir = fresh_directory("fifo");
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  for (const std::string flag : {"--csv", "--markdown"}) {
    const Outcome outcome =
        run("timeout 60 " + kProgram + " benchmark --device cpu --members 4 -r 16 -c 16" +
            " --steps 20 --official-steps 2 --sequential-members 2 " + flag + " " + fifo);
    EXPECT_EQ(outcome.exit_code, 1) << flag << ": " << outcome.output;
    EXPECT_NE(outcome.output.find("refusing to write " + flag + " '" + fifo + "': it is a FIFO"),
              std::string::npos)
        << outcome.output;
    EXPECT_EQ(outcome.output.find("batch: 4 members"), std::string::npos)
        << "refused before measuring: " << outcome.output;
  }
}

// Case 10: a name of 252 to 255 bytes made a temporary name longer than NAME_MAX, which failed
// after the work ("is the disk full?"); a longer one was refused naming -o for --png.
TEST(ProgramOutput, NamesUpTo255BytesWorkAndLongerOnesAreRefusedBeforeAnyWork) {
  const std::string dir = fresh_directory("long_names");
  const std::string h5 = dir + "/" + std::string(252, 'h') + ".h5";    // 255 bytes
  const std::string png = dir + "/" + std::string(251, 'p') + ".png";  // 255 bytes
  const Outcome outcome = run(kQuickSweep + " -o " + h5 + " --png " + png);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_TRUE(fs::exists(h5));
  EXPECT_TRUE(fs::exists(png));
  expect_no_partial_left(h5);
  expect_no_partial_left(png);
  const std::string too_long = dir + "/" + std::string(252, 'q') + ".png";  // 256 bytes
  Outcome refused;
  const double took = seconds_of(
      [&] { refused = run(kEndlessSweep + " -o " + dir + "/out.h5 --png " + too_long); });
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_NE(refused.output.find("cannot write --png '" + too_long + "'"), std::string::npos)
      << refused.output;
  EXPECT_NE(refused.output.find("NAME_MAX"), std::string::npos) << refused.output;
  EXPECT_LT(took, 10.0) << "refused before computing";
}

// Case 10: a map wider than libpng writes (1,000,000 pixels) failed after the work.
TEST(ProgramOutput, AMapWiderThanAPngMayBeIsRefusedBeforeAnyWork) {
  // 1000 members of 1 x 1024 cells, tiles of 1 x 1024 pixels: over 1,025,000 pixels across.
  const std::string dir = fresh_directory("wide_map");
  Outcome outcome;
  const double took = seconds_of([&] {
    outcome = run("timeout 20 " + kProgram + " --feed 0.02 --kill 0.04:0.07:1000 -r 1 -c 1024" +
                  " --tile 1 --steps 100000000 --device cpu -o " + dir + "/wide.h5 --png " + dir +
                  "/wide.png");
  });
  EXPECT_EQ(outcome.exit_code, 1) << outcome.output;
  EXPECT_NE(outcome.output.find("cannot write --png '" + dir + "/wide.png': a PNG of "),
            std::string::npos)
      << outcome.output;
  EXPECT_NE(outcome.output.find("1000000"), std::string::npos) << outcome.output;
  EXPECT_LT(took, 10.0) << "refused before computing";
  expect_no_file_left(dir + "/wide.h5");
  expect_no_file_left(dir + "/wide.png");
}

// Case 10: the temporary file left by a killed gs_sweep went unmentioned by the next run. A
// process that has exited stands for the killed run: its temporary files carry its process id.
TEST(ProgramOutput, TheNextRunListsTheTemporaryFilesOfAKilledRun) {
  const std::string dir = fresh_directory("killed");
  std::string host;
  {
    gs::OutputFile probe(dir + "/probe", gs::OutputOptions("-o", nullptr));
    const std::string rest = fs::path(probe.temporary_path()).filename().string().substr(14);
    host = rest.substr(0, rest.rfind('-'));
    host = host.substr(0, host.rfind('-'));
  }
  const pid_t killed = ::fork();
  if (killed == 0) ::_exit(0);
  int status = 0;
  ASSERT_EQ(::waitpid(killed, &status, 0), killed);
  std::vector<std::string> left;
  for (const char* name : {"sweep.h5", "map.png"}) {
    left.push_back(dir + "/" + name + ".partial-" + host + "-" + std::to_string(killed) +
                   "-0badc0de");
    std::ofstream(left.back()) << "half a file";
  }
  const Outcome outcome = run(kQuickSweep + " -o " + dir + "/sweep.h5 --png " + dir + "/map.png");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  for (const std::string& path : left) {
    EXPECT_NE(outcome.output.find("rm -- '" + path + "'"), std::string::npos) << outcome.output;
    EXPECT_TRUE(fs::exists(path)) << "never deleted by the program";
  }
  EXPECT_LT(outcome.output.find("warning"), outcome.output.find("compute"))
      << "listed before the work: " << outcome.output;
}

// Case 10: the messages about --png named -o.
TEST(ProgramOutput, MessagesAboutThePictureNameItsFlag) {
  const std::string dir = fresh_directory("png_messages");
  fs::create_directories(dir + "/a_directory");
  const Outcome directory = run(kQuickSweep + " -o " + dir + "/x.h5 --png " + dir + "/a_directory");
  EXPECT_EQ(directory.exit_code, 1) << directory.output;
  EXPECT_NE(directory.output.find("--png '" + dir +
                                  "/a_directory' is a directory; give --png a file name"),
            std::string::npos)
      << directory.output;
  EXPECT_EQ(directory.output.find("-o '"), std::string::npos) << directory.output;
  const Outcome missing = run(kQuickSweep + " -o " + dir + "/x.h5 --png " + dir + "/no/map.png");
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_NE(missing.output.find("cannot write --png '" + dir + "/no/map.png': directory"),
            std::string::npos)
      << missing.output;
  expect_no_file_left(dir + "/x.h5");
}

// A failed write (a file-size limit, as a full disk) or a signal keeps both previous files.
TEST(ProgramOutput, AFullDiskOrASignalKeepsThePreviousFiles) {
  const std::string dir = fresh_directory("previous");
  const std::string h5 = dir + "/sweep.h5";
  const std::string png = dir + "/map.png";
  ASSERT_EQ(run(kQuickSweep + " -o " + h5 + " --png " + png).exit_code, 0);
  const std::string old_h5 = read_all(h5);
  const std::string old_png = read_all(png);
  const Outcome full = run("sh -c 'ulimit -f 16; exec " + kProgram +
                           " --feed 0.02:0.05:4 --kill 0.05:0.06:4 -r 64 -c 64 --steps 10" +
                           " --device cpu -o " + h5 + " --png " + png + "'");
  EXPECT_EQ(full.exit_code, 1) << full.output;
  EXPECT_NE(full.output.find("File too large"), std::string::npos) << full.output;
  const Outcome interrupted =
      run("sh -c '" + kProgram + " --feed 0.02:0.05:2 --kill 0.05:0.06:2 -r 64 -c 64" +
          " --steps 100000000 --device cpu -o " + h5 + " --png " + png +
          " & pid=$!; sleep 1; kill -INT $pid; wait $pid'");
  EXPECT_EQ(interrupted.exit_code, 130) << interrupted.output;
  EXPECT_EQ(read_all(h5), old_h5) << "the previous HDF5 file was changed";
  EXPECT_EQ(read_all(png), old_png) << "the previous map was changed";
  expect_no_partial_left(h5);
  expect_no_partial_left(png);
}

// When memory runs out, the message names what did not fit: here the map's picture (about 3.4 GB
// under a 1 GiB address-space limit), not the 65535 small members, which fit. Where the host has
// less than that free, the check before any work refuses the map instead: named too.
TEST(Program, OutOfMemoryNamesThePictureNotTheMembers) {
  if (gs::test::kAddressSanitized) {
    GTEST_SKIP() << "AddressSanitizer cannot start under a 1 GiB address-space limit (ulimit -v)";
  }
  const std::string png = fresh("huge_map.png");
  const Outcome outcome = run("sh -c 'ulimit -v 1048576; exec " + kProgram +
                              " --feed 0.01:0.06:255 --kill 0.04:0.07:257 -r 4 -c 4 --steps 10" +
                              " --tile 128 --device cpu --no-hdf5 --png " + png + "'");
  EXPECT_TRUE(outcome.exit_code == 1 || outcome.exit_code == 2) << outcome.output;
  EXPECT_EQ(outcome.output.find("out of memory for 65535 members"), std::string::npos)
      << outcome.output;
  const bool named =
      outcome.output.find("out of memory for the map's picture, ") != std::string::npos ||
      outcome.output.find(
          "the map of 255 x 257 members in tiles of 128 pixels (--tile) would be ") !=
          std::string::npos;
  EXPECT_TRUE(named) << outcome.output;
  expect_no_file_left(png);
}

// A count given as 0 is refused like any count below 1, never replaced by the default.
TEST(Program, BenchmarkRefusesZeroCounts) {
  const Outcome outcome = run(kProgram + " benchmark --device cpu --members 0 --steps 0 -r 0" +
                              " -c 0 --official-steps 0 --sequential-members 0");
  EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
  for (const char* message :
       {"--members must be between 1 and 65535 (got 0)", "--steps must be at least 1 (got 0)",
        "-r/--nbrow must be at least 1 (got 0)", "-c/--nbcol must be at least 1 (got 0)",
        "--official-steps must be at least 1 (got 0)",
        "--sequential-members must be at least 1 (got 0)"}) {
    EXPECT_NE(outcome.output.find(message), std::string::npos)
        << message << " in " << outcome.output;
  }
  EXPECT_EQ(outcome.output.find("| run |"), std::string::npos) << "nothing was measured";
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

// ---------------------------------------------------------------------------------------------
// The program on two GPUs (skipped, saying why, where fewer are present)
// ---------------------------------------------------------------------------------------------

#define GS_REQUIRE_TWO_GPUS()                                                             \
  do {                                                                                    \
    GS_REQUIRE_GPU();                                                                     \
    if (gs::gpu_status().device_count < 2) {                                              \
      GTEST_SKIP() << "needs 2 GPUs; this process sees " << gs::gpu_status().device_count \
                   << " (CUDA_VISIBLE_DEVICES)";                                          \
    }                                                                                     \
  } while (0)

// Bitwise equality of two arrays, naming the first element that differs.
template <typename T>
::testing::AssertionResult same_array_bits(const std::vector<T>& got,
                                           const std::vector<T>& expected) {
  if (got.size() != expected.size()) {
    return ::testing::AssertionFailure() << got.size() << " values instead of " << expected.size();
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &expected[i], sizeof(T)) != 0) {
      return ::testing::AssertionFailure()
             << "differs first at element " << i << ": " << got[i] << " instead of " << expected[i];
    }
  }
  return ::testing::AssertionSuccess();
}

// The members are independent and every GPU runs the same kernel on its share: 21 members (shares
// of 11 and 10) on two GPUs give the one-GPU sweep's file, bit for bit, on both kernels.
TEST(ProgramMultiGpu, TwoGpusGiveTheOneGpuBits) {
  GS_REQUIRE_TWO_GPUS();
  for (const char* path : {"auto", "streaming"}) {
    SCOPED_TRACE(std::string("--path ") + path);
    std::string h5[2];
    for (int gpus = 1; gpus <= 2; ++gpus) {
      h5[gpus - 1] = fresh(std::string("gpus_") + path + "_" + std::to_string(gpus) + ".h5");
      const Outcome outcome =
          run(kProgram + " --feed 0.02:0.05:7 --kill 0.05:0.065:3 -r 40 -c 36 --steps 60" +
              " --window 10 --device gpu --no-png --no-fsync --path " + path + " --gpus " +
              std::to_string(gpus) + " -o " + h5[gpus - 1]);
      ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
      if (gpus == 2) {
        for (const char* text :
             {"on 2 GPUs: GPU 0 (", "members 0 to 10", "GPU 1 (", "members 11 to 20"}) {
          EXPECT_NE(outcome.output.find(text), std::string::npos)
              << text << " in " << outcome.output;
        }
      }
    }
    const gs::DatasetReader one(h5[0]);
    const gs::DatasetReader two(h5[1]);
    for (const char* name : {"v", "feed", "kill", "mean_v", "covered", "max_v", "change"}) {
      EXPECT_TRUE(same_array_bits(two.read_floats(name), one.read_floats(name))) << name;
    }
    EXPECT_TRUE(same_array_bits(two.read_ints("died"), one.read_ints("died")));
    EXPECT_EQ(two.number("gpus"), 2);
    EXPECT_EQ(one.number("gpus"), 1);
  }
}

// Each GPU holds only its share: under GS_DEVICE_LIMITS=memory=512M (448 MiB usable, 14,000-odd
// members of 64 x 64 on the resident kernel), 18,000 members are refused on one GPU, naming
// --gpus, and run on two, 9,000 each.
TEST(ProgramMultiGpu, EachGpuHoldsOnlyItsShare) {
  GS_REQUIRE_TWO_GPUS();
  const std::string sweep = "GS_DEVICE_LIMITS=memory=512M " + kProgram +
                            " --feed 0.02:0.05:120 --kill 0.05:0.065:150 -r 64 -c 64 --steps 1" +
                            " --window 1 --device gpu --path resident --no-output --gpus ";
  const Outcome one = run(sweep + "1");
  EXPECT_EQ(one.exit_code, 2) << one.output;
  EXPECT_NE(one.output.find("members of this size fit"), std::string::npos) << one.output;
  EXPECT_NE(one.output.find("--gpus"), std::string::npos) << one.output;
  const Outcome two = run(sweep + "2");
  EXPECT_EQ(two.exit_code, 0) << two.output;
  EXPECT_NE(two.output.find("members 9000 to 17999"), std::string::npos) << two.output;
}

TEST(ProgramMultiGpu, BenchmarkTimesOneGpuAndBoth) {
  GS_REQUIRE_TWO_GPUS();
  const std::string csv = fresh("benchmark_gpus.csv");
  const Outcome outcome =
      run(kProgram + " benchmark --device gpu --gpus 2 --members 9 -r 16 -c 16 --steps 20" +
          " --official-steps 2 --sequential-members 2 --csv " + csv);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  for (const char* text : {"| batch: 9 members of 16 x 16 |", "| batch on 2 GPUs: 9 members",
                           "Members of 20 steps per second", "times one GPU's"}) {
    EXPECT_NE(outcome.output.find(text), std::string::npos) << text << " in " << outcome.output;
  }
  std::ifstream file(csv);
  std::string line;
  ASSERT_TRUE(std::getline(file, line));  // the header
  std::vector<std::string> lines;
  while (std::getline(file, line)) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[1].find("gpus,09_parameter_sweep,gpu,sweep,"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("-2gpus,"), std::string::npos) << lines[1];
  EXPECT_EQ(lines[0].find("gpus,"), std::string::npos) << lines[0];
}

}  // namespace
