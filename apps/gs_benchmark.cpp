// gs_benchmark: runs every implementation of this build on the same grid and prints one
// markdown table (time, cell-updates/s, speed-up over lesson 01's naive loop, share of the
// measured copy bandwidth). Speed is measured here, never in a test.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gs/gpu.hpp"
#include "gs/state.hpp"
#include "gs/stepper.hpp"
#include "gs/timing.hpp"
#include "gs_commit.hpp"  // GS_GIT_COMMIT, generated at build time (apps/CMakeLists.txt)
#include "registry.hpp"

namespace {

struct Row {
  std::string name;
  std::string lesson;
  gs::Device device = gs::Device::cpu;
  std::int64_t steps_timed = 0;
  double seconds_timed = 0.0;
  bool finite = true;
  double rate() const { return seconds_timed > 0 ? steps_timed / seconds_timed : 0.0; }
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
// loaded again so every implementation times the same steps from the same state.
Row measure(const gs::Implementation& impl, const gs::Params& params, double budget_seconds) {
  Row row{impl.name, impl.lesson, impl.device};
  std::unique_ptr<gs::Stepper> stepper = impl.create();
  const gs::State initial = gs::initial_state(params.rows, params.cols);
  stepper->load(initial, params);
  stepper->advance(params.steps_per_frame);
  stepper->synchronize();
  stepper->load(initial, params);
  stepper->synchronize();
  gs::Stopwatch clock;
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

}  // namespace

int main(int argc, char** argv) {
  gs::Params params;
  params.frames = 1000;
  std::string only;
  std::string skip;
  std::string baseline = "l01-naive";
  double budget = 60.0;
  std::string markdown_path;
  CLI::App app{"Measures every implementation of this build on the same grid (no output file).",
               "gs_benchmark"};
  app.add_option("-r,--nbrow", params.rows, "grid rows")->capture_default_str();
  app.add_option("-c,--nbcol", params.cols, "grid columns")->capture_default_str();
  app.add_option("-n,--nbimage", params.frames, "frames")->capture_default_str();
  app.add_option("-e,--nbextrastep", params.steps_per_frame, "steps per frame")
      ->capture_default_str();
  app.add_option("--impl", only, "comma-separated implementations to run (default: all usable)");
  app.add_option("--skip", skip, "comma-separated implementations to leave out");
  app.add_option("--baseline", baseline, "implementation the speed-up is relative to")
      ->capture_default_str();
  app.add_option("--max-seconds", budget,
                 "time budget per implementation; a slower one is timed on fewer frames and its "
                 "full-run time extrapolated (marked ~)")
      ->capture_default_str();
  app.add_option("--markdown", markdown_path, "also write the table to this file");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;
  }
  const std::vector<std::string> problems = gs::find_problems(params);
  if (!problems.empty()) {
    for (const std::string& problem : problems)
      std::cerr << "gs_benchmark: error: " << problem << "\n";
    return 2;
  }

  const std::vector<std::string> wanted = split(only);
  const std::vector<std::string> unwanted = split(skip);
  std::vector<gs::Implementation> selected;
  std::vector<gs::Implementation> all = gs::all_implementations();
  for (const std::string& name : wanted) {
    if (gs::find_implementation(all, name) == nullptr) {
      std::cerr << "gs_benchmark: error: no implementation named '" << name << "'\n";
      return 2;
    }
  }
  // Table order: the course's order (lesson 01 first), which is the registry's reversed.
  std::reverse(all.begin(), all.end());
  for (gs::Implementation& impl : all) {
    const bool asked =
        wanted.empty() || std::find(wanted.begin(), wanted.end(), impl.name) != wanted.end();
    const bool refused = std::find(unwanted.begin(), unwanted.end(), impl.name) != unwanted.end();
    const bool usable = impl.device == gs::Device::cpu || gs::gpu_status().available;
    if (asked && !refused && usable) selected.push_back(impl);
    if (asked && !usable)
      std::cerr << "gs_benchmark: skipping " << impl.name << ": " << gs::gpu_status().reason
                << "\n";
  }

