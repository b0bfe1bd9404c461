// The benchmark: every chosen implementation runs the same whole frames from the same state,
// compute only, and the table compares them. Speed is measured here, never in a test.
#include "gs/benchmark.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <thread>

#include "gs/gpu.hpp"
#include "gs/program.hpp"
#include "gs/report.hpp"
#include "gs/state.hpp"
#include "gs/timing.hpp"

namespace gs {
namespace {

struct Row {
  const Implementation* implementation = nullptr;
  std::int64_t steps_timed = 0;
  double seconds_timed = 0.0;
  bool finite = true;
  double steps_per_second() const { return seconds_timed > 0 ? steps_timed / seconds_timed : 0.0; }
};

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, ',');) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", std::gmtime(&now));
  return text;
}

// Times whole frames until the run is done or the time budget is spent. The first frame is a
// warm-up (first-touch page faults, module loading, clocks ramping up), then the state is
// loaded again so every implementation times the same steps from the same state. The device is
// waited for after every frame, as a program that writes each frame must.
Row measure(const Implementation& impl, const Params& params, double budget_seconds) {
  Row row;
  row.implementation = &impl;
  std::unique_ptr<Stepper> stepper = impl.create();
  const State initial = initial_state(params.rows, params.cols);
  stepper->load(initial, params.rates);
  stepper->advance(params.steps_per_frame);
  stepper->synchronize();
  stepper->load(initial, params.rates);
  stepper->synchronize();
  Stopwatch clock;
  for (int frame = 0; frame < params.frames; ++frame) {
    stepper->advance(params.steps_per_frame);
    stepper->synchronize();
    row.steps_timed += params.steps_per_frame;
    if (clock.seconds() > budget_seconds) break;
  }
  row.seconds_timed = clock.seconds();
  std::vector<float> v(static_cast<std::size_t>(params.cells()));
  stepper->fetch_v(v.data());
  row.finite = std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
  return row;
}

// One CSV row per implementation, the schema tools/charts.py and benchmarks/peers share.
void append_csv(const std::string& path, const std::vector<Row>& rows, const Params& params,
                const std::string& date, const std::string& commit) {
  const bool fresh = !std::filesystem::exists(path) || std::filesystem::file_size(path) == 0;
  std::ofstream file(path, std::ios::app);
  if (fresh) {
    file << "implementation,lesson,device,kind,seconds,cell_updates_per_s,steps_timed,"
            "extrapolated,device_name,date,commit\n";
  }
  for (const Row& row : rows) {
    const Implementation& impl = *row.implementation;
    const double seconds = static_cast<double>(params.total_steps()) / row.steps_per_second();
    const bool gpu = impl.device == Device::gpu;
    std::string device_name = gpu ? gpu_status().name : cpu_model();
    std::replace(device_name.begin(), device_name.end(), ',', ' ');
    file << impl.name << "," << impl.lesson << "," << (gpu ? "gpu" : "cpu") << ",compute,"
         << std::setprecision(6) << seconds << ","
         << static_cast<double>(params.cells()) * row.steps_per_second() << "," << row.steps_timed
         << "," << (row.steps_timed < params.total_steps() ? "true" : "false") << "," << device_name
         << "," << date << "," << commit << "\n";
  }
  file.flush();
  if (!file) throw std::runtime_error("cannot write '" + path + "'");
}

}  // namespace

