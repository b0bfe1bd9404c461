"""The course's charts, drawn from measurement CSV files (docs/data/*.csv).

The CSV schema is the one benchmarks/peers/run.sh writes and the course's C++ rows share: one
row per implementation and run (CSV_COLUMNS below). Each chart is a subcommand, a function that
draws it from those rows; today there is one:

    python3 tools/charts.py ladder docs/data/*.csv -o docs/figures/ladder.svg [-o ladder.png]

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


SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [add_ladder]


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
