// Lesson 08's grading: the peer exchange's round walked on a model of the ranks. The lesson's
// program prints its round (`protocol`: round_record.hpp's Recorder plays halo_exchange.hpp, the
// learner's file, for blocks that have finished 0, 1, ... rounds); the grade's judge
// (apps/gs_judge.cpp, `ranks-protocol`) reads that text back, and the lesson's point test
// (tests/point/lesson08_point.hpp) records the round itself; both walk it here, on two and on
// three ranks, each running kernel after kernel, through every order in which the ranks'
// operations can interleave. Neither needs a GPU.
//
// The model, which is what the GPUs guarantee and no more:
//   - a rank runs its kernels one after another (one stream), and a kernel's operations in the
//     order the round calls them; two ranks' operations interleave in any order;
//   - post(slot) writes this kernel's boundary rows into slot `slot` of each neighbour's
//     mailbox (slots 0 and 1: the mailbox has two); the rows are not yet visible to the
//     neighbour: another GPU may see them late, or in part;
//   - fence() makes every row this rank posted so far visible to every GPU;
//   - signal(n) sets this rank's flag in each neighbour's memory to n;
//   - wait_for(n) returns once each neighbour's flag in this rank's memory is n or more (it may
//     wait forever: a deadlock is a failure);
//   - unpack(slot) reads slot `slot` of this rank's mailbox into its halos: it must find, from
//     each neighbour, rows of this same kernel (the neighbour's kernel of the same count), visible;
//     the block's threads are done reading only at its next barrier (fence(), the end of
//     wait_for(), finish(), the kernel's end): a flag raised before that may reach a neighbour
//     while some threads still read;
//   - done() is the rounds this block has finished (device memory: it starts at 0), read at the
//     start of the kernel; finish(n) sets it to n for the next kernel, and is the round's last
//     operation.
// Two rules more: rows posted into a slot must not replace rows the neighbour has not finished
// reading, and every kernel posts to each neighbour and unpacks from each neighbour.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "round_record.hpp"  // lessons/08_multi_gpu/: Op, Step, Recorder

namespace round_check {

using round_record::Op;
using round_record::op_name;
using round_record::Recorder;
using round_record::Step;

/// round_text() read back; false when the text is not a round.
inline bool parse_round(const std::string& text, std::vector<Step>& steps) {
  steps.clear();
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ';')) {
    std::istringstream words(item);
    std::string name;
    if (!(words >> name)) continue;
    Step step{Op::fence, 0};
    bool known = false;
    for (const Op op : {Op::post, Op::fence, Op::signal, Op::wait_for, Op::unpack, Op::finish}) {
      if (name == op_name(op)) {
        step.op = op;
        known = true;
      }
    }
    if (!known) return false;
    if (step.op != Op::fence && !(words >> step.value)) return false;
    steps.push_back(step);
  }
  return true;
}

/// What a rank's block does in its next kernel, given the rounds it has finished.
using RoundOf = std::function<std::vector<Step>(unsigned long long done)>;

namespace detail {

// One mailbox slot of one side (from the rank above, or from below) of one rank.
struct Slot {
  int kernel = 0;        // the poster's kernel count (1, 2, ...) of the rows there; 0: none yet
  bool visible = false;  // fenced by the poster
  bool read = true;      // unpacked by the owner (nothing there counts as read)
};

struct Rank {
  int kernel = 1;               // the kernel running (1, 2, ...); past the last: finished
  int step = 0;                 // the next operation of the running kernel
  unsigned long long done = 0;  // what done() answers in the running kernel (read at its start)
  unsigned long long next = 0;  // what finish() set, for the next kernel
  bool finished = false;        // finish() was called in the running kernel
  bool posted = false;
  int unpacked = 0;                           // sides unpacked in the running kernel
  unsigned long long flag[2] = {0, 0};        // set by the rank above ([0]) and below ([1])
  Slot mailbox[2][2];                         // [side][slot]
  std::vector<std::pair<int, int>> unfenced;  // (neighbour, slot) posted, not yet fenced
  std::vector<std::pair<int, int>> reading;   // (side, slot) unpacked, before the block's barrier
  auto key() const {
    std::vector<int> slots;
    for (const auto& side : mailbox) {
      for (const Slot& s : side) {
        slots.push_back(s.kernel);
        slots.push_back(s.visible ? 1 : 0);
        slots.push_back(s.read ? 1 : 0);
      }
    }
    return std::tuple(kernel, step, done, next, finished, posted, unpacked, flag[0], flag[1], slots,
                      unfenced, reading);
  }
};

}  // namespace detail

