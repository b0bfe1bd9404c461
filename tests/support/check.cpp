#include "check.hpp"

#include <cmath>
#include <limits>
#include <sstream>

namespace gs::test {

State poisoned_state(int rows, int cols) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  return State(rows, cols, nan, nan);
}

State run_stepper(Stepper& stepper, const State& start, const Rates& rates,
                  const std::vector<int>& calls) {
  stepper.load(start, rates);
  for (const int steps : calls) stepper.advance(steps);
  State got = poisoned_state(start.rows, start.cols);
  stepper.fetch(got);
  return got;
}

namespace {

struct FieldDiff {
  std::size_t worst = 0;
  double worst_error = -1.0;
  std::size_t off = 0;
  std::size_t nan = 0;
};

FieldDiff diff(const float* got, const float* expected, std::size_t count, double tolerance) {
  FieldDiff d;
  for (std::size_t i = 0; i < count; ++i) {
    const bool finite = std::isfinite(got[i]);
    const double error = finite ? std::abs(double{got[i]} - double{expected[i]})
                                : std::numeric_limits<double>::infinity();
    if (!finite) ++d.nan;
    if (!(error <= tolerance)) ++d.off;
    if (error > d.worst_error) {
      d.worst_error = error;
      d.worst = i;
    }
  }
  return d;
}

void describe(std::ostream& out, const char* field, int cols, const float* got,
              const float* expected, const FieldDiff& d, double tolerance) {
  const int row = static_cast<int>(d.worst / cols);
  const int col = static_cast<int>(d.worst % cols);
  out << "field " << field << ": worst cell (row " << row << ", col " << col << "): got "
      << got[d.worst] << ", expected " << expected[d.worst] << ", error " << d.worst_error << "; "
      << d.off << " cell(s) off by more than " << tolerance;
  if (d.nan > 0) out << ", " << d.nan << " not finite (NaN: never written?)";
}

}  // namespace

::testing::AssertionResult fields_match(const char* field, int rows, int cols, const float* got,
                                        const float* expected, double tolerance) {
  const std::size_t count = static_cast<std::size_t>(rows) * cols;
  const FieldDiff d = diff(got, expected, count, tolerance);
  if (d.off == 0) return ::testing::AssertionSuccess();
  std::ostringstream message;
  message << "grid " << rows << " x " << cols << ", ";
  describe(message, field, cols, got, expected, d, tolerance);
  return ::testing::AssertionFailure() << message.str();
}

::testing::AssertionResult states_match(const State& got, const State& expected, double tolerance) {
  if (got.rows != expected.rows || got.cols != expected.cols || got.u.size() != expected.u.size() ||
      got.v.size() != expected.v.size()) {
    return ::testing::AssertionFailure()
           << "shape differs: got " << got.rows << " x " << got.cols << " (" << got.u.size() << ", "
           << got.v.size() << " values), expected " << expected.rows << " x " << expected.cols;
  }
  const FieldDiff du = diff(got.u.data(), expected.u.data(), got.u.size(), tolerance);
  const FieldDiff dv = diff(got.v.data(), expected.v.data(), got.v.size(), tolerance);
  if (du.off == 0 && dv.off == 0) return ::testing::AssertionSuccess();
  std::ostringstream message;
  message << "grid " << got.rows << " x " << got.cols << ": ";
  if (du.off > 0) describe(message, "u", got.cols, got.u.data(), expected.u.data(), du, tolerance);
  if (du.off > 0 && dv.off > 0) message << "; ";
  if (dv.off > 0) describe(message, "v", got.cols, got.v.data(), expected.v.data(), dv, tolerance);
  return ::testing::AssertionFailure() << message.str();
}

}  // namespace gs::test
