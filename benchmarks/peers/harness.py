"""What every peer shares: the course's flags, the initial state, the timing rule, the HDF5
layout and the result line.

A peer is the Gray-Scott simulation written as the school's Python days write it (NumPy, CuPy,
PyTorch, JAX). Everything but the stepper - the object that owns the state and advances it - is
here, identical for every peer and modelled on the C++ course's common/ and gs_benchmark, so the
peers and the lessons are timed by the same rule and reported in the same CSV schema:

- compute only (--no-output): one untimed warm-up frame, the initial state loaded again, then
  whole frames timed with the device synchronized after each one, as a real program must; a
  slow peer stops when --max-seconds is spent and its full-run time is extrapolated;
- end to end (the default): every frame downloaded and written to HDF5, timed from loading the
  initial state to the finished file (after the same untimed warm-up frame).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import datetime
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Protocol

import numpy as np

from measurement_csv import CSV_COLUMNS  # beside this file; tools/charts.py reads the same

# Exit statuses: 0 done; 1 failed (an exception, or a state that is not finite); 2 bad flags
# (argparse's); 3 skipped: the peer's package or device is missing (gray_scott's "no GPU" status).
EXIT_FAILURE = 1
EXIT_UNAVAILABLE = 3

DEFAULT_MAX_SECONDS = 60.0  # gs_benchmark's default budget per implementation
STABILITY_LIMIT = 1.0 / 6.0  # largest dt * max(Du, Dv) for explicit Euler with this stencil
REPOSITORY = Path(__file__).resolve().parents[2]


class Unavailable(Exception):
    """The peer cannot run here (its package or its device is missing): skipped, not failed."""


def as_float32(value: float) -> float:
    """The Python float equal to value rounded to float32: the C++ programs' rates exactly."""
    return float(np.float32(value))


@dataclasses.dataclass(frozen=True)
class Rates:
    """The five numbers of one step, as float32 values held in Python floats."""

    diffusion_u: float = as_float32(0.1)
    diffusion_v: float = as_float32(0.05)
    feed: float = as_float32(0.014)
    kill: float = as_float32(0.054)
    dt: float = as_float32(1.0)


@dataclasses.dataclass(frozen=True)
class Params:
    """One run: the grid, the frames and the rates (the official run by default)."""

    rows: int = 1080
    cols: int = 1920
    frames: int = 1000
    steps_per_frame: int = 32
    output: str = "output.h5"
    rates: Rates = Rates()

    @property
    def cells(self) -> int:
        return self.rows * self.cols

    @property
    def total_steps(self) -> int:
        return self.frames * self.steps_per_frame


class Stepper(Protocol):
    """The part each peer writes: it owns u and v (on its device) and advances them."""

    device: str  # "cpu" or "gpu"
    device_name: str  # the GPU as its framework names it (nvidia-smi's name), or the CPU model

    def load(self, u: np.ndarray, v: np.ndarray) -> None:
        """Copies the state (float32 host arrays, left unchanged) to the device."""

    def advance(self, steps: int) -> None:
        """Queues `steps` steps; on a GPU it may return before they are done."""

    def synchronize(self) -> None:
        """Returns when every queued step is done."""

    def fetch_v(self) -> np.ndarray:
        """v as a host array of the grid's shape (waits for the steps queued before)."""

    def fetch_state(self) -> tuple[np.ndarray, np.ndarray]:
        """(u, v) as host arrays, for checks."""


