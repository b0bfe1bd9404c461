"""JAX, the specialized 3x3 stencil: the eight unit-weight neighbours written out, jit-compiled,
the steps of a frame in one lax.fori_loop.

The fastest peer on the course's GPU machine. JAX arrays are immutable, so instead of
numpy_slices.py's in-place additions the step pads each field with a ring of zeros (an outside
neighbour adds nothing) and adds eight slices of the padded array; N, the count of in-grid
neighbours, is the same sum over a field of ones. "Specialized" means that the weights are not
data, as they are in the school's generic version (a convolution with a 3x3 weight matrix): the
eight neighbours are added and the centre term (a - a = 0) is left out. jax.jit hands a whole
frame, fori_loop and all, to the XLA compiler, which fuses element-wise operations, and no
Python runs between the steps of a frame.

It runs on JAX's default device: the GPU where JAX has one, else the CPU (the device column of
the result says which).

    python3 benchmarks/peers/jax_3x3.py --no-output
"""

from __future__ import annotations

import sys

import numpy as np

import harness

try:  # imported here so that the stencil below reads as plain code; open_stepper() says if absent
    import jax
    import jax.numpy as jnp
    from jax import lax
except ImportError as error:
    jax = None
    JAX_MISSING = f"JAX is not installed ({error})"


def neighbour_sum(a):
    """The sum of a over the in-grid neighbours of each cell: outside the grid counts as 0."""
    padded = jnp.pad(a, 1)
    # fmt: off
    return (
        padded[:-2, :-2] + padded[:-2, 1:-1] + padded[:-2, 2:]  # the row above
        + padded[1:-1, :-2] + padded[1:-1, 2:]  # left and right
        + padded[2:, :-2] + padded[2:, 1:-1] + padded[2:, 2:]  # the row below
    )
    # fmt: on


def step(u, v, count, rates: harness.Rates):
    """One explicit Euler step; returns the new (u, v)."""
    laplacian_u = neighbour_sum(u) - count * u
    laplacian_v = neighbour_sum(v) - count * v
    uvv = u * v * v
    du = rates.diffusion_u * laplacian_u - uvv + rates.feed * (1.0 - u)
    dv = rates.diffusion_v * laplacian_v + uvv - (rates.feed + rates.kill) * v
    return u + rates.dt * du, v + rates.dt * dv


def advance(u, v, steps: int, rates: harness.Rates):
    """`steps` steps in one compiled loop (steps and rates are compile-time constants)."""
    count = neighbour_sum(jnp.ones_like(u))
    return lax.fori_loop(0, steps, lambda _, state: step(*state, count, rates), (u, v))


class Jax3x3Stepper:
    """The state as JAX arrays on JAX's default device, advanced by the compiled loop."""

    def __init__(self, rates: harness.Rates):
        self._rates = rates
        self._advance = jax.jit(advance, static_argnames=("steps", "rates"))
        platform = jax.devices()[0].platform
        self.device = "cpu" if platform == "cpu" else "gpu"
        self.device_name = (
            harness.cpu_model() if platform == "cpu" else jax.devices()[0].device_kind
        )

    def load(self, u: np.ndarray, v: np.ndarray) -> None:
        self._u = jax.device_put(u)
        self._v = jax.device_put(v)

    def advance(self, steps: int) -> None:
        # Returns at once: JAX dispatches asynchronously.
        self._u, self._v = self._advance(self._u, self._v, steps=steps, rates=self._rates)

    def synchronize(self) -> None:
        self._u.block_until_ready()
        self._v.block_until_ready()

    def fetch_v(self) -> np.ndarray:
        return np.asarray(self._v)

    def fetch_state(self) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(self._u), np.asarray(self._v)


def open_stepper(rates: harness.Rates) -> Jax3x3Stepper:
    if jax is None:
        raise harness.Unavailable(JAX_MISSING)
    return Jax3x3Stepper(rates)


if __name__ == "__main__":
    sys.exit(
        harness.run_peer(
            "jax-3x3",
            "Gray-Scott with JAX: a specialized 3x3 stencil, jit + fori_loop.",
            open_stepper,
        )
    )
