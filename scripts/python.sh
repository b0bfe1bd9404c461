#!/usr/bin/env bash
# Runs one of the course's Python scripts with a Python that has what the script needs, or says
# exactly what to install (exit 2). Every command of the documentation that runs Python goes
# through it, so that a `python3` without NumPy (pyenv, conda, a virtual environment) does not end
# in a ModuleNotFoundError.
#
#   bash scripts/python.sh tools/charts.py timeline a.csv b.csv -o timeline.png
#   bash scripts/python.sh benchmarks/peers/jax_3x3.py --no-output
#   bash scripts/python.sh --print tools/charts.py          # print the Python it would use
#   bash scripts/python.sh --print --needs numpy,h5py       # the first Python with these modules
#   PYTHON=/opt/conda/bin/python3 bash scripts/python.sh ...   # this Python, no search
#
# Which Python: $PYTHON if set (only it), else the first of /usr/bin/python3 and `python3` on PATH
# that imports every module the script needs. Debian's and Ubuntu's python3-numpy, python3-h5py
# and python3-matplotlib live in /usr/bin/python3, which comes first so that the committed charts
# are redrawn byte for byte by the same matplotlib. A Python that also has the modules the script
# can use (a peer's CuPy, PyTorch or JAX) is preferred over one that has only what it needs;
# without them the script runs and says what it skipped. (GS_SYSTEM_PYTHON replaces
# /usr/bin/python3 in that list; the tests use it.)
set -euo pipefail

print=0 needs_given=0 needs=() can_use=()
while [ $# -gt 0 ]; do
  case "$1" in
    --print) print=1; shift ;;
    --needs) IFS=, read -r -a needs <<< "${2:?--needs takes a list of modules, e.g. numpy,h5py}"
             needs_given=1; shift 2 ;;
    -h | --help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
script=${1:-}
if [ -z "$script" ] && [ "$print" = 0 ]; then
  echo "python.sh: name the script to run (bash scripts/python.sh --help)" >&2
  exit 2
fi
[ $# -gt 0 ] && shift

# What each script needs (it fails without) and can use (it skips a part without, saying so).
if [ "$needs_given" = 0 ] && [ -n "$script" ]; then
  case "$(basename "$(dirname "$script")")/$(basename "$script")" in
    tools/charts.py) needs=(matplotlib) ;;
    peers/numpy_slices.py) needs=(numpy) can_use=(h5py) ;;
    peers/cupy_slices.py | peers/cupy_writer_thread.py) needs=(numpy) can_use=(cupy h5py) ;;
    peers/torch_slices.py) needs=(numpy) can_use=(torch h5py) ;;
    peers/jax_3x3.py) needs=(numpy) can_use=(jax h5py) ;;
    peers/check.py) needs=(numpy) can_use=(h5py cupy torch jax) ;;
    scripts/check_classroom.py) needs=(yaml) ;;
    *) needs=() ;;
  esac
fi

# The candidates: $PYTHON alone, else the system's Python, then PATH's (when it is another one).
candidates=()
if [ -n "${PYTHON:-}" ]; then
  candidates=("$PYTHON")
else
  system=${GS_SYSTEM_PYTHON:-/usr/bin/python3}
  [ -x "$system" ] && candidates+=("$system")
  if on_path=$(command -v python3 2> /dev/null) && [ "$on_path" != "$system" ] \
     && [ "$(readlink -f "$on_path")" != "$(readlink -f "$system" 2> /dev/null)" ]; then
    candidates+=("$on_path")
  fi
fi

# How many of the modules it can use a Python has (found, not imported: importing CuPy or JAX
# takes seconds); nothing printed if it lacks one it needs (imported: a NumPy that is there but
# broken counts as missing).
score() {
  "$1" - "${needs[@]+"${needs[@]}"}" -- "${can_use[@]+"${can_use[@]}"}" 2> /dev/null << 'PYTHON'
import importlib, importlib.util, sys
arguments = sys.argv[1:]
split = arguments.index("--")
for module in arguments[:split]:
    importlib.import_module(module)
print(sum(importlib.util.find_spec(module) is not None for module in arguments[split + 1:]))
PYTHON
}

chosen="" best=-1
for python in ${candidates[@]+"${candidates[@]}"}; do
  if found=$(score "$python") && [ -n "$found" ] && [ "$found" -gt "$best" ]; then
    chosen=$python best=$found
  fi
done

if [ -z "$chosen" ]; then
  what=${script:-python.sh}
  needed=$(IFS=,; echo "${needs[*]:-nothing but Python 3}" | sed 's/,/, /g')
  packages=""
  for module in ${needs[@]+"${needs[@]}"}; do packages+=" python3-$module"; done
  packages=${packages:- python3}
  if [ -n "${PYTHON:-}" ]; then
    echo "python.sh: $what needs $needed, which PYTHON=$PYTHON cannot import: install it" \
         "there, or unset PYTHON to use the system's Python (sudo apt-get install${packages})." >&2
    exit 2
  fi
  tried=$(IFS=,; echo "${candidates[*]:-no ${GS_SYSTEM_PYTHON:-/usr/bin/python3}, no python3 on PATH}" | sed 's/,/, /g')
  echo "python.sh: $what needs $needed, which no Python here imports (tried $tried)." >&2
  echo "  Debian/Ubuntu: sudo apt-get install${packages}   (or: bash scripts/setup.sh)" >&2
  echo "  or name a Python that has it: PYTHON=/path/to/python3 bash scripts/python.sh${script:+ $script} ..." >&2
  exit 2
fi

if [ "$print" = 1 ]; then
  echo "$chosen"
  exit 0
fi
exec "$chosen" "$script" "$@"
