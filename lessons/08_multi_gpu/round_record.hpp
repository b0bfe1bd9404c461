// Lesson 08: a round of the peer exchange, written down. A Recorder is a Block (exchange_api.hpp)
// that does nothing but note the operations the round calls, in order. The program's `protocol`
// mode plays the round of halo_exchange.hpp on one for blocks that have finished 0, 1, ... rounds
// (recorded_rounds(), ranks.cpp) and prints each as text; the grade's judge and the lesson's point
// test walk what it wrote on a model of two and three ranks, through every order in which their
// operations can interleave (tests/judge/round_check.hpp: the model, what the GPUs guarantee and
// no more, and the walk). Neither needs a GPU.
#pragma once

#include <string>
#include <vector>

#include "gs/host_device.hpp"

namespace round_record {

enum class Op : int { post, fence, signal, wait_for, unpack, finish };

struct Step {
  Op op;
  unsigned long long value;  // the slot (post, unpack), the round (signal, wait_for, finish)
};

inline const char* op_name(Op op) {
  switch (op) {
    case Op::post:
      return "post";
    case Op::fence:
      return "fence";
    case Op::signal:
      return "signal";
    case Op::wait_for:
      return "wait_for";
    case Op::unpack:
      return "unpack";
    case Op::finish:
      return "finish";
  }
  return "?";
}

/// @brief A Block that does nothing but write down the operations of one round, in order: the
///        block of a rank that has finished `done` rounds. Fixed storage, so that nvcc accepts
///        it where the round is a __host__ __device__ template.
class Recorder {
 public:
  static constexpr int kMaxSteps = 32;
  GS_HOST_DEVICE explicit Recorder(unsigned long long done) : done_(done) {}
  GS_HOST_DEVICE unsigned long long done() const { return done_; }
  GS_HOST_DEVICE void post(int slot) { add(Op::post, static_cast<unsigned long long>(slot)); }
  GS_HOST_DEVICE void fence() { add(Op::fence, 0); }
  GS_HOST_DEVICE void signal(unsigned long long round) { add(Op::signal, round); }
  GS_HOST_DEVICE void wait_for(unsigned long long round) { add(Op::wait_for, round); }
  GS_HOST_DEVICE void unpack(int slot) { add(Op::unpack, static_cast<unsigned long long>(slot)); }
  GS_HOST_DEVICE void finish(unsigned long long round) { add(Op::finish, round); }

  /// The operations recorded (at most kMaxSteps; overflowed() says whether there were more).
  std::vector<Step> steps() const { return {steps_, steps_ + count_}; }
  bool overflowed() const { return overflowed_; }

 private:
  GS_HOST_DEVICE void add(Op op, unsigned long long value) {
    if (count_ == kMaxSteps) {
      overflowed_ = true;
      return;
    }
    steps_[count_++] = Step{op, value};
  }
  unsigned long long done_;
  Step steps_[kMaxSteps] = {};
  int count_ = 0;
  bool overflowed_ = false;
};

/// One round as text: "post 1; fence; signal 1; ..." (the lesson program's `protocol` mode
/// prints it; the judge reads it back, round_check::parse_round()).
inline std::string round_text(const std::vector<Step>& steps) {
  std::string text;
  for (const Step& step : steps) {
    if (!text.empty()) text += "; ";
    text += op_name(step.op);
    if (step.op != Op::fence) text += " " + std::to_string(step.value);
  }
  return text;
}

}  // namespace round_record
