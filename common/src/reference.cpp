// The reference time loops: two buffers, one step, swap.
#include "gs/reference.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace gs {

void reference_advance(State& state, const Rates& rates, int steps) {
  State next(state.rows, state.cols);
  for (int step = 0; step < steps; ++step) {
    reference_step(state.rows, state.cols, state.u.data(), state.v.data(), next.u.data(),
                   next.v.data(), rates);
    std::swap(state.u, next.u);
    std::swap(state.v, next.v);
  }
}

void reference_advance_in_double(State& state, const Rates& rates, int steps) {
  const std::size_t cells = state.size();
  std::vector<double> u(cells), v(cells), u_next(cells), v_next(cells);
  for (int step = 0; step < steps; ++step) {
    std::copy(state.u.begin(), state.u.end(), u.begin());
    std::copy(state.v.begin(), state.v.end(), v.begin());
    reference_step(state.rows, state.cols, u.data(), v.data(), u_next.data(), v_next.data(), rates);
    std::transform(u_next.begin(), u_next.end(), state.u.begin(),
                   [](double x) { return static_cast<float>(x); });
    std::transform(v_next.begin(), v_next.end(), state.v.begin(),
                   [](double x) { return static_cast<float>(x); });
  }
}

}  // namespace gs
