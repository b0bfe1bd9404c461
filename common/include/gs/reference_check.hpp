/// @file reference_check.hpp
/// @brief The check an exercise program makes before it times or writes anything: a few steps of
///        the learner's implementation on a small grid, compared with the reference of common/.
///        A stub computes nothing, yet its report and its benchmark would print a speed; this is
///        what makes them say first that the figures time wrong results. The tests remain the
///        judge (they name the worst cell on many grids); this check is only a warning.
#pragma once

#include <cstdint>
#include <string>

#include "gs/params.hpp"
#include "gs/stepper.hpp"

namespace gs {

/// @brief Whether a program checks its implementations against the reference before any work:
///        the lesson programs built from the learner's files do (`lessonNN_exercise`), the
///        solution programs, `gray_scott` and `gs_benchmark` do not (their output is unchanged).
enum class ReferenceCheck { off, before_work };

/// @brief What check_against_reference() found.
struct Agreement {
  bool checked = false;           ///< false: not checked (a GPU one without a GPU, a refused grid)
  bool agrees = true;             ///< Every value within the tolerance (meaningful when checked).
  std::string why_not;            ///< Why it was not checked, when it was not.
  int rows = 0;                   ///< The grid of the check.
  int cols = 0;                   ///< The grid of the check.
  int steps = 0;                  ///< Steps advanced (in two calls of advance()).
  std::int64_t values_off = 0;    ///< Values of u and v off by more than the tolerance, or NaN.
  std::int64_t values_total = 0;  ///< Values compared (2 * rows * cols).
  std::string worst;              ///< The worst value: field, row, column, both values.
};

/// @brief Runs @p implementation for a few steps (two calls of advance()) on a small grid with
///        odd sizes, from a seeded random state, with @p rates, and compares u and v with
///        reference_advance() of the same state: a value agrees when it is finite and within
///        1e-4 of the reference's (relative to it when larger than 1), the tests' tolerance.
///        Cheap: 19 x 37 cells, 5 steps. Never throws: an implementation that cannot be checked
///        here (a GPU one without a GPU, one that refuses the grid or throws) is `checked ==
///        false`, with the reason, and the run itself then says what is wrong.
Agreement check_against_reference(const Implementation& implementation, const Rates& rates);

/// @brief The warning a program prints first when @p agreement says @p implementation disagrees
///        ("your implementation ... disagrees with the reference ... the figures below time wrong
///        results"), with the command that runs its lesson's tests; empty when it agrees or was
///        not checked. Ends with a newline.
std::string disagreement_warning(const Agreement& agreement, const Implementation& implementation);

}  // namespace gs
