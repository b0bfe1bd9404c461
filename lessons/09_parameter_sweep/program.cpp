// gs_sweep, lesson 09's program: a parameter sweep of Gray-Scott over a grid of (F, k) pairs, all
// advanced as one batch, written as an HDF5 file and a PNG map of the patterns; and
// `gs_sweep benchmark`, which measures the batch against lesson 06's single official-size grid
// and against the same members run one after the other, and on every GPU against one. The
// steppers are sweep.cpp's (batch.hpp); the picture is mosaic.cpp's; the members spread over
// several GPUs, one share and one thread per GPU, by multi_gpu.cpp. Read, not edited.
#include <omp.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <iomanip>
#include <iostream>
#include <limits>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "batch.hpp"
#include "gs/device_limits.hpp"
#include "gs/gpu.hpp"
#include "gs/hdf5_io.hpp"
#include "gs/interrupt.hpp"
#include "gs/lesson.hpp"
#include "gs/main_guard.hpp"
#include "gs/output_file.hpp"
#include "gs/params.hpp"
#include "gs/png_file.hpp"
#include "gs/program.hpp"
#include "gs/registry.hpp"
#include "gs/report.hpp"
#include "gs/state.hpp"
#include "gs/timing.hpp"
#include "gs_commit.hpp"
#include "mosaic.hpp"
#include "multi_gpu.hpp"

namespace GS_LESSON_NAMESPACE {
namespace {

// ---------------------------------------------------------------------------------------------
// The per-member summary: what the map says without looking at every tile
// ---------------------------------------------------------------------------------------------

// A member "died out" when its largest v at the end is below this: the pattern decayed to the
// trivial state u = 1, v = 0.
constexpr float kDeadBelow = 1e-3f;
// A cell is "covered" when its v is above this: inside a spot, a stripe or a wave.
constexpr float kCoveredAbove = 0.1f;
// A member is "still changing" when the mean |v(N) - v(N - W)| over its cells is above this:
// travelling waves, splitting spots; below it the pattern stands still (steady spots, stripes).
constexpr float kChangingAbove = 1e-3f;
// The largest batch: CUDA's limit on gridDim.z (the streaming kernel's member index).
constexpr int kMaxMembers = 65535;

struct Summary {
  std::vector<float> mean_v;       // mean of v over the member's cells at the end
  std::vector<float> covered;      // fraction of the cells with v > kCoveredAbove at the end
  std::vector<float> max_v;        // largest v at the end
  std::vector<std::int32_t> died;  // 1 when max_v < kDeadBelow, else 0
  std::vector<float> change;       // mean |v(N) - v(N - W)| over the cells
};

Summary summarise(const std::vector<float>& v, const std::vector<float>& v_before, int members,
                  std::size_t cells) {
  Summary s;
  for (int m = 0; m < members; ++m) {
    const float* now = v.data() + static_cast<std::size_t>(m) * cells;
    const float* before = v_before.data() + static_cast<std::size_t>(m) * cells;
    double sum = 0.0;
    double change = 0.0;
    std::size_t covered = 0;
    float largest = -std::numeric_limits<float>::infinity();
    for (std::size_t i = 0; i < cells; ++i) {
      sum += now[i];
      change += std::fabs(static_cast<double>(now[i]) - before[i]);
      covered += now[i] > kCoveredAbove ? 1 : 0;
      largest = std::max(largest, now[i]);
    }
    s.mean_v.push_back(static_cast<float>(sum / static_cast<double>(cells)));
    s.covered.push_back(static_cast<float>(static_cast<double>(covered) / cells));
    s.max_v.push_back(largest);
    s.died.push_back(largest < kDeadBelow ? 1 : 0);
    s.change.push_back(static_cast<float>(change / static_cast<double>(cells)));
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// Flags and their checks
// ---------------------------------------------------------------------------------------------

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

bool parse_number(const std::string& text, double& value) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  value = std::strtod(text.c_str(), &end);
  return errno == 0 && end == text.c_str() + text.size() && std::isfinite(value);
}

// Parses `text` given to `flag`; every problem goes to `problems`, naming the flag.
Range parse_range(const std::string& text, const std::string& flag,
                  std::vector<std::string>& problems) {
  Range range;
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, ':');) parts.push_back(part);
  if (!text.empty() && text.back() == ':') parts.push_back("");
  const std::string usage = flag + " takes FIRST:LAST:COUNT (e.g. 0.01:0.06:32) or one value";
  if (parts.size() == 1) {
    range.count = 1;
    if (!parse_number(parts[0], range.first)) {
      problems.push_back(usage + " (got '" + text + "')");
      return range;
    }
    range.last = range.first;
  } else if (parts.size() == 3) {
    char* end = nullptr;
    errno = 0;
    const long count = std::strtol(parts[2].c_str(), &end, 10);
    if (!parse_number(parts[0], range.first) || !parse_number(parts[1], range.last) ||
        parts[2].empty() || errno != 0 || end != parts[2].c_str() + parts[2].size()) {
      problems.push_back(usage + " (got '" + text + "')");
      return range;
    }
    if (count < 1 || count > kMaxMembers) {
      problems.push_back(flag + ": the count must be between 1 and " + std::to_string(kMaxMembers) +
                         " (got " + parts[2] + ")");
      return range;
    }
    range.count = static_cast<int>(count);
  } else {
    problems.push_back(usage + " (got '" + text + "')");
    return range;
  }
  if (range.count > 1 && range.first > range.last) {
    problems.push_back(flag + " " + text + ": the range is inverted (" + parts[0] + " > " +
                       parts[1] + "); give it from the smallest value to the largest");
  } else if (range.count > 1 && range.first == range.last) {
    problems.push_back(flag + " " + text + ": the range is empty (first = last) but asks for " +
                       std::to_string(range.count) + " values; give one value, or a count of 1");
  } else if (range.count == 1 && parts.size() == 3 && range.first != range.last) {
    problems.push_back(flag + " " + text + ": a count of 1 needs first = last (or one value)");
  }
  if (range.first <= 0.0 || range.last <= 0.0) {
    problems.push_back(flag + " " + text + ": every rate must be greater than 0");
  }
  // The members compute in float32: an end that does not convert to a normal float32 would run
  // as inf or as 0 (or a subnormal number). Between two good ends every value is good.
  for (const auto& [end, value] :
       {std::pair{parts[0], range.first},
        std::pair{parts.size() == 3 ? parts[1] : parts[0], range.last}}) {
    const std::string problem = gs::float32_problem(value);
    if (!problem.empty()) {
      problems.push_back(flag + " " + text + ": " + end + " " + problem);
      break;
    }
  }
  return range;
}

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

void add_common_flags(CLI::App& app, Common& c) {
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("-r,--nbrow", c.rows, "rows of every member's grid")->capture_default_str();
  app.add_option("-c,--nbcol", c.cols, "columns of every member's grid")->capture_default_str();
  app.add_option("--steps", c.steps, "steps every member makes")->capture_default_str();
  app.add_option("-u,--diffusion-u", c.diffusion_u, "diffusion rate Du of u (shared)")
      ->capture_default_str()
      ->check(gs::float32_number());
  app.add_option("-v,--diffusion-v", c.diffusion_v, "diffusion rate Dv of v (shared)")
      ->capture_default_str()
      ->check(gs::float32_number());
  app.add_option("-t,--deltat", c.dt, "time step dt (shared; stable while dt*max(Du,Dv) <= 1/6)")
      ->capture_default_str()
      ->check(gs::float32_number());
  app.add_option("--device", c.device, "auto (the GPU when one is usable), gpu or cpu")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "gpu", "cpu"}));
  app.add_option("--path", c.path,
                 "GPU kernel: auto (resident when a member fits in shared memory), resident or "
                 "streaming")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "resident", "streaming"}));
  app.add_option("--gpus", c.gpus,
                 "GPUs to spread the members over: all (every GPU this process sees) or a count N "
                 "(GPUs 0 to N-1; CUDA_VISIBLE_DEVICES chooses which)")
      ->capture_default_str();
}

