// The default fetch_v, the unit-stencil check, and the reference implementation as a Stepper.
#include "gs/stepper.hpp"

#include <algorithm>

#include "gs/reference.hpp"

namespace gs {

void Stepper::fetch_v(float* v) {
  State state;
  fetch(state);
  std::copy(state.v.begin(), state.v.end(), v);
}

void require_unit_stencil(const Rates& rates, const std::string& implementation) {
  if (is_unit_stencil(rates.weights)) return;
  throw InvalidParameter(implementation +
                         " hard-codes the unit 3x3 stencil (all nine weights 1) and cannot take "
                         "other weights; use a generic implementation (see --list)");
}

namespace {

class ReferenceStepper final : public Stepper, public HoldsFields {
 public:
  void load(const State& state, const Rates& rates) override {
    state_ = state;
    rates_ = rates;
  }
  void advance(int steps) override { reference_advance(state_, rates_, steps); }
  void fetch(State& state) override { state = state_; }
  void fetch_v(float* v) override { std::copy(state_.v.begin(), state_.v.end(), v); }
  FieldView fields() override {
    return {state_.u.data(), state_.v.data(), state_.cols, state_.rows,
            state_.cols,     Device::cpu,     nullptr};
  }

 private:
  State state_;
  Rates rates_;
};

}  // namespace

Implementation reference_implementation() {
  return {"reference",
          "common",
          "the scalar reference of common/ (the tests' oracle)",
          Device::cpu,
          [] { return std::make_unique<ReferenceStepper>(); },
          true};
}

const Implementation* find_implementation(const std::vector<Implementation>& implementations,
                                          const std::string& name) {
  const auto found = std::find_if(implementations.begin(), implementations.end(),
                                  [&](const Implementation& impl) { return impl.name == name; });
  return found == implementations.end() ? nullptr : &*found;
}

}  // namespace gs
