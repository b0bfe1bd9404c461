// gs_sweep's program plumbing (lesson 09; you need not read it for the exercise): `gs_sweep
// benchmark`, which measures the batch against lesson 06's single official-size grid and against
// the same members run one after the other, and on every GPU against one.
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
#include <vector>

#include "batch.hpp"
#include "gs/benchmark.hpp"
#include "gs/device_limits.hpp"
#include "gs/frame_timer.hpp"
#include "gs/gpu.hpp"
#include "gs/hdf5_io.hpp"
#include "gs/interrupt.hpp"
#include "gs/lesson.hpp"
#include "gs/main_guard.hpp"
#include "gs/output_file.hpp"
#include "gs/params.hpp"
#include "gs/program.hpp"
#include "gs/registry.hpp"
#include "gs/report.hpp"
#include "gs/state.hpp"
#include "gs/timing.hpp"
#include "gs_commit.hpp"
#include "multi_gpu.hpp"
#include "shared.hpp"

namespace GS_LESSON_NAMESPACE {
namespace {

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
    if (!gs::all_finite(v)) throw gs::Diverged("the batch's state is not finite");
  });
  return {seconds, steppers[0]->describe()};
}

}  // namespace

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
  gs::apply_value_rules(app);
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
      outputs.push_back(gs::planned_measurement_file(csv_path));
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

    // 2. One official-size grid with the single-grid implementation, as gs_benchmark times it:
    //    frames of 32 steps, each waited for.
    std::cerr << "  " << single->name << ": one 1080 x 1920 grid, " << official_steps
              << " steps ..." << std::flush;
    {
      std::unique_ptr<gs::Stepper> one = single->create();
      const gs::State official = gs::initial_state(1080, 1920);
      gs::FrameTiming timing;
      timing.steps = official_steps;
      timing.steps_per_frame = 32;
      const double seconds = gs::time_frames(*one, official, gs::Rates(), timing).seconds;
      std::vector<float> official_v(official.size());
      one->fetch_v(official_v.data());
      if (!gs::all_finite(official_v)) throw gs::Diverged(single->name + "'s state is not finite");
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
      gs::Stopwatch clock;
      for (int m = 0; m < sequential_members; ++m) {
        one->load(seed, rates.member(m));
        advance_in_frames(*one, c.steps);
        one->fetch_v(single_v.data());
        if (!gs::all_finite(single_v)) throw gs::Diverged(single->name + "'s state is not finite");
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
          << ", " << (gpus_name.empty() ? device_name : gpus_name)
          << " (host: " << gs::describe_host() << ")\n\n"
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

    std::string lines;
    for (const Measurement& row : rows) {
      lines += gs::measurement_line({row.implementation, row.lesson, gpu ? "gpu" : "cpu", "sweep",
                                     row.seconds, row.rate(), row.steps_timed, row.extrapolated,
                                     gs::csv_safe(row.several_gpus ? gpus_name : device_name), date,
                                     GS_GIT_COMMIT});
    }
    int status = gs::write_benchmark_files(name, markdown_path, table.str(), csv_path, lines);
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

}  // namespace GS_LESSON_NAMESPACE
