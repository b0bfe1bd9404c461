#!/usr/bin/env bash
# Lesson 08's scaling on the GPUs of one machine, in one sitting: lesson 08's tests, a
# compute-sanitizer run of two ranks, then `lesson08_solution benchmark` (each row times one
# GPU and all ranks in the same run) for strong and weak scaling, each exchange (peer to peer,
# NCCL between the steps, NCCL edge first, MPI through pinned host memory; GS_EXCHANGES="peer
# nccl" for some), with the exchange alone on its own line, the halo depths, mpirun's default
# binding against --bind-to none, NCCL's network path (sockets), ten runs in a row, and the
# official run end to end with its output on each rank count against gray_scott on one GPU. Rows go to
# $OUT/scaling.csv (the benchmark's CSV), logs to $OUT.
#
#   bash scripts/measure_scaling.sh                 # every GPU of the machine
#   GS_GPUS="1 2" bash scripts/measure_scaling.sh   # these rank counts
#   GS_BUILD_DIR=/tmp/b bash scripts/measure_scaling.sh   # build into this folder (kept; the
#                                   # build is brought up to this tree's commit first)
#   GS_PARTS="tests bench" ...   # of: tests sanitize bench halo binding socket repeat end2end sweep
set -uo pipefail
OUT=${OUT:-$PWD/scaling-logs}
mkdir -p "$OUT"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$gpus" -ge 1 ] || { echo "measure_scaling.sh: no GPU (nvidia-smi -L lists none)" >&2; exit 1; }
RANKS=${GS_GPUS:-$(seq -s ' ' 2 "$gpus" | tr ' ' '\n' | awk '$1==2||$1==4||$1==8' | tr '\n' ' ')}
PARTS=${GS_PARTS:-tests sanitize bench halo binding socket repeat end2end sweep}
# What it runs is built here, from this tree, every time (incremental in a folder given): never a
# program found at a fixed path, which another user could have planted or an older commit left.
# Its files (HDF5 outputs) go to a private temporary folder, removed at the end.
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/gs-scaling.XXXXXX") || exit 1
if [ -n "${GS_BUILD_DIR:-}" ]; then
  BUILD=$GS_BUILD_DIR
else
  BUILD=$SCRATCH/build
