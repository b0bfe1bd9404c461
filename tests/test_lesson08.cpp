// Lesson 08: the program under mpirun, as a user runs it. The exchange alone on a tiny grid
// (every halo row must hold its neighbour's row afterwards), then whole runs with 1, 2 and 3
// ranks (rows that divide and rows that do not) whose frames must equal the reference's, a
// decomposition too fine for its halo refused with its message, the benchmark's CSV, and the
// same on GPU ranks. Then the ranks agreeing and failing together: every refusal before the first
// step (the output path, the room, --halo, ranks started with different arguments) and every
// failure during the run (a write error on the writer rank, a divergence, a signal to one rank,
// Ctrl-C to mpirun) must end every rank with one message and one exit code, no partial file left,
// the previous file kept. Each runs under `timeout`, so that a hang fails instead of blocking.
// mpirun as root is allowed through OpenMPI's environment variables set here, never by changing
// the user's command; oversubscription too (CI has 2 cores, the tests start up to 8 ranks).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "check.hpp"
#include "gs/hdf5_io.hpp"
#include "gs/reference.hpp"
#include "gs/report.hpp"
#include "lesson08_point.hpp"
#include "process.hpp"

namespace {
namespace fs = std::filesystem;

using gs::test::Outcome;

// OpenMPI refuses root and more ranks than cores unless told: these variables, set here, affect
// only this test's commands.
void use_mpi_environment() {
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 1);
  setenv("NCCL_NVLS_ENABLE", "0", 1);
}

