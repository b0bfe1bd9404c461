/// @file gpu.hpp
/// @brief Is there a usable GPU, and what is it? Plain C++: callable from every program, also
///        from builds without CUDA, where the answer is "no" with the reason.
#pragma once

#include <iosfwd>
#include <string>

namespace gs {

/// @brief The answer to "can this process use a CUDA GPU?".
struct GpuStatus {
  bool available = false;  ///< A device answered.
  int device_count = 0;    ///< Devices visible to this process.
  std::string name;        ///< Name of device 0 when available.
  std::string reason;      ///< Why not, when unavailable (missing driver, no device, no CUDA).
};

/// @brief Queries the CUDA runtime once (checking the return code of cudaGetDeviceCount, not
///        only the count) and remembers the answer.
const GpuStatus& gpu_status();

/// @brief Prints what a device query tells about device 0: name, compute capability, SMs,
///        memory, L2 size, shared memory per block, and, if @p measure, the device-to-device
///        copy bandwidth (read + write) measured on 256 MiB buffers.
/// @return false (after printing the reason) when no GPU is available.
bool print_device_report(std::ostream& out, bool measure);

/// @brief Measured device-to-device copy bandwidth of device 0 in bytes/s, counting bytes read
///        plus bytes written (median of several 256 MiB copies); 0 when no GPU is available.
double measured_copy_bandwidth();

/// @brief Host <-> device copy bandwidths in bytes/s, from and to pageable (malloc) and pinned
///        (page-locked, cudaHostAlloc) host memory: what crossing PCIe (or NVLink-C2C) costs.
struct TransferBandwidths {
  double host_to_device_pageable = 0.0;  ///< cudaMemcpy from pageable host memory.
  double host_to_device_pinned = 0.0;    ///< cudaMemcpy from pinned host memory.
  double device_to_host_pageable = 0.0;  ///< cudaMemcpy into pageable host memory.
  double device_to_host_pinned = 0.0;    ///< cudaMemcpy into pinned host memory.
};

/// @brief Measures TransferBandwidths on device 0 with 64 MiB copies (median of several, after a
///        warm-up); all zero when no GPU is available.
TransferBandwidths measured_transfer_bandwidths();

}  // namespace gs
