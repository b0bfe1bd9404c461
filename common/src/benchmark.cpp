// The benchmark: every chosen implementation runs the same whole frames from the same state,
// compute only, and the table compares them. Speed is measured here, never in a test.
#include "gs/benchmark.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <iostream>
#include <limits>
#include <memory>
#include <new>
#include <sstream>

#include "gs/device_limits.hpp"
#include "gs/frame_timer.hpp"
#include "gs/gpu.hpp"
#include "gs/hdf5_io.hpp"
#include "gs/interrupt.hpp"
#include "gs/main_guard.hpp"
#include "gs/output_file.hpp"
#include "gs/program.hpp"
#include "gs/reference_check.hpp"
#include "gs/report.hpp"
#include "gs/state.hpp"
#include "gs/timing.hpp"

namespace gs {
namespace {

struct Row {
  const Implementation* implementation = nullptr;
  TimedSteps timed;  // fewer steps than the run's where the budget was spent
  bool finite = true;
  bool disagrees = false;  // with the reference, before it was timed (exercise programs)
  double steps_per_second() const {
    return timed.seconds > 0 ? static_cast<double>(timed.steps) / timed.seconds : 0.0;
  }
};

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, ',');) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

// Times frames until the run is done or the time budget is spent (gs::time_frames()). The first
// steps are a warm-up (first-touch page faults, module loading, clocks ramping up), then the state
// is loaded again so every implementation times the same steps from the same state. Frames are
// advanced in pieces sized from the warm-up to take about a tenth of the budget (0.1 s at most),
// the device waited for after each, so that the budget bounds the run even when one frame would
// take far longer.
Row measure(const Implementation& impl, const Params& params, double budget_seconds) {
  Row row;
  row.implementation = &impl;
  std::unique_ptr<Stepper> stepper = impl.create();
  const State initial = initial_state(params.rows, params.cols);
  const double piece_seconds = std::min(0.1, budget_seconds / 10.0);
  stepper->load(initial, params.rates);
  // The warm-up: at most one frame, at most a quarter of the budget; pieces that double until
  // one takes piece_seconds, the last one giving the speed the timed pieces are sized from.
  constexpr int kMostSteps = std::numeric_limits<int>::max();
  double seconds_per_step = 0.0;
  {
    Stopwatch warm_up;
    int done = 0;
    int piece = 1;
    while (done < params.steps_per_frame) {
      const int steps = std::min(piece, params.steps_per_frame - done);
      Stopwatch piece_clock;
      stepper->advance(steps);
      stepper->synchronize();
      seconds_per_step = piece_clock.seconds() / steps;
      done += steps;
      if (warm_up.seconds() > budget_seconds / 4.0) break;
      if (seconds_per_step * steps < piece_seconds && piece <= kMostSteps / 2) piece *= 2;
    }
  }
  const double fitting = seconds_per_step > 0.0 ? piece_seconds / seconds_per_step : 1e9;
  FrameTiming timing;
  timing.steps = params.total_steps();
  timing.steps_per_frame = params.steps_per_frame;
  timing.steps_per_wait =
      static_cast<int>(std::clamp(fitting, 1.0, static_cast<double>(kMostSteps)));
  timing.budget_seconds = budget_seconds;
  timing.warmed_up = true;
  row.timed = time_frames(*stepper, initial, params.rates, timing);
  std::vector<float> v(static_cast<std::size_t>(params.cells()));
  stepper->fetch_v(v.data());
  row.finite = all_finite(v);
  return row;
}