// The number --gpus asks for: 0 for all, -1 for a text that is neither `all` nor a count >= 1.
int gpus_asked(const std::string& text) {
  if (text == "all") return 0;
  char* end = nullptr;
  errno = 0;
  const long count = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || errno != 0 || end != text.c_str() + text.size() || count < 1 ||
      count > INT_MAX) {
    return -1;
  }
  return static_cast<int>(count);
}

// The problems of the grid, the steps and the shared rates, each naming its flag.
void check_common(const Common& c, std::vector<std::string>& problems) {
  if (c.rows < 1)
    problems.push_back("-r/--nbrow must be at least 1 (got " + std::to_string(c.rows) + ")");
  if (c.cols < 1)
    problems.push_back("-c/--nbcol must be at least 1 (got " + std::to_string(c.cols) + ")");
  if (c.steps < 1) {
    problems.push_back("--steps must be at least 1 (got " + std::to_string(c.steps) + ")");
  }
  if (gpus_asked(c.gpus) < 0) {
    problems.push_back("--gpus takes `all` or a number of GPUs of at least 1 (got '" + c.gpus +
                       "')");
  }
  if (c.rows >= 1 && c.cols >= 1 && std::int64_t{c.rows} * c.cols > gs::kMaxCells) {
    problems.push_back("-r/--nbrow x -c/--nbcol must be at most " + std::to_string(gs::kMaxCells) +
                       " cells per member");
  }
  // The shared rates are checked by common/'s rules; F and k are the ranges' (checked above),
  // so valid stand-ins keep their messages out.
  gs::Rates shared;
  shared.diffusion_u = c.diffusion_u;
  shared.diffusion_v = c.diffusion_v;
  shared.dt = c.dt;
  for (std::string& problem : gs::find_problems(shared)) problems.push_back(std::move(problem));
}

GpuPath gpu_path(const std::string& name) {
  if (name == "resident") return GpuPath::resident;
  if (name == "streaming") return GpuPath::streaming;
  return GpuPath::automatic;
}

// Thrown for a batch that cannot run (too large, no GPU): exit code and message, told by
// gs::guarded_main().
using Refusal = gs::Refusal;

// "CPU" or "GPU" after --device: the GPU when asked and usable; refuses --device gpu without one.
bool use_gpu(const std::string& device) {
  const bool gpu_usable = gpu_compiled() && gs::gpu_status().available;
  if (device == "gpu" && !gpu_usable) {
    throw Refusal{gs::kExitNoGpu,
                  "--device gpu: " + (gpu_compiled() ? gs::gpu_status().reason
                                                     : std::string("this build has no CUDA "
                                                                   "support"))};
  }
  return device == "gpu" || (device == "auto" && gpu_usable);
}

// The CUDA devices the members are spread over: 0 to N-1, N from --gpus (all: every device this
// process sees); none on the CPU. Refuses a count of GPUs for a run on the CPU (--device cpu,
// or --device auto without a usable GPU), and more GPUs than there are.
std::vector<int> gpu_devices(bool gpu, const Common& c) {
  const std::string& gpus = c.gpus;
  const int asked = gpus_asked(gpus);
  if (!gpu) {
    if (asked > 0 && c.device == "cpu") {
      throw Refusal{gs::kExitUsage, "--gpus " + gpus + " asks for GPUs, --device cpu for none"};
    }
    if (asked > 0) {
      throw Refusal{gs::kExitNoGpu,
                    "--gpus " + gpus + ": " +
                        (gpu_compiled() ? gs::gpu_status().reason
                                        : std::string("this build has no CUDA support"))};
    }
    return {};
  }
  const int visible = gs::gpu_status().device_count;
  if (asked > visible) {
    throw Refusal{gs::kExitNoGpu, "--gpus " + gpus + ": this process sees " +
                                      std::to_string(visible) + " GPU" + (visible == 1 ? "" : "s") +
                                      " (CUDA_VISIBLE_DEVICES)"};
  }
  std::vector<int> devices;
  for (int device = 0; device < (asked == 0 ? visible : asked); ++device) {
    devices.push_back(device);
  }
  return devices;
}

// The shares of a batch of `members`: one per device (multi_gpu.hpp), or the whole batch on the
// CPU when there is no device.
std::vector<Share> shares_of(int members, const std::vector<int>& devices) {
  if (devices.empty()) return {Share{kNoDevice, 0, members}};
  return split_members(members, devices);
}

// "GPU 0 (NVIDIA H100 80GB HBM3, PCI 0000:1a:00) members 0 to 511, GPU 1 (...) ...".
std::string describe_shares(const std::vector<Share>& shares) {
  std::string text;
  for (const Share& share : shares) {
    text += (text.empty() ? "" : ", ") + describe_device(share.device) + " members " +
            std::to_string(share.first) + " to " + std::to_string(share.first + share.count - 1);
  }
  return text;
}

// Runs work(i, stop) for every share (run_shares(): one thread per GPU). With several GPUs, what
// one throws comes back naming its GPU, its type kept: the exit code follows the type.
void on_every_share(const std::vector<Share>& shares,
                    const std::function<void(std::size_t, const std::atomic<bool>&)>& work) {
  if (shares.size() == 1) {
    run_shares(shares, work);
    return;
  }
  run_shares(shares, [&](std::size_t i, const std::atomic<bool>& stop) {
    const std::string gpu = "GPU " + std::to_string(shares[i].device) + ": ";
    try {
      work(i, stop);
    } catch (const gs::InvalidParameter& error) {
      throw gs::InvalidParameter(gpu + error.what());
    } catch (const gs::Diverged& error) {
      throw gs::Diverged(gpu + error.what());
    } catch (const gs::Interrupted&) {
      throw;  // a signal stops every GPU: it names none
    } catch (const StoppedEarly&) {
      throw;  // never reported
    } catch (const std::bad_alloc&) {
      throw;  // host memory, which the GPUs share
    } catch (const std::exception& error) {
      throw std::runtime_error(gpu + error.what());
    }
  });
}

std::string bytes(double count) {
  return gs::si(count, "B");
}

