// Parameter validation: every refusal names the flag, the allowed range and the value given,
// so a learner never has to guess why a run did not start.
#include "gs/params.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace gs {
namespace {

void require_positive_count(std::vector<std::string>& problems, const char* flag, int value) {
  if (value < 1) {
    problems.push_back(std::string(flag) + " must be at least 1 (got " + std::to_string(value) +
                       ")");
  }
}

void require_positive_rate(std::vector<std::string>& problems, const char* flag, float value) {
  if (!std::isfinite(value) || value <= 0.0f) {
    std::ostringstream message;
    message << flag << " must be a finite number greater than 0 (got " << value << ")";
    problems.push_back(message.str());
  }
}

}  // namespace

std::vector<std::string> find_problems(const Params& params) {
  std::vector<std::string> problems;
  require_positive_count(problems, "-r/--nbrow", params.rows);
  require_positive_count(problems, "-c/--nbcol", params.cols);
  require_positive_count(problems, "-n/--nbimage", params.frames);
  require_positive_count(problems, "-e/--nbextrastep", params.steps_per_frame);
  require_positive_rate(problems, "-k/--killrate", params.kill_rate);
  require_positive_rate(problems, "-f/--feedrate", params.feed_rate);
  require_positive_rate(problems, "-t/--deltat", params.dt);
  require_positive_rate(problems, "-u/--diffusion-u", params.diffusion_u);
  require_positive_rate(problems, "-v/--diffusion-v", params.diffusion_v);

  if (params.rows >= 1 && params.cols >= 1 && params.cells() > kMaxCells) {
    std::ostringstream message;
    message << "-r/--nbrow x -c/--nbcol must be at most " << kMaxCells << " cells (got "
            << params.cells() << ")";
    problems.push_back(message.str());
  }
  if (params.dt > 0.0f && params.diffusion_u > 0.0f && params.diffusion_v > 0.0f) {
    const double product =
        double{params.dt} * std::max(double{params.diffusion_u}, double{params.diffusion_v});
    // The limit itself is allowed, within float rounding (1.0f / 6.0f is a hair above 1/6).
    if (product > kStabilityLimit * (1.0 + 1e-6)) {
      std::ostringstream message;
      message << "-t/--deltat is unstable: dt * max(Du, Dv) must be at most 1/6 for explicit "
                 "Euler with this stencil (got "
              << params.dt << " * " << std::max(params.diffusion_u, params.diffusion_v) << " = "
              << product << "); lower -t, -u or -v";
      problems.push_back(message.str());
    }
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
