// Lesson 08 - several GPUs: the grid cut into slabs of rows, one MPI rank (and one GPU) each,
// halos exchanged between neighbours.
//
// Every rank advances its slab with a single-GPU (or CPU) stepper of the earlier lessons: it
// holds its own rows plus `halo` rows of each neighbour, and the stepper treats that extended
// slab as a grid of its own. A step spoils one row at each end of what a rank holds (it does not
// know the rows beyond), so after `halo` steps the halos are spoilt and the rank's own rows are
// still exact: then the neighbours exchange their boundary rows and the next `halo` steps can
// start. One exchange per `halo` steps instead of one per
// step: the same trade as lesson 06's pyramids, more computing (the halo rows, twice) for fewer
// trips (here over NVLink or the network instead of to memory).
//
//   ranks and GPUs   each rank takes the GPU of its node-local rank (MPI_Comm_split_type);
//   the exchange     GPU ranks on one node: each GPU writes its neighbours' halos itself, one
//                    kernel on the stream the rank computes on, whose blocks each play one
//                    round of the exchange (peer_exchange.hpp; the round is halo_exchange.hpp,
//                    the file you edit); elsewhere NCCL send/receive between device buffers on
//                    that stream, or MPI between host buffers: CPU ranks, and GPU ranks without
//                    NCCL, which stage the rows through pinned host memory (the OpenMPI of the
//                    course's GPU machine is not CUDA-aware: MPI must not be given device
//                    pointers there; the program says what the MPI library reports)
//                    (mpi_nccl_exchange.hpp);
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
//
// This file and ranks.hpp are the lesson: the slabs and the exchange. The program around them is
// one of the course's programs (the README says where), plumbing you need not read: MPI's start,
// each rank's GPU and the exchange chosen from the flags (session.cpp), the command line and the
// ranks' agreement on it (options.cpp, agreement.cpp), the run as one stepper on rank 0 and its
// rounds of commands (follower.hpp), each rank's output (slab_output.hpp), the modes and the
// report (program.cpp).
#include "ranks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "gs/device_limits.hpp"
#include "gs/state.hpp"
#include "gs/timing.hpp"
#include "round_record.hpp"

// The exchanges through a library: MPI (CPU ranks, staged GPU ranks) and NCCL.
#include "mpi_nccl_exchange.hpp"

// The exercise: one round of the peer exchange (halo::exchange_round). Angle brackets: the build
// picks lessons/08_multi_gpu/halo_exchange.hpp (your stubs) or the solution's copy.
#include <halo_exchange.hpp>

#if GS_HAVE_CUDA
#include <cuda_runtime.h>

#include "gs/cuda_check.hpp"
#include "peer_exchange.hpp"  // the GPUs write each other's halos (GPU ranks on one node)
#endif

namespace GS_LESSON_NAMESPACE {

#if GS_HAVE_CUDA
#include "edge_first.hpp"  // the exchange behind the compute (GPU ranks, NCCL)
#endif

// ---------------------------------------------------------------------------------------------
// The decomposition
// ---------------------------------------------------------------------------------------------

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

std::string decomposition_problem(int rows, int ranks, int halo) {
  const int smallest = rows / ranks;
  if (ranks == 1 || smallest >= halo) return "";
  return std::to_string(rows) + " rows over " + std::to_string(ranks) + " ranks make slabs of " +
         std::to_string(smallest) + " rows, fewer than the halo of " + std::to_string(halo) +
         " rows (--halo, the steps between two exchanges): use at most " +
         std::to_string(std::max(1, rows / halo)) + (rows / halo > 1 ? " ranks" : " rank") +
         " for this grid, or a smaller --halo";
}

std::string recorded_rounds(int rounds) {
  std::string text;
  for (int done = 0; done < rounds; ++done) {
    round_record::Recorder block(static_cast<unsigned long long>(done));
    halo::exchange_round(block);
    // A round longer than the Recorder holds is printed cut at its size: the model refuses it.
    text += "done " + std::to_string(done) + ": " + round_record::round_text(block.steps()) + "\n";
  }
  return text;
}

// ---------------------------------------------------------------------------------------------
// One rank's slab: its stepper and the exchange
// ---------------------------------------------------------------------------------------------

template <typename Work>
void RankSlab::attempt(Work&& work) {
  if (failed()) return;
  try {
    work();
  } catch (const std::bad_alloc&) {
    failure_ = "out of memory";
  } catch (const std::exception& error) {
    failure_ = error.what()[0] != '\0' ? error.what() : "an unnamed error";
  }
}

RankSlab::RankSlab(const gs::Implementation& implementation, const HaloPlan& plan,
                   Transport transport, bool overlap)
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
  if (!gs::fields_of(*stepper_).available()) {
    throw std::invalid_argument("'" + implementation.name +
                                "' offers no view of its fields (gs::HoldsFields), which the "
                                "halo exchange needs; choose another with --impl");
  }
}

#if GS_HAVE_CUDA
namespace {

// Whether two ranks of `comm` run on the same GPU (a collective: every rank gets the same answer).
// NCCL refuses a communicator with two ranks on one GPU.
bool ranks_share_a_gpu(MPI_Comm comm) {
  constexpr int kBus = 32;
  char mine[kBus] = {};
  const std::string bus = peer::bus_of_this_rank();
  std::strncpy(mine, bus.c_str(), kBus - 1);
  const std::vector<char> all = peer::from_every_rank(mine, kBus, comm);
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::set<std::string> seen;
  for (int rank = 0; rank < size; ++rank) {
    if (!seen.insert(peer::entry(all, rank, kBus)).second) return true;
  }
  return false;
}

}  // namespace
#endif