  std::ostringstream header;
  header << "Gray-Scott benchmark, " << params.rows << " x " << params.cols << ", " << params.frames
         << " frames x " << params.steps_per_frame << " steps = " << params.total_steps()
         << " steps, compute only\n\n";
  header << "- date: " << today() << ", commit: " << GS_GIT_COMMIT << "\n";
  header << "- CPU: " << cpu_model() << ", " << std::thread::hardware_concurrency()
         << " hardware threads\n";
  double bandwidth = 0.0;
  if (gs::gpu_status().available) {
    bandwidth = gs::measured_copy_bandwidth();
    header << "- GPU: " << gs::gpu_status().name << ", measured device copy " << std::fixed
           << std::setprecision(0) << bandwidth / 1e9 << " GB/s (read + write)\n";
  } else {
    header << "- GPU: none (" << gs::gpu_status().reason << ")\n";
  }
  std::cout << header.str() << std::flush;

  std::vector<Row> rows;
  for (const gs::Implementation& impl : selected) {
    std::cerr << "  running " << impl.name << " ..." << std::flush;
    try {
      rows.push_back(measure(impl, params, budget));
      std::cerr << " " << std::fixed << std::setprecision(3) << rows.back().seconds_timed
                << " s for " << rows.back().steps_timed << " steps\n";
    } catch (const std::exception& error) {
      std::cerr << " failed: " << error.what() << "\n";
      return 1;
    }
  }

  double baseline_rate = 0.0;
  for (const Row& row : rows) {
    if (row.name == baseline) baseline_rate = row.rate();
  }
  const double total_steps = static_cast<double>(params.total_steps());
  const double cells = static_cast<double>(params.cells());
  std::ostringstream table;
  table << "\n| implementation | lesson | device | seconds | cell-updates/s | speed-up vs "
        << baseline << " | GB/s at 16 B/cell | share of copy bandwidth |\n";
  table << "|---|---|---|---:|---:|---:|---:|---:|\n";
  for (const Row& row : rows) {
    const double seconds = total_steps / row.rate();
    const bool extrapolated = row.steps_timed < params.total_steps();
    const double updates = cells * row.rate();
    table << "| " << row.name << (row.finite ? "" : " (NOT FINITE)") << " | " << row.lesson << " | "
          << (row.device == gs::Device::gpu ? "gpu" : "cpu") << " | " << (extrapolated ? "~" : "")
          << std::fixed << std::setprecision(seconds < 10 ? 3 : 1) << seconds << " | "
          << std::scientific << std::setprecision(3) << updates << " | " << std::fixed
          << std::setprecision(1);
    if (baseline_rate > 0) {
      table << row.rate() / baseline_rate << "x";
    } else {
      table << "n/a";
    }
    table << " | " << std::setprecision(0) << updates * gs::kBytesPerCellUpdate / 1e9 << " | ";
    if (row.device == gs::Device::gpu && bandwidth > 0) {
      table << std::setprecision(0) << 100.0 * updates * gs::kBytesPerCellUpdate / bandwidth << "%";
    } else {
      table << "-";
    }
    table << " |\n";
  }
  table << "\n~ = timed on fewer steps (budget --max-seconds " << budget
        << " s) and extrapolated to the full run.\n";
  std::cout << table.str();
  if (!markdown_path.empty()) {
    std::ofstream file(markdown_path);
    file << header.str() << table.str();
    if (!file) {
      std::cerr << "gs_benchmark: error: cannot write '" << markdown_path << "'\n";
      return 1;
    }
  }
  const bool all_finite =
      std::all_of(rows.begin(), rows.end(), [](const Row& r) { return r.finite; });
  return all_finite ? 0 : 1;
}
