// The canonical initial condition and reproducible random states.
#include "gs/state.hpp"

#include "gs/params.hpp"

#include <algorithm>
#include <cstdint>

namespace gs {

State::State(int rows_, int cols_, float u_value, float v_value)
    : rows(rows_),
      cols(cols_),
      u(static_cast<std::size_t>(rows_) * static_cast<std::size_t>(cols_), u_value),
      v(static_cast<std::size_t>(rows_) * static_cast<std::size_t>(cols_), v_value) {}

SeedBox seed_box(int rows, int cols) {
  SeedBox box{};
  box.row_begin = std::max(0, 7 * rows / 16 - 4);
  box.row_end = std::max(0, 8 * rows / 16 - 4);
  box.col_begin = 7 * cols / 16;
  box.col_end = 8 * cols / 16;
  return box;
}

State initial_state(int rows, int cols) {
  State state(rows, cols, 1.0f, 0.0f);
  const SeedBox box = seed_box(rows, cols);
  for (int row = box.row_begin; row < box.row_end; ++row) {
    for (int col = box.col_begin; col < box.col_end; ++col) {
      state.u[state.index(row, col)] = 0.0f;
      state.v[state.index(row, col)] = 1.0f;
    }
  }
  return state;
}

namespace {

// SplitMix64: a tiny generator whose output is fixed by its definition, unlike the
// distributions of <random>, whose results differ between standard libraries.
std::uint64_t next_random(std::uint64_t& seed) {
  std::uint64_t z = (seed += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

float unit_float(std::uint64_t& seed) {
  // The top 24 bits give every float in [0, 1) with a spacing of 2^-24.
  return static_cast<float>(next_random(seed) >> 40) * (1.0f / 16777216.0f);
}

}  // namespace

State random_state(int rows, int cols, std::uint64_t seed) {
  State state(rows, cols);
  for (float& value : state.u) value = unit_float(seed);
  for (float& value : state.v) value = unit_float(seed);
  return state;
}

State starting_state(const Params& params) {
  if (params.seed < 0) return initial_state(params.rows, params.cols);
  return random_state(params.rows, params.cols, static_cast<std::uint64_t>(params.seed));
}

}  // namespace gs
