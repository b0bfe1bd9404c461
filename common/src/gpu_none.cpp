// Built when CMake found no CUDA toolkit: every question about a GPU gets "no" and the reason.
#include <ostream>
#include <stdexcept>

#include "gs/device_limits.hpp"
#include "gs/gpu.hpp"

namespace gs {

const GpuStatus& gpu_status() {
  static const GpuStatus status = [] {
    GpuStatus s;
    s.reason = "this build has no CUDA support (CMake found no CUDA toolkit)";
    return s;
  }();
  return status;
}

bool print_device_report(std::ostream& out, bool) {
  out << "no GPU: " << gpu_status().reason << "\n";
  return false;
}

double measured_copy_bandwidth() {
  return 0.0;
}

TransferBandwidths measured_transfer_bandwidths() {
  return {};
}

const DeviceLimits& device_limits(int) {
  throw std::runtime_error(gpu_status().reason);
}

const DeviceLimits& device_limits() {
  throw std::runtime_error(gpu_status().reason);
}

DeviceMemory device_memory() {
  return {};
}

KernelResources kernel_resources(const void*) {
  throw std::runtime_error(gpu_status().reason);
}

int resident_blocks(const void*, int, std::int64_t) {
  throw std::runtime_error(gpu_status().reason);
}

void require_launch_fits(const std::string&, const void*, int, std::int64_t) {
  throw std::runtime_error(gpu_status().reason);
}

void require_device_memory(const std::string&, std::int64_t) {
  throw std::runtime_error(gpu_status().reason);
}

std::string describe_gpu() {
  return gpu_status().name;
}

}  // namespace gs
