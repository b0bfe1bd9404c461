// The exercise programs' check before any work: a few steps on a small grid against the
// reference, so that a stub's report does not read as a result.
#include "gs/reference_check.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <exception>
#include <memory>
#include <sstream>

#include "gs/gpu.hpp"
#include "gs/reference.hpp"
#include "gs/state.hpp"

namespace gs {
namespace {

// Odd sizes, neither a multiple of a vector width nor of a block's; two calls of advance() with
// a remainder for the steppers that make several steps per launch.
constexpr int kRows = 19;
constexpr int kCols = 37;
constexpr int kFirstCall = 2;
constexpr int kSecondCall = 3;
constexpr std::uint64_t kSeed = 20261128;
constexpr double kTolerance = 1e-4;  // the tests' (tests/support/check.hpp)

}  // namespace

Agreement check_against_reference(const Implementation& implementation, const Rates& rates) {
  Agreement agreement;
  agreement.rows = kRows;
  agreement.cols = kCols;
  agreement.steps = kFirstCall + kSecondCall;
  if (implementation.device == Device::gpu && !gpu_status().available) {
    agreement.why_not = gpu_status().reason;
    return agreement;
  }
  const std::string refusal = grid_refusal(implementation, kRows, kCols);
  if (!refusal.empty()) {
    agreement.why_not = refusal;
    return agreement;
  }
  const State start = random_state(kRows, kCols, kSeed);
  State expected = start;
  reference_advance(expected, rates, agreement.steps);
  State got;
  try {
    std::unique_ptr<Stepper> stepper = implementation.create();
    stepper->load(start, rates);
    stepper->advance(kFirstCall);
    stepper->advance(kSecondCall);
    stepper->fetch(got);
  } catch (const std::exception& error) {
    agreement.why_not = error.what();
    return agreement;
  }
  agreement.checked = true;
  if (got.rows != kRows || got.cols != kCols || got.u.size() != expected.u.size() ||
      got.v.size() != expected.v.size()) {
    agreement.agrees = false;
    agreement.values_total = 2 * static_cast<std::int64_t>(expected.size());
    agreement.values_off = agreement.values_total;
    agreement.worst =
        "fetch() gave a " + std::to_string(got.rows) + " x " + std::to_string(got.cols) + " state";
    return agreement;
  }
  double worst_error = -1.0;
  for (const char field : {'u', 'v'}) {
    const std::vector<float>& values = field == 'u' ? got.u : got.v;
    const std::vector<float>& reference = field == 'u' ? expected.u : expected.v;
    for (std::size_t i = 0; i < reference.size(); ++i) {
      ++agreement.values_total;
      const double error = std::isfinite(values[i])
                               ? std::fabs(static_cast<double>(values[i]) - reference[i]) /
                                     std::max(1.0, std::fabs(static_cast<double>(reference[i])))
                               : HUGE_VAL;
      if (error <= kTolerance) continue;
      ++agreement.values_off;
      if (error > worst_error) {
        worst_error = error;
        std::ostringstream text;
        text << field << " at row " << i / kCols << ", column " << i % kCols << ": " << values[i]
             << " instead of " << reference[i];
        agreement.worst = text.str();
      }
    }
  }
  agreement.agrees = agreement.values_off == 0;
  return agreement;
}

std::string disagreement_warning(const Agreement& agreement, const Implementation& implementation) {
  if (!agreement.checked || agreement.agrees) return "";
  // "01_profiling" -> the CTest label "lesson01"
  const std::string& lesson = implementation.lesson;
  const bool numbered = lesson.size() >= 2 && std::isdigit(static_cast<unsigned char>(lesson[0])) &&
                        std::isdigit(static_cast<unsigned char>(lesson[1]));
  std::ostringstream text;
  text << "WARNING: your implementation " << implementation.name
       << " disagrees with the reference of common/: from one random state on a " << agreement.rows
       << " x " << agreement.cols << " grid, after " << agreement.steps << " steps, "
       << agreement.values_off << " of " << agreement.values_total
       << " values of u and v are off by more than 1e-4 (the worst: " << agreement.worst
       << "). The figures below time wrong results; the lesson's tests show where it goes wrong"
       << (numbered ? " (ctest --test-dir build -L lesson" + lesson.substr(0, 2) +
                          " -L exercise --output-on-failure)"
                    : std::string())
       << ".\n";
  return text.str();
}

}  // namespace gs
