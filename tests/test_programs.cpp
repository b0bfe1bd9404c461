// The programs end to end, as a user runs them: gray_scott's frames against the reference,
// every bad input refused with its message and no file left, a full disk and an interrupted
// run leaving no file, and the benchmark's exit codes and files. What -o may name and the signals
// are in test_program_output.cpp, the renderer in test_render.cpp.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "check.hpp"
#include "gs/hdf5_io.hpp"
#include "gs/reference.hpp"
#include "gs/report.hpp"
#include "process.hpp"

namespace {
namespace fs = std::filesystem;

using gs::test::expect_no_output_left;
using gs::test::Outcome;
using gs::test::run;

// A path named @p name in a fresh, empty directory of its own (nothing there yet).
std::string fresh(const std::string& name) {
  return gs::test::fresh_directory("programs_" + name) + "/" + name;
}

const std::string kGrayScott = GS_GRAY_SCOTT;

TEST(GrayScott, SmallRunMatchesTheReferenceFrameByFrame) {
  const std::string path = fresh("e2e.h5");
  const Outcome outcome = run(kGrayScott + " -r 96 -c 160 -n 8 -e 32 -o " + path);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("cell-updates/s"), std::string::npos) << outcome.output;
  gs::FrameReader reader(path);
  ASSERT_EQ(reader.info().frames, 8);
  ASSERT_EQ(reader.info().rows, 96);
  ASSERT_EQ(reader.info().cols, 160);
  gs::State state = gs::initial_state(96, 160);
  for (int frame = 0; frame < 8; ++frame) {
    gs::reference_advance(state, gs::Rates{}, 32);
    const std::vector<float> v = reader.read_frame(frame);
    EXPECT_TRUE(
        gs::test::fields_match("v", 96, 160, v.data(), state.v.data(), gs::test::kTolerance))
        << "frame " << frame << " written by " << reader.info().implementation;
  }
}

TEST(GrayScott, JsonPrintsOneLineWithTheRequiredKeys) {
  const Outcome outcome = run(kGrayScott + " -r 33 -c 17 -n 2 -e 3 --no-output --json", true);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  ASSERT_EQ(std::count(outcome.output.begin(), outcome.output.end(), '\n'), 1) << outcome.output;
  for (const char* key : {"\"implementation\":", "\"rows\":33", "\"cols\":17", "\"steps\":6",
                          "\"seconds\":", "\"cell_updates_per_s\":", "\"bytes_written\":0"}) {
    EXPECT_NE(outcome.output.find(key), std::string::npos) << key << " in " << outcome.output;
  }
  EXPECT_EQ(outcome.output.front(), '{');
}

// The number that follows @p label at the start of a line of @p report ("total           "),
// or -1 when no line starts with it.
double report_number(const std::string& report, const std::string& label) {
  for (std::size_t at = report.find(label); at != std::string::npos;
       at = report.find(label, at + 1)) {
    if (at == 0 || report[at - 1] == '\n') return std::stod(report.substr(at + label.size()));
  }
  return -1.0;
}

TEST(GrayScott, TheReportAccountsForTheWholeProcess) {
  // "total" is the process's wall time from its start (before main: loading, then the flags and
  // the device) to the report, "before its clock" what came before the run's own clock, "run"
  // that clock; only the exit after the report is left out. Measured here from outside: the
  // process took at least "total" (to the 0.01 s of /proc/self/stat's start time), and little
  // more (starting sh and the exit).
  const auto start = std::chrono::steady_clock::now();
  const Outcome outcome = run(kGrayScott + " -r 200 -c 200 -n 4 -e 8 --impl reference --no-output");
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  const double before = report_number(outcome.output, "before its clock ");
  const double own = report_number(outcome.output, "run             ");
  const double total = report_number(outcome.output, "total           ");
  ASSERT_GT(before, 0.0) << outcome.output;
  ASSERT_GT(own, 0.0) << outcome.output;
  ASSERT_GT(total, 0.0) << outcome.output;
  EXPECT_GE(total + 0.0015, before + own) << outcome.output;  // 3 decimals each
  EXPECT_LE(total, wall + 0.011) << "measured from outside: " << wall << " s\n" << outcome.output;
  EXPECT_GT(total, wall - 0.5) << "measured from outside: " << wall << " s\n" << outcome.output;
  EXPECT_NE(outcome.output.find("not counted"), std::string::npos) << outcome.output;
}

