"""The course's own stepper, called from Python: lesson 10's module `grayscott`.

Not a port: the same C++/CUDA code that gray_scott runs (by default the fastest implementation
this machine offers, l06-temporal on a GPU), driven by the peers' harness from Python, one
`Simulation.advance(steps)` call per frame. Beside jax-3x3 it answers the question of lesson 10:
what is left of the course's speed when the loop over frames is written in Python? The row's
lesson column says 10_python, so the charts draw it as the course's code, not as a peer.

The module must be built for the Python that runs this script (cmake --build build --target
grayscott); build/bin/lesson10_solution is that Python with the module on its path.

    build/bin/lesson10_solution benchmarks/peers/grayscott_module.py --no-output
    PYTHONPATH=build/python python3 benchmarks/peers/grayscott_module.py --no-output --impl reference -r 64 -c 64 -n 10
"""

from __future__ import annotations

import sys

import numpy as np

import harness


class ModuleStepper:
    """The harness's Stepper over grayscott.Simulation: the state stays in the course's
    stepper (on the GPU for a GPU implementation) and crosses to the host only when fetched."""

    def __init__(self, grayscott, implementation: str | None, rates: harness.Rates):
        self._grayscott = grayscott
        self._implementation = implementation
        self._rates = rates
        self._simulation = None
        status = grayscott.gpu_status()
        self.device_name = status["name"] if status["available"] else harness.cpu_model()
        self.device = "gpu"

    def load(self, u: np.ndarray, v: np.ndarray) -> None:
        if self._simulation is None or (self._simulation.rows, self._simulation.cols) != u.shape:
            r = self._rates
            self._simulation = self._grayscott.Simulation(
                u.shape[0], u.shape[1], self._implementation, feed=r.feed, kill=r.kill, dt=r.dt,
                du=r.diffusion_u, dv=r.diffusion_v)
            self.device = self._simulation.device
            if self.device == "cpu":
                self.device_name = harness.cpu_model()
        self._simulation.load(u, v)

    def advance(self, steps: int) -> None:
        self._simulation.advance(steps)

    def synchronize(self) -> None:
        self._simulation.synchronize()

    def fetch_v(self) -> np.ndarray:
        return self._simulation.v

    def fetch_state(self) -> tuple[np.ndarray, np.ndarray]:
        return self._simulation.fetch()

    @property
    def implementation(self) -> str:
        return self._simulation.implementation


def main(argv: list[str]) -> int:
    implementation, argv = harness.take_impl_flag(argv, "grayscott_module.py")
    try:
        grayscott = harness.import_grayscott()
        choice = grayscott.Simulation(1, 1, implementation)  # the name and default, checked now
    except harness.Unavailable as reason:
        print(f"grayscott-module: skipped: {reason}", file=sys.stderr)
        return harness.EXIT_UNAVAILABLE
    except (ValueError, RuntimeError) as error:
        print(f"grayscott-module: skipped: {error}", file=sys.stderr)
        return harness.EXIT_UNAVAILABLE
    name = f"python-{choice.implementation}"
    return harness.run_peer(
        name,
        "The course's stepper from Python (lesson 10's module grayscott), one call per frame. "
        "--impl NAME picks an implementation (default: the fastest here).",
        lambda rates: ModuleStepper(grayscott, choice.implementation, rates),
        argv=argv,
        lesson="10_python",
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
