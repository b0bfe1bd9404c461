// The timing every benchmark of the course shares: whole frames of a stepper from the same state.
#include "gs/frame_timer.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "gs/interrupt.hpp"
#include "gs/timing.hpp"

namespace gs {

TimedSteps time_frames(Stepper& stepper, const State& start, const Rates& rates,
                       const FrameTiming& timing) {
  if (timing.steps_per_frame < 1 || timing.steps_per_wait < 1) {
    throw std::invalid_argument("time_frames: frames and pieces need at least one step each");
  }
  if (!timing.warmed_up) {
    stepper.load(start, rates);
    stepper.advance(static_cast<int>(std::min<std::int64_t>(timing.steps_per_frame, timing.steps)));
    stepper.synchronize();
  }
  stepper.load(start, rates);
  stepper.synchronize();
  // The clock is read between pieces only where a budget can be spent, and only between pieces
  // waited for: between queued ones it would measure the host's queueing, not the work.
  const bool budgeted = std::isfinite(timing.budget_seconds) && timing.wait_each_frame;
  TimedSteps timed;
  Stopwatch clock;
  for (bool spent = false; timed.steps < timing.steps && !spent;) {
    if (!timing.interrupted_during.empty()) throw_if_interrupted(timing.interrupted_during);
    const std::int64_t frame =
        std::min<std::int64_t>(timing.steps_per_frame, timing.steps - timed.steps);
    for (std::int64_t done = 0; done < frame && !spent;) {
      const int steps =
          static_cast<int>(std::min<std::int64_t>(timing.steps_per_wait, frame - done));
      stepper.advance(steps);
      if (timing.wait_each_frame) stepper.synchronize();
      done += steps;
      timed.steps += steps;
      spent = budgeted && clock.seconds() > timing.budget_seconds;
    }
  }
  if (!timing.wait_each_frame) stepper.synchronize();
  timed.seconds = clock.seconds();
  return timed;
}

bool all_finite(const std::vector<float>& values) {
  return std::all_of(values.begin(), values.end(), [](float x) { return std::isfinite(x); });
}

}  // namespace gs