TEST(GrayScott, JsonHasTheWholeProcessToo) {
  const Outcome outcome =
      run(kGrayScott + " -r 33 -c 17 -n 2 -e 3 --impl reference --no-output --json", true);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  const auto number = [&outcome](const std::string& key) {
    const std::size_t at = outcome.output.find("\"" + key + "\":");
    return at == std::string::npos ? -1.0 : std::stod(outcome.output.substr(at + key.size() + 3));
  };
  const double before = number("before_clock_seconds");
  const double own = number("seconds");
  const double process = number("process_seconds");
  ASSERT_GT(before, 0.0) << outcome.output;
  ASSERT_GT(own, 0.0) << outcome.output;
  EXPECT_GE(process, before + own) << outcome.output;
}

TEST(GrayScott, ListShowsTheReference) {
  const Outcome outcome = run(kGrayScott + " --list");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("reference"), std::string::npos) << outcome.output;
}

struct BadRun {
  const char* name;
  std::string arguments;
  const char* message;
  int exit_code;
};

class GrayScottRefuses : public ::testing::TestWithParam<BadRun> {};

TEST_P(GrayScottRefuses, WithItsMessageAndNoFile) {
  const std::string path = fresh(std::string(GetParam().name) + ".h5");
  const Outcome outcome =
      run(kGrayScott + " -r 40 -c 50 -n 2 -e 2 -o " + path + " " + GetParam().arguments);
  // The flags come after the defaults above: the last value of a repeated flag wins.
  EXPECT_EQ(outcome.exit_code, GetParam().exit_code) << outcome.output;
  EXPECT_NE(outcome.output.find(GetParam().message), std::string::npos) << outcome.output;
  expect_no_output_left(path);
}

INSTANTIATE_TEST_SUITE_P(
    BadInput, GrayScottRefuses,
    ::testing::Values(BadRun{"zero_rows", "-r 0", "-r/--nbrow must be at least 1", 2},
                      BadRun{"zero_cols", "-c 0", "-c/--nbcol must be at least 1", 2},
                      BadRun{"zero_frames", "-n 0", "-n/--nbimage must be at least 1", 2},
                      BadRun{"negative_steps", "-e -1", "-e/--nbextrastep", 2},
                      BadRun{"unstable_dt", "-t 2", "unstable", 2},
                      BadRun{"unstable_du", "-u 0.2", "unstable", 2},
                      BadRun{"zero_feed", "-f 0", "-f/--feedrate", 2},
                      BadRun{"not_a_number", "-r ten", "", 2},
                      BadRun{"unknown_flag", "--frobnicate", "frobnicate", 2},
                      BadRun{"unknown_impl", "--impl nope", "no implementation named 'nope'", 2},
                      BadRun{"diverges", "-f 50 -n 3 -e 20", "diverged at frame", 1},
                      // Rates are float32: what does not convert to a normal float32 is refused
                      // before any work, never run as inf, 0 or a subnormal number.
                      BadRun{"feed_beyond_float32", "-f 1e39",
                             "1e39 is too large for float32 (its magnitude must be at most "
                             "3.40282e+38",
                             2},
                      BadRun{"feed_below_float32", "-f 1e-46",
                             "1e-46 is too small for float32 (its magnitude must be 0 or at least "
                             "1.17549e-38",
                             2},
                      BadRun{"kill_subnormal", "--killrate 1e-40", "--killrate", 2},
                      BadRun{"dt_beyond_double", "-t 1e400", "1e400 is too large for float32", 2},
                      BadRun{"du_nan", "-u nan", "nan is not a finite number", 2},
                      BadRun{"dv_not_a_number", "-v 0.05x", "0.05x is not a number", 2},
                      // Integers are read in base 10 only: CLI11 alone read 0x10 as 16.
                      BadRun{"rows_in_hexadecimal", "-r 0x10",
                             "0x10 is not a whole number written in base 10", 2},
                      BadRun{"steps_in_exponent_form", "-e 1e3",
                             "1e3 is not a whole number written in base 10", 2},
                      // An empty value is refused, naming the flag, as -o "" is.
                      BadRun{"empty_impl", "--impl ''", "--impl: must not be empty", 2},
                      // The frame loop's own flags too (lesson 07's, gray_scott's best loop).
                      BadRun{"empty_timeline", "--timeline ''", "--timeline: must not be empty",
                             2}),
    [](const ::testing::TestParamInfo<BadRun>& param_info) {
      return std::string(param_info.param.name);
    });

