"""Where the bytes go: the module's transfer counters for each way of advancing a state.

For the official grid (or -r/-c), runs 1000 frames of 32 steps (or -n/-e) through each path and
prints the bytes the module copied, by direction, with the time: the state a Simulation owns;
CuPy arrays advanced in place (DLPack, CuPy's stream); CuPy arrays whose layout the stepper's
kernels cannot take (an odd column count: copied through the stepper's own fields, on the
device); NumPy arrays (across PCIe, twice per call). Then PyTorch's profiler, an independent
witness, counts the host copies of the process while PyTorch tensors are advanced.

    build/bin/lesson10_solution benchmarks/module/zero_copy.py
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "peers"))
import harness  # noqa: E402 - the peers' folder is on the path now

grayscott = harness.import_grayscott()


def report(path: str, frames: int, steps: int, seconds: float) -> None:
    moved = grayscott.transfer_counters()
    print(f"{path:<44} {frames} x {steps} steps in {seconds:7.3f} s; bytes copied: "
          f"host->device {moved['host_to_device']:>13,}, device->host {moved['device_to_host']:>13,}, "
          f"device->device {moved['device_to_device']:>13,}")


def run(path: str, call, wait, frames: int, steps: int) -> None:
    call(steps)  # warm-up: allocation, graphs
    wait()
    grayscott.reset_transfer_counters()
    start = time.perf_counter()
    for _ in range(frames):
        call(steps)
    wait()
    report(path, frames, steps, time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default="l06-temporal")
    parser.add_argument("-r", "--rows", type=int, default=1080)
    parser.add_argument("-c", "--cols", type=int, default=1920)
    parser.add_argument("-n", "--frames", type=int, default=1000)
    parser.add_argument("-e", "--steps", type=int, default=32)
    args = parser.parse_args()
    rows, cols, frames, steps = args.rows, args.cols, args.frames, args.steps
    status = grayscott.gpu_status()
    print(f"zero_copy: {args.impl}, {rows} x {cols}, on {status['name'] or 'no GPU'}")

    sim = grayscott.Simulation(rows, cols, args.impl)
    run("Simulation.advance (its own state)", sim.advance, sim.synchronize, frames, steps)
    stepper = grayscott.Stepper(rows, cols, args.impl)
    try:
        import cupy
    except ImportError:
        cupy = None
        print("CuPy is not installed: its paths are left out")
    if cupy is not None:
        stream = cupy.cuda.Stream(non_blocking=True)
        u, v = (cupy.asarray(a) for a in grayscott.initial_state(rows, cols))
        run("Stepper.advance, CuPy arrays in place",
            lambda k: stepper.advance(u, v, k, stream=stream), stream.synchronize, frames, steps)
        odd = grayscott.Stepper(rows, cols - 1, args.impl)
        ou, ov = (cupy.asarray(a) for a in grayscott.initial_state(rows, cols - 1))
        run(f"Stepper.advance, CuPy {rows} x {cols - 1} (copied)",
            lambda k: odd.advance(ou, ov, k, stream=stream), stream.synchronize, frames, steps)
    hu, hv = grayscott.initial_state(rows, cols)
    run("Stepper.advance, NumPy arrays", lambda k: stepper.advance(hu, hv, k), lambda: None,
        max(1, frames // 10), steps)

    try:
        import torch
        from torch.profiler import ProfilerActivity, profile
    except ImportError:
        print("PyTorch is not installed: no profiler")
        return 0
    tu, tv = (torch.from_numpy(a).cuda() for a in grayscott.initial_state(rows, cols))
    stepper.advance(tu, tv, steps)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as advancing:
        for _ in range(10):
            stepper.advance(tu, tv, steps)
        torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as reading:
        _ = sim.v  # the control: one download the profiler must see
        torch.cuda.synchronize()
    for what, trace in (("10 advances of PyTorch tensors in place", advancing),
                        ("one read of Simulation.v (the control)", reading)):
        names = [event.name for event in trace.events()]
        copies = sorted({n for n in names if re.search(r"(?i)^memcpy", n)})
        kernels = [n for n in names if re.search(r"kernel", n)]
        print(f"PyTorch profiler, {what}: {len(kernels)} kernels, "
              f"memory copies: {', '.join(copies) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
