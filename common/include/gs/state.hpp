/// @file state.hpp
/// @brief The two fields u and v on an R x C grid, the canonical initial condition, and the
///        small helpers tests and tools use to build and inspect states.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gs {

/// @brief The simulation state: two float32 fields, row-major, `index = row * cols + col`.
///
/// A plain value type on the host. Lessons copy it into their own layout (padded, aligned,
/// on the device) in Stepper::load and copy results back in Stepper::fetch.
struct State {
  int rows = 0;          ///< R.
  int cols = 0;          ///< C.
  std::vector<float> u;  ///< Field u, rows * cols values.
  std::vector<float> v;  ///< Field v, rows * cols values.

  State() = default;
  /// @brief A state of the given size with u = @p u_value and v = @p v_value everywhere.
  State(int rows, int cols, float u_value = 1.0f, float v_value = 0.0f);

  /// @brief Number of cells, rows * cols.
  std::size_t size() const { return u.size(); }
  /// @brief Flat index of (row, col).
  std::size_t index(int row, int col) const {
    return static_cast<std::size_t>(row) * static_cast<std::size_t>(cols) +
           static_cast<std::size_t>(col);
  }
};

/// @brief The deterministic initial condition of docs/PROBLEM.md.
///
/// u = 1, v = 0 everywhere, then u = 0, v = 1 on rows [7R/16 - 4, 8R/16 - 4) and columns
/// [7C/16, 8C/16), with integer division and bounds below 0 clamped to 0.
State initial_state(int rows, int cols);

/// @brief Half-open row and column ranges of the initial seed, as initial_state() uses them.
struct SeedBox {
  int row_begin;  ///< First seeded row.
  int row_end;    ///< One past the last seeded row.
  int col_begin;  ///< First seeded column.
  int col_end;    ///< One past the last seeded column.
};

/// @brief The seed rectangle of initial_state() for an R x C grid.
SeedBox seed_box(int rows, int cols);

/// @brief A state with u and v drawn uniformly from [0, 1) by a seeded generator
///        (same seed, same state, on every platform).
State random_state(int rows, int cols, std::uint64_t seed);

struct Params;
/// @brief The state a run of @p params starts from: initial_state() unless Params::seed is set
///        (`--seed`), then random_state() with that seed.
State starting_state(const Params& params);

}  // namespace gs
