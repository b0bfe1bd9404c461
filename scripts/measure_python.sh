#!/usr/bin/env bash
# Lesson 10's measurements, the numbers of its README's "Results": on a GPU machine, with the
# module built (cmake --build BUILD --target grayscott gs_benchmark lesson10_solution).
#  1. the official run (1080 x 1920, 1000 frames x 32 steps, compute only) from C++
#     (gs_benchmark --impl l06-temporal) and from Python through the module
#     (benchmarks/peers/grayscott_module.py), alternately, three times each;
#  2. the JAX peer (jax_3x3.py) and the school's CuPy and JAX scripts with their hot loop swapped;
#  3. the cost of a call against the steps per call (call_cost.py, gs_benchmark -e k beside);
#  4. the bytes copied for each path (zero_copy.py, with PyTorch's profiler as a witness).
#
#   bash scripts/measure_python.sh build results/
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: measure_python.sh BUILD_DIR [OUT_DIR]}
out=${2:-lesson10-results}
mkdir -p "$out"
python=$build/bin/lesson10_solution
official=$out/lesson10-official.csv
status=0
run() { echo "== $*"; "$@" || { echo "FAILED ($?): $*"; status=1; }; }

echo "== $(date -u +%Y-%m-%dT%H:%MZ), commit ${GS_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
for round in 1 2 3; do
  run "$build/bin/gs_benchmark" --impl l06-temporal -n 1000 -e 32 --csv "$official"
  run "$python" benchmarks/peers/grayscott_module.py --no-output --csv "$official"
done
run "$python" benchmarks/peers/jax_3x3.py --no-output --csv "$official"
run "$python" benchmarks/peers/school_cupy.py --no-output --csv "$official"
run "$python" benchmarks/peers/school_jax.py --no-output --csv "$official"
run "$python" benchmarks/peers/cupy_slices.py --no-output --max-seconds 10 --csv "$official"
run "$python" benchmarks/module/call_cost.py --gs-benchmark "$build/bin/gs_benchmark" \
  --csv "$out/lesson10-call-cost.csv"
run "$python" benchmarks/module/zero_copy.py
echo "== the official run, compute only"
cat "$official"
exit $status
