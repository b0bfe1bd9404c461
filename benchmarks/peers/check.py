"""Checks that every peer computes the course's problem exactly, the edge rule included.

1. Each available peer's stepper advances a random state on small odd grids (17 x 33, one cell
   wide, one cell tall, a single cell) for 40 steps, in calls of 1, 7 and 32 steps; the result
   is compared with a float64 evaluation of the definition written below as plainly as possible,
   cell by cell, sharing no code with the peers.
2. Each peer then runs as a program on a small grid from the canonical initial state and writes
   HDF5; the file must have the course's layout, hold v after (i + 1) * nbextrastep steps as
   frame i, and leave no partial file behind.

The error is the largest difference over both fields divided by the largest reference value
(the fields are of order 1). float32 lands near 1e-6 over these horizons; a wrong edge or a
missing term gives 1e-2 or more. A peer whose package or GPU is missing is skipped with its
reason; PyTorch without a GPU has its stepper checked on the CPU: the same code, another device.

    /usr/bin/python3 benchmarks/peers/check.py      # exit status 1 if any check fails
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import cupy_slices
import harness
import jax_3x3
import numpy_slices
import torch_slices

TOLERANCE = 1e-4
GRIDS = [(17, 33), (1, 7), (7, 1), (1, 1)]
CALLS = [1, 7, 32]  # steps per advance() call: 40 steps in all
OUTPUT_GRID = (24, 40)  # big enough for a seed rectangle of 2 x 3 cells
OUTPUT_FRAMES, OUTPUT_STEPS_PER_FRAME = 3, 10

STEPPERS = {
    "numpy-slices": numpy_slices.open_stepper,
    "cupy-slices": cupy_slices.open_stepper,
    "torch-slices": functools.partial(torch_slices.open_stepper, allow_cpu=True),
    "jax-3x3": jax_3x3.open_stepper,
}
PROGRAMS = {
    "numpy-slices": "numpy_slices.py",
    "cupy-slices": "cupy_slices.py",
    "torch-slices": "torch_slices.py",
    "jax-3x3": "jax_3x3.py",
    "cupy-writer-thread": "cupy_writer_thread.py",
}


def reference_step(u: np.ndarray, v: np.ndarray, rates: harness.Rates):
    """One step of the definition in float64, a cell and a neighbour at a time."""
    rows, cols = u.shape
    u_next = np.empty_like(u)
    v_next = np.empty_like(v)
    for i in range(rows):
        for j in range(cols):
            laplacian_u = laplacian_v = 0.0
            for p in range(i - 1, i + 2):
                for q in range(j - 1, j + 2):
                    if 0 <= p < rows and 0 <= q < cols:  # a neighbour outside is skipped
                        laplacian_u += u[p, q] - u[i, j]
                        laplacian_v += v[p, q] - v[i, j]
            uvv = u[i, j] * v[i, j] * v[i, j]
            du = rates.diffusion_u * laplacian_u - uvv + rates.feed * (1.0 - u[i, j])
            dv = rates.diffusion_v * laplacian_v + uvv - (rates.feed + rates.kill) * v[i, j]
            u_next[i, j] = u[i, j] + rates.dt * du
            v_next[i, j] = v[i, j] + rates.dt * dv
    return u_next, v_next


def reference_advance(u, v, rates: harness.Rates, steps: int):
    u, v = u.astype(np.float64), v.astype(np.float64)
    for _ in range(steps):
        u, v = reference_step(u, v, rates)
    return u, v


def canonical_state(rows: int, cols: int):
    """The initial condition of the problem's statement, written again without the harness."""
    u = np.ones((rows, cols))
    v = np.zeros((rows, cols))
    for i in range(rows):
        for j in range(cols):
            in_rows = max(0, 7 * rows // 16 - 4) <= i < max(0, 8 * rows // 16 - 4)
            in_cols = 7 * cols // 16 <= j < 8 * cols // 16
            if in_rows and in_cols:
                u[i, j], v[i, j] = 0.0, 1.0
    return u, v


def relative_error(got: list[np.ndarray], expected: list[np.ndarray]) -> float:
    """max |got - expected| over all the fields, over max |expected|; inf if got is not finite."""
    if not all(np.isfinite(field).all() for field in got):
        return float("inf")
    difference = max(np.abs(g.astype(np.float64) - e).max() for g, e in zip(got, expected))
    return difference / max(np.abs(e).max() for e in expected)


class Tally:
    """Counts and prints the outcome of every check, one line each."""

    def __init__(self):
        self.passed = self.failed = self.skipped = 0

    def skip(self, name: str, reason: str) -> None:
        self.skipped += 1
        print(f"skip {name}: {reason}")

    def record(self, name: str, what: str, error: float) -> None:
        ok = error <= TOLERANCE
        self.passed += ok
        self.failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name:<28} {what}: max relative error {error:.1e}")

    def fail(self, name: str, why: str) -> None:
        self.failed += 1
        print(f"FAIL {name:<28} {why}")


