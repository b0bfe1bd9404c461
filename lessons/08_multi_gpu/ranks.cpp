// Lesson 08 - several GPUs: the grid cut into slabs of rows, one MPI rank (and one GPU) each,
// halos exchanged between neighbours.
//
// Every rank advances its slab with a single-GPU (or CPU) stepper of the earlier lessons: it
// holds its own rows plus `halo` rows of each neighbour, and the stepper treats that extended
// slab as a grid of its own. A step spoils one row at each end of what a rank holds (it does not
// know the rows beyond), so after `halo` steps the halos are spoilt and the rank's own rows are
// still exact: then the neighbours exchange their boundary rows (halo_exchange.hpp, the file you
// edit) and the next `halo` steps can start. One exchange per `halo` steps instead of one per
// step: the same trade as lesson 06's pyramids, more computing (the halo rows, twice) for fewer
// trips (here over NVLink or the network instead of to memory).
//
//   ranks and GPUs   each rank takes the GPU of its node-local rank (MPI_Comm_split_type);
//   the exchange     NCCL send/receive between device buffers, on the stream the rank computes
//                    on; or MPI between host buffers: CPU ranks, and GPU ranks without NCCL,
//                    which stage the rows through pinned host memory (the OpenMPI of the
//                    course's GPU machine is not CUDA-aware: MPI must not be given device
//                    pointers there; the program says what the MPI library reports);
//   the frames       gathered to rank 0 (MPI_Gatherv), which runs the whole distributed run as
//                    one gs::Stepper through the best frame loop of the build (lesson 07's
//                    pipeline): the other ranks follow rank 0's commands (load, advance, fetch);
//   agreeing         every check that can refuse runs on every rank before the first step, and
//                    the ranks agree on its verdict (the lowest rank that refuses decides for
//                    all); then each command of rank 0 travels in a round that also tells every
//                    rank whether some rank must stop (a signal, a failure): the ranks stop
//                    together, and none waits forever for another.
//
// `lesson08_solution` runs the simulation (the course's flags, plus --halo and --transport);
// `lesson08_solution benchmark` measures strong or weak scaling; `exchange-check` tests one
// exchange on a tiny grid.
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // OpenMPI's extensions: MPIX_Query_cuda_support
#endif

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "gs/device_limits.hpp"
#include "gs/gpu.hpp"
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

#if GS_HAVE_CUDA
#include <cuda_runtime.h>

#include "gs/cuda_check.hpp"
#endif
#if GS_HAVE_NCCL
#include <nccl.h>
#endif

namespace {

// What one rank sends and receives in an exchange (halo_exchange.hpp draws it).
struct HaloPlan {
  int up;      // the rank above (holding the rows before ours), or -1
  int down;    // the rank below, or -1
  int rows;    // this rank's own rows
  int cols;    // columns of the grid
  int halo;    // rows exchanged with each neighbour (the steps between two exchanges)
  int top;     // halo rows above the own rows: halo, or 0 for the first rank
  int bottom;  // halo rows below: halo, or 0 for the last rank
};

#if GS_HAVE_NCCL
inline void nccl_check(ncclResult_t status, const char* call, const char* file, int line) {
  if (status == ncclSuccess) return;
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + call +
                           " failed: " + ncclGetErrorString(status));
}
#define GS_NCCL_CHECK(call) nccl_check((call), #call, __FILE__, __LINE__)
#endif

// The exercise: exchange_with_mpi() and exchange_with_nccl(). Angle brackets: the build picks
// lessons/08_multi_gpu/halo_exchange.hpp (your stubs) or the solution's copy.
#include <halo_exchange.hpp>

#if GS_HAVE_CUDA
#include "edge_first.hpp"  // the exchange behind the compute (GPU ranks, NCCL)
#endif

// ---------------------------------------------------------------------------------------------
// The decomposition
// ---------------------------------------------------------------------------------------------

// Rows [begin, end) of the grid.
struct RowRange {
  int begin;
  int end;
  int count() const { return end - begin; }
};

// The rows of `rank` out of `ranks`: as even as can be, the first rows % ranks slabs one taller.
RowRange slab_of(int rows, int ranks, int rank) {
  const int base = rows / ranks;
  const int extra = rows % ranks;
  const int begin = rank * base + std::min(rank, extra);
  return {begin, begin + base + (rank < extra ? 1 : 0)};
}

HaloPlan plan_of(int rows, int cols, int ranks, int rank, int halo) {
  const RowRange own = slab_of(rows, ranks, rank);
  HaloPlan plan{};
  plan.up = rank > 0 ? rank - 1 : -1;
  plan.down = rank + 1 < ranks ? rank + 1 : -1;
  plan.rows = own.count();
  plan.cols = cols;
  plan.halo = halo;
  plan.top = plan.up >= 0 ? halo : 0;
  plan.bottom = plan.down >= 0 ? halo : 0;
  return plan;
}

// Why `ranks` ranks cannot share `rows` rows with halos of `halo` rows, or "" when they can: a
// rank's halo comes from its neighbour's own rows alone, so every slab needs at least `halo`.
std::string decomposition_problem(int rows, int ranks, int halo) {
  const int smallest = rows / ranks;
  if (ranks == 1 || smallest >= halo) return "";
  return std::to_string(rows) + " rows over " + std::to_string(ranks) + " ranks make slabs of " +
         std::to_string(smallest) + " rows, fewer than the halo of " + std::to_string(halo) +
         " rows (--halo, the steps between two exchanges): use at most " +
         std::to_string(std::max(1, rows / halo)) + (rows / halo > 1 ? " ranks" : " rank") +
         " for this grid, or a smaller --halo";
}

// ---------------------------------------------------------------------------------------------
// MPI and the ranks' devices
// ---------------------------------------------------------------------------------------------

class MpiSession {
 public:
  MpiSession(int& argc, char**& argv) {
    // Only the thread that called MPI_Init calls MPI (rank 0's frame loop gathers the frames on
    // its computing thread; its writer thread and OpenMP's threads never do): FUNNELED.
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    if (provided < MPI_THREAD_FUNNELED) {
      std::cerr << "warning: this MPI library offers no MPI_THREAD_FUNNELED; the program uses "
                   "threads besides the one that calls MPI\n";
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    // The ranks of this node: their order on the node picks their GPU.
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank_);
    MPI_Comm_free(&node);
  }
  ~MpiSession() { MPI_Finalize(); }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }

 private:
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
};

