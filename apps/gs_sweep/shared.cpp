// gs_sweep's program plumbing: what the sweep and its benchmark share (shared.hpp says what each
// part does).
#include "shared.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gs/device_limits.hpp"
#include "gs/gpu.hpp"
#include "gs/interrupt.hpp"
#include "gs/params.hpp"
#include "gs/program.hpp"
#include "gs/report.hpp"
#include "gs/timing.hpp"

namespace GS_LESSON_NAMESPACE {

namespace {

bool parse_number(const std::string& text, double& value) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  value = std::strtod(text.c_str(), &end);
  return errno == 0 && end == text.c_str() + text.size() && std::isfinite(value);
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

}  // namespace

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

std::vector<Share> shares_of(int members, const std::vector<int>& devices) {
  if (devices.empty()) return {Share{kNoDevice, 0, members}};
  return split_members(members, devices);
}

std::string describe_shares(const std::vector<Share>& shares) {
  std::string text;
  for (const Share& share : shares) {
    text += (text.empty() ? "" : ", ") + describe_device(share.device) + " members " +
            std::to_string(share.first) + " to " + std::to_string(share.first + share.count - 1);
  }
  return text;
}

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

}  // namespace GS_LESSON_NAMESPACE
