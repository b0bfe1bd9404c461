#!/usr/bin/env bash
# Tests of the tests, run by CI:
#  1. drift: each exercise (lessons/NN_*/FILE) equals its solution (solutions/NN_*/FILE) outside
#     the regions between `GS_EXERCISE_BEGIN(name)` and `GS_EXERCISE_END`; every exercise
#     region starts with a TODO for the learner;
#  2. every shipped exercise whose tests can run here FAILS at least one of them (a suite that
#     passes an unsolved exercise cannot grade anything). GPU suites are checked on the GPU
#     machine by scripts/gpu_check.sh.
# The solutions passing their suites is checked by scripts/test.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
source scripts/gtest_counts.sh
status=0

outside_regions() {  # the file with the insides of the marked regions removed
  awk '/GS_EXERCISE_END/ { inside = 0 } !inside { print } /GS_EXERCISE_BEGIN/ { inside = 1 }' "$1"
}

echo "== exercise drift"
for solution_dir in solutions/*/; do
  lesson=$(basename "$solution_dir")
  for solution in "$solution_dir"*; do
    [ -f "$solution" ] || continue
    exercise="lessons/$lesson/$(basename "$solution")"
    if [ ! -f "$exercise" ]; then
      echo "FAIL $exercise is missing (its solution is $solution)"; status=1; continue
    fi
    regions=$(grep -c "GS_EXERCISE_BEGIN" "$exercise" || true)
    if [ "$regions" -eq 0 ]; then
      echo "FAIL $exercise has no GS_EXERCISE_BEGIN region"; status=1; continue
    fi
    todos=$(awk '/GS_EXERCISE_BEGIN/ { getline; if ($0 ~ /TODO\(lesson/) n++ } END { print n + 0 }' "$exercise")
    if [ "$todos" -ne "$regions" ]; then
      echo "FAIL $exercise: $regions region(s) but $todos start with a 'TODO(lesson NN)' line"; status=1
    fi
    if diff -u <(outside_regions "$solution") <(outside_regions "$exercise") > /tmp/gs_drift.diff; then
      echo "ok   $exercise matches $solution outside its $regions region(s)"
    else
      echo "FAIL $exercise differs from $solution outside the marked regions:"
      head -40 /tmp/gs_drift.diff; status=1
    fi
  done
done

echo "== shipped exercises must fail their tests"
found=0
for exe in "$BUILD"/bin/test_lesson*_exercise*; do
  [ -x "$exe" ] || continue
  found=1
  name=$(basename "$exe")
  run_gtest "$exe"
  if [ "$GT_RC" -ne 0 ] && [ "$GT_FAILED" -gt 0 ]; then
    echo "ok   $name fails $GT_FAILED of $GT_TOTAL test(s) as shipped"
  elif [ "$GT_RC" -eq 0 ] && [ "$GT_PASSED" -eq 0 ] && [ "$GT_SKIPPED" -gt 0 ]; then
    echo "skip $name: all $GT_SKIPPED tests skipped here (no GPU); scripts/gpu_check.sh checks it"
  else
    echo "FAIL $name passes as shipped (rc=$GT_RC, $GT_PASSED passed, $GT_FAILED failed): its tests cannot grade"
    status=1
  fi
done
[ "$found" = 1 ] || { echo "FAIL no exercise test binaries in $BUILD/bin"; status=1; }
exit $status