// What the MPI library says about device buffers (OpenMPI's extension, where it exists).
std::string cuda_awareness() {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  return std::string("MPI CUDA-aware: built ") + (MPIX_CUDA_AWARE_SUPPORT ? "yes" : "no") +
         ", at run time " + (MPIX_Query_cuda_support() ? "yes" : "no");
#else
  return "MPI CUDA-aware: the library does not say (no MPIX_Query_cuda_support); assume not";
#endif
}

// Prints one line per rank, in rank order, from rank 0.
void print_in_rank_order(const std::string& line, int rank, int size) {
  const int length = static_cast<int>(line.size());
  std::vector<int> lengths(static_cast<std::size_t>(size));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(static_cast<std::size_t>(size), 0);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[static_cast<std::size_t>(r)] = total;
    total += lengths[static_cast<std::size_t>(r)];
  }
  std::vector<char> all(static_cast<std::size_t>(std::max(total, 1)));
  MPI_Gatherv(line.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
              0, MPI_COMM_WORLD);
  if (rank != 0) return;
  for (int r = 0; r < size; ++r) {
    std::cerr << std::string(all.data() + offsets[static_cast<std::size_t>(r)],
                             static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)]))
              << "\n";
  }
}

// The GPU of this rank: the node-local rank modulo the GPUs it sees. Returns the description,
// with the limits the plans follow when GS_DEVICE_LIMITS replaces the device's.
std::string choose_gpu([[maybe_unused]] int local_rank) {
#if GS_HAVE_CUDA
  const int count = gs::gpu_status().available ? gs::gpu_status().device_count : 0;
  if (count == 0) return "no GPU";
  const int device = local_rank % count;
  GS_CUDA_CHECK(cudaSetDevice(device));
  const gs::DeviceLimits& limits = gs::device_limits(device);
  return "GPU " + std::to_string(device) + " of " + std::to_string(count) + " (" +
         limits.describe() + ", bus " + limits.pci_bus + ")";
#else
  return "no GPU (this build has no CUDA)";
#endif
}

// The cores this rank's threads may run on (its affinity, as mpirun or Slurm bound it).
int cores_of_this_rank() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  return CPU_COUNT(&set);
}

enum class Transport { host, staged, nccl };

