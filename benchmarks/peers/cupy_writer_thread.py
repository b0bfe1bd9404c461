"""CuPy with an h5py writer thread: cupy_slices.py's computation, end to end, every frame written
to HDF5 by a background thread while the GPU computes the next one.

The school's end-to-end GPU peer, the only one that overlaps output with compute. After each
frame the main thread downloads v (the download waits for that frame's kernels), queues it and
goes on launching the next frame; one thread owns the HDF5 file and writes the frames in order.
HDF5 itself runs one call at a time (its thread-safe build holds one global lock), so a single
writer is all the parallelism the file can take. h5py (3.0 and later) releases Python's GIL
during HDF5's dataset calls, so the main thread keeps the GPU busy meanwhile. The queue holds
at most QUEUE_DEPTH frames: when the disk is slower than the GPU, the GPU waits instead of
memory filling up.

cupy_slices.py without --no-output is the same run with nothing overlapped (each frame written
before the next is computed); the difference between the two is what the thread buys. Lesson 07
(planned) does this in C++ with pinned buffers and a copy stream.

    python3 benchmarks/peers/cupy_writer_thread.py -o /tmp/output.h5
"""

from __future__ import annotations

import queue
import sys
import threading

import cupy_slices
import harness

QUEUE_DEPTH = 4  # frames downloaded but not yet written (4 x 8.3 MB at the official size)


def write_frames_with_thread(
    stepper: harness.Stepper, params: harness.Params, frame_file: harness.FrameFile
) -> None:
    pending: queue.Queue = queue.Queue(maxsize=QUEUE_DEPTH)
    errors: list[Exception] = []

    def write_pending_frames() -> None:
        # Until the None that ends the run; after a failure, only drains the queue so the main
        # thread never blocks on a full queue.
        while (item := pending.get()) is not None:
            if not errors:
                try:
                    frame_file.write(*item)
                except Exception as error:  # handed to the main thread, which raises it
                    errors.append(error)

    writer = threading.Thread(target=write_pending_frames, name="hdf5-writer")
    writer.start()
    try:
        for frame in range(params.frames):
            if errors:
                break
            stepper.advance(params.steps_per_frame)
            pending.put((frame, stepper.fetch_v()))
    finally:
        pending.put(None)
        writer.join()
    if errors:
        raise errors[0]


if __name__ == "__main__":
    sys.exit(
        harness.run_peer(
            "cupy-writer-thread",
            "Gray-Scott with CuPy (slices), frames written to HDF5 by a background thread.",
            cupy_slices.open_stepper,
            write_frames=write_frames_with_thread,
            compute_only_twin="cupy-slices",
        )
    )
