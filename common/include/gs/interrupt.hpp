/// @file interrupt.hpp
/// @brief Stopping a run cleanly on SIGINT (Ctrl-C), SIGTERM or SIGHUP: the first signal is
///        noted and the run stops at the next check (between two batches of steps), deletes its
///        partial outputs and exits with 128 + the signal's number; a second signal exits at once,
///        deleting the partial files first. Also advancing a stepper in batches short enough to
///        check often, whatever `-e` asks for.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gs/stepper.hpp"

namespace gs {

/// @brief Thrown when a run is stopped by a signal (SIGINT, SIGTERM, SIGHUP).
class Interrupted : public std::runtime_error {
 public:
  /// @brief A stop by @p signal_number, with @p message.
  Interrupted(int signal_number, const std::string& message)
      : std::runtime_error(message), signal_number_(signal_number) {}
  /// @brief The signal that stopped the run.
  int signal_number() const { return signal_number_; }

 private:
  int signal_number_;
};

/// @brief While alive, SIGINT, SIGTERM and SIGHUP are caught (the first one is remembered, a
///        second one ends the process at once after deleting the files named by
///        add_partial_output()), and SIGXFSZ is ignored so that exceeding a file-size limit is an
///        error of write() instead of a kill. The previous handlers come back on destruction.
///        Guards nest: only the outermost one installs the handlers (and clears a pending
///        signal) and restores them; the others change nothing.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;             ///< Installs handlers once.
  InterruptGuard& operator=(const InterruptGuard&) = delete;  ///< Installs handlers once.
};

/// @brief The first signal caught since the guard was made, or 0.
int pending_signal();

/// @brief Throws Interrupted if a signal is pending; @p when says where the run stopped
///        (e.g. "before frame 12").
void throw_if_interrupted(const std::string& when);

/// @brief How many files a second signal can delete: every output a run has open at once (its
///        temporary files), with room to spare.
inline constexpr int kMaxPartialOutputs = 16;

/// @brief Adds @p path to the files a second signal deletes before the immediate exit (the
///        temporary files of the outputs being written). Every OutputFile adds its own when it
///        creates it and removes it when it renames or deletes it. Returns false, remembering
///        nothing, when kMaxPartialOutputs are already held or @p path is longer than 4095 bytes
///        (the file is still deleted on an ordinary stop). The signal handler reads these names
///        without allocating or locking.
bool add_partial_output(const std::string& path);

/// @brief Removes @p path (one entry of it) from the files a second signal deletes.
void remove_partial_output(const std::string& path);

/// @brief The files a second signal would delete now.
std::vector<std::string> partial_outputs();

/// @brief With @p enabled, the first signal already deletes the files named by add_partial_output()
///        (from the handler), not only the run's stop at its next check: for a program whose
///        launcher follows its signal with SIGKILL before the run may reach that check (Open MPI's
///        mpirun sends SIGTERM, then SIGKILL a second later), so that the kill leaves no partial
///        file. The run still stops at its next check and reports the signal. Off by default.
void delete_partial_on_first_signal(bool enabled);

/// @brief Cell-updates a first call may do before anything is measured: 2^24, about 0.17 s at
///        10 ns per cell-update (lesson 01's naive loop on a loaded core), far less on anything
///        faster.
inline constexpr std::int64_t kFirstBatchCellUpdates = std::int64_t{1} << 24;

/// @brief The steps of a first call on a grid of @p cells cells, before its speed is measured: 64
///        on small grids (a GPU's frames stay one call), fewer as the grid grows (a power of two,
///        at most kFirstBatchCellUpdates cell-updates), 1 on grids of 2^24 cells and more, so that
///        a signal is seen within about one step's time even on the first call.
int first_batch_steps(std::int64_t cells);

/// @brief Advances a stepper by the steps of one frame in batches, checking for a signal between
///        batches, so that a large `-e` or a large grid still stops within a fraction of a second.
///        A frame of at most first_batch_steps() (64 on small grids; and any frame once frames
///        are known to be quick) is advanced in one call, with no extra synchronisation: GPU
///        launches stay queued. Longer ones are cut into batches of a power-of-two number of
///        steps, sized from the measured speed to take about 0.1 s each; on a large grid the
///        first batch is one step.
class BatchedAdvance {
 public:
  /// @brief Batches for a grid of @p cells cells (0: unknown, a first batch of 64 steps).
  explicit BatchedAdvance(std::int64_t cells = 0) : batch_(first_batch_steps(cells)) {}
  /// @brief Advances @p stepper by @p steps; @p frame names the frame in the Interrupted message.
  ///        Returns whether the stepper was synchronized after its last batch.
  bool advance(Stepper& stepper, int steps, int frame);
  /// @brief Tells how long a whole-frame call took (device waits included), so that the next
  ///        frames are cut into batches when frames are slow.
  void frame_took(int steps, double seconds);

 private:
  void adapt(int steps, double seconds);
  int batch_;  // steps advanced in one call without a check
};

}  // namespace gs
