// Lesson 08: the ranks and their slabs, what ranks.cpp defines (its opening comment tells the
// whole lesson). The program around them (one of the course's programs) uses only what is
// declared here.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "exchange_api.hpp"  // HaloPlan
#include "gs/stepper.hpp"

#if GS_HAVE_NCCL
#include <nccl.h>
#endif

namespace GS_LESSON_NAMESPACE {

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
RowRange slab_of(int rows, int ranks, int rank);

HaloPlan plan_of(int rows, int cols, int ranks, int rank, int halo);

// Why `ranks` ranks cannot share `rows` rows with halos of `halo` rows, or "" when they can: a
// rank's halo comes from its neighbour's own rows alone, so every slab needs at least `halo`.
std::string decomposition_problem(int rows, int ranks, int halo);

// The round of the peer exchange (halo_exchange.hpp), written down for a block that has finished
// 0, 1, ... `rounds` - 1 rounds: one line each, "done N: post 1; fence; ...". What the program's
// `protocol` mode prints (round_record.hpp), for the judge to walk on its model of the ranks.
std::string recorded_rounds(int rounds);

// The exchange between ranks (README, section 5), which the program chooses from its flags.
enum class Transport { host, staged, nccl, peer };

// ---------------------------------------------------------------------------------------------
// One rank's slab: its stepper and the exchange
// ---------------------------------------------------------------------------------------------

class EdgeFirst;     // edge_first.hpp
class PeerExchange;  // peer_exchange.hpp

class RankSlab {
 public:
  // Creates this rank's stepper and checks, on this rank alone, that it offers the view of its
  // fields that the exchange needs (std::invalid_argument if not), before any rank starts.
  RankSlab(const gs::Implementation& implementation, const HaloPlan& plan, Transport transport,
           bool overlap);
  // The ranks' connections for the exchange, a collective of every rank, made once every rank
  // has said that it can start: NCCL's communicator (GPU ranks), then one exchange of each kind
  // the run will make, waited for. NCCL connects a pair of ranks at their first transfer (tenths
  // of a second; the README's Results), MPI its shared-memory or network channels at the first
  // message, and the staged exchange allocates its pinned buffer at the first one: paid here,
  // measured and reported on its own line, never inside the timed frames.
  // Returns the seconds: {communicator, first exchanges}.
  // The peer exchange is checked here (every rank's GPU must reach its neighbours'): when it
  // cannot run, the slab falls back to NCCL (or MPI through host memory) and transport_note()
  // says why.
  std::pair<double, double> connect();
  // The exchange the ranks use (after connect(): peer may have fallen back), and why it is not
  // the one asked for ("" when it is).
  Transport transport() const { return transport_; }
  const std::string& transport_note() const { return transport_note_; }
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
  ~RankSlab();
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
  void load(const gs::State& extended, const gs::Rates& rates);

  // `steps` steps, exchanging the halos whenever `halo` steps were made since the last exchange.
  // Edge first, the exchange of a period runs during its steps: when a period ends, the next one
  // starts at once (its strips, then its exchange, queued behind the slab's steps on the GPU), so
  // the host's pauses between frames do not hold it back.
  void advance(int steps);

  void exchange();

  void synchronize();

  // This rank's own rows of v (or of u and v), rows * cols values each (after a failure, rows of
  // the right size that no one will use: the next round stops the run).
  void own_rows(std::vector<float>& u, std::vector<float>& v, bool with_u);
  void own_v(std::vector<float>& v);

  // Everything the rank holds, halos included (exchange-check).
  void whole(gs::State& state);

 private:
  template <typename Work>
  void attempt(Work&& work);

  void exchange_on_gpu(const gs::FieldView& view);

#if GS_HAVE_NCCL
  std::unique_ptr<EdgeFirst> edge_first_;  // the exchange behind the compute, or none
  // One NCCL communicator over all ranks, bootstrapped through MPI: rank 0 makes the unique id,
  // every rank receives it and joins.
  void init_nccl();
  ncclComm_t nccl_ = nullptr;
#endif

#if GS_HAVE_CUDA
  std::unique_ptr<PeerExchange> peer_;  // the GPUs write each other's halos, or none
  struct PinnedFree {
    void operator()(float* pointer) const;
  };
  std::unique_ptr<float, PinnedFree> staging_;
#endif
  const gs::Implementation& implementation_;
  HaloPlan plan_;
  Transport transport_;
  std::string transport_note_;  // why the exchange is not the one asked for
  bool overlap_wanted_;
  std::string overlap_note_;  // why the exchange is not behind the compute, when it was wanted
  std::unique_ptr<gs::Stepper> stepper_;
  int steps_since_exchange_ = 0;
  std::vector<float> extended_v_;
  std::string failure_;
};

}  // namespace GS_LESSON_NAMESPACE
