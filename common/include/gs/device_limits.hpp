/// @file device_limits.hpp
/// @brief What a CUDA device allows a launch plan: multiprocessors, shared memory, registers,
///        threads, memory. The one place the lessons ask, instead of querying the device
///        themselves, so that a plan made for one GPU never runs on another that cannot hold it.
///
/// The limits are read from the device once. The environment variable GS_DEVICE_LIMITS replaces
/// them by a smaller card's, so that the plans a smaller GPU would run can be run, and checked,
/// on a larger one:
///
///     GS_DEVICE_LIMITS=t4                  a Tesla T4 (40 SMs, 64 KiB of shared memory per SM)
///     GS_DEVICE_LIMITS=gtx1650             a GeForce GTX 1650 (14 SMs, 4 GiB)
///     GS_DEVICE_LIMITS=sms=20,shared_per_block=24K    single limits (keys below)
///     GS_DEVICE_LIMITS=t4,sms=20           a profile, then single limits
///
/// An override only makes limits smaller: a profile's value above the device's is the device's,
/// a single limit above the device's is refused. Plain C++: callable from every program, also
/// from builds without CUDA (where the queries throw and the parsing still works).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gs {

/// @brief The environment variable that replaces the device's limits by a smaller card's.
inline constexpr const char* kDeviceLimitsVariable = "GS_DEVICE_LIMITS";

/// @brief What one CUDA device allows, as cudaGetDeviceProperties reports it, or reduced by
///        GS_DEVICE_LIMITS. Byte counts are int64: a GPU's memory does not fit an int.
struct DeviceLimits {
  std::string name;                            ///< The device's own name (also under an override).
  std::string pci_bus;                         ///< "domain:bus:device", hexadecimal.
  int compute_major = 0;                       ///< Compute capability, major part.
  int compute_minor = 0;                       ///< Compute capability, minor part.
  int multiprocessors = 0;                     ///< SMs.
  std::int64_t shared_per_block = 0;           ///< Shared memory a block gets without asking.
  std::int64_t shared_per_block_optin = 0;     ///< ... and with cudaFuncSetAttribute's opt-in.
  std::int64_t shared_per_multiprocessor = 0;  ///< Shared memory of one SM, for all its blocks.
  std::int64_t reserved_shared_per_block = 0;  ///< Shared memory the runtime keeps per block.
  int registers_per_block = 0;                 ///< 32-bit registers one block may use.
  int registers_per_multiprocessor = 0;        ///< 32-bit registers of one SM.
  int threads_per_block = 0;                   ///< Threads of one block, at most.
  int threads_per_multiprocessor = 0;          ///< Threads one SM holds at once.
  int blocks_per_multiprocessor = 0;           ///< Blocks one SM holds at once.
  std::int64_t memory = 0;                     ///< Device memory in bytes (total).
  std::string override_spec;                   ///< GS_DEVICE_LIMITS as given; "" for none.
  std::string override_card;                   ///< The profile's card ("a Tesla T4"), or "".

  /// @brief Whether GS_DEVICE_LIMITS replaced the device's own limits.
  bool overridden() const { return !override_spec.empty(); }
  /// @brief Where the limits come from, for messages: "" for the device's own, else "the limits
  ///        of a Tesla T4 (GS_DEVICE_LIMITS=t4)" or "the limits set by GS_DEVICE_LIMITS=...".
  std::string source() const;
  /// @brief The device's name, with source() when overridden: what reports print as the device.
  std::string describe() const;
  /// @brief One line of the limits: SMs, shared memory, registers, threads, memory.
  std::string summary() const;
};

/// @brief The limits of @p real reduced by @p spec (GS_DEVICE_LIMITS's syntax: comma-separated
///        entries, at most one profile name, `t4` or `gtx1650`, and `key=value` entries, keys
///        sms, shared_per_block, shared_per_block_optin, shared_per_sm, registers_per_block,
///        registers_per_sm, threads_per_block, threads_per_sm, blocks_per_sm, memory; byte
///        counts may end in K, M or G, binary: 64K = 65536). A profile's values are capped at
///        the device's; a key's value above the device's is refused. Whatever a block may have
///        is then capped at what its SM has. An empty @p spec returns @p real unchanged.
/// @throws InvalidParameter naming the entry and why (unknown profile or key, a value that is
///         not a positive number, a duplicate, a value above the device's).
DeviceLimits reduce_limits(const DeviceLimits& real, const std::string& spec);

