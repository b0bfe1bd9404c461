/// @file benchmark.hpp
/// @brief The benchmark every program of the course shares: `gs_benchmark` over every solution,
///        `lessonNN_exercise benchmark` over a learner's own code. Each implementation runs the
///        same steps from the same state, compute only; one markdown table (time, cell-updates/s,
///        speed-up, share of the measured copy bandwidth) and, on request, CSV rows for the charts.
#pragma once

#include <string>
#include <vector>

#include "gs/stepper.hpp"

namespace gs {

/// @brief The whole benchmark program: parses @p argc / @p argv (grid flags, `--impl`, `--skip`,
///        `--baseline`, `--max-seconds`, `--markdown FILE`, `--csv FILE`), measures the chosen
///        ones of @p implementations, prints the table. Never throws; returns an ExitCode:
///        kExitUsage for bad flags or when nothing is left to measure; kExitNoGpu when every
///        chosen implementation needs a GPU and none is usable, or when one named by `--impl`
///        does (the table of the others is printed first); kExitFailure when one failed,
///        produced a non-finite state, or the table, `--markdown` or `--csv` could not be
///        written. Ignores SIGXFSZ, as run_program() does.
/// @param argc argument count, as main() received it.
/// @param argv arguments, as main() received them.
/// @param implementations what may be measured, fastest first (the table shows them in the
///        course's order, reversed).
/// @param program_name shown in `--help` and in messages.
/// @param commit the commit the table names (`git describe` at build time).
int run_benchmark(int argc, char** argv, const std::vector<Implementation>& implementations,
                  const std::string& program_name, const std::string& commit);

}  // namespace gs
