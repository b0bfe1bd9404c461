// Lesson 08's point, shared by its suites and its fixtures' test: the round of the peer exchange
// (halo::exchange_round, halo_exchange.hpp) written down by a Recorder and walked on the model of
// the ranks (lessons/08_multi_gpu/round_model.hpp) through every order in which the operations
// of two and of three ranks can interleave, six exchanges in a row. No GPU: the contract is
// checked where a GPU run would show a lost or half-seen row once in many runs, if ever.
#pragma once

#include <halo_exchange.hpp>
#include <string>

#include "round_model.hpp"

namespace lesson08_point {

/// "" when the round keeps the contract on two and on three ranks, else what broke, and how.
inline std::string check_round() {
  const round_model::RoundOf round =
      round_model::recorded([](round_model::Recorder& block) { halo::exchange_round(block); });
  for (const int ranks : {2, 3}) {
    const std::string trouble = round_model::check(round, ranks, 6);
    if (!trouble.empty()) return std::to_string(ranks) + " ranks: " + trouble;
  }
  return "";
}

}  // namespace lesson08_point
