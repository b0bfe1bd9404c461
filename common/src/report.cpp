// The report every program prints. Its numbers are the ones the benchmark document quotes.
#include "gs/report.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <thread>

namespace gs {

double RunResult::cell_updates_per_second() const {
  return compute_seconds > 0.0 ? static_cast<double>(params.cells()) * steps / compute_seconds
                               : 0.0;
}

double RunResult::disk_wait_seconds() const {
  return wrote_output ? writeback.wait_seconds + flush_seconds : 0.0;
}

namespace {

std::string rate_of(double bytes, double seconds) {
  return seconds > 0.0 ? si(bytes / seconds, "B/s") : std::string("-");
}

// "on", or "off" and why: the report's and the JSON's word for the writeback.
std::string writeback_state(const RunResult& result) {
  const WritebackStats& writeback = result.writeback;
  if (!result.wrote_output) return "none (no output)";
  if (writeback.active) return "on";
  if (writeback.requested) return "off (" + writeback.off_because + ")";
  return result.flushed ? "off (--no-writeback: the frames wait in the page cache for the flush)"
                        : "off (--no-fsync)";
}

std::string mebibytes(std::int64_t bytes) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(bytes % (1 << 20) == 0 ? 0 : 1)
       << static_cast<double>(bytes) / (1 << 20) << " MiB";
  return text.str();
}

}  // namespace

void print_report(std::ostream& out, const RunResult& result) {
  const Params& p = result.params;
  const double rate = result.cell_updates_per_second();
  std::ostringstream text;
  text << std::fixed << std::setprecision(3);
  text << result.warning;
  text << "implementation  " << result.implementation << " on " << result.device_name << "\n";
  text << "grid            " << p.rows << " x " << p.cols << ", " << p.frames << " frames x "
       << p.steps_per_frame << " steps = " << result.steps << " steps\n";
  if (result.before_clock_seconds >= 0.0) {
    text << "before its clock " << result.before_clock_seconds
         << " s  (from the process's start: loading, flags, driver and device initialisation)\n";
  }
  text << "start-up        " << result.startup_seconds
       << " s  (stepper, device context, allocation, upload)\n";
  text << "compute         " << result.compute_seconds << " s  ("
       << si(result.compute_seconds > 0 ? result.steps / result.compute_seconds : 0.0, "steps/s")
       << ", " << si(rate, "cell-updates/s") << ", " << si(rate * kBytesPerCellUpdate, "B/s")
       << " at 16 B per cell-update)\n";
  if (result.wrote_output) {
    const double bytes = static_cast<double>(result.bytes_written);
    text << "output          " << p.output << ": " << si(bytes, "B") << ", "
         << (result.pipeline.empty() ? std::string("synchronous") : result.pipeline) << "\n";
    if (result.copy_seconds > 0.0) {
      text << "  copy          " << result.copy_seconds << " s  ("
           << rate_of(bytes, result.copy_seconds)
           << ", frames from the stepper into host memory)\n";
    }
    if (result.waits > 0 || result.wait_seconds > 0.0) {
      text << "  waits         " << result.wait_seconds << " s  (" << result.waits
           << " time(s) the computing thread waited for a free slot)\n";
    }
    const WritebackStats& writeback = result.writeback;
    text << "  write         " << result.write_seconds << " s  ("
         << rate_of(bytes, result.write_seconds) << " into HDF5";
    if (writeback.active) {
      text << ", of which " << writeback.wait_seconds << " s waiting for the disk";
    }
    text << ")\n";
    if (writeback.active) {
      text << "  writeback     per frame, at most " << mebibytes(writeback.budget_bytes)
           << " in flight: " << writeback.ranges << " range(s) started in "
           << writeback.start_seconds << " s, " << writeback.waits << " waited for in "
           << writeback.wait_seconds << " s\n";
    } else if (result.flushed) {
      text << "  writeback     " << writeback_state(result) << "\n";
    }
    if (result.flushed) {
      text << "  flush         " << result.flush_seconds
           << " s  (fsync of the file and directory)\n";
      text << "  disk          " << result.disk_wait_seconds() << " s of the run's "
           << result.seconds << " s wall waiting for the disk (";
      if (writeback.active) {
        text << writeback.wait_seconds << " s for the writeback, " << result.flush_seconds
             << " s for the flush)\n";
      } else {
        text << "the flush)\n";
      }
    } else {
      text << "  flush         not flushed to the disk (--no-fsync)\n";
    }
    if (result.rename_seconds >= 0.01) {
      text << "  rename        " << result.rename_seconds
           << " s  (over the previous file, whose blocks the file system frees meanwhile)\n";
    }
  } else {
    text << "output          none (--no-output)\n";
  }
  const bool whole_process = result.process_seconds >= 0.0;
  text << (whole_process ? "run             " : "total           ") << result.seconds << " s wall";
  if (result.wrote_output && result.seconds > 0.0) {
    text << "  (" << rate_of(static_cast<double>(result.bytes_written), result.seconds)
         << " of output end to end)";
  } else if (whole_process) {
    text << "  (the run's own clock: start-up to the last frame)";
  }
  text << "\n";
  if (whole_process) {
    text << "total           " << result.process_seconds << " s wall  (the process, from its start";
    if (result.before_clock_seconds >= 0.0) {
      const double after = result.process_seconds - result.before_clock_seconds - result.seconds;
      text << ": " << result.before_clock_seconds << " s before its clock, " << result.seconds
           << " s the run, " << std::max(after, 0.0) << " s after it";
    }
    text << "; its exit after this report, the driver's teardown, is not counted)\n";
  }
  out << text.str();
}