// Found by an attacker: `-r 010` ran 8 rows (CLI11 reads integers with strtoll(..., 0), octal for
// a leading 0). Every integer of every program is read in base 10 (gs::apply_value_rules()).
TEST(GrayScott, LeadingZerosAreBase10NotOctal) {
  const std::string path = fresh("leading_zeros.h5");
  const Outcome outcome = run(
      kGrayScott + " -r 010 -c 0011 -n 02 -e +03 --impl reference -o " + path + " --json", true);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("\"rows\":10,"), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("\"cols\":11,"), std::string::npos) << outcome.output;
  gs::FrameReader reader(path);
  EXPECT_EQ(reader.info().rows, 10);
  EXPECT_EQ(reader.info().cols, 11);
  EXPECT_EQ(reader.info().frames, 2);
  EXPECT_EQ(reader.info().params.steps_per_frame, 3);
}

TEST(GrayScott, RefusesAMissingDirectory) {
  const std::string path = fresh("no_such_dir") + "/out.h5";
  const Outcome outcome = run(kGrayScott + " -r 8 -c 8 -n 1 -e 1 -o " + path);
  EXPECT_EQ(outcome.exit_code, 1) << outcome.output;
  EXPECT_NE(outcome.output.find("does not exist"), std::string::npos) << outcome.output;
}

TEST(GrayScott, RefusesADirectoryAsOutput) {
  const std::string path = fresh("a_directory");
  fs::create_directories(path);
  const Outcome outcome = run(kGrayScott + " -r 8 -c 8 -n 1 -e 1 -o " + path);
  EXPECT_EQ(outcome.exit_code, 1) << outcome.output;
  EXPECT_NE(outcome.output.find("is a directory"), std::string::npos) << outcome.output;
}

TEST(GrayScott, RefusesAnUnwritablePath) {
  const Outcome outcome = run(kGrayScott + " -r 8 -c 8 -n 1 -e 1 -o /proc/gs_output.h5");
  EXPECT_EQ(outcome.exit_code, 1) << outcome.output;
  EXPECT_NE(outcome.output.find("/proc/gs_output.h5"), std::string::npos) << outcome.output;
  EXPECT_FALSE(fs::exists("/proc/gs_output.h5"));
}

TEST(GrayScott, FullDiskFailsCleanly) {
  // A file-size limit of 256 KiB makes write() fail with EFBIG, as a full disk does with ENOSPC.
  const std::string path = fresh("full.h5");
  const Outcome outcome = run("sh -c 'ulimit -f 256; exec " + kGrayScott +
                              " -r 128 -c 128 -n 40 -e 1 -o " + path + "'");
  EXPECT_EQ(outcome.exit_code, 1) << outcome.output;
  EXPECT_NE(outcome.output.find("disk full"), std::string::npos) << outcome.output;
  expect_no_output_left(path);
}

TEST(GrayScott, InterruptedRunLeavesNoFile) {
  const std::string path = fresh("interrupted.h5");
  const Outcome outcome = run("sh -c '" + kGrayScott + " -r 256 -c 256 -n 100000 -e 1 -o " + path +
                              " & pid=$!; sleep 1; kill -INT $pid; wait $pid'");
  EXPECT_EQ(outcome.exit_code, 130) << outcome.output;
  EXPECT_NE(outcome.output.find("interrupted"), std::string::npos) << outcome.output;
  expect_no_output_left(path);
}

