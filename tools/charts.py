"""The course's charts, drawn from measurement CSV files (docs/data/*.csv).

Most charts read tables of runs, in the schema benchmarks/peers/run.sh writes and the course's
C++ rows share: one row per implementation and run (CSV_COLUMNS, defined once in
benchmarks/peers/measurement_csv.py). Each chart is a subcommand, a function that draws it:

    python3 tools/charts.py ladder docs/data/ladder-*.csv -o docs/figures/ladder.svg [-o x.png]
    python3 tools/charts.py roofline LADDER.csv --bandwidth BANDWIDTH.csv --point IMPL=BYTES ...
    python3 tools/charts.py shapes LADDER.csv --bandwidth BANDWIDTH.csv --impl 'l04-*' ...
    python3 tools/charts.py threads THREADS.csv -o threads.svg
    python3 tools/charts.py transfers BANDWIDTH.csv -o transfers.svg
    python3 tools/charts.py timeline BEFORE.csv [AFTER.csv] --frames 12 -o timeline.svg

tools/make_figures.sh holds the call that draws each of the course's charts. The other kinds
of file in docs/data/ (OTHER_TABLES): what `gray_scott --timeline FILE` writes (when each frame
was computed, copied, written, and when the computing thread waited for a free slot), measured
bandwidths, and one implementation at several thread counts; the ladder skips them. Lines that
start with # are comments: a file written by hand says there where its numbers were measured.

The figures sit on an opaque white card with rounded corners and dark text, so they read the
same on GitHub's light and dark themes, and they are deterministic (fixed SVG ids, no date in
the metadata, glyphs as paths): the same data gives the same file, so a diff of a figure means
that its data changed. Needs matplotlib (Debian: python3-matplotlib).
"""

from __future__ import annotations

import argparse
import csv
import fnmatch
import math
import re
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - after choosing the file-only backend
import matplotlib.ticker  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402

# The table of runs: one definition, shared with the peers' harness that writes it.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks" / "peers"))
from measurement_csv import CSV_COLUMNS  # noqa: E402 - its folder is on the path now

TIMELINE_COLUMNS = ("lane", "frame", "start_s", "end_s")
# Measured bandwidths (gray_scott --device, gs_benchmark's copy): one row per kind of transfer.
BANDWIDTH_COLUMNS = ("transfer", "memory", "gb_per_s", "measured_by")
# One implementation at several OpenMP thread counts (lesson 02's scaling).
THREADS_COLUMNS = (
    "implementation",
    "threads",
    "seconds",
    "cell_updates_per_s",
    "extrapolated",
    "device_name",
    "date",
    "commit",
)
# The cost of a call from Python (benchmarks/module/call_cost.py): seconds per call of k steps.
CALL_COST_COLUMNS = (
    "implementation",
    "path",
    "rows",
    "cols",
    "steps_per_call",
    "seconds_per_call",
    "device_name",
    "date",
    "commit",
)
OTHER_TABLES = {  # the other kinds of file in docs/data/, which the ladder skips by name
    TIMELINE_COLUMNS: "a timeline",
    BANDWIDTH_COLUMNS: "a table of bandwidths",
    THREADS_COLUMNS: "a table of thread counts",
    CALL_COST_COLUMNS: "a table of call costs",
}
OFFICIAL_CELL_UPDATES = 1080 * 1920 * 32_000  # the official run: 1000 frames x 32 steps

INK = "#1f2328"  # GitHub's light-theme text colour, on the white card in both themes
MUTED = "#59636e"
CARD_EDGE = "#d1d9e0"
GRID = "#e6e9ed"
COLOURS = {  # (group, device): the course's rungs in blues, the Python peers in oranges, the
    # course's steppers called from Python (lesson 10's module, lesson column 10_python) in purples
    ("course", "cpu"): "#9ecae1",
    ("course", "gpu"): "#2171b5",
    ("peer", "cpu"): "#fdae6b",
    ("peer", "gpu"): "#d94801",
    ("module", "cpu"): "#bcbddc",
    ("module", "gpu"): "#6a51a3",
}
LANES = (  # the timeline's lanes, top to bottom, in the colours of docs/figures/async-pipeline.svg
    # (lane in the CSV, its name on the chart, colour of even frames, colour of odd frames): two
    # shades, so that frames that follow each other without a gap stay apart.
    ("compute", "compute", "#2f7d32", "#66a86a"),  # a frame's steps (GPU: and its snapshot)
    ("copy", "copy", "#c62828", "#e57373"),  # the frame into its host slot (GPU: across PCIe)
    ("write", "write", "#6f42c1", "#9d7fdb"),  # the HDF5 write of the frame
    ("wait", "wait for a slot", "#8c959f", "#b8bec5"),  # the computing thread: the ring is full
)
KIND_WORDS = {  # how a note names a row's kind
    "compute": "compute only",
    "end-to-end": "end to end, its output written",
    "end-to-end-fsync": "end to end, its output written and flushed to disk",
}
MIN_BAR = 0.0015  # a bar shorter than this share of the time axis is drawn this wide, to show
LEGEND = {
    ("course", "cpu"): "course, CPU",
    ("course", "gpu"): "course, GPU",
    ("peer", "cpu"): "Python peer, CPU",
    ("peer", "gpu"): "Python peer, GPU",
    ("module", "cpu"): "course from Python, CPU",
    ("module", "gpu"): "course from Python, GPU",
}
MODULE_LESSON = "10_python"  # rows of lesson 10: the course's code, driven from Python


def read_table(path: str) -> tuple[tuple[str, ...], list[dict]]:
    """The columns and rows of a CSV file. Lines that start with # are skipped: a file written by
    hand says there where and when its numbers were measured (device, date, commit)."""
    if not Path(path).is_file():
        sys.exit(f"charts.py: {path}: no such file")
    with open(path, newline="", encoding="utf-8") as file:
        lines = [line for line in file if not line.lstrip().startswith("#")]
    reader = csv.DictReader(lines)
    rows = list(reader)
    return tuple(reader.fieldnames or ()), rows


def read_rows(paths: list[str]) -> list[dict]:
    """Every row of every table of runs, in order; seconds and rates as floats, extrapolated as
    bool. Files of the other kinds in docs/data/ (OTHER_TABLES) are skipped with a message."""
    rows = []
    for path in paths:
        columns, table = read_table(path)
        if columns in OTHER_TABLES:
            print(
                f"charts.py: skipped {path}: {OTHER_TABLES[columns]}, not a table of runs",
                file=sys.stderr,
            )
            continue
        missing = set(CSV_COLUMNS) - set(columns)
        if missing:
            sys.exit(f"charts.py: {path}: missing column(s) {', '.join(sorted(missing))}")
        for row in table:
            row["seconds"] = float(row["seconds"])
            row["cell_updates_per_s"] = float(row["cell_updates_per_s"])
            row["extrapolated"] = row["extrapolated"].strip().lower() == "true"
            row["source"] = path
            rows.append(row)
    return rows


