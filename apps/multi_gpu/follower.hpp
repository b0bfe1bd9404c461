// Lesson 08's program plumbing (you need not read it for the exercise): the whole run as one
// gs::Stepper on rank 0, whose frame loop writes the frames, while the other ranks follow its
// commands (load, advance, fetch) and every round of commands tells every rank whether some rank
// must stop.
#pragma once

#include <mpi.h>

#include <climits>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "agreement.hpp"
#include "gs/interrupt.hpp"
#include "gs/state.hpp"
#include "gs/stepper.hpp"
#include "ranks.hpp"  // lessons/08_multi_gpu/
#include "slab_output.hpp"

namespace GS_LESSON_NAMESPACE {

// kCheck computes nothing: it is a round that only asks every rank whether it may go on.
// kOpenOutput, kWriteOwn (steps: the frame) and kCloseOutput: each rank writes its own rows
// (slab_output.hpp).
enum Command : int {
  kLoad,
  kAdvance,
  kFetchV,
  kFetch,
  kSynchronize,
  kCheck,
  kStop,
  kOpenOutput,
  kWriteOwn,
  kCloseOutput
};

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
    const bool mine = gs::pending_signal() != 0 || slab_.failed() || !output_failure_.empty() ||
                      (output_ != nullptr && !output_->failure().empty());
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
    if (!output_failure().empty()) throw std::runtime_error(output_failure());
    throw RanksStopped();
  }

  // This rank's failure to write its rows (slab_output.hpp), or "".
  std::string output_failure() const {
    if (!output_failure_.empty()) return output_failure_;
    return output_ != nullptr ? output_->failure() : "";
  }
  // Rank 0, before kOpenOutput: what to tell every rank about the file.
  void set_output(const OutputPlace& place, std::vector<std::int64_t> offsets) {
    place_ = place;
    offsets_ = std::move(offsets);
  }
  // Seconds this rank's writer spent writing (after kCloseOutput), its writeback, and the time
  // (and the times) the computing thread waited for a free slot.
  double write_seconds() const { return write_seconds_; }
  const gs::WritebackStats& writeback() const { return writeback_; }
  double slot_wait_seconds() const { return slot_wait_seconds_; }
  int slot_waits() const { return slot_waits_; }

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
    if (!output_failure().empty())
      return stop_with(gs::kExitFailure, rank + "error: " + output_failure() + ending);
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
      case kOpenOutput: {
        MPI_Bcast(&place_, sizeof place_, MPI_BYTE, 0, MPI_COMM_WORLD);
        offsets_.resize(static_cast<std::size_t>(place_.frames));
        MPI_Bcast(offsets_.data(), place_.frames, MPI_INT64_T, 0, MPI_COMM_WORLD);
        const std::int64_t row_bytes = std::int64_t{cols} * std::int64_t{sizeof(float)};
        const int first = decomposition_.own_offsets()[static_cast<std::size_t>(rank_)] / cols;
        const int rows = decomposition_.own_counts()[static_cast<std::size_t>(rank_)] / cols;
        try {
          output_ =
              std::make_unique<RankOutput>(place_, offsets_, first * row_bytes, rows * row_bytes);
        } catch (const std::exception& error) {
          output_failure_ = error.what();
        }
        break;
      }
      case kWriteOwn: {
        if (output_ == nullptr || !output_failure().empty()) break;
        std::vector<float> rows;
        slab_.own_v(rows);
        if (slab_.failed()) break;
        for (std::size_t i = 0; i < rows.size(); ++i) {
          if (!std::isfinite(rows[i])) {
            output_failure_ = "the simulation diverged at frame " +
                              std::to_string(message.steps + 1) +
                              ": v is not finite in this rank's rows; choose smaller rates or "
                              "time step";
            break;
          }
        }
        if (output_failure_.empty()) {
          slot_wait_seconds_ += output_->queue(message.steps, std::move(rows));
        }
        break;
      }
      case kCloseOutput:
        if (output_ != nullptr) {
          const std::string failure = output_->finish();
          if (!failure.empty() && output_failure_.empty()) output_failure_ = failure;
          write_seconds_ = output_->seconds();
          writeback_ = output_->writeback();
          slot_waits_ = output_->waits();
          output_.reset();  // the writer thread joined, the descriptor closed
        }
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
  OutputPlace place_{};
  std::vector<std::int64_t> offsets_;
  std::unique_ptr<RankOutput> output_;  // this rank's writer, between kOpenOutput and kCloseOutput
  std::string output_failure_;
  double write_seconds_ = 0.0;
  gs::WritebackStats writeback_;
  double slot_wait_seconds_ = 0.0;
  int slot_waits_ = 0;
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

  // Each rank writes its own rows (slab_output.hpp): the file opened on every rank, one frame's
  // rows handed to every rank's writer, every writer waited for (and a round that says whether
  // all of them wrote everything).
  void open_output(const OutputPlace& place, std::vector<std::int64_t> offsets) {
    leader_.set_output(place, std::move(offsets));
    command({kOpenOutput, 0}, nullptr, nullptr, nullptr);
  }
  void write_own(int frame) { command({kWriteOwn, frame}, nullptr, nullptr, nullptr); }
  void close_output() {
    command({kCloseOutput, 0}, nullptr, nullptr, nullptr);
    command({kCheck, 0}, nullptr, nullptr, nullptr);  // every rank's writer finished well
  }

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
    if (!leader_.output_failure().empty()) throw std::runtime_error(leader_.output_failure());
  }
  Follower& leader_;
};

// ---------------------------------------------------------------------------------------------

}  // namespace GS_LESSON_NAMESPACE
