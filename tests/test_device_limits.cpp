// What a device allows, without a device: GS_DEVICE_LIMITS's profiles and key=value entries
// applied to the limits an H100 reports, every kind of bad value refused with a message that
// names it, an override that never grows a limit, and the model of what fits one block and one
// multiprocessor that the lessons' plans ask.
#include <gtest/gtest.h>

#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "device_profiles.hpp"
#include "gs/device_limits.hpp"
#include "gs/gpu.hpp"
#include "gs/params.hpp"

namespace {

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kGiB = kKiB * kKiB * kKiB;

using gs::test::h100_limits;

// A card smaller than a T4 in SMs and memory: a T4 profile on it keeps its own smaller values.
gs::DeviceLimits small_card() {
  gs::DeviceLimits l = h100_limits();
  l.name = "a small card";
  l.compute_major = 7;
  l.compute_minor = 5;
  l.multiprocessors = 20;
  l.shared_per_block_optin = 64 * kKiB;
  l.shared_per_multiprocessor = 64 * kKiB;
  l.reserved_shared_per_block = 0;
  l.threads_per_multiprocessor = 1024;
  l.memory = 6 * kGiB;
  return l;
}

TEST(DeviceLimits, NoOverrideKeepsTheDevicesLimits) {
  for (const char* spec : {"", "  "}) {
    const gs::DeviceLimits got = gs::reduce_limits(h100_limits(), spec);
    EXPECT_FALSE(got.overridden()) << "'" << spec << "'";
    EXPECT_EQ(got.multiprocessors, 132);
    EXPECT_EQ(got.shared_per_block_optin, 227 * kKiB);
    EXPECT_EQ(got.source(), "");
    EXPECT_EQ(got.describe(), "NVIDIA H100 80GB HBM3");
  }
}

TEST(DeviceLimits, TheT4ProfileIsATuringCard) {
  const gs::DeviceLimits t4 = gs::reduce_limits(h100_limits(), "t4");
  EXPECT_TRUE(t4.overridden());
  EXPECT_EQ(t4.name, "NVIDIA H100 80GB HBM3") << "the name stays the device's own";
  EXPECT_EQ(t4.compute_major, 7);
  EXPECT_EQ(t4.compute_minor, 5);
  EXPECT_EQ(t4.multiprocessors, 40);
  EXPECT_EQ(t4.shared_per_block, 48 * kKiB);
  EXPECT_EQ(t4.shared_per_block_optin, 64 * kKiB);
  EXPECT_EQ(t4.shared_per_multiprocessor, 64 * kKiB);
  EXPECT_EQ(t4.reserved_shared_per_block, 0);
  EXPECT_EQ(t4.registers_per_block, 65536);
  EXPECT_EQ(t4.registers_per_multiprocessor, 65536);
  EXPECT_EQ(t4.threads_per_block, 1024);
  EXPECT_EQ(t4.threads_per_multiprocessor, 1024);
  EXPECT_EQ(t4.blocks_per_multiprocessor, 16);
  EXPECT_EQ(t4.memory, std::int64_t{15843721216});
  EXPECT_EQ(t4.source(), "the limits of a Tesla T4 (GS_DEVICE_LIMITS=t4)");
  EXPECT_EQ(t4.describe(),
            "NVIDIA H100 80GB HBM3 with the limits of a Tesla T4 (GS_DEVICE_LIMITS=t4)");
  EXPECT_NE(t4.summary().find("40 SMs"), std::string::npos) << t4.summary();
  EXPECT_NE(t4.summary().find("64 KiB opt-in"), std::string::npos) << t4.summary();
}

TEST(DeviceLimits, TheGtx1650ProfileHasFewerSmsAndLessMemory) {
  const gs::DeviceLimits gtx = gs::reduce_limits(h100_limits(), "gtx1650");
  EXPECT_EQ(gtx.multiprocessors, 14);
  EXPECT_EQ(gtx.memory, 4 * kGiB);
  EXPECT_EQ(gtx.shared_per_block_optin, 64 * kKiB);
  EXPECT_EQ(gtx.threads_per_multiprocessor, 1024);
  EXPECT_NE(gtx.source().find("GeForce GTX 1650"), std::string::npos) << gtx.source();
}

TEST(DeviceLimits, ProfileNamesIgnoreCaseAndSpaces) {
  EXPECT_EQ(gs::reduce_limits(h100_limits(), " T4 ").multiprocessors, 40);
  EXPECT_EQ(gs::reduce_limits(h100_limits(), "GTX1650").multiprocessors, 14);
  EXPECT_EQ(gs::device_limit_profiles(), (std::vector<std::string>{"t4", "gtx1650"}));
}

TEST(DeviceLimits, AProfileNeverGrowsALimit) {
  const gs::DeviceLimits got = gs::reduce_limits(small_card(), "t4");
  EXPECT_EQ(got.multiprocessors, 20) << "the device's 20 SMs, not the T4's 40";
  EXPECT_EQ(got.memory, 6 * kGiB) << "the device's 6 GiB, not the T4's 15";
  EXPECT_EQ(got.shared_per_block_optin, 64 * kKiB);
}

TEST(DeviceLimits, KeysSetSingleLimits) {
  const gs::DeviceLimits got = gs::reduce_limits(h100_limits(), "sms=20, shared_per_block=24K");
  EXPECT_EQ(got.multiprocessors, 20);
  EXPECT_EQ(got.shared_per_block, 24 * kKiB);
  EXPECT_EQ(got.shared_per_block_optin, 227 * kKiB) << "what no key names stays the device's";
  EXPECT_EQ(got.threads_per_multiprocessor, 2048);
  EXPECT_EQ(got.source(), "the limits set by GS_DEVICE_LIMITS=sms=20, shared_per_block=24K");
}

TEST(DeviceLimits, ByteCountsTakeBinaryUnits) {
  EXPECT_EQ(gs::reduce_limits(h100_limits(), "shared_per_block=40000").shared_per_block, 40000);
  EXPECT_EQ(gs::reduce_limits(h100_limits(), "shared_per_block=32KiB").shared_per_block, 32 * kKiB);
  EXPECT_EQ(gs::reduce_limits(h100_limits(), "shared_per_block=32k").shared_per_block, 32 * kKiB);
  EXPECT_EQ(gs::reduce_limits(h100_limits(), "memory=512M").memory, 512 * kKiB * kKiB);
  EXPECT_EQ(gs::reduce_limits(h100_limits(), "memory=2G").memory, 2 * kGiB);
  EXPECT_EQ(gs::reduce_limits(h100_limits(), "memory=2GiB").memory, 2 * kGiB);
}

TEST(DeviceLimits, KeysAfterAProfileChangeIt) {
  const gs::DeviceLimits fewer = gs::reduce_limits(h100_limits(), "t4,sms=20");
  EXPECT_EQ(fewer.multiprocessors, 20);
  EXPECT_EQ(fewer.shared_per_block_optin, 64 * kKiB);
  EXPECT_NE(fewer.source().find("Tesla T4"), std::string::npos);
  EXPECT_NE(fewer.source().find("t4,sms=20"), std::string::npos) << fewer.source();
  EXPECT_EQ(gs::reduce_limits(h100_limits(), "t4,sms=80").multiprocessors, 80)
      << "a key may set more than the profile, up to the device's own";
}

TEST(DeviceLimits, ABlockNeverGetsMoreThanItsMultiprocessor) {
  const gs::DeviceLimits shared = gs::reduce_limits(h100_limits(), "shared_per_sm=32K");
  EXPECT_EQ(shared.shared_per_block_optin, 31 * kKiB) << "the SM's, less the runtime's 1 KiB";
  EXPECT_EQ(shared.shared_per_block, 31 * kKiB);
  EXPECT_EQ(gs::reduce_limits(h100_limits(), "t4,shared_per_sm=32K").shared_per_block_optin,
            32 * kKiB)
      << "a T4 keeps no shared memory per block";
  const gs::DeviceLimits threads = gs::reduce_limits(h100_limits(), "threads_per_sm=512");
  EXPECT_EQ(threads.threads_per_block, 512);
  const gs::DeviceLimits registers = gs::reduce_limits(h100_limits(), "registers_per_sm=32768");
  EXPECT_EQ(registers.registers_per_block, 32768);
}

struct BadSpec {
  const char* spec;
  const char* message;
};

void PrintTo(const BadSpec& bad, std::ostream* out) {
  *out << "GS_DEVICE_LIMITS=" << bad.spec;
}

class DeviceLimitsRefuses : public ::testing::TestWithParam<BadSpec> {};

TEST_P(DeviceLimitsRefuses, WithAMessageThatNamesTheProblem) {
  try {
    gs::reduce_limits(h100_limits(), GetParam().spec);
    ADD_FAILURE() << "GS_DEVICE_LIMITS=" << GetParam().spec << " was accepted";
  } catch (const gs::InvalidParameter& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(std::string("GS_DEVICE_LIMITS=") + GetParam().spec), std::string::npos)
        << message;
    EXPECT_NE(message.find(GetParam().message), std::string::npos) << message;
    EXPECT_NE(message.find("t4, gtx1650"), std::string::npos) << "the profiles: " << message;
  }
}

