// Built when CMake found the CUDA toolkit. Only runtime API calls: no kernels, so plain C++.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <vector>

#include "gs/cuda_check.hpp"
#include "gs/device_limits.hpp"
#include "gs/gpu.hpp"
#include "gs/params.hpp"

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

namespace {

// What device `device` itself allows (cudaGetDeviceProperties), before GS_DEVICE_LIMITS.
DeviceLimits read_device_limits(int device) {
  cudaDeviceProp p{};
  GS_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  DeviceLimits l;
  l.name = p.name;
  char bus[32];
  std::snprintf(bus, sizeof bus, "%04x:%02x:%02x", p.pciDomainID, p.pciBusID, p.pciDeviceID);
  l.pci_bus = bus;
  l.compute_major = p.major;
  l.compute_minor = p.minor;
  l.multiprocessors = p.multiProcessorCount;
  l.shared_per_block = static_cast<std::int64_t>(p.sharedMemPerBlock);
  l.shared_per_block_optin = static_cast<std::int64_t>(p.sharedMemPerBlockOptin);
  l.shared_per_multiprocessor = static_cast<std::int64_t>(p.sharedMemPerMultiprocessor);
  l.reserved_shared_per_block = static_cast<std::int64_t>(p.reservedSharedMemPerBlock);
  l.registers_per_block = p.regsPerBlock;
  l.registers_per_multiprocessor = p.regsPerMultiprocessor;
  l.threads_per_block = p.maxThreadsPerBlock;
  l.threads_per_multiprocessor = p.maxThreadsPerMultiProcessor;
  l.blocks_per_multiprocessor = p.maxBlocksPerMultiProcessor;
  l.memory = static_cast<std::int64_t>(p.totalGlobalMem);
  return l;
}

int current_device() {
  if (!gpu_status().available) throw std::runtime_error(gpu_status().reason);
  int device = 0;
  GS_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

}  // namespace

const DeviceLimits& device_limits(int device) {
  static std::mutex mutex;
  static std::map<int, DeviceLimits> known;  // never erased: references stay valid
  static bool announced = false;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto found = known.find(device);
  if (found != known.end()) return found->second;
  if (!gpu_status().available) throw std::runtime_error(gpu_status().reason);
  const DeviceLimits real = read_device_limits(device);
  const char* spec = std::getenv(kDeviceLimitsVariable);
  DeviceLimits limits = reduce_limits(real, spec != nullptr ? spec : "");
  if (limits.overridden() && !announced) {
    // Once per process, on stderr: whoever reads a time measured now knows which plans ran.
    announced = true;
    std::cerr << "device limits: " << limits.source() << ", not this " << real.name
              << "'s: " << limits.summary()
              << ". The plans are that card's; the times are still this device's.\n";
  }
  return known.emplace(device, std::move(limits)).first->second;
}

const DeviceLimits& device_limits() {
  return device_limits(current_device());
}

DeviceMemory device_memory() {
  if (!gpu_status().available) return {};
  std::size_t free = 0;
  std::size_t total = 0;
  GS_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  // Under an override the smaller card's memory caps what is free. What other processes use
  // here is not subtracted from it: on a shared GPU (the tests run several suites at once) that
  // would make the answer depend on who else is running.
  const DeviceLimits& limits = device_limits();
  DeviceMemory memory;
  memory.total = std::min(limits.memory, static_cast<std::int64_t>(total));
  memory.free = std::min(static_cast<std::int64_t>(free), memory.total);
  return memory;
}

KernelResources kernel_resources(const void* kernel) {
  cudaFuncAttributes attributes{};
  GS_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  KernelResources resources;
  resources.static_shared_bytes = static_cast<std::int64_t>(attributes.sharedSizeBytes);
  resources.registers_per_thread = attributes.numRegs;
  resources.max_threads_per_block = attributes.maxThreadsPerBlock;
  return resources;
}

int resident_blocks(const void* kernel, int threads_per_block, std::int64_t dynamic_shared_bytes) {
  int blocks = 0;
  GS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks, kernel, threads_per_block, static_cast<std::size_t>(dynamic_shared_bytes)));
  return std::min(blocks, blocks_per_multiprocessor(device_limits(), kernel_resources(kernel),
                                                    threads_per_block, dynamic_shared_bytes));
}

void require_launch_fits(const std::string& what, const void* kernel, int threads_per_block,
                         std::int64_t dynamic_shared_bytes) {
  const DeviceLimits& limits = device_limits();
  const std::string problem =
      launch_problem(limits, kernel_resources(kernel), threads_per_block, dynamic_shared_bytes);
  if (!problem.empty()) {
    throw InvalidParameter(what + " does not fit this GPU: " + problem + " (" + limits.describe() +
                           ")");
  }
}

void require_device_memory(const std::string& what, std::int64_t bytes) {
  const DeviceMemory memory = device_memory();
  const std::int64_t reserve = 64 * (std::int64_t{1} << 20);  // the runtime's, kernels' own
  const std::int64_t usable = std::max<std::int64_t>(0, memory.free - reserve);
  if (bytes <= usable) return;
  throw InvalidParameter(what + " needs " + bytes_text(bytes) + " of device memory; " +
                         bytes_text(usable) + " of the " + bytes_text(memory.total) +
                         " of this GPU is free (" + device_limits().describe() + ")");
}

std::string describe_gpu() {
  if (!gpu_status().available) return gpu_status().name;
  try {
    return device_limits().describe();
  } catch (const std::exception&) {
    return gpu_status().name;
  }
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
  const DeviceLimits& limits = device_limits(0);
  if (limits.overridden()) {
    out << "limits          " << limits.source() << ":\n                " << limits.summary()
        << "\n";
  }
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
