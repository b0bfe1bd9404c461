// Lesson 08's program plumbing (you need not read it for the exercise): program(), the order of
// things on every rank, and its modes: the run, `benchmark` (strong or weak scaling, its table
// row and CSV), `exchange-check` (one exchange on a tiny grid, every row checked) and `protocol`
// (the learner's round of the peer exchange written down, what the grade's judge walks). The
// lesson itself, the slabs and the exchange, is ranks.cpp.
#include <mpi.h>
#include <sched.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <memory>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "agreement.hpp"
#include "follower.hpp"
#include "gs/benchmark.hpp"
#include "gs/frame_timer.hpp"
#include "gs/hdf5_io.hpp"
#include "gs/interrupt.hpp"
#include "gs/lesson.hpp"
#include "gs/main_guard.hpp"
#include "gs/output_file.hpp"
#include "gs/program.hpp"
#include "gs/registry.hpp"
#include "gs/report.hpp"
#include "gs/state.hpp"
#include "gs/timing.hpp"
#include "options.hpp"
#include "ranks.hpp"  // lessons/08_multi_gpu/
#include "session.hpp"

namespace GS_LESSON_NAMESPACE {

namespace {

// The cores this rank's threads may run on (its affinity, as mpirun or Slurm bound it).
int cores_of_this_rank() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  return CPU_COUNT(&set);
}

// benchmark: `count` exchanges in a row, queued, waited for once; the seconds per exchange of the
// slowest rank (a collective: every rank gets it). What one exchange costs, apart from the steps.
double time_exchanges(RankSlab& slab, int count) {
  slab.synchronize();
  MPI_Barrier(MPI_COMM_WORLD);
  gs::Stopwatch clock;
  for (int round = 0; round < count; ++round) slab.exchange();
  slab.synchronize();
  const double mine = clock.seconds() / std::max(1, count);
  double slowest = mine;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

// exchange-check: every rank fills its own rows with value(row, col) = row + col / 1000 (u; -that
// for v) and its halos with NaN, exchanges once, and checks that its own rows are untouched and
// each halo row now holds the neighbour's row of the same global index.
int exchange_check(RankSlab& slab, const Options& options, int rank, int size) {
  const gs::Params& params = options.program.params;
  const HaloPlan& plan = slab.plan();
  const int first = slab_of(params.rows, size, rank).begin - plan.top;  // global row of local 0
  const auto value = [](int row, int col) {
    return static_cast<float>(row) + static_cast<float>(col) / 1000.0f;
  };
  gs::State state(slab.extended_rows(), params.cols);
  for (int row = 0; row < slab.extended_rows(); ++row) {
    const bool halo = row < plan.top || row >= plan.top + plan.rows;
    for (int col = 0; col < params.cols; ++col) {
      state.u[state.index(row, col)] = halo ? std::nanf("") : value(first + row, col);
      state.v[state.index(row, col)] = halo ? std::nanf("") : -value(first + row, col);
    }
  }
  slab.load(state, params.rates);
  if (slab.failed()) throw std::runtime_error(slab.failure());  // before the exchange: no one waits
  slab.exchange();
  slab.synchronize();
  gs::State after;
  slab.whole(after);
  int wrong = 0;
  std::ostringstream first_problem;
  for (int row = 0; row < slab.extended_rows(); ++row) {
    for (int col = 0; col < params.cols; ++col) {
      const float u = after.u[after.index(row, col)];
      const float v = after.v[after.index(row, col)];
      const bool u_wrong = u != value(first + row, col);
      if ((u_wrong || v != -value(first + row, col)) && wrong++ == 0) {
        first_problem << "rank " << rank << ": local row " << row << " (global row " << first + row
                      << "), column " << col << " holds " << (u_wrong ? "u = " : "v = ")
                      << (u_wrong ? u : v) << " after the exchange, expected "
                      << (u_wrong ? value(first + row, col) : -value(first + row, col))
                      << (row < plan.top || row >= plan.top + plan.rows ? " (a halo row)"
                                                                        : " (an own row)");
      }
    }
  }
  if (wrong > 0) std::cerr << "exchange-check: " << first_problem.str() << "\n";
  int all_wrong = 0;
  MPI_Allreduce(&wrong, &all_wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    std::cout << "exchange-check: " << (all_wrong == 0 ? "ok" : "FAILED") << ", " << size
              << " rank(s), halo " << options.halo << " rows, " << all_wrong << " wrong value(s)\n";
  }
  return all_wrong == 0 ? gs::kExitSuccess : gs::kExitFailure;
}

// benchmark, on rank 0 (the other ranks follow `follower`): the same frames on one rank's device
// alone and on all ranks; strong scaling (the grid is shared: efficiency = T1 / (P * TP)) or weak
// (each rank gets the grid given: efficiency = T1 / TP). Compute only; prints the table's row.
int benchmark(const gs::Implementation& implementation, const Options& options, int size,
              Transport transport, bool overlapped, Follower& follower) {
  gs::Params one = options.program.params;  // what the single device computes
  gs::Params all = one;                     // what the ranks compute together
  if (options.weak) all.rows = one.rows * size;
  // Whole lines only: mpirun carries stdout and stderr through separate pipes, so a line begun on
  // one and ended after a row printed on the other would cut that row in two.
  const bool each_frame = !options.frames_queued;
  // The frames of `one` and of `all` (the same frames, on more rows), timed as gs_benchmark times
  // them: every frame waited for (as a run writing its frames waits for each), or queued.
  gs::FrameTiming timing;
  timing.steps = one.total_steps();
  timing.steps_per_frame = one.steps_per_frame;
  timing.wait_each_frame = each_frame;
  timing.interrupted_during = "during the benchmark";
  double single = 0.0;
  {
    auto stepper = implementation.create();
    single =
        gs::time_frames(*stepper, gs::initial_state(one.rows, one.cols), one.rates, timing).seconds;
  }
  std::cerr << "  one device: " << one.rows << " x " << one.cols << ": " << std::fixed
            << std::setprecision(3) << single << " s\n";
  DistributedStepper stepper(follower);
  const double together =
      gs::time_frames(stepper, gs::initial_state(all.rows, all.cols), all.rates, timing).seconds;
  std::cerr << "  " << size << " ranks: " << all.rows << " x " << all.cols << ": " << together
            << " s\n"
            << std::flush;
  const double efficiency = options.weak ? single / together : single / (size * together);
  const char* kind = options.weak ? "weak" : "strong";
  std::cout << "| " << implementation.name << " | " << kind << (each_frame ? "" : ", queued")
            << " | " << size << " | " << all.rows << " x " << all.cols << " | " << options.halo
            << " | " << name_of(transport) << (overlapped ? ", edge first" : "") << " | "
            << std::fixed << std::setprecision(4) << single << " | " << together << " | "
            << std::setprecision(1) << 100.0 * efficiency << " % |\n";
  std::ostringstream row;
  row << implementation.name << "," << kind << "," << size << "," << all.rows << "," << all.cols
      << "," << all.frames << "," << all.steps_per_frame << "," << options.halo << ","
      << key_of(transport) << (overlapped ? "-edge-first" : "") << "," << std::setprecision(6)
      << single << "," << together << "," << efficiency << "," << (each_frame ? "each" : "end")
      << "\n";
  return gs::write_benchmark_files("benchmark", "", "", options.csv, row.str(), kCsvHeader);
}

// Rank 0's frame loop when each rank writes its own rows (slab_output.hpp): the file
// created here with every frame's place allocated, its name, identity and places told to every
// rank, then per frame one round to advance and one to hand every rank's rows to its writer; at
// the end every writer waited for, and the file closed, flushed and renamed here.
gs::RunResult run_writing_own_rows(const gs::Implementation& distributed,
                                   const gs::ProgramOptions& options, Follower& follower) {
  const gs::Params& params = options.params;
  gs::RunResult result;
  result.implementation = distributed.name;
  result.device_name = gs::describe_device(distributed);
  result.params = params;
  result.pipeline =
      "each rank writes its own rows: one writer thread per rank, pwrite into the file's "
      "allocated chunks";
  result.before_clock_seconds = gs::seconds_since_process_start();  // first: the parts add up
  gs::Stopwatch total;
  gs::FrameWriter writer(params.output, params, distributed.name, gs::frame_writer_options(options),
                         gs::FrameLayout::chunks_allocated);
  OutputPlace place{};
  const std::string& temporary = writer.temporary_path();
  if (temporary.size() >= sizeof place.path) {
    throw gs::OutputError("the temporary file's name '" + temporary + "' is longer than " +
                          std::to_string(sizeof place.path - 1) + " bytes");
  }
  std::memcpy(place.path, temporary.c_str(), temporary.size() + 1);
  struct stat status {};
  if (::fstat(writer.descriptor(), &status) != 0) {
    throw gs::OutputError("cannot read what '" + temporary + "' is: " + std::strerror(errno));
  }
  place.device = static_cast<std::uint64_t>(status.st_dev);
  place.inode = static_cast<std::uint64_t>(status.st_ino);
  place.writeback = options.fsync && options.writeback ? 1 : 0;
  place.frames = params.frames;
  std::vector<std::int64_t> offsets;
  for (int frame = 0; frame < params.frames; ++frame) offsets.push_back(writer.frame_offset(frame));

  DistributedStepper stepper(follower);
  gs::Stopwatch clock;
  stepper.open_output(place, std::move(offsets));
  stepper.load(gs::starting_state(params), params.rates);
  stepper.synchronize();
  result.startup_seconds = clock.seconds();
  for (int frame = 0; frame < params.frames; ++frame) {
    gs::throw_if_interrupted("before frame " + std::to_string(frame + 1));
    clock.restart();
    stepper.advance(params.steps_per_frame);  // queued on the GPUs: its wait is in the copy
    result.compute_seconds += clock.seconds();
    result.steps += params.steps_per_frame;
    clock.restart();
    stepper.write_own(frame);  // every rank: its rows fetched, handed to its writer
    result.copy_seconds += clock.seconds();
  }
  clock.restart();
  stepper.close_output();
  result.wait_seconds = follower.slot_wait_seconds();
  result.waits = follower.slot_waits();
  result.write_seconds = follower.write_seconds();  // rank 0's writer thread
  writer.mark_written_elsewhere();
  gs::commit_frames(writer, options.fsync, result);
  result.writeback = follower.writeback();  // rank 0's writer (every rank does the same)
  result.seconds = total.seconds();
  return result;
}

}  // namespace

// The ranks go through the same steps, each ending in a collective, so that whatever one rank
// concludes, every rank reaches the same next step: (1) the command line, (2) the same arguments
// on every rank, (3) every check that can refuse, (4) the same implementation, (5) the devices and
// the slabs, then the run, whose rounds carry every rank's reason to stop, and (6) the final
// verdict. A refusal or a failure anywhere ends every rank with the same message (printed once,
// by rank 0) and the same exit code.
int program(int argc, char** argv, const char* program_name) {
  // `protocol`: the round of halo_exchange.hpp written down for blocks that have finished 0 to 7
  // rounds, one line each (no MPI, no GPU): gs_judge walks them on its model of the ranks.
  if (argc == 2 && std::string(argv[1]) == "protocol") {
    std::cout << recorded_rounds(8) << std::flush;
    return std::cout ? gs::kExitSuccess : gs::kExitFailure;
  }
  MpiSession mpi(argc, argv);
  const int rank = mpi.rank();
  const int size = mpi.size();
  const std::string name = program_name;
  // Signals are caught on every rank from here on (the first one is noted, a second one ends the
  // rank at once): a rank that caught one says so at the next round, and all stop together. The
  // first one already deletes the partial output file: mpirun answers Ctrl-C with SIGTERM to every
  // rank and SIGKILL a second later, which a rank busy writing a large frame may not outlive.
  gs::InterruptGuard signals;
  gs::delete_partial_on_first_signal(true);

  // (1) The command line: a rank whose words do not parse stops every rank.
  const gs::FrameLoop loop = gs::best_frame_loop();
  Options options;
  CLI::App app{
      "Gray-Scott School, lesson 08: the grid in slabs of rows over MPI ranks (one GPU "
      "each), halos exchanged every --halo steps. Run it under mpirun.",
      name};
  add_flags(app, options, loop);
  Verdict verdict = agree(parse(argc, argv, app, options), rank, size);
  if (verdict.stop) return conclude(verdict, rank);

  // (2) The same arguments on every rank: an MPMD launch (mpirun -np 1 A : -np 1 B) may differ.
  const std::string differing = differing_arguments(arguments_of(options, app), size);
  if (!differing.empty()) {
    const std::string message =
        ": error: the ranks were given different arguments; every rank must get the same:\n";
    return conclude(stop_with(gs::kExitUsage, name + message + differing), rank);
  }

  // (3) Everything a rank can refuse before any work.
  static const std::vector<gs::Implementation> all = gs::all_implementations();
  const gs::Implementation* chosen = nullptr;
  Transport transport = Transport::host;
  verdict =
      agree(check_before_the_run(options, all, name, rank, size, chosen, transport), rank, size);
  if (verdict.stop) return conclude(verdict, rank);

  // (4) The same implementation on every rank (without --impl each picks the fastest it can run:
  // a rank without a GPU would pick another).
  const std::string other_choice = differing_arguments(
      {{"the implementation (--impl, default: the fastest usable on the rank)", chosen->name}},
      size);
  if (!other_choice.empty()) {
    const std::string message =
        ": error: the ranks would run different implementations; choose one with --impl:\n";
    return conclude(stop_with(gs::kExitUsage, name + message + other_choice), rank);
  }
  // Flags that have no effect on this run are said once (every rank has the same ones).
  if (rank == 0) std::cerr << warnings_of(options, *chosen, name) << std::flush;

  // (5) Each rank's device and slab (its stepper, its memory), then the ranks' connection.
  // NVLink multicast stays off: point-to-point transfers do not need it, and on shared machines
  // a program that uses it can disturb others (the variable is honoured if set otherwise).
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  const gs::Params& params = options.program.params;
  const int rows = options.mode == "benchmark" && options.weak ? params.rows * size : params.rows;
  const Decomposition decomposition(rows, params.cols, size, options.halo);
  const std::string rank_prefix = name + ": rank " + std::to_string(rank) + ": ";
  std::unique_ptr<RankSlab> slab;
  std::string where = "CPU";
  // What this rank cannot do is its own failure (named with the rank), except a refusal of the
  // implementation (std::invalid_argument: the same on every rank, a usage error).
  gs::GuardWords device_words;
  device_words.failure_on_own_line = false;
  device_words.failure_source = "rank " + std::to_string(rank) + ": ";
  device_words.out_of_memory_for = [&] {
    return "its slab of " + std::to_string(rows / size) + " x " + std::to_string(params.cols) +
           " cells";
  };
  const gs::Ending device = gs::guarded_ending(
      name,
      [&]() -> int {
        try {
          if (chosen->device == gs::Device::gpu) where = choose_gpu(mpi.local_rank());
          slab = std::make_unique<RankSlab>(*chosen, decomposition.plan(rank), transport,
                                            options.edge_first && options.mode != "exchange-check");
        } catch (const std::invalid_argument& error) {
          throw gs::Refusal{gs::kExitUsage, error.what()};
        }
        return gs::kExitSuccess;
      },
      device_words);
  verdict = agree(verdict_of(device), rank, size);
  if (verdict.stop) return conclude(verdict, rank);
  std::pair<double, double> set_up{0.0, 0.0};
  double exchange_alone = 0.0;
  constexpr int kTimedExchanges = 200;
  try {
    set_up =
        slab->connect();  // collectives of their own: a rank failing in them cannot be waited for
    transport = slab->transport();  // peer falls back where the GPUs cannot reach each other
    if (options.mode == "benchmark") exchange_alone = time_exchanges(*slab, kTimedExchanges);
  } catch (const std::exception& error) {
    abort_every_rank(rank_prefix + "error: " + error.what() + "\n");
  }

  char host[256] = {};
  int host_length = 0;
  MPI_Get_processor_name(host, &host_length);
  const int cores = cores_of_this_rank();
  print_in_rank_order("rank " + std::to_string(rank) + " of " + std::to_string(size) + " on " +
                          std::string(host, static_cast<std::size_t>(host_length)) + ": " + where +
                          ", may run on " + std::to_string(cores) +
                          (cores == 1 ? " core" : " cores"),
                      rank, size);
  // The slowest rank's set-up is the run's: what every rank waited for before the first step.
  double slowest[2] = {0.0, 0.0};
  MPI_Reduce(&set_up.first, &slowest[0], 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&set_up.second, &slowest[1], 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  int fewest_cores = cores;
  MPI_Allreduce(&cores, &fewest_cores, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) {
    std::cerr << "slabs of " << rows / size << "-" << (rows + size - 1) / size << " rows, halo "
              << options.halo << " rows (one exchange every " << options.halo << " steps), "
              << chosen->name << " on every rank, exchange: " << name_of(transport)
              << (slab->overlapped()
                      ? ", behind the compute (edge first)"
                      : ", between the steps" + (slab->overlap_note().empty()
                                                     ? std::string()
                                                     : " (" + slab->overlap_note() + ")"))
              << "; " << cuda_awareness() << "\n";
    std::cerr << std::fixed << std::setprecision(3) << "set-up, before any timed step: "
              << (transport == Transport::nccl   ? "NCCL communicator "
                  : transport == Transport::peer ? "mailboxes mapped "
                                                 : "connections ")
              << slowest[0] << " s, first exchanges " << slowest[1] << " s\n"
              << std::defaultfloat;
    if (!slab->transport_note().empty()) {
      std::cerr << "peer to peer refused (" << slab->transport_note()
                << "): the ranks exchange through " << name_of(transport) << "\n";
    }
    if (options.mode == "benchmark") {
      std::cerr << std::fixed << std::setprecision(1) << "exchange alone: " << exchange_alone * 1e6
                << " us each (" << kTimedExchanges
                << " in a row, queued, both fields; the slowest rank)\n"
                << std::defaultfloat;
    }
    if (fewest_cores < 2 && size > 1 && chosen->device == gs::Device::gpu) {
      std::cerr << "warning: a rank may run on one core only (mpirun binds each rank to a core "
                   "when it starts two): the rank's own thread and the threads NCCL and CUDA "
                   "start then share it, and every exchange waits for them. Start the ranks with "
                   "`mpirun --bind-to none` (or give each rank several cores: `--map-by "
                   "slot:PE=4`, Slurm's --cpus-per-task).\n";
    }
  }

  if (options.mode == "exchange-check") {
    try {
      return exchange_check(*slab, options, rank, size);
    } catch (const std::exception& error) {
      abort_every_rank(rank_prefix + "exchange-check: error: " + error.what() + "\n");
    }
  }

  // The run (or the benchmark): rank 0 leads, the others follow its commands.
  Follower follower(*slab, decomposition, rank);
  if (rank != 0) {
    try {
      verdict = follower.follow(name);
    } catch (const std::exception& error) {
      abort_every_rank(rank_prefix + "error: " + error.what() +
                       " (in a step every rank takes together: ending every rank)\n");
    }
    return conclude(agree(verdict, rank, size), rank);  // (6)
  }
  // Rank 0's ending, worded as every program's (gs::guarded_ending()), agreed with the others'.
  gs::GuardWords words;
  words.after_interruption = "; no output file was left";
  words.out_of_memory_for = [&] {
    return "a " + std::to_string(params.rows) + " x " + std::to_string(params.cols) + " grid";
  };
  words.out_of_memory_on_own_line = true;
  words.pending_signal_explains_failure = true;
  const Verdict mine = verdict_of(gs::guarded_ending(
      name,
      [&]() -> int {
        try {
          int code = gs::kExitSuccess;
          if (options.mode == "benchmark") {
            std::cout
                << "| implementation | scaling | ranks | grid | halo | exchange | one device s | "
                   "all ranks s | efficiency |\n|---|---|---:|---|---:|---|---:|---:|---:|\n";
            code = benchmark(*chosen, options, size, transport, slab->overlapped(), follower);
          } else {
            gs::Implementation distributed = *chosen;
            distributed.name = "l08-slabs(" + chosen->name + ")x" + std::to_string(size);
            distributed.create = [&follower] {
              return std::make_unique<DistributedStepper>(follower);
            };
            const gs::RunResult result =
                options.program.write_output && ranks_write_own_rows(options, *chosen)
                    ? run_writing_own_rows(distributed, options.program, follower)
                    : loop.run(distributed, options.program);
            std::ostream& report = options.program.json ? std::cerr : std::cout;
            gs::print_report(report, result);
            if (options.program.json) gs::print_json(std::cout, result);
          }
          std::cout.flush();
          if (!std::cout && code == gs::kExitSuccess) {
            throw gs::Refusal{gs::kExitFailure, "cannot write to standard output"};
          }
          return code;  // a failed benchmark() said why
        } catch (const RanksStopped&) {
          // Another rank stopped the run: its verdict says why. The frame loop, unwinding, deleted
          // the partial file.
          return gs::kExitSuccess;
        }
      },
      words));
  if (follower.broken()) abort_every_rank(mine.text);
  follower.finish();
  return conclude(agree(mine, rank, size), rank);  // (6)
}

}  // namespace GS_LESSON_NAMESPACE
