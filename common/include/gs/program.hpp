/// @file program.hpp
/// @brief The program every lesson and the main program share: the course's flags, the frame
///        loop, the HDF5 output, the report. A lesson supplies only its implementations.
#pragma once

#include <string>
#include <vector>

#include "gs/params.hpp"
#include "gs/stepper.hpp"
#include "gs/timing.hpp"

namespace gs {

/// @brief Exit codes of every program (documented in the README).
enum ExitCode : int {
  kExitSuccess = 0,       ///< The run finished and its output (if any) is complete.
  kExitFailure = 1,       ///< The run failed: output error, divergence, a CUDA error.
  kExitUsage = 2,         ///< Bad flags or parameters; nothing was computed.
  kExitNoGpu = 3,         ///< The implementation needs a GPU and none is usable.
  kExitInterrupted = 130  ///< SIGINT or SIGTERM; the partial output was deleted.
};

/// @brief What the command line asked for beyond the simulation parameters.
struct ProgramOptions {
  Params params;               ///< The simulation parameters.
  bool write_output = true;    ///< False with `--no-output`: compute only.
  bool json = false;           ///< `--json`: one line of JSON on stdout at the end.
  bool progress = false;       ///< `--progress`: the progress line even when not on a terminal.
  bool list = false;           ///< `--list`: print the implementations and exit.
  bool device_report = false;  ///< `--device`: print the GPU's device report and exit.
  std::string implementation;  ///< `--impl`: which implementation; empty means the default.
};

/// @brief Thrown when a run is stopped by SIGINT or SIGTERM.
class Interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// @brief Thrown when the state stops being finite (an unstable choice of rates).
class Diverged : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// @brief Runs @p implementation with @p options: initial state, frames, output, timing.
///        Throws OutputError, Diverged, Interrupted or the implementation's own errors.
RunResult run_simulation(const Implementation& implementation, const ProgramOptions& options);

/// @brief The whole program: parses @p argc / @p argv, picks an implementation from
///        @p implementations (the first usable one unless `--impl` names one), runs it and
///        reports. Never throws; returns an ExitCode.
/// @param argc argument count, as main() received it.
/// @param argv arguments, as main() received them.
/// @param implementations the choices, fastest first; `--list` prints them.
/// @param program_name shown in `--help`.
/// @param description one line under the name in `--help`.
int run_program(int argc, char** argv, const std::vector<Implementation>& implementations,
                const std::string& program_name, const std::string& description);

}  // namespace gs