// Refuses a batch that does not fit: in device memory (the GPU path's fields: each GPU holds its
// share, with the plan for its own limits), and in host memory (the CPU path's fields, and the
// copies of v the program keeps). Says how much it needs, how much is free and how many members
// of this size would fit. Leaves the first share's device current. Returns the host bytes it
// needs.
double check_memory(const std::vector<Share>& shares, GpuPath path, int rows, int cols,
                    int host_copies_per_member) {
  const bool gpu = shares.front().device != kNoDevice;
  const int members = shares.back().first + shares.back().count;
  const double cells = static_cast<double>(rows) * cols;
  const auto refuse = [&](const std::string& what, const std::string& where, int count,
                          double per_member, double free_bytes) {
    const double needed = per_member * count;
    if (needed <= free_bytes) return;
    const double fit = std::floor(free_bytes / per_member);
    std::ostringstream message;
    message << what << " does not fit in " << where << ": " << count << " members of " << rows
            << " x " << cols << " cells need " << bytes(needed) << " (" << bytes(per_member)
            << " per member), " << bytes(std::max(0.0, free_bytes)) << " is free; at most "
            << static_cast<long long>(std::max(0.0, fit))
            << " members of this size fit: sweep fewer (F, k) pairs or a smaller grid";
    if (gpu && shares.size() < static_cast<std::size_t>(gs::gpu_status().device_count)) {
      message << ", or spread them over more GPUs (--gpus)";
    }
    throw Refusal{gs::kExitUsage, message.str()};
  };
  for (std::size_t i = 0; gpu && i < shares.size(); ++i) {
    use_device(shares[i].device);
    const GpuPlan plan = plan_gpu(rows, cols, path);
    const DeviceMemory memory = device_memory();  // within the limits (GS_DEVICE_LIMITS)
    const double reserve = 64.0 * (1 << 20);      // kernels' own needs, other allocations
    if (shares.size() == 1) {
      refuse("the batch", "device memory (" + gs::describe_gpu() + ")", members,
             static_cast<double>(plan.bytes_per_member),
             static_cast<double>(memory.free) - reserve);
    } else {
      refuse("the share of " + describe_device(shares[i].device), "its device memory",
             shares[i].count, static_cast<double>(plan.bytes_per_member),
             static_cast<double>(memory.free) - reserve);
    }
  }
  if (gpu) use_device(shares.front().device);
  const double host_per_member =
      cells * sizeof(float) * (host_copies_per_member + (gpu ? 0 : 4)) + 2 * sizeof(float);
  const std::int64_t available = gs::host_available_bytes();
  if (available >= 0) {
    refuse("the batch", "host memory", members, host_per_member, static_cast<double>(available));
  }
  return host_per_member * members;
}

// The PNG map's size before it is drawn (mosaic_size(): draw_mosaic()'s rule, the colour bar's
// labels sized for the widest value a float can have, so never smaller than the map drawn).
struct MapSize {
  std::int64_t width = 0;
  std::int64_t height = 0;
  double bytes() const { return static_cast<double>(width) * static_cast<double>(height) * 3.0; }
};

MapSize map_size(int rows, int cols, const MosaicLayout& layout) {
  const MosaicSize size = mosaic_size(rows, cols, layout);
  return {size.width, size.height};
}

std::string pixels(const MapSize& size) {
  return std::to_string(size.width) + " x " + std::to_string(size.height) + " pixels";
}

// Refuses, before any work, a map that would not fit in the host memory left beside the batch's
// @p batch_host_bytes (libpng's limit on its sides is an output check: gs::check_png_size()).
void check_map(const MapSize& size, int feeds, int kills, int tile, double batch_host_bytes) {
  const std::int64_t available = gs::host_available_bytes();
  if (available >= 0 && size.bytes() > static_cast<double>(available) - batch_host_bytes) {
    throw Refusal{gs::kExitUsage,
                  "the map of " + std::to_string(feeds) + " x " + std::to_string(kills) +
                      " members in tiles of " + std::to_string(tile) +
                      " pixels (--tile) would be " + pixels(size) + ", " + bytes(size.bytes()) +
                      ", and host memory has " +
                      bytes(std::max(0.0, static_cast<double>(available) - batch_host_bytes)) +
                      " free besides the batch's " + bytes(batch_host_bytes) +
                      ": lower --tile, sweep fewer values, or write no map (--no-png)"};
  }
}

// ---------------------------------------------------------------------------------------------
// Running the batch: chunks of about a quarter second, a progress line, signals
// ---------------------------------------------------------------------------------------------

class Progress {
 public:
  Progress(int total_steps, double cells_per_step, bool enabled)
      : total_(total_steps), cells_(cells_per_step), enabled_(enabled) {}
  void update(int done) {
    if (!enabled_) return;
    const double now = clock_.seconds();
    if (done < total_ && now - last_draw_ < 0.25) return;
    last_draw_ = now;
    const double rate = now > 0.0 ? done / now : 0.0;
    std::fprintf(stderr, "\r  step %d/%d (%3.0f%%)  %.3g cell-updates/s  ETA %.1f s   ", done,
                 total_, 100.0 * done / total_, rate * cells_,
                 rate > 0.0 ? (total_ - done) / rate : 0.0);
    std::fflush(stderr);
    drawn_ = true;
  }
  void finish() {
    if (drawn_) std::fputc('\n', stderr);
    drawn_ = false;
  }

 private:
  int total_;
  double cells_;
  bool enabled_;
  bool drawn_ = false;
  gs::Stopwatch clock_;
  double last_draw_ = -1.0;
};

// Advances from step `done` to `target`: chunks sized from the measured speed to take about a
// quarter of a second, the device waited for after each, a signal checked between them, and
// `stop` (another GPU failed: multi_gpu.hpp).
class ChunkedRun {
 public:
  ChunkedRun(BatchStepper& stepper, Progress& progress, const std::atomic<bool>& stop)
      : stepper_(stepper), progress_(progress), stop_(stop) {}
  void advance_to(int target) {
    while (done_ < target) {
      gs::throw_if_interrupted("at step " + std::to_string(done_));
      throw_if_stopped(stop_);
      const int now = std::min(chunk_, target - done_);
      gs::Stopwatch clock;
      stepper_.advance(now);
      stepper_.synchronize();
      const double seconds = clock.seconds();
      done_ += now;
      progress_.update(done_);
      if (seconds > 0.0) {
        chunk_ = static_cast<int>(std::clamp(now * 0.25 / seconds, 1.0, 1.0e6));
      }
    }
  }

 private:
  BatchStepper& stepper_;
  Progress& progress_;
  const std::atomic<bool>& stop_;
  int done_ = 0;
  int chunk_ = 8;
};

// Before a long CPU run, how long it may take: the default map is 1.7e11 cell-updates, minutes
// on a laptop's few cores. A model, not a measurement: 1.5e8 to 5e8 cell-updates/s per thread
// (members that fit in a core's cache; the course's 2-core machine did 2.4e8 per thread).
void print_cpu_estimate(double cell_updates) {
  const double threads = omp_get_max_threads();
  const double fastest = cell_updates / (threads * 5e8);
  const double slowest = cell_updates / (threads * 1.5e8);
  if (slowest < 30.0) return;
  std::cout << std::setprecision(2) << "  note     " << cell_updates << " cell-updates on "
            << threads << " thread(s): expect " << std::fixed << std::setprecision(0)
            << fastest / 60.0 << " to " << slowest / 60.0 << " min"
            << " (--device gpu, or fewer members or --steps, for a quick map)\n"
            << std::defaultfloat << std::flush;
}

