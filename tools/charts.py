"""The course's charts, drawn from measurement CSV files (docs/data/*.csv).

The CSV schema is the one benchmarks/peers/run.sh writes and the course's C++ rows share: one
row per implementation and run (CSV_COLUMNS below). Each chart is a subcommand, a function that
draws it from those rows:

    python3 tools/charts.py ladder docs/data/*.csv -o docs/figures/ladder.svg [-o ladder.png]
    python3 tools/charts.py timeline BEFORE.csv [AFTER.csv] --frames 12 -o timeline.svg

The timeline reads the other kind of file in docs/data/: what `gray_scott --timeline FILE`
writes (TIMELINE_COLUMNS: when each frame was computed, copied, written, and when the computing
thread waited for a free slot); the ladder skips such files.

The figures sit on an opaque white card with rounded corners and dark text, so they read the
same on GitHub's light and dark themes, and they are deterministic (fixed SVG ids, no date in
the metadata, glyphs as paths): the same data gives the same file, so a diff of a figure means
that its data changed. Needs matplotlib (Debian: python3-matplotlib).
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - after choosing the file-only backend
import matplotlib.ticker  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402

CSV_COLUMNS = (
    "implementation",
    "lesson",
    "device",
    "kind",
    "seconds",
    "cell_updates_per_s",
    "steps_timed",
    "extrapolated",
    "device_name",
    "date",
    "commit",
)
TIMELINE_COLUMNS = ("lane", "frame", "start_s", "end_s")
OFFICIAL_CELL_UPDATES = 1080 * 1920 * 32_000  # the official run: 1000 frames x 32 steps

INK = "#1f2328"  # GitHub's light-theme text colour, on the white card in both themes
MUTED = "#59636e"
CARD_EDGE = "#d1d9e0"
GRID = "#e6e9ed"
COLOURS = {  # (group, device): the course's rungs in blues, the Python peers in oranges
    ("course", "cpu"): "#9ecae1",
    ("course", "gpu"): "#2171b5",
    ("peer", "cpu"): "#fdae6b",
    ("peer", "gpu"): "#d94801",
}
LANES = (  # the timeline's lanes, top to bottom, in the colours of docs/figures/async-pipeline.svg
    # (lane in the CSV, its name on the chart, colour of even frames, colour of odd frames): two
    # shades, so that frames that follow each other without a gap stay apart.
    ("compute", "compute", "#2f7d32", "#66a86a"),  # a frame's steps (GPU: and its snapshot)
    ("copy", "copy", "#c62828", "#e57373"),  # the frame into its host slot (GPU: across PCIe)
    ("write", "write", "#6f42c1", "#9d7fdb"),  # the HDF5 write of the frame
    ("wait", "wait for a slot", "#8c959f", "#b8bec5"),  # the computing thread: the ring is full
)
MIN_BAR = 0.0015  # a bar shorter than this share of the time axis is drawn this wide, to show
LEGEND = {
    ("course", "cpu"): "course, CPU",
    ("course", "gpu"): "course, GPU",
    ("peer", "cpu"): "Python peer, CPU",
    ("peer", "gpu"): "Python peer, GPU",
}


def read_rows(paths: list[str]) -> list[dict]:
    """Every row of every file, in order; seconds and rates as floats, extrapolated as bool."""
    rows = []
    for path in paths:
        with open(path, newline="", encoding="utf-8") as file:
            reader = csv.DictReader(file)
            if tuple(reader.fieldnames or ()) == TIMELINE_COLUMNS:
                print(
                    f"charts.py: skipped {path}: a timeline, not a table of runs", file=sys.stderr
                )
                continue
            missing = set(CSV_COLUMNS) - set(reader.fieldnames or ())
            if missing:
                sys.exit(f"charts.py: {path}: missing column(s) {', '.join(sorted(missing))}")
            for row in reader:
                row["seconds"] = float(row["seconds"])
                row["cell_updates_per_s"] = float(row["cell_updates_per_s"])
                row["extrapolated"] = row["extrapolated"].strip().lower() == "true"
                row["source"] = path
                rows.append(row)
    return rows


def group_of(row: dict) -> str:
    return "peer" if row["lesson"] == "peer" else "course"


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
    parts = []
    for group, name in (("course", "course"), ("peer", "Python peers")):
        runs = sorted({(row["date"], row["commit"]) for row in rows if group_of(row) == group})
        if runs:
            dates = (date if commit == "unknown" else f"{date} ({commit})" for date, commit in runs)
            parts.append(f"{name} {', '.join(dates)}")
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


def ladder_rows(paths: list[str], kind: str) -> list[dict]:
    """The rows of the official run of this kind, the newest per implementation, fastest first."""
    rows = [row for row in read_rows(paths) if row["kind"] == kind]
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


def draw_ladder(args: argparse.Namespace) -> None:
    """Seconds for the official run per implementation, slowest at the top, log scale."""
    ladder = ladder_rows(args.csv, args.kind)
    height = 1.9 + 0.3 * len(ladder)
    figure = card_figure(9.0, height)
    bottom, top = 0.75 / height, 1 - 1.0 / height
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

    what = "compute only" if args.kind == "compute" else "with output"
    add_header(
        figure,
        f"The official run, {what}: 1080 × 1920 cells, 32,000 steps",
        "seconds, log scale (~ = extrapolated from a shorter run); " + sources(ladder),
    )
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
    parser.set_defaults(draw=draw_ladder)


def read_timeline(path: str, frames: int) -> list[tuple[str, int, float, float]]:
    """The intervals (lane, frame, start, end) of frames 0 .. frames - 1 of a --timeline file."""
    if not Path(path).is_file():
        sys.exit(f"charts.py: {path}: no such file")
    with open(path, newline="", encoding="utf-8") as file:
        reader = csv.DictReader(file)
        if tuple(reader.fieldnames or ()) != TIMELINE_COLUMNS:
            sys.exit(f"charts.py: {path}: not a timeline (columns {', '.join(TIMELINE_COLUMNS)})")
        known = {lane for lane, *_ in LANES}
        intervals = []
        for row in reader:
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


SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [add_ladder, add_timeline]


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
