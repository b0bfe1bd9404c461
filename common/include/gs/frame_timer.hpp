/// @file frame_timer.hpp
/// @brief How every benchmark of the course times a stepper (gs_benchmark, lesson 08's scaling,
///        lesson 09's official-size grid), and the finite check of the state it left.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gs/params.hpp"
#include "gs/state.hpp"
#include "gs/stepper.hpp"

namespace gs {

/// @brief What time_frames() times, and how it waits for the device.
struct FrameTiming {
  std::int64_t steps = 0;   ///< Steps timed, in frames of steps_per_frame (the last one shorter).
  int steps_per_frame = 1;  ///< Steps of a frame; the warm-up is one frame.
  int steps_per_wait = std::numeric_limits<int>::max();  ///< A frame advanced in such pieces.
  bool wait_each_frame = true;  ///< Wait after each piece (as a run writing its frames waits for
                                ///< each); false: every frame queued, one wait at the end.
  double budget_seconds = std::numeric_limits<double>::infinity();  ///< Stop once it is spent
                                                                    ///< (pieces waited for only).
  std::string interrupted_during;  ///< Not empty: throw_if_interrupted() before each frame.
  bool warmed_up = false;  ///< The caller loaded and warmed the stepper up: no warm-up frame.
};

/// @brief The steps time_frames() timed (fewer than asked once the budget is spent) and their
///        seconds, from the first advance() to the last wait.
struct TimedSteps {
  std::int64_t steps = 0;  ///< Steps on the clock.
  double seconds = 0.0;    ///< Their wall time.
};

/// @brief Times @p timing's frames of @p stepper the way gs_benchmark does: @p start loaded with
///        @p rates and one frame advanced and waited for (the warm-up: first-touch page faults,
///        module loading, clocks ramping up), @p start loaded again and waited for, so that every
///        implementation times the same steps from the same state; then the clock runs. Throws
///        std::invalid_argument when a frame or a piece would have no step (it would never end).
TimedSteps time_frames(Stepper& stepper, const State& start, const Rates& rates,
                       const FrameTiming& timing);

/// @brief Whether every value of @p values is finite: a state gone to NaN was timed for nothing.
bool all_finite(const std::vector<float>& values);

}  // namespace gs
