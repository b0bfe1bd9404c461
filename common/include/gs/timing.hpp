/// @file timing.hpp
/// @brief Wall-clock timing and the progress line of long runs.
#pragma once

#include <chrono>

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

/// @brief Seconds since this process started: from its start time in /proc/self/stat (in clock
///        ticks, 10 ms on Linux: the answer may be up to 0.01 s long), which counts what runs
///        before main() too (loading the program and its libraries); without /proc, since this
///        library's static initialisation, just before main().
double seconds_since_process_start();

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

}  // namespace gs
