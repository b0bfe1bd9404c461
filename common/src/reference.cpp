// The reference time loop: two buffers, one step, swap.
#include "gs/reference.hpp"

#include <utility>

namespace gs {

void reference_advance(State& state, const Params& params, int steps) {
  State next(state.rows, state.cols);
  for (int step = 0; step < steps; ++step) {
    reference_step(state.rows, state.cols, state.u.data(), state.v.data(), next.u.data(),
                   next.v.data(), params);
    std::swap(state.u, next.u);
    std::swap(state.v, next.v);
  }
}

}  // namespace gs
