"""What compute-sanitizer runs through the module (CTest: lesson10.sanitizer.memcheck, racecheck,
synccheck): every GPU path of grayscott on small odd grids, without CuPy or PyTorch.

- Simulation: the state owned by a GPU implementation of each lesson, loaded from NumPy and
  from device arrays, read back;
- Stepper.advance on the module's own device arrays: in place (l06's steppers, a grid whose
  layout their kernels take), copied through the stepper's fields (an odd grid, the other
  lessons), through DLPack and through __cuda_array_interface__;
- Stepper.advanced: new device arrays, handed out through DLPack and read back.

Exits 0 when every result matches the module's CPU reference, 1 otherwise.

    PYTHONPATH=build/python python3 tests/lesson10_sanitizer_run.py
"""

from __future__ import annotations

import sys

import numpy as np

import grayscott


class CudaArrayInterfaceOnly:
    def __init__(self, array):
        self.__cuda_array_interface__ = array.__cuda_array_interface__


def reference(u, v, steps):
    stepper = grayscott.Stepper(*u.shape, "reference")
    return stepper.advanced(u, v, steps)


def main() -> int:
    status = grayscott.gpu_status()
    if not status["available"]:
        print(f"GS_TEST_SKIPPED: no usable GPU: {status['reason']}")
        return 0
    # One implementation of each GPU lesson, and lesson 06's two ways of launching: the paths of
    # the module (in place: lesson 06; copied through the stepper's fields: the others).
    wanted = ("l06-temporal", "l06-fused-graph", "l05-tiled", "l04-generic", "l03-fused")
    gpu = [i["name"] for i in grayscott.list_implementations()
           if i["device"] == "gpu" and i["name"] in wanted]
    failures = []

    def check(what, got, expected):
        error = float(np.max(np.abs(np.asarray(got, np.float64) - expected)))
        if not error <= 1e-4:
            failures.append(f"{what}: off by {error}")

    for rows, cols in ((5, 7), (17, 33), (32, 64)):
        u0, v0 = grayscott.random_state(rows, cols, 5)
        expected_u, expected_v = reference(u0, v0, 9)
        for name in gpu:
            sim = grayscott.Simulation(rows, cols, name)
            sim.load(u0, v0)
            sim.advance(9)
            check(f"{name} {rows}x{cols} Simulation", sim.v, expected_v)
            sim.load(grayscott.to_device(u0), grayscott.to_device(v0))
            sim.advance(9)
            check(f"{name} {rows}x{cols} Simulation from device arrays", sim.u, expected_u)

            stepper = grayscott.Stepper(rows, cols, name)
            u, v = grayscott.to_device(u0), grayscott.to_device(v0)
            stepper.advance(u, v, 4)  # DLPack (the module's own export), or CAI without it
            stepper.advance(CudaArrayInterfaceOnly(u), CudaArrayInterfaceOnly(v), 5)
            check(f"{name} {rows}x{cols} Stepper.advance in place", v.numpy(), expected_v)
            new_u, _ = stepper.advanced(grayscott.to_device(u0), grayscott.to_device(v0), 9)
            check(f"{name} {rows}x{cols} Stepper.advanced", new_u.numpy(), expected_u)
    for failure in failures:
        print("FAILED", failure)
    print(f"sanitizer_run: {len(gpu)} GPU implementations, {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