def group_of(row: dict) -> str:
    if row["lesson"] == "peer":
        return "peer"
    return "module" if row["lesson"] == MODULE_LESSON else "course"


def colour_of(row: dict) -> str:
    return COLOURS[(group_of(row), row["device"])]


def newest_per_implementation(rows: list[dict]) -> list[dict]:
    """One row per implementation: the newest date; on a tie, the row read last."""
    chosen: dict[str, dict] = {}
    for row in rows:
        kept = chosen.get(row["implementation"])
        if kept is None or row["date"] >= kept["date"]:
            chosen[row["implementation"]] = row
    return list(chosen.values())


def is_official_run(row: dict) -> bool:
    """The CSV names no grid, but seconds x rate is the run's cell-updates: 66.4 G officially."""
    cell_updates = row["seconds"] * row["cell_updates_per_s"]
    return abs(cell_updates / OFFICIAL_CELL_UPDATES - 1) < 0.01


def format_seconds(row: dict) -> str:
    return f"{'~' if row['extrapolated'] else ''}{row['seconds']:.4g} s"


def sources(rows: list[dict]) -> str:
    """Two lines: the dates (and commits) of the course's and the peers' rows, then the devices."""
    def dates(runs: list[tuple[str, str]]) -> str:
        return ", ".join(date if commit == "unknown" else f"{date} ({commit})"
                         for date, commit in runs)

    parts = []
    groups = (("course", "course"), ("module", "from Python"), ("peer", "Python peers"))
    every_run = sorted({(row["date"], row["commit"]) for row in rows})
    for group, name in groups:
        runs = sorted({(row["date"], row["commit"]) for row in rows if group_of(row) == group})
        if runs:
            parts.append(f"{name} {dates(runs)}")
    if len(parts) > 2 and all(part.endswith(dates(every_run)) for part in parts):
        parts = [f"all measured {dates(every_run)}"]  # three groups of one sitting: said once
    devices = sorted({(row["device"], row["device_name"]) for row in rows}, reverse=True)
    return "; ".join(parts) + "\n" + "; ".join(f"{kind.upper()}: {name}" for kind, name in devices)


def card_figure(width: float, height: float) -> plt.Figure:
    """A figure whose only opaque part is a white card with rounded corners (sizes in inches)."""
    figure = plt.figure(figsize=(width, height))
    figure.patch.set_alpha(0.0)
    inset = 0.02  # keeps the card's edge line inside the canvas
    card = FancyBboxPatch(
        (inset, inset),
        width - 2 * inset,
        height - 2 * inset,
        boxstyle="round,pad=0,rounding_size=0.15",
        transform=figure.dpi_scale_trans,
        facecolor="white",
        edgecolor=CARD_EDGE,
        linewidth=1.0,
        zorder=-10,
    )
    figure.patches.append(card)
    return figure


def add_header(figure: plt.Figure, title: str, subtitle: str) -> None:
    """A bold title and a muted subtitle of up to two lines at the top left of the card."""
    height = figure.get_figheight()
    figure.text(0.03, 1 - 0.35 / height, title, fontsize=12, weight="bold", color=INK)
    figure.text(0.03, 1 - 0.48 / height, subtitle, fontsize=8.5, color=MUTED, va="top")


def save(figure: plt.Figure, outputs: list[str]) -> None:
    """Writes each output, SVG or PNG by its suffix, with no date or version inside."""
    for output in outputs:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
        if Path(output).suffix.lower() == ".png":
            figure.savefig(output, dpi=150, metadata={"Software": "tools/charts.py"})
        else:
            figure.savefig(output, metadata={"Date": None, "Creator": "tools/charts.py"})
        print(f"charts.py: wrote {output}")


def is_excluded(row: dict, patterns: list[str]) -> bool:
    """Whether the row's implementation matches one of the --exclude patterns (fnmatch)."""
    return any(fnmatch.fnmatchcase(row["implementation"], pattern) for pattern in patterns)


def ladder_rows(paths: list[str], kind: str, exclude: list[str] | None = None) -> list[dict]:
    """The rows of the official run of this kind, the newest per implementation, fastest first."""
    return official_rows(read_rows(paths), kind, exclude)


def official_rows(rows: list[dict], kind: str, exclude: list[str] | None = None) -> list[dict]:
    """ladder_rows() of rows already read."""
    paths = sorted({row["source"] for row in rows})
    rows = [row for row in rows if row["kind"] == kind and not is_excluded(row, exclude or [])]
    for row in rows:
        if not is_official_run(row):
            print(
                f"charts.py: left out {row['implementation']} ({row['source']}): not the "
                "official run's 66.4 G cell-updates",
                file=sys.stderr,
            )
    official = newest_per_implementation([row for row in rows if is_official_run(row)])
    if not official:
        sys.exit(f"charts.py: no '{kind}' row of the official run in {', '.join(paths)}")
    return sorted(official, key=lambda row: row["seconds"])


def other_kinds(rows: list[dict], kind: str) -> str:
    """The rows of other kinds (a run with output beside compute-only ones), named for a note."""
    others = [row for row in rows if row["kind"] != kind]
    for row in others:
        print(
            f"charts.py: not drawn: {row['implementation']} ({row['source']}): kind "
            f"{row['kind']}, not {kind}",
            file=sys.stderr,
        )
    return "; ".join(
        f"{row['implementation']}, {format_seconds(row)} {KIND_WORDS.get(row['kind'], row['kind'])}"
        for row in others
    )


