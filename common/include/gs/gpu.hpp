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

}  // namespace gs