const char* name_of(Transport transport) {
  switch (transport) {
    case Transport::host:
      return "MPI between host buffers";
    case Transport::staged:
      return "MPI through pinned host buffers (device -> host, MPI, host -> device)";
    case Transport::nccl:
      return "NCCL between device buffers";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------------
// How the ranks agree: one verdict for all, decided together
// ---------------------------------------------------------------------------------------------

// What one rank concluded at a point every rank reaches: go on, or stop with an exit code and a
// message.
struct Verdict {
  bool stop = false;
  int code = gs::kExitSuccess;
  std::string text;        // whole lines; rank 0 prints the agreed one
  bool to_stdout = false;  // --help and --list answer on stdout, errors on stderr
};

Verdict stop_with(int code, std::string text, bool to_stdout = false) {
  return Verdict{true, code, std::move(text), to_stdout};
}

// A rank's ending as gs::guarded_ending() words it (the ladder every program ends with), as the
// verdict the rank brings to the agreement: a success goes on.
Verdict verdict_of(const gs::Ending& ending) {
  if (ending.exit_code == gs::kExitSuccess) return Verdict{};
  return stop_with(ending.exit_code, ending.message);
}

// Every rank's verdict, agreed: the lowest rank that stops decides for all (its exit code and its
// message), or every rank goes on. A collective that every rank calls at the same point whatever
// it concluded, so a rank that refuses never leaves the others waiting in a later collective:
// an MPI_Allreduce finds the deciding rank, which broadcasts its code and message.
Verdict agree(const Verdict& mine, int rank, int size) {
  const int candidate = mine.stop ? rank : size;
  int decider = size;
  MPI_Allreduce(&candidate, &decider, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (decider == size) return Verdict{};
  int header[3] = {mine.code, mine.to_stdout ? 1 : 0, static_cast<int>(mine.text.size())};
  MPI_Bcast(header, 3, MPI_INT, decider, MPI_COMM_WORLD);
  Verdict agreed = mine;
  agreed.stop = true;
  agreed.code = header[0];
  agreed.to_stdout = header[1] != 0;
  agreed.text.resize(static_cast<std::size_t>(header[2]));
  MPI_Bcast(agreed.text.data(), header[2], MPI_CHAR, decider, MPI_COMM_WORLD);
  return agreed;
}

// The end of an agreed verdict: rank 0 prints its message (once for the whole run), every rank
// returns its exit code (mpirun returns that code too: the lowest rank's non-zero one).
int conclude(const Verdict& agreed, int rank) {
  if (!agreed.stop) return gs::kExitSuccess;
  if (rank == 0 && !agreed.text.empty()) {
    (agreed.to_stdout ? std::cout : std::cerr) << agreed.text << std::flush;
  }
  return agreed.code;
}

// The last resort, for a rank that fails inside a step every rank takes together (an exchange, a
// gather), where the others may be waiting for it: no verdict can be agreed there, so it deletes
// its partial outputs, if it writes any, and ends every rank through MPI_Abort (mpirun then ends
// the others and says which rank aborted).
[[noreturn]] void abort_every_rank(const std::string& message) {
  std::cerr << message << std::flush;
  for (const std::string& partial : gs::partial_outputs()) ::unlink(partial.c_str());
  MPI_Abort(MPI_COMM_WORLD, gs::kExitFailure);
  std::abort();  // MPI_Abort does not return
}

// "rank 3", "ranks 0, 2-4".
std::string rank_list(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t last = i;
    while (last + 1 < ranks.size() && ranks[last + 1] == ranks[last] + 1) ++last;
    if (i > 0) text += ", ";
    text += std::to_string(ranks[i]);
    if (last > i) text += "-" + std::to_string(ranks[last]);
    i = last + 1;
  }
  return text;
}

// One flag as a rank understood it: the parsed value, not the words typed ("-n 2" and
// "--nbimage 02" agree).
struct Argument {
  std::string flag;
  std::string value;
};

// Every rank's arguments against every other rank's: one line per flag whose values differ,
// naming each value and the ranks that hold it; "" when all agree. A collective (the arguments of
// every rank gathered to every rank, MPI_Allgatherv), after which every rank holds the same
// answer, so no further agreement is needed.
std::string differing_arguments(const std::vector<Argument>& mine, int size) {
  std::string packed;  // flag NUL value NUL ... (command-line words never hold a NUL)
  for (const Argument& argument : mine) {
    packed += argument.flag;
    packed += '\0';
    packed += argument.value;
    packed += '\0';
  }
  const int length = static_cast<int>(packed.size());
  std::vector<int> lengths(static_cast<std::size_t>(size));
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> offsets(static_cast<std::size_t>(size), 0);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[static_cast<std::size_t>(r)] = total;
    total += lengths[static_cast<std::size_t>(r)];
  }
  std::string all(static_cast<std::size_t>(std::max(total, 1)), '\0');
  MPI_Allgatherv(packed.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                 MPI_CHAR, MPI_COMM_WORLD);

  // flag -> value -> the ranks that hold it; flags in the order of the lowest rank that has them.
  std::vector<std::string> flags;
  std::map<std::string, std::map<std::string, std::vector<int>>> holders;
  for (int r = 0; r < size; ++r) {
    std::size_t at = static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]);
    const std::size_t end = at + static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)]);
    while (at < end) {
      const std::size_t flag_end = all.find('\0', at);
      const std::size_t value_end = all.find('\0', flag_end + 1);
      const std::string flag = all.substr(at, flag_end - at);
      if (holders.find(flag) == holders.end()) flags.push_back(flag);
      holders[flag][all.substr(flag_end + 1, value_end - flag_end - 1)].push_back(r);
      at = value_end + 1;
    }
  }
  std::string lines;
  for (const std::string& flag : flags) {
    const auto& values = holders[flag];
    std::vector<std::pair<std::vector<int>, std::string>> groups;  // by their lowest rank
    std::vector<bool> has(static_cast<std::size_t>(size), false);
    for (const auto& [value, ranks] : values) {
      groups.emplace_back(ranks, value.empty() ? "(empty)" : value);
      for (const int r : ranks) has[static_cast<std::size_t>(r)] = true;
    }
    std::vector<int> without;  // ranks whose program has no such flag (different programs)
    for (int r = 0; r < size; ++r) {
      if (!has[static_cast<std::size_t>(r)]) without.push_back(r);
    }
    if (!without.empty()) groups.emplace_back(without, "(no such flag)");
    if (groups.size() == 1) continue;
    std::sort(groups.begin(), groups.end());
    lines += "  " + flag + ": ";
    for (std::size_t g = 0; g < groups.size(); ++g) {
      lines += (g > 0 ? "; " : "") + groups[g].second + " on " + rank_list(groups[g].first);
    }
    lines += "\n";
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------
// One rank's slab: its stepper and the exchange
// ---------------------------------------------------------------------------------------------

class RankSlab {
 public:
  // Creates this rank's stepper and checks, on this rank alone, that it offers the view of its
  // fields that the exchange needs (std::invalid_argument if not), before any rank starts.
  RankSlab(const gs::Implementation& implementation, const HaloPlan& plan, Transport transport,
           bool overlap)
      : implementation_(implementation),
        plan_(plan),
        transport_(transport),
        overlap_wanted_(overlap),
        stepper_(implementation.create()) {
#if GS_HAVE_CUDA
    if (implementation.device == gs::Device::gpu) {
      // u and v, now and next, of the extended slab: what a single-GPU stepper holds at least.
      gs::require_device_memory(
          "the slab of " + std::to_string(extended_rows()) + " x " + std::to_string(plan.cols) +
              " cells (halos included)",
          std::int64_t{4} * extended_rows() * plan.cols * std::int64_t{sizeof(float)});
    }
#endif
    stepper_->load(gs::State(extended_rows(), plan_.cols), gs::Rates{});
    if (!stepper_->fields().available()) {
      throw std::invalid_argument("'" + implementation.name +
                                  "' offers no view of its fields (Stepper::fields), which the "
                                  "halo exchange needs; choose another with --impl");
    }
  }
  // The ranks' connections for the exchange, a collective of every rank, made once every rank
  // has said that it can start: NCCL's communicator (GPU ranks), then one exchange of each kind
  // the run will make, waited for. NCCL connects a pair of ranks at their first transfer (tenths
  // of a second; the README's Results), MPI its shared-memory or network channels at the first
  // message, and the staged exchange allocates its pinned buffer at the first one: paid here,
  // measured and reported on its own line, never inside the timed frames.
  // Returns the seconds: {communicator, first exchanges}.
  std::pair<double, double> connect() {
    gs::Stopwatch clock;
#if GS_HAVE_NCCL
    if (transport_ == Transport::nccl) init_nccl();
#endif
    const double communicator = clock.seconds();
    clock.restart();
    exchange();
    synchronize();
#if GS_HAVE_NCCL
    if (transport_ == Transport::nccl && overlap_wanted_) {
      // Every rank runs edge first or none does (the transfers of one must meet the same calls on
      // the other side): a slab too thin for the strips on any rank decides for all.
      overlap_note_ = EdgeFirst::problem(plan_);
      const int possible = overlap_note_.empty() ? 1 : 0;
      int everywhere = 0;
      MPI_Allreduce(&possible, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      if (everywhere == 0 && overlap_note_.empty()) {
        overlap_note_ = "another rank's slab is too thin for the strips";
      }
      if (everywhere == 1) {
        try {
          edge_first_ = std::make_unique<EdgeFirst>(plan_, implementation_.create(), nccl_);
          edge_first_->load(gs::Rates{}, stepper_->fields());
          edge_first_->period(stepper_->fields());  // records its graph, NCCL's calls included
          GS_CUDA_CHECK(cudaStreamSynchronize(edge_first_->stream()));
        } catch (const std::invalid_argument& error) {
          overlap_note_ = error.what();
          edge_first_.reset();
        }
      }
    } else if (overlap_wanted_ && transport_ == Transport::staged) {
      overlap_note_ = "edge first needs NCCL";
    }
#else
    if (overlap_wanted_ && transport_ == Transport::staged) overlap_note_ = "edge first needs NCCL";
#endif
    return {communicator, clock.seconds()};
  }
  // Whether the exchange runs behind the compute (edge first), and why not when it was asked.
  bool overlapped() const {
#if GS_HAVE_NCCL
    return edge_first_ != nullptr;
#else
    return false;
#endif
  }
  const std::string& overlap_note() const {
    return overlap_note_;
  }
  ~RankSlab() {
#if GS_HAVE_NCCL
    edge_first_.reset();  // waits for its transfers, before the communicator goes
    if (nccl_ != nullptr) ncclCommDestroy(nccl_);
#endif
  }
  RankSlab(const RankSlab&) = delete;
  RankSlab& operator=(const RankSlab&) = delete;

  const HaloPlan& plan() const {
    return plan_;
  }
  int extended_rows() const {
    return plan_.top + plan_.rows + plan_.bottom;
  }

  // A failure of this rank's own computing (its stepper: load, advance, fetch, synchronize) is
  // kept, not thrown: the rank still takes its part in every exchange and gather of the command,
  // so that no other rank waits for it forever, and says so at the next round of commands, where
  // every rank stops. Its own later computing is skipped.
  bool failed() const {
    return !failure_.empty();
  }
  const std::string& failure() const {
    return failure_;
  }

  // The extended slab (halos included) as the stepper's state.
  void load(const gs::State& extended, const gs::Rates& rates) {
    attempt([&] { stepper_->load(extended, rates); });
    steps_since_exchange_ = 0;  // the halos hold exact rows
#if GS_HAVE_NCCL
    if (edge_first_ != nullptr) {  // the first period starts at once, from the state loaded
      attempt([&] { edge_first_->load(rates, stepper_->fields()); });
      edge_first_->period(stepper_->fields());
    }
#endif
  }

  // `steps` steps, exchanging the halos whenever `halo` steps were made since the last exchange.
  // Edge first, the exchange of a period runs during its steps: when a period ends, the next one
  // starts at once (its strips, then its exchange, queued behind the slab's steps on the GPU), so
  // the host's pauses between frames do not hold it back.
  void advance(int steps) {
    while (steps > 0) {
      if (!overlapped() && steps_since_exchange_ == plan_.halo) exchange();
      const int now = std::min(steps, plan_.halo - steps_since_exchange_);
      attempt([&] { stepper_->advance(now); });
      steps_since_exchange_ += now;
      steps -= now;
#if GS_HAVE_NCCL
      if (overlapped() && steps_since_exchange_ == plan_.halo) {
        edge_first_->period(stepper_->fields());
        steps_since_exchange_ = 0;
      }
#endif
    }
  }

  void exchange() {
    const gs::FieldView view = stepper_->fields();
    if (!view.available()) throw std::logic_error("the stepper's fields are gone: no exchange");
    if (view.device == gs::Device::cpu) {
      exchange_with_mpi(plan_, view.u, view.pitch, MPI_COMM_WORLD);
      exchange_with_mpi(plan_, view.v, view.pitch, MPI_COMM_WORLD);
    } else {
      exchange_on_gpu(view);
    }
    steps_since_exchange_ = 0;
  }

  void synchronize() {
    attempt([&] { stepper_->synchronize(); });
  }

  // This rank's own rows of v (or of u and v), rows * cols values each (after a failure, rows of
  // the right size that no one will use: the next round stops the run).
  void own_rows(std::vector<float>& u, std::vector<float>& v, bool with_u) {
    gs::State state(extended_rows(), plan_.cols);
    attempt([&] { stepper_->fetch(state); });
    const std::size_t first = static_cast<std::size_t>(plan_.top) * plan_.cols;
    const std::size_t count = static_cast<std::size_t>(plan_.rows) * plan_.cols;
    v.assign(state.v.begin() + first, state.v.begin() + first + count);
    if (with_u) u.assign(state.u.begin() + first, state.u.begin() + first + count);
  }
  void own_v(std::vector<float>& v) {
    extended_v_.resize(static_cast<std::size_t>(extended_rows()) * plan_.cols);
    attempt([&] { stepper_->fetch_v(extended_v_.data()); });
    const std::size_t first = static_cast<std::size_t>(plan_.top) * plan_.cols;
    v.assign(extended_v_.begin() + first,
             extended_v_.begin() + first + static_cast<std::size_t>(plan_.rows) * plan_.cols);
  }

  // Everything the rank holds, halos included (exchange-check).
  void whole(gs::State& state) {
    stepper_->fetch(state);
  }

 private:
  template <typename Work>
  void attempt(Work&& work) {
    if (failed()) return;
    try {
      work();
    } catch (const std::bad_alloc&) {
      failure_ = "out of memory";
    } catch (const std::exception& error) {
      failure_ = error.what()[0] != '\0' ? error.what() : "an unnamed error";
    }
  }

  void exchange_on_gpu([[maybe_unused]] const gs::FieldView& view) {
#if GS_HAVE_CUDA
    const auto stream = static_cast<cudaStream_t>(view.stream);
#if GS_HAVE_NCCL
    if (transport_ == Transport::nccl) {
      // One group around both fields (NCCL groups nest): their eight transfers start together
      // and pay the latency once.
      GS_NCCL_CHECK(ncclGroupStart());
      exchange_with_nccl(plan_, view.u, view.pitch, nccl_, stream);
      exchange_with_nccl(plan_, view.v, view.pitch, nccl_, stream);
      GS_NCCL_CHECK(ncclGroupEnd());
      return;
    }
#endif
    // Staged: the rows to send down to pinned host memory, MPI between host buffers, the
    // received rows back up into the halos; the host buffer has the device's row pitch.
    const std::size_t rows = static_cast<std::size_t>(extended_rows());
    const std::size_t floats = rows * static_cast<std::size_t>(view.pitch);
    if (staging_ == nullptr) {
      void* pointer = nullptr;
      GS_CUDA_CHECK(cudaHostAlloc(&pointer, floats * sizeof(float), cudaHostAllocDefault));
      staging_.reset(static_cast<float*>(pointer));
    }
    const std::size_t row_bytes = static_cast<std::size_t>(view.cols) * sizeof(float);
    const std::size_t pitch_bytes = static_cast<std::size_t>(view.pitch) * sizeof(float);
    for (float* field : {view.u, view.v}) {
      const int sent[2][2] = {
          {plan_.top, plan_.up >= 0 ? plan_.halo : 0},
          {plan_.top + plan_.rows - plan_.halo, plan_.down >= 0 ? plan_.halo : 0}};
      for (const auto& range : sent) {
        if (range[1] == 0) continue;
        const std::size_t offset = static_cast<std::size_t>(range[0]) * view.pitch;
        GS_CUDA_CHECK(cudaMemcpy2DAsync(staging_.get() + offset, pitch_bytes, field + offset,
                                        pitch_bytes, row_bytes, static_cast<std::size_t>(range[1]),
                                        cudaMemcpyDeviceToHost, stream));
      }
      GS_CUDA_CHECK(cudaStreamSynchronize(stream));
      exchange_with_mpi(plan_, staging_.get(), view.pitch, MPI_COMM_WORLD);
      const int received[2][2] = {{0, plan_.top}, {plan_.top + plan_.rows, plan_.bottom}};
      for (const auto& range : received) {
        if (range[1] == 0) continue;
        const std::size_t offset = static_cast<std::size_t>(range[0]) * view.pitch;
        GS_CUDA_CHECK(cudaMemcpy2DAsync(field + offset, pitch_bytes, staging_.get() + offset,
                                        pitch_bytes, row_bytes, static_cast<std::size_t>(range[1]),
                                        cudaMemcpyHostToDevice, stream));
      }
      GS_CUDA_CHECK(cudaStreamSynchronize(stream));  // the staging buffer serves both fields
    }
#else
    throw std::logic_error("a GPU field in a build without CUDA");
#endif
  }

#if GS_HAVE_NCCL
  std::unique_ptr<EdgeFirst> edge_first_;  // the exchange behind the compute, or none
  // One NCCL communicator over all ranks, bootstrapped through MPI: rank 0 makes the unique id,
  // every rank receives it and joins.
  void init_nccl() {
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ncclUniqueId id{};
    if (rank == 0) GS_NCCL_CHECK(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    GS_NCCL_CHECK(ncclCommInitRank(&nccl_, size, id, rank));
  }
  ncclComm_t nccl_ = nullptr;
#endif

#if GS_HAVE_CUDA
  struct PinnedFree {
    void operator()(float* pointer) const { cudaFreeHost(pointer); }
  };
  std::unique_ptr<float, PinnedFree> staging_;
#endif
  const gs::Implementation& implementation_;
  HaloPlan plan_;
  Transport transport_;
  bool overlap_wanted_;
  std::string overlap_note_;  // why the exchange is not behind the compute, when it was wanted
  std::unique_ptr<gs::Stepper> stepper_;
  int steps_since_exchange_ = 0;
  std::vector<float> extended_v_;
  std::string failure_;
};

// ---------------------------------------------------------------------------------------------
// The whole run as one Stepper on rank 0; the other ranks follow its commands
// ---------------------------------------------------------------------------------------------

// kCheck computes nothing: it is a round that only asks every rank whether it may go on.
enum Command : int { kLoad, kAdvance, kFetchV, kFetch, kSynchronize, kCheck, kStop };

struct Message {
  int command;
  int steps;
};

// Thrown on rank 0 when a round stops the run because of another rank (whose verdict says why).
class RanksStopped : public std::runtime_error {
 public:
  RanksStopped() : std::runtime_error("another rank stopped the run") {}
};

// Thrown when a rank fails inside a step that every rank takes together (an exchange, a gather):
// the others may be waiting for it there, so only MPI_Abort can end them (abort_every_rank).
class CollectiveBroken : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Decomposition {
 public:
  Decomposition(int rows, int cols, int ranks, int halo)
      : rows_(rows), cols_(cols), ranks_(ranks), halo_(halo) {
    for (int rank = 0; rank < ranks; ++rank) {
      const RowRange own = slab_of(rows, ranks, rank);
      const HaloPlan plan = plan_of(rows, cols, ranks, rank, halo);
      own_counts_.push_back(own.count() * cols);
      own_offsets_.push_back(own.begin * cols);
      extended_counts_.push_back((plan.top + plan.rows + plan.bottom) * cols);
      extended_offsets_.push_back((own.begin - plan.top) * cols);
    }
  }
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  const std::vector<int>& own_counts() const { return own_counts_; }
  const std::vector<int>& own_offsets() const { return own_offsets_; }
  const std::vector<int>& extended_counts() const { return extended_counts_; }
  const std::vector<int>& extended_offsets() const { return extended_offsets_; }
  HaloPlan plan(int rank) const { return plan_of(rows_, cols_, ranks_, rank, halo_); }

 private:
  int rows_;
  int cols_;
  int ranks_;
  int halo_;
  std::vector<int> own_counts_, own_offsets_, extended_counts_, extended_offsets_;
};

// Every rank's part of a command (rank 0's state arguments are the whole grid's), and the rounds
// that carry the commands.
//
// A round is one MPI_Allreduce (MPI_MAX) of three integers: rank 0 puts in its command and its
// steps, the other ranks the smallest int, and every rank a 1 if it must stop (a signal caught,
// its stepper failed). In one collective the command reaches every rank and every rank learns
// whether any rank stops; if one does, no rank executes the command and all leave the run
// together. After a gather, rank 0 holds one more round (kCheck) before it hands the rows to the
// frame loop: a rank that failed while fetching its rows says so there, and that frame is never
// written.
class Follower {
 public:
  Follower(RankSlab& slab, const Decomposition& decomposition, int rank)
      : slab_(slab), decomposition_(decomposition), rank_(rank) {}

  // One round: returns rank 0's command (the others' `command` is ignored) and sets `stop` when
  // some rank must stop.
  Message round(const Message& command, bool& stop) {
    const bool mine = gs::pending_signal() != 0 || slab_.failed();
    int sent[3] = {INT_MIN, INT_MIN, mine ? 1 : 0};
    if (rank_ == 0) {
      sent[0] = command.command;
      sent[1] = command.steps;
    }
    int received[3] = {0, 0, 0};
    MPI_Allreduce(sent, received, 3, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    stop = received[2] != 0;
    if (stop || received[0] == kStop) finished_ = true;
    return {received[0], received[1]};
  }

  // The ranks other than 0: commands until rank 0 ends the run (kStop) or a round stops it.
  // Returns this rank's own reason to stop, if it had one, or a verdict that goes on.
  Verdict follow(const std::string& program_name) {
    for (;;) {
      bool stop = false;
      const Message message = round({kStop, 0}, stop);
      // At kStop rank 0 is done (its output complete, or its own verdict says why not): a signal
      // that comes now changes nothing, a failure is still reported.
      if (message.command == kStop) return own_verdict(program_name, false);
      if (stop) return own_verdict(program_name, true);
      execute(message, nullptr, nullptr, nullptr);
    }
  }

  // Rank 0, after a round that stopped the run: why, as an exception for its frame loop.
  [[noreturn]] void throw_stop() const {
    gs::throw_if_interrupted("during the run");
    if (slab_.failed()) throw std::runtime_error(slab_.failure());
    throw RanksStopped();
  }

  // Rank 0 ends the run: a last round (kStop) releases the others, unless a round already did.
  void finish() {
    if (finished_) return;
    bool stop = false;
    round({kStop, 0}, stop);
  }
  bool finished() const { return finished_; }
  bool broken() const { return broken_; }
  const RankSlab& slab() const { return slab_; }

  // `whole` (rank 0 only): the state to scatter for kLoad; `v_out`, `state_out` (rank 0 only):
  // where kFetchV and kFetch gather.
  void execute(const Message& message, const gs::State* whole, float* v_out, gs::State* state_out) {
    try {
      run_command(message, whole, v_out, state_out);
    } catch (const std::exception& error) {
      broken_ = true;
      throw CollectiveBroken(error.what());
    }
  }

  void set_rates(const gs::Rates& rates) { rates_ = rates; }

 private:
  // This rank's reason to stop (`signals`: a signal counts), as the verdict it brings to the
  // final agreement.
  Verdict own_verdict(const std::string& program_name, bool signals) const {
    const std::string rank = program_name + ": rank " + std::to_string(rank_) + ": ";
    const std::string ending = "; every rank stopped, no output file was left\n";
    if (signals && gs::pending_signal() != 0) {
      try {
        gs::throw_if_interrupted("during the run");
      } catch (const gs::Interrupted& error) {
        return stop_with(gs::kExitSignal + error.signal_number(), rank + error.what() + ending);
      }
    }
    if (slab_.failed())
      return stop_with(gs::kExitFailure, rank + "error: " + slab_.failure() + ending);
    return Verdict{};
  }

  void run_command(const Message& message, const gs::State* whole, float* v_out,
                   gs::State* state_out) {
    const int cols = decomposition_.cols();
    switch (message.command) {
      case kLoad: {
        gs::Rates rates;
        if (whole != nullptr) rates = rates_;
        MPI_Bcast(&rates, sizeof rates, MPI_BYTE, 0, MPI_COMM_WORLD);
        gs::State extended(slab_.extended_rows(), cols);
        for (int field = 0; field < 2; ++field) {
          const float* source =
              whole == nullptr ? nullptr : (field == 0 ? whole->u.data() : whole->v.data());
          float* target = field == 0 ? extended.u.data() : extended.v.data();
          MPI_Scatterv(source, decomposition_.extended_counts().data(),
                       decomposition_.extended_offsets().data(), MPI_FLOAT, target,
                       decomposition_.extended_counts()[static_cast<std::size_t>(rank_)], MPI_FLOAT,
                       0, MPI_COMM_WORLD);
        }
        slab_.load(extended, rates);
        break;
      }
      case kAdvance:
        slab_.advance(message.steps);
        break;
      case kFetchV:
        slab_.own_v(own_v_);
        gather(own_v_, v_out);
        break;
      case kFetch: {
        slab_.own_rows(own_u_, own_v_, true);
        if (state_out != nullptr) {
          *state_out = gs::State(decomposition_.rows(), cols);
        }
        gather(own_u_, state_out != nullptr ? state_out->u.data() : nullptr);
        gather(own_v_, state_out != nullptr ? state_out->v.data() : nullptr);
        break;
      }
      case kSynchronize:
        slab_.synchronize();
        MPI_Barrier(MPI_COMM_WORLD);
        break;
      case kCheck:
        break;
      default:
        throw std::logic_error("unknown command");
    }
  }

  void gather(const std::vector<float>& own, float* whole) {
    MPI_Gatherv(own.data(), static_cast<int>(own.size()), MPI_FLOAT, whole,
                decomposition_.own_counts().data(), decomposition_.own_offsets().data(), MPI_FLOAT,
                0, MPI_COMM_WORLD);
  }

  RankSlab& slab_;
  const Decomposition& decomposition_;
  int rank_;
  gs::Rates rates_;
  std::vector<float> own_u_, own_v_;
  bool finished_ = false;  // a round stopped the run, or rank 0 sent kStop: no more rounds
  bool broken_ = false;    // a step of every rank failed here: only MPI_Abort ends the others
};

// Rank 0's view of the whole run: each call is a round that sends the command to every rank,
// then rank 0's part of it. It offers no FieldView: the frame loop takes the frames through
// fetch_v (the gather). Throws when a round stops the run: Interrupted (a signal here),
// RanksStopped (another rank's reason), or rank 0's own failure.
class DistributedStepper final : public gs::Stepper {
 public:
  explicit DistributedStepper(Follower& leader) : leader_(leader) {}
  DistributedStepper(const DistributedStepper&) = delete;
  DistributedStepper& operator=(const DistributedStepper&) = delete;

  void load(const gs::State& state, const gs::Rates& rates) override {
    leader_.set_rates(rates);
    command({kLoad, 0}, &state, nullptr, nullptr);
  }
  void advance(int steps) override { command({kAdvance, steps}, nullptr, nullptr, nullptr); }
  void fetch(gs::State& state) override {
    command({kFetch, 0}, nullptr, nullptr, &state);
    command({kCheck, 0}, nullptr, nullptr, nullptr);  // every rank's rows were sound
  }
  void fetch_v(float* v) override {
    command({kFetchV, 0}, nullptr, v, nullptr);
    command({kCheck, 0}, nullptr, nullptr, nullptr);  // every rank's rows were sound
  }
  void synchronize() override { command({kSynchronize, 0}, nullptr, nullptr, nullptr); }

 private:
  void command(const Message& message, const gs::State* whole, float* v_out, gs::State* state_out) {
    if (leader_.finished()) throw RanksStopped();  // no rank listens any more
    bool stop = false;
    leader_.round(message, stop);
    if (stop) leader_.throw_stop();
    leader_.execute(message, whole, v_out, state_out);
    // Rank 0's own failure stops the run here, outside every collective: the others are already
    // waiting in the next round, which finish() makes the last.
    if (leader_.slab().failed()) throw std::runtime_error(leader_.slab().failure());
  }
  Follower& leader_;
};

// ---------------------------------------------------------------------------------------------
// The program
// ---------------------------------------------------------------------------------------------

struct Options {
  gs::ProgramOptions program;
  int halo = 0;             // given, or the steps of a frame
  bool halo_given = false;  // --halo was given (0 or less is then refused)
  std::string transport = "auto";
  std::string mode;  // "", "benchmark", "exchange-check"
  bool weak = false;
  std::string implementation_name;
  std::string csv;  // benchmark: append the result as CSV rows
  bool list = false;
  bool edge_first = false;     // the exchange behind the steps (edge first), not between them
  bool frames_queued = false;  // benchmark: wait once at the end, not after every frame
};

void add_flags(CLI::App& app, Options& options, const gs::FrameLoop& loop) {
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  gs::ProgramOptions& p = options.program;
  gs::add_grid_flags(app, p.params);
  app.add_option("-o,--output", p.params.output, "HDF5 output file (written by rank 0)")
      ->capture_default_str();
  gs::add_rate_flags(app, p.params.rates);
  app.add_flag_callback(
      "--no-output", [&p] { p.write_output = false; }, "compute only");
  app.add_flag_callback(
      "--no-fsync", [&p] { p.fsync = false; }, "do not flush the output");
  app.add_flag("--json", p.json, "one line of JSON on stdout at the end");
  app.add_flag("--progress", p.progress, "the progress line even when not a terminal");
  app.add_option("--impl", options.implementation_name,
                 "the single-device implementation every rank runs (default: the fastest usable)");
  app.add_option("--halo", options.halo,
                 "rows exchanged with each neighbour = steps between two exchanges, at least 1 "
                 "(default: the steps of a frame)");
  app.add_option("--transport", options.transport,
                 "halo exchange of GPU ranks: nccl, mpi (staged through host memory) or auto")
      ->check(CLI::IsMember({"auto", "nccl", "mpi"}))
      ->capture_default_str();
  app.add_flag("--edge-first", options.edge_first,
               "GPU ranks with NCCL: the exchange behind the steps (the boundary rows computed "
               "first from thin strips and sent while the slab computes) instead of between them; "
               "slower on the machines measured (README, section 9)");
  app.add_flag("--list", options.list, "list the implementations a rank can run and exit");
  app.add_flag("--weak", options.weak,
               "benchmark: weak scaling (the grid given is one rank's share) instead of strong");
  app.add_option("--csv", options.csv, "benchmark: also append the result to this CSV file");
  app.add_flag("--frames-queued", options.frames_queued,
               "benchmark: queue every frame and wait once at the end (what a run without "
               "output waits for) instead of after every frame (what a run that writes them "
               "waits for); the one device is timed the same way");
  if (loop.add_flags) loop.add_flags(app);
}

// Parses this rank's command line. Stops for --help (the help, on stdout, exit 0) and for what
// CLI11 refuses (its message); prints nothing itself: the ranks agree first (agree()), then rank
// 0 prints the verdict that stops.
Verdict parse(int argc, char** argv, CLI::App& app, Options& options) {
  if (argc > 1 &&
      (std::string(argv[1]) == "benchmark" || std::string(argv[1]) == "exchange-check")) {
    options.mode = argv[1];
    --argc;
    ++argv;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    std::ostringstream out;
    std::ostringstream err;
    const int code = app.exit(error, out, err);
    if (code == 0) return stop_with(gs::kExitSuccess, out.str(), true);
    return stop_with(gs::kExitUsage, err.str() + out.str());
  }
  options.halo_given = app.count("--halo") > 0;
  if (!options.halo_given) options.halo = options.program.params.steps_per_frame;
  return Verdict{};
}

// The shortest text that reads back as `value` ("0.054", not "0.0540000014").
std::string shortest(float value) {
  char text[32];
  const std::to_chars_result written = std::to_chars(text, text + sizeof text, value);
  return std::string(text, written.ptr);
}

// What must be the same on every rank: every flag of the command line, as this rank parsed it.
// The course's flags and this program's by their values; any other flag (the frame loop's own,
// --json, --progress) by the words given, or "(not given)".
std::vector<Argument> arguments_of(const Options& options, const CLI::App& app) {
  const gs::Params& p = options.program.params;
  const auto yes_no = [](bool given) { return std::string(given ? "given" : "not given"); };
  const std::vector<Argument> known = {
      {"the mode (run, benchmark or exchange-check)", options.mode.empty() ? "run" : options.mode},
      {"-r/--nbrow", std::to_string(p.rows)},
      {"-c/--nbcol", std::to_string(p.cols)},
      {"-n/--nbimage", std::to_string(p.frames)},
      {"-e/--nbextrastep", std::to_string(p.steps_per_frame)},
      {"-o/--output", p.output},
      {"-k/--killrate", shortest(p.rates.kill)},
      {"-f/--feedrate", shortest(p.rates.feed)},
      {"-t/--deltat", shortest(p.rates.dt)},
      {"-u/--diffusion-u", shortest(p.rates.diffusion_u)},
      {"-v/--diffusion-v", shortest(p.rates.diffusion_v)},
      {"--no-output", yes_no(!options.program.write_output)},
      {"--no-fsync", yes_no(!options.program.fsync)},
      {"--impl", options.implementation_name.empty() ? "(not given)" : options.implementation_name},
      {"--halo", std::to_string(options.halo)},
      {"--transport", options.transport},
      {"--edge-first", yes_no(options.edge_first)},
      {"--list", yes_no(options.list)},
      {"--weak", yes_no(options.weak)},
      {"--csv", options.csv.empty() ? "(not given)" : options.csv},
      {"--frames-queued", yes_no(options.frames_queued)}};
  std::vector<Argument> arguments = known;
  for (const CLI::Option* option : app.get_options()) {
    if (option == app.get_help_ptr()) continue;
    bool listed = false;
    for (const Argument& argument : known) {
      const std::string flag = argument.flag.substr(argument.flag.rfind('/') + 1);
      if (flag.rfind("--", 0) == 0 && option->check_name(flag)) listed = true;
    }
    if (listed) continue;
    std::string words = option->count() == 0 ? "(not given)" : "";
    for (const std::string& word : option->results()) words += (words.empty() ? "" : " ") + word;
    std::string flag = option->get_name(false, true);
    std::replace(flag.begin(), flag.end(), ',', '/');
    arguments.push_back({flag, words});
  }
  return arguments;
}

Transport choose_transport(const gs::Implementation& implementation, const std::string& asked) {
  if (implementation.device == gs::Device::cpu) return Transport::host;
#if GS_HAVE_NCCL
  if (asked != "mpi") return Transport::nccl;
#else
  if (asked == "nccl") {
    throw std::runtime_error("--transport nccl: this build has no NCCL (install libnccl-dev)");
  }
#endif
  return Transport::staged;
}

// The implementations a rank can run, as --list shows them.
std::string implementation_list(const std::vector<gs::Implementation>& all) {
  std::ostringstream text;
  text << "implementations every rank can run (--impl), default first (* = usable here):\n";
  for (const gs::Implementation& impl : all) {
    text << (gs::usable(impl) ? "  * " : "    ") << impl.name
         << (impl.device == gs::Device::gpu ? " [gpu] " : " [cpu] ") << impl.summary << "\n";
  }
  return text.str();
}

// What this rank runs, chosen as gs::select_implementation() does but without printing: the
// verdict says why none.
const gs::Implementation* choose_implementation(const std::vector<gs::Implementation>& all,
                                                const std::string& asked,
                                                const std::string& rank_prefix, Verdict& verdict) {
  if (!asked.empty()) {
    const gs::Implementation* chosen = gs::find_implementation(all, asked);
    if (chosen == nullptr) {
      verdict = stop_with(gs::kExitUsage, rank_prefix + "error: no implementation named '" + asked +
                                              "' (see --list)\n");
    } else if (!gs::usable(*chosen)) {
      verdict = stop_with(gs::kExitNoGpu, rank_prefix + "error: '" + chosen->name +
                                              "' needs a GPU: " + gs::gpu_status().reason + "\n");
      chosen = nullptr;
    }
    return chosen;
  }
  for (const gs::Implementation& impl : all) {
    if (gs::usable(impl)) return &impl;
  }
  const std::string none = "error: every implementation of this program needs a GPU: ";
  verdict = stop_with(gs::kExitNoGpu, rank_prefix + none + gs::gpu_status().reason + "\n");
  return nullptr;
}

// Everything one rank can refuse before any work, in the order a user fixes it: the parameters,
// --halo and the slabs, --list, the implementation and the exchange, and on rank 0, which writes
// the file, the output path and the room for the file (gs::check_output_path(), the check the
// writer makes again as it opens the file).
Verdict check_before_the_run(const Options& options, const std::vector<gs::Implementation>& all,
                             const std::string& name, int rank, int size,
                             const gs::Implementation*& chosen, Transport& transport) {
  const gs::Params& params = options.program.params;
  std::vector<std::string> problems = gs::find_problems(params);
  if (options.halo_given && options.halo < 1) {
    problems.push_back("--halo must be at least 1 (got " + std::to_string(options.halo) +
                       "): it is the rows exchanged with each neighbour and the steps between two "
                       "exchanges");
  } else {
    const int rows = options.mode == "benchmark" && options.weak ? params.rows * size : params.rows;
    const std::string too_fine = decomposition_problem(rows, size, options.halo);
    if (!too_fine.empty()) problems.push_back(too_fine);
  }
  if (!problems.empty()) {
    std::string text;
    for (const std::string& problem : problems) text += name + ": error: " + problem + "\n";
    return stop_with(gs::kExitUsage, text + "Run with --help for the flags and their defaults.\n");
  }
  if (options.list) return stop_with(gs::kExitSuccess, implementation_list(all), true);

  // Only these checks can differ between ranks (a GPU on one node, none on another): their
  // messages name the rank.
  const std::string rank_prefix =
      name + ": " + (size > 1 ? "rank " + std::to_string(rank) + ": " : "");
  Verdict verdict;
  chosen = choose_implementation(all, options.implementation_name, rank_prefix, verdict);
  if (chosen == nullptr) return verdict;
  try {
    transport = choose_transport(*chosen, options.transport);
  } catch (const std::exception& error) {
    return stop_with(gs::kExitUsage, name + ": error: " + error.what() + "\n");
  }
  if (rank == 0 && options.mode.empty() && options.program.write_output) {
    try {
      gs::check_output_path(params.output, gs::output_file_bytes(params));
    } catch (const std::exception& error) {
      return stop_with(gs::kExitFailure, name + ": error: " + error.what() + "\n");
    }
  }
  if (rank == 0 && options.mode == "benchmark" && !options.csv.empty()) {
    try {  // the CSV the benchmark appends its row to
      gs::check_outputs({{options.csv, "--csv", gs::appended_file_bytes(options.csv, 4096)}});
    } catch (const std::exception& error) {
      return stop_with(gs::kExitFailure, name + ": error: " + error.what() + "\n");
    }
  }
  return Verdict{};
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

// Times whole frames of `stepper` from `start` the way gs_benchmark does: one warm-up frame, the
// state loaded again, then every frame advanced and waited for (`each_frame`: as a run that writes
// its frames waits for each), or every frame queued and waited for once at the end (as a run
// without output). Seconds for `frames` frames.
double time_frames(gs::Stepper& stepper, const gs::State& start, const gs::Params& params,
                   bool each_frame) {
  stepper.load(start, params.rates);
  stepper.advance(params.steps_per_frame);
  stepper.synchronize();
  stepper.load(start, params.rates);
  stepper.synchronize();
  gs::Stopwatch clock;
  for (int frame = 0; frame < params.frames; ++frame) {
    gs::throw_if_interrupted("during the benchmark");
    stepper.advance(params.steps_per_frame);
    if (each_frame) stepper.synchronize();
  }
  stepper.synchronize();
  return clock.seconds();
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
  double single = 0.0;
  {
    auto stepper = implementation.create();
    single = time_frames(*stepper, gs::initial_state(one.rows, one.cols), one, each_frame);
  }
  std::cerr << "  one device: " << one.rows << " x " << one.cols << ": " << std::fixed
            << std::setprecision(3) << single << " s\n";
  DistributedStepper stepper(follower);
  const double together =
      time_frames(stepper, gs::initial_state(all.rows, all.cols), all, each_frame);
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
  if (!options.csv.empty()) {
    // Appended through common/'s output mechanism: the old file stays whole if this fails.
    std::ostringstream row;
    row << implementation.name << "," << kind << "," << size << "," << all.rows << "," << all.cols
        << "," << all.frames << "," << all.steps_per_frame << "," << options.halo << ","
        << (transport == Transport::nccl     ? (overlapped ? "nccl-edge-first" : "nccl")
            : transport == Transport::staged ? "staged"
                                             : "host")
        << "," << std::setprecision(6) << single << "," << together << "," << efficiency << ","
        << (each_frame ? "each" : "end") << "\n";
    try {
      gs::append_to_output_file(options.csv,
                                "implementation,scaling,ranks,rows,cols,frames,steps_per_frame,"
                                "halo,exchange,one_device_s,all_ranks_s,efficiency,wait\n",
                                row.str(), gs::OutputOptions("--csv", nullptr));
    } catch (const gs::OutputError& error) {
      std::cerr << "benchmark: error: " << error.what() << "\n";
      return gs::kExitFailure;
    }
  }
  return gs::kExitSuccess;
}

}  // namespace

namespace GS_LESSON_NAMESPACE {

// The ranks go through the same steps, each ending in a collective, so that whatever one rank
// concludes, every rank reaches the same next step: (1) the command line, (2) the same arguments
// on every rank, (3) every check that can refuse, (4) the same implementation, (5) the devices and
// the slabs, then the run, whose rounds carry every rank's reason to stop, and (6) the final
// verdict. A refusal or a failure anywhere ends every rank with the same message (printed once,
// by rank 0) and the same exit code.
int program(int argc, char** argv, const char* program_name) {
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
  try {
    set_up =
        slab->connect();  // collectives of their own: a rank failing in them cannot be waited for
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
              << (transport == Transport::nccl ? "NCCL communicator " : "connections ")
              << slowest[0] << " s, first exchanges " << slowest[1] << " s\n"
              << std::defaultfloat;
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
            const gs::RunResult result = loop.run(distributed, options.program);
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
