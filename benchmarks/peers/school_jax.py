"""The school's JAX script with its hot loop swapped for the course's kernel.

benchmarks/peers/jax_3x3.py is this repository's version of the school's fastest script: the
3x3 stencil, jit-compiled, a frame's steps in one lax.fori_loop. This script is the same
program with one method changed: advance(), whose compiled loop becomes one call to the
course's stepper. JAX's arrays are immutable, so the call is Stepper.advanced(), which reads
them through DLPack and returns new arrays on the GPU, handed back to JAX through DLPack again
(no host copy; two device copies, of the inputs into the new arrays, where the in-place call of
school_cupy.py makes none).

    build/bin/lesson10_solution benchmarks/peers/school_jax.py --no-output
"""

from __future__ import annotations

import sys

import harness
import jax_3x3

IMPLEMENTATION = "l06-temporal"


class SwappedStepper(jax_3x3.Jax3x3Stepper):
    """jax_3x3.py's stepper; only load() and advance() are new."""

    def load(self, u, v) -> None:
        super().load(u, v)
        r = self._rates
        self._course = grayscott.Stepper(u.shape[0], u.shape[1], IMPLEMENTATION, feed=r.feed,
                                         kill=r.kill, dt=r.dt, du=r.diffusion_u,
                                         dv=r.diffusion_v)

    def advance(self, steps: int) -> None:
        # The school's hot loop was the compiled fori_loop:
        #     self._u, self._v = self._advance(self._u, self._v, steps=steps, rates=self._rates)
        # One call instead; JAX arrays in, new arrays out, both through DLPack:
        new_u, new_v = self._course.advanced(self._u, self._v, steps)
        self._u = jax_3x3.jax.dlpack.from_dlpack(new_u)
        self._v = jax_3x3.jax.dlpack.from_dlpack(new_v)


def open_stepper(rates: harness.Rates) -> SwappedStepper:
    global grayscott
    grayscott = harness.import_grayscott()
    jax_3x3.open_stepper(rates)  # JAX, or Unavailable saying why
    if jax_3x3.jax.devices()[0].platform != "gpu":
        raise harness.Unavailable("JAX runs on the CPU here: the swap needs JAX on the GPU")
    return SwappedStepper(rates)


if __name__ == "__main__":
    IMPLEMENTATION, arguments = harness.take_impl_flag(sys.argv[1:], "school_jax.py",
                                                       IMPLEMENTATION)
    sys.exit(harness.run_peer(f"school-jax+{IMPLEMENTATION}",
                              "The school's JAX 3x3 script, its hot loop swapped for one call to "
                              "the course's stepper (--impl NAME, default l06-temporal).",
                              open_stepper, argv=arguments, lesson="10_python"))
