"""CuPy, array style: numpy_slices.py's step, unchanged, on arrays in GPU memory.

The school's first GPU port: replace `numpy` by `cupy` and the arrays move to the GPU. The state
is uploaded once and stays there (lesson 03's toll booth), but each operation of the step is
still its own kernel with its own temporary array: a step makes several dozen passes over the
grid where one fused kernel makes one (lessons 03 to 06).

CuPy launches kernels asynchronously: synchronize() waits on the current stream, so the timed
frames include the GPU's work, not only the launches.

    python3 benchmarks/peers/cupy_slices.py --no-output
"""

from __future__ import annotations

import sys

import harness
from numpy_slices import SlicesStepper


def open_stepper(rates: harness.Rates) -> SlicesStepper:
    try:
        import cupy
    except ImportError as error:
        raise harness.Unavailable(f"CuPy is not installed ({error})") from None
    try:
        device_count = cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError as error:
        raise harness.Unavailable(f"CuPy finds no CUDA device ({error})") from None
    if device_count == 0:
        raise harness.Unavailable("CuPy finds no CUDA device")
    properties = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    return SlicesStepper(
        rates,
        to_device=cupy.asarray,
        to_host=cupy.asnumpy,
        synchronize=cupy.cuda.get_current_stream().synchronize,
        device="gpu",
        device_name=properties["name"].decode(),
    )


if __name__ == "__main__":
    sys.exit(
        harness.run_peer("cupy-slices", "Gray-Scott with CuPy, array style (slices).", open_stepper)
    )
