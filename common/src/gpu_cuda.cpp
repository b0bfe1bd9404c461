// Built when CMake found the CUDA toolkit. Only runtime API calls: no kernels, so plain C++.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <iomanip>
#include <memory>
#include <ostream>
#include <vector>

#include "gs/cuda_check.hpp"
#include "gs/gpu.hpp"

namespace gs {
namespace {

// Two CUDA events that destroy themselves (a throw between creation and use leaks nothing).
struct EventPair {
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  EventPair() {
    GS_CUDA_CHECK(cudaEventCreate(&start));
    GS_CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
};

}  // namespace

const GpuStatus& gpu_status() {
  static const GpuStatus status = [] {
    GpuStatus s;
    int count = 0;
    const cudaError_t error = cudaGetDeviceCount(&count);
    if (error != cudaSuccess) {
      s.reason = std::string("no usable CUDA device: cudaGetDeviceCount returned ") +
                 cudaGetErrorName(error) + " (" + cudaGetErrorString(error) + ")";
      cudaGetLastError();  // clear the sticky error for later callers
      return s;
    }
    if (count == 0) {
      s.reason = "no CUDA device: cudaGetDeviceCount found 0 devices";
      return s;
    }
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, 0) != cudaSuccess) {
      s.reason = "cudaGetDeviceProperties failed for device 0";
      return s;
    }
    s.available = true;
    s.device_count = count;
    s.name = properties.name;
    return s;
  }();
  return status;
}

double measured_copy_bandwidth() {
  static const double bandwidth = []() -> double {
    if (!gpu_status().available) return 0.0;
    const std::size_t count = std::size_t{64} << 20;  // 256 MiB of floats
    const std::size_t bytes = count * sizeof(float);
    const DeviceFloats source = device_floats(count);
    const DeviceFloats target = device_floats(count);
    GS_CUDA_CHECK(cudaMemset(source.get(), 1, bytes));
    EventPair events;
    std::vector<float> milliseconds;
    for (int repeat = 0; repeat < 12; ++repeat) {
      GS_CUDA_CHECK(cudaEventRecord(events.start));
      GS_CUDA_CHECK(cudaMemcpy(target.get(), source.get(), bytes, cudaMemcpyDeviceToDevice));
      GS_CUDA_CHECK(cudaEventRecord(events.stop));
      GS_CUDA_CHECK(cudaEventSynchronize(events.stop));
      float ms = 0.0f;
      GS_CUDA_CHECK(cudaEventElapsedTime(&ms, events.start, events.stop));
      if (repeat >= 2) milliseconds.push_back(ms);  // the first copies warm up
    }
    std::nth_element(milliseconds.begin(), milliseconds.begin() + milliseconds.size() / 2,
                     milliseconds.end());
    const double median_seconds = milliseconds[milliseconds.size() / 2] * 1e-3;
    return 2.0 * static_cast<double>(bytes) / median_seconds;
  }();
  return bandwidth;
}

namespace {

// Median bandwidth of `repeats` copies of `bytes` from `source` to `target` (after one warm-up).
double median_copy_rate(void* target, const void* source, std::size_t bytes, cudaMemcpyKind kind) {
  std::vector<double> rates;
  for (int repeat = 0; repeat < 6; ++repeat) {
    EventPair events;
    GS_CUDA_CHECK(cudaEventRecord(events.start));
    GS_CUDA_CHECK(cudaMemcpy(target, source, bytes, kind));
    GS_CUDA_CHECK(cudaEventRecord(events.stop));
    GS_CUDA_CHECK(cudaEventSynchronize(events.stop));
    float ms = 0.0f;
    GS_CUDA_CHECK(cudaEventElapsedTime(&ms, events.start, events.stop));
    if (repeat > 0 && ms > 0.0f) rates.push_back(static_cast<double>(bytes) / (ms * 1e-3));
  }
  std::nth_element(rates.begin(), rates.begin() + rates.size() / 2, rates.end());
  return rates[rates.size() / 2];
}

struct PinnedFree {
  void operator()(void* pointer) const { cudaFreeHost(pointer); }
};

}  // namespace

TransferBandwidths measured_transfer_bandwidths() {
  static const TransferBandwidths bandwidths = []() -> TransferBandwidths {
    if (!gpu_status().available) return {};
    const std::size_t count = std::size_t{16} << 20;  // 64 MiB of floats
    const std::size_t bytes = count * sizeof(float);
    const DeviceFloats device = device_floats(count);
    std::vector<float> pageable(count, 1.0f);
    void* raw_pinned = nullptr;
    GS_CUDA_CHECK(cudaHostAlloc(&raw_pinned, bytes, cudaHostAllocDefault));
    const std::unique_ptr<void, PinnedFree> pinned(raw_pinned);
    std::fill_n(static_cast<float*>(raw_pinned), count, 1.0f);  // touch every page
    TransferBandwidths b;
    b.host_to_device_pageable =
        median_copy_rate(device.get(), pageable.data(), bytes, cudaMemcpyHostToDevice);
    b.host_to_device_pinned =
        median_copy_rate(device.get(), raw_pinned, bytes, cudaMemcpyHostToDevice);
    b.device_to_host_pageable =
        median_copy_rate(pageable.data(), device.get(), bytes, cudaMemcpyDeviceToHost);
    b.device_to_host_pinned =
        median_copy_rate(raw_pinned, device.get(), bytes, cudaMemcpyDeviceToHost);
    return b;
  }();
  return bandwidths;
}

bool print_device_report(std::ostream& out, bool measure) {
  const GpuStatus& status = gpu_status();
  if (!status.available) {
    out << "no GPU: " << status.reason << "\n";
    return false;
  }
  cudaDeviceProp p{};
  GS_CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  out << "device          " << p.name << " (compute capability " << p.major << "." << p.minor
      << "), " << status.device_count << " visible\n";
  out << "multiprocessors " << p.multiProcessorCount << " SMs, " << p.maxThreadsPerMultiProcessor
      << " threads/SM, " << p.regsPerMultiprocessor << " registers/SM\n";
  out << "memory          " << std::fixed << std::setprecision(1) << p.totalGlobalMem / 1073741824.0
      << " GiB, " << p.memoryBusWidth << "-bit bus, L2 " << p.l2CacheSize / 1048576.0 << " MiB\n";
  out << "shared memory   " << p.sharedMemPerBlock / 1024 << " KiB/block by default, "
      << p.sharedMemPerBlockOptin / 1024 << " KiB/block opt-in, "
      << p.sharedMemPerMultiprocessor / 1024 << " KiB/SM\n";
  out << "CUDA            driver " << driver / 1000 << "." << (driver % 1000) / 10 << ", runtime "
      << runtime / 1000 << "." << (runtime % 1000) / 10 << "\n";
  if (measure) {
    out << "copy bandwidth  " << std::setprecision(0) << measured_copy_bandwidth() / 1e9
        << " GB/s device-to-device (read + write, 256 MiB, median)\n";
    const TransferBandwidths t = measured_transfer_bandwidths();
    out << std::setprecision(1) << "host -> device  " << t.host_to_device_pageable / 1e9
        << " GB/s from pageable memory, " << t.host_to_device_pinned / 1e9
        << " GB/s from pinned memory (64 MiB, median)\n";
    out << "device -> host  " << t.device_to_host_pageable / 1e9 << " GB/s into pageable memory, "
        << t.device_to_host_pinned / 1e9 << " GB/s into pinned memory (64 MiB, median)\n";
  }
  return true;
}

}  // namespace gs