def draw_ladder(args: argparse.Namespace) -> None:
    """Seconds for the official run per implementation, slowest at the top, log scale."""
    rows = read_rows(args.csv)
    ladder = official_rows(rows, args.kind, args.exclude)
    left_out = other_kinds(rows, args.kind)
    what = "compute only" if args.kind == "compute" else "with output"
    notes = []  # lines under the chart: what it does not show
    if left_out:
        notes += textwrap.wrap(
            f"Not drawn (the bars are {what}): {left_out}", 150, break_on_hyphens=False
        )
    if args.exclude:
        notes += textwrap.wrap(
            f"Left out of this chart: {', '.join(args.exclude)}", 150, break_on_hyphens=False
        )
    extra = 0.17 * max(len(notes) - 1, 0)  # inches for the note lines beyond the first
    height = 1.9 + 0.3 * len(ladder) + extra
    figure = card_figure(9.0, height)
    bottom, top = (0.75 + extra) / height, 1 - 1.0 / height
    axes = figure.add_axes((0.2, bottom, 0.72, top - bottom))
    positions = range(len(ladder))  # the first, fastest row at the bottom
    seconds = [row["seconds"] for row in ladder]
    axes.barh(positions, seconds, color=[colour_of(row) for row in ladder], height=0.7)
    for position, row in zip(positions, ladder):
        label = format_seconds(row)
        axes.text(row["seconds"] * 1.08, position, label, va="center", fontsize=8.5, color=INK)
    names = [row["implementation"] for row in ladder]
    axes.set_yticks(list(positions), names, fontsize=9, color=INK)
    axes.set_xscale("log")
    axes.set_xlim(min(seconds) / 3, max(seconds) * 6)  # room for the longest bars' labels
    axes.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x:g} s"))
    axes.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    axes.tick_params(colors=MUTED, labelsize=8.5)
    axes.tick_params(axis="y", length=0, labelcolor=INK)
    axes.grid(axis="x", color=GRID, linewidth=0.8)
    axes.set_axisbelow(True)
    axes.set_facecolor("white")
    for side in ("top", "right", "left"):
        axes.spines[side].set_visible(False)
    axes.spines["bottom"].set_color(CARD_EDGE)
    present = sorted({(group_of(row), row["device"]) for row in ladder})
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLOURS[key]) for key in present]
    legend_labels = [LEGEND[key] for key in present]
    axes.legend(
        handles, legend_labels, loc="lower right", fontsize=8.5, frameon=False, labelcolor=INK
    )

    scale = "seconds, log scale (~ = extrapolated from a shorter run)"
    origin = sources(ladder)
    if len(scale) + len(origin.split("\n")[0]) > 130:  # wider than the card: a line of its own
        subtitle = scale + "\n" + origin
    else:
        subtitle = scale + "; " + origin
    add_header(figure, f"The official run, {what}: 1080 × 1920 cells, 32,000 steps", subtitle)
    for line, note in enumerate(notes):
        y = 0.18 + 0.17 * (len(notes) - 1 - line)  # inches from the bottom, first line on top
        figure.text(0.03, y / height, note, fontsize=8, color=MUTED)
    save(figure, args.output)


def add_ladder(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser("ladder", help=draw_ladder.__doc__)
    parser.add_argument("csv", nargs="+", help="CSV files (e.g. docs/data/*.csv)")
    parser.add_argument(
        "-o",
        "--output",
        action="append",
        required=True,
        help="figure to write, .svg or .png (repeat for both)",
    )
    parser.add_argument(
        "--kind",
        default="compute",
        choices=("compute", "end-to-end"),
        help="which rows to draw (compute)",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="PATTERN",
        help="leave out implementations matching this pattern, e.g. 'l04-generic-*' (repeatable)",
    )
    parser.set_defaults(draw=draw_ladder)


def read_timeline(path: str, frames: int) -> list[tuple[str, int, float, float]]:
    """The intervals (lane, frame, start, end) of frames 0 .. frames - 1 of a --timeline file."""
    columns, table = read_table(path)
    if columns != TIMELINE_COLUMNS:
        sys.exit(f"charts.py: {path}: not a timeline (columns {', '.join(TIMELINE_COLUMNS)})")
    known = {lane for lane, *_ in LANES}
    intervals = []
    for row in table:
        if row["lane"] not in known:
            sys.exit(f"charts.py: {path}: unknown lane '{row['lane']}'")
        frame = int(row["frame"])
        if frame < frames:
            intervals.append((row["lane"], frame, float(row["start_s"]), float(row["end_s"])))
    if not intervals:
        sys.exit(f"charts.py: {path}: no interval of the first {frames} frame(s)")
    return intervals


def time_unit(seconds: float) -> tuple[float, str]:
    """The scale and name of the unit that shows a time axis of this length in readable numbers."""
    return (1e3, "ms") if seconds < 2.0 else (1.0, "s")


def draw_timeline(args: argparse.Namespace) -> None:
    """Lanes compute, copy, write and wait against time for the first frames of each run.

    One panel per file, stacked, on the same time axis, so that "before" and "after" compare by
    length. A bar shorter than MIN_BAR of the axis is drawn that wide: a 0.15 ms copy next to a
    2 ms write must still show.
    """
    if not 1 <= len(args.csv) <= 2:
        sys.exit("charts.py: timeline: give one or two --timeline files (before, after)")
    if args.frames < 1:
        sys.exit("charts.py: timeline: --frames must be at least 1")
    labels = args.label or []
    if len(labels) > len(args.csv):
        sys.exit("charts.py: timeline: more --label than files")
    labels += [Path(path).stem for path in args.csv[len(labels) :]]
    runs = [read_timeline(path, args.frames) for path in args.csv]
    span = max(end for run in runs for _, _, _, end in run)
    scale, unit = time_unit(span)

    panel_height = 0.32 * len(LANES) + 0.55  # inches: the lanes, the panel's title and ticks
    height = 1.0 + panel_height * len(runs) + 0.45
    figure = card_figure(9.0, height)
    lane_rows = {lane: len(LANES) - 1 - index for index, (lane, *_) in enumerate(LANES)}
    for index, (run, label) in enumerate(zip(runs, labels)):
        top = 1 - (1.05 + index * panel_height + 0.25) / height
        bottom = top - (panel_height - 0.55) / height
        axes = figure.add_axes((0.16, bottom, 0.8, top - bottom))
        for lane, _, even, odd in LANES:
            intervals = [(frame, start, end) for name, frame, start, end in run if name == lane]
            axes.broken_barh(
                [
                    (start * scale, max(end - start, MIN_BAR * span) * scale)
                    for _, start, end in intervals
                ],
                (lane_rows[lane] - 0.38, 0.76),
                facecolors=[odd if frame % 2 else even for frame, _, _ in intervals],
                linewidth=0,
            )
        # Each write is numbered with its frame where the bar is wide enough for the digits.
        for name, frame, start, end in run:
            if name == "write" and (end - start) / span > 0.012 * len(str(frame)):
                axes.text(
                    (start + end) / 2 * scale,
                    lane_rows["write"],
                    str(frame),
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white",
                )
        finished = max(end for _, _, _, end in run)
        shown = len({frame for _, frame, _, _ in run})
        axes.set_title(
            f"{label} — {shown} frames done at {finished * scale:.3g} {unit}",
            loc="left",
            fontsize=9.5,
            color=INK,
            pad=4,
        )
        axes.set_yticks([lane_rows[lane] for lane, *_ in LANES], [name for _, name, *_ in LANES])
        axes.set_ylim(-0.6, len(LANES) - 0.4)
        axes.set_xlim(0, span * scale * 1.01)
        axes.tick_params(colors=MUTED, labelsize=8.5)
        axes.tick_params(axis="y", length=0, labelcolor=INK)
        axes.grid(axis="x", color=GRID, linewidth=0.8)
        axes.set_axisbelow(True)
        axes.set_facecolor("white")
        for side in ("top", "right", "left"):
            axes.spines[side].set_visible(False)
        axes.spines["bottom"].set_color(CARD_EDGE)
        if index == len(runs) - 1:
            axes.set_xlabel(f"{unit} since the run's clock started", fontsize=8.5, color=MUTED)

    subtitle = (
        f"the first {args.frames} frames of each run on one time axis; frames alternate dark and "
        "light, writes are numbered"
    )
    if args.note:
        subtitle += "\n" + args.note
    add_header(figure, args.title, subtitle)
    save(figure, args.output)


def add_timeline(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser("timeline", help=draw_timeline.__doc__)
    parser.add_argument(
        "csv", nargs="+", help="one or two files written by gray_scott --timeline: before, after"
    )
    parser.add_argument(
        "-o",
        "--output",
        action="append",
        required=True,
        help="figure to write, .svg or .png (repeat for both)",
    )
    parser.add_argument(
        "--frames", type=int, default=12, help="how many frames to draw, from frame 0 (12)"
    )
    parser.add_argument(
        "--label",
        action="append",
        help="name of each run, in the order of the files (default: the file's name)",
    )
    parser.add_argument(
        "--title", default="One frame's journey: compute, copy, write", help="the figure's title"
    )
    parser.add_argument(
        "--note", default="", help="a second line under the title: device, date, commit, command"
    )
    parser.set_defaults(draw=draw_timeline)


def add_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o",
        "--output",
        action="append",
        required=True,
        help="figure to write, .svg or .png (repeat for both)",
    )


def style_axes(axes: plt.Axes, grid_axis: str) -> None:
    """The course's look: muted ticks, a light grid behind the data, no box around the plot."""
    axes.tick_params(colors=MUTED, labelsize=8.5)
    axes.grid(axis=grid_axis, color=GRID, linewidth=0.8)
    axes.set_axisbelow(True)
    axes.set_facecolor("white")
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)
    for side in ("bottom", "left"):
        axes.spines[side].set_color(CARD_EDGE)


