"""The columns of a measurement CSV: one row per implementation and run.

One definition, read by what writes the rows (harness.py, for every peer) and by what draws them
(tools/charts.py), so the two cannot drift apart. The course's C++ programs write the same
columns (gs_benchmark --csv, common/src/benchmark.cpp; gs_sweep benchmark --csv); the schema is
described in README.md (the CSV).
"""

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