int run_benchmark(int argc, char** argv, const std::vector<Implementation>& implementations,
                  const std::string& program_name, const std::string& commit) {
  // A file-size limit (ulimit -f) makes a write fail with EFBIG, reported like a full disk,
  // instead of killing the program with SIGXFSZ before it can say what happened.
  std::signal(SIGXFSZ, SIG_IGN);
  Params params;
  std::string only;
  std::string skip;
  std::string baseline = "l01-naive";
  double budget = 60.0;
  std::string markdown_path;
  std::string csv_path;
  CLI::App app{"Measures implementations on the same grid, compute only (no output file).",
               program_name};
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  add_grid_flags(app, params);
  add_rate_flags(app, params.rates);
  app.add_option("--impl", only, "comma-separated implementations to run (default: all usable)");
  app.add_option("--skip", skip, "comma-separated implementations to leave out");
  app.add_option("--baseline", baseline, "implementation the speed-up is relative to")
      ->capture_default_str();
  app.add_option("--max-seconds", budget,
                 "time budget per implementation; a slower one is timed on fewer frames and its "
                 "full-run time extrapolated (marked ~)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--markdown", markdown_path, "also write the table to this file");
  app.add_option("--csv", csv_path, "also append one CSV row per implementation to this file");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? kExitSuccess : kExitUsage;
  }
  const std::vector<std::string> problems = find_problems(params);
  if (!problems.empty()) {
    for (const std::string& problem : problems) {
      std::cerr << program_name << ": error: " << problem << "\n";
    }
    return kExitUsage;
  }

  const std::vector<std::string> wanted = split(only);
  const std::vector<std::string> unwanted = split(skip);
  for (const std::string& name : wanted) {
    if (find_implementation(implementations, name) == nullptr) {
      std::cerr << program_name << ": error: no implementation named '" << name << "'\n";
      return kExitUsage;
    }
  }
  // Table order: the course's order (lesson 01 first), the registry's reversed.
  std::vector<const Implementation*> selected;
  int refused_for_gpu = 0;
  for (auto it = implementations.rbegin(); it != implementations.rend(); ++it) {
    const Implementation& impl = *it;
    const bool asked =
        wanted.empty() || std::find(wanted.begin(), wanted.end(), impl.name) != wanted.end();
    const bool refused = std::find(unwanted.begin(), unwanted.end(), impl.name) != unwanted.end();
    if (!asked || refused) continue;
    if (usable(impl)) {
      selected.push_back(&impl);
    } else {
      ++refused_for_gpu;
      std::cerr << program_name << ": skipping " << impl.name << ": " << gpu_status().reason
                << "\n";
    }
  }
  if (selected.empty()) {
    std::cerr << program_name << ": error: nothing to measure"
              << (refused_for_gpu > 0 ? ": every implementation asked for needs a GPU" : "")
              << "\n";
    return refused_for_gpu > 0 ? kExitNoGpu : kExitUsage;
  }

  const std::string date = today();
  std::ostringstream header;
  header << "Gray-Scott benchmark, " << params.rows << " x " << params.cols << ", " << params.frames
         << " frames x " << params.steps_per_frame << " steps = " << params.total_steps()
         << " steps, compute only\n\n";
  header << "- date: " << date << ", commit: " << commit << "\n";
  header << "- CPU: " << cpu_model() << ", " << std::thread::hardware_concurrency()
         << " hardware threads\n";
  double bandwidth = 0.0;
  try {
    if (gpu_status().available) {
      bandwidth = measured_copy_bandwidth();
      header << "- GPU: " << gpu_status().name << ", measured device copy " << std::fixed
             << std::setprecision(0) << bandwidth / 1e9 << " GB/s (read + write)\n";
    } else {
      header << "- GPU: none (" << gpu_status().reason << ")\n";
    }
  } catch (const std::exception& error) {
    std::cerr << program_name << ": error: " << error.what() << "\n";
    return kExitFailure;
  }
  std::cout << header.str() << std::flush;

  std::vector<Row> rows;
  for (const Implementation* impl : selected) {
    std::cerr << "  running " << impl->name << " ..." << std::flush;
    try {
      rows.push_back(measure(*impl, params, budget));
      std::cerr << " " << std::fixed << std::setprecision(3) << rows.back().seconds_timed
                << " s for " << rows.back().steps_timed << " steps\n";
    } catch (const std::exception& error) {
      std::cerr << " failed: " << error.what() << "\n";
      return kExitFailure;
    }
  }

  double baseline_rate = 0.0;
  for (const Row& row : rows) {
    if (row.implementation->name == baseline) baseline_rate = row.steps_per_second();
  }
  const double total_steps = static_cast<double>(params.total_steps());
  const double cells = static_cast<double>(params.cells());
  std::ostringstream table;
  table << "\n| implementation | lesson | device | seconds | cell-updates/s | speed-up vs "
        << baseline << " | GB/s at 16 B/cell | share of copy bandwidth |\n";
  table << "|---|---|---|---:|---:|---:|---:|---:|\n";
  for (const Row& row : rows) {
    const Implementation& impl = *row.implementation;
    const double seconds = total_steps / row.steps_per_second();
    const bool extrapolated = row.steps_timed < params.total_steps();
    const double updates = cells * row.steps_per_second();
    table << "| " << impl.name << (row.finite ? "" : " (NOT FINITE)") << " | " << impl.lesson
          << " | " << (impl.device == Device::gpu ? "gpu" : "cpu") << " | "
          << (extrapolated ? "~" : "") << std::fixed << std::setprecision(seconds < 10 ? 3 : 1)
          << seconds << " | " << std::scientific << std::setprecision(3) << updates << " | "
          << std::fixed << std::setprecision(1);
    if (baseline_rate > 0) {
      table << row.steps_per_second() / baseline_rate << "x";
    } else {
      table << "n/a";
    }
    table << " | " << std::setprecision(0) << updates * kBytesPerCellUpdate / 1e9 << " | ";
    if (impl.device == Device::gpu && bandwidth > 0) {
      table << std::setprecision(0) << 100.0 * updates * kBytesPerCellUpdate / bandwidth << "%";
    } else {
      table << "-";
    }
    table << " |\n";
  }
  table << "\n~ = timed on fewer steps (budget --max-seconds " << budget
        << " s) and extrapolated to the full run.\n";
  std::cout << table.str() << std::flush;

  int status = kExitSuccess;
  if (!markdown_path.empty()) {
    std::ofstream file(markdown_path);
    file << header.str() << table.str();
    file.flush();
    if (!file) {
      std::cerr << program_name << ": error: cannot write '" << markdown_path << "'\n";
      status = kExitFailure;
    }
  }
  if (!csv_path.empty()) {
    try {
      append_csv(csv_path, rows, params, date, commit);
    } catch (const std::exception& error) {
      std::cerr << program_name << ": error: " << error.what() << "\n";
      status = kExitFailure;
    }
  }
  if (!std::cout) {
    std::cerr << program_name << ": error: cannot write to standard output\n";
    status = kExitFailure;
  }
  // A row that --impl asked for by name is missing: the promised table is incomplete.
  if (refused_for_gpu > 0 && !wanted.empty() && status == kExitSuccess) {
    std::cerr << program_name << ": error: " << refused_for_gpu
              << " implementation(s) named by --impl need a GPU and are missing from the table\n";
    status = kExitNoGpu;
  }
  for (const Row& row : rows) {
    if (!row.finite) {
      std::cerr << program_name << ": error: " << row.implementation->name
                << " left a state that is not finite\n";
      status = kExitFailure;
    }
  }
  return status;
}

}  // namespace gs