TEST(GrayScott, GpuImplementationWithoutAGpuIsRefused) {
  if (gs::gpu_status().available) GTEST_SKIP() << "a GPU is present";
  const Outcome list = run(kGrayScott + " --list");
  const std::size_t gpu = list.output.find(" [gpu] ");
  if (gpu == std::string::npos) GTEST_SKIP() << "this build has no GPU implementation";
  const std::size_t line_start = list.output.rfind('\n', gpu) + 1;
  const std::string name = list.output.substr(line_start + 4, gpu - line_start - 4);
  const std::string path = fresh("nogpu.h5");
  const Outcome outcome = run(kGrayScott + " -r 8 -c 8 -n 1 -e 1 -o " + path + " --impl " + name);
  EXPECT_EQ(outcome.exit_code, 3) << outcome.output;
  EXPECT_NE(outcome.output.find("needs a GPU"), std::string::npos) << outcome.output;
  expect_no_output_left(path);
}

TEST(Benchmark, PrintsAMarkdownTable) {
  const Outcome outcome =
      run(std::string(GS_BENCHMARK) + " -r 31 -c 45 -n 2 -e 3 --impl reference");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("| implementation |"), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("| reference |"), std::string::npos) << outcome.output;
}

// The name of a GPU implementation in this build, or "" when it has none.
std::string a_gpu_implementation() {
  const Outcome list = run(kGrayScott + " --list");
  const std::size_t gpu = list.output.find(" [gpu] ");
  if (gpu == std::string::npos) return "";
  const std::size_t line_start = list.output.rfind('\n', gpu) + 1;
  return list.output.substr(line_start + 4, gpu - line_start - 4);
}

TEST(Benchmark, AGpuImplementationWithoutAGpuExits3) {
  if (gs::gpu_status().available) GTEST_SKIP() << "a GPU is present";
  const std::string gpu = a_gpu_implementation();
  if (gpu.empty()) GTEST_SKIP() << "this build has no GPU implementation (configured without CUDA)";
  const std::string benchmark = std::string(GS_BENCHMARK) + " -r 9 -c 11 -n 1 -e 1";
  const Outcome alone = run(benchmark + " --impl " + gpu);
  EXPECT_EQ(alone.exit_code, 3) << alone.output;
  EXPECT_NE(alone.output.find("needs a GPU"), std::string::npos) << alone.output;
  // Named beside a CPU one: the table of the CPU one is printed, and the missing row is an error.
  const Outcome mixed = run(benchmark + " --impl reference," + gpu);
  EXPECT_EQ(mixed.exit_code, 3) << mixed.output;
  EXPECT_NE(mixed.output.find("| reference |"), std::string::npos) << mixed.output;
  EXPECT_NE(mixed.output.find("missing from the table"), std::string::npos) << mixed.output;
}

TEST(Benchmark, NothingLeftToMeasureIsAnError) {
  const Outcome outcome =
      run(std::string(GS_BENCHMARK) + " -r 9 -c 11 -n 1 -e 1 --impl reference --skip reference");
  EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
  EXPECT_NE(outcome.output.find("nothing to measure"), std::string::npos) << outcome.output;
}

TEST(Benchmark, AMarkdownOrCsvFileThatCannotBeWrittenFails) {
  const std::string dir = fresh("benchmark_files");
  fs::create_directories(dir);
  const std::string benchmark =
      std::string(GS_BENCHMARK) + " -r 9 -c 11 -n 1 -e 1 --impl reference";
  const Outcome missing_dir = run(benchmark + " --markdown " + dir + "/no/such/dir/table.md");
  EXPECT_EQ(missing_dir.exit_code, 1) << missing_dir.output;
  EXPECT_NE(missing_dir.output.find("table.md"), std::string::npos) << missing_dir.output;
  // Files under a size limit of 0 blocks: opened fine, every write fails (EFBIG), as on a full
  // disk. The program ignores SIGXFSZ itself, so the failed write is an error, not a kill.
  for (const std::string flag : {"--markdown", "--csv"}) {
    const Outcome full =
        run("sh -c 'ulimit -f 0; exec " + benchmark + " " + flag + " " + dir + "/out'");
    EXPECT_EQ(full.exit_code, 1) << flag << ": " << full.output;
    EXPECT_NE(full.output.find("writing " + flag + " '"), std::string::npos)
        << flag << ": " << full.output;
    EXPECT_NE(full.output.find("File too large"), std::string::npos) << flag << ": " << full.output;
    EXPECT_FALSE(fs::exists(dir + "/out")) << flag << ": nothing incomplete under the final name";
  }
  const Outcome fine = run(benchmark + " --markdown " + dir + "/table.md --csv " + dir + "/t.csv");
  EXPECT_EQ(fine.exit_code, 0) << fine.output;
}