std::string measurement_line(const MeasurementRow& row) {
  std::ostringstream line;
  line << row.implementation << "," << row.lesson << "," << row.device << "," << row.kind << ","
       << std::setprecision(6) << row.seconds << "," << row.cell_updates_per_s << ","
       << row.steps_timed << "," << (row.extrapolated ? "true" : "false") << "," << row.device_name
       << "," << row.date << "," << row.commit << "\n";
  return line.str();
}

std::string csv_safe(std::string text) {
  std::replace(text.begin(), text.end(), ',', ' ');
  return text;
}

void append_measurement_rows(const std::string& path, const std::string& rows,
                             const OutputOptions& options) {
  append_to_output_file(path, std::string(kMeasurementColumns) + "\n", rows, options);
}

PlannedOutput planned_measurement_file(const std::string& path) {
  return {path, "--csv", measurement_file_bytes(path), std::string(kMeasurementColumns) + "\n"};
}

std::int64_t measurement_file_bytes(const std::string& path) {
  constexpr std::int64_t kRowsAllowance = 64 * 1024;  // rows are about 150 bytes each
  return appended_file_bytes(path, kRowsAllowance);
}

std::int64_t host_available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      return std::strtoll(line.c_str() + 13, nullptr, 10) * 1024;
    }
  }
  return -1;
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

std::string describe_host() {
  return cpu_model() + ", " + std::to_string(std::thread::hardware_concurrency()) +
         " hardware threads";
}

std::string today_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", &utc);
  return text;
}

void print_json(std::ostream& out, const RunResult& result) {
  // ordered_json keeps the keys in the order written here (nlohmann::json would sort them).
  nlohmann::ordered_json line;
  line["implementation"] = result.implementation;
  line["device"] = result.device_name;
  line["rows"] = result.params.rows;
  line["cols"] = result.params.cols;
  line["frames"] = result.params.frames;
  line["steps"] = result.steps;
  line["seconds"] = result.seconds;
  // Not measured (negative): null.
  const auto measured = [](double seconds) {
    return seconds < 0.0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(seconds);
  };
  line["before_clock_seconds"] = measured(result.before_clock_seconds);
  line["process_seconds"] = measured(result.process_seconds);
  line["startup_seconds"] = result.startup_seconds;
  line["compute_seconds"] = result.compute_seconds;
  line["copy_seconds"] = result.copy_seconds;
  line["wait_seconds"] = result.wait_seconds;
  line["waits"] = result.waits;
  line["write_seconds"] = result.write_seconds;
  line["flush_seconds"] = result.flush_seconds;
  line["rename_seconds"] = result.rename_seconds;
  line["flushed"] = result.flushed;
  line["writeback"] = writeback_state(result);
  line["writeback_budget_bytes"] = result.writeback.budget_bytes;
  line["writeback_start_seconds"] = result.writeback.start_seconds;
  line["writeback_wait_seconds"] = result.writeback.wait_seconds;
  line["disk_wait_seconds"] = result.disk_wait_seconds();
  line["pipeline"] = result.pipeline;
  line["cell_updates_per_s"] = result.cell_updates_per_second();
  line["bytes_written"] = result.bytes_written;
  // One line, no spaces; a name that is not UTF-8 (a GPU's, a frame loop's) is written with
  // U+FFFD in place of its bad bytes rather than refused.
  out << line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n"
      << std::flush;
}

}  // namespace gs
