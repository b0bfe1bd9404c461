#!/usr/bin/env bash
# Tests of scripts/python.sh, the one way the documentation runs Python: with a `python3` first
# on PATH that has no NumPy (a pyenv or conda interpreter, as on the course's own CI machine),
# lesson 07's chart command, the peers' run.sh and make_figures.sh's choice still find a Python
# that has what they need, or say exactly what to install and exit 2; the choice between two
# Pythons follows the documented order. Fake interpreters are /usr/bin/python3 started with -S
# (no site-packages, so no NumPy), given stub modules through PYTHONPATH where a case needs them.
# Run by CTest (tools.python_helper); prints "N passed, N failed" and exits 1 on a failure.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
helper=$root/scripts/python.sh
T=$(mktemp -d "${TMPDIR:-/tmp}/gs-python-helper.XXXXXX")
trap 'rm -rf "$T"' EXIT
passed=0 failed=0
pass() { echo "ok   $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; failed=$((failed + 1)); }

if [ ! -x /usr/bin/python3 ]; then
  echo "test_python_helper.sh: the fakes are built on /usr/bin/python3, which is missing: skipped"
  echo "0 passed, 0 failed, 1 skipped"
  exit 0
fi
system_has() { /usr/bin/python3 -c "import $1" 2> /dev/null; }

# fake NAME [STUB_MODULE...]: $T/NAME/python3, a Python without site-packages, seeing only the
# named stub modules (empty packages: enough for an import).
fake() {
  local dir=$T/$1 module
  shift
  mkdir -p "$dir/bin" "$dir/modules"
  for module in "$@"; do mkdir -p "$dir/modules/$module" && : > "$dir/modules/$module/__init__.py"; done
  printf '#!/bin/sh\nPYTHONPATH=%s exec /usr/bin/python3 -S "$@"\n' "$dir/modules" > "$dir/bin/python3"
  chmod +x "$dir/bin/python3"
}
fake bare                  # like this machine's pyenv python3: no NumPy, nothing
fake numpy_only numpy
fake with_jax numpy jax
bare=$T/bare/bin/python3
bare_path="$T/bare/bin:$PATH"

# expect_print NAME EXPECTED COMMAND...: the helper's --print answer
expect_print() {
  local name=$1 expected=$2 got
  shift 2
  got=$("$@" 2> "$T/stderr") || got="(exit $?) $(cat "$T/stderr")"
  if [ "$got" = "$expected" ]; then pass "$name: $got"; else fail "$name: expected '$expected', got '$got'"; fi
}
# expect_refusal NAME TEXT COMMAND...: exit 2 and TEXT in the message
expect_refusal() {
  local name=$1 text=$2 status
  shift 2
  "$@" > "$T/out" 2>&1
  status=$?
  if [ "$status" = 2 ] && grep -qF -- "$text" "$T/out"; then
    pass "$name: exit 2, says '$text'"
  else
    fail "$name: expected exit 2 and '$text', got exit $status:"; sed 's/^/     /' "$T/out"
  fi
}

# 1. python3 on PATH without NumPy, the system's Python as it is on this machine.
if system_has matplotlib; then
  expect_print "charts.py, python3 without NumPy first on PATH" /usr/bin/python3 \
    env PATH="$bare_path" bash "$helper" --print tools/charts.py
  # Lesson 07's chart command, on the committed timelines of two runs.
  data=$root/docs/data
  if (cd "$root" && PATH="$bare_path" bash scripts/python.sh tools/charts.py timeline \
        "$data/timeline-cpu-no-overlap-2core-09b7902.csv" "$data/timeline-cpu-overlap-2core-09b7902.csv" \
        --frames 12 --label before --label after -o "$T/timeline.png") > "$T/out" 2>&1 \
     && [ "$(head -c 4 "$T/timeline.png" | od -An -c | tr -d ' ')" = '211PNG' ]; then
    pass "lesson 07's chart command draws a PNG"
  else
    fail "lesson 07's chart command:"; sed 's/^/     /' "$T/out"
  fi
else
  expect_refusal "charts.py, no matplotlib anywhere" "sudo apt-get install python3-matplotlib" \
    env PATH="$bare_path" bash "$helper" tools/charts.py --help
fi

# make_figures.sh asks the helper; a PYTHON without matplotlib is refused before any chart.
expect_refusal "make_figures.sh, PYTHON without matplotlib" "PYTHON=$bare cannot import" \
  env PYTHON="$bare" bash "$root/tools/make_figures.sh"

# The peers' run.sh, on a tiny grid, into a CSV of its own.
PATH="$bare_path" bash "$root/benchmarks/peers/run.sh" -r 8 -c 8 -n 1 -e 1 --csv "$T/peers.csv" \
  > "$T/out" 2>&1
status=$?
if system_has numpy; then
  if [ "$status" = 0 ] && grep -q "^== ran: numpy_slices" "$T/out" && grep -q '^numpy-slices,' "$T/peers.csv"; then
    pass "run.sh with python3 without NumPy first on PATH: numpy_slices ran with /usr/bin/python3"
  else
    fail "run.sh (exit $status):"; sed 's/^/     /' "$T/out"
  fi
elif [ "$status" = 0 ] && grep -q "skipped every peer" "$T/out" && grep -q "python3-numpy" "$T/out"; then
  pass "run.sh without NumPy anywhere: every peer skipped, saying what to install"
else
  fail "run.sh (exit $status):"; sed 's/^/     /' "$T/out"
fi

# 2. No Python with what is needed: the message names the packages and PYTHON.
export GS_SYSTEM_PYTHON=$bare
expect_refusal "charts.py, no Python has matplotlib" "sudo apt-get install python3-matplotlib" \
  env PATH="$bare_path" bash "$helper" tools/charts.py timeline a.csv
expect_refusal "the message names PYTHON" "PYTHON=/path/to/python3 bash scripts/python.sh tools/charts.py" \
  env PATH="$bare_path" bash "$helper" tools/charts.py
expect_refusal "a peer, no Python has NumPy" "sudo apt-get install python3-numpy" \
  env PATH="$bare_path" bash "$helper" benchmarks/peers/numpy_slices.py
expect_refusal "--needs numpy,h5py,matplotlib" \
  "sudo apt-get install python3-numpy python3-h5py python3-matplotlib" \
  env PATH="$bare_path" bash "$helper" --print --needs numpy,h5py,matplotlib
PATH="$bare_path" bash "$root/benchmarks/peers/run.sh" -r 8 -c 8 -n 1 -e 1 --csv "$T/none.csv" \
  > "$T/out" 2>&1
status=$?
if [ "$status" = 0 ] && grep -q "skipped every peer" "$T/out" && grep -q "python3-numpy" "$T/out" \
   && [ ! -e "$T/none.csv" ]; then
  pass "run.sh, no Python has NumPy: every peer skipped (exit 0), saying what to install"
else
  fail "run.sh, no NumPy anywhere (exit $status):"; sed 's/^/     /' "$T/out"
fi

# 3. The order: the system's Python first; one that also has what a peer can use wins.
export GS_SYSTEM_PYTHON=$T/numpy_only/bin/python3
expect_print "numpy_slices.py: the system's Python first" "$GS_SYSTEM_PYTHON" \
  env PATH="$T/with_jax/bin:$PATH" bash "$helper" --print benchmarks/peers/numpy_slices.py
expect_print "jax_3x3.py: the Python that also has JAX" "$T/with_jax/bin/python3" \
  env PATH="$T/with_jax/bin:$PATH" bash "$helper" --print benchmarks/peers/jax_3x3.py
expect_print "jax_3x3.py: no JAX anywhere, the first with NumPy (the peer then skips)" \
  "$GS_SYSTEM_PYTHON" env PATH="$bare_path" bash "$helper" --print benchmarks/peers/jax_3x3.py
expect_print "PYTHON wins over the search" "$T/with_jax/bin/python3" \
  env PYTHON="$T/with_jax/bin/python3" bash "$helper" --print benchmarks/peers/numpy_slices.py
expect_refusal "PYTHON without NumPy is refused, not replaced" "PYTHON=$bare cannot import" \
  env PYTHON="$bare" bash "$helper" benchmarks/peers/numpy_slices.py
expect_refusal "no script named" "name the script to run" bash "$helper"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