TEST(Benchmark, EndToEndWithFsyncMeasuresTheDisksOwnWriteThreeWaysAndTheResidency) {
  const std::string dir = fresh("end_to_end");
  fs::create_directories(dir);
  const std::string csv = dir + "/rows.csv";
  const Outcome outcome = run(std::string(GS_BENCHMARK) + " -r 64 -c 96 -n 6 -e 1 --impl " +
                              "reference --end-to-end " + dir + " --fsync --csv " + csv);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  for (const char* text :
       {"write(2) a frame at a time, then fsync", "writeback per frame (sync_file_range",
        "O_DIRECT, 4096-byte aligned, then fsync", "(the fastest)", "| wall / disk |",
        "in the page cache after", "of which waiting for the disk"}) {
    EXPECT_NE(outcome.output.find(text), std::string::npos) << text << " in " << outcome.output;
  }
  std::ifstream rows(csv);
  std::string header;
  std::getline(rows, header);
  EXPECT_EQ(header, gs::kMeasurementColumns) << "the schema of the measurement files";
  std::string text((std::istreambuf_iterator<char>(rows)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("reference,"), std::string::npos) << text;
  EXPECT_NE(text.find("\nraw write of the same bytes,disk,cpu,end-to-end-fsync,"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("raw write of the same bytes with writeback per frame,disk,cpu,"),
            std::string::npos)
      << text;
  for (const auto& entry : fs::directory_iterator(dir)) {
    // The CSV and the lock file of its appends (kept by design, output_file.cpp).
    EXPECT_TRUE(entry.path() == fs::path(csv) || entry.path() == fs::path(dir + "/.rows.csv.lock"))
        << "left behind: " << entry.path();
  }
}

TEST(Benchmark, ResidentSaysHowMuchOfAFileIsInThePageCache) {
  const std::string path = fresh("resident.bin");
  std::ofstream(path, std::ios::binary) << std::string(2 * 4096, 'r');
  const Outcome outcome = run(std::string(GS_BENCHMARK) + " --resident " + path);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_NE(outcome.output.find(path + ": 2 of 2 pages in the page cache (100 %)"),
            std::string::npos)
      << outcome.output;
  const Outcome missing = run(std::string(GS_BENCHMARK) + " --resident " + path + ".missing");
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_NE(missing.output.find("cannot open"), std::string::npos) << missing.output;
}

// Found by an attacker: `--max-seconds nan` was accepted and never spent; a budget shorter than one
// frame waited for whole frames (0.5 s with 1000-step frames took 46 s), and the footnote
// rounded it ("budget --max-seconds 0 s").
TEST(Benchmark, MaxSecondsIsAFinitePositiveBudgetThatBoundsTheRun) {
  for (const std::string bad : {"nan", "inf", "0", "-1"}) {
    const Outcome outcome = run(std::string(GS_BENCHMARK) +
                                " -r 9 -c 11 -n 1 -e 1 --impl reference --max-seconds " + bad);
    EXPECT_EQ(outcome.exit_code, 2) << bad << ": " << outcome.output;
    EXPECT_NE(outcome.output.find("--max-seconds"), std::string::npos) << outcome.output;
    EXPECT_EQ(outcome.output.find("running reference"), std::string::npos) << outcome.output;
  }
  // Frames of 20000 steps (several seconds each here), a budget of 0.3 s: a piece of a frame is
  // timed, and the whole run (warm-up included) stays near the budget.
  const auto start = std::chrono::steady_clock::now();
  const Outcome outcome = run(std::string(GS_BENCHMARK) +
                              " -r 256 -c 256 -n 2 -e 20000 --impl l01-naive --max-seconds 0.3");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_LT(seconds, 4.0) << outcome.output;
  EXPECT_NE(outcome.output.find("budget --max-seconds 0.3 s"), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("| ~"), std::string::npos) << "extrapolated: " << outcome.output;
}

// Found by an attacker: an empty value ran as if the flag were not given (--impl '' measured
// every implementation, --csv '' wrote nothing) or failed late; now each is a usage error naming
// the flag, before any measurement.
TEST(Benchmark, AnEmptyValueIsAUsageErrorNamingTheFlag) {
  const std::string benchmark = std::string(GS_BENCHMARK) + " -r 9 -c 11 -n 1 -e 1";
  for (const std::string flag :
       {"--impl", "--csv", "--markdown", "--end-to-end", "--resident", "--skip", "--baseline"}) {
    const Outcome outcome = run(benchmark + " " + flag + " ''");
    EXPECT_EQ(outcome.exit_code, 2) << flag << ": " << outcome.output;
    EXPECT_NE(outcome.output.find(flag + ": must not be empty"), std::string::npos)
        << outcome.output;
    EXPECT_EQ(outcome.output.find("running"), std::string::npos) << outcome.output;
  }
}

// Found by an attacker: `--baseline nosuch` measured, then left every speed-up n/a without a
// word. A name the program does not know is a usage error, before any measurement.
TEST(Benchmark, AnUnknownBaselineIsAUsageErrorNamingTheKnownOnes) {
  const Outcome outcome =
      run(std::string(GS_BENCHMARK) + " -r 9 -c 11 -n 1 -e 1 --impl reference --baseline nosuch");
  EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
  EXPECT_NE(outcome.output.find("--baseline: no implementation named 'nosuch'"), std::string::npos)
      << outcome.output;
  EXPECT_NE(outcome.output.find("reference"), std::string::npos) << "names the known ones";
  EXPECT_NE(outcome.output.find("l01-naive"), std::string::npos) << outcome.output;
  EXPECT_EQ(outcome.output.find("running reference"), std::string::npos) << outcome.output;
  // A known baseline that is not measured still leaves the column n/a, as before.
  const Outcome known = run(std::string(GS_BENCHMARK) +
                            " -r 9 -c 11 -n 1 -e 1 --impl reference --baseline l01-naive");
  EXPECT_EQ(known.exit_code, 0) << known.output;
}

TEST(Benchmark, IntegersAreBase10) {
  const Outcome octal =
      run(std::string(GS_BENCHMARK) + " -r 010 -c 011 -n 01 -e 01 --impl reference");
  EXPECT_EQ(octal.exit_code, 0) << octal.output;
  EXPECT_NE(octal.output.find("10 x 11, 1 frames"), std::string::npos) << octal.output;
  const Outcome hexadecimal =
      run(std::string(GS_BENCHMARK) + " -r 0x10 -c 11 -n 1 -e 1 --impl reference");
  EXPECT_EQ(hexadecimal.exit_code, 2) << hexadecimal.output;
  EXPECT_NE(hexadecimal.output.find("0x10 is not a whole number written in base 10"),
            std::string::npos)
      << hexadecimal.output;
}

// gs_benchmark's files follow common/'s output rules (gs/output_file.hpp).

std::string read_all(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

const std::string kQuickBenchmark =
    std::string(GS_BENCHMARK) + " -r 9 -c 11 -n 1 -e 1 --impl reference";

// Found by an attacker: `gs_benchmark --csv FIFO` (or --markdown) waited for a reader forever.
TEST(BenchmarkOutput, AFifoIsRefusedWithoutHanging) {
  const std::string dir = gs::test::fresh_directory("benchmark_fifo");
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  for (const std::string flag : {"--csv", "--markdown"}) {
    const Outcome outcome = run("timeout 60 " + kQuickBenchmark + " " + flag + " " + fifo);
    EXPECT_EQ(outcome.exit_code, 1) << flag << ": " << outcome.output;
    EXPECT_NE(outcome.output.find("refusing to write " + flag + " '" + fifo + "': it is a FIFO"),
              std::string::npos)
        << outcome.output;
    EXPECT_EQ(outcome.output.find("running reference"), std::string::npos)
        << "refused before measuring: " << outcome.output;
  }
}

// Found by an attacker: --csv appended to an HDF5 file, and to lesson 08's CSV of another schema.
TEST(BenchmarkOutput, ACsvOfAnotherSchemaOrNotACsvIsRefusedBeforeMeasuringAndKept) {
  const std::string dir = gs::test::fresh_directory("benchmark_csv_header");
  const std::string h5 = dir + "/run.h5";
  ASSERT_EQ(run(kGrayScott + " -r 8 -c 8 -n 1 -e 1 --impl reference -o " + h5).exit_code, 0);
  const std::string lesson08 = dir + "/scaling.csv";
  {
    std::ofstream file(lesson08);
    file << "implementation,scaling,ranks,rows,cols,frames,steps_per_frame,halo,exchange,"
            "one_device_s,all_ranks_s,efficiency,wait\nreference,strong,1,16,16,1,1,1,host,"
            "0.1,0.1,1,each\n";
  }
  for (const std::string& path : {h5, lesson08}) {
    const std::string before = read_all(path);
    const Outcome outcome = run(kQuickBenchmark + " --csv " + path);
    EXPECT_EQ(outcome.exit_code, 1) << outcome.output;
    EXPECT_NE(outcome.output.find("refusing to append to --csv '" + path +
                                  "': its first line is not this program's header"),
              std::string::npos)
        << outcome.output;
    EXPECT_EQ(outcome.output.find("running reference"), std::string::npos)
        << "refused before measuring: " << outcome.output;
    EXPECT_EQ(read_all(path), before) << path << " was modified";
  }
}

TEST(BenchmarkOutput, TheCsvIsAppendedThroughItsLinkAndTheMarkdownReplacedWhole) {
  const std::string dir = gs::test::fresh_directory("benchmark_rules");
  fs::create_directories(dir + "/data");
  fs::create_symlink("data/measurements.csv", dir + "/latest.csv");
  ASSERT_EQ(run(kQuickBenchmark + " --csv " + dir + "/latest.csv").exit_code, 0);
  ASSERT_EQ(::chmod((dir + "/data/measurements.csv").c_str(), 0600), 0);
  ASSERT_EQ(
      run(kQuickBenchmark + " --csv " + dir + "/latest.csv --markdown " + dir + "/t.md").exit_code,
      0);
  EXPECT_TRUE(fs::is_symlink(dir + "/latest.csv"));
  const std::string csv = read_all(dir + "/data/measurements.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3) << "the header once, then two rows:\n"
                                                         << csv;
  struct stat status {};
  ASSERT_EQ(::stat((dir + "/data/measurements.csv").c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 07777, 0600u) << "the mode was not kept";
  // Both flags naming one file: refused before measuring, naming both.
  const Outcome same = run(kQuickBenchmark + " --csv " + dir + "/latest.csv --markdown " + dir +
                           "/data/../data/measurements.csv");
  EXPECT_EQ(same.exit_code, 1) << same.output;
  EXPECT_NE(same.output.find("--markdown '" + dir + "/data/../data/measurements.csv' and --csv"),
            std::string::npos)
      << same.output;
  EXPECT_EQ(read_all(dir + "/data/measurements.csv"), csv);
  // A full disk: the previous files stay whole.
  const std::string markdown = read_all(dir + "/t.md");
  const Outcome full = run("sh -c 'ulimit -f 0; exec " + kQuickBenchmark + " --csv " + dir +
                           "/latest.csv --markdown " + dir + "/t.md'");
  EXPECT_EQ(full.exit_code, 1) << full.output;
  EXPECT_EQ(read_all(dir + "/data/measurements.csv"), csv);
  EXPECT_EQ(read_all(dir + "/t.md"), markdown);
  for (const std::string& where : {dir, dir + "/data"}) {
    for (const auto& entry : fs::directory_iterator(where)) {
      EXPECT_EQ(entry.path().filename().string().find(".partial-"), std::string::npos)
          << "temporary left: " << entry.path();
    }
  }
}

}  // namespace
