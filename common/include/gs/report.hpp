/// @file report.hpp
/// @brief What one run did and how long each part took, and the report every program prints
///        the same way, so that lessons are compared like with like.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "gs/format.hpp"  // si(), which the reports' users also call
#include "gs/output_file.hpp"
#include "gs/params.hpp"

namespace gs {

/// @brief Minimum bytes a step must move per cell: read u and v, write u and v (4 floats).
inline constexpr double kBytesPerCellUpdate = 16.0;

/// @brief What one run did and how long it took. The parts are measured on the thread that
///        drives the run; in a pipelined run (lesson 07) the writing happens on another thread
///        and overlaps the computing, so the parts add up to more than the wall time.
struct RunResult {
  std::string implementation;  ///< Implementation name.
  std::string device_name;     ///< "CPU (N hardware threads)" or the GPU's name.
  std::string pipeline;        ///< How frames reached the file ("synchronous", ...).
  Params params;               ///< The run's parameters.
  std::int64_t steps = 0;      ///< Steps computed.
  double seconds = 0.0;        ///< Wall time of the run on its own clock, start-up included.
  double before_clock_seconds = -1.0;  ///< From the process's start to the run's clock: loading,
                                       ///< the flags, the driver and the device's initialisation
                                       ///< (seconds_since_process_start()); < 0: not measured.
  double process_seconds = -1.0;   ///< From the process's start to the report: the process's wall
                                   ///< time but its exit (freeing, the driver's teardown), set by
                                   ///< run_program() just before the report; < 0: not measured.
  double startup_seconds = 0.0;    ///< Creating the stepper and load(): context, allocation,
                                   ///< upload.
  double compute_seconds = 0.0;    ///< advance() until the state was ready (device waits too).
  double copy_seconds = 0.0;       ///< Frames fetched on the driving thread (synchronous copies).
  double wait_seconds = 0.0;       ///< Driving thread waiting for a free slot of the ring.
  int waits = 0;                   ///< How many times it had to wait.
  double write_seconds = 0.0;      ///< Inside the HDF5 writes (the writer thread's own time),
                                   ///< writeback.wait_seconds included.
  double flush_seconds = 0.0;      ///< fsync of the file and its directory at the end.
  double rename_seconds = 0.0;     ///< The rename over the previous file: the file system frees
                                   ///< the replaced file's blocks inside it.
  bool flushed = false;            ///< Whether the file was flushed to the disk (fsync).
  WritebackStats writeback;        ///< The writeback started per frame (off with --no-fsync or
                                   ///< --no-writeback): how long the writer waited for the disk.
  std::int64_t bytes_written = 0;  ///< Frame bytes written (0 with --no-output).
  bool wrote_output = false;       ///< Whether an output file was produced.
  std::string warning;             ///< Printed first in the report when not empty: the exercise
                                   ///< programs' disagreement with the reference
                                   ///< (disagreement_warning()).

  /// @brief Cell updates per second of compute time.
  double cell_updates_per_second() const;
  /// @brief Seconds the run waited for the disk: for the writeback of earlier frames, and for
  ///        the final flush (0 without output).
  double disk_wait_seconds() const;
};

/// @brief Prints the human-readable report of @p result to @p out. When measured, the time
///        before the run's clock has its own line ("before its clock") and "total" is the
///        process's wall time up to the report ("run" is then the run's own clock); otherwise
///        "total" is the run's clock, as before.
void print_report(std::ostream& out, const RunResult& result);

/// @brief Prints @p result as one line of JSON (implementation, rows, cols, steps, seconds (the
///        run's clock), before_clock_seconds and process_seconds (null when not measured),
///        cell_updates_per_s, bytes_written, every part's seconds, and the writeback's:
///        writeback, writeback_wait_seconds, writeback_start_seconds, writeback_budget_bytes,
///        disk_wait_seconds) to @p out.
void print_json(std::ostream& out, const RunResult& result);

/// @brief The columns of every measurement file of the course (docs/data/*.csv): what
///        gs_benchmark, the lessons' benchmarks and benchmarks/peers/run.sh append and
///        tools/charts.py reads.
inline constexpr const char* kMeasurementColumns =
    "implementation,lesson,device,kind,seconds,cell_updates_per_s,steps_timed,extrapolated,"
    "device_name,date,commit";

/// @brief One row of a measurement file, its fields in kMeasurementColumns' order.
struct MeasurementRow {
  std::string implementation;       ///< The implementation, or what else was timed.
  std::string lesson;               ///< Its lesson ("disk" for a raw write).
  std::string device;               ///< "cpu" or "gpu".
  std::string kind;                 ///< What was timed: "compute", "end-to-end", "sweep", ...
  double seconds = 0.0;             ///< Of the whole run the row stands for.
  double cell_updates_per_s = 0.0;  ///< 0 where no cell was updated.
  std::int64_t steps_timed = 0;     ///< Steps on the clock (fewer when extrapolated).
  bool extrapolated = false;        ///< Timed on fewer steps than the run it stands for.
  std::string device_name;          ///< As it should read in the file (see csv_safe()).
  std::string date;                 ///< today_utc().
  std::string commit;               ///< The commit the measurement names.
};

/// @brief @p row as a line of a measurement file (numbers to 6 significant digits, the newline
///        included), as gs_benchmark, the lessons' benchmarks and gs_sweep write it.
std::string measurement_line(const MeasurementRow& row);

/// @brief @p text with its commas made spaces: a device's name as one field of a CSV row.
std::string csv_safe(std::string text);

/// @brief Appends @p rows (lines of kMeasurementColumns) to the measurement file @p path, after
///        the header line when the file is new or empty, through gs::OutputFile
///        (append_to_output_file(): the old file stays whole on any failure). @p options' flag
///        names the file in messages. Throws OutputError.
void append_measurement_rows(const std::string& path, const std::string& rows,
                             const OutputOptions& options = OutputOptions("--csv"));

/// @brief Room a measurement file needs beside the current one before rows are appended (its
///        current size, copied, and a generous allowance for the rows): for check_outputs().
std::int64_t measurement_file_bytes(const std::string& path);

/// @brief The measurement file @p path as an output of a run, for check_outputs() before any
///        work: its room (measurement_file_bytes()) and its header (kMeasurementColumns), which an
///        existing file must begin with (a file of another schema is refused before measuring).
PlannedOutput planned_measurement_file(const std::string& path);

/// @brief Memory the host has for new allocations (MemAvailable of /proc/meminfo), or -1 when
///        unknown.
std::int64_t host_available_bytes();

/// @brief The CPU's model name as /proc/cpuinfo gives it ("unknown CPU" elsewhere).
std::string cpu_model();

/// @brief The host as a benchmark's heading names it: "MODEL, N hardware threads".
std::string describe_host();

/// @brief Today's date in UTC as YYYY-MM-DD: the date every measurement is labelled with.
std::string today_utc();

}  // namespace gs
