// Lesson 08: the program under mpirun, as a user runs it. The exchange alone on a tiny grid
// (every halo row must hold its neighbour's row afterwards), then whole runs with 1, 2 and 3
// ranks (rows that divide and rows that do not) whose frames must equal the reference's, a
// decomposition too fine for its halo refused with its message, the benchmark's CSV, and the same
// on GPU ranks.
// mpirun as root is allowed through OpenMPI's environment variables set here, never by changing
// the user's command; oversubscription too (CI has 2 cores, the tests start 3 ranks).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "check.hpp"
#include "gs/hdf5_io.hpp"
#include "gs/reference.hpp"
#include "process.hpp"

namespace {
namespace fs = std::filesystem;

using gs::test::Outcome;

// Runs `command` (through the shell, stdout and stderr captured). OpenMPI refuses root and more
// ranks than cores unless told: these variables, set here, affect only this test's commands.
Outcome run(const std::string& command) {
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 1);
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  return gs::test::run(command);
}

std::string mpirun(int ranks, const std::string& arguments) {
  return std::string(GS_MPIEXEC) + " " + GS_MPIEXEC_NUMPROC_FLAG + " " + std::to_string(ranks) +
         " " + GS_LESSON_PROGRAM + " " + arguments;
}

fs::path fresh_directory(const std::string& name) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("gs_lesson08_" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

int gpu_count() {
  return gs::gpu_status().available ? gs::gpu_status().device_count : 0;
}

// Every frame of `path` against the reference run of the same grid.
void expect_reference_frames(const std::string& path, int rows, int cols, int frames, int steps) {
  gs::FrameReader reader(path);
  ASSERT_EQ(reader.info().frames, frames);
  ASSERT_EQ(reader.info().rows, rows);
  ASSERT_EQ(reader.info().cols, cols);
  gs::State state = gs::initial_state(rows, cols);
  for (int frame = 0; frame < frames; ++frame) {
    gs::reference_advance(state, gs::Rates{}, steps);
    const std::vector<float> v = reader.read_frame(frame);
    EXPECT_TRUE(
        gs::test::fields_match("v", rows, cols, v.data(), state.v.data(), gs::test::kTolerance))
        << "frame " << frame << " of " << path << " (written by " << reader.info().implementation
        << ")";
  }
}

// The exchange alone: tiny grids, CPU ranks with the plain layout (reference) and the padded
// one (lesson 02: rows `pitch` floats apart, a derived MPI datatype).
TEST(Lesson08Exchange, HaloRowsHoldTheNeighboursRows) {
  for (const char* impl : {"reference", "l02-simd-omp"}) {
    for (int ranks : {2, 3}) {
      const Outcome outcome =
          run(mpirun(ranks, std::string("exchange-check -r 11 -c 9 --halo 2 --impl ") + impl));
      EXPECT_EQ(outcome.exit_code, 0) << impl << ", " << ranks << " ranks:\n" << outcome.output;
      EXPECT_NE(outcome.output.find("exchange-check: ok"), std::string::npos) << outcome.output;
    }
  }
}

// Halos above OpenMPI's eager limit (4000 × 4 rows × 4 B = 64 KB per field): an exchange that
// blocks in MPI_Send before posting its receive deadlocks here (at small sizes the library
// buffers the message and hides the mistake). `timeout` turns a deadlock into a failure.
TEST(Lesson08Exchange, LargeHalosDoNotDeadlock) {
  const Outcome outcome =
      run("timeout 120 " + mpirun(2, "exchange-check -r 16 -c 4000 --halo 4 --impl reference"));
  EXPECT_EQ(outcome.exit_code, 0) << "(124: timed out, a deadlock?)\n" << outcome.output;
  EXPECT_NE(outcome.output.find("exchange-check: ok"), std::string::npos) << outcome.output;
}

struct RunCase {
  int ranks;
  int rows;
  const char* impl;
};

// Whole runs: 1, 2 and 3 ranks, rows that divide among them (36) and rows that do not (37);
// halos narrower than a frame (3 steps per exchange, 7 per frame: exchanges inside frames).
TEST(Lesson08Runs, FramesEqualTheReferenceWithOneTwoAndThreeRanks) {
  const int cols = 41, frames = 4, steps = 7;
  for (const RunCase c :
       {RunCase{1, 37, "reference"}, RunCase{2, 36, "reference"}, RunCase{2, 37, "l02-simd-omp"},
        RunCase{3, 37, "reference"}, RunCase{3, 37, "l02-simd-omp"}}) {
    const fs::path dir = fresh_directory("cpu_" + std::to_string(c.ranks) + "_" +
                                         std::to_string(c.rows) + "_" + c.impl);
    const std::string output = (dir / "frames.h5").string();
    const Outcome outcome =
        run(mpirun(c.ranks, "-r " + std::to_string(c.rows) + " -c " + std::to_string(cols) +
                                " -n " + std::to_string(frames) + " -e " + std::to_string(steps) +
                                " --halo 3 --no-fsync --impl " + c.impl + " -o " + output));
    ASSERT_EQ(outcome.exit_code, 0) << c.ranks << " ranks, " << c.impl << ":\n" << outcome.output;
    SCOPED_TRACE(std::to_string(c.ranks) + " ranks, " + std::to_string(c.rows) + " rows, " +
                 c.impl);
    expect_reference_frames(output, c.rows, cols, frames, steps);
  }
}

TEST(Lesson08Runs, SlabsThinnerThanTheHaloAreRefused) {
  const fs::path dir = fresh_directory("too_many_ranks");
  const Outcome outcome =
      run(mpirun(3, "-r 10 -c 9 -n 2 -e 6 --impl reference -o " + (dir / "frames.h5").string()));
  EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
  EXPECT_NE(outcome.output.find("fewer than the halo of 6 rows"), std::string::npos)
      << outcome.output;
  EXPECT_TRUE(fs::is_empty(dir)) << "a refused run must write nothing";
}

// The benchmark's CSV follows common/'s output rules (gs/output_file.hpp): checked before any
// work (a FIFO refused, never opened, so nothing hangs), appended through its link, whole.
TEST(Lesson08Benchmark, TheCsvIsCheckedFirstAndAppendedThroughItsLink) {
  const fs::path dir = fresh_directory("benchmark_csv");
  const std::string fifo = (dir / "fifo.csv").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const std::string benchmark = "benchmark -r 16 -c 16 -n 1 -e 1 --impl reference --csv ";
  const Outcome refused = run("timeout 120 " + mpirun(1, benchmark + fifo));
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_NE(refused.output.find("refusing to write --csv '" + fifo + "': it is a FIFO"),
            std::string::npos)
      << refused.output;
  EXPECT_EQ(refused.output.find("one device:"), std::string::npos)
      << "refused before measuring: " << refused.output;
  fs::create_directories(dir / "data");
  fs::create_symlink(fs::path("data") / "scaling.csv", dir / "latest.csv");
  for (int run_number = 0; run_number < 2; ++run_number) {
    const Outcome outcome = run(mpirun(1, benchmark + (dir / "latest.csv").string()));
    ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  }
  EXPECT_TRUE(fs::is_symlink(dir / "latest.csv"));
  std::ifstream csv(dir / "data" / "scaling.csv");
  std::vector<std::string> lines;
  for (std::string line; std::getline(csv, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u) << "the header once, then one row per run";
  EXPECT_EQ(lines[0].rfind("implementation,scaling,ranks,", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("reference,strong,1,16,16,", 0), 0u) << lines[1];
}

// GPU ranks. One rank: the single-GPU path through the program (also what compute-sanitizer
// checks). Two ranks share GPU 0 when there is only one, exchanging through host memory; NCCL
// needs a GPU per rank.
void gpu_run(int ranks, const std::string& transport) {
  GS_REQUIRE_GPU();
  const fs::path dir = fresh_directory("gpu_" + std::to_string(ranks) + "_" + transport);
  const std::string output = (dir / "frames.h5").string();
  const Outcome outcome =
      run(mpirun(ranks, "-r 67 -c 131 -n 3 -e 9 --halo 4 --no-fsync --transport " + transport +
                            " -o " + output));
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  expect_reference_frames(output, 67, 131, 3, 9);
}

TEST(Lesson08Gpu, OneRankMatchesTheReference) {
  gpu_run(1, "auto");
}

TEST(Lesson08Gpu, TwoRanksThroughHostMemoryMatchTheReference) {
  gpu_run(2, "mpi");
}

// Whether this build of the lesson has NCCL (the program says so when asked for it).
bool built_with_nccl() {
  const Outcome probe = run(mpirun(1, "exchange-check -r 8 -c 8 --halo 1 --transport nccl"));
  return probe.output.find("this build has no NCCL") == std::string::npos;
}

TEST(Lesson08Gpu, TwoRanksThroughNcclMatchTheReference) {
  GS_REQUIRE_GPU();
  if (gpu_count() < 2) GTEST_SKIP() << "NCCL needs one GPU per rank; this machine has one";
  if (!built_with_nccl()) GTEST_SKIP() << "this build has no NCCL";
  gpu_run(2, "nccl");
}

TEST(Lesson08Gpu, ExchangeCheckOnGpus) {
  GS_REQUIRE_GPU();
  for (const std::string transport : {"mpi", "nccl"}) {
    if (transport == "nccl" && (gpu_count() < 2 || !built_with_nccl())) continue;
    const Outcome outcome =
        run(mpirun(2, "exchange-check -r 40 -c 70 --halo 5 --transport " + transport));
    EXPECT_EQ(outcome.exit_code, 0) << transport << ":\n" << outcome.output;
    EXPECT_NE(outcome.output.find("exchange-check: ok"), std::string::npos) << outcome.output;
  }
}

}  // namespace
