// gs_sweep's program plumbing (lesson 09; you need not read it for the exercise): what the sweep
// (gs_sweep.cpp) and its benchmark (benchmark.cpp) share: the flags both take and their checks,
// the GPUs and the members' shares of them, the memory a batch needs.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "batch.hpp"
#include "gs/main_guard.hpp"
#include "multi_gpu.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace GS_LESSON_NAMESPACE {

// The largest batch: CUDA's limit on gridDim.z (the streaming kernel's member index).
constexpr int kMaxMembers = 65535;

// `first:last:count`: count values evenly spaced from first to last; a single number is one value.
struct Range {
  double first = 0.0;
  double last = 0.0;
  int count = 0;
  std::vector<float> values() const {
    std::vector<float> values;
    for (int i = 0; i < count; ++i) {
      const double t = count > 1 ? static_cast<double>(i) / (count - 1) : 0.0;
      values.push_back(static_cast<float>(first + t * (last - first)));
    }
    return values;
  }
};

// Parses `text` given to `flag`; every problem goes to `problems`, naming the flag.
Range parse_range(const std::string& text, const std::string& flag,
                  std::vector<std::string>& problems);

// The flags both modes share: the grid, the steps and the shared rates.
struct Common {
  int rows = 128;
  int cols = 128;
  int steps = 10000;
  float diffusion_u = 0.1f;
  float diffusion_v = 0.05f;
  float dt = 1.0f;
  std::string device = "auto";
  std::string path = "auto";
  std::string gpus = "all";
};

// Adds the flags of Common to @p app.
void add_common_flags(CLI::App& app, Common& c);

// The problems of the grid, the steps and the shared rates, each naming its flag.
void check_common(const Common& c, std::vector<std::string>& problems);

// The GPU kernel --path names.
GpuPath gpu_path(const std::string& name);

// Thrown for a batch that cannot run (too large, no GPU): exit code and message, told by
// gs::guarded_main().
using Refusal = gs::Refusal;

// "CPU" or "GPU" after --device: the GPU when asked and usable; refuses --device gpu without one.
bool use_gpu(const std::string& device);

// The CUDA devices the members are spread over: 0 to N-1, N from --gpus (all: every device this
// process sees); none on the CPU. Refuses a count of GPUs for a run on the CPU (--device cpu,
// or --device auto without a usable GPU), and more GPUs than there are.
std::vector<int> gpu_devices(bool gpu, const Common& c);

// The shares of a batch of `members`: one per device (multi_gpu.hpp), or the whole batch on the
// CPU when there is no device.
std::vector<Share> shares_of(int members, const std::vector<int>& devices);

// "GPU 0 (NVIDIA H100 80GB HBM3, PCI 0000:1a:00) members 0 to 511, GPU 1 (...) ...".
std::string describe_shares(const std::vector<Share>& shares);

// Runs work(i, stop) for every share (run_shares(): one thread per GPU). With several GPUs, what
// one throws comes back naming its GPU, its type kept: the exit code follows the type.
void on_every_share(const std::vector<Share>& shares,
                    const std::function<void(std::size_t, const std::atomic<bool>&)>& work);

// @p count bytes in SI units (gs::si()).
std::string bytes(double count);

// Refuses a batch that does not fit: in device memory (the GPU path's fields: each GPU holds its
// share, with the plan for its own limits), and in host memory (the CPU path's fields, and the
// copies of v the program keeps). Says how much it needs, how much is free and how many members
// of this size would fit. Leaves the first share's device current. Returns the host bytes it
// needs.
double check_memory(const std::vector<Share>& shares, GpuPath path, int rows, int cols,
                    int host_copies_per_member);

// `gs_sweep benchmark` (benchmark.cpp): @p argc and @p argv after the word `benchmark`; @p name,
// the program's name in its messages.
int run_benchmark(int argc, char** argv, const std::string& name);

}  // namespace GS_LESSON_NAMESPACE
