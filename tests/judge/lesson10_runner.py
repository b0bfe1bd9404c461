"""Lesson 10's runner for gs_judge (apps/gs_judge.cpp): drives the learner's grayscott module.

The judge hands over the starting state (u.f32, v.f32: float32, row-major) and the case on the
command line; this script advances it with the module, frame by frame, and writes u-N.f32 and
v-N.f32 after frame N into the same folder. It alternates between the module's two ways in: a
Simulation that owns its state (load, advance, fetch) and a Stepper that advances the caller's
arrays in place (the learner's binding.hpp: the array's check, its view, the advance in
batches), on NumPy arrays for the CPU and on CuPy arrays for the GPU (through DLPack: the
learner's from_dlpack.hpp). The judge compares every file with the reference it computes itself;
nothing here decides a grade.
"""
import argparse
import os
import sys

import numpy as np


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--folder", required=True)
    for name in ("rows", "cols", "frames", "steps"):
        parser.add_argument("--" + name, type=int, required=True)
    parser.add_argument("--device", choices=("cpu", "gpu"), required=True)
    for flag in ("-f", "-k", "-u", "-v", "-t"):
        parser.add_argument(flag, type=float, required=True)
    a = parser.parse_args()

    import grayscott

    shape = (a.rows, a.cols)

    def read(name):
        return np.fromfile(os.path.join(a.folder, name), dtype=np.float32).reshape(shape)

    def write(name, array):
        np.ascontiguousarray(array, dtype=np.float32).tofile(os.path.join(a.folder, name))

    u, v = read("u.f32"), read("v.f32")
    rates = dict(feed=a.f, kill=a.k, du=a.u, dv=a.v, dt=a.t)
    if a.device == "cpu":
        implementation = "l02-simd-omp"
        to_device = from_device = lambda array: array
    else:
        import cupy

        implementation = "l06-temporal"
        to_device, from_device = cupy.asarray, cupy.asnumpy
    simulation = grayscott.Simulation(a.rows, a.cols, implementation, **rates)
    stepper = grayscott.Stepper(a.rows, a.cols, implementation, **rates)
    for frame in range(1, a.frames + 1):
        if frame % 2 == 1:
            simulation.load(to_device(u), to_device(v), copy=True)
            simulation.advance(a.steps)
            u, v = simulation.fetch()
        else:
            du, dv = to_device(u.copy()), to_device(v.copy())
            stepper.advance(du, dv, a.steps)
            u, v = from_device(du), from_device(dv)
        write("u-%d.f32" % frame, u)
        write("v-%d.f32" % frame, v)
    return 0


if __name__ == "__main__":
    sys.exit(main())
