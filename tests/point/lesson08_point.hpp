// Lesson 08's point, shared by its suites and its fixtures' test: the round of the peer exchange
// (halo::exchange_round, halo_exchange.hpp) written down by a Recorder and walked on the model of
// the ranks (tests/judge/round_check.hpp, the walk the grade's judge takes too) through every
// order in which the operations of two and of three ranks can interleave, six exchanges in a row.
// No GPU: the contract is checked where a GPU run would show a lost or half-seen row once in many
// runs, if ever.
#pragma once

#include <halo_exchange.hpp>
#include <string>

#include "round_check.hpp"

namespace lesson08_point {

/// "" when the round keeps the contract on two and on three ranks, else what broke, and how.
inline std::string check_round() {
  return round_check::check_contract(
      round_check::recorded([](round_check::Recorder& block) { halo::exchange_round(block); }));
}

}  // namespace lesson08_point