def initial_state(rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """u = 1, v = 0, except a rectangle a little above the centre where u = 0, v = 1."""
    u = np.ones((rows, cols), dtype=np.float32)
    v = np.zeros((rows, cols), dtype=np.float32)
    seed_rows = slice(max(0, 7 * rows // 16 - 4), max(0, 8 * rows // 16 - 4))
    seed_cols = slice(7 * cols // 16, 8 * cols // 16)
    u[seed_rows, seed_cols] = 0.0
    v[seed_rows, seed_cols] = 1.0
    return u, v


@dataclasses.dataclass
class Options:
    """The flags that say how to run and report, not what to compute."""

    no_output: bool
    max_seconds: float | None
    json: bool
    csv: str | None


def parse_command_line(description: str, argv: list[str] | None) -> tuple[Params, Options]:
    """The C++ programs' flags (same names, same defaults), then the peers' own."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("-r", "--nbrow", type=int, default=1080, help="grid rows (1080)")
    parser.add_argument("-c", "--nbcol", type=int, default=1920, help="grid columns (1920)")
    parser.add_argument("-n", "--nbimage", type=int, default=1000, help="frames (1000)")
    parser.add_argument("-e", "--nbextrastep", type=int, default=32, help="steps per frame (32)")
    parser.add_argument("-o", "--output", default="output.h5", help="HDF5 file (output.h5)")
    parser.add_argument("-k", "--killrate", type=float, default=0.054, help="k (0.054)")
    parser.add_argument("-f", "--feedrate", type=float, default=0.014, help="F (0.014)")
    parser.add_argument("-t", "--deltat", type=float, default=1.0, help="time step (1.0)")
    parser.add_argument("-u", "--diffusion-u", type=float, default=0.1, help="Du (0.1)")
    parser.add_argument("-v", "--diffusion-v", type=float, default=0.05, help="Dv (0.05)")
    parser.add_argument(
        "--no-output", action="store_true", help="compute only: time the steps, write no file"
    )
    parser.add_argument(
        "--max-seconds",
        type=float,
        help=f"compute only: time budget ({DEFAULT_MAX_SECONDS:g} s); a slower peer is timed on "
        "fewer frames and its full-run time extrapolated (marked ~)",
    )
    parser.add_argument("--json", action="store_true", help="print one line of JSON on stdout")
    parser.add_argument("--csv", metavar="FILE", help="append one row to this CSV file")
    args = parser.parse_args(argv)
    rates = Rates(
        diffusion_u=as_float32(args.diffusion_u),
        diffusion_v=as_float32(args.diffusion_v),
        feed=as_float32(args.feedrate),
        kill=as_float32(args.killrate),
        dt=as_float32(args.deltat),
    )
    params = Params(args.nbrow, args.nbcol, args.nbimage, args.nbextrastep, args.output, rates)
    problems = find_problems(params)
    if problems:
        parser.error("; ".join(problems))
    return params, Options(args.no_output, args.max_seconds, args.json, args.csv)


def find_problems(params: Params) -> list[str]:
    """The C++ programs' refusals, one message per problem, each naming its flag."""
    problems = []
    counts = {
        "-r/--nbrow": params.rows,
        "-c/--nbcol": params.cols,
        "-n/--nbimage": params.frames,
        "-e/--nbextrastep": params.steps_per_frame,
    }
    for flag, value in counts.items():
        if value < 1:
            problems.append(f"{flag} must be at least 1 (got {value})")
    rates = params.rates
    positive = {
        "-k/--killrate": rates.kill,
        "-f/--feedrate": rates.feed,
        "-t/--deltat": rates.dt,
        "-u/--diffusion-u": rates.diffusion_u,
        "-v/--diffusion-v": rates.diffusion_v,
    }
    for flag, value in positive.items():
        if not (np.isfinite(value) and value > 0):
            problems.append(f"{flag} must be a finite number greater than 0 (got {value})")
    if not problems:
        product = rates.dt * max(rates.diffusion_u, rates.diffusion_v)
        if product > STABILITY_LIMIT * (1 + 1e-6):
            problems.append(
                f"-t/--deltat is unstable: dt * max(Du, Dv) must be at most 1/6 (got {product:g})"
            )
    if not params.output:
        problems.append("-o/--output must not be empty")
    return problems


@dataclasses.dataclass
class Result:
    """One measurement, as reported (the human line, JSON, a CSV row)."""

    implementation: str
    device: str
    device_name: str
    kind: str  # "compute" or "end-to-end"
    params: Params
    steps_timed: int
    seconds_timed: float
    lesson: str = "peer"  # the course's lesson for a peer that runs the course's code (10_python)

    @property
    def extrapolated(self) -> bool:
        return self.steps_timed < self.params.total_steps

    @property
    def seconds(self) -> float:
        """Seconds for the whole requested run (extrapolated at the measured rate if need be)."""
        return self.seconds_timed * self.params.total_steps / self.steps_timed

    @property
    def cell_updates_per_s(self) -> float:
        return self.params.cells * self.steps_timed / self.seconds_timed


def warm_up(stepper: Stepper, params: Params) -> tuple[np.ndarray, np.ndarray]:
    """One untimed frame (compilation, allocation, clocks ramping up), then the initial state
    loaded again so that every peer times the same steps from the same state."""
    u, v = initial_state(params.rows, params.cols)
    stepper.load(u, v)
    stepper.advance(params.steps_per_frame)
    stepper.synchronize()
    stepper.load(u, v)
    stepper.synchronize()
    return u, v


def measure_compute(stepper: Stepper, params: Params, max_seconds: float) -> tuple[int, float]:
    """Times whole frames until the run is done or the budget is spent: (steps, seconds)."""
    warm_up(stepper, params)
    steps_timed = 0
    start = time.perf_counter()
    for _ in range(params.frames):
        stepper.advance(params.steps_per_frame)
        stepper.synchronize()
        steps_timed += params.steps_per_frame
        if time.perf_counter() - start > max_seconds:
            break
    return steps_timed, time.perf_counter() - start


class FrameFile:
    """The course's HDF5 layout: dataset `matrix`, float32, [frames, rows, cols], one chunk per
    frame, no compression, the run's parameters as attributes (as gray_scott writes them).

    The frames go to `<output>.partial-<pid>`, renamed to `<output>` by commit() once every
    frame is in; leaving the `with` block any other way deletes it, so no file ever looks
    complete without being so.
    """

    def __init__(self, params: Params, implementation: str):
        import h5py  # only runs that write need it

        self.path = params.output
        self.temporary_path = f"{params.output}.partial-{os.getpid()}"
        self.frames = params.frames
        self.frames_written = 0
        self._file = h5py.File(self.temporary_path, "w")
        shape = (params.frames, params.rows, params.cols)
        self._dataset = self._file.create_dataset(
            "matrix", shape=shape, dtype="<f4", chunks=(1, params.rows, params.cols)
        )
        attributes = {
            "nbrow": np.int32(params.rows),
            "nbcol": np.int32(params.cols),
            "nbimage": np.int32(params.frames),
            "nbextrastep": np.int32(params.steps_per_frame),
            "killrate": np.float32(params.rates.kill),
            "feedrate": np.float32(params.rates.feed),
            "deltat": np.float32(params.rates.dt),
            "diffusion_u": np.float32(params.rates.diffusion_u),
            "diffusion_v": np.float32(params.rates.diffusion_v),
            "implementation": implementation,
        }
        self._dataset.attrs.update(attributes)

    def write(self, index: int, v: np.ndarray) -> None:
        self._dataset[index] = v
        self.frames_written += 1

    def commit(self) -> None:
        if self.frames_written != self.frames:
            raise RuntimeError(
                f"only {self.frames_written} of {self.frames} frames were written; "
                f"'{self.path}' was not created"
            )
        self._file.close()
        os.replace(self.temporary_path, self.path)

    def __enter__(self) -> FrameFile:
        return self

    def __exit__(self, error_type, error, traceback) -> None:
        if error_type is not None:
            self._file.close()
            os.remove(self.temporary_path)


def import_grayscott():
    """Lesson 10's module: from the path, else from $GS_PYTHON_MODULE_DIR or the build folder
    build/python of this repository (where `cmake --build build --target grayscott` puts it)."""
    try:
        import grayscott

        return grayscott
    except ImportError:
        pass
    folder = os.environ.get("GS_PYTHON_MODULE_DIR", str(REPOSITORY / "build" / "python"))
    sys.path.insert(0, folder)
    try:
        import grayscott

        return grayscott
    except ImportError as error:
        raise Unavailable(
            f"the module grayscott is not importable by {sys.executable} from {folder} ({error}): "
            "build it (cmake --build build --target grayscott) for this Python, or run the script "
            "through build/bin/lesson10_solution"
        ) from None


def require_h5py() -> None:
    try:
        import h5py  # noqa: F401 - only asking whether it is there
    except ImportError as error:
        raise Unavailable(f"h5py is not installed ({error}); --no-output runs without it") from None


def write_frames_serially(stepper: Stepper, params: Params, frame_file: FrameFile) -> None:
    """Compute a frame, download it, write it, then the next: nothing overlaps."""
    for frame in range(params.frames):
        stepper.advance(params.steps_per_frame)
        frame_file.write(frame, stepper.fetch_v())


WriteFrames = Callable[[Stepper, Params, FrameFile], None]


def measure_end_to_end(
    stepper: Stepper, params: Params, implementation: str, write_frames: WriteFrames
) -> float:
    """Seconds from loading the initial state to the finished, renamed file."""
    u, v = warm_up(stepper, params)
    start = time.perf_counter()
    stepper.load(u, v)
    with FrameFile(params, implementation) as frame_file:
        write_frames(stepper, params, frame_file)
        frame_file.commit()
    return time.perf_counter() - start


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def current_commit() -> str:
    """$GS_COMMIT where .git did not travel (as scripts/gpu_check.sh), else git describe."""
    if os.environ.get("GS_COMMIT"):
        return os.environ["GS_COMMIT"]
    try:
        described = subprocess.run(
            ["git", "-C", str(REPOSITORY), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            check=True,
        )
        return described.stdout.strip() or "unknown"
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


# The libraries a peer's speed depends on, by the name each is imported under and the name said.
LIBRARIES = (
    ("numpy", "NumPy"),
    ("cupy", "CuPy"),
    ("torch", "PyTorch"),
    ("jax", "JAX"),
    ("jaxlib", "jaxlib"),
    ("h5py", "h5py"),
    ("grayscott", "grayscott"),
)


def library_versions() -> dict[str, str]:
    """Python's version and that of each library this process imported (the peer's own, NumPy,
    h5py when it wrote frames): a ratio against a peer is a ratio against these versions, so
    every result names them. Read from the imported modules, never guessed."""
    versions = {"Python": sys.version.split()[0]}
    for module_name, said in LIBRARIES:
        module = sys.modules.get(module_name)
        if module is not None:
            versions[said] = str(getattr(module, "__version__", "unknown"))
    torch = sys.modules.get("torch")
    if torch is not None and getattr(getattr(torch, "version", None), "cuda", None):
        versions["PyTorch's CUDA"] = str(torch.version.cuda)
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        try:
            runtime = cupy.cuda.runtime.runtimeGetVersion()
            versions["CuPy's CUDA runtime"] = f"{runtime // 1000}.{runtime % 1000 // 10}"
        except Exception:  # noqa: BLE001 - no device, no driver: the version is simply not said
            pass
    return versions


def describe_versions(versions: dict[str, str]) -> str:
    return ", ".join(f"{name} {version}" for name, version in versions.items())


def csv_row(result: Result) -> dict[str, str]:
    return {
        "implementation": result.implementation,
        "lesson": result.lesson,
        "device": result.device,
        "kind": result.kind,
        "seconds": f"{result.seconds:.4g}",
        "cell_updates_per_s": f"{result.cell_updates_per_s:.4e}",
        "steps_timed": str(result.steps_timed),
        "extrapolated": "true" if result.extrapolated else "false",
        "device_name": result.device_name,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "commit": current_commit(),
    }


def append_csv(path: str, row: dict[str, str]) -> None:
    """Appends one row, writing the header first when the file is new or empty."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, "a", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, fieldnames=CSV_COLUMNS, lineterminator="\n")
        if new:
            writer.writeheader()
        writer.writerow(row)


def describe(result: Result) -> str:
    p = result.params
    what = "compute only" if result.kind == "compute" else "with output"
    line = (
        f"{result.implementation}: {p.rows} x {p.cols}, {p.frames} frames x {p.steps_per_frame} "
        f"steps, {what}: "
    )
    if result.extrapolated:
        line += (
            f"~{result.seconds:.4g} s (extrapolated: {result.steps_timed} of {p.total_steps} "
            f"steps timed in {result.seconds_timed:.3g} s)"
        )
    else:
        line += f"{result.seconds:.4g} s"
    return (
        f"{line}, {result.cell_updates_per_s:.3e} cell-updates/s on {result.device} "
        f"({result.device_name}); {describe_versions(library_versions())}"
    )


def report(result: Result, options: Options) -> None:
    """The human line (on stderr under --json), then the JSON line and the CSV row if asked. The
    line and the JSON name the libraries' versions (library_versions()); the CSV keeps the
    columns it shares with the C++ programs and the charts, so run.sh prints the versions beside
    it."""
    print(describe(result), file=sys.stderr if options.json else sys.stdout, flush=True)
    row = csv_row(result)
    if options.json:
        record = {
            **row,
            "seconds": result.seconds,
            "cell_updates_per_s": result.cell_updates_per_s,
            "steps_timed": result.steps_timed,
            "extrapolated": result.extrapolated,
            "rows": result.params.rows,
            "cols": result.params.cols,
            "frames": result.params.frames,
            "steps_per_frame": result.params.steps_per_frame,
            "seconds_timed": result.seconds_timed,
            "versions": library_versions(),
        }
        print(json.dumps(record), flush=True)
    if options.csv:
        append_csv(options.csv, row)


def take_impl_flag(argv: list[str], program: str,
                   default: str | None = None) -> tuple[str | None, list[str]]:
    """--impl NAME, the flag of the peers that run the course's module, taken out of @p argv
    before parse_command_line() reads the course's flags: (NAME or @p default, the rest). An
    --impl without a name ends the program with status 2, saying so."""
    if "--impl" not in argv:
        return default, list(argv)
    at = argv.index("--impl")
    if at + 1 >= len(argv):
        print(f"{program}: --impl needs a name", file=sys.stderr)
        sys.exit(2)
    return argv[at + 1], argv[:at] + argv[at + 2:]


def run_peer(
    implementation: str,
    description: str,
    open_stepper: Callable[[Rates], Stepper],
    write_frames: WriteFrames = write_frames_serially,
    compute_only_twin: str | None = None,
    argv: list[str] | None = None,
    lesson: str = "peer",
) -> int:
    """A peer's whole program: flags, run, check, report. Returns the exit status; an exception
    ends it with its traceback and status 1 (after deleting a partial output file).

    compute_only_twin names the peer that does the same computing when this one only differs
    by how it writes: under --no-output this one skips itself and names the twin.
    """
    params, options = parse_command_line(description, argv)
    if options.no_output and compute_only_twin:
        print(
            f"{implementation}: skipped: --no-output; without output this peer is "
            f"{compute_only_twin}",
            file=sys.stderr,
        )
        return EXIT_UNAVAILABLE
    try:
        if not options.no_output:
            require_h5py()
        stepper = open_stepper(params.rates)
    except Unavailable as reason:
        print(f"{implementation}: skipped: {reason}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    if options.no_output:
        budget = DEFAULT_MAX_SECONDS if options.max_seconds is None else options.max_seconds
        steps_timed, seconds = measure_compute(stepper, params, budget)
        kind = "compute"
    else:
        if options.max_seconds is not None:
            print(
                f"{implementation}: note: --max-seconds applies to --no-output runs only; "
                "this run writes every frame",
                file=sys.stderr,
            )
        seconds = measure_end_to_end(stepper, params, implementation, write_frames)
        steps_timed, kind = params.total_steps, "end-to-end"
    u, v = stepper.fetch_state()
    if not (np.isfinite(u).all() and np.isfinite(v).all()):
        print(f"{implementation}: error: the state is not finite after the run", file=sys.stderr)
        return EXIT_FAILURE
    result = Result(
        implementation, stepper.device, stepper.device_name, kind, params, steps_timed, seconds,
        lesson,
    )
    report(result, options)
    return 0
