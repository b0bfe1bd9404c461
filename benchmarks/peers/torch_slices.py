"""PyTorch on the GPU, array style: numpy_slices.py's step, unchanged, on CUDA tensors.

Tensors slice and compute like NumPy arrays, so the school's array-style step runs on them as
written: the same operations as cupy_slices.py, one kernel and one temporary each, so the two
peers compare the libraries' overheads on identical work.

PyTorch launches kernels asynchronously: synchronize() is torch.cuda.synchronize(), so the
timed frames include the GPU's work.

    python3 benchmarks/peers/torch_slices.py --no-output
"""

from __future__ import annotations

import sys

import harness
from numpy_slices import SlicesStepper


def open_stepper(rates: harness.Rates, allow_cpu: bool = False) -> SlicesStepper:
    """The stepper on the first CUDA device; on the CPU only if allow_cpu (check.py uses it to
    test the same code where there is no GPU)."""
    try:
        import torch
    except ImportError as error:
        raise harness.Unavailable(f"PyTorch is not installed ({error})") from None
    if torch.cuda.is_available():
        device = torch.device("cuda")
        synchronize = torch.cuda.synchronize
        device_kind, device_name = "gpu", torch.cuda.get_device_name(device)
    elif allow_cpu:
        device = torch.device("cpu")
        synchronize = lambda: None  # noqa: E731 - PyTorch on the CPU has finished when it returns
        device_kind, device_name = "cpu", harness.cpu_model()
    else:
        raise harness.Unavailable("PyTorch finds no CUDA device")
    return SlicesStepper(
        rates,
        to_device=lambda array: torch.tensor(array, device=device),  # always a copy
        to_host=lambda tensor: tensor.cpu().numpy(),
        synchronize=synchronize,
        device=device_kind,
        device_name=device_name,
    )


if __name__ == "__main__":
    sys.exit(
        harness.run_peer(
            "torch-slices",
            "Gray-Scott with PyTorch on the GPU, array style (slices).",
            open_stepper,
        )
    )