def read_bandwidths(path: str) -> list[dict]:
    """The rows of a table of measured bandwidths (BANDWIDTH_COLUMNS), GB/s as floats."""
    columns, rows = read_table(path)
    if columns != BANDWIDTH_COLUMNS:
        sys.exit(f"charts.py: {path}: not a table of bandwidths ({', '.join(BANDWIDTH_COLUMNS)})")
    for row in rows:
        row["gb_text"] = row["gb_per_s"].strip()  # as measured, trailing zeros kept: 14.0
        row["gb_per_s"] = float(row["gb_per_s"])
    return rows


def device_copy(path: str, measured_by: str) -> float:
    """The device copy bandwidth in bytes/s (read + write) that `measured_by` measured."""
    copies = [
        row
        for row in read_bandwidths(path)
        if row["transfer"] == "device copy" and row["measured_by"] == measured_by
    ]
    if len(copies) != 1:
        sys.exit(f"charts.py: {path}: expected one 'device copy' row measured by '{measured_by}'")
    return copies[0]["gb_per_s"] * 1e9


def rows_by_implementation(paths: list[str]) -> dict[str, dict]:
    """The official compute-only rows, the newest per implementation, by name."""
    return {row["implementation"]: row for row in ladder_rows(paths, "compute")}


def parse_pairs(pairs: list[str], flag: str) -> list[tuple[str, str]]:
    """NAME=VALUE arguments, in order."""
    parsed = []
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals or not name or not value:
            sys.exit(f"charts.py: {flag} {pair}: expected NAME=VALUE")
        parsed.append((name, value))
    return parsed


def spread_labels(values: list[float], gap: float) -> list[float]:
    """Positions for labels of these (sorted) values, at least `gap` apart, centred on them."""
    positions = list(values)
    for index in range(1, len(positions)):
        positions[index] = max(positions[index], positions[index - 1] + gap)
    shift = (sum(positions) - sum(values)) / len(values)
    return [position - shift for position in positions]