fi
trap 'rm -rf "$SCRATCH"' EXIT
FRAMES=${GS_FRAMES:-1000}
COMMIT=${GS_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
has() { [[ " $PARTS " == *" $1 "* ]]; }
status=0

echo "== $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) x $gpus, commit $COMMIT, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores"
nvidia-smi topo -m 2>/dev/null | head -$((gpus + 1)) | cut -c1-60
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DGS_GIT_COMMIT="$COMMIT" > "$OUT/configure.log" 2>&1 || { tail -20 "$OUT/configure.log"; exit 1; }
cmake --build "$BUILD" -j "$(nproc)" > "$OUT/build.log" 2>&1 \
  || { grep -E "error" "$OUT/build.log" | head -30; exit 1; }
L08="$BUILD/bin/lesson08_solution"
CSV="$OUT/scaling.csv"

if has tests; then
  echo "== lesson 08's tests (CPU and GPU)"
  ctest --test-dir "$BUILD" -L lesson08 -LE exercise -j 2 --timeout 300 --output-on-failure \
    > "$OUT/lesson08-tests.log" 2>&1 || status=1
  grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Skipped" "$OUT/lesson08-tests.log" | head -20
  # A part that ran no test did not pass.
  if ! grep -Eq "tests passed, [0-9]+ tests failed out of [1-9]" "$OUT/lesson08-tests.log"; then
    echo "measure_scaling.sh: lesson 08's tests: none ran"
    status=1
  fi
  echo "== $((gpus + 1)) ranks on $gpus GPUs through NCCL (a rank with two neighbours; NCCL may refuse two ranks on one GPU)"
  timeout 120 mpirun --bind-to none -np $((gpus + 1)) "$L08" -r 67 -c 131 -n 3 -e 9 --halo 4 \
    -o "$SCRATCH/interior.h5" --no-fsync 2>&1 | grep -E "slabs|error|Error|total" | head -5 | cut -c1-200
fi

if has sanitize; then
  echo "== compute-sanitizer memcheck and synccheck, $gpus ranks with NCCL, between the steps, then edge first"
  for tool in memcheck synccheck; do
    for mode in "" "--edge-first"; do
      log="$OUT/sanitizer-$tool${mode:+-edge-first}.log"
      timeout 300 mpirun --bind-to none -np "$gpus" compute-sanitizer --tool "$tool" \
        --error-exitcode 99 "$L08" -r 67 -c 131 -n 3 -e 9 --halo 4 --no-output $mode > "$log" 2>&1
      rc=$?
      # NCCL's own set-up makes CUDA calls that fail by design for kernels built for other GPUs
      # (cudaFuncGetAttributes: no kernel image): listed, not counted (as cmake/GsSanitize.cmake).
      other=$(grep -E "Program hit|Invalid|Race|Barrier" "$log" | grep -vc "cudaErrorNoKernelImageForDevice")
      echo "$tool ${mode:-between the steps}: rc $rc, $(grep -E 'ERROR SUMMARY' "$log" | sort | uniq -c | tr -s ' ' | tr '\n' ';') errors other than NCCL's no-kernel-image probes: $other"
      [ "$other" = 0 ] || status=1
    done
  done
fi

# One benchmark row: ranks, then the program's arguments. Prints the row or why not.
row() {
  local ranks=$1 bind=$2
  shift 2
  local log="$OUT/row.log"
  if timeout 120 mpirun $bind -np "$ranks" "$L08" benchmark --csv "$CSV" "$@" > "$log" 2>&1; then
    grep -oE "\| l0.*%" "$log" | tail -1
    grep -E "^set-up|^exchange alone|refused" "$log" | sed 's/^/    /'
  else
    echo "NO ROW (rc $?): $ranks ranks $bind $*"; tail -5 "$log" | sed 's/^/    /'
    status=1
  fi
}

if has bench; then
  echo "== scaling ($FRAMES frames x 32 steps, --bind-to none)"
  echo "| implementation | scaling | ranks | grid | halo | exchange | one device s | all ranks s | efficiency |"
  for p in $RANKS; do
    for wait in "" "--frames-queued"; do
      for name in ${GS_EXCHANGES:-peer nccl edge-first mpi}; do
        case $name in edge-first) exchange=--edge-first ;; *) exchange="--transport $name" ;; esac
        row "$p" "--bind-to none" -r 1080 -c 1920 -n "$FRAMES" -e 32 $exchange $wait
        row "$p" "--bind-to none" -r 2160 -c 3840 -n "$((FRAMES / 4))" -e 32 $exchange $wait
        row "$p" "--bind-to none" -r 1080 -c 1920 -n "$FRAMES" -e 32 --weak $exchange $wait
      done
    done
  done
fi

if has halo; then
  echo "== the halo's depth (strong 1080 x 1920, $gpus ranks)"
  for halo in 4 8 16 32 64; do
    for exchange in "" "--edge-first"; do
      row "$gpus" "--bind-to none" -r 1080 -c 1920 -n "$FRAMES" -e 32 --halo $halo $exchange
      row "$gpus" "--bind-to none" -r 1080 -c 1920 -n "$FRAMES" -e 32 --halo $halo $exchange \
        --frames-queued
    done
  done
fi

if has binding; then
  echo "== mpirun's default binding (one core per rank for two ranks) against --bind-to none"
  for bind in "" "--bind-to none"; do
    row "$gpus" "$bind" -r 2160 -c 3840 -n 200 -e 32
    grep -E "^warning" "$OUT/row.log" | cut -c1-120 | sed 's/^/    /'
  done
fi

