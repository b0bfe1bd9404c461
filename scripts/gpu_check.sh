#!/usr/bin/env bash
# The GPU machine's one call: configure, build, run the GPU tests (solutions must pass, shipped
# exercises must fail), compute-sanitizer (memcheck, racecheck, synccheck) on every GPU
# solution, then the benchmark. Logs go to $OUT (the device tool's folder) or ./gpu-logs.
#
#   bash scripts/gpu_check.sh                     # everything
#   GS_LESSONS="04 05" bash scripts/gpu_check.sh  # only these GPU lessons
#   GS_BENCH="-n 1000 -e 32" bash scripts/gpu_check.sh   # benchmark arguments ("" skips it)
#   GS_SANITIZE=0 bash scripts/gpu_check.sh       # skip compute-sanitizer
#   GS_COMMIT=abc1234 bash scripts/gpu_check.sh   # the commit to name where .git did not travel
set -uo pipefail
OUT=${OUT:-$PWD/gpu-logs}
mkdir -p "$OUT"
# A fresh build folder each call by default: objects left by an earlier copy of the tree are
# never reused by mistake.
BUILD=${GS_BUILD_DIR:-$(mktemp -d /tmp/gs-build.XXXXXX)}
LESSONS=${GS_LESSONS:-"03 04 05 06"}
BENCH=${GS_BENCH-"-n 1000 -e 32 --max-seconds 20"}
SANITIZE=${GS_SANITIZE:-1}
status=0
source scripts/gtest_counts.sh

echo "== device"; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader
COMMIT=${GS_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
echo "== commit $COMMIT"
echo "== date $(date -u +%Y-%m-%dT%H:%MZ)"

targets="gray_scott gs_benchmark"
for n in $LESSONS; do
  for t in lesson${n}_solution lesson${n}_exercise test_lesson${n}_solution test_lesson${n}_exercise; do
    targets="$targets $t"
  done
done
echo "== build ($targets)"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DGS_GIT_COMMIT="$COMMIT" \
  > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
cmake --build "$BUILD" -j 16 --target $targets > "$OUT/build.log" 2>&1 \
  || { grep -E "error|Error" "$OUT/build.log" | head -40; exit 1; }
bin=$BUILD/bin

echo "== tests: solutions must pass, exercises must fail"
for n in $LESSONS; do
  for variant in solution exercise; do
    exe=$bin/test_lesson${n}_${variant}
    [ -x "$exe" ] || continue
    GT_LOG="$OUT/test_lesson${n}_${variant}.log" run_gtest "$exe"
    rc=$GT_RC
    summary="$GT_PASSED passed, $GT_FAILED failed, $GT_SKIPPED skipped of $GT_TOTAL"
    if [ "$variant" = solution ] && { [ $rc -ne 0 ] || [ "$GT_PASSED" -eq 0 ]; }; then status=1; verdict="FAIL (solution must pass)";
    elif [ "$variant" = exercise ] && [ "$GT_FAILED" -eq 0 ]; then status=1; verdict="FAIL (shipped exercise must fail)";
    else verdict=ok; fi
    echo "lesson$n $variant: rc=$rc $summary -> $verdict"
  done
done

if [ "$SANITIZE" = 1 ]; then
  echo "== compute-sanitizer on the GPU solutions (small odd grids)"
  for n in $LESSONS; do
    exe=$bin/test_lesson${n}_solution
    [ -x "$exe" ] || continue
    for tool in memcheck racecheck synccheck; do
      log=$OUT/sanitizer_lesson${n}_${tool}.log
      compute-sanitizer --tool $tool --error-exitcode 9 "$exe" \
        --gtest_filter='*17x33*:*67x131_random*:*1x7*:*7x1*:*255x257_random*' --gtest_brief=1 > "$log" 2>&1
      rc=$?
      echo "lesson$n $tool: rc=$rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)"
      [ $rc -eq 0 ] || status=1
    done
  done
fi

if [ -n "$BENCH" ]; then
  echo "== benchmark: gs_benchmark $BENCH"
  "$bin/gs_benchmark" $BENCH --markdown "$OUT/benchmark.md" 2> "$OUT/benchmark.err" || status=1
  # A hot GPU slows its clocks by itself: say so next to the numbers (a slowdown marked Active
  # here means the table above was measured on a throttled GPU).
  echo "== after the benchmark: temperature, clock and slowdown reasons"
  nvidia-smi --query-gpu=temperature.gpu,clocks.sm,power.draw --format=csv,noheader
  nvidia-smi -q -d PERFORMANCE | grep -E 'Slowdown|Power Cap|Brak' | grep -v ': 0 us' | sed 's/^ *//'
fi
exit $status
