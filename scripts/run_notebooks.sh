#!/usr/bin/env bash
# Runs the course's notebooks (notebooks/*.ipynb) from top to bottom with the build in BUILD_DIR
# (default build/; its grayscott module and gs_sweep), as a learner's "Run all" would, and fails
# on the first cell that raises. The executed copies go to a temporary folder, never into the
# repository. GPU cells skip, printing why, where there is no GPU. Then it checks the committed
# notebooks themselves: each is stored with its outputs (a picture at least, so that GitHub and
# Jupyter show the frames and the map when it is opened) and with no error among them.
#
#   bash scripts/run_notebooks.sh [BUILD_DIR]          # CI: execute, then check the stored ones
#   bash scripts/run_notebooks.sh --store [BUILD_DIR]  # execute and store the outputs in
#                                                      # notebooks/ (after editing a notebook)
#
# Needs Jupyter's nbconvert and the system Python's ipykernel, matplotlib and h5py (Debian and
# Ubuntu: jupyter-nbconvert, python3-ipykernel, python3-nbclient, python3-matplotlib,
# python3-h5py; scripts/setup.sh installs them), and the build: cmake --build BUILD_DIR --target
# grayscott gs_sweep. Exit status: 0 all ran and are stored with pictures; 1 a cell failed or a
# stored notebook has no picture or an error; 2 something needed is missing.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
store=0
if [ "${1:-}" = --store ]; then store=1; shift; fi
build=$(cd "${1:-build}" 2> /dev/null && pwd) || { echo "run_notebooks: no build folder ${1:-build}" >&2; exit 2; }
command -v jupyter-nbconvert > /dev/null 2>&1 \
  || { echo "run_notebooks: jupyter-nbconvert not found (bash scripts/setup.sh, or apt-get install jupyter-nbconvert python3-ipykernel)" >&2; exit 2; }
for needed in "$build/bin/gs_sweep"; do
  [ -x "$needed" ] || { echo "run_notebooks: $needed is not built (cmake --build $build --target grayscott gs_sweep)" >&2; exit 2; }
done
compgen -G "$build/python/grayscott*.so" > /dev/null \
  || { echo "run_notebooks: the grayscott module is not in $build/python (cmake --build $build --target grayscott)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/gs-notebooks.XXXXXX")
trap 'rm -rf "$work"' EXIT
export GS_BUILD_DIR=$build OMP_WAIT_POLICY=passive
status=0
# The course's notebooks: the tracked ones (a learner's my-*.ipynb copies are not the course's).
mapfile -t notebooks < <(git ls-files 'notebooks/*.ipynb' 2> /dev/null)
[ "${#notebooks[@]}" -gt 0 ] || notebooks=(notebooks/[0-9]*.ipynb)
for notebook in "${notebooks[@]}"; do
  start=$SECONDS
  # --execute: every cell in order, in the notebook's folder; a cell that raises stops it (exit
  # 1); no timing metadata, so that stored notebooks change only where their outputs do.
  if jupyter-nbconvert --to notebook --execute --ExecutePreprocessor.timeout=600 \
       --ExecutePreprocessor.kernel_name=python3 --ExecutePreprocessor.record_timing=False \
       --output-dir "$work" "$notebook" > "$work/log" 2>&1; then
    echo "ok   $notebook executed in $((SECONDS - start)) s"
    if [ "$store" = 1 ]; then cp "$work/$(basename "$notebook")" "$notebook"; fi
  else
    echo "FAIL $notebook: a cell failed:"; tail -30 "$work/log" | sed 's/^/   /'
    status=1
  fi
done

# The stored notebooks: outputs kept, at least one picture, no error, no path of this machine.
python3 - "$root" "${notebooks[@]}" <<'EOF' || status=1
import json, sys
root, paths = sys.argv[1], sys.argv[2:]
bad = 0
for path in paths:
    notebook = json.load(open(path, encoding="utf-8"))
    outputs = [o for cell in notebook["cells"] if cell["cell_type"] == "code" for o in cell.get("outputs", [])]
    pictures = sum("image/png" in o.get("data", {}) for o in outputs)
    errors = [o for o in outputs if o.get("output_type") == "error"]
    unrun = [cell for cell in notebook["cells"] if cell["cell_type"] == "code" and cell.get("execution_count") is None]
    leaked = root in json.dumps(notebook)
    problems = ([f"{len(errors)} error output(s)"] if errors else []) \
        + (["no picture among its outputs: store it executed (bash scripts/run_notebooks.sh --store)"] if not pictures else []) \
        + ([f"{len(unrun)} cell(s) never run"] if unrun else []) \
        + ([f"its outputs name this checkout's path {root}"] if leaked else [])
    if problems:
        bad += 1
        print(f"FAIL {path} as stored: " + "; ".join(problems))
    else:
        print(f"ok   {path} as stored: {len(outputs)} outputs, {pictures} picture(s)")
sys.exit(1 if bad else 0)
EOF
exit $status