// One CSV row per implementation, the schema tools/charts.py and benchmarks/peers share.
std::string csv_rows(const std::vector<Row>& rows, const Params& params, const std::string& date,
                     const std::string& commit) {
  std::string lines;
  for (const Row& row : rows) {
    const Implementation& impl = *row.implementation;
    const bool gpu = impl.device == Device::gpu;
    lines += measurement_line({impl.name, impl.lesson, gpu ? "gpu" : "cpu", "compute",
                               static_cast<double>(params.total_steps()) / row.steps_per_second(),
                               static_cast<double>(params.cells()) * row.steps_per_second(),
                               row.timed.steps, row.timed.steps < params.total_steps(),
                               csv_safe(gpu ? describe_gpu() : cpu_model()), date, commit});
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------
// The end-to-end mode: the program with its output, against the disk's own write of the same bytes

// How a raw write of the same bytes goes to the disk: the yardsticks of the end-to-end mode.
enum class RawWrite {
  plain,      // write(2) a frame at a time into the page cache, then fsync: the whole drain at the
              // end (what the program did before it wrote back per frame)
  writeback,  // the same, with each frame's writeback started as it is written, waited for a few
              // frames later and dropped from the page cache (OutputFile::written(), as the
              // program's writer does), then fsync
  direct,     // O_DIRECT: from an aligned buffer straight to the disk, no page cache; the last
              // partial block written through the page cache; then fsync (for the metadata)
};

constexpr RawWrite kRawWrites[] = {RawWrite::plain, RawWrite::writeback, RawWrite::direct};

std::string describe(RawWrite how, bool flush) {
  const std::string then = flush ? ", then fsync" : "";
  switch (how) {
    case RawWrite::plain:
      return "write(2) a frame at a time" + then;
    case RawWrite::writeback:
      return "writeback per frame (sync_file_range, at most " +
             std::to_string(kWritebackBytesInFlight >> 20) + " MiB in flight)" + then;
    case RawWrite::direct:
      return "O_DIRECT, 4096-byte aligned" + then;
  }
  return "";
}

// The CSV row's name of each (the first is the name rows had before the other two existed).
std::string csv_name(RawWrite how) {
  switch (how) {
    case RawWrite::plain:
      return "raw write of the same bytes";
    case RawWrite::writeback:
      return "raw write of the same bytes with writeback per frame";
    case RawWrite::direct:
      return "raw write of the same bytes with O_DIRECT";
  }
  return "";
}

struct RawResult {
  bool measured = false;
  std::string not_measured;  // why, when it was not (O_DIRECT refused by the file system)
  double seconds = 0.0;
  double resident = 0.0;      // share of the file in the page cache once written (and flushed)
  std::string writeback_off;  // why the writeback per frame turned itself off (tmpfs), if it did
};

// An aligned buffer for O_DIRECT (and the others, alike), freed by free().
struct AlignedFree {
  void operator()(char* pointer) const { std::free(pointer); }
};

constexpr std::size_t kDirectAlignment = 4096;  // covers 512- and 4096-byte logical blocks

// Writes `bytes` bytes in chunks of `chunk` (one frame) to a new file in `directory`, the way
// `how` says, then fsync(2) if asked, and deletes it: the disk's own speed for the output, the
// yardstick of the end-to-end mode. The file is an OutputFile that is never committed (its
// temporary file, of a name of its own, is deleted on any failure or signal). Returns the seconds
// from the first write to the end of the flush, and the share of the file then in the page cache.
RawResult raw_write(const std::string& directory, std::int64_t bytes, std::size_t chunk, bool flush,
                    RawWrite how) {
  RawResult result;
  OutputOptions options("--end-to-end");
  options.writeback_bytes = how == RawWrite::writeback ? kWritebackBytesInFlight : 0;
  bool direct_refused = false;
  const OutputFile::Create create = [how, &direct_refused](const std::string& temporary) {
    if (how != RawWrite::direct) return OutputFile::create_plain(temporary);
    const int descriptor = ::open(
        temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_DIRECT, 0666);
    direct_refused = descriptor < 0 && errno == EINVAL;  // tmpfs, for one
    return descriptor;
  };
  std::unique_ptr<OutputFile> file;
  try {
    file = std::make_unique<OutputFile>(
        (std::filesystem::path(directory) / "gs_benchmark_raw_write").string(), options, create);
  } catch (const OutputError&) {
    if (!direct_refused) throw;
    result.not_measured = "this file system refuses O_DIRECT";
    return result;
  }
  // One frame, or for O_DIRECT the largest whole number of blocks in a frame (at least one).
  const std::size_t piece =
      how == RawWrite::direct
          ? std::max(kDirectAlignment, chunk / kDirectAlignment * kDirectAlignment)
          : std::max<std::size_t>(chunk, 1);
  void* memory = nullptr;
  if (::posix_memalign(&memory, kDirectAlignment,
                       (piece + kDirectAlignment - 1) / kDirectAlignment * kDirectAlignment) != 0) {
    throw std::bad_alloc();
  }
  const std::unique_ptr<char, AlignedFree> buffer(static_cast<char*>(memory));
  std::memset(buffer.get(), 'g', piece);
  Stopwatch clock;
  std::int64_t offset = 0;
  for (std::int64_t left = bytes; left > 0;) {
    std::size_t now = static_cast<std::size_t>(std::min<std::int64_t>(left, piece));
    if (how == RawWrite::direct) {
      if (now >= kDirectAlignment) {
        now = now / kDirectAlignment * kDirectAlignment;
      } else {
        // The tail, shorter than a block: O_DIRECT cannot write it; the page cache can.
        const int flags = ::fcntl(file->descriptor(), F_GETFL);
        if (flags < 0 || ::fcntl(file->descriptor(), F_SETFL, flags & ~O_DIRECT) != 0) {
          throw OutputError(
              "raw write of '" + file->temporary_path() +
              "': cannot turn O_DIRECT off for the last partial block: " + std::strerror(errno));
        }
      }
    }
    const int error = file->write_noexcept(buffer.get(), now);
    if (error == EINVAL && how == RawWrite::direct && offset == 0) {
      result.not_measured = "this file system refuses O_DIRECT writes of 4096-byte blocks";
      return result;  // the OutputFile deletes its file
    }
    if (error != 0) file->throw_write_error(error);
    file->written(offset, static_cast<std::int64_t>(now));  // nothing unless `writeback`
    offset += static_cast<std::int64_t>(now);
    left -= static_cast<std::int64_t>(now);
  }
  if (flush) file->flush();
  result.seconds = clock.seconds();
  result.measured = true;
  if (file->writeback().requested && !file->writeback().active) {
    result.writeback_off = file->writeback().off_because;
  }
  result.resident = resident_pages(file->temporary_path()).share();
  drop_from_page_cache(file->temporary_path());  // the next run starts without these pages
  file->abandon();                               // deletes it
  return result;
}

// The file each run of the end-to-end mode writes in `directory` (deleted after the run).
std::string end_to_end_output(const std::string& directory) {
  return (std::filesystem::path(directory) / "gs_benchmark_end_to_end.h5").string();
}

// One raw write, before and after the program.
struct Baseline {
  RawWrite how = RawWrite::plain;
  RawResult before;
  RawResult after;
  bool measured() const { return before.measured && after.measured; }
  double mean() const { return 0.5 * (before.seconds + after.seconds); }
};

struct EndToEndRow {
  const Implementation* implementation = nullptr;
  RunResult result;
  double resident = 0.0;  // share of the program's output in the page cache after the run
  std::vector<Baseline> baselines;
  // The fastest baseline measured before and after: the disk's own (durable) write.
  const Baseline* floor() const {
    const Baseline* fastest = nullptr;
    for (const Baseline& baseline : baselines) {
      if (baseline.measured() && (fastest == nullptr || baseline.mean() < fastest->mean())) {
        fastest = &baseline;
      }
    }
    return fastest;
  }
};

std::string percent(double share) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(share < 0.1 && share > 0.0 ? 1 : 0) << 100.0 * share
       << " %";
  return text.str();
}

// Runs one raw write and says so on stderr.
RawResult timed_raw_write(const std::string& directory, const Params& params, std::size_t chunk,
                          bool flush, RawWrite how) {
  std::cerr << "  raw write of " << si(static_cast<double>(params.output_bytes()), "B") << ", "
            << describe(how, flush) << " ..." << std::flush;
  const RawResult result = raw_write(directory, params.output_bytes(), chunk, flush, how);
  if (result.measured) {
    std::cerr << " " << std::fixed << std::setprecision(3) << result.seconds << " s, "
              << percent(result.resident) << " in the page cache after\n";
  } else {
    std::cerr << " not measured: " << result.not_measured << "\n";
  }
  return result;
}

// The end-to-end mode: each implementation through the frame loop, output in `directory`,
// between raw writes of the same bytes to the same directory (with `flush`: three kinds, in
// mirrored order before and after, so that a drift of the disk's speed weighs alike on each).
int run_end_to_end(const std::vector<const Implementation*>& selected, const Params& params,
                   const std::string& directory, bool flush, bool writeback, const FrameLoop& loop,
                   const std::string& program_name, const std::string& header,
                   const std::string& markdown_path, const std::string& csv_path,
                   const std::string& date, const std::string& commit) {
  std::vector<EndToEndRow> rows;
  const std::size_t frame_bytes = static_cast<std::size_t>(params.cells()) * sizeof(float);
  // Without fsync only the page cache is measured: one raw write, as the program does it.
  const std::vector<RawWrite> kinds =
      flush ? std::vector<RawWrite>(std::begin(kRawWrites), std::end(kRawWrites))
            : std::vector<RawWrite>{RawWrite::plain};
  for (const Implementation* impl : selected) {
    EndToEndRow row;
    row.implementation = impl;
    ProgramOptions options;
    options.params = params;
    options.params.output = end_to_end_output(directory);
    options.fsync = flush;
    options.writeback = writeback;
    try {
      for (const RawWrite how : kinds) {
        row.baselines.push_back(
            {how, timed_raw_write(directory, params, frame_bytes, flush, how), RawResult()});
      }
      std::cerr << "  running " << impl->name << " with output ..." << std::flush;
      row.result = loop.run(*impl, options);
      row.resident = resident_pages(options.params.output).share();
      drop_from_page_cache(options.params.output);
      std::filesystem::remove(options.params.output);
      std::cerr << " " << std::fixed << std::setprecision(3) << row.result.seconds << " s, "
                << percent(row.resident) << " in the page cache after\n";
      for (auto baseline = row.baselines.rbegin(); baseline != row.baselines.rend(); ++baseline) {
        baseline->after = timed_raw_write(directory, params, frame_bytes, flush, baseline->how);
      }
    } catch (const std::exception& error) {
      std::error_code ignored;
      std::filesystem::remove(options.params.output, ignored);
      std::cerr << " failed: " << error.what() << "\n";
      return kExitFailure;
    }
    rows.push_back(std::move(row));
  }
  std::ostringstream table;
  table << "\nEnd to end, output to " << directory
        << (flush ? ", flushed (fsync) on both sides" : ", not flushed (no fsync) on either side")
        << "\n\n";
  table << "| implementation | wall s | start-up s | compute s | copy s | write s | "
        << (flush ? "of which waiting for the disk s | flush s | " : "") << "waits | "
        << (flush ? "in the page cache after | disk's own write s (the fastest below) | wall / disk"
                  : "raw write s (before, after) | wall / raw")
        << " |\n";
  table << "|---|---:|---:|---:|---:|---:|" << (flush ? "---:|---:|" : "") << "---:|---:|---:|"
        << (flush ? "---:|" : "") << "\n";
  for (const EndToEndRow& row : rows) {
    const RunResult& r = row.result;
    table << "| " << row.implementation->name << " | " << std::fixed << std::setprecision(3)
          << r.seconds << " | " << r.startup_seconds << " | " << r.compute_seconds << " | "
          << r.copy_seconds << " | " << r.write_seconds << " | ";
    if (flush) {
      table << r.writeback.wait_seconds << (r.writeback.active ? "" : " (no writeback)") << " | "
            << r.flush_seconds << " | " << r.waits << " | " << percent(row.resident) << " | ";
      const Baseline* floor = row.floor();
      if (floor != nullptr) {
        table << std::setprecision(3) << floor->mean() << " | " << std::setprecision(2)
              << r.seconds / floor->mean() << " |\n";
      } else {
        table << "- | - |\n";
      }
    } else {
      const Baseline& raw = row.baselines.front();
      table << r.waits << " | " << raw.before.seconds << ", " << raw.after.seconds << " | "
            << std::setprecision(2) << (raw.mean() > 0 ? r.seconds / raw.mean() : 0.0) << " |\n";
    }
  }
  if (flush) {
    table << "\nThe disk's own durable write of the same " +
                 si(static_cast<double>(params.output_bytes()), "B")
          << " to the same directory, one frame at a time, before and after each program (in "
             "mirrored order); the fastest mean is the disk's own write above:\n\n";
    table
        << "| implementation | raw write | before s | after s | mean s | rate | in the page cache "
           "after |\n";
    table << "|---|---|---:|---:|---:|---:|---:|\n";
    for (const EndToEndRow& row : rows) {
      for (const Baseline& baseline : row.baselines) {
        table << "| " << row.implementation->name << " | " << describe(baseline.how, flush)
              << (baseline.before.writeback_off.empty()
                      ? std::string()
                      : " (writeback off here: " + baseline.before.writeback_off + ")")
              << (&baseline == row.floor() ? " (the fastest)" : "") << " | ";
        if (!baseline.measured()) {
          table << "not measured: "
                << (baseline.before.measured ? baseline.after : baseline.before).not_measured
                << " | | | | |\n";
          continue;
        }
        table << std::fixed << std::setprecision(3) << baseline.before.seconds << " | "
              << baseline.after.seconds << " | " << baseline.mean() << " | "
              << si(static_cast<double>(params.output_bytes()) / baseline.mean(), "B/s") << " | "
              << percent(baseline.after.resident) << " |\n";
      }
    }
    table << "\nwall / disk: the program's wall time over the disk's own durable write of the same "
             "bytes. In the page cache after: the share of the file's pages still in memory once "
             "it was complete (mincore), before it was deleted.\n";
  } else {
    table << "\nwall / raw: the program's wall time over the mean of the two raw writes of the "
             "same bytes (write(2) of one frame at a time).\n";
  }
  std::cout << table.str() << std::flush;
  std::string lines;
  const std::string kind = flush ? "end-to-end-fsync" : "end-to-end";
  for (const EndToEndRow& row : rows) {
    const Implementation& impl = *row.implementation;
    const bool gpu = impl.device == Device::gpu;
    lines +=
        measurement_line({impl.name, impl.lesson, gpu ? "gpu" : "cpu", kind, row.result.seconds,
                          row.result.cell_updates_per_second(), row.result.steps, false,
                          csv_safe(gpu ? describe_gpu() : cpu_model()), date, commit});
    for (const Baseline& baseline : row.baselines) {
      if (!baseline.measured()) continue;
      lines += measurement_line({csv_name(baseline.how), "disk", "cpu", kind, baseline.mean(), 0.0,
                                 0, false, directory, date, commit});
    }
  }
  int status =
      write_benchmark_files(program_name, markdown_path, header + table.str(), csv_path, lines);
  if (!std::cout) status = kExitFailure;
  return status;
}

// --resident FILE: how much of FILE is in the page cache.
int print_residency(const std::string& program_name, const std::string& path) {
  try {
    const Residency residency = resident_pages(path);
    std::cout << path << ": " << residency.resident << " of " << residency.pages
              << " pages in the page cache (" << percent(residency.share()) << ")\n";
  } catch (const std::exception& error) {
    std::cerr << program_name << ": error: " << error.what() << "\n";
    return kExitFailure;
  }
  std::cout.flush();
  return std::cout ? kExitSuccess : kExitFailure;
}

int benchmark_guarded(int argc, char** argv, const std::vector<Implementation>& implementations,
                      const std::string& program_name, const std::string& commit,
                      const FrameLoop& loop, ReferenceCheck check) {
  Params params;
  std::string only;
  std::string skip;
  // l01-naive where the program has it, else its first row (lesson 02's program has no l01-naive)
  std::string baseline = find_implementation(implementations, "l01-naive") != nullptr
                             ? "l01-naive"
                             : (implementations.empty() ? "" : implementations.back().name);
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
  app.add_option("--baseline", baseline,
                 "implementation the speed-up is relative to (default: l01-naive where the "
                 "program has it, else the first row)")
      ->capture_default_str();
  app.add_option("--max-seconds", budget,
                 "time budget per implementation; a slower one is timed on fewer frames and its "
                 "full-run time extrapolated (marked ~)")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& text) {
            // CLI::PositiveNumber lets "nan" through (every comparison with NaN is false), and a
            // NaN budget is never spent.
            double value = 0.0;
            if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value) || value <= 0.0) {
              return "must be a finite number of seconds greater than 0 (got " + text + ")";
            }
            return std::string();
          },
          "SECONDS > 0"));
  app.add_option("--markdown", markdown_path, "also write the table to this file");
  app.add_option("--csv", csv_path, "also append one CSV row per implementation to this file");
  std::string end_to_end;
  bool flush = false;
  app.add_option("--end-to-end", end_to_end,
                 "run each implementation with its output written into this directory, beside "
                 "a raw write of the same bytes there (the file is deleted after each run)");
  app.add_flag("--fsync", flush,
               "end-to-end: flush the output (and the raw writes) with fsync; the raw write is "
               "then made three ways (write(2), writeback per frame, O_DIRECT) and the fastest is "
               "the disk's own");
  bool no_writeback = false;
  app.add_flag("--no-writeback", no_writeback,
               "end-to-end: the program does not start each frame's writeback as it writes it "
               "(to compare)");
  std::string resident;
  app.add_option("--resident", resident,
                 "only say how much of this file is in the page cache (mincore), and exit");
  apply_value_rules(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? kExitSuccess : kExitUsage;
  }
  if (!resident.empty()) return print_residency(program_name, resident);
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
  // A baseline given must be one of this program's implementations (measured or not: the column
  // then says n/a); a misspelt name would leave every speed-up n/a without a word. The default,
  // lesson 01's loop, is not among a later lesson's own and leaves the column n/a as before.
  if (app.count("--baseline") > 0 && find_implementation(implementations, baseline) == nullptr) {
    std::string known;
    for (const Implementation& impl : implementations) {
      known += (known.empty() ? "" : ", ") + impl.name;
    }
    std::cerr << program_name << ": error: --baseline: no implementation named '" << baseline
              << "' (the implementations it knows: " << known << ")\n";
    return kExitUsage;
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
    if (!usable(impl)) {
      ++refused_for_gpu;
      std::cerr << program_name << ": skipping " << impl.name << ": " << gpu_status().reason
                << "\n";
      continue;
    }
    // An implementation that cannot hold this grid (lesson 11's on a grid larger than the chip)
    // is left out with its reason, as the GPU ones are without a GPU.
    const std::string refusal = grid_refusal(impl, params.rows, params.cols);
    if (!refusal.empty()) {
      std::cerr << program_name << ": skipping " << impl.name << ": " << refusal << "\n";
      continue;
    }
    selected.push_back(&impl);
  }
  if (selected.empty()) {
    std::cerr << program_name << ": error: nothing to measure"
              << (refused_for_gpu > 0 ? ": every implementation asked for needs a GPU" : "")
              << "\n";
    return refused_for_gpu > 0 ? kExitNoGpu : kExitUsage;
  }

  // Every file the run writes is checked before anything is measured: a FIFO, a directory, a
  // missing directory, two flags naming one file, the room (output_file.hpp).
  std::vector<PlannedOutput> outputs;
  if (!markdown_path.empty()) outputs.push_back({markdown_path, "--markdown", 64 * 1024});
  if (!csv_path.empty()) outputs.push_back(planned_measurement_file(csv_path));
  if (!end_to_end.empty()) {
    outputs.push_back({end_to_end_output(end_to_end), "--end-to-end", output_file_bytes(params)});
  }
  try {
    check_outputs(outputs);
  } catch (const std::exception& error) {
    std::cerr << program_name << ": error: " << error.what() << "\n";
    return kExitFailure;
  }

  const std::string date = gs::today_utc();
  std::ostringstream header;
  header << "Gray-Scott benchmark, " << params.rows << " x " << params.cols << ", " << params.frames
         << " frames x " << params.steps_per_frame << " steps = " << params.total_steps()
         << " steps, " << (end_to_end.empty() ? "compute only" : "end to end with output")
         << "\n\n";
  header << "- date: " << date << ", commit: " << commit << "\n";
  header << "- CPU: " << describe_host() << "\n";
  double bandwidth = 0.0;
  if (const int refused = check_before_work(program_name, [&] {
        if (!gpu_status().available) {
          header << "- GPU: none (" << gpu_status().reason << ")\n";
          return;
        }
        device_limits();  // a bad GS_DEVICE_LIMITS is refused before any measurement
        bandwidth = measured_copy_bandwidth();
        header << "- GPU: " << describe_gpu() << ", measured device copy " << std::fixed
               << std::setprecision(0) << bandwidth / 1e9 << " GB/s (read + write)\n";
      })) {
    return refused;
  }
  // An exercise program checks each implementation against the reference before timing it, and
  // says first which ones disagree: their rows below time wrong results.
  std::vector<const Implementation*> disagreeing;
  if (check == ReferenceCheck::before_work) {
    for (const Implementation* impl : selected) {
      const std::string warning =
          disagreement_warning(check_against_reference(*impl, params.rates), *impl);
      if (warning.empty()) continue;
      disagreeing.push_back(impl);
      header << "\n" << warning;
      std::cerr << program_name << ": " << warning;
    }
  }
  std::cout << header.str() << std::flush;
  if (!end_to_end.empty()) {
    return run_end_to_end(selected, params, end_to_end, flush, !no_writeback, loop, program_name,
                          header.str(), markdown_path, csv_path, date, commit);
  }

  std::vector<Row> rows;
  for (const Implementation* impl : selected) {
    std::cerr << "  running " << impl->name << " ..." << std::flush;
    try {
      rows.push_back(measure(*impl, params, budget));
      rows.back().disagrees =
          std::find(disagreeing.begin(), disagreeing.end(), impl) != disagreeing.end();
      std::cerr << " " << std::fixed << std::setprecision(3) << rows.back().timed.seconds
                << " s for " << rows.back().timed.steps << " steps\n";
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
    const bool extrapolated = row.timed.steps < params.total_steps();
    const double updates = cells * row.steps_per_second();
    table << "| " << impl.name << (row.disagrees ? " (WRONG RESULTS, see above)" : "")
          << (row.finite ? "" : " (NOT FINITE)") << " | " << impl.lesson << " | "
          << (impl.device == Device::gpu ? "gpu" : "cpu") << " | " << (extrapolated ? "~" : "")
          << std::fixed << std::setprecision(seconds < 10 ? 3 : 1) << seconds << " | "
          << std::scientific << std::setprecision(3) << updates << " | " << std::fixed
          << std::setprecision(1);
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
  table << "\n~ = timed on fewer steps (budget --max-seconds " << std::defaultfloat
        << std::setprecision(6) << budget << " s) and extrapolated to the full run.\n";
  std::cout << table.str() << std::flush;

  int status = write_benchmark_files(program_name, markdown_path, header.str() + table.str(),
                                     csv_path, csv_rows(rows, params, date, commit));
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

}  // namespace

int write_benchmark_files(const std::string& program_name, const std::string& markdown_path,
                          const std::string& markdown, const std::string& csv_path,
                          const std::string& csv_rows, const std::string& csv_header) {
  // Each file on its own: a failure is said, makes the run fail, and leaves the other written. A
  // signal and an exhausted memory are not the file's: they go on to the program's guard, which
  // answers them with its own message and exit status.
  int status = kExitSuccess;
  const auto write = [&](const std::function<void()>& write_file) {
    try {
      write_file();
    } catch (const Interrupted&) {
      throw;
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& error) {
      std::cerr << program_name << ": error: " << error.what() << "\n";
      status = kExitFailure;
    }
  };
  if (!markdown_path.empty()) {
    write(
        [&] { write_output_file(markdown_path, markdown, OutputOptions("--markdown", nullptr)); });
  }
  if (!csv_path.empty()) {
    write([&] {
      append_to_output_file(csv_path, csv_header, csv_rows, OutputOptions("--csv", nullptr));
    });
  }
  return status;
}

int run_benchmark(int argc, char** argv, const std::vector<Implementation>& implementations,
                  const std::string& program_name, const std::string& commit, const FrameLoop& loop,
                  ReferenceCheck check) {
  // Each step says what failed where it fails; the guard ends the rest the course's way.
  return guarded_main(program_name, [&] {
    return benchmark_guarded(argc, argv, implementations, program_name, commit, loop, check);
  });
}

}  // namespace gs