// Runs `command` (through the shell, stdout and stderr captured).
Outcome run(const std::string& command) {
  use_mpi_environment();
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

// The lesson's point: the round of the peer exchange (halo_exchange.hpp) keeps its contract in
// every order in which two and three ranks' operations can interleave, six exchanges in a row
// (tests/point/lesson08_point.hpp; the model is tests/judge/round_check.hpp). No GPU
// needed: a GPU run would show a lost or half-seen row once in many runs, if ever.
TEST(Lesson08Point, ThePeerRoundKeepsItsContractInEveryOrder) {
  const std::string trouble = lesson08_point::check_round();
  EXPECT_EQ(trouble, "") << "the round of halo_exchange.hpp breaks the contract: " << trouble;
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

// Each rank writes its own rows of every frame into the one file (--output-by ranks, what GPU
// ranks do by default): 1, 2 and 3 ranks, rows that divide and rows that do not, a random
// starting state; the file read back must hold the reference's frames, and say it is complete.
TEST(Lesson08Runs, EachRankWritingItsOwnRowsMakesTheReferenceFile) {
  const int cols = 41, frames = 5, steps = 6;
  for (const RunCase c :
       {RunCase{1, 37, "reference"}, RunCase{2, 36, "reference"}, RunCase{3, 37, "l02-simd-omp"}}) {
    const fs::path dir = fresh_directory("own_rows_" + std::to_string(c.ranks) + "_" + c.impl);
    const std::string output = (dir / "frames.h5").string();
    const Outcome outcome = run(mpirun(
        c.ranks, "-r " + std::to_string(c.rows) + " -c " + std::to_string(cols) + " -n " +
                     std::to_string(frames) + " -e " + std::to_string(steps) +
                     " --halo 3 --seed 77 --output-by ranks --impl " + c.impl + " -o " + output));
    ASSERT_EQ(outcome.exit_code, 0) << c.ranks << " ranks, " << c.impl << ":\n" << outcome.output;
    EXPECT_NE(outcome.output.find("each rank writes its own rows"), std::string::npos)
        << outcome.output;
    SCOPED_TRACE(std::to_string(c.ranks) + " ranks, " + c.impl);
    gs::Params params;
    params.rows = c.rows;
    params.cols = cols;
    params.seed = 77;
    gs::State state = gs::starting_state(params);
    gs::FrameReader reader(output);
    ASSERT_EQ(reader.info().frames, frames);
    for (int frame = 0; frame < frames; ++frame) {
      gs::reference_advance(state, gs::Rates{}, steps);
      const std::vector<float> v = reader.read_frame(frame);
      EXPECT_TRUE(
          gs::test::fields_match("v", c.rows, cols, v.data(), state.v.data(), gs::test::kTolerance))
          << "frame " << frame;
    }
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

// Found by an attacker: --transport nccl and --edge-first with CPU ranks, and --frames-queued
// outside benchmark, were accepted without a word though they change nothing. Each is said once.
TEST(Lesson08Flags, FlagsWithoutEffectAreWarnedAboutOnce) {
  const std::string cpu_flags = "-r 16 -c 16 -n 1 -e 1 --impl reference --no-output ";
  const Outcome run_outcome =
      run("timeout 120 " + mpirun(2, cpu_flags + "--transport nccl --edge-first --frames-queued"));
  ASSERT_EQ(run_outcome.exit_code, 0) << run_outcome.output;
  for (const std::string warning :
       {"warning: --transport nccl has no effect: the ranks run 'reference' on the CPU",
        "warning: --edge-first has no effect: the ranks run 'reference' on the CPU",
        "warning: --frames-queued has no effect outside benchmark"}) {
    const std::size_t at = run_outcome.output.find(warning);
    EXPECT_NE(at, std::string::npos) << warning << ": " << run_outcome.output;
    EXPECT_EQ(run_outcome.output.find(warning, at + 1), std::string::npos)
        << "said more than once: " << run_outcome.output;
  }
  // Where they do something, nothing is said: --frames-queued in benchmark, no --transport.
  const Outcome quiet =
      run("timeout 120 " + mpirun(1, "benchmark " + cpu_flags + "--frames-queued"));
  ASSERT_EQ(quiet.exit_code, 0) << quiet.output;
  EXPECT_EQ(quiet.output.find("warning"), std::string::npos) << quiet.output;
}

// Found by an attacker: benchmark --csv appended its rows to gs_benchmark's measurement file (two
// schemas in one file). A file whose first line is not this program's header is refused before
// any measurement and left as it was.
TEST(Lesson08Benchmark, ACsvOfAnotherSchemaIsRefusedAndKept) {
  const fs::path dir = fresh_directory("benchmark_csv_schema");
  const std::string path = (dir / "measurements.csv").string();
  const std::string content = std::string(gs::kMeasurementColumns) + "\nreference,00,cpu\n";
  {
    std::ofstream file(path);
    file << content;
  }
  const Outcome refused = run("timeout 120 " + mpirun(1,
                                                      "benchmark -r 16 -c 16 -n 1 -e 1 --impl "
                                                      "reference --csv " +
                                                          path));
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_NE(refused.output.find("refusing to append to --csv '" + path +
                                "': its first line is not this program's header"),
            std::string::npos)
      << refused.output;
  EXPECT_EQ(refused.output.find("one device:"), std::string::npos)
      << "refused before measuring: " << refused.output;
  std::ifstream file(path);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()),
            content);
}

// GPU ranks. One rank: the single-GPU path through the program (also what compute-sanitizer
// checks). Two ranks share GPU 0 when there is only one, exchanging through host memory; NCCL
// needs a GPU per rank.
void gpu_run(int ranks, const std::string& transport, const std::string& extra = "") {
  GS_REQUIRE_GPU();
  const fs::path dir = fresh_directory("gpu_" + std::to_string(ranks) + "_" + transport);
  const std::string output = (dir / "frames.h5").string();
  const Outcome outcome =
      run(mpirun(ranks, "-r 67 -c 131 -n 3 -e 9 --halo 4 --no-fsync --transport " + transport +
                            " -o " + output + " " + extra));
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

// Edge first (--edge-first): the strips' rows, the mailbox and the halos copied back in, on a grid
// whose slabs are just thick enough for the strips (3 x 4 rows), frames of 9 steps (periods of 4
// that straddle the frames).
TEST(Lesson08Gpu, TwoRanksEdgeFirstMatchTheReference) {
  GS_REQUIRE_GPU();
  if (gpu_count() < 2) GTEST_SKIP() << "NCCL needs one GPU per rank; this machine has one";
  if (!built_with_nccl()) GTEST_SKIP() << "this build has no NCCL";
  gpu_run(2, "nccl", "--edge-first");
}

// The peer exchange (each GPU writes its neighbours' halos through CUDA IPC): one GPU per rank
// where there are enough, else ranks sharing GPUs (IPC within one device works the same way,
// the GPU time-slicing the ranks' kernels). 2, 3 and 4 ranks, an odd grid, a random starting
// state, halos from 1 row to deeper than a frame's steps; the run must say it used the peer path.
TEST(Lesson08Gpu, PeerToPeerMatchesTheReferenceOnTwoThreeAndFourRanks) {
  GS_REQUIRE_GPU();
  const int rows = 67, cols = 131, frames = 3, steps = 9;
  const struct {
    int ranks, halo;
  } cases[] = {{2, 1}, {2, 4}, {2, 13}, {3, 2}, {3, 9}, {4, 3}, {4, 5}};
  for (const auto& item : cases) {
    const std::string name =
        std::to_string(item.ranks) + " ranks, halo " + std::to_string(item.halo);
    const fs::path dir =
        fresh_directory("peer_" + std::to_string(item.ranks) + "_" + std::to_string(item.halo));
    const std::string output = (dir / "frames.h5").string();
    const Outcome outcome =
        run("timeout 120 " + mpirun(item.ranks,
                                    "-r 67 -c 131 -n 3 -e 9 --seed 4242 --no-fsync "
                                    "--transport peer --halo " +
                                        std::to_string(item.halo) + " -o " + output));
    ASSERT_EQ(outcome.exit_code, 0) << name << ":\n" << outcome.output;
    // A machine whose GPUs cannot reach each other falls back, saying why: the round is not run.
    const std::size_t refused = outcome.output.find("peer to peer refused");
    if (refused != std::string::npos) {
      GTEST_SKIP() << "the peer exchange cannot run on this machine: "
                   << outcome.output.substr(refused, outcome.output.find('\n', refused) - refused);
    }
    EXPECT_NE(outcome.output.find("exchange: peer to peer"), std::string::npos) << name << ":\n"
                                                                                << outcome.output;
    gs::Params params;
    params.rows = rows;
    params.cols = cols;
    params.seed = 4242;
    gs::State state = gs::starting_state(params);
    gs::FrameReader reader(output);
    ASSERT_EQ(reader.info().frames, frames) << name;
    for (int frame = 0; frame < frames; ++frame) {
      gs::reference_advance(state, gs::Rates{}, steps);
      const std::vector<float> v = reader.read_frame(frame);
      EXPECT_TRUE(
          gs::test::fields_match("v", rows, cols, v.data(), state.v.data(), gs::test::kTolerance))
          << name << ", frame " << frame;
    }
  }
}

// Where the GPUs cannot reach each other (forced here with GS_PEER=off, as a user can), the run
// says why and exchanges through NCCL (or MPI through host memory), with the same frames.
TEST(Lesson08Gpu, PeerRefusedFallsBackAndSaysWhy) {
  GS_REQUIRE_GPU();
  const fs::path dir = fresh_directory("peer_refused");
  const std::string output = (dir / "frames.h5").string();
  const Outcome outcome =
      run("GS_PEER=off timeout 120 " + mpirun(2,
                                              "-r 67 -c 131 -n 3 -e 9 --halo 4 --no-fsync "
                                              "--transport peer -o " +
                                                  output));
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("peer to peer refused (rank 0: GS_PEER=off"), std::string::npos)
      << outcome.output;
  EXPECT_EQ(outcome.output.find("exchange: peer to peer"), std::string::npos) << outcome.output;
  expect_reference_frames(output, 67, 131, 3, 9);
}

TEST(Lesson08Gpu, ExchangeCheckOnGpus) {
  GS_REQUIRE_GPU();
  for (const std::string transport : {"mpi", "peer", "nccl"}) {
    if (transport == "nccl" && (gpu_count() < 2 || !built_with_nccl())) continue;
    const Outcome outcome =
        run(mpirun(2, "exchange-check -r 40 -c 70 --halo 5 --transport " + transport));
    EXPECT_EQ(outcome.exit_code, 0) << transport << ":\n" << outcome.output;
    EXPECT_NE(outcome.output.find("exchange-check: ok"), std::string::npos) << outcome.output;
  }
}

// ---------------------------------------------------------------------------------------------
// The ranks agree and fail together
// ---------------------------------------------------------------------------------------------

// A command that a hang cannot block: `timeout` ends it (exit code 124) after a minute.
std::string within_a_minute(const std::string& command) {
  return "timeout 60 " + command;
}

// The arguments of a small run of the reference on CPU ranks, writing `output`.
std::string small_run(const std::string& output) {
  return "--impl reference -r 16 -c 16 -n 2 -e 8 --no-fsync -o " + output;
}

// An MPMD launch, one rank per entry of `arguments`: mpirun -np 1 PROGRAM A : -np 1 PROGRAM B ...
// (how ranks come to be started with different arguments).
std::string mpmd(const std::vector<std::string>& arguments) {
  std::string command = GS_MPIEXEC;
  for (std::size_t rank = 0; rank < arguments.size(); ++rank) {
    command += std::string(rank > 0 ? " :" : "") + " " + GS_MPIEXEC_NUMPROC_FLAG + " 1 " +
               GS_LESSON_PROGRAM + " " + arguments[rank];
  }
  return command;
}

std::size_t occurrences(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++count;
  }
  return count;
}

std::string contents_of(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// A refusal or a failure: `code` from every rank (so from mpirun), `message` printed once for all
// ranks, and no output (final or partial) at `output`. mpirun adds its own note about the exit
// code; the program's message is what is counted.
void expect_one_verdict(const Outcome& outcome, int code, const std::string& message,
                        const std::string& output) {
  EXPECT_EQ(outcome.exit_code, code) << "(124: timed out, the ranks hung)\n" << outcome.output;
  EXPECT_EQ(occurrences(outcome.output, message), 1u) << "expected once: '" << message << "'\n"
                                                      << outcome.output;
  gs::test::expect_no_output_left(output);
}

// Refusals of the output path, decided by the writer rank before the first step: every rank
// stops with the writer's message and exit code 1 (the same as gray_scott's).
TEST(Lesson08Refusals, OutputInAMissingDirectory) {
  const std::string output = (fresh_directory("missing_dir") / "no_such_dir" / "x.h5").string();
  expect_one_verdict(run(within_a_minute(mpirun(2, small_run(output)))), 1, "does not exist",
                     output);
}

TEST(Lesson08Refusals, OutputIsAFifo) {
  const std::string output = (fresh_directory("fifo") / "fifo.h5").string();
  ASSERT_EQ(::mkfifo(output.c_str(), 0644), 0);
  const Outcome outcome = run(within_a_minute(mpirun(2, small_run(output))));
  EXPECT_EQ(outcome.exit_code, 1) << outcome.output;
  EXPECT_EQ(occurrences(outcome.output, "FIFO"), 1u) << outcome.output;
  EXPECT_TRUE(fs::is_fifo(output)) << "the FIFO must stay";
  EXPECT_TRUE(gs::test::partial_files_of(output).empty());
}

TEST(Lesson08Refusals, OutputIsADirectory) {
  const std::string output = (fresh_directory("directory") / "dir.h5").string();
  fs::create_directory(output);
  const Outcome outcome = run(within_a_minute(mpirun(2, small_run(output))));
  EXPECT_EQ(outcome.exit_code, 1) << outcome.output;
  EXPECT_EQ(occurrences(outcome.output, "is a directory"), 1u) << outcome.output;
  EXPECT_TRUE(fs::is_directory(output));
  EXPECT_TRUE(gs::test::partial_files_of(output).empty());
}

// Root may write into a read-only directory: as root the run is started as the user nobody
// (setpriv), whom the directory's permissions stop.
TEST(Lesson08Refusals, OutputInAnUnwritableDirectory) {
  const fs::path dir = fresh_directory("unwritable");
  const fs::path locked = dir / "locked";
  fs::create_directory(locked);
  fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                              fs::perms::group_exec | fs::perms::others_read |
                              fs::perms::others_exec);
  std::string as_user;
  if (::geteuid() == 0) {
    as_user = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
    if (run(as_user + "test -x " + GS_LESSON_PROGRAM).exit_code != 0) {
      GTEST_SKIP() << "running as root, and the user nobody cannot run " << GS_LESSON_PROGRAM
                   << " here (or there is no setpriv): root itself may write into a read-only "
                      "directory, so this refusal cannot be tested";
    }
  }
  const std::string output = (locked / "x.h5").string();
  expect_one_verdict(run(within_a_minute(as_user + mpirun(2, small_run(output)))), 1,
                     "is not writable", output);
}

TEST(Lesson08Refusals, OutputNameLongerThanNameMax) {
  const fs::path dir = fresh_directory("long_name");
  const std::string output = (dir / (std::string(253, 'a') + ".h5")).string();
  const Outcome outcome = run(within_a_minute(mpirun(2, small_run(output))));
  EXPECT_EQ(outcome.exit_code, 1) << outcome.output;
  EXPECT_EQ(occurrences(outcome.output, "NAME_MAX"), 1u) << outcome.output;
  EXPECT_TRUE(fs::is_empty(dir)) << "nothing may be written";  // (the name itself cannot exist)
}

// 4096 x 4096 cells x 100000 frames: 6.7 TB, more than any test machine's free space; the
// refusal comes from statvfs before any work (nothing is allocated for the grid either).
TEST(Lesson08Refusals, NotEnoughRoomForTheOutput) {
  const std::string output = (fresh_directory("no_room") / "big.h5").string();
  expect_one_verdict(run(within_a_minute(mpirun(
                         2, "--impl reference -r 4096 -c 4096 -n 100000 -e 8 -o " + output))),
                     1, "not enough space", output);
}

// Found by an attacker: benchmark --csv '' measured and wrote no file, --halo 010 was 8 rows. The
// course's value rules (gs::apply_value_rules()) hold here too: usage errors, said once.
TEST(Lesson08Refusals, AnEmptyValueOrAnIntegerNotInBase10IsAUsageError) {
  const std::string output = (fresh_directory("value_rules") / "x.h5").string();
  expect_one_verdict(
      run(within_a_minute(mpirun(2, "benchmark " + small_run(output) + " --csv ''"))), 2,
      "--csv: must not be empty", output);
  expect_one_verdict(run(within_a_minute(mpirun(2, small_run(output) + " --halo 0x2"))), 2,
                     "0x2 is not a whole number written in base 10", output);
}

TEST(Lesson08Refusals, HaloZeroGetsTheCoursesMessage) {
  const std::string output = (fresh_directory("halo_zero") / "x.h5").string();
  const Outcome outcome = run(within_a_minute(mpirun(2, small_run(output) + " --halo 0")));
  expect_one_verdict(outcome, 2, "--halo must be at least 1 (got 0)", output);
  EXPECT_EQ(outcome.output.find("not in range"), std::string::npos) << outcome.output;
}

// Eight ranks, started with one command line each (MPMD): rank 0 with the base arguments, every
// other rank with two flags changed. The refusal names each flag with the ranks of each value
// (changing -e also changes the default --halo, which is the steps of a frame).
TEST(Lesson08Refusals, EveryFlagThatDiffersBetweenRanksIsNamed) {
  const fs::path dir = fresh_directory("mismatch");
  const std::string output = (dir / "x.h5").string();
  const std::string base = small_run(output);
  const std::vector<std::string> changes = {"",
                                            "-r 17 -c 17",
                                            "-n 3 -e 4",
                                            "-k 0.05 -f 0.02",
                                            "-t 0.5 -u 0.09",
                                            "-v 0.04 --halo 2",
                                            "--impl l02-simd-omp -o " + (dir / "y.h5").string(),
                                            "--no-output --transport mpi"};
  std::vector<std::string> arguments;
  for (const std::string& change : changes) arguments.push_back(base + " " + change);
  const Outcome outcome = run(within_a_minute(mpmd(arguments)));
  expect_one_verdict(outcome, 2, "the ranks were given different arguments", output);
  for (const char* line : {"-r/--nbrow: 16 on ranks 0, 2-7; 17 on rank 1",
                           "-c/--nbcol: 16 on ranks 0, 2-7; 17 on rank 1",
                           "-n/--nbimage: 2 on ranks 0-1, 3-7; 3 on rank 2",
                           "-e/--nbextrastep: 8 on ranks 0-1, 3-7; 4 on rank 2",
                           "-k/--killrate: 0.054 on ranks 0-2, 4-7; 0.05 on rank 3",
                           "-f/--feedrate: 0.014 on ranks 0-2, 4-7; 0.02 on rank 3",
                           "-t/--deltat: 1 on ranks 0-3, 5-7; 0.5 on rank 4",
                           "-u/--diffusion-u: 0.1 on ranks 0-3, 5-7; 0.09 on rank 4",
                           "-v/--diffusion-v: 0.05 on ranks 0-4, 6-7; 0.04 on rank 5",
                           "--halo: 8 on ranks 0-1, 3-4, 6-7; 4 on rank 2; 2 on rank 5",
                           "--impl: reference on ranks 0-5, 7; l02-simd-omp on rank 6",
                           "--no-output: not given on ranks 0-6; given on rank 7",
                           "--transport: auto on ranks 0-6; mpi on rank 7"}) {
    EXPECT_NE(outcome.output.find(line), std::string::npos) << line << "\n" << outcome.output;
  }
  EXPECT_NE(outcome.output.find("-o/--output: " + output + " on ranks 0-5, 7; " +
                                (dir / "y.h5").string() + " on rank 6"),
            std::string::npos)
      << outcome.output;
  EXPECT_FALSE(fs::exists(dir / "y.h5"));
}

// A flag only one rank refuses (an unknown flag there): every rank stops with its message.
TEST(Lesson08Refusals, ARankWhoseArgumentsDoNotParseStopsEveryRank) {
  const std::string output = (fresh_directory("parse") / "x.h5").string();
  expect_one_verdict(
      run(within_a_minute(mpmd({small_run(output), small_run(output) + " --no-such-flag"}))), 2,
      "The following argument was not expected: --no-such-flag", output);
}

// A write error on rank 0, the writer, during the run (a file-size limit: write() fails with
// EFBIG, as on a full disk): every rank stops, one message, exit code 1. The limit is set for
// rank 0 alone (an MPMD launch through sh, SIGXFSZ ignored as the programs do), and the ranks
// talk over TCP: the shared-memory transport's own file would exceed the limit too.
TEST(Lesson08Failures, AWriteErrorOnTheWriterRankStopsEveryRank) {
  const std::string output = (fresh_directory("write_error") / "x.h5").string();
  const std::string arguments = "--impl reference -r 128 -c 128 -n 40 -e 1 -o " + output;
  const std::string command =
      std::string(GS_MPIEXEC) + " --mca btl self,tcp --mca btl_tcp_if_include lo " +
      GS_MPIEXEC_NUMPROC_FLAG + " 1 sh -c \"trap '' XFSZ; ulimit -f 256; exec " +
      GS_LESSON_PROGRAM + " " + arguments + "\" : " + GS_MPIEXEC_NUMPROC_FLAG + " 1 " +
      GS_LESSON_PROGRAM + " " + arguments;
  expect_one_verdict(run(within_a_minute(command)), 1, "is the disk full?", output);
}

// The same when each rank writes its own rows (--output-by ranks) and the write that fails is
// rank 1's, not the file's creator's: every rank stops with rank 1's message, rank 0 deletes the
// temporary file, the previous file stays.
TEST(Lesson08Failures, AWriteErrorOnAnotherRankStopsEveryRankAndKeepsThePreviousFile) {
  const std::string output = (fresh_directory("write_error_rank1") / "x.h5").string();
  {
    std::ofstream previous(output);
    previous << "the previous file";
  }
  const std::string arguments =
      "--impl reference -r 128 -c 128 -n 40 -e 1 --output-by ranks -o " + output;
  const std::string command =
      std::string(GS_MPIEXEC) + " --mca btl self,tcp --mca btl_tcp_if_include lo " +
      GS_MPIEXEC_NUMPROC_FLAG + " 1 " + GS_LESSON_PROGRAM + " " + arguments + " : " +
      GS_MPIEXEC_NUMPROC_FLAG + " 1 sh -c \"trap '' XFSZ; ulimit -f 256; exec " +
      GS_LESSON_PROGRAM + " " + arguments + "\"";
  const Outcome outcome = run(within_a_minute(command));
  EXPECT_EQ(outcome.exit_code, 1) << "(124: timed out, the ranks hung)\n" << outcome.output;
  EXPECT_EQ(occurrences(outcome.output, "rank 1: error: writing this rank's rows of frame"), 1u)
      << outcome.output;
  std::ifstream kept(output);
  const std::string text((std::istreambuf_iterator<char>(kept)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "the previous file");
  EXPECT_TRUE(gs::test::partial_files_of(output).empty());
}

// The seed of v lies in rows [7R/16 - 4, R/2 - 4): rows 17-19 of 48, in rank 1's slab of three.
// Rates this large (allowed: they keep dt * max(Du, Dv) stable) make v infinite there within a
// few steps; rank 0 finds it in the frame it gathered, and every rank stops.
TEST(Lesson08Failures, ADivergenceInAnotherRanksSlabStopsEveryRank) {
  const std::string output = (fresh_directory("diverged") / "x.h5").string();
  expect_one_verdict(run(within_a_minute(mpirun(
                         3, "--impl reference -r 48 -c 16 -n 3 -e 4 -f 10 -k 10 -o " + output))),
                     1, "diverged", output);
}

// The process of rank `rank` among mpirun's children (mpirun starts the ranks of its own node;
// Open MPI puts OMPI_COMM_WORLD_RANK in each one's environment), or -1.
pid_t rank_process(pid_t mpirun_pid, int rank) {
  const std::string wanted = "OMPI_COMM_WORLD_RANK=" + std::to_string(rank);
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = contents_of("/proc/" + name + "/stat");
    const std::size_t after_name = stat.rfind(')');
    if (after_name == std::string::npos) continue;
    std::istringstream fields(stat.substr(after_name + 1));
    std::string state;
    long parent = 0;
    fields >> state >> parent;
    if (parent != mpirun_pid) continue;
    std::string environment = contents_of("/proc/" + name + "/environ");
    std::replace(environment.begin(), environment.end(), '\0', '\n');
    if (("\n" + environment).find("\n" + wanted + "\n") != std::string::npos) {
      return static_cast<pid_t>(std::stol(name));
    }
  }
  return -1;
}

// A run long enough to be interrupted: 100000 frames of the reference, a previous output in place.
struct InterruptibleRun {
  explicit InterruptibleRun(const std::string& name)
      : output((fresh_directory(name) / "x.h5").string()) {
    std::ofstream(output) << "the previous output\n";
    use_mpi_environment();
    mpirun_process = std::make_unique<gs::test::Background>(
        mpirun(2, "--impl reference -r 256 -c 256 -n 100000 -e 1 -o " + output));
  }
  bool writing() const {
    return gs::test::Background::wait_until(
        [&] { return !gs::test::partial_files_of(output).empty(); }, 30.0);
  }
  // After the run: the message once, no partial file, the previous output untouched.
  void expect_stopped_cleanly(const std::string& message) const {
    const std::string printed = mpirun_process->output();
    EXPECT_EQ(occurrences(printed, message), 1u) << "expected once: '" << message << "'\n"
                                                 << printed;
    EXPECT_EQ(occurrences(printed, "interrupted by"), 1u) << printed;
    EXPECT_TRUE(gs::test::partial_files_of(output).empty()) << printed;
    EXPECT_EQ(contents_of(output), "the previous output\n");
  }
  std::string output;
  std::unique_ptr<gs::test::Background> mpirun_process;
};

// SIGTERM to rank 1 alone: rank 1 says so at the next round, every rank stops, rank 0 deletes its
// partial file, and every rank (so mpirun) exits with 143.
TEST(Lesson08Signals, SigtermToOneRankStopsEveryRank) {
  InterruptibleRun job("sigterm_rank1");
  ASSERT_TRUE(job.writing()) << job.mpirun_process->output();
  const pid_t rank1 = rank_process(job.mpirun_process->pid(), 1);
  ASSERT_GT(rank1, 0) << "rank 1's process not found among mpirun's children";
  ASSERT_EQ(::kill(rank1, SIGTERM), 0);
  EXPECT_EQ(job.mpirun_process->wait(30.0), 143) << job.mpirun_process->output();
  job.expect_stopped_cleanly("rank 1: interrupted by Terminated (signal 15)");
}

// Ctrl-C in a terminal sends SIGINT to mpirun alone (mpirun starts each rank in a process group of
// its own). Open MPI 4.1's mpirun answers with SIGCONT to every rank at once, SIGTERM a second
// later, SIGKILL a second after that, and exits with 1 whatever the ranks return. The ranks stop
// on the SIGTERM; rank 0 deletes its partial file in the signal handler already, so even the
// SIGKILL could not leave it.
TEST(Lesson08Signals, CtrlCToMpirunStopsEveryRankAndLeavesNoPartialFile) {
  InterruptibleRun job("ctrl_c");
  ASSERT_TRUE(job.writing()) << job.mpirun_process->output();
  job.mpirun_process->signal(SIGINT);
  EXPECT_EQ(job.mpirun_process->wait(30.0), 1) << job.mpirun_process->output();
  job.expect_stopped_cleanly("interrupted by Terminated (signal 15)");
}

}  // namespace
