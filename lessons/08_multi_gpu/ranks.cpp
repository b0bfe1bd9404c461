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
//                    pipeline): the other ranks follow rank 0's commands (load, advance, fetch).
//
// `lesson08_solution` runs the simulation (the course's flags, plus --halo and --transport);
// `lesson08_solution benchmark` measures strong or weak scaling; `exchange-check` tests one
// exchange on a tiny grid.
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // OpenMPI's extensions: MPIX_Query_cuda_support
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "gs/device_limits.hpp"
#include "gs/gpu.hpp"
#include "gs/lesson.hpp"
#include "gs/program.hpp"
#include "gs/report.hpp"
#include "gs/state.hpp"
#include "gs/timing.hpp"
#include "registry.hpp"

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
// One rank's slab: its stepper and the exchange
// ---------------------------------------------------------------------------------------------

class RankSlab {
 public:
  RankSlab(const gs::Implementation& implementation, const HaloPlan& plan, Transport transport)
      : plan_(plan), transport_(transport), stepper_(implementation.create()) {
#if GS_HAVE_CUDA
    if (implementation.device == gs::Device::gpu) {
      // u and v, now and next, of the extended slab: what a single-GPU stepper holds at least.
      gs::require_device_memory(
          "the slab of " + std::to_string(extended_rows()) + " x " + std::to_string(plan.cols) +
              " cells (halos included)",
          std::int64_t{4} * extended_rows() * plan.cols * std::int64_t{sizeof(float)});
    }
#endif
#if GS_HAVE_NCCL
    if (transport_ == Transport::nccl) init_nccl();
#endif
  }
  ~RankSlab() {
#if GS_HAVE_NCCL
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

  // The extended slab (halos included) as the stepper's state.
  void load(const gs::State& extended, const gs::Rates& rates) {
    stepper_->load(extended, rates);
    const gs::FieldView view = stepper_->fields();
    if (!view.available()) {
      throw std::runtime_error(
          "the implementation offers no view of its fields (Stepper::fields),"
          " which the halo exchange needs; choose another with --impl");
    }
    steps_since_exchange_ = 0;  // the halos hold exact rows
  }

  // `steps` steps, exchanging the halos whenever `halo` steps were made since the last exchange.
  void advance(int steps) {
    while (steps > 0) {
      if (steps_since_exchange_ == plan_.halo) exchange();
      const int now = std::min(steps, plan_.halo - steps_since_exchange_);
      stepper_->advance(now);
      steps_since_exchange_ += now;
      steps -= now;
    }
  }

  void exchange() {
    const gs::FieldView view = stepper_->fields();
    if (view.device == gs::Device::cpu) {
      exchange_with_mpi(plan_, view.u, view.pitch, MPI_COMM_WORLD);
      exchange_with_mpi(plan_, view.v, view.pitch, MPI_COMM_WORLD);
    } else {
      exchange_on_gpu(view);
    }
    steps_since_exchange_ = 0;
  }

  void synchronize() {
    stepper_->synchronize();
  }

  // This rank's own rows of v (or of u and v), rows * cols values each.
  void own_rows(std::vector<float>& u, std::vector<float>& v, bool with_u) {
    gs::State state;
    stepper_->fetch(state);
    const std::size_t first = static_cast<std::size_t>(plan_.top) * plan_.cols;
    const std::size_t count = static_cast<std::size_t>(plan_.rows) * plan_.cols;
    v.assign(state.v.begin() + first, state.v.begin() + first + count);
    if (with_u) u.assign(state.u.begin() + first, state.u.begin() + first + count);
  }
  void own_v(std::vector<float>& v) {
    extended_v_.resize(static_cast<std::size_t>(extended_rows()) * plan_.cols);
    stepper_->fetch_v(extended_v_.data());
    const std::size_t first = static_cast<std::size_t>(plan_.top) * plan_.cols;
    v.assign(extended_v_.begin() + first,
             extended_v_.begin() + first + static_cast<std::size_t>(plan_.rows) * plan_.cols);
  }

  // Everything the rank holds, halos included (exchange-check).
  void whole(gs::State& state) {
    stepper_->fetch(state);
  }

 private:
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
  HaloPlan plan_;
  Transport transport_;
  std::unique_ptr<gs::Stepper> stepper_;
  int steps_since_exchange_ = 0;
  std::vector<float> extended_v_;
};

// ---------------------------------------------------------------------------------------------
// The whole run as one Stepper on rank 0; the other ranks follow its commands
// ---------------------------------------------------------------------------------------------

enum Command : int { kLoad, kAdvance, kFetchV, kFetch, kSynchronize, kStop };

struct Message {
  int command;
  int steps;
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

// Every rank's part of a command (rank 0's state arguments are the whole grid's).
class Follower {
 public:
  Follower(RankSlab& slab, const Decomposition& decomposition, int rank)
      : slab_(slab), decomposition_(decomposition), rank_(rank) {}

