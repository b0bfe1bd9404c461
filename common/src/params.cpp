// Parameter validation: every refusal names the flag, the allowed range and the value given,
// so a learner never has to guess why a run did not start.
#include "gs/params.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace gs {

bool is_unit_stencil(const StencilWeights& weights) {
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) {
      if ((r != 1 || c != 1) && weights.w[r][c] != 1.0f) return false;
    }
  }
  return true;
}

float off_centre_sum(const StencilWeights& weights) {
  float sum = 0.0f;
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) {
      if (r != 1 || c != 1) sum += weights.w[r][c];
    }
  }
  return sum;
}

std::int64_t Params::output_bytes() const {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const std::int64_t frame_bytes = cells() * std::int64_t{sizeof(float)};  // < 2^33 for int sizes
  if (frames <= 0 || frame_bytes <= 0) return 0;
  if (frame_bytes > kMax / frames) return kMax;
  return frame_bytes * frames;
}

namespace {

void require_positive_count(std::vector<std::string>& problems, const char* flag, int value) {
  if (value < 1) {
    problems.push_back(std::string(flag) + " must be at least 1 (got " + std::to_string(value) +
                       ")");
  }
}

void require_positive_rate(std::vector<std::string>& problems, const char* flag, float value) {
  std::ostringstream message;
  if (!std::isfinite(value) || value <= 0.0f) {
    message << flag << " must be a finite number greater than 0 (got " << value << ")";
  } else if (const std::string problem = float32_problem(value); !problem.empty()) {
    message << flag << " " << problem << " (got " << value << ")";
  } else {
    return;
  }
  problems.push_back(message.str());
}

}  // namespace

std::string float32_problem(double value) {
  constexpr double kLargest = std::numeric_limits<float>::max();
  constexpr double kSmallest = std::numeric_limits<float>::min();  // the smallest normal float
  std::ostringstream problem;
  if (!std::isfinite(value)) {
    problem << "is not a finite number";
  } else if (std::fabs(value) > kLargest) {
    problem << "is too large for float32 (its magnitude must be at most " << kLargest
            << "; it would become infinite)";
  } else if (value != 0.0 && std::fabs(value) < kSmallest) {
    problem << "is too small for float32 (its magnitude must be 0 or at least " << kSmallest
            << "; it would become 0 or a subnormal number)";
  }
  return problem.str();
}

std::vector<std::string> find_problems(const Rates& rates) {
  std::vector<std::string> problems;
  require_positive_rate(problems, "-k/--killrate", rates.kill);
  require_positive_rate(problems, "-f/--feedrate", rates.feed);
  require_positive_rate(problems, "-t/--deltat", rates.dt);
  require_positive_rate(problems, "-u/--diffusion-u", rates.diffusion_u);
  require_positive_rate(problems, "-v/--diffusion-v", rates.diffusion_v);
  if (rates.dt > 0.0f && rates.diffusion_u > 0.0f && rates.diffusion_v > 0.0f) {
    const double product =
        double{rates.dt} * std::max(double{rates.diffusion_u}, double{rates.diffusion_v});
    // The limit itself is allowed, within float rounding (1.0f / 6.0f is a hair above 1/6).
    if (product > kStabilityLimit * (1.0 + 1e-6)) {
      std::ostringstream message;
      message << "-t/--deltat is unstable: dt * max(Du, Dv) must be at most 1/6 for explicit "
                 "Euler with this stencil (got "
              << rates.dt << " * " << std::max(rates.diffusion_u, rates.diffusion_v) << " = "
              << product << "); lower -t, -u or -v";
      problems.push_back(message.str());
    }
  }
  return problems;
}

std::vector<std::string> find_problems(const Params& params) {
  std::vector<std::string> problems;
  require_positive_count(problems, "-r/--nbrow", params.rows);
  require_positive_count(problems, "-c/--nbcol", params.cols);
  require_positive_count(problems, "-n/--nbimage", params.frames);
  require_positive_count(problems, "-e/--nbextrastep", params.steps_per_frame);
  for (std::string& problem : find_problems(params.rates)) problems.push_back(std::move(problem));
  if (params.rows >= 1 && params.cols >= 1 && params.cells() > kMaxCells) {
    std::ostringstream message;
    message << "-r/--nbrow x -c/--nbcol must be at most " << kMaxCells << " cells (got "
            << params.cells() << ")";
    problems.push_back(message.str());
  }
  if (params.output.empty()) problems.push_back("-o/--output must not be empty");
  return problems;
}

void validate(const Params& params) {
  const std::vector<std::string> problems = find_problems(params);
  if (problems.empty()) return;
  std::string message = "invalid parameters:";
  for (const std::string& problem : problems) message += "\n  " + problem;
  throw InvalidParameter(message);
}

}  // namespace gs
