/// @file program.hpp
/// @brief The program every lesson and the main program share: the course's flags, choosing an
///        implementation, the frame loop, the HDF5 output, the report and the exit codes. A
///        lesson supplies only its implementations (and lesson 07 a frame loop of its own).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "gs/interrupt.hpp"
#include "gs/params.hpp"
#include "gs/reference_check.hpp"
#include "gs/report.hpp"
#include "gs/stepper.hpp"

namespace CLI {
class App;
class Validator;
}  // namespace CLI

namespace gs {

class FrameWriter;  // gs/hdf5_io.hpp

/// @brief Exit codes of every program (documented in the README).
enum ExitCode : int {
  kExitSuccess = 0,  ///< The run finished and its output (if any) is complete.
  kExitFailure = 1,  ///< The run failed: output error, divergence, a CUDA error.
  kExitUsage = 2,    ///< Bad flags or parameters; nothing was computed.
  kExitNoGpu = 3,    ///< The implementation needs a GPU and none is usable.
  kExitSignal = 128  ///< Stopped by a signal: 128 + its number (130 SIGINT, 143 SIGTERM, 129
                     ///< SIGHUP), as shells report it; the partial output was deleted.
};

/// @brief What the command line asked for beyond the simulation parameters.
struct ProgramOptions {
  Params params;               ///< The simulation parameters.
  bool write_output = true;    ///< False with `--no-output`: compute only.
  bool fsync = true;           ///< False with `--no-fsync`: leave the file in the page cache.
  bool writeback = true;       ///< False with `--no-writeback`: no writeback per frame; the
                               ///< final fsync writes every byte (to compare). Needs fsync.
  bool json = false;           ///< `--json`: one line of JSON on stdout at the end.
  bool progress = false;       ///< `--progress`: the progress line even when not on a terminal.
  bool list = false;           ///< `--list`: print the implementations and exit.
  bool device_report = false;  ///< `--device`: print the GPU's device report and exit.
  std::string implementation;  ///< `--impl`: which implementation; empty means the default.
};

/// @brief How a program gets from an implementation to its output file: the frame loop. common/
///        has the synchronous one (synchronous_frame_loop()); lesson 07 has a pipelined one.
struct FrameLoop {
  /// @brief Adds the loop's own flags to the command line (may be empty).
  std::function<void(CLI::App&)> add_flags;
  /// @brief Runs @p implementation with @p options and returns what it did. Throws OutputError,
  ///        Diverged, Interrupted or the implementation's own errors. The parameters were
  ///        checked by the caller, once, where the user gave them (find_problems(): run_program,
  ///        run_benchmark and lesson 08's ranks check before they call it): the loop does not
  ///        check them again.
  std::function<RunResult(const Implementation&, const ProgramOptions&)> run;
};

/// @brief The options of the run's FrameWriter: its flag `-o`, warnings to @p warnings, and the
///        writeback of each frame as it is written when the run flushes (fsync) and
///        `--no-writeback` was not given. With `--no-fsync` the frames stay in the page cache:
///        the fast mode that promises nothing about the disk does not wait for it either.
OutputOptions frame_writer_options(const ProgramOptions& options,
                                   std::ostream* warnings = &std::cerr);

/// @brief Commits the frames of a run (FrameWriter::commit(), flushed with @p flush_to_disk) and
///        records it in @p result: the flush, the rename and the writeback on lines of their own,
///        the rest of the commit (closing the file) added to the write time, the bytes written.
///        Every frame loop ends its output with it.
void commit_frames(FrameWriter& writer, bool flush_to_disk, RunResult& result);

/// @brief The synchronous frame loop: compute a frame, fetch it, write it, and so on. Throws
///        OutputError, Diverged, Interrupted or the implementation's own errors. @p options'
///        parameters are the caller's to check first (FrameLoop::run).
RunResult run_simulation(const Implementation& implementation, const ProgramOptions& options);

/// @brief run_simulation() as a FrameLoop (no flags of its own).
FrameLoop synchronous_frame_loop();

/// @brief Adds the grid flags `-r`, `-c`, `-n`, `-e` bound to @p params (every program).
void add_grid_flags(CLI::App& app, Params& params);

/// @brief Adds the rate flags `-k`, `-f`, `-t`, `-u`, `-v` bound to @p rates.
void add_rate_flags(CLI::App& app, Rates& rates);

/// @brief The check of a flag that holds a float32 (a rate, a colour scale's end), for CLI11's
///        `->check()`: refuses, before the text is converted, one that is not a number or whose
///        value float32_problem() refuses ("1e39 is too large for float32 ..."), so that no flag
///        turns silently into inf, 0 or a subnormal number. Every rate flag of the course has it.
CLI::Validator float32_number();

/// @brief The rules every value on the course's command lines follows, applied to each option of
///        @p app that takes a value (its subcommands' too) once all are added, before parsing:
///        an empty value is refused, naming the flag (an empty name is no file, no implementation,
///        no directory); an integer is read in base 10 only, whatever its leading zeros (`-r 010`
///        is 10, not octal 8), and one written another way (`0x10`, `1e3`, ` 7`) is refused
///        with a message, where CLI11 alone would read `0x10` as 16. Every program calls it.
void apply_value_rules(CLI::App& app);

/// @brief Whether @p implementation can run here (a CPU one always; a GPU one when a GPU answers).
bool usable(const Implementation& implementation);

/// @brief "CPU (N hardware threads)" or the GPU's name: where @p implementation runs.
std::string describe_device(const Implementation& implementation);

/// @brief The implementation measured faster than the registry's first on a @p rows x @p cols
///        grid on this machine (Implementation::leads_on: lesson 11 on a Hopper GPU), usable and
///        taking the grid, with the reason in @p why; nullptr when none leads. What
///        select_implementation() and lesson 10's module take first by default.
const Implementation* leading_implementation(const std::vector<Implementation>& implementations,
                                             int rows, int cols, std::string& why);

/// @brief Picks the implementation named @p name from @p implementations, or the first usable
///        one that takes a @p rows x @p cols grid when @p name is empty (saying on stderr which
///        ones it passed over because the grid does not fit them, see
///        Implementation::refuses_grid). On failure prints why to stderr (prefixed by
///        @p program_name) and sets @p exit_code (kExitUsage: unknown name, or a named one that
///        refuses the grid; kExitNoGpu).
/// @return the implementation, or nullptr.
const Implementation* select_implementation(const std::vector<Implementation>& implementations,
                                            const std::string& name, int rows, int cols,
                                            const std::string& program_name, int& exit_code);

/// @brief The whole program: parses @p argc / @p argv, picks an implementation from
///        @p implementations (the first usable one unless `--impl` names one), runs it with
///        @p loop and reports. Never throws; returns an ExitCode. Ignores SIGXFSZ, so that a
///        file-size limit (`ulimit -f`) is a failed write it reports, like a full disk.
/// @param argc argument count, as main() received it.
/// @param argv arguments, as main() received them.
/// @param implementations the choices, fastest first; `--list` prints them.
/// @param program_name shown in `--help` and in messages.
/// @param description one line under the name in `--help`.
/// @param loop the frame loop (default: the synchronous one).
/// @param check ReferenceCheck::before_work (the exercise programs): before the run, the chosen
///        implementation is checked against the reference on a small grid
///        (check_against_reference()); when they disagree the program says so on stderr at once
///        and first in its report. Silent when they agree; off by default.
int run_program(int argc, char** argv, const std::vector<Implementation>& implementations,
                const std::string& program_name, const std::string& description,
                const FrameLoop& loop = synchronous_frame_loop(),
                ReferenceCheck check = ReferenceCheck::off);

}  // namespace gs
