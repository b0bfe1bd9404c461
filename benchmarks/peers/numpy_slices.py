"""NumPy, array style: the Laplacian from shifted slices, a few whole-array expressions per step.

This is the simulation as the school's Python days first write it: no loop over cells in
Python, every operation over the whole grid, each one a pass through memory and a temporary
array. Lesson 03 measures the same style in C++ (l03-array) against one fused transform.

The step below is written with slicing and arithmetic only, so it runs unchanged on CuPy arrays
(cupy_slices.py) and PyTorch tensors (torch_slices.py): the three peers differ only in where the
arrays live.

The edge rule: a neighbour outside the grid is skipped. neighbour_sum() adds each of the eight
shifted copies of a field only where the shift lands inside the grid, so
L(a) = neighbour_sum(a) - N * a, and N, the number of in-grid neighbours of each cell (8 inside,
5 on an edge, 3 in a corner, fewer on a grid one cell wide), is the neighbour sum of ones.

    python3 benchmarks/peers/numpy_slices.py -r 270 -c 480 -n 10 --no-output
"""

from __future__ import annotations

import sys
from typing import Callable

import numpy as np

import harness


def neighbour_sum(a, out):
    """out[i, j] = the sum of a over the in-grid neighbours of cell (i, j); returns out."""
    out[...] = 0
    out[1:, :] += a[:-1, :]  # the neighbour above
    out[:-1, :] += a[1:, :]  # below
    out[:, 1:] += a[:, :-1]  # on the left
    out[:, :-1] += a[:, 1:]  # on the right
    out[1:, 1:] += a[:-1, :-1]  # above left
    out[1:, :-1] += a[:-1, 1:]  # above right
    out[:-1, 1:] += a[1:, :-1]  # below left
    out[:-1, :-1] += a[1:, 1:]  # below right
    return out


def step(u, v, sum_u, sum_v, count, rates: harness.Rates):
    """One explicit Euler step; returns the new (u, v). sum_u and sum_v are scratch arrays."""
    laplacian_u = neighbour_sum(u, sum_u) - count * u
    laplacian_v = neighbour_sum(v, sum_v) - count * v
    uvv = u * v * v
    du = rates.diffusion_u * laplacian_u - uvv + rates.feed * (1.0 - u)
    dv = rates.diffusion_v * laplacian_v + uvv - (rates.feed + rates.kill) * v
    return u + rates.dt * du, v + rates.dt * dv


class SlicesStepper:
    """The state and its step in any array library that slices and computes like NumPy."""

    def __init__(
        self,
        rates: harness.Rates,
        to_device: Callable[[np.ndarray], object],
        to_host: Callable[[object], np.ndarray],
        synchronize: Callable[[], None],
        device: str,
        device_name: str,
    ):
        self._rates = rates
        self._to_device = to_device
        self._to_host = to_host
        self._synchronize = synchronize
        self.device = device
        self.device_name = device_name

    def load(self, u: np.ndarray, v: np.ndarray) -> None:
        self._u = self._to_device(u)
        self._v = self._to_device(v)
        self._sum_u = self._to_device(np.zeros_like(u))
        self._sum_v = self._to_device(np.zeros_like(v))
        ones = self._to_device(np.ones_like(u))
        self._count = neighbour_sum(ones, out=self._to_device(np.zeros_like(u)))  # N of each cell

    def advance(self, steps: int) -> None:
        for _ in range(steps):
            self._u, self._v = step(
                self._u, self._v, self._sum_u, self._sum_v, self._count, self._rates
            )

    def synchronize(self) -> None:
        self._synchronize()

    def fetch_v(self) -> np.ndarray:
        return self._to_host(self._v)

    def fetch_state(self) -> tuple[np.ndarray, np.ndarray]:
        return self._to_host(self._u), self._to_host(self._v)


def open_stepper(rates: harness.Rates) -> SlicesStepper:
    return SlicesStepper(
        rates,
        to_device=np.array,  # a copy: the caller's arrays are never changed
        to_host=np.array,
        synchronize=lambda: None,  # NumPy has finished when it returns
        device="cpu",
        device_name=harness.cpu_model(),
    )


if __name__ == "__main__":
    sys.exit(
        harness.run_peer(
            "numpy-slices", "Gray-Scott with NumPy, array style (slices).", open_stepper
        )
    )
