// Lesson 03's point, checked on the learner's fused_transform() alone, on Thrust's OpenMP backend:
// the fused step is one parallel pass over the cells. One algorithm on the course's policy
// (on_device()) computes each cell's whole update, u and v together, and writes both: every
// neighbourhood is read once, no temporary field is written, and on the GPU it is one kernel.
//
// The opposite gives the same numbers: one transform for u_next and another for v_next (two
// passes, every neighbourhood read twice), a temporary field copied out afterwards, or a plain
// loop on the host (no pass on the policy at all: on the CPU build a device_vector lives in host
// memory, so it works there and nowhere else). Every test of the suite that compares numbers
// passes them all. On Thrust's OpenMP backend each algorithm is one OpenMP parallel region, and
// the test program counts those (tests/point/lesson03_passes.cpp): one step, one region. First
// it checks the count on a thrust::transform of its own, so a build whose OpenMP runtime is not
// seen says so instead of blaming the learner. What it cannot tell apart: a host loop with one
// `#pragma omp parallel for` of its own is one region too; the reading of the diff catches it.
// Used by tests/point/lesson03_point.cpp (both CPU suites: the exercise and the solution) and by
// tests/point/test_lesson03_wrong_answer.cpp (the fixture of a wrong answer,
// tests/fixtures/03_thrust/, which must fail it).
#pragma once

#include <thrust/device_vector.h>
#include <thrust/fill.h>
#include <thrust/functional.h>
#include <thrust/transform.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "gs/params.hpp"
#include "gs/reference.hpp"
#include "gs/state.hpp"

#include <fused_step.hpp>  // the learner's (or the fixture's) fused::fused_transform()

namespace lesson03_point {

// How many OpenMP parallel regions this program has started so far (lesson03_passes.cpp).
long parallel_regions_started();

// Returns "" when one fused_transform() is one parallel pass that gives the reference's step,
// else what it did instead.
inline std::string check_one_pass_per_step() {
  const int rows = 33, cols = 17;
  const gs::State state = gs::random_state(rows, cols, 303);
  const gs::Rates rates;
  const std::size_t cells = state.size();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const thrust::device_vector<float> u(state.u.begin(), state.u.end());
  const thrust::device_vector<float> v(state.v.begin(), state.v.end());
  thrust::device_vector<float> u_next(cells, nan), v_next(cells, nan);

  long before = parallel_regions_started();
  thrust::transform(on_device(), u.begin(), u.end(), u_next.begin(), thrust::negate<float>());
  const long calibration = parallel_regions_started() - before;
  if (calibration != 1) {
    std::ostringstream text;
    text << "one thrust::transform of the test's own started " << calibration
         << " OpenMP parallel regions where one was expected: this test counts them through "
            "libgomp's GOMP_parallel (GCC's OpenMP), which this build does not seem to call; "
            "the count of fused_transform()'s passes cannot be trusted here";
    return text.str();
  }

  thrust::fill(u_next.begin(), u_next.end(), nan);
  before = parallel_regions_started();
  fused::fused_transform(u, v, u_next, v_next, rows, cols, rates);
  const long passes = parallel_regions_started() - before;

  gs::State expected = state;
  gs::reference_advance(expected, rates, 1);
  for (std::size_t cell = 0; cell < cells; ++cell) {
    const float u_got = u_next[cell], v_got = v_next[cell];
    if (!(std::fabs(u_got - expected.u[cell]) <= 1e-4f) ||
        !(std::fabs(v_got - expected.v[cell]) <= 1e-4f)) {
      std::ostringstream text;
      text << "fused_transform() on a " << rows << " x " << cols << " grid: cell (" << cell / cols
           << ", " << cell % cols << ") became (u, v) = (" << u_got << ", " << v_got
           << "), one step of the reference gives (" << expected.u[cell] << ", " << expected.v[cell]
           << ")";
      return text.str();
    }
  }
  if (passes != 1) {
    std::ostringstream text;
    text << "one fused_transform() started " << passes
         << " parallel passes over the cells (OpenMP parallel regions on Thrust's OpenMP "
            "backend: one per Thrust algorithm on the course's policy) where the fused step is "
            "one: a single algorithm on on_device() whose one call per cell computes the "
            "cell's new u and v together and writes both. ";
    if (passes == 0) {
      text << "None ran on the course's policy: the step was computed by the host";
    } else {
      text << "Each extra pass reads every neighbourhood again or moves a temporary field";
    }
    return text.str();
  }
  return "";
}

}  // namespace lesson03_point