def draw_roofline(args: argparse.Namespace) -> None:
    """The H100's roofline: FLOP/s against FLOP per byte of DRAM traffic, with the lessons' points.

    The memory roof is the measured device copy; the compute roof a datasheet's FP32 rate. Each
    point's x is the model's bytes per cell-update (not measured traffic), its y the measured
    cell-updates/s times one FLOP count for every implementation (the problem's useful work).
    """
    runs = rows_by_implementation(args.csv)
    bandwidth = device_copy(args.bandwidth, args.copy_measured_by)
    peak = args.peak_tflops * 1e12
    ridge = peak / bandwidth
    points = []
    for name, bytes_text in parse_pairs(args.point, "--point"):
        if name not in runs:
            sys.exit(f"charts.py: roofline: no official compute row of {name} in the CSV files")
        bytes_per_cell = float(bytes_text)
        intensity = args.flop_per_cell / bytes_per_cell
        flops = runs[name]["cell_updates_per_s"] * args.flop_per_cell
        roof = min(peak, bandwidth * intensity)
        points.append((name, bytes_per_cell, intensity, flops, flops / roof))
    if not points:
        sys.exit("charts.py: roofline: give at least one --point IMPLEMENTATION=BYTES")

    height = 6.4
    figure = card_figure(9.0, height)
    axes = figure.add_axes((0.1, 1.05 / height, 0.86, 1 - 2.35 / height))
    x_low, x_high = 0.08, 200.0
    y_low, y_high = 5e11, 2.5e14
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlim(x_low, x_high)
    axes.set_ylim(y_low, y_high)
    # The roofs: bandwidth x intensity up to the ridge, then the compute rate.
    axes.plot([x_low, ridge, x_high], [bandwidth * x_low, peak, peak], color=INK, linewidth=1.6)
    axes.fill_between(
        [x_low, ridge, x_high], [bandwidth * x_low, peak, peak], y_low, color="#f3f5f7", zorder=0
    )
    # The memory roof's label runs along it, at the angle the line has on the page.
    (x0, y0), (x1, y1) = axes.transData.transform([(1.0, bandwidth), (10.0, bandwidth * 10.0)])
    slope_x = 0.14
    axes.text(
        slope_x,
        bandwidth * slope_x * 1.25,
        f"memory roof: {bandwidth / 1e9:.0f} GB/s, measured",
        rotation=math.degrees(math.atan2(y1 - y0, x1 - x0)),
        rotation_mode="anchor",
        fontsize=8.5,
        color=INK,
    )
    axes.text(
        x_high / 1.1,
        peak / 1.3,
        f"FP32 roof: {args.peak_tflops:g} TFLOP/s\n({args.peak_label})",
        ha="right",
        va="top",
        fontsize=8.5,
        color=INK,
    )
    axes.axvline(ridge, color=MUTED, linewidth=0.8, linestyle=":")
    axes.text(
        ridge * 1.08,
        y_low * 1.3,
        f"ridge: {ridge:.1f} FLOP/B",
        fontsize=8,
        color=MUTED,
        rotation=90,
    )

    # The points. A lone point is labelled to its right; several that share an intensity (the
    # one-step kernels) are labelled above and left of them, where no point can be: above the roof.
    by_intensity: dict[float, list] = {}
    for point in points:
        by_intensity.setdefault(point[2], []).append(point)
    for intensity, group in sorted(by_intensity.items()):
        group.sort(key=lambda point: point[3])
        several = len(group) > 1
        lift = 0.4 if several else 0.0  # decades above the points
        label_y = spread_labels([math.log10(point[3]) + lift for point in group], 0.085)
        for point, position in zip(group, label_y):
            name, _, _, flops, share = point
            axes.plot(
                intensity, flops, "o", color=COLOURS[("course", "gpu")], markersize=7, zorder=3
            )
            axes.annotate(
                (
                    f"{name}: {share * 100:.0f} % of the roof"
                    if several
                    else f"{name}: {flops / 1e12:.1f} TFLOP/s, {share * 100:.0f} % of its roof"
                ),
                xy=(intensity, flops),
                xytext=(intensity / 1.5 if several else intensity * 1.45, 10**position),
                ha="right" if several else "left",
                va="center",
                fontsize=8.5,
                color=INK,
                arrowprops={
                    "arrowstyle": "-",
                    "color": MUTED,
                    "linewidth": 0.7,
                    "relpos": (1.0, 0.5) if several else (0.0, 0.5),
                    "shrinkB": 4,
                },
            )
    for intensity, group in sorted(by_intensity.items()):
        axes.text(
            intensity,
            y_low * 1.3,
            f"{group[0][1]:g} B per\ncell-update",
            ha="center",
            fontsize=8,
            color=MUTED,
        )
    # From one step per launch to several: the same bytes serve more cell-updates.
    intensities = sorted(by_intensity)
    if len(intensities) > 1:
        start = max(by_intensity[intensities[0]], key=lambda point: point[3])
        end = max(by_intensity[intensities[-1]], key=lambda point: point[3])
        axes.annotate(
            "",
            xy=(end[2] / 1.12, end[3]),
            xytext=(start[2] * 1.12, start[3]),
            arrowprops={"arrowstyle": "->", "color": COLOURS[("course", "gpu")], "linewidth": 1.2},
        )
        if args.step_label:
            middle_x = math.sqrt(start[2] * end[2])
            middle_y = math.sqrt(start[3] * end[3])
            axes.text(
                middle_x,
                middle_y * 0.8,
                args.step_label,
                ha="left",
                va="top",
                fontsize=8,
                color=COLOURS[("course", "gpu")],
            )

    axes.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x:g}"))
    axes.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda y, _: f"{y / 1e12:g} T"))
    axes.set_xlabel(
        "arithmetic intensity: FLOP per byte of DRAM traffic (the model's bytes)",
        fontsize=8.5,
        color=MUTED,
    )
    axes.set_ylabel("FLOP/s", fontsize=8.5, color=MUTED)
    style_axes(axes, "both")

    dates = sorted({(runs[point[0]]["date"], runs[point[0]]["commit"]) for point in points})
    when = ", ".join(f"{date} ({commit})" for date, commit in dates)
    add_header(
        figure,
        args.title,
        f"y: measured cell-updates/s × {args.flop_per_cell:g} FLOP per cell-update "
        f"({runs[points[0][0]]['device_name']}, {when}; the memory roof of the same sitting)\n"
        "x: the model's bytes per cell-update, u and v read and written once per trip to "
        "memory; not measured traffic",
    )
    for line, text in enumerate(args.note):
        figure.text(0.03, (0.5 - 0.2 * line) / height, text, fontsize=7.5, color=MUTED)
    save(figure, args.output)