std::pair<double, double> RankSlab::connect() {
  gs::Stopwatch clock;
#if GS_HAVE_CUDA
  if (transport_ == Transport::peer) {
    transport_note_ = PeerExchange::problem(plan_, MPI_COMM_WORLD);  // the same on every rank
    if (transport_note_.empty()) {
      peer_ = std::make_unique<PeerExchange>(plan_, gs::fields_of(*stepper_).pitch, MPI_COMM_WORLD);
    } else if (GS_HAVE_NCCL && !ranks_share_a_gpu(MPI_COMM_WORLD)) {
      transport_ = Transport::nccl;
    } else {  // NCCL refuses two ranks on one GPU: through host memory then
      transport_ = Transport::staged;
    }
  }
#endif
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
        edge_first_->load(gs::Rates{}, gs::fields_of(*stepper_));
        edge_first_->period(gs::fields_of(*stepper_));  // records its graph, NCCL's calls included
        GS_CUDA_CHECK(cudaStreamSynchronize(edge_first_->stream()));
      } catch (const std::invalid_argument& error) {
        overlap_note_ = error.what();
        edge_first_.reset();
      }
    }
  } else if (overlap_wanted_ && transport_ == Transport::staged) {
    overlap_note_ = "edge first needs NCCL";
  } else if (overlap_wanted_ && transport_ == Transport::peer) {
    overlap_note_ = "edge first is built on NCCL: --transport nccl";
  }
#else
  if (overlap_wanted_ && transport_ == Transport::staged) overlap_note_ = "edge first needs NCCL";
#endif
  return {communicator, clock.seconds()};
}

RankSlab::~RankSlab() {
#if GS_HAVE_CUDA
  peer_.reset();  // waits for its exchanges, unmaps the neighbours' mailboxes
#endif
#if GS_HAVE_NCCL
  edge_first_.reset();  // waits for its transfers, before the communicator goes
  if (nccl_ != nullptr) ncclCommDestroy(nccl_);
#endif
}

void RankSlab::load(const gs::State& extended, const gs::Rates& rates) {
  attempt([&] { stepper_->load(extended, rates); });
  steps_since_exchange_ = 0;  // the halos hold exact rows
#if GS_HAVE_NCCL
  if (edge_first_ != nullptr) {  // the first period starts at once, from the state loaded
    attempt([&] { edge_first_->load(rates, gs::fields_of(*stepper_)); });
    edge_first_->period(gs::fields_of(*stepper_));
  }
#endif
}

void RankSlab::advance(int steps) {
  while (steps > 0) {
    if (!overlapped() && steps_since_exchange_ == plan_.halo) exchange();
    const int now = std::min(steps, plan_.halo - steps_since_exchange_);
    attempt([&] { stepper_->advance(now); });
    steps_since_exchange_ += now;
    steps -= now;
#if GS_HAVE_NCCL
    if (overlapped() && steps_since_exchange_ == plan_.halo) {
      edge_first_->period(gs::fields_of(*stepper_));
      steps_since_exchange_ = 0;
    }
#endif
  }
}

void RankSlab::exchange() {
  const gs::FieldView view = gs::fields_of(*stepper_);
  if (!view.available()) throw std::logic_error("the stepper's fields are gone: no exchange");
  if (view.device == gs::Device::cpu) {
    exchange_with_mpi(plan_, view.u, view.pitch, MPI_COMM_WORLD);
    exchange_with_mpi(plan_, view.v, view.pitch, MPI_COMM_WORLD);
  } else {
    exchange_on_gpu(view);
  }
  steps_since_exchange_ = 0;
}

void RankSlab::synchronize() {
  attempt([&] { stepper_->synchronize(); });
}

void RankSlab::own_rows(std::vector<float>& u, std::vector<float>& v, bool with_u) {
  gs::State state(extended_rows(), plan_.cols);
  attempt([&] { stepper_->fetch(state); });
  const std::size_t first = static_cast<std::size_t>(plan_.top) * plan_.cols;
  const std::size_t count = static_cast<std::size_t>(plan_.rows) * plan_.cols;
  v.assign(state.v.begin() + first, state.v.begin() + first + count);
  if (with_u) u.assign(state.u.begin() + first, state.u.begin() + first + count);
}

void RankSlab::own_v(std::vector<float>& v) {
  extended_v_.resize(static_cast<std::size_t>(extended_rows()) * plan_.cols);
  attempt([&] { stepper_->fetch_v(extended_v_.data()); });
  const std::size_t first = static_cast<std::size_t>(plan_.top) * plan_.cols;
  v.assign(extended_v_.begin() + first,
           extended_v_.begin() + first + static_cast<std::size_t>(plan_.rows) * plan_.cols);
}

void RankSlab::whole(gs::State& state) {
  stepper_->fetch(state);
}

void RankSlab::exchange_on_gpu([[maybe_unused]] const gs::FieldView& view) {
#if GS_HAVE_CUDA
  const auto stream = static_cast<cudaStream_t>(view.stream);
  if (transport_ == Transport::peer) {
    peer_->exchange(view);
    return;
  }
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
void RankSlab::init_nccl() {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ncclUniqueId id{};
  if (rank == 0) GS_NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  GS_NCCL_CHECK(ncclCommInitRank(&nccl_, size, id, rank));
}
#endif

#if GS_HAVE_CUDA
void RankSlab::PinnedFree::operator()(float* pointer) const {
  cudaFreeHost(pointer);
}
#endif

}  // namespace GS_LESSON_NAMESPACE