INSTANTIATE_TEST_SUITE_P(
    BadSpecs, DeviceLimitsRefuses,
    ::testing::Values(
        BadSpec{"t5", "no profile named 't5'"}, BadSpec{"t4,gtx1650", "two profiles"},
        BadSpec{"frobs=3", "no limit named 'frobs'"},
        BadSpec{"sms=", "sms takes a positive whole number"},
        BadSpec{"sms=abc", "sms takes a positive whole number"},
        BadSpec{"sms=-3", "sms must be at least 1"}, BadSpec{"sms=0", "sms must be at least 1"},
        BadSpec{"sms=4K", "sms is a count, not a size"},
        BadSpec{"sms=2.5", "sms takes a positive whole number"},
        BadSpec{"shared_per_block=12X", "of bytes, optionally followed by K, M or G"},
        BadSpec{"sms=99999999999999999999", "too large"}, BadSpec{"memory=99999999G", "too large"},
        BadSpec{"sms=20,sms=30", "sms is given twice"}, BadSpec{"t4,,sms=2", "an empty entry"},
        BadSpec{"t4,", "an empty entry"}, BadSpec{"sms=200", "more than this device's 132"},
        BadSpec{"shared_per_block_optin=300K", "more than this device's 227 KiB"},
        BadSpec{"threads_per_sm=4096", "more than this device's 2048"}),
    [](const ::testing::TestParamInfo<BadSpec>& param_info) {
      return "case" + std::to_string(param_info.index);
    });

