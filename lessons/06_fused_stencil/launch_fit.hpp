// Lesson 06: what the body (stencil.cu) tells the tests about how its launches fit this GPU.
// Read, not edited.
#pragma once

#include <cstdint>
#include <string>

#include "gs/device_limits.hpp"

namespace GS_LESSON_NAMESPACE {

// The shared-memory kernel's launches on a GPU with `limits` (the stepper asks with
// gs::device_limits(), where GS_DEVICE_LIMITS counts): a tile whose halo is as deep as the steps
// per launch, so more steps take more shared memory, and a smaller GPU may take fewer steps per
// launch than kBlockingSteps. Asks the runtime for the kernels' shared memory: needs a GPU.
struct SharedBlockingFit {
  int steps_per_launch;       // what the stepper launches: kBlockingSteps or fewer; 0: none fits
  int most_steps;             // kBlockingSteps (shared_blocking.cuh)
  std::int64_t shared_bytes;  // the kernel's shared memory per block at steps_per_launch
  std::string why_fewer;      // why most_steps does not fit, or ""
};
SharedBlockingFit shared_blocking_fit(const gs::DeviceLimits& limits);

}  // namespace GS_LESSON_NAMESPACE
