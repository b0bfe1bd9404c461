/// @file device_profiles.hpp
/// @brief The limits the course's H100 reports, for the tests of launch plans and of
///        GS_DEVICE_LIMITS that need no GPU.
#pragma once

#include <cstdint>

#include "gs/device_limits.hpp"

namespace gs::test {

/// @brief What cudaGetDeviceProperties reports for the course's H100 (NVIDIA H100 80GB HBM3).
inline DeviceLimits h100_limits() {
  constexpr std::int64_t kKiB = 1024;
  DeviceLimits l;
  l.name = "NVIDIA H100 80GB HBM3";
  l.pci_bus = "0000:19:00";
  l.compute_major = 9;
  l.compute_minor = 0;
  l.multiprocessors = 132;
  l.shared_per_block = 48 * kKiB;
  l.shared_per_block_optin = 227 * kKiB;
  l.shared_per_multiprocessor = 228 * kKiB;
  l.reserved_shared_per_block = 1 * kKiB;
  l.registers_per_block = 65536;
  l.registers_per_multiprocessor = 65536;
  l.threads_per_block = 1024;
  l.threads_per_multiprocessor = 2048;
  l.blocks_per_multiprocessor = 32;
  l.memory = 85 * std::int64_t{1000000000};
  return l;
}

}  // namespace gs::test