gs::KernelResources no_resources() {
  return {};
}

TEST(DeviceLimitsModel, BlocksPerMultiprocessorByThreadsSharedMemoryAndRegisters) {
  const gs::DeviceLimits t4 = gs::reduce_limits(h100_limits(), "t4");
  EXPECT_EQ(gs::blocks_per_multiprocessor(t4, no_resources(), 1024, 64 * kKiB), 1);
  EXPECT_EQ(gs::blocks_per_multiprocessor(t4, no_resources(), 1024, 64 * kKiB + 4), 0);
  EXPECT_EQ(gs::blocks_per_multiprocessor(t4, no_resources(), 256, 0), 4) << "1024 threads per SM";
  EXPECT_EQ(gs::blocks_per_multiprocessor(t4, no_resources(), 33, 0), 16)
      << "33 threads take two warps; 16 blocks per SM at most";
  EXPECT_EQ(gs::blocks_per_multiprocessor(t4, {0, 64, 0}, 1024, 0), 1);
  EXPECT_EQ(gs::blocks_per_multiprocessor(t4, {0, 65, 0}, 1024, 0), 0) << "registers";
  EXPECT_EQ(gs::blocks_per_multiprocessor(t4, {25600, 32, 0}, 256, 0), 2) << "static shared";
  const gs::DeviceLimits own = h100_limits();
  EXPECT_EQ(gs::blocks_per_multiprocessor(own, no_resources(), 1024, 227 * kKiB), 1);
  EXPECT_EQ(gs::blocks_per_multiprocessor(own, no_resources(), 1024, 64 * kKiB), 2)
      << "2048 threads per SM";
  EXPECT_EQ(gs::blocks_per_multiprocessor(own, no_resources(), 256, 64 * kKiB), 3)
      << "228 KiB per SM, 65 KiB per block with the runtime's reserve";
  EXPECT_EQ(gs::blocks_per_multiprocessor(own, no_resources(), 0, 0), 0);
}