  // Runs commands from rank 0 until kStop.
  void run() {
    for (;;) {
      const Message message = receive();
      if (message.command == kStop) return;
      execute(message, nullptr, nullptr, nullptr);
    }
  }

  static Message receive() {
    Message message{};
    MPI_Bcast(&message, 2, MPI_INT, 0, MPI_COMM_WORLD);
    return message;
  }

  // `whole` (rank 0 only): the state to scatter for kLoad; `v_out`, `state_out` (rank 0 only):
  // where kFetchV and kFetch gather.
  void execute(const Message& message, const gs::State* whole, float* v_out, gs::State* state_out) {
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
      default:
        throw std::logic_error("unknown command");
    }
  }

  void set_rates(const gs::Rates& rates) { rates_ = rates; }

 private:
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
};

// Rank 0's view of the whole run: each call sends the command to every rank and does rank 0's
// part. It offers no FieldView: the frame loop takes the frames through fetch_v (the gather).
class DistributedStepper final : public gs::Stepper {
 public:
  explicit DistributedStepper(Follower& leader) : leader_(leader) {}
  ~DistributedStepper() override { send({kStop, 0}); }
  DistributedStepper(const DistributedStepper&) = delete;
  DistributedStepper& operator=(const DistributedStepper&) = delete;

  void load(const gs::State& state, const gs::Rates& rates) override {
    leader_.set_rates(rates);
    leader_.execute(send({kLoad, 0}), &state, nullptr, nullptr);
  }
  void advance(int steps) override {
    leader_.execute(send({kAdvance, steps}), nullptr, nullptr, nullptr);
  }
  void fetch(gs::State& state) override {
    leader_.execute(send({kFetch, 0}), nullptr, nullptr, &state);
  }
  void fetch_v(float* v) override { leader_.execute(send({kFetchV, 0}), nullptr, v, nullptr); }
  void synchronize() override {
    leader_.execute(send({kSynchronize, 0}), nullptr, nullptr, nullptr);
  }

 private:
  static Message send(Message message) {
    MPI_Bcast(&message, 2, MPI_INT, 0, MPI_COMM_WORLD);
    return message;
  }
  Follower& leader_;
};

// ---------------------------------------------------------------------------------------------
// The program
// ---------------------------------------------------------------------------------------------

struct Options {
  gs::ProgramOptions program;
  int halo = 0;  // 0: the steps of a frame
  std::string transport = "auto";
  std::string mode;  // "", "benchmark", "exchange-check"
  bool weak = false;
  std::string implementation_name;
  std::string csv;  // benchmark: append the result as CSV rows
  bool list = false;
};

// Every rank parses the same command line; only rank 0 prints what is wrong.
int parse(int argc, char** argv, const char* name, int rank, Options& options,
          const gs::FrameLoop& loop) {
  if (argc > 1 &&
      (std::string(argv[1]) == "benchmark" || std::string(argv[1]) == "exchange-check")) {
    options.mode = argv[1];
    --argc;
    ++argv;
  }
  CLI::App app{
      "Gray-Scott School, lesson 08: the grid in slabs of rows over MPI ranks (one GPU "
      "each), halos exchanged every --halo steps. Run it under mpirun.",
      name};
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
                 "rows exchanged with each neighbour = steps between two exchanges (default: the "
                 "steps of a frame)")
      ->check(CLI::PositiveNumber);
  app.add_option("--transport", options.transport,
                 "halo exchange of GPU ranks: nccl, mpi (staged through host memory) or auto")
      ->check(CLI::IsMember({"auto", "nccl", "mpi"}))
      ->capture_default_str();
  app.add_flag("--list", options.list, "list the implementations a rank can run and exit");
  app.add_flag("--weak", options.weak,
               "benchmark: weak scaling (the grid given is one rank's share) instead of strong");
  app.add_option("--csv", options.csv, "benchmark: also append the result to this CSV file");
  if (loop.add_flags) loop.add_flags(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (rank == 0) return app.exit(error) == 0 ? gs::kExitSuccess : gs::kExitUsage;
    return error.get_exit_code() == 0 ? gs::kExitSuccess : gs::kExitUsage;
  }
  if (options.halo == 0) options.halo = p.params.steps_per_frame;
  return -1;  // go on
}

