// The default fetch_v, and the reference implementation as a Stepper.
#include "gs/stepper.hpp"

#include <algorithm>

#include "gs/reference.hpp"

namespace gs {

void Stepper::fetch_v(float* v) {
  State state;
  fetch(state);
  std::copy(state.v.begin(), state.v.end(), v);
}

namespace {

class ReferenceStepper final : public Stepper {
 public:
  void load(const State& state, const Params& params) override {
    state_ = state;
    params_ = params;
  }
  void advance(int steps) override { reference_advance(state_, params_, steps); }
  void fetch(State& state) override { state = state_; }
  void fetch_v(float* v) override { std::copy(state_.v.begin(), state_.v.end(), v); }

 private:
  State state_;
  Params params_;
};

}  // namespace

Implementation reference_implementation() {
  return {"reference", "common", "the scalar reference of common/ (the tests' oracle)", Device::cpu,
          [] { return std::make_unique<ReferenceStepper>(); }};
}

const Implementation* find_implementation(const std::vector<Implementation>& implementations,
                                          const std::string& name) {
  const auto found = std::find_if(implementations.begin(), implementations.end(),
                                  [&](const Implementation& impl) { return impl.name == name; });
  return found == implementations.end() ? nullptr : &*found;
}

}  // namespace gs