/// @brief The names GS_DEVICE_LIMITS knows as profiles ("t4", "gtx1650").
std::vector<std::string> device_limit_profiles();

/// @brief What a kernel needs per block besides its launch (cudaFuncGetAttributes).
struct KernelResources {
  std::int64_t static_shared_bytes = 0;  ///< __shared__ arrays of fixed size.
  int registers_per_thread = 0;          ///< Registers ptxas gave each thread.
  int max_threads_per_block = 0;         ///< Threads per block the kernel allows (its registers,
                                         ///< __launch_bounds__); 0: not known.
};

/// @brief Blocks of @p threads_per_block threads, each with @p resources and
///        @p dynamic_shared_bytes of dynamic shared memory, that one SM of @p limits holds at once
///        by threads, shared memory, registers and its block count (0: not even one). The
///        occupancy calculator's model without its allocation granularities: an upper bound.
int blocks_per_multiprocessor(const DeviceLimits& limits, const KernelResources& resources,
                              int threads_per_block, std::int64_t dynamic_shared_bytes);

/// @brief Why a launch of blocks of @p threads_per_block threads, with @p resources and
///        @p dynamic_shared_bytes, cannot run within @p limits; "" when it can. Dynamic shared
///        memory above limits.shared_per_block needs the opt-in (cudaFuncSetAttribute), which
///        the caller makes; static shared memory cannot opt in.
std::string launch_problem(const DeviceLimits& limits, const KernelResources& resources,
                           int threads_per_block, std::int64_t dynamic_shared_bytes);

/// @brief A byte count for messages: "48 KiB", "15 GiB", "512 B" (binary units, rounded down).
std::string bytes_text(std::int64_t bytes);

// ---------------------------------------------------------------------------------------------
// The queries (CUDA runtime; without CUDA they throw std::runtime_error with the reason)
// ---------------------------------------------------------------------------------------------

/// @brief The limits of CUDA device @p device, read once, reduced by GS_DEVICE_LIMITS when it is
///        set; the first override is announced once on stderr. Thread-safe.
/// @throws std::runtime_error without a usable GPU; InvalidParameter for an invalid
///         GS_DEVICE_LIMITS (the message says what is wrong).
const DeviceLimits& device_limits(int device);

/// @brief device_limits() of the calling thread's current device (cudaGetDevice).
const DeviceLimits& device_limits();

/// @brief Device memory of a device, in bytes (device_memory()).
struct DeviceMemory {
  std::int64_t free = 0;   ///< Bytes free now.
  std::int64_t total = 0;  ///< Bytes in all.
};

/// @brief Device memory of the current device within its limits (both 0 without a GPU): under
///        an override the smaller card's total, which also caps what is free (what is in use
///        here is not subtracted from it, so that the answer does not depend on other processes
///        sharing a large GPU).
DeviceMemory device_memory();

/// @brief What @p kernel (a __global__ function, cast to const void*) needs per block.
KernelResources kernel_resources(const void* kernel);

/// @brief Blocks of @p kernel that one SM holds at once with that launch: the runtime's
///        occupancy query (cudaOccupancyMaxActiveBlocksPerMultiprocessor) capped by the
///        limits' model (blocks_per_multiprocessor), so that an override's smaller SM counts.
int resident_blocks(const void* kernel, int threads_per_block, std::int64_t dynamic_shared_bytes);

/// @brief Throws InvalidParameter, naming @p what, the problem and the device, unless a launch
///        of @p kernel with that shape fits the current device's limits (launch_problem()).
void require_launch_fits(const std::string& what, const void* kernel, int threads_per_block,
                         std::int64_t dynamic_shared_bytes);

/// @brief Throws InvalidParameter, naming @p what, unless @p bytes of device memory are free on
///        the current device within its limits (device_memory()), less a reserve of 64 MiB for
///        the runtime and kernels.
void require_device_memory(const std::string& what, std::int64_t bytes);

/// @brief The current GPU as reports print it (DeviceLimits::describe()): its name, and the
///        override when there is one; gpu_status().name when the limits cannot be read.
std::string describe_gpu();

}  // namespace gs
