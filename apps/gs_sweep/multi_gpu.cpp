// Lesson 09's program on several GPUs: the split of a batch into shares, and one thread per share
// (multi_gpu.hpp says why). Read, not edited.
#include "multi_gpu.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "gs/device_limits.hpp"
#include "gs/params.hpp"

#if GS_HAVE_CUDA
#include <cuda_runtime.h>

#include "gs/cuda_check.hpp"
#endif

namespace GS_LESSON_NAMESPACE {

std::vector<Share> split_members(int members, const std::vector<int>& devices) {
  if (members < 1) throw gs::InvalidParameter("split_members: a batch has at least one member");
  if (devices.empty()) throw gs::InvalidParameter("split_members: no device to share among");
  const int parts = std::min(members, static_cast<int>(devices.size()));
  // `members` = parts * base + extra: the first `extra` shares take one member more.
  const int base = members / parts;
  const int extra = members % parts;
  std::vector<Share> shares;
  int first = 0;
  for (int i = 0; i < parts; ++i) {
    const int count = base + (i < extra ? 1 : 0);
    shares.push_back({devices[static_cast<std::size_t>(i)], first, count});
    first += count;
  }
  return shares;
}

BatchRates share_rates(const BatchRates& rates, const Share& share) {
  BatchRates part = rates;
  part.feed.assign(rates.feed.begin() + share.first,
                   rates.feed.begin() + share.first + share.count);
  part.kill.assign(rates.kill.begin() + share.first,
                   rates.kill.begin() + share.first + share.count);
  return part;
}

void use_device(int device) {
  if (device == kNoDevice) return;
#if GS_HAVE_CUDA
  GS_CUDA_CHECK(cudaSetDevice(device));
#else
  throw std::runtime_error("GPU " + std::to_string(device) +
                           ": this build has no CUDA support (CMake found no CUDA toolkit)");
#endif
}

std::string describe_device(int device) {
  const gs::DeviceLimits& limits = gs::device_limits(device);
  return "GPU " + std::to_string(device) + " (" + limits.describe() +
         (limits.pci_bus.empty() ? "" : ", PCI " + limits.pci_bus) + ")";
}

void run_shares(const std::vector<Share>& shares,
                const std::function<void(std::size_t, const std::atomic<bool>&)>& work) {
  std::atomic<bool> stop{false};
  if (shares.size() == 1) {  // one GPU: the calling thread, as the one-GPU program always did
    use_device(shares[0].device);
    work(0, stop);
    return;
  }
  std::mutex first_error_mutex;
  std::exception_ptr first_error;
  // Every exception is caught on its own thread (one escaping a thread ends the process); the
  // first one in time is kept.
  const auto run_one = [&](std::size_t i) {
    try {
      use_device(shares[i].device);
      work(i, stop);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(first_error_mutex);
      if (!first_error) first_error = std::current_exception();
      stop = true;
    }
  };
  std::vector<std::thread> threads;
  try {
    for (std::size_t i = 0; i < shares.size(); ++i) threads.emplace_back(run_one, i);
  } catch (...) {  // a thread that cannot start: the started ones are stopped and joined
    stop = true;
    for (std::thread& thread : threads) thread.join();
    throw;
  }
  for (std::thread& thread : threads) thread.join();
  if (first_error) std::rethrow_exception(first_error);
}

void DeleteOnDevice::operator()(BatchStepper* stepper) const {
#if GS_HAVE_CUDA
  // The caller's device comes back afterwards: deleting a stepper changes nothing else. A
  // deleter does not throw: when a device cannot be set, the stepper is deleted all the same.
  int caller = kNoDevice;
  if (device != kNoDevice && cudaGetDevice(&caller) == cudaSuccess) cudaSetDevice(device);
  delete stepper;
  if (caller != kNoDevice) cudaSetDevice(caller);
#else
  delete stepper;
#endif
}

ShareStepper make_share_stepper(const Share& share, GpuPath path) {
  std::unique_ptr<BatchStepper> stepper =
      share.device == kNoDevice ? make_cpu_stepper() : make_gpu_stepper(path);
  return ShareStepper(stepper.release(), DeleteOnDevice{share.device});
}

}  // namespace GS_LESSON_NAMESPACE
