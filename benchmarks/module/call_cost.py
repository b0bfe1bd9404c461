"""The cost of a call from Python: a fixed price per call, then a price per step.

For k = 1, 2, 4, ... steps per call, times calls of k steps (each followed by a wait for the
result, as a loop that looks at every frame must) through:
  - Simulation.advance(k): the state the module's stepper owns;
  - Stepper.advance(u, v, k) on CuPy arrays, when CuPy and a GPU are there (DLPack, in place);
  - Stepper.advance(u, v, k) on NumPy arrays (for a GPU implementation: across PCIe twice);
  - gs_benchmark -e k, the same stepper driven from C++ (with --gs-benchmark PATH),
then fits t(k) = t_call + k * t_step to each and prints the table. The model says what the
measurement shows: Python's price is a few microseconds per call, so a call of one step on a
GPU is mostly overhead, and a frame of 32 steps is not.

    build/bin/lesson10_solution benchmarks/module/call_cost.py --gs-benchmark build/bin/gs_benchmark
    build/bin/lesson10_solution benchmarks/module/call_cost.py --impl reference -r 64 -c 64
"""

from __future__ import annotations

import argparse
import csv
import datetime
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "peers"))
import harness  # noqa: E402 - the peers' folder is on the path now

grayscott = harness.import_grayscott()


def fit(points: list[tuple[int, float]]) -> tuple[float, float]:
    """Least squares of seconds per call against steps per call, each point weighted by its
    inverse (relative errors: the short calls, which carry t_call, count as much as the long
    ones): (t_call, t_step)."""
    k = np.array([p[0] for p in points], dtype=float)
    t = np.array([p[1] for p in points], dtype=float)
    t_step, t_call = np.polyfit(k, t, 1, w=1 / t)
    return float(t_call), float(t_step)


def timed_calls(call, wait, k: int, budget: float) -> float:
    """Seconds per call of k steps: warm-up, then calls until `budget` seconds (at least 3)."""
    call(k)
    wait()
    calls, start = 0, time.perf_counter()
    while calls < 3 or time.perf_counter() - start < budget:
        call(k)
        wait()
        calls += 1
    return (time.perf_counter() - start) / calls


def python_paths(args, implementation: str):
    rows, cols = args.rows, args.cols
    sim = grayscott.Simulation(rows, cols, implementation)
    yield "Simulation.advance", lambda k: sim.advance(k), sim.synchronize
    stepper = grayscott.Stepper(rows, cols, implementation)
    if stepper.device == "gpu":
        try:
            import cupy
        except ImportError:
            cupy = None
        if cupy is not None:
            u, v = (cupy.asarray(a) for a in grayscott.initial_state(rows, cols))
            stream = cupy.cuda.get_current_stream()
            yield ("Stepper.advance cupy", lambda k: stepper.advance(u, v, k, stream=stream),
                   stream.synchronize)
    host_u, host_v = grayscott.initial_state(rows, cols)
    yield "Stepper.advance numpy", lambda k: stepper.advance(host_u, host_v, k), lambda: None


def cpp_points(args, implementation: str, steps: list[int]) -> list[tuple[int, float]]:
    points = []
    for k in steps:
        with tempfile.TemporaryDirectory() as folder:
            table = os.path.join(folder, "bench.csv")
            frames = max(2, int(4096 / k))
            subprocess.run([args.gs_benchmark, "--impl", implementation, "-r", str(args.rows),
                            "-c", str(args.cols), "-n", str(frames), "-e", str(k),
                            "--max-seconds", str(args.budget), "--csv", table],
                           check=True, capture_output=True, text=True)
            with open(table, newline="") as file:
                row = next(csv.DictReader(file))
        per_step = args.rows * args.cols / float(row["cell_updates_per_s"])
        points.append((k, k * per_step))
    return points


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", help="implementation (default: the fastest here)")
    parser.add_argument("-r", "--rows", type=int, default=1080)
    parser.add_argument("-c", "--cols", type=int, default=1920)
    parser.add_argument("--max-steps", type=int, default=1024, help="largest k (1024)")
    parser.add_argument("--budget", type=float, default=0.3, help="seconds per point (0.3)")
    parser.add_argument("--gs-benchmark", metavar="PATH", help="also time gs_benchmark -e k")
    parser.add_argument("--csv", metavar="FILE", help="append the points to FILE")
    args = parser.parse_args()
    implementation = grayscott.Simulation(1, 1, args.impl).implementation
    steps = [1 << i for i in range(args.max_steps.bit_length()) if 1 << i <= args.max_steps]
    status = grayscott.gpu_status()
    device_name = status["name"] if status["available"] else harness.cpu_model()
    print(f"call_cost: {implementation}, {args.rows} x {args.cols}, {device_name}")

    results = {}
    for path, call, wait in python_paths(args, implementation):
        results[path] = [(k, timed_calls(call, wait, k, args.budget)) for k in steps]
    if args.gs_benchmark:
        results["C++ gs_benchmark"] = cpp_points(args, implementation, steps)

    print(f"{'steps/call':>10} " + " ".join(f"{path:>22}" for path in results))
    for i, k in enumerate(steps):
        print(f"{k:>10} " + " ".join(f"{results[p][i][1] * 1e6:>19.1f} us" for p in results))
    print("fit t(k) = t_call + k t_step (microseconds):")
    for path, points in results.items():
        t_call, t_step = fit(points)
        half = t_call / t_step if t_step > 0 else float("inf")
        print(f"  {path:>22}: t_call {t_call * 1e6:8.1f}, t_step {t_step * 1e6:8.2f}; "
              f"the call costs as much as {half:.1f} steps")
    if args.csv:
        new = not os.path.exists(args.csv) or os.path.getsize(args.csv) == 0
        date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
        with open(args.csv, "a", newline="") as file:
            writer = csv.writer(file, lineterminator="\n")
            if new:
                writer.writerow(["implementation", "path", "rows", "cols", "steps_per_call",
                                 "seconds_per_call", "device_name", "date", "commit"])
            for path, points in results.items():
                for k, seconds in points:
                    writer.writerow([implementation, path, args.rows, args.cols, k,
                                     f"{seconds:.6g}", device_name, date,
                                     harness.current_commit()])
    return 0


if __name__ == "__main__":
    sys.exit(main())