std::string number_text(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

// ---------------------------------------------------------------------------------------------
// gs_sweep
// ---------------------------------------------------------------------------------------------

struct SweepOptions {
  Common common;
  std::string feed = "0.01:0.06:32";
  std::string kill = "0.04:0.07:32";
  std::string output = "sweep.h5";
  std::string png = "sweep.png";
  bool write_hdf5 = true;
  bool write_png = true;
  bool fsync = true;
  bool progress = false;
  int window = 500;
  int tile = 64;
  float vmax = std::numeric_limits<float>::quiet_NaN();
};

int run_sweep(int argc, char** argv, const std::string& name) {
  SweepOptions o;
  CLI::App app{
      "Gray-Scott parameter sweep: every (F, k) pair of two ranges as one batch of "
      "simulations; writes the last v of each (HDF5) and the map of patterns (PNG). `" +
          name + " benchmark --help` measures the batch.",
      name};
  add_common_flags(app, o.common);
  app.add_option("--feed", o.feed, "feed rates F: FIRST:LAST:COUNT, or one value")
      ->capture_default_str();
  app.add_option("--kill", o.kill, "kill rates k: FIRST:LAST:COUNT, or one value")
      ->capture_default_str();
  app.add_option("-o,--output", o.output, "HDF5 file of the results")->capture_default_str();
  app.add_option("--png", o.png, "PNG file of the map")->capture_default_str();
  app.add_flag_callback(
      "--no-hdf5", [&o] { o.write_hdf5 = false; }, "write no HDF5 file");
  app.add_flag_callback(
      "--no-png", [&o] { o.write_png = false; }, "write no PNG file");
  app.add_flag_callback(
      "--no-output",
      [&o] {
        o.write_hdf5 = false;
        o.write_png = false;
      },
      "compute and summarise only: write no file");
  app.add_flag_callback(
      "--no-fsync", [&o] { o.fsync = false; }, "do not flush the files to the disk at the end");
  app.add_option("--window", o.window,
                 "steps W over which the summary's `change` is measured (at most --steps; the "
                 "default shrinks to --steps in a shorter run)")
      ->capture_default_str();
  app.add_option("--tile", o.tile, "height of one member's tile in the PNG, in pixels")
      ->capture_default_str();
  app.add_option("--vmax", o.vmax, "v drawn pale yellow (default: the largest v of the batch)")
      ->check(gs::float32_number());
  app.add_flag("--progress", o.progress, "show the progress line even when not a terminal");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? gs::kExitSuccess : gs::kExitUsage;
  }
  o.progress = o.progress || ::isatty(STDERR_FILENO) == 1;

  std::vector<std::string> problems;
  const Range feed = parse_range(o.feed, "--feed", problems);
  const Range kill = parse_range(o.kill, "--kill", problems);
  check_common(o.common, problems);
  if (o.window < 1)
    problems.push_back("--window must be at least 1 (got " + std::to_string(o.window) + ")");
  // The default window (500 steps) shrinks to a shorter run; a window given is never changed.
  const bool window_given = app.count("--window") > 0;
  if (window_given && o.window > o.common.steps && o.common.steps >= 1) {
    problems.push_back("--window must be at most --steps (" + std::to_string(o.common.steps) +
                       "): the change is measured over the last W steps of the run (got " +
                       std::to_string(o.window) + ")");
  }
  if (o.tile < 1 || o.tile > 1024) {
    problems.push_back("--tile must be between 1 and 1024 pixels (got " + std::to_string(o.tile) +
                       ")");
  }
  if (!std::isnan(o.vmax) && !(std::isfinite(o.vmax) && o.vmax > 0.0f)) {
    problems.push_back("--vmax must be a finite number greater than 0");
  }
  if (o.write_hdf5 && o.output.empty()) problems.push_back("-o/--output must not be empty");
  if (o.write_png && o.png.empty()) problems.push_back("--png must not be empty");
  const std::int64_t members = std::int64_t{feed.count} * kill.count;
  if (problems.empty() && members > kMaxMembers) {
    problems.push_back("--feed and --kill ask for " + std::to_string(members) +
                       " members; a batch holds at most " + std::to_string(kMaxMembers));
  }
  if (!problems.empty()) {
    for (const std::string& problem : problems) std::cerr << name << ": error: " << problem << "\n";
    std::cerr << "Run with --help for the flags and their defaults.\n";
    return gs::kExitUsage;
  }
  const Common& c = o.common;
  const int batch = static_cast<int>(members);
  const int window = window_given ? o.window : std::min(o.window, c.steps);
  const std::size_t cells = static_cast<std::size_t>(c.rows) * c.cols;
  // What the program is allocating, for the message if memory runs out: the batch, then the map.
  std::string allocating = std::to_string(batch) + " members of " + std::to_string(c.rows) + " x " +
                           std::to_string(c.cols) + " cells";

  const auto sweep = [&]() -> int {
    // Signals are caught from here on (starting CUDA can take a while): the run stops at the next
    // check, between two chunks of steps, and leaves no file.
    gs::InterruptGuard signals;
    const std::vector<float> feeds = feed.values();
    const std::vector<float> kills = kill.values();
    // The map's layout is known before any work but for the largest v (its label's width): the
    // widest label a float can have stands in for it until then.
    MosaicLayout layout;
    layout.feed.assign(feeds.begin(), feeds.end());
    layout.kill.assign(kills.begin(), kills.end());
    layout.tile_pixels = o.tile;
    layout.vmax = std::isnan(o.vmax) ? std::numeric_limits<float>::max() : o.vmax;
    std::ostringstream title;
    title << "Gray-Scott: v after " << c.steps << " steps, " << feed.count << " x " << kill.count
          << " members of " << c.rows << " x " << c.cols << " cells";
    std::ostringstream rates_line;
    rates_line << "Du = " << c.diffusion_u << ", Dv = " << c.diffusion_v << ", dt = " << c.dt
               << "; every member starts from the course's seed";
    layout.title = {title.str(), rates_line.str()};

    const bool gpu = use_gpu(c.device);
    const std::vector<Share> shares = shares_of(batch, gpu_devices(gpu, c));
    const double batch_host_bytes = check_memory(shares, gpu_path(c.path), c.rows, c.cols, 4);
    const MapSize map = map_size(c.rows, c.cols, layout);
    if (o.write_png) check_map(map, feed.count, kill.count, o.tile, batch_host_bytes);
    // Both files are checked before any work: what each path names, that they are not one file,
    // the room, the size of the picture (output_file.hpp, png_file.hpp).
    std::vector<gs::PlannedOutput> outputs;
    if (o.write_hdf5) {
      const std::int64_t values = static_cast<std::int64_t>(cells) * batch * sizeof(float);
      outputs.push_back({o.output, "-o", values + gs::hdf5_metadata_allowance(batch)});
    }
    if (o.write_png) {
      gs::check_png_size(static_cast<int>(std::min<std::int64_t>(map.width, INT_MAX)),
                         static_cast<int>(std::min<std::int64_t>(map.height, INT_MAX)), o.png,
                         "--png");
      outputs.push_back({o.png, "--png", 0});  // compressed: its size is not known beforehand
    }
    gs::check_outputs(outputs);

    BatchRates rates;
    rates.diffusion_u = c.diffusion_u;
    rates.diffusion_v = c.diffusion_v;
    rates.dt = c.dt;
    for (const float f : feeds) {
      for (const float k : kills) {
        rates.feed.push_back(f);
        rates.kill.push_back(k);
      }
    }
    // One stepper per share, each loaded with its members on its own GPU: one share, on the
    // calling thread, with one GPU or on the CPU; one thread per GPU with several.
    std::vector<ShareStepper> steppers(shares.size());
    gs::Stopwatch clock;
    on_every_share(shares, [&](std::size_t i, const std::atomic<bool>&) {
      steppers[i] = make_share_stepper(shares[i], gpu_path(c.path));
      steppers[i]->load(repeat_state(gs::initial_state(c.rows, c.cols), shares[i].count),
                        share_rates(rates, shares[i]));
      steppers[i]->synchronize();
    });
    const double startup = clock.seconds();
    std::cout << name << ": " << batch << " members (" << feed.count << " F x " << kill.count
              << " k) of " << c.rows << " x " << c.cols << " cells, " << c.steps << " steps\n";
    if (shares.size() == 1) {
      std::cout << "  on " << (gpu ? gs::describe_gpu() : std::string("the CPU")) << ": "
                << steppers[0]->describe() << "\n";
    } else {
      std::cout << "  on " << shares.size() << " GPUs: " << describe_shares(shares) << "\n";
      for (std::size_t i = 0; i < shares.size(); ++i) {
        std::cout << "  GPU " << shares[i].device << ": " << steppers[i]->describe() << "\n";
      }
    }
    std::cout << std::flush;
    if (!gpu) print_cpu_estimate(static_cast<double>(cells) * batch * c.steps);
    // The progress line follows the first share, the largest: the others end at about its time.
    Progress progress(c.steps, static_cast<double>(cells) * batch, o.progress);
    Progress silent(c.steps, 0.0, false);
    std::vector<float> v_before(cells * batch);
    std::vector<float> v(cells * batch);
    clock.restart();
    on_every_share(shares, [&](std::size_t i, const std::atomic<bool>& stop) {
      ChunkedRun run(*steppers[i], i == 0 ? progress : silent, stop);
      const std::size_t offset = cells * static_cast<std::size_t>(shares[i].first);
      run.advance_to(c.steps - window);
      steppers[i]->fetch_v(v_before.data() + offset);  // each share into its members' place
      run.advance_to(c.steps);
      steppers[i]->fetch_v(v.data() + offset);
    });
    const double seconds = clock.seconds();
    progress.finish();
    for (int m = 0; m < batch; ++m) {
      const float* member = v.data() + static_cast<std::size_t>(m) * cells;
      if (!std::all_of(member, member + cells, [](float x) { return std::isfinite(x); })) {
        throw gs::Diverged("member " + std::to_string(m) + " (F = " + number_text(rates.feed[m]) +
                           ", k = " + number_text(rates.kill[m]) +
                           ") diverged: v is not finite; choose a smaller time step");
      }
    }
    const Summary summary = summarise(v, v_before, batch, cells);

    float vmax = o.vmax;
    if (std::isnan(vmax)) vmax = std::max(kDeadBelow, *std::max_element(v.begin(), v.end()));
    gs::throw_if_interrupted("before the output was written");
    std::unique_ptr<gs::DatasetWriter> writer;
    if (o.write_hdf5) {
      gs::OutputOptions output("-o", nullptr);
      if (!o.fsync) output.writeback_bytes = 0;  // --no-fsync: the page cache only, no waits
      writer = std::make_unique<gs::DatasetWriter>(o.output, output);
      const std::int64_t b = batch;
      writer->write("v", {b, c.rows, c.cols}, v.data(),
                    "v of every member after the last step, [member][row][col]");
      writer->write("feed", {b}, rates.feed.data(), "feed rate F of each member");
      writer->write("kill", {b}, rates.kill.data(), "kill rate k of each member");
      writer->write("feed_values", {feed.count}, feeds.data(),
                    "the F of each row of the map: member m has F = feed_values[m / kill_count]");
      writer->write(
          "kill_values", {kill.count}, kills.data(),
          "the k of each column of the map: member m has k = kill_values[m % kill_count]");
      writer->write("mean_v", {b}, summary.mean_v.data(),
                    "mean of v over the member's cells after the last step");
      writer->write("covered", {b}, summary.covered.data(),
                    "fraction of the member's cells with v > covered_above after the last step");
      writer->write("max_v", {b}, summary.max_v.data(),
                    "largest v of the member after the last step");
      writer->write("died", {b}, summary.died.data(),
                    "1 when max_v < dead_below (the pattern decayed to u = 1, v = 0), else 0");
      writer->write("change", {b}, summary.change.data(),
                    "mean over the member's cells of |v(steps) - v(steps - window)|: near 0 for a "
                    "pattern that stands still, larger for moving or growing ones");
      writer->set_integer("rows", c.rows);
      writer->set_integer("cols", c.cols);
      writer->set_integer("steps", c.steps);
      writer->set_integer("members", batch);
      writer->set_integer("feed_count", feed.count);
      writer->set_integer("kill_count", kill.count);
      writer->set_number("feed_first", feed.first);
      writer->set_number("feed_last", feed.last);
      writer->set_number("kill_first", kill.first);
      writer->set_number("kill_last", kill.last);
      writer->set_number("diffusion_u", c.diffusion_u);
      writer->set_number("diffusion_v", c.diffusion_v);
      writer->set_number("deltat", c.dt);
      writer->set_integer("window", window);
      writer->set_number("dead_below", kDeadBelow);
      writer->set_number("covered_above", kCoveredAbove);
      writer->set_text("layout",
                       "member m = (index of F) * kill_count + (index of k); v[m] is its grid");
      writer->set_text("initial_state",
                       "every member starts from the course's initial state (docs/PROBLEM.md)");
      writer->set_integer("gpus", gpu ? static_cast<std::int64_t>(shares.size()) : 0);
      writer->set_text("stepper", (shares.size() > 1 ? std::to_string(shares.size()) +
                                                           " GPUs, members split evenly in order; "
                                                     : std::string()) +
                                      steppers[0]->describe());
    }
    // The map: drawn, then written through common/'s output mechanism like every file.
    std::unique_ptr<gs::OutputFile> png;
    Image image;
    if (o.write_png) {
      layout.vmax = vmax;
      allocating = "the map's picture, " + pixels(map) + " (" + bytes(map.bytes()) +
                   "; lower --tile or use --no-png)";
      image = draw_mosaic(v.data(), c.rows, c.cols, layout);
      png = std::make_unique<gs::OutputFile>(o.png, gs::OutputOptions("--png", nullptr));
      gs::write_rgb_png(*png, image.width, image.height, [&image](int y, unsigned char* rgb) {
        const std::size_t row_bytes = static_cast<std::size_t>(image.width) * 3;
        std::copy_n(image.rgb.data() + static_cast<std::size_t>(y) * row_bytes, row_bytes, rgb);
      });
    }
    gs::throw_if_interrupted("before the output was committed");
    // Each file replaces its old one only when complete; a failure or a signal before leaves
    // both old files as they were.
    if (writer) writer->commit(o.fsync);
    if (png) png->commit(o.fsync);

    const int died = static_cast<int>(std::count(summary.died.begin(), summary.died.end(), 1));
    int changing = 0;
    for (int m = 0; m < batch; ++m) {
      changing += summary.died[m] == 0 && summary.change[m] > kChangingAbove ? 1 : 0;
    }
    const double updates = static_cast<double>(cells) * batch * c.steps;
    std::cout << std::setprecision(3) << "  compute  " << seconds << " s, "
              << gs::si(updates / seconds, "cell-updates/s") << " (load " << startup << " s)\n"
              << "  members  " << died << " died out (max v < " << kDeadBelow << "), " << changing
              << " still changing over the last " << window << " steps (mean |dv| > "
              << kChangingAbove << "), " << batch - died - changing << " standing still\n";
    if (o.write_hdf5) std::cout << "  wrote    " << o.output << "\n";
    if (o.write_png) {
      std::cout << "  wrote    " << o.png << " (" << image.width << " x " << image.height
                << " pixels)\n";
    }
    std::cout.flush();
    if (!std::cout) {
      std::cerr << name << ": error: cannot write to standard output\n";
      return gs::kExitFailure;
    }
    return gs::kExitSuccess;
  };
  gs::GuardWords words;
  words.after_interruption = "; no output file was left";
  words.out_of_memory_for = [&allocating] { return allocating; };
  words.invalid_parameter_is_usage = true;
  return gs::guarded_main(name, sweep, words);
}