def check_steppers(tally: Tally) -> None:
    rates = harness.Rates()
    random = np.random.default_rng(2026)
    states = {grid: random.random((2, *grid), dtype=np.float32) for grid in GRIDS}
    expected = {grid: reference_advance(*states[grid], rates, sum(CALLS)) for grid in GRIDS}
    for name, open_stepper in STEPPERS.items():
        try:
            stepper = open_stepper(rates)
        except harness.Unavailable as reason:
            tally.skip(name, str(reason))
            continue
        label = f"{name} ({stepper.device})"
        for grid in GRIDS:
            stepper.load(*states[grid])
            for steps in CALLS:
                stepper.advance(steps)
            stepper.synchronize()
            got = stepper.fetch_state()
            what = f"{grid[0]:>2} x {grid[1]:<2} {sum(CALLS)} steps"
            tally.record(label, what, relative_error(list(got), list(expected[grid])))


def check_programs(tally: Tally) -> None:
    rows, cols = OUTPUT_GRID
    u, v = canonical_state(rows, cols)
    expected_frames = []
    for _ in range(OUTPUT_FRAMES):
        u, v = reference_advance(u, v, harness.Rates(), OUTPUT_STEPS_PER_FRAME)
        expected_frames.append(v)
    for name, program in PROGRAMS.items():
        with tempfile.TemporaryDirectory() as folder:
            check_program(tally, f"{name} (program)", program, folder, expected_frames)


def check_program(tally: Tally, label: str, program: str, folder: str, expected_frames) -> None:
    """Runs one peer as a program writing into an empty folder and checks what it left there."""
    import h5py

    rows, cols = OUTPUT_GRID
    output = os.path.join(folder, "output.h5")
    flags = f"-r {rows} -c {cols} -n {OUTPUT_FRAMES} -e {OUTPUT_STEPS_PER_FRAME}".split()
    command = [sys.executable, str(Path(__file__).resolve().parent / program), *flags]
    run = subprocess.run([*command, "-o", output], capture_output=True, text=True)
    if run.returncode == harness.EXIT_UNAVAILABLE:
        tally.skip(label, run.stderr.strip().splitlines()[-1])
        return
    if run.returncode != 0:
        tally.fail(label, f"exit status {run.returncode}\n{run.stderr}")
        return
    leftovers = sorted(set(os.listdir(folder)) - {"output.h5"})
    if leftovers:
        tally.fail(label, f"left files behind: {leftovers}")
        return
    with h5py.File(output, "r") as file:
        dataset = file["matrix"]
        layout = (dataset.shape, dataset.dtype.str, dataset.chunks, dataset.compression)
        wanted = ((OUTPUT_FRAMES, rows, cols), "<f4", (1, rows, cols), None)
        if layout != wanted:
            tally.fail(label, f"layout {layout}, expected {wanted}")
            return
        frames = [dataset[i] for i in range(OUTPUT_FRAMES)]
    what = f"{OUTPUT_FRAMES} frames x {OUTPUT_STEPS_PER_FRAME} steps in HDF5"
    tally.record(label, what, relative_error(frames, expected_frames))


def main() -> int:
    tally = Tally()
    check_steppers(tally)
    check_programs(tally)
    print(f"check.py: {tally.passed} passed, {tally.failed} failed, {tally.skipped} skipped")
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
