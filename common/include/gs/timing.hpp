/// @file timing.hpp
/// @brief Wall-clock timing, the progress line of long runs, and the final report that every
///        program prints the same way, so that lessons are compared like with like.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>

#include "gs/params.hpp"

namespace gs {

/// @brief Seconds elapsed on the steady clock, which never jumps backwards.
class Stopwatch {
 public:
  Stopwatch() : start_(Clock::now()) {}
  /// @brief Starts again from zero.
  void restart() { start_ = Clock::now(); }
  /// @brief Seconds since construction or the last restart().
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
};

/// @brief Minimum bytes a step must move per cell: read u and v, write u and v (4 floats).
inline constexpr double kBytesPerCellUpdate = 16.0;

/// @brief A progress line on stderr (frames done, rate, ETA), redrawn at most a few times a
///        second, only when enabled (a terminal, or `--progress`).
class ProgressLine {
 public:
  /// @brief A line for @p total_frames frames, drawn only if @p enabled.
  ProgressLine(int total_frames, bool enabled);
  /// @brief Reports that @p frames_done frames are finished.
  void update(int frames_done);
  /// @brief Ends the line (prints the newline) if anything was drawn.
  void finish();

 private:
  int total_frames_;
  bool enabled_;
  bool drawn_ = false;
  Stopwatch clock_;
  double last_draw_ = -1.0;
};

/// @brief What one run did and how long it took.
struct RunResult {
  std::string implementation;      ///< Implementation name.
  std::string device_name;         ///< "CPU (N threads)" or the GPU's name.
  Params params;                   ///< The run's parameters.
  std::int64_t steps = 0;          ///< Steps computed.
  double seconds = 0.0;            ///< Wall time of the whole run (compute + output).
  double compute_seconds = 0.0;    ///< Time in load/advance/fetch (includes device sync).
  double write_seconds = 0.0;      ///< Time inside the HDF5 writer.
  std::int64_t bytes_written = 0;  ///< Frame bytes written (0 with --no-output).
  bool wrote_output = false;       ///< Whether an output file was produced.

  /// @brief Cell updates per second of compute time.
  double cell_updates_per_second() const;
};

/// @brief Prints the human-readable report of @p result to @p out.
void print_report(std::ostream& out, const RunResult& result);

/// @brief Prints @p result as one line of JSON (implementation, rows, cols, steps, seconds,
///        cell_updates_per_s, bytes_written, and a few more fields) to @p out.
void print_json(std::ostream& out, const RunResult& result);

/// @brief Formats a count with an SI prefix and @p unit, e.g. "2.07 G" + "cell-updates/s".
std::string si(double value, const std::string& unit);

}  // namespace gs
