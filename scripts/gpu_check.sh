#!/usr/bin/env bash
# The GPU machine's one call: configure, build, run every GPU test through CTest (solutions
# pass, also under a T4's and a GTX 1650's limits, GS_DEVICE_LIMITS, label small-gpu; each
# shipped exercise fails its suite; compute-sanitizer memcheck, racecheck and synccheck on every
# GPU solution), then the benchmark. Logs go to $OUT (the device tool's folder) or
# ./gpu-logs; the last lines printed are the summary.
#
#   bash scripts/gpu_check.sh                          # everything
#   GS_LESSONS="04 06" bash scripts/gpu_check.sh       # only these lessons' tests
#   GS_BENCH="-n 1000 -e 32" bash scripts/gpu_check.sh # benchmark arguments ("" skips it)
#   GS_SANITIZE=0 bash scripts/gpu_check.sh            # no compute-sanitizer
#   GS_SMALL_GPUS=0 bash scripts/gpu_check.sh          # not again under smaller cards' limits
#   GS_COMMIT=abc1234 bash scripts/gpu_check.sh        # the commit to name where .git did not travel
set -uo pipefail
OUT=${OUT:-$PWD/gpu-logs}
mkdir -p "$OUT"
# A fresh build folder each call by default: objects left by an earlier copy of the tree are
# never reused by mistake.
BUILD=${GS_BUILD_DIR:-$(mktemp -d /tmp/gs-build.XXXXXX)}
BENCH=${GS_BENCH-"-n 1000 -e 32 --max-seconds 20"}
SANITIZE=${GS_SANITIZE:-1}
SMALL_GPUS=${GS_SMALL_GPUS:-1}
status=0

echo "== device"; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader
COMMIT=${GS_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
echo "== commit $COMMIT"
echo "== date $(date -u +%Y-%m-%dT%H:%MZ)"

echo "== build"
# Lesson 10's module is built for the Python that has the GPU array libraries (CuPy, PyTorch,
# JAX): GS_PYTHON, else the python3 on PATH when it has pybind11 (a virtual environment's pip
# pybind11 gives its CMake folder); dlpack.h then comes from that Python's CuPy or PyTorch.
python_args=()
PY=${GS_PYTHON:-$(command -v python3 || true)}
if [ -n "$PY" ] && pybind11_dir=$("$PY" -m pybind11 --cmakedir 2>/dev/null); then
  python_args=(-DPython_EXECUTABLE="$PY" -Dpybind11_DIR="$pybind11_dir")
fi
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DGS_GIT_COMMIT="$COMMIT" "${python_args[@]}" > "$OUT/configure.log" 2>&1 \
  || { tail -30 "$OUT/configure.log"; exit 1; }
grep -E "lessons built|skipped|GPU code for|Python" "$OUT/configure.log" | sed 's/^-- *//' | head -8
cmake --build "$BUILD" -j "$(nproc)" > "$OUT/build.log" 2>&1 \
  || { grep -E "error|Error" "$OUT/build.log" | head -40; exit 1; }

# The lessons' GPU tests: -L gpu, without the shipped exercises' individual results (they fail,
# as they must; the selftest lessonNN.exercise_fails checks exactly that).
labels=gpu
if [ -n "${GS_LESSONS:-}" ]; then labels="lesson($(echo $GS_LESSONS | tr ' ' '|'))"; fi
exclude='^exercise$'
[ "$SANITIZE" = 1 ] || exclude="$exclude|^sanitizer\$"
[ "$SMALL_GPUS" = 1 ] || exclude="$exclude|^small-gpu\$"
echo "== ctest -L '$labels' -LE '$exclude' (solutions, smaller cards, exercise_fails, sanitizers)"
ctest --test-dir "$BUILD" -L "$labels" -LE "$exclude" -j 4 --timeout 1800 --output-on-failure \
  --output-junit "$OUT/gpu-junit.xml" > "$OUT/ctest.log" 2>&1 || status=1
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run" "$OUT/ctest.log" | head -30
echo "== the selftests and sanitizers, one line each"
grep -E "exercise_fails|sanitizer\." "$OUT/ctest.log" | grep -E "Test +#" | sed 's/  */ /g' | head -40
echo "== the suites under smaller cards' limits (GS_DEVICE_LIMITS), one line each"
grep -E "\.solution\.(t4|gtx1650|shared24k) " "$OUT/ctest.log" | grep -E "Test +#" | sed 's/  */ /g' | head -20

if [ -n "$BENCH" ]; then
  echo "== benchmark: gs_benchmark $BENCH"
  "$BUILD/bin/gs_benchmark" $BENCH --markdown "$OUT/benchmark.md" --csv "$OUT/benchmark.csv" \
    2> "$OUT/benchmark.err" || status=1
  # A hot GPU slows its clocks by itself: say so next to the numbers (a slowdown marked Active
  # here means the table above was measured on a throttled GPU).
  echo "== after the benchmark: temperature, clock and slowdown reasons"
  nvidia-smi --query-gpu=temperature.gpu,clocks.sm,power.draw --format=csv,noheader
  nvidia-smi -q -d PERFORMANCE | grep -E 'Slowdown|Power Cap|Brak' | grep -v ': 0 us' | sed 's/^ *//'
fi
echo "gpu_check.sh: build in $BUILD; status $status"
exit $status