if has socket; then
  echo "== NCCL's network path between the ranks (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1: sockets)"
  for exchange in "" "--edge-first"; do
    row "$gpus" "--bind-to none -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1" \
      -r 1080 -c 1920 -n "$FRAMES" -e 32 $exchange
    row "$gpus" "--bind-to none -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1" \
      -r 1080 -c 1920 -n "$FRAMES" -e 32 --weak $exchange
  done
  NCCL_DEBUG=INFO NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 timeout 60 mpirun --bind-to none \
    -x NCCL_DEBUG -x NCCL_P2P_DISABLE -x NCCL_SHM_DISABLE -np 2 "$L08" exchange-check \
    -r 64 -c 64 --halo 4 2>&1 | grep -E "via|NET/" | head -4 | cut -c1-140
fi

if has repeat; then
  echo "== ten runs in a row (strong 1080 x 1920, $gpus ranks, 200 frames): each must print its row"
  printed=0
  for i in $(seq 10); do
    if timeout 60 mpirun --bind-to none -np "$gpus" "$L08" benchmark -r 1080 -c 1920 -n 200 -e 32 \
      > "$OUT/repeat-$i.log" 2>&1 && grep -q "^| l0.*%" "$OUT/repeat-$i.log"; then
      printed=$((printed + 1))
    else
      echo "run $i: no row"; tail -3 "$OUT/repeat-$i.log"
    fi
  done
  echo "$printed of 10 printed their row"
  [ "$printed" = 10 ] || status=1
fi

if has end2end; then
  echo "== the official run end to end with its output (durable: fsync, rename): gray_scott on one GPU, lesson 08 on $RANKS"
  dir=$(mktemp -d "$SCRATCH/e2e.XXXXXX")
  for i in 1 2; do
    /usr/bin/time -f "gray_scott (1 GPU): %e s wall" "$BUILD/bin/gray_scott" -o "$dir/one.h5" \
      2> "$OUT/e2e-one-$i.log" > "$OUT/e2e-one-$i.out"
    tail -1 "$OUT/e2e-one-$i.log"; grep -E "^total|^compute|^output" "$OUT/e2e-one-$i.out" | sed 's/^/    /'
    rm -f "$dir/one.h5"
    for p in $RANKS; do
      /usr/bin/time -f "lesson08 ($p GPUs): %e s wall" mpirun --bind-to none -np "$p" "$L08" \
        -o "$dir/all.h5" 2> "$OUT/e2e-$p-$i.log" > "$OUT/e2e-$p-$i.out"
      tail -1 "$OUT/e2e-$p-$i.log"
      grep -E "^total|^compute|^output|^before its clock" "$OUT/e2e-$p-$i.out" | sed 's/^/    /'
      grep -E "^set-up" "$OUT/e2e-$p-$i.log" | sed 's/^/    /'
      rm -f "$dir/all.h5"
    done
  done
  rm -rf "$dir"
fi
if has sweep; then
  echo "== gs_sweep: one GPU against all, members per second (the benchmark times both)"
  timeout 300 "$BUILD/bin/gs_sweep" benchmark --csv "$OUT/sweep.csv" --markdown "$OUT/sweep.md" \
    > "$OUT/sweep.log" 2>&1 || { status=1; tail -5 "$OUT/sweep.log"; }
  tail -4 "$OUT/sweep.log"
  for g in 1 $gpus; do
    /usr/bin/time -f "gs_sweep --gpus $g: %e s wall" "$BUILD/bin/gs_sweep" --no-fsync --gpus $g \
      -o "$SCRATCH/sweep-$g.h5" > "$OUT/sweep-run-$g.log" 2>&1 || status=1
    tail -1 "$OUT/sweep-run-$g.log"
  done
  echo "== lesson 09's multi-GPU tests"
  "$BUILD/bin/test_lesson09_solution" --gtest_filter='ProgramMultiGpu.*:MemberSplit.*:ShareThreads.*' \
    > "$OUT/sweep-tests.log" 2>&1 || status=1
  grep -E "PASSED|FAILED|SKIPPED" "$OUT/sweep-tests.log" | head -12
fi
# Everything in one file (the device tool brings back few files).
tar -czf "$OUT/../scaling-logs.tgz" -C "$OUT" . 2>/dev/null && mv "$OUT/../scaling-logs.tgz" "$OUT/" 2>/dev/null
echo "measure_scaling.sh: status $status"
exit $status
