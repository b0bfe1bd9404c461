// Lesson 09's program on several GPUs: the batch split into one contiguous share of members per
// GPU, one host thread per GPU. Program plumbing, read, not edited: the lesson's idea (the batched
// kernel, member.hpp) is unchanged, every GPU runs it on its share as the single-GPU program runs
// it on the whole batch.
//
// Why this is all it takes: the members are independent simulations (no member reads another's
// cells), so a share of members is a batch of its own, and gathering the shares' results in
// member order gives the whole batch's, bit for bit (the same kernel on the same members). The
// threads are there because the CUDA runtime's current device belongs to the calling thread: each
// thread calls cudaSetDevice once and then drives its GPU as the one-GPU program drives its one,
// while the other GPUs work at the same time.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "batch.hpp"

namespace GS_LESSON_NAMESPACE {

// The device of a share that runs without cudaSetDevice: the CPU path (and the tests of the
// threads' error handling on machines without a GPU).
inline constexpr int kNoDevice = -1;

// A contiguous share of a batch: members [first, first + count) on CUDA device `device`.
struct Share {
  int device = kNoDevice;
  int first = 0;
  int count = 0;
};

// Splits `members` members into one share per device of `devices`, in member order and as even
// as possible: the sizes differ by at most one, the larger shares first. With more devices than
// members, the devices at the end get no share (no share is empty). Throws gs::InvalidParameter
// for members < 1 or no device.
std::vector<Share> split_members(int members, const std::vector<int>& devices);

// The rates of the share's members (its F and k; Du, Dv and dt shared).
BatchRates share_rates(const BatchRates& rates, const Share& share);

// Makes `device` the calling thread's current CUDA device (cudaSetDevice); nothing for
// kNoDevice. Throws std::runtime_error in a build without CUDA.
void use_device(int device);

// "GPU 1 (NVIDIA H100 80GB HBM3, PCI 0000:1a:00)": the device as reports name it.
std::string describe_device(int device);

// Thrown by a share's work that stops because another share failed first (run_shares()'s
// `stop`); run_shares() never reports it.
class StoppedEarly : public std::runtime_error {
 public:
  StoppedEarly() : std::runtime_error("stopped: another GPU failed first") {}
};

// Throws StoppedEarly once `stop` is set: the check a share's long work makes between chunks.
inline void throw_if_stopped(const std::atomic<bool>& stop) {
  if (stop.load()) throw StoppedEarly();
}

// Runs work(i, stop) for every share i, each on a thread of its own whose current device is
// shares[i].device (one share runs on the calling thread, after use_device()), and returns once
// every one has returned. The first exception thrown by any share sets `stop`, so that the others
// can end early (throw_if_stopped()), and is rethrown here, once, after every thread has joined;
// the later ones are dropped.
void run_shares(const std::vector<Share>& shares,
                const std::function<void(std::size_t, const std::atomic<bool>&)>& work);

// Deletes a share's stepper with the share's device current, as it was used, then makes the
// caller's device current again.
struct DeleteOnDevice {
  int device = kNoDevice;
  void operator()(BatchStepper* stepper) const;
};
using ShareStepper = std::unique_ptr<BatchStepper, DeleteOnDevice>;

// A stepper for `share`: the GPU path with `path` on the share's device, or the CPU path for
// kNoDevice. Call it with the share's device current.
ShareStepper make_share_stepper(const Share& share, GpuPath path);

}  // namespace GS_LESSON_NAMESPACE