TEST(DeviceLimitsModel, LaunchProblemsNameWhatDoesNotFit) {
  const gs::DeviceLimits t4 = gs::reduce_limits(h100_limits(), "t4");
  EXPECT_EQ(gs::launch_problem(t4, no_resources(), 1024, 64 * kKiB), "");
  EXPECT_EQ(gs::launch_problem(t4, {25600, 40, 256}, 256, 0), "");
  EXPECT_NE(gs::launch_problem(t4, no_resources(), 2048, 0).find("more than the 1024"),
            std::string::npos);
  EXPECT_NE(gs::launch_problem(t4, {0, 0, 512}, 1024, 0).find("this kernel allows"),
            std::string::npos);
  EXPECT_NE(gs::launch_problem(t4, no_resources(), 1024, 128 * kKiB).find("more than the 64 KiB"),
            std::string::npos);
  const gs::DeviceLimits small_default = gs::reduce_limits(h100_limits(), "shared_per_block=24K");
  EXPECT_NE(gs::launch_problem(small_default, {25600, 32, 0}, 256, 0).find("without the opt-in"),
            std::string::npos);
  EXPECT_EQ(gs::launch_problem(small_default, no_resources(), 256, 25600), "")
      << "dynamic shared memory may opt in";
  EXPECT_NE(gs::launch_problem(t4, {0, 128, 0}, 1024, 0).find("registers per block"),
            std::string::npos);
  // No device has an SM smaller than what one of its blocks may have; the check is defensive.
  gs::DeviceLimits odd = t4;
  odd.shared_per_multiprocessor = 32 * kKiB;
  EXPECT_NE(gs::launch_problem(odd, no_resources(), 256, 40 * kKiB).find("one SM holds"),
            std::string::npos)
      << gs::launch_problem(odd, no_resources(), 256, 40 * kKiB);
}

TEST(DeviceLimitsModel, BytesForMessages) {
  EXPECT_EQ(gs::bytes_text(512), "512 B");
  EXPECT_EQ(gs::bytes_text(48 * kKiB), "48 KiB");
  EXPECT_EQ(gs::bytes_text(70216), "68.5 KiB");
  EXPECT_EQ(gs::bytes_text(4 * kGiB), "4 GiB");
  EXPECT_EQ(gs::bytes_text(std::int64_t{15843721216}), "14.7 GiB");
}

TEST(DeviceLimitsQuery, WithoutAGpuTheQueriesSayWhy) {
  if (gs::gpu_status().available) GTEST_SKIP() << "a GPU is present";
  EXPECT_THROW(gs::device_limits(), std::runtime_error);
  EXPECT_THROW(gs::device_limits(0), std::runtime_error);
  EXPECT_EQ(gs::device_memory().total, 0);
  EXPECT_EQ(gs::describe_gpu(), gs::gpu_status().name);
}

}  // namespace
