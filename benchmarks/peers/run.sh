#!/usr/bin/env bash
# Runs every peer this machine can run on the same grid and appends one CSV row per peer, in the
# schema the course's C++ rows share, so one chart tool reads both. NumPy, CuPy, PyTorch and JAX are
# timed compute only (--no-output); the CuPy writer-thread peer end to end, writing its HDF5
# file to a temporary folder (removed afterwards) unless -o names another place.
#
#   bash benchmarks/peers/run.sh                          # official size, benchmarks/results/peers.csv
#   bash benchmarks/peers/run.sh -r 270 -c 480 -n 100 --csv /tmp/peers.csv
#   PYTHON=/opt/conda/bin/python3 bash benchmarks/peers/run.sh --max-seconds 20
#
# Every flag but --csv goes to every peer (see `bash scripts/python.sh benchmarks/peers/numpy_slices.py -h`).
# Each peer runs with the Python scripts/python.sh chooses for it: $PYTHON if set, else the first
# of /usr/bin/python3 and python3 that has NumPy, preferring one that also has the peer's
# library. A peer whose package or GPU is missing is skipped with its reason; the exit status is
# 1 if a peer that ran failed (crashed, or its state was not finite), else 0. Each peer's result
# line names Python's and its libraries' versions (harness.library_versions()); the CSV does not
# (its columns are shared with the C++ programs), so keep this script's output beside the CSV.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
csv=$root/benchmarks/results/peers.csv
peer_flags=()
while [ $# -gt 0 ]; do
  case "$1" in
    --csv) csv=${2:?--csv needs a file name}; shift 2 ;;
    --csv=*) csv=${1#--csv=}; shift ;;
    -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) peer_flags+=("$1"); shift ;;
  esac
done

# One commit for every row, also where .git did not travel ($GS_COMMIT, as gpu_check.sh).
GS_COMMIT=${GS_COMMIT:-$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)}
export GS_COMMIT
output_folder=$(mktemp -d "${TMPDIR:-/tmp}/gs-peers.XXXXXX")
trap 'rm -rf "$output_folder"' EXIT
rows_before=$( [ -f "$csv" ] && wc -l < "$csv" || echo 0 )

echo "== peers: commit $GS_COMMIT, rows appended to $csv"
if ! bash "$root/scripts/python.sh" --print --needs numpy > /dev/null 2> "$output_folder/why"; then
  echo "== skipped every peer: no Python here has NumPy, which they all need"
  sed 's/^/   /' "$output_folder/why"
  exit 0
fi
ran=() skipped=() failed=()
run_peer() {  # run_peer SCRIPT FLAGS...
  local name=${1%.py} python
  python=$(bash "$root/scripts/python.sh" --print "$here/$1") || { skipped+=("$name"); return; }
  echo "== $name ($python, $("$python" --version 2>&1))"
  "$python" "$here/$1" "${@:2}" --csv "$csv" 2>&1  # one stream: messages stay in order
  case $? in
    0) ran+=("$name") ;;
    3) skipped+=("$name") ;;
    *) failed+=("$name"); echo "FAILED: $name" ;;
  esac
}
# grayscott_module.py is not a port: the course's own stepper called from Python (lesson 10),
# skipped unless the module is built for $python (cmake --build build --target grayscott).
for peer in numpy_slices.py cupy_slices.py torch_slices.py jax_3x3.py grayscott_module.py; do
  run_peer "$peer" --no-output "${peer_flags[@]}"
done
run_peer cupy_writer_thread.py -o "$output_folder/output.h5" "${peer_flags[@]}"

echo "== ran: ${ran[*]:-none}; skipped: ${skipped[*]:-none}; failed: ${failed[*]:-none}"
if [ -f "$csv" ] && [ "$(wc -l < "$csv")" -gt "$rows_before" ]; then
  head -1 "$csv"
  tail -n +"$((rows_before + 1))" "$csv" | grep -v '^implementation,'
fi
[ ${#failed[@]} -eq 0 ]