def add_roofline(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser("roofline", help=draw_roofline.__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+", help="tables of runs: the measured cell-updates/s")
    parser.add_argument(
        "--bandwidth", required=True, help="table of bandwidths with the device copy (memory roof)"
    )
    parser.add_argument(
        "--copy-measured-by",
        default="gs_benchmark",
        help="which device copy row is the memory roof (gs_benchmark)",
    )
    parser.add_argument(
        "--peak-tflops", type=float, required=True, help="the compute roof, FP32 TFLOP/s"
    )
    parser.add_argument(
        "--peak-label", default="datasheet", help="where the compute roof comes from, in brief"
    )
    parser.add_argument(
        "--flop-per-cell",
        type=float,
        required=True,
        help="FLOP per cell-update, one count for every point",
    )
    parser.add_argument(
        "--point",
        action="append",
        default=[],
        metavar="IMPLEMENTATION=BYTES",
        help="a point: the implementation and the model's bytes per cell-update (repeatable)",
    )
    parser.add_argument("--title", default="The roofline", help="the figure's title")
    parser.add_argument(
        "--step-label",
        default="",
        help="words on the arrow from the lowest to the highest intensity",
    )
    parser.add_argument(
        "--note", action="append", default=[], help="a line at the bottom: sources (repeatable)"
    )
    add_output(parser)
    parser.set_defaults(draw=draw_roofline)


def read_threads(path: str) -> list[dict]:
    """The rows of a table of thread counts (THREADS_COLUMNS), numbers converted."""
    columns, rows = read_table(path)
    if columns != THREADS_COLUMNS:
        sys.exit(f"charts.py: {path}: not a table of thread counts ({', '.join(THREADS_COLUMNS)})")
    for row in rows:
        row["threads"] = int(row["threads"])
        row["cell_updates_per_s"] = float(row["cell_updates_per_s"])
        row["seconds"] = float(row["seconds"]) if row["seconds"].strip() else None
        row["extrapolated"] = row["extrapolated"].strip().lower()
    return sorted(rows, key=lambda row: row["threads"])


def draw_threads(args: argparse.Namespace) -> None:
    """Cell-updates/s at each thread count, as bars, against linear scaling from one thread.

    Bars, not a curve: each bar is a run of its own (a few thread counts, on different days or
    commits), too few points to draw a line through.
    """
    rows = read_threads(args.csv)
    singles = [row for row in rows if row["threads"] == 1]
    if not singles:
        sys.exit(f"charts.py: threads: {args.csv} has no run on 1 thread to scale from")
    single = singles[0]["cell_updates_per_s"]
    height = 4.9
    figure = card_figure(9.0, height)
    axes = figure.add_axes((0.1, 1.0 / height, 0.86, 1 - 2.1 / height))
    positions = range(len(rows))
    rates = [row["cell_updates_per_s"] / 1e9 for row in rows]
    colours = [COLOURS[("course", "cpu")] if row["threads"] == 1 else "#4292c6" for row in rows]
    axes.bar(positions, rates, color=colours, width=0.6)
    ideal_drawn = False
    for position, row in zip(positions, rows):
        rate = row["cell_updates_per_s"]
        if row["threads"] > 1:
            ideal = single * row["threads"] / 1e9
            axes.plot(
                [position - 0.38, position + 0.38],
                [ideal, ideal],
                color=INK,
                linestyle="--",
                linewidth=1.1,
                label=None if ideal_drawn else f"linear scaling: {single / 1e9:.2f} G × threads",
            )
            ideal_drawn = True
        seconds = (
            f", {'~' if row['extrapolated'] == 'true' else ''}{row['seconds']:.3g} s"
            if row["seconds"]
            else ""
        )
        axes.text(
            position,
            rate / 1e9 + 0.12,
            f"{rate / 1e9:.2f} G/s{seconds}"
            + (f"\n{rate / single:.1f}× one thread" if row["threads"] > 1 else ""),
            ha="center",
            va="bottom",
            fontsize=8.5,
            color=INK,
        )
    labels = [
        f"{row['threads']} thread{'s' if row['threads'] > 1 else ''}\n{row['implementation']}\n"
        f"{row['commit']}{' (full run)' if row['extrapolated'] == 'false' else ''}"
        for row in rows
    ]
    axes.set_xticks(list(positions), labels, fontsize=8.5, color=INK)
    axes.set_ylabel("G cell-updates/s", fontsize=8.5, color=MUTED)
    axes.set_ylim(0, max(single * max(row["threads"] for row in rows) / 1e9, max(rates)) * 1.12)
    style_axes(axes, "y")
    axes.tick_params(axis="x", length=0, labelcolor=INK)
    axes.legend(loc="upper left", fontsize=8.5, frameon=False, labelcolor=INK)
    add_header(figure, args.title, args.note)
    save(figure, args.output)


def add_threads(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser("threads", help=draw_threads.__doc__.splitlines()[0])
    parser.add_argument("csv", help="a table of thread counts (docs/data/threads-*.csv)")
    parser.add_argument("--title", default="Threads", help="the figure's title")
    parser.add_argument("--note", default="", help="the lines under the title: machine, runs")
    add_output(parser)
    parser.set_defaults(draw=draw_threads)


LAUNCH_SHAPE = re.compile(r"(\d+)x(\d+)(?:-(\d+)rows)?")  # l04-generic-32x8, ...-64x2-4rows


def draw_shapes(args: argparse.Namespace) -> None:
    """A block-size sweep: each launch's share of the measured copy bandwidth, with its seconds.

    The share is what one step per launch can reach: 16 bytes per cell-update (u and v read and
    written once) at the implementation's rate, over the device copy of the same sitting.
    """
    rows = [
        row
        for row in ladder_rows(args.csv, "compute")
        if any(fnmatch.fnmatchcase(row["implementation"], pattern) for pattern in args.impl)
    ]
    if not rows:
        sys.exit(f"charts.py: shapes: no official compute row matches {', '.join(args.impl)}")
    bandwidth = device_copy(args.bandwidth, args.copy_measured_by)
    floor = 16 * OFFICIAL_CELL_UPDATES / bandwidth
    names = dict(parse_pairs(args.label, "--label"))
    kinds = {  # cells per thread, read from the launch in the bar's name: colour, text colour
        "1": ("one cell per thread", "#9ecae1", INK),
        "2": ("2 cells of a column per thread", "#4292c6", "white"),
        "4": ("4 cells of a column per thread", "#08519c", "white"),
        "?": ("launch not in the name", "#8c959f", "white"),
    }

    def name_of(row: dict) -> str:
        return names.get(row["implementation"], row["implementation"])

    def kind_of(row: dict) -> str:
        match = LAUNCH_SHAPE.search(name_of(row))
        return (match.group(3) or "1") if match else "?"

    rows.sort(key=lambda row: row["cell_updates_per_s"])  # the best at the top
    height = 2.2 + 0.32 * len(rows)
    figure = card_figure(9.0, height)
    bottom, top = 1.1 / height, 1 - 1.05 / height
    axes = figure.add_axes((0.32, bottom, 0.63, top - bottom))
    positions = range(len(rows))
    shares = [16 * row["cell_updates_per_s"] / bandwidth * 100 for row in rows]
    axes.barh(positions, shares, color=[kinds[kind_of(row)][1] for row in rows], height=0.68)
    for position, row, share in zip(positions, rows, shares):
        axes.text(
            share - 1.0,
            position,
            f"{share:.0f} %   {row['seconds']:.3f} s",
            ha="right",
            va="center",
            fontsize=8.5,
            color=kinds[kind_of(row)][2],
        )
    axes.set_yticks(list(positions), [name_of(row) for row in rows], fontsize=9, color=INK)
    axes.axvline(100, color=INK, linewidth=1.0, linestyle="--")
    axes.text(
        100.8,
        len(rows) - 1,
        f"the copy:\n{bandwidth / 1e9:.0f} GB/s,\n{floor:.3f} s",
        ha="left",
        va="center",
        fontsize=8,
        color=INK,
    )
    axes.set_xlim(0, 112)
    axes.set_ylim(-0.6, len(rows) - 0.4)
    axes.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x:g} %"))
    axes.set_xticks(range(0, 101, 20))
    style_axes(axes, "x")
    axes.tick_params(axis="y", length=0, labelcolor=INK)
    axes.spines["left"].set_visible(False)
    axes.set_xlabel(
        "share of the measured copy bandwidth (16 B per cell-update at the measured rate), "
        "and seconds",
        fontsize=8.5,
        color=MUTED,
    )
    present = [key for key in kinds if any(kind_of(row) == key for row in rows)]
    figure.legend(
        [plt.Rectangle((0, 0), 1, 1, color=kinds[key][1]) for key in present],
        [kinds[key][0] for key in present],
        loc="lower center",
        bbox_to_anchor=(0.5, 0.1 / height),
        ncol=len(present),
        fontsize=8.5,
        frameon=False,
        labelcolor=INK,
    )
    add_header(
        figure,
        args.title,
        f"{args.note}\n{sources(rows).splitlines()[0]}; {rows[0]['device_name']}",
    )
    save(figure, args.output)


def add_shapes(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser("shapes", help=draw_shapes.__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+", help="tables of runs")
    parser.add_argument(
        "--bandwidth", required=True, help="table of bandwidths with the device copy of the sitting"
    )
    parser.add_argument(
        "--copy-measured-by", default="gs_benchmark", help="which device copy row (gs_benchmark)"
    )
    parser.add_argument(
        "--impl",
        action="append",
        required=True,
        metavar="PATTERN",
        help="implementations to draw, e.g. 'l04-*' (repeatable)",
    )
    parser.add_argument(
        "--label",
        action="append",
        default=[],
        metavar="IMPLEMENTATION=TEXT",
        help="a bar's name instead of the implementation's (drawn as another kernel)",
    )
    parser.add_argument("--title", default="Launch shapes", help="the figure's title")
    parser.add_argument("--note", default="", help="a line under the title: the command")
    add_output(parser)
    parser.set_defaults(draw=draw_shapes)


FRAME_BYTES = 1080 * 1920 * 4  # one official frame of v, float32


def draw_transfers(args: argparse.Namespace) -> None:
    """Measured bandwidths of host <-> device copies against the device's own copy, to scale."""
    rows = [row for row in read_bandwidths(args.csv) if row["measured_by"] == args.measured_by]
    if not rows:
        sys.exit(f"charts.py: transfers: no row measured by '{args.measured_by}' in {args.csv}")
    colours = {  # the palette of docs/figures: PCIe crossings red (the cost), the device green
        "pageable": "#e57373",
        "pinned": "#c62828",
        "device": "#2f7d32",
    }
    crossing = max(
        (row["gb_per_s"] for row in rows if row["transfer"] != "device copy"), default=None
    )
    rows = list(reversed(rows))  # the file's first row at the top
    height = 2.0 + 0.42 * len(rows)
    figure = card_figure(9.0, height)
    bottom, top = 0.8 / height, 1 - 1.05 / height
    axes = figure.add_axes((0.27, bottom, 0.68, top - bottom))
    positions = range(len(rows))
    rates = [row["gb_per_s"] for row in rows]
    axes.barh(
        positions, rates, color=[colours.get(row["memory"], MUTED) for row in rows], height=0.62
    )
    widest = max(rates)
    for position, row in zip(positions, rows):
        seconds = FRAME_BYTES / (row["gb_per_s"] * 1e9)
        text = f"{row['gb_text']} GB/s: a frame of v (8.3 MB) in "
        if row["transfer"] == "device copy":
            # A device copy's bandwidth counts the bytes read and the bytes written.
            seconds *= 2
            text += f"{seconds * 1e6:.1f} µs"
            if crossing:
                text += f"; {row['gb_per_s'] / crossing:.0f}× the fastest PCIe transfer"
        else:
            text += f"{seconds * 1e3:.2f} ms"
        inside = row["gb_per_s"] > widest / 2
        axes.text(
            row["gb_per_s"] - widest * 0.01 if inside else row["gb_per_s"] + widest * 0.01,
            position,
            text,
            ha="right" if inside else "left",
            va="center",
            fontsize=8.5,
            color="white" if inside else INK,
        )
    axes.set_yticks(
        list(positions),
        [
            f"{row['transfer']}, {row['memory']} memory"
            if row["memory"] != "device"
            else row["transfer"]
            for row in rows
        ],
        fontsize=9,
        color=INK,
    )
    axes.set_xlim(0, widest * 1.02)
    axes.set_ylim(-0.6, len(rows) - 0.4)
    axes.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x:g}"))
    axes.set_xlabel("GB/s, to scale", fontsize=8.5, color=MUTED)
    style_axes(axes, "x")
    axes.tick_params(axis="y", length=0, labelcolor=INK)
    axes.spines["left"].set_visible(False)
    add_header(figure, args.title, args.note)
    save(figure, args.output)


def add_transfers(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser("transfers", help=draw_transfers.__doc__.splitlines()[0])
    parser.add_argument("csv", help="a table of bandwidths (docs/data/bandwidth-*.csv)")
    parser.add_argument(
        "--measured-by",
        default="gray_scott --device",
        help="which rows to draw, by the tool that measured them (gray_scott --device)",
    )
    parser.add_argument("--title", default="Transfers", help="the figure's title")
    parser.add_argument(
        "--note", default="", help="the lines under the title: device, date, commit"
    )
    add_output(parser)
    parser.set_defaults(draw=draw_transfers)


def draw_scaling(args: argparse.Namespace) -> None:
    """Lesson 08's parallel efficiency against the number of GPUs, measured beside predicted.

    Reads lesson 08's benchmark CSVs (its --csv rows: scaling, ranks, rows, cols, halo, exchange,
    efficiency, wait); one line per case (strong at two sizes, weak) for the exchange asked for
    (nccl or peer) and the halo asked for, solid where every frame was waited for and dashed where
    the frames were queued; another exchange (--compare) dotted; the predicted ranges (lesson 08's
    section 9 and its peer model) as bars at two GPUs.
    """
    rows = []
    compared = []
    for path in args.csv:
        _, table = read_table(path)
        rows += [row for row in table if row["exchange"] == args.exchange
                 and int(row["halo"]) == args.halo]
        compared += [row for row in table if row["exchange"] == args.compare
                     and int(row["halo"]) == args.halo and row["wait"] == "each"]
    # The predicted ranges at two GPUs: lesson 08's section 9 (NCCL) and its peer model.
    predictions = {
        "nccl": ((0.81, 0.93), (0.81, 0.93), (0.56, 0.82)),
        "peer": ((0.86, 0.88), (0.75, 0.77), (0.54, 0.57)),
    }[args.exchange]
    cases = [  # (label, scaling, cols of the whole grid at two GPUs' strong rows, colour, prediction)
        ("weak, 1920 × 1080 per GPU", "weak", 1920, "#0969da", predictions[0]),
        ("strong, 3840 × 2160", "strong", 3840, "#1a7f37", predictions[1]),
        ("strong, 1920 × 1080", "strong", 1920, "#bc4c00", predictions[2]),
    ]
    figure, axes = plt.subplots(figsize=(7.2, 4.2))
    for label, scaling, cols, colour, predicted in cases:
        points = {1: 1.0}
        for row in compared:
            if row["scaling"] == scaling and int(row["cols"]) == cols:
                points[int(row["ranks"])] = float(row["efficiency"])
        if args.compare and len(points) > 1:
            gpus = sorted(points)
            axes.plot(gpus, [100 * points[g] for g in gpus], ":", color=colour, linewidth=1.0,
                      alpha=0.7, label=f"{label}, {args.compare}, each frame")
        for wait, style in (("each", "-"), ("end", "--")):
            points = {1: 1.0}
            for row in rows:
                if row["scaling"] == scaling and int(row["cols"]) == cols and row["wait"] == wait:
                    points[int(row["ranks"])] = float(row["efficiency"])  # the last sitting wins
            if len(points) < 2:
                continue
            gpus = sorted(points)
            axes.plot(gpus, [100 * points[g] for g in gpus], style, color=colour, marker="o",
                      markersize=4, linewidth=1.6,
                      label=f"{label}" + ("" if wait == "each" else ", frames queued"))
        axes.errorbar([2.08 + 0.04 * cases.index((label, scaling, cols, colour, predicted))],
                      [100 * sum(predicted) / 2], yerr=[[100 * (sum(predicted) / 2 - predicted[0])],
                      [100 * (predicted[1] - sum(predicted) / 2)]], fmt="none", ecolor=colour,
                      elinewidth=5, alpha=0.35, capsize=0)
    axes.set_xticks([1, 2, 4])
    axes.set_xlim(0.8, 4.3)
    axes.set_ylim(0, 105)
    axes.set_xlabel("GPUs (one rank each)", fontsize=8.5, color=MUTED)
    axes.set_ylabel("parallel efficiency, %", fontsize=8.5, color=MUTED)
    style_axes(axes, "y")
    axes.legend(fontsize=7.5, frameon=False, loc="lower left")
    axes.text(2.2, 98, "shaded bars at 2 GPUs: predicted before measuring", fontsize=7.5,
              color=MUTED)
    add_header(figure, args.title, args.note)
    save(figure, args.output)


def add_scaling(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser("scaling", help=draw_scaling.__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+", help="lesson 08's benchmark rows (docs/data/scaling-*.csv)")
    parser.add_argument("--exchange", default="nccl", choices=["nccl", "peer"],
                        help="which exchange to draw (nccl)")
    parser.add_argument("--compare", default="",
                        help="another exchange drawn dotted, each frame waited for (e.g. nccl)")
    parser.add_argument("--halo", type=int, default=32, help="which halo to draw (32)")
    parser.add_argument("--title", default="Several GPUs", help="the figure's title")
    parser.add_argument(
        "--note", default="", help="the lines under the title: device, date, commit"
    )
    add_output(parser)
    parser.set_defaults(draw=draw_scaling)


def draw_calls(args: argparse.Namespace) -> None:
    """What a call costs against the steps per call (lesson 10's call_cost.py).

    Reads call_cost.py's CSV (implementation, path, rows, cols, steps_per_call, seconds_per_call)
    and draws, per path, the time per step against the steps per call, both on log scales: a
    fixed cost per call shows as a line falling towards the time of one step, which it reaches
    once a call does enough steps.
    """
    _, rows = read_table(args.csv)
    paths: dict[str, list[tuple[int, float]]] = {}
    for row in rows:
        steps = int(row["steps_per_call"])
        per_step = 1e6 * float(row["seconds_per_call"]) / steps
        paths.setdefault(row["path"], []).append((steps, per_step))
    colours = ["#0969da", "#1a7f37", "#bc4c00", "#8250df", "#59636e"]
    figure, axes = plt.subplots(figsize=(7.2, 4.2))
    for index, (path, points) in enumerate(sorted(paths.items())):
        points.sort()
        axes.plot([p[0] for p in points], [p[1] for p in points], "-", marker="o", markersize=3.5,
                  linewidth=1.6, color=colours[index % len(colours)], label=path)
    axes.set_xscale("log", base=2)
    axes.set_yscale("log")
    axes.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x:g}"))
    axes.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda y, _: f"{y:g}"))
    axes.set_xlabel("steps per call", fontsize=8.5, color=MUTED)
    axes.set_ylabel("µs per step (each call waited for)", fontsize=8.5, color=MUTED)
    style_axes(axes, "y")
    axes.legend(fontsize=7.5, frameon=False, loc="center right")
    add_header(figure, args.title, args.note)
    save(figure, args.output)


def add_calls(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser("calls", help=draw_calls.__doc__.splitlines()[0])
    parser.add_argument("csv", help="call_cost.py's table (docs/data/lesson10-call-cost-*.csv)")
    parser.add_argument("--title", default="The cost of a call", help="the figure's title")
    parser.add_argument(
        "--note", default="", help="the lines under the title: device, date, commit"
    )
    add_output(parser)
    parser.set_defaults(draw=draw_calls)


SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    add_ladder,
    add_timeline,
    add_roofline,
    add_threads,
    add_shapes,
    add_transfers,
    add_scaling,
    add_calls,
]


def main(argv: list[str] | None = None) -> int:
    matplotlib.rcParams.update(
        {
            "svg.hashsalt": "gray-scott-school",  # fixed ids inside the SVG
            "svg.fonttype": "path",  # glyphs as paths: the same picture without the font
            "font.family": "DejaVu Sans",
        }
    )
    parser = argparse.ArgumentParser(description="Draws the course's charts from CSV files.")
    subcommands = parser.add_subparsers(required=True, metavar="chart")
    for add in SUBCOMMANDS:
        add(subcommands)
    args = parser.parse_args(argv)
    args.draw(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