// ---------------------------------------------------------------------------------------------
// gs_sweep benchmark
// ---------------------------------------------------------------------------------------------

// One measured run: what it was, on which implementation, how many cell-updates in how long.
struct Measurement {
  std::string what;
  std::string implementation;
  std::string lesson;
  double cell_updates = 0.0;  // of the whole run the row stands for
  double seconds = 0.0;       // of the whole run (extrapolated when `extrapolated`)
  std::int64_t steps_timed = 0;
  bool extrapolated = false;
  std::string note;
  bool several_gpus = false;  // the batch spread over several GPUs: compared with one GPU's below
  double rate() const { return seconds > 0.0 ? cell_updates / seconds : 0.0; }
};

bool all_finite(const std::vector<float>& values) {
  return std::all_of(values.begin(), values.end(), [](float x) { return std::isfinite(x); });
}

// Advances a single-grid stepper by `steps` in calls of 32 steps (gray_scott's frames).
void advance_in_frames(gs::Stepper& stepper, int steps) {
  for (int done = 0; done < steps; done += 32) stepper.advance(std::min(32, steps - done));
}

// The batch timed on `shares` (one GPU, several, or the CPU): every share loaded and warmed up,
// loaded again, then the whole run from the initial state, timed from before the first share
// starts to after the last one ends (the threads' start and end included); v checked finite.
// Returns the seconds and the first share's stepper's line.
std::pair<double, std::string> time_batch(const std::vector<Share>& shares, GpuPath path,
                                          const gs::State& seed, const BatchRates& rates,
                                          int steps) {
  std::vector<ShareStepper> steppers(shares.size());
  on_every_share(shares, [&](std::size_t i, const std::atomic<bool>&) {
    steppers[i] = make_share_stepper(shares[i], path);
    const BatchState start = repeat_state(seed, shares[i].count);
    const BatchRates share = share_rates(rates, shares[i]);
    steppers[i]->load(start, share);
    steppers[i]->advance(std::min(steps, 100));
    steppers[i]->synchronize();
    steppers[i]->load(start, share);
    steppers[i]->synchronize();
  });
  gs::Stopwatch clock;
  on_every_share(shares, [&](std::size_t i, const std::atomic<bool>&) {
    steppers[i]->advance(steps);
    steppers[i]->synchronize();
  });
  const double seconds = clock.seconds();
  on_every_share(shares, [&](std::size_t i, const std::atomic<bool>&) {
    std::vector<float> v(seed.size() * static_cast<std::size_t>(shares[i].count));
    steppers[i]->fetch_v(v.data());
    if (!all_finite(v)) throw gs::Diverged("the batch's state is not finite");
  });
  return {seconds, steppers[0]->describe()};
}