/// @brief Walks `ranks` ranks (a column of slabs: rank r's neighbours are r - 1 and r + 1) running
///        `kernels` exchange kernels each, the rounds drawn from `round_of`, through every order
///        in which their operations can interleave. Returns "" when every order keeps the
///        contract, else what went wrong in the first order found that breaks it, and how it got
///        there.
inline std::string check(const RoundOf& round_of, int ranks, int kernels) {
  using detail::Rank;
  std::map<unsigned long long, std::vector<Step>> rounds;  // round_of(done), asked once each
  std::string trouble;
  auto round_for = [&](unsigned long long done) -> const std::vector<Step>& {
    auto found = rounds.find(done);
    if (found == rounds.end()) found = rounds.emplace(done, round_of(done)).first;
    return found->second;
  };
  std::set<std::vector<decltype(Rank{}.key())>> seen;
  std::vector<std::string> path;

  // A barrier of rank `r`'s block: every thread has finished reading what it unpacked.
  auto barrier = [](Rank& me) {
    for (const auto& [side, slot] : me.reading) me.mailbox[side][slot].read = true;
    me.reading.clear();
  };

  // The state after rank `r` takes its next operation; "" or what broke.
  auto take = [&](std::vector<Rank>& state, int r) -> std::string {
    Rank& me = state[r];
    const std::string who = "rank " + std::to_string(r) + ", kernel " + std::to_string(me.kernel);
    const std::vector<Step>& round = round_for(me.done);
    const int neighbours[2] = {r - 1, r + 1 < ranks ? r + 1 : -1};
    const int sides_expected = (neighbours[0] >= 0 ? 1 : 0) + (neighbours[1] >= 0 ? 1 : 0);
    if (me.step == static_cast<int>(round.size())) {  // the kernel ends
      if (!me.posted) return who + ": ended without posting its rows to its neighbours";
      if (me.unpacked < sides_expected) {
        return who + ": ended without unpacking its neighbours' rows into its halos";
      }
      barrier(me);
      me.kernel += 1;
      me.step = 0;
      me.posted = false;
      me.unpacked = 0;
      me.done = me.next;  // the next kernel reads what finish() stored
      me.finished = false;
      return "";
    }
    const Step step = round[static_cast<std::size_t>(me.step)];
    me.step += 1;
    if (me.finished) {
      return who + ": " + op_name(step.op) +
             " after finish(): finish() must be the round's last operation (the count it stores "
             "is the next kernel's)";
    }
    path.push_back("rank " + std::to_string(r) + " k" + std::to_string(me.kernel) + ": " +
                   op_name(step.op) +
                   (step.op == Op::fence ? "" : " " + std::to_string(step.value)));
    switch (step.op) {
      case Op::post: {
        if (step.value > 1)
          return who + ": post(" + std::to_string(step.value) + "): the mailbox has slots 0 and 1";
        me.posted = true;
        const int slot = static_cast<int>(step.value);
        for (int side = 0; side < 2; ++side) {
          const int other = neighbours[side];
          if (other < 0) continue;
          // My rows land on the other rank's side that faces me: I am below the rank above.
          detail::Slot& target = state[other].mailbox[side == 0 ? 1 : 0][slot];
          if (!target.read) {
            const Rank& owner = state[other];
            const bool unpacking =
                std::find(owner.reading.begin(), owner.reading.end(),
                          std::pair<int, int>{side == 0 ? 1 : 0, slot}) != owner.reading.end();
            return who + ": posted into slot " + std::to_string(slot) + " of rank " +
                   std::to_string(other) + "'s mailbox, which still held the rows of kernel " +
                   std::to_string(target.kernel) + " that rank " + std::to_string(other) +
                   (unpacking ? " was still reading (unpacked, but its block has passed no "
                                "barrier since: fence(), wait_for(), finish())"
                              : " had not unpacked yet") +
                   ": they are lost";
          }
          target = detail::Slot{me.kernel, false, false};
          me.unfenced.emplace_back(other, slot);
        }
        return "";
      }
      case Op::fence:
        barrier(me);
        for (const auto& [other, slot] : me.unfenced) {
          const int side = other < r ? 1 : 0;
          detail::Slot& target = state[other].mailbox[side][slot];
          if (target.kernel == me.kernel) target.visible = true;
        }
        me.unfenced.clear();
        return "";
      case Op::signal:
        if (neighbours[0] >= 0) state[neighbours[0]].flag[1] = step.value;
        if (neighbours[1] >= 0) state[neighbours[1]].flag[0] = step.value;
        return "";
      case Op::wait_for:
        barrier(me);  // taken only when it can return (see below); it ends with a barrier
        return "";
      case Op::unpack: {
        if (step.value > 1)
          return who + ": unpack(" + std::to_string(step.value) +
                 "): the mailbox has slots 0 and 1";
        for (int side = 0; side < 2; ++side) {
          if (neighbours[side] < 0) continue;
          detail::Slot& source = me.mailbox[side][step.value];
          const std::string from = "rank " + std::to_string(neighbours[side]);
          if (source.kernel != me.kernel) {
            return who + ": unpacked slot " + std::to_string(step.value) + " from " + from +
                   " and found " +
                   (source.kernel == 0
                        ? std::string("nothing posted yet")
                        : "the rows of its kernel " + std::to_string(source.kernel)) +
                   ", not those of its kernel " + std::to_string(me.kernel);
          }
          if (!source.visible) {
            return who + ": unpacked the rows of " + from +
                   " before they were fenced: another GPU may see them late, or in part";
          }
          me.reading.emplace_back(side, static_cast<int>(step.value));
        }
        me.unpacked = sides_expected;
        return "";
      }
      case Op::finish:
        barrier(me);
        me.next = step.value;
        me.finished = true;
        return "";
    }
    return "";
  };

  // Whether rank `r` can take its next operation now (a wait returns only once its flags say so).
  auto can_move = [&](const std::vector<Rank>& state, int r) {
    const Rank& me = state[r];
    if (me.kernel > kernels) return false;
    const std::vector<Step>& round = round_for(me.done);
    if (me.step == static_cast<int>(round.size())) return true;
    const Step& step = round[static_cast<std::size_t>(me.step)];
    if (step.op != Op::wait_for) return true;
    const bool above = r > 0, below = r + 1 < ranks;
    return (!above || me.flag[0] >= step.value) && (!below || me.flag[1] >= step.value);
  };

  std::function<void(const std::vector<Rank>&)> walk = [&](const std::vector<Rank>& state) {
    if (!trouble.empty()) return;
    std::vector<decltype(Rank{}.key())> key;
    for (const Rank& rank : state) key.push_back(rank.key());
    if (!seen.insert(key).second) return;
    bool finished = true, moved = false;
    for (int r = 0; r < ranks && trouble.empty(); ++r) {
      if (state[r].kernel <= kernels) finished = false;
      if (!can_move(state, r)) continue;
      moved = true;
      std::vector<Rank> next = state;
      const std::size_t depth = path.size();
      trouble = take(next, r);
      if (trouble.empty()) walk(next);
      if (trouble.empty()) path.resize(depth);
    }
    if (trouble.empty() && !finished && !moved) {
      std::string waiting;
      for (int r = 0; r < ranks; ++r) {
        if (state[r].kernel <= kernels) {
          waiting += (waiting.empty() ? "" : ", ") + std::string("rank ") + std::to_string(r);
        }
      }
      trouble = "deadlock: " + waiting + " wait for flags that no rank will ever set";
    }
  };

  // A round must be a finite list: more than a Recorder holds is refused before the walk.
  for (unsigned long long done = 0; done <= static_cast<unsigned long long>(kernels); ++done) {
    if (round_for(done).size() >= static_cast<std::size_t>(Recorder::kMaxSteps)) {
      return "the round of a block that finished " + std::to_string(done) + " rounds has " +
             std::to_string(round_for(done).size()) + " operations or more";
    }
  }
  walk(std::vector<Rank>(static_cast<std::size_t>(ranks)));
  if (trouble.empty()) return "";
  if (path.empty()) return trouble;
  std::string how = trouble + "\n  the order that breaks it (each rank's operations so far):";
  const std::size_t first = path.size() > 40 ? path.size() - 40 : 0;
  for (std::size_t i = first; i < path.size(); ++i) how += "\n    " + path[i];
  return how;
}

/// The rounds of the Block's round function `round`, recorded: what check() walks.
template <typename RoundFunction>
RoundOf recorded(RoundFunction round) {
  return [round](unsigned long long done) {
    Recorder recorder(done);
    round(recorder);
    std::vector<Step> steps = recorder.steps();
    if (recorder.overflowed()) steps.resize(Recorder::kMaxSteps);
    return steps;
  };
}

/// The walks the point test and the judge both take: two ranks and three (a middle rank has two
/// neighbours), six exchange kernels in a row each.
inline constexpr int kRanksWalked[] = {2, 3};
inline constexpr int kKernelsWalked = 6;

/// check() on each count of kRanksWalked, kKernelsWalked kernels each: "" when the round keeps
/// the contract on all of them, else what broke first, after its count of ranks ("3 ranks: ...").
inline std::string check_contract(const RoundOf& round_of) {
  for (const int ranks : kRanksWalked) {
    const std::string trouble = check(round_of, ranks, kKernelsWalked);
    if (!trouble.empty()) return std::to_string(ranks) + " ranks: " + trouble;
  }
  return "";
}

}  // namespace round_check
