"""The school's CuPy script with its hot loop swapped for the course's kernel.

benchmarks/peers/cupy_slices.py is this repository's version of the school's CuPy day: the
NumPy step, unchanged, on CuPy arrays; every operator of the step is a kernel of its own and a
pass through memory. This script is the same program with one method changed: advance(), whose
loop of Python steps becomes one call to the course's stepper on the same CuPy arrays, in place
(no copy; on CuPy's current stream, so the timing's synchronize() waits for it). Everything else
- the arrays, the loading, the frames, the timing - is the school's.

    build/bin/lesson10_solution benchmarks/peers/school_cupy.py --no-output
    build/bin/lesson10_solution benchmarks/peers/school_cupy.py --no-output --impl l04-generic
"""

from __future__ import annotations

import sys

import harness
from cupy_slices import open_stepper as open_school_stepper
from numpy_slices import SlicesStepper

IMPLEMENTATION = "l06-temporal"


class SwappedStepper(SlicesStepper):
    """cupy_slices.py's stepper; only advance() is new."""

    def load(self, u, v) -> None:
        super().load(u, v)
        r = self._rates
        self._course = grayscott.Stepper(u.shape[0], u.shape[1], IMPLEMENTATION, feed=r.feed,
                                         kill=r.kill, dt=r.dt, du=r.diffusion_u,
                                         dv=r.diffusion_v)

    def advance(self, steps: int) -> None:
        # The school's hot loop was:
        #     for _ in range(steps):
        #         self._u, self._v = step(self._u, self._v, self._sum_u, self._sum_v,
        #                                 self._count, self._rates)
        # One call instead, on the same arrays, queued on CuPy's stream:
        self._course.advance(self._u, self._v, steps, stream=cupy.cuda.get_current_stream())


def open_stepper(rates: harness.Rates) -> SwappedStepper:
    global cupy, grayscott
    grayscott = harness.import_grayscott()
    school = open_school_stepper(rates)  # CuPy and a GPU, or Unavailable saying why
    import cupy

    swapped = SwappedStepper(rates, cupy.asarray, cupy.asnumpy, school._synchronize, "gpu",
                             school.device_name)
    return swapped


if __name__ == "__main__":
    IMPLEMENTATION, arguments = harness.take_impl_flag(sys.argv[1:], "school_cupy.py",
                                                       IMPLEMENTATION)
    sys.exit(harness.run_peer(f"school-cupy+{IMPLEMENTATION}",
                              "The school's CuPy script, its hot loop swapped for one call to "
                              "the course's stepper (--impl NAME, default l06-temporal).",
                              open_stepper, argv=arguments, lesson="10_python"))
