// Built when CMake found no CUDA toolkit: every question about a GPU gets "no" and the reason.
#include <ostream>

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

}  // namespace gs
