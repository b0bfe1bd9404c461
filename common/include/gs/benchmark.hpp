/// @file benchmark.hpp
/// @brief The benchmark every program of the course shares: `gs_benchmark` over every solution,
///        `lessonNN_exercise benchmark` over a learner's own code. Each implementation runs the
///        same steps from the same state, compute only; one markdown table (time, cell-updates/s,
///        speed-up, share of the measured copy bandwidth) and, on request, CSV rows for the charts.
///        Also how every benchmark of the course (lesson 08's, lesson 09's) writes its table and
///        CSV (write_benchmark_files()); how they time a stepper is frame_timer.hpp.
#pragma once

#include <string>
#include <vector>

#include "gs/program.hpp"
#include "gs/reference_check.hpp"
#include "gs/report.hpp"
#include "gs/stepper.hpp"

namespace gs {

/// @brief The whole benchmark program: parses @p argc / @p argv (grid flags, `--impl`, `--skip`,
///        `--baseline`, `--max-seconds`, `--markdown FILE`, `--csv FILE`, `--end-to-end DIR`,
///        `--fsync`, `--no-writeback`, `--resident FILE`), measures the chosen ones of
///        @p implementations, prints the table. Compute only by default; with `--end-to-end DIR`
///        each runs the whole program through @p loop with its output in DIR, beside a raw write
///        of the same bytes to the same directory before and after it (the disk's own speed), and
///        the table gives the ratio. With `--fsync` too, the raw write is made three ways, each
///        durable (write(2) then fsync; writeback per frame then fsync; O_DIRECT), the fastest
///        is the disk's own write, and the share of each file left in the page cache is given.
///        `--resident FILE` only prints how much of FILE is in the page cache. Never
///        throws; returns an ExitCode: kExitUsage for bad flags or when nothing is left to
///        measure; kExitNoGpu when every chosen implementation needs a GPU and none is usable,
///        or when one named by `--impl` does (the table of the others is printed first);
///        kExitFailure when one failed, produced a non-finite state, or the table, `--markdown`
///        or `--csv` could not be written. Ignores SIGXFSZ, as run_program() does.
/// @param argc argument count, as main() received it.
/// @param argv arguments, as main() received them.
/// @param implementations what may be measured, fastest first (the table shows them in the
///        course's order, reversed).
/// @param program_name shown in `--help` and in messages.
/// @param commit the commit the table names (`git describe` at build time).
/// @param loop the frame loop of the end-to-end mode (gs_benchmark: the best one of the build).
/// @param check ReferenceCheck::before_work (the exercise programs): each chosen implementation is
///        checked against the reference on a small grid before anything is timed; the ones that
///        disagree are named first, above the table (and on stderr), and their rows marked
///        "WRONG RESULTS". The exit status is unchanged. Off by default (gs_benchmark).
int run_benchmark(int argc, char** argv, const std::vector<Implementation>& implementations,
                  const std::string& program_name, const std::string& commit,
                  const FrameLoop& loop = synchronous_frame_loop(),
                  ReferenceCheck check = ReferenceCheck::off);

/// @brief Writes the files a benchmark was asked for, through common/'s output rules: @p markdown
///        to @p markdown_path (replaced whole), then @p csv_rows appended to @p csv_path after
///        @p csv_header when the file is new or empty (append_to_output_file(): a file whose
///        first line is another header is refused and kept; the old file stays whole on any
///        failure). An empty path writes nothing. Each failure is said on stderr as
///        "PROGRAM: error: ..." with @p program_name, and the other file is still written.
/// @return kExitSuccess, or kExitFailure when a file could not be written.
int write_benchmark_files(const std::string& program_name, const std::string& markdown_path,
                          const std::string& markdown, const std::string& csv_path,
                          const std::string& csv_rows,
                          const std::string& csv_header = std::string(kMeasurementColumns) + "\n");

}  // namespace gs
