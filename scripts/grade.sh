#!/usr/bin/env bash
# Grades the exercises: builds each lesson's exercise and its test suite, runs the suite (and,
# where a GPU is present, compute-sanitizer memcheck on GPU lessons), measures the exercise's
# speed against lesson 01's naive loop, prints a scoreboard and exits nonzero if anything fails.
#
#   bash scripts/grade.sh          # every lesson
#   bash scripts/grade.sh 01 03    # only these lessons
#   GS_BUILD_DIR=build-grade bash scripts/grade.sh   # another build directory
# Works the same on a learner's machine and in a fork's CI (.github/workflows/grade.yml).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gtest_counts.sh
BUILD=${GS_BUILD_DIR:-build}
SIZE=(-r 512 -c 512 -n 4 -e 16)   # the speed measurement: small enough for a CI runner

lessons=("$@")
if [ "${#lessons[@]}" -eq 0 ]; then
  for dir in solutions/*/; do lessons+=("$(basename "$dir" | cut -d_ -f1)"); done
fi

bash scripts/setup.sh --quiet --no-slides || exit 1
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null || exit 1
fi
available=$(cmake --build "$BUILD" --target help | grep -Eo '(test_)?lesson[0-9]+_exercise(_cpu)?' | sort -u)
targets=""
for n in "${lessons[@]}"; do
  targets="$targets $(printf '%s\n' $available | grep -E "lesson${n}_exercise" | tr '\n' ' ')"
done
targets="$targets $(printf '%s\n' $available | grep -Ex 'lesson01_exercise' || true)"
echo "building:$targets"
if ! cmake --build "$BUILD" -j "$(nproc)" --target $targets > /tmp/gs_grade_build.log 2>&1; then
  grep -E "error" /tmp/gs_grade_build.log | head -20
  echo "grade.sh: the exercises do not compile (full log: /tmp/gs_grade_build.log)"
  exit 1
fi

gpu=0
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L > /dev/null 2>&1 && gpu=1

cell_rate() {  # cell_updates_per_s of a program run, from its --json line
  "$@" "${SIZE[@]}" --no-output --json 2>/dev/null | sed -n 's/.*"cell_updates_per_s":\([0-9.e+]*\).*/\1/p'
}
baseline=""
[ -x "$BUILD/bin/lesson01_exercise" ] && baseline=$(cell_rate "$BUILD/bin/lesson01_exercise" --impl l01-naive)

status=0
rows=""
for n in "${lessons[@]}"; do
  suites=$(printf '%s\n' $available | grep -E "^test_lesson${n}_exercise" || true)
  if [ -z "$suites" ]; then
    rows="$rows| $n | - | - | - | - | - | NOT BUILT (see the configure summary) |\n"
    continue
  fi
  for suite in $suites; do
    exe="$BUILD/bin/$suite"
    program="$BUILD/bin/${suite#test_}"
    GT_LOG="/tmp/gs_grade_${suite}.log" run_gtest "$exe"
    verdict=PASS
    if [ "$GT_FAILED" -gt 0 ] || [ "$GT_RC" -ne 0 ]; then verdict="FAIL (log: /tmp/gs_grade_${suite}.log)"; status=1
    elif [ "$GT_PASSED" -eq 0 ]; then verdict="SKIPPED (no GPU)"; fi
    sanitizer=""
    if [ "$gpu" = 1 ] && [ "$verdict" = PASS ] && [[ "$suite" != *_cpu ]] && [ "$n" -ge 3 ] \
       && command -v compute-sanitizer >/dev/null 2>&1; then
      if compute-sanitizer --tool memcheck --error-exitcode 9 "$exe" --gtest_filter='*17x33*:*1x7*' \
           > "/tmp/gs_grade_${suite}_memcheck.log" 2>&1; then
        sanitizer=", memcheck clean"
      else
        sanitizer=", memcheck FAILED"; verdict="FAIL (memcheck: /tmp/gs_grade_${suite}_memcheck.log)"; status=1
      fi
    fi
    speedup="-"
    if [ "$verdict" = PASS ] && [ -n "$baseline" ] && [ -x "$program" ]; then
      rate=$(cell_rate "$program")
      [ -n "$rate" ] && speedup=$(awk -v a="$rate" -v b="$baseline" 'BEGIN { printf "%.1fx", a / b }')
    fi
    rows="$rows| $n | ${suite#test_} | $GT_PASSED/$GT_TOTAL | $GT_SKIPPED | ${GT_SECONDS} s | $speedup | $verdict$sanitizer |\n"
  done
done

echo
echo "Gray-Scott School scoreboard ($(date -u +%Y-%m-%d), GPU: $([ $gpu = 1 ] && nvidia-smi --query-gpu=name --format=csv,noheader | head -1 || echo none))"
echo
echo "| lesson | exercise | tests passed | skipped | time | speed-up vs l01-naive | status |"
echo "|---|---|---:|---:|---:|---:|---|"
printf "%b" "$rows"
echo
echo "speed-up: the exercise program's default implementation, ${SIZE[*]}, against l01-naive, same size."
exit $status