int run_benchmark(int argc, char** argv, const std::string& name) {
  Common c;  // the sizes and counts not given get the device's default after parsing
  int members = 0;
  int official_steps = 0;
  int sequential_members = 0;
  std::string implementation;
  std::string csv_path;
  std::string markdown_path;
  CLI::App app{
      "Measures the batch (GPU default: 1024 members of 128 x 128 for 10000 steps; CPU: "
      "64 members of 64 x 64 for 2000 steps) against one official-size grid (1080 x 1920) "
      "and against the same members run one after the other, both with the registry's "
      "first implementation for the device (l06-temporal on a GPU); with several GPUs (--gpus), "
      "also the batch spread over all of them against the batch on the first.",
      name};
  add_common_flags(app, c);
  // A flag not given takes the device's default once the device is known.
  app.get_option("--nbrow")->default_str("128 GPU, 64 CPU");
  app.get_option("--nbcol")->default_str("128 GPU, 64 CPU");
  app.get_option("--steps")->default_str("10000 GPU, 2000 CPU");
  app.add_option("--members", members, "members of the batch (default: 1024 GPU, 64 CPU)");
  app.add_option("--impl", implementation,
                 "single-grid implementation for the comparisons (default: the registry's first "
                 "for the device)");
  app.add_option("--official-steps", official_steps,
                 "steps of the official-size run (default: 320 GPU, 32 CPU)");
  app.add_option("--sequential-members", sequential_members,
                 "members timed one after the other, extrapolated to the batch (default: 32 GPU, "
                 "4 CPU)");
  app.add_option("--csv", csv_path, "also append one CSV row per measurement to this file");
  app.add_option("--markdown", markdown_path, "also write the table to this file");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? gs::kExitSuccess : gs::kExitUsage;
  }
  const auto benchmark = [&]() -> int {
    const bool gpu = use_gpu(c.device);
    // Only a flag not given takes the default: a count given as 0 is refused below, like
    // everywhere else, never replaced.
    const auto fallback = [gpu, &app](const char* flag, int& value, int on_gpu, int on_cpu) {
      if (app.count(flag) == 0) value = gpu ? on_gpu : on_cpu;
    };
    fallback("--nbrow", c.rows, 128, 64);
    fallback("--nbcol", c.cols, 128, 64);
    fallback("--steps", c.steps, 10000, 2000);
    fallback("--members", members, 1024, 64);
    fallback("--official-steps", official_steps, 320, 32);
    fallback("--sequential-members", sequential_members, 32, 4);
    std::vector<std::string> problems;
    check_common(c, problems);
    if (members < 1 || members > kMaxMembers) {
      problems.push_back("--members must be between 1 and " + std::to_string(kMaxMembers) +
                         " (got " + std::to_string(members) + ")");
    }
    if (official_steps < 1) {
      problems.push_back("--official-steps must be at least 1 (got " +
                         std::to_string(official_steps) + ")");
    }
    if (sequential_members < 1) {
      problems.push_back("--sequential-members must be at least 1 (got " +
                         std::to_string(sequential_members) + ")");
    }
    if (!problems.empty()) {
      for (const std::string& problem : problems) {
        std::cerr << name << ": error: " << problem << "\n";
      }
      return gs::kExitUsage;
    }
    sequential_members = std::min(sequential_members, members);
    // The files it writes are checked before anything is measured (output_file.hpp).
    std::vector<gs::PlannedOutput> outputs;
    if (!markdown_path.empty()) outputs.push_back({markdown_path, "--markdown", 64 * 1024});
    if (!csv_path.empty()) {
      outputs.push_back({csv_path, "--csv", gs::measurement_file_bytes(csv_path)});
    }
    gs::check_outputs(outputs);

    // The single-grid implementation: named, or the registry's first for the device.
    const std::vector<gs::Implementation> registry = gs::all_implementations();
    const gs::Implementation* single = nullptr;
    if (!implementation.empty()) {
      single = gs::find_implementation(registry, implementation);
      if (single == nullptr) {
        throw Refusal{gs::kExitUsage, "no implementation named '" + implementation + "'"};
      }
      if (!gs::usable(*single)) {
        throw Refusal{gs::kExitNoGpu,
                      "'" + implementation + "' needs a GPU: " + gs::gpu_status().reason};
      }
    } else {
      for (const gs::Implementation& impl : registry) {
        if ((impl.device == gs::Device::gpu) == gpu) {
          single = &impl;
          break;
        }
      }
      if (single == nullptr) throw Refusal{gs::kExitUsage, "the registry has no implementation"};
    }

    // The batch on the first GPU (or the CPU), and spread over every GPU asked for: each GPU
    // must hold its share of both.
    const std::vector<int> devices = gpu_devices(gpu, c);
    const std::vector<Share> one_gpu =
        shares_of(members, gpu ? std::vector<int>{devices.front()} : std::vector<int>{});
    const std::vector<Share> every_gpu = shares_of(members, devices);
    if (every_gpu.size() > 1) check_memory(every_gpu, gpu_path(c.path), c.rows, c.cols, 3);
    check_memory(one_gpu, gpu_path(c.path), c.rows, c.cols, 3);  // the first GPU current after
    GpuPlan plan;
    if (gpu) plan = plan_gpu(c.rows, c.cols, gpu_path(c.path));

    // The batch's rates: a square grid of the default ranges, filled row by row.
    BatchRates rates;
    rates.diffusion_u = c.diffusion_u;
    rates.diffusion_v = c.diffusion_v;
    rates.dt = c.dt;
    const int kills = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(members))));
    const int feeds = (members + kills - 1) / kills;
    for (int m = 0; m < members; ++m) {
      const int f = m / kills;
      const int k = m % kills;
      rates.feed.push_back(static_cast<float>(0.01 + 0.05 * (feeds > 1 ? f / (feeds - 1.0) : 0.0)));
      rates.kill.push_back(static_cast<float>(0.04 + 0.03 * (kills > 1 ? k / (kills - 1.0) : 0.0)));
    }
    const gs::State seed = gs::initial_state(c.rows, c.cols);
    const double member_cells = static_cast<double>(c.rows) * c.cols;
    const std::string device_name = gpu ? gs::describe_gpu() : gs::cpu_model();
    // The GPUs of the spread batch: "2 x NVIDIA H100 80GB HBM3", or their names when they differ.
    std::string gpus_name;
    if (every_gpu.size() > 1) {
      bool alike = true;
      for (const Share& share : every_gpu) {
        alike = alike && gs::device_limits(share.device).describe() == device_name;
        gpus_name += (gpus_name.empty() ? "" : " + ") + gs::device_limits(share.device).describe();
      }
      if (alike) gpus_name = std::to_string(every_gpu.size()) + " x " + device_name;
    }
    std::vector<Measurement> rows;
    gs::InterruptGuard signals;

    // 1. The batch on one GPU (or the CPU): a warm-up, then the whole run from the initial
    //    state, timed.
    const std::string batch_name =
        std::string("l09-batch-") +
        (gpu ? (plan.path == GpuPath::resident ? "resident" : "streaming") : "cpu");
    const std::string batch_what = std::to_string(members) + " members of " +
                                   std::to_string(c.rows) + " x " + std::to_string(c.cols);
    std::cerr << "  batch: " << batch_what << ", " << c.steps << " steps"
              << (gpu ? " on GPU " + std::to_string(devices.front()) : std::string()) << " ..."
              << std::flush;
    const auto [batch_seconds, batch_stepper] =
        time_batch(one_gpu, gpu_path(c.path), seed, rates, c.steps);
    Measurement batch{"batch: " + batch_what,
                      batch_name,
                      "09_parameter_sweep",
                      member_cells * members * c.steps,
                      batch_seconds,
                      c.steps,
                      false,
                      batch_stepper};
    std::cerr << " " << std::fixed << std::setprecision(3) << batch.seconds << " s\n";
    rows.push_back(batch);
    gs::throw_if_interrupted("after the batch");

    // 1b. The same batch spread over every GPU asked for, one share and one thread per GPU.
    Measurement spread;
    if (every_gpu.size() > 1) {
      const std::string gpus = std::to_string(every_gpu.size()) + " GPUs";
      std::cerr << "  batch on " << gpus << ": " << batch_what << ", " << c.steps << " steps ..."
                << std::flush;
      const auto [seconds, stepper_line] =
          time_batch(every_gpu, gpu_path(c.path), seed, rates, c.steps);
      spread = {"batch on " + gpus + ": " + batch_what,
                batch_name + "-" + std::to_string(every_gpu.size()) + "gpus",
                "09_parameter_sweep",
                member_cells * members * c.steps,
                seconds,
                c.steps,
                false,
                gpus + " (" + describe_shares(every_gpu) + "), one thread each; " + stepper_line,
                true};
      std::cerr << " " << std::fixed << std::setprecision(3) << spread.seconds << " s\n";
      rows.push_back(spread);
      gs::throw_if_interrupted("after the batch on " + gpus);
    }

    // 2. One official-size grid with the single-grid implementation, as gs_benchmark times it.
    gs::Stopwatch clock;
    std::cerr << "  " << single->name << ": one 1080 x 1920 grid, " << official_steps
              << " steps ..." << std::flush;
    {
      std::unique_ptr<gs::Stepper> one = single->create();
      const gs::State official = gs::initial_state(1080, 1920);
      const gs::Rates official_rates;
      one->load(official, official_rates);
      one->advance(std::min(32, official_steps));  // warm-up
      one->synchronize();
      one->load(official, official_rates);
      one->synchronize();
      clock.restart();
      for (int done = 0; done < official_steps; done += 32) {
        one->advance(std::min(32, official_steps - done));
        one->synchronize();
      }
      const double seconds = clock.seconds();
      std::vector<float> official_v(official.size());
      one->fetch_v(official_v.data());
      if (!all_finite(official_v)) throw gs::Diverged(single->name + "'s state is not finite");
      // Seconds of the official run (32,000 steps) at the measured rate, as gs_benchmark reports.
      const double official_updates = 1080.0 * 1920.0 * 32000.0;
      const double rate = 1080.0 * 1920.0 * official_steps / seconds;
      rows.push_back({"one official-size grid, 1080 x 1920", single->name, single->lesson,
                      official_updates, official_updates / rate, official_steps,
                      official_steps < 32000,
                      "synchronized after every 32 steps, as gs_benchmark does"});
      std::cerr << " " << seconds << " s\n";
    }
    gs::throw_if_interrupted("after the official-size run");

    // 3. The same members one after the other: load, steps in calls of 32, fetch v; a few timed,
    //    extrapolated to the batch.
    std::cerr << "  " << single->name << ": " << sequential_members << " of the " << members
              << " members one after the other ..." << std::flush;
    {
      std::unique_ptr<gs::Stepper> one = single->create();
      std::vector<float> single_v(seed.size());
      one->load(seed, rates.member(0));  // warm-up: the first load pays for what is created once
      advance_in_frames(*one, std::min(c.steps, 64));
      one->fetch_v(single_v.data());
      clock.restart();
      for (int m = 0; m < sequential_members; ++m) {
        one->load(seed, rates.member(m));
        advance_in_frames(*one, c.steps);
        one->fetch_v(single_v.data());
        if (!all_finite(single_v)) throw gs::Diverged(single->name + "'s state is not finite");
        gs::throw_if_interrupted("during the sequential runs");
      }
      const double seconds = clock.seconds();
      const double per_member = seconds / sequential_members;
      rows.push_back(
          {"sequential single runs: " + std::to_string(members) + " x (" + std::to_string(c.rows) +
               " x " + std::to_string(c.cols) + ")",
           single->name, single->lesson, member_cells * members * c.steps, per_member * members,
           std::int64_t{sequential_members} * c.steps, sequential_members < members,
           std::to_string(sequential_members) + " of " + std::to_string(members) +
               " members timed" + (sequential_members < members ? ", extrapolated" : "") +
               "; each: load, steps in calls of 32, fetch v"});
      std::cerr << " " << seconds << " s\n";
    }

    // The table.
    const std::string date = gs::today_utc();
    std::ostringstream table;
    table << "Gray-Scott parameter sweep benchmark, " << date << ", commit " << GS_GIT_COMMIT
          << ", " << (gpus_name.empty() ? device_name : gpus_name) << " (host: " << gs::cpu_model()
          << ", " << std::thread::hardware_concurrency() << " hardware threads)\n\n"
          << "| run | implementation | seconds | cell-updates/s | batch is faster by |\n"
          << "|---|---|---:|---:|---:|\n";
    for (const Measurement& row : rows) {
      table << "| " << row.what << " | " << row.implementation << " | "
            << (row.extrapolated ? "~" : "") << std::fixed << std::setprecision(3) << row.seconds
            << " | " << std::scientific << std::setprecision(3) << row.rate() << " | ";
      if (row.several_gpus) {
        table << "(below) |\n";  // the batch itself, faster: compared with one GPU below
      } else {
        table << std::fixed << std::setprecision(2) << batch.rate() / row.rate() << "x |\n";
      }
    }
    table << "\n";
    for (const Measurement& row : rows)
      table << "- " << row.implementation << ": " << row.note << "\n";
    table << "- ~ = extrapolated: the official-size run to 32,000 steps at its measured rate; the "
             "sequential runs to every member at the measured time per member.\n\n";
    // The official-size grid and the sequential runs are the last two rows.
    const double share = batch.rate() / rows[rows.size() - 2].rate();
    const double speedup = batch.rate() / rows.back().rate();
    table << std::fixed << std::setprecision(0) << "The batch's cell-update rate is "
          << 100.0 * share << " % of the single official-size grid's (goal: at least 70 %) and "
          << std::setprecision(1) << speedup
          << " times that of the same members run one after the other (goal: at least 20).\n";
    if (spread.several_gpus) {
      // Members per second: members of `c.steps` steps each, finished per second of the run.
      const double one = members / batch.seconds;
      const double all = members / spread.seconds;
      table << std::setprecision(0) << "Members of " << c.steps << " steps per second: " << one
            << " on one GPU (GPU " << devices.front() << "), " << all << " on " << every_gpu.size()
            << " GPUs: " << std::setprecision(2) << all / one << " times one GPU's (goal: at least "
            << 0.95 * every_gpu.size()
            << "; the model: the number of GPUs, less the host's share of the work).\n";
    }
    std::cout << table.str() << std::flush;

    int status = gs::kExitSuccess;
    if (!markdown_path.empty()) {
      try {
        gs::write_output_file(markdown_path, table.str(), gs::OutputOptions("--markdown", nullptr));
      } catch (const gs::OutputError& error) {
        std::cerr << name << ": error: " << error.what() << "\n";
        status = gs::kExitFailure;
      }
    }
    if (!csv_path.empty()) {
      std::string csv_device = device_name;
      std::replace(csv_device.begin(), csv_device.end(), ',', ' ');
      std::string csv_gpus = gpus_name;  // the spread batch's row: "2 x NVIDIA H100 80GB HBM3"
      std::replace(csv_gpus.begin(), csv_gpus.end(), ',', ' ');
      std::ostringstream lines;
      for (const Measurement& row : rows) {
        lines << row.implementation << "," << row.lesson << "," << (gpu ? "gpu" : "cpu")
              << ",sweep," << std::defaultfloat << std::setprecision(6) << row.seconds << ","
              << row.rate() << "," << row.steps_timed << ","
              << (row.extrapolated ? "true" : "false") << ","
              << (row.several_gpus ? csv_gpus : csv_device) << "," << date << "," << GS_GIT_COMMIT
              << "\n";
      }
      try {
        gs::append_measurement_rows(csv_path, lines.str(), gs::OutputOptions("--csv", nullptr));
      } catch (const gs::OutputError& error) {
        std::cerr << name << ": error: " << error.what() << "\n";
        status = gs::kExitFailure;
      }
    }
    if (!std::cout) {
      std::cerr << name << ": error: cannot write to standard output\n";
      status = gs::kExitFailure;
    }
    return status;
  };
  gs::GuardWords words;
  words.invalid_parameter_is_usage = true;
  return gs::guarded_main(name, benchmark, words);
}

}  // namespace

int program(int argc, char** argv, const char* name) {
  if (argc > 1 && std::string(argv[1]) == "benchmark") {
    return run_benchmark(argc - 1, argv + 1, std::string(name) + " benchmark");
  }
  return run_sweep(argc, argv, name);
}

}  // namespace GS_LESSON_NAMESPACE