// The same verdict on every rank: rank 0 decides, everyone returns it.
int agree(int code) {
  MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return code;
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

// exchange-check: every rank fills its own rows with value(row, col) = row + col / 1000 (u; -that
// for v) and its halos with NaN, exchanges once, and checks that its own rows are untouched and
// each halo row now holds the neighbour's row of the same global index.
int exchange_check(const gs::Implementation& implementation, const Options& options, int rank,
                   int size) {
  const gs::Params& params = options.program.params;
  const HaloPlan plan = plan_of(params.rows, params.cols, size, rank, options.halo);
  RankSlab slab(implementation, plan, choose_transport(implementation, options.transport));
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
// state loaded again, then every frame advanced and waited for. Seconds for `frames` frames.
double time_frames(gs::Stepper& stepper, const gs::State& start, const gs::Params& params) {
  stepper.load(start, params.rates);
  stepper.advance(params.steps_per_frame);
  stepper.synchronize();
  stepper.load(start, params.rates);
  stepper.synchronize();
  gs::Stopwatch clock;
  for (int frame = 0; frame < params.frames; ++frame) {
    stepper.advance(params.steps_per_frame);
    stepper.synchronize();
  }
  return clock.seconds();
}

// benchmark: the same frames on one rank's device alone and on all ranks; strong scaling (the
// grid is shared: efficiency = T1 / (P * TP)) or weak (each rank gets the grid given:
// efficiency = T1 / TP). Compute only; rank 0 prints the table.
int benchmark(const gs::Implementation& implementation, const Options& options, int rank, int size,
              Transport transport) {
  gs::Params one = options.program.params;  // what the single device computes
  gs::Params all = one;                     // what the ranks compute together
  if (options.weak) all.rows = one.rows * size;
  const std::string too_fine = decomposition_problem(all.rows, size, options.halo);
  if (!too_fine.empty()) {
    if (rank == 0) std::cerr << "benchmark: error: " << too_fine << "\n";
    return gs::kExitUsage;
  }
  double single = 0.0;
  if (rank == 0) {
    std::cerr << "  one device: " << one.rows << " x " << one.cols << " ..." << std::flush;
    auto stepper = implementation.create();
    single = time_frames(*stepper, gs::initial_state(one.rows, one.cols), one);
    std::cerr << " " << std::fixed << std::setprecision(3) << single << " s\n";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const Decomposition decomposition(all.rows, all.cols, size, options.halo);
  RankSlab slab(implementation, decomposition.plan(rank), transport);
  Follower follower(slab, decomposition, rank);
  double together = 0.0;
  if (rank == 0) {
    std::cerr << "  " << size << " ranks: " << all.rows << " x " << all.cols << " ..."
              << std::flush;
    DistributedStepper stepper(follower);
    together = time_frames(stepper, gs::initial_state(all.rows, all.cols), all);
    std::cerr << " " << together << " s\n";
  } else {
    follower.run();
  }
  if (rank != 0) return gs::kExitSuccess;
  const double efficiency = options.weak ? single / together : single / (size * together);
  const char* kind = options.weak ? "weak" : "strong";
  std::cout << "| " << implementation.name << " | " << kind << " | " << size << " | " << all.rows
            << " x " << all.cols << " | " << options.halo << " | " << name_of(transport) << " | "
            << std::fixed << std::setprecision(4) << single << " | " << together << " | "
            << std::setprecision(1) << 100.0 * efficiency << " % |\n";
  if (!options.csv.empty()) {
    const bool fresh = !std::ifstream(options.csv).good();
    std::ofstream file(options.csv, std::ios::app);
    if (fresh) {
      file << "implementation,scaling,ranks,rows,cols,frames,steps_per_frame,halo,exchange,"
              "one_device_s,all_ranks_s,efficiency\n";
    }
    file << implementation.name << "," << kind << "," << size << "," << all.rows << "," << all.cols
         << "," << all.frames << "," << all.steps_per_frame << "," << options.halo << ","
         << (transport == Transport::nccl     ? "nccl"
             : transport == Transport::staged ? "staged"
                                              : "host")
         << "," << std::setprecision(6) << single << "," << together << "," << efficiency << "\n";
    if (!file) {
      std::cerr << "benchmark: error: cannot write '" << options.csv << "'\n";
      return gs::kExitFailure;
    }
  }
  return gs::kExitSuccess;
}

}  // namespace

namespace GS_LESSON_NAMESPACE {

int program(int argc, char** argv, const char* name) {
  MpiSession mpi(argc, argv);
  const int rank = mpi.rank();
  const int size = mpi.size();
  const gs::FrameLoop loop = gs::best_frame_loop();
  Options options;
  const int parsed = parse(argc, argv, name, rank, options, loop);
  if (parsed >= 0) return parsed;

  // Every rank checks the same things; rank 0 says what is wrong.
  const gs::Params& params = options.program.params;
  std::vector<std::string> problems = gs::find_problems(params);
  const std::string too_fine = decomposition_problem(params.rows, size, options.halo);
  if (!too_fine.empty()) problems.push_back(too_fine);
  if (!problems.empty()) {
    if (rank == 0) {
      for (const std::string& problem : problems)
        std::cerr << name << ": error: " << problem << "\n";
    }
    return gs::kExitUsage;
  }
  static const std::vector<gs::Implementation> all = gs::all_implementations();
  if (options.list) {
    if (rank == 0) {
      std::cout
          << "implementations every rank can run (--impl), default first (* = usable here):\n";
      for (const gs::Implementation& impl : all) {
        std::cout << (gs::usable(impl) ? "  * " : "    ") << impl.name
                  << (impl.device == gs::Device::gpu ? " [gpu] " : " [cpu] ") << impl.summary
                  << "\n";
      }
    }
    return gs::kExitSuccess;
  }
  int code = gs::kExitSuccess;
  const gs::Implementation* chosen =
      gs::select_implementation(all, options.implementation_name, rank == 0 ? name : "", code);
  if (chosen == nullptr) return code;

  // NVLink multicast stays off: point-to-point transfers do not need it, and on shared machines
  // a program that uses it can disturb others (the variable is honoured if set otherwise).
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  std::string where = "CPU";
  if (chosen->device == gs::Device::gpu) {
    try {
      where = choose_gpu(mpi.local_rank());
    } catch (const std::exception& error) {  // a bad GS_DEVICE_LIMITS, a device that fails
      std::cerr << name << ": rank " << rank << ": error: " << error.what() << "\n";
      MPI_Abort(MPI_COMM_WORLD, gs::kExitUsage);
      return gs::kExitUsage;
    }
  }
  char host[256] = {};
  int host_length = 0;
  MPI_Get_processor_name(host, &host_length);
  print_in_rank_order("rank " + std::to_string(rank) + " of " + std::to_string(size) + " on " +
                          std::string(host, static_cast<std::size_t>(host_length)) + ": " + where,
                      rank, size);
  Transport transport = Transport::host;
  try {
    transport = choose_transport(*chosen, options.transport);
  } catch (const std::exception& error) {
    if (rank == 0) std::cerr << name << ": error: " << error.what() << "\n";
    return gs::kExitUsage;
  }
  if (rank == 0) {
    const int rows = options.mode == "benchmark" && options.weak ? params.rows * size : params.rows;
    std::cerr << "slabs of " << rows / size << "-" << (rows + size - 1) / size << " rows, halo "
              << options.halo << " rows (one exchange every " << options.halo << " steps), "
              << chosen->name << " on every rank, exchange: " << name_of(transport) << "; "
              << cuda_awareness() << "\n";
  }

  if (options.mode == "exchange-check") {
    return agree(exchange_check(*chosen, options, rank, size));
  }
  if (options.mode == "benchmark") {
    if (rank == 0) {
      std::cout << "| implementation | scaling | ranks | grid | halo | exchange | one device s | "
                   "all ranks s | efficiency |\n|---|---|---:|---|---:|---|---:|---:|---:|\n";
    }
    try {
      return agree(benchmark(*chosen, options, rank, size, transport));
    } catch (const std::exception& error) {
      std::cerr << name << ": rank " << rank << ": error: " << error.what() << "\n";
      MPI_Abort(MPI_COMM_WORLD, gs::kExitFailure);
      return gs::kExitFailure;
    }
  }

  const Decomposition decomposition(params.rows, params.cols, size, options.halo);
  try {
    RankSlab slab(*chosen, decomposition.plan(rank), transport);
    Follower follower(slab, decomposition, rank);
    if (rank != 0) {
      follower.run();
      return agree(gs::kExitSuccess);
    }
    gs::Implementation distributed = *chosen;
    distributed.name = "l08-slabs(" + chosen->name + ")x" + std::to_string(size);
    distributed.create = [&follower] { return std::make_unique<DistributedStepper>(follower); };
    int status = gs::kExitSuccess;
    try {
      const gs::RunResult result = loop.run(distributed, options.program);
      std::ostream& report = options.program.json ? std::cerr : std::cout;
      gs::print_report(report, result);
      if (options.program.json) gs::print_json(std::cout, result);
    } catch (const gs::Interrupted& error) {
      std::cerr << "\n" << name << ": " << error.what() << "; no output file was left\n";
      status = gs::kExitSignal + error.signal_number();
    } catch (const std::exception& error) {
      std::cerr << "\n" << name << ": error: " << error.what() << "\n";
      status = gs::kExitFailure;
    }
    return agree(status);
  } catch (const std::exception& error) {
    std::cerr << name << ": rank " << rank << ": error: " << error.what() << "\n";
    MPI_Abort(MPI_COMM_WORLD, gs::kExitFailure);
    return gs::kExitFailure;
  }
}

}  // namespace GS_LESSON_NAMESPACE
