#!/usr/bin/env bash
# Lesson 11's measurements in one call of a GPU machine (the README's Results come from it):
# build only what lesson 11 needs, its GPU tests (solution, smaller cards' limits, the shipped
# exercise failing, compute-sanitizer), gs_benchmark beside l06-temporal, and Nsight Compute on
# one frame's launch. Logs go to $OUT (the device tool's folder) or ./gpu-logs; the summary is
# printed last.
#
#   bash scripts/measure_on_chip.sh                       # every stage
#   GS_STAGES="build bench ncu" bash scripts/measure_on_chip.sh
#   GS_SANITIZE=0 ...                                             # the tests without the sanitizers
#   GS_COMMIT=abc1234 ...                                         # the commit, where .git did not travel
set -uo pipefail
OUT=${OUT:-$PWD/gpu-logs}
mkdir -p "$OUT"
BUILD=${GS_BUILD_DIR:-/tmp/gs-lesson11}
STAGES=${GS_STAGES:-"build bench ncu test"}
LOGS=${GS_LOGS:-/tmp/gs-lesson11-logs}  # the bulky logs; $OUT gets the summary files only
mkdir -p "$LOGS"
COMMIT=${GS_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
IMPLS=${GS_IMPLS:-l06-temporal,l11-on-chip,l11-on-chip-h2,l11-on-chip-h6,l11-on-chip-h8}
status=0
has() { [[ " $STAGES " == *" $1 "* ]]; }

{
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  echo "commit $COMMIT, $(date -u +%Y-%m-%dT%H:%MZ)"
} | tee "$OUT/device.txt"

if has build; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DGS_GIT_COMMIT="$COMMIT" > "$LOGS/configure.log" 2>&1 || { tail -20 "$LOGS/configure.log"; exit 1; }
  cmake --build "$BUILD" -j "$(nproc)" --target test_lesson11_solution test_lesson11_exercise \
    lesson11_solution gs_benchmark gray_scott lesson06_solution > "$LOGS/build.log" 2>&1 \
    || { grep -E "error" "$LOGS/build.log" | head -30; exit 1; }
  echo "== built"
fi

if has test; then
  exclude='^exercise$'
  [ "${GS_SANITIZE:-1}" = 1 ] || exclude='^(exercise|sanitizer)$'
  ctest --test-dir "$BUILD" -L lesson11 -LE "$exclude" -j 4 --timeout 900 --output-on-failure \
    > "$OUT/ctest.log" 2>&1 || status=1
  grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|exercise_fails|sanitizer\.|\.t4 |gtx1650" \
    "$OUT/ctest.log" | sed 's/  */ /g' | head -30
fi

if has bench; then
  for round in 1 2; do
    echo "== gs_benchmark, official run, round $round"
    "$BUILD/bin/gs_benchmark" --impl "$IMPLS" -n 1000 -e 32 --max-seconds 20 \
      --csv "$LOGS/benchmark.csv" 2>> "$LOGS/benchmark.err" | tee -a "$OUT/benchmark.md" || status=1
  done
  echo "== one launch per 3200 steps (the steps alone)"
  "$BUILD/bin/gs_benchmark" --impl l11-on-chip -n 10 -e 3200 --max-seconds 20 \
    --csv "$LOGS/benchmark.csv" 2>> "$LOGS/benchmark.err" | tee -a "$OUT/benchmark.md" || status=1
  nvidia-smi --query-gpu=temperature.gpu,clocks.sm,power.draw --format=csv,noheader
fi

if has ncu; then
  for impl in l11-on-chip l11-on-chip-h8; do
  echo "== ncu, one frame's launch (32 steps) of $impl"
  ncu --clock-control none -k regex:on_chip_kernel --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section InstructionStats \
    --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis \
    --section SchedulerStats --section SourceCounters \
    --metrics smsp__inst_executed.sum,sm__inst_executed.avg.per_cycle_active,gpu__time_duration.sum,smsp__cycles_active.avg,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio \
    "$BUILD/bin/lesson11_solution" --impl $impl -n 3 --no-output > "$OUT/ncu-$impl.txt" 2>&1 || status=1
  grep -E "smsp__inst_executed.sum|per_cycle_active|gpu__time_duration|Registers Per|Block Size|Grid Size|DRAM Throughput|SM Frequency" \
    "$OUT/ncu-$impl.txt" | sed 's/  */ /g' | head -20
  echo "-- stalls per issued instruction (warps), the largest"
  grep -E "issue_stalled_.*ratio" "$OUT/ncu-$impl.txt" | awk '{print $NF, $1}' | sort -rn | head -6
  done
fi
if has shapes; then
  echo "== block sizes (GS_L11_WARPS), official run"
  for warps in ${GS_WARPS_LIST:-12 16}; do
    GS_L11_WARPS=$warps "$BUILD/bin/gs_benchmark" --impl l11-on-chip,l11-on-chip-h6,l11-on-chip-h8 \
      -n 1000 -e 32 --max-seconds 20 2>> "$LOGS/benchmark.err" \
      | grep -E "^\| l11" | sed "s/^/warps $warps /" | cut -d'|' -f1-5 | tee -a "$OUT/benchmark.md"
  done
fi

if has variants; then
  echo "== rows one or two at a time (GS_L11_PAIRED_ROWS), official run"
  for paired in 0 1; do
    GS_L11_PAIRED_ROWS=$paired "$BUILD/bin/gs_benchmark" \
      --impl l06-temporal,l11-on-chip,l11-on-chip-h6,l11-on-chip-h8 -n 1000 -e 32 --max-seconds 20 \
      --csv "$LOGS/variants.csv" 2>> "$LOGS/benchmark.err" \
      | grep -E "^\| l" | sed "s/^/paired $paired /" | cut -d'|' -f1-5 | tee -a "$OUT/benchmark.md"
  done
  cp "$LOGS/variants.csv" "$OUT/"
fi

if has graphs; then
  echo "== a frame's launch made afresh or replayed from a graph (GS_L11_GRAPHS), official run"
  for round in 1 2; do
    for graphs in 0 1; do
      GS_L11_GRAPHS=$graphs "$BUILD/bin/gs_benchmark" \
        --impl l06-temporal,l11-on-chip,l11-on-chip-h8 -n 1000 -e 32 --max-seconds 20 \
        --csv "$LOGS/graphs.csv" 2>> "$LOGS/benchmark.err" \
        | grep -E "^\| l" | sed "s/^/graphs $graphs /" | cut -d'|' -f1-5 | tee -a "$OUT/benchmark.md"
    done
  done
  cp "$LOGS/graphs.csv" "$OUT/"
fi

if has grids; then
  echo "== smaller grids: where lesson 11 leads"
  for grid in "540 960" "768 1366"; do
    set -- $grid
    "$BUILD/bin/gs_benchmark" --impl l06-temporal,l11-on-chip,l11-on-chip-h8 -r $1 -c $2 \
      -n 1000 -e 32 --max-seconds 20 --csv "$LOGS/benchmark.csv" 2>> "$LOGS/benchmark.err" \
      | grep -E "^\| l" | sed "s/^/$1 x $2 /" | cut -d'|' -f1-5 | tee -a "$OUT/benchmark.md"
  done
fi

if has picks; then
  echo "== gray_scott's default choice, official run, no output"
  "$BUILD/bin/gray_scott" --no-output 2>&1 | grep -E "choosing|passing over|implementation|compute" | head -6
  echo "== the same under a T4's limits"
  GS_DEVICE_LIMITS=t4 "$BUILD/bin/gray_scott" --no-output -n 20 2>&1 \
    | grep -E "choosing|passing over|implementation" | cut -c1-240 | head -6
fi

if has ncu06; then
  echo "== lesson 06 in Nsight Compute: DRAM bytes with and without the cache flush"
  for cache in all none; do
    for case in "l06-fused fused_step_kernel" "l06-shared-blocking shared_blocking_kernel" "l06-temporal temporal_kernel"; do
      set -- $case
      ncu --clock-control none --cache-control $cache -k regex:$2 --launch-skip 4 --launch-count 1 \
        --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum \
        "$BUILD/bin/lesson06_solution" --impl $1 -n 2 -e 32 --no-output > "$LOGS/ncu06.txt" 2>&1
      echo "-- $1 ($2), --cache-control $cache" | tee -a "$OUT/ncu06.txt"
      grep -E "dram__|gpu__time|lts__t_bytes" "$LOGS/ncu06.txt" | sed 's/  */ /g' | tee -a "$OUT/ncu06.txt"
    done
  done
fi

if has sass; then
  cuobjdump -sass "$BUILD/bin/lesson11_solution" > "$LOGS/sass.txt" 2>&1
  awk '/Function : .*on_chip_kernelILi4E/{p=1} p&&/Function : /&&!/ILi4E/{p=0} p' "$LOGS/sass.txt" \
    > "$OUT/sass-kernel4.txt"
  wc -l "$OUT/sass-kernel4.txt"
fi
cp "$LOGS/benchmark.csv" "$OUT/" 2> /dev/null
echo "measure_on_chip.sh: status $status"
exit $status
