#!/usr/bin/env bash
# Re-draws every data chart of the course from the measurements in docs/data/ into docs/figures/,
# so that a re-measured table re-draws its charts: edit or replace the CSV, run this, commit both.
# The charts are deterministic (tools/README.md): on unchanged data this leaves git clean.
#
#   bash tools/make_figures.sh            # every chart
#   PYTHON=python3 bash tools/make_figures.sh   # another Python that has matplotlib
#
# Not drawn here, because they are not charts of a table: the hand-written SVG diagrams of
# docs/figures/ (sources themselves), docs/figures/sweep.png (gs_sweep's map, lesson 09, made on
# a GPU) and the animation of the official run (gs_render; docs/figures/README.md says how).
set -euo pipefail
cd "$(dirname "$0")/.."

# The Python that draws them: $PYTHON, else the system's (Debian's and Ubuntu's
# python3-matplotlib, so the committed charts come out byte for byte), else python3 on PATH if it
# has matplotlib; scripts/python.sh chooses, or says what to install (exit 2).
PYTHON=$(bash scripts/python.sh --print tools/charts.py) || exit 2
charts() { "$PYTHON" tools/charts.py "$@"; }

data=docs/data
out=docs/figures
# The H100 sitting of commit be67a77: the ladder, its peers, the bandwidths of the same run.
ladder=$data/ladder-h100-be67a77.csv
peers=$data/peers-h100-be67a77.csv
bandwidth=$data/bandwidth-h100-be67a77.csv

# Lesson 11's rung: the lean kernel, measured later on an H200 (2026-11-28, commit b411b01, beside
# l06-temporal at 0.140-0.144 s in the same runs, against 0.148 s on this ladder's H100): its row
# alone (the first kernel's H100 row, 0.211 s at e9b4e0d, is ladder-h100-l11-e9b4e0d.csv).
on_chip=$data/ladder-h200-l11-b411b01.csv

# The ladder (top README, lesson 06, the introduction): every rung and peer of one sitting, and
# lesson 11's; the launch-shape variants of lessons 04 and 05 have charts or tables of their own.
charts ladder "$ladder" "$on_chip" "$peers" --exclude 'l04-generic-*' --exclude 'l05-tiled-*' \
  -o $out/ladder.svg
# The same for a slide: each lesson's best rung (and lesson 01's naive start) with the peers.
charts ladder "$ladder" "$on_chip" "$peers" --exclude 'l04-generic-*' --exclude 'l05-tiled-*' \
  --exclude reference --exclude l01-naive-alloc --exclude l02-scalar-soa \
  --exclude l02-explicit-simd --exclude l02-blocked-omp --exclude l03-copy-every-step \
  --exclude l04-checked-32x8 --exclude l06-fused --exclude l06-temporal-launches \
  -o $out/ladder-best.svg

# The roofline (introduction, lesson 06). 20 FLOP per cell-update, counted in lesson 06's code
# as its README does (section 1): the 3x3 box sums of u and v, 7 adds (per field 2 vertical and,
# the pair sums being shared, 1.5 horizontal); nine_term_update, 3 multiplies (u v, u v v,
# dt u v v) and 5 FMAs (an FMA counts 2), its cell-count coefficients being constant inside the
# grid. Bytes per cell-update are the model's: u and v read and written once per trip to memory,
# 16 B for one step per launch, 16 B / 4 for lesson 06's four steps per launch.
charts roofline "$ladder" --bandwidth "$bandwidth" \
  --peak-tflops 67 --peak-label "H100 SXM datasheet" --flop-per-cell 20 \
  --point l03-fused=16 --point l04-generic=16 --point l05-tiled=16 --point l06-fused-graph=16 \
  --point l06-temporal=4 \
  --title "The roofline of the course's H100: each lesson's best kernel" \
  --step-label "4 steps per launch: ¼ of the bytes" \
  --note "20 FLOP per cell-update, counted in lesson 06's code (its README, section 1): 7 adds for the box sums of u and v, 3 multiplies, 5 FMAs (2 FLOP each)." \
  --note "FP32 roof: NVIDIA H100 Tensor Core GPU datasheet, H100 SXM: 67 TFLOPS FP32 (= 132 SMs × 128 lanes × 2 FLOP × 1.98 GHz)." \
  -o $out/roofline.svg

# Lesson 02: threads on the H100 machine's 16-core host.
charts threads $data/threads-h100-host-f795f4d-c45ac36.csv \
  --title "Lesson 02 on 16 cores: threads help, far from linearly" \
  --note "l02-simd, l02-simd-omp; official size, compute only; H100 machine's host (16-core Intel Xeon), 2026-11-22
bars, not a curve: three thread counts from separate runs are too few points for a line; ~ = extrapolated" \
  -o $out/threads-h100-host.svg

# Lesson 04: the launch shapes, as shares of the copy bandwidth of the same sitting.
charts shapes "$ladder" --bandwidth "$bandwidth" --impl 'l04-*' \
  --label "l04-generic=l04-generic (64x2-4rows, timed again)" \
  --label "l04-checked-32x8=l04-checked-32x8 (a check per neighbour)" \
  --title "Lesson 04's launch shapes on the H100" \
  --note "gs_benchmark -n 1000 -e 32 --max-seconds 5, official size, compute only" \
  -o $out/block-sweep.svg

# Lessons 03 and 07: what crossing PCIe costs against staying in device memory.
charts transfers "$bandwidth" \
  --title "The toll booth, measured: PCIe against the H100's own memory" \
  --note "NVIDIA H100 80GB HBM3 and its 16-thread Intel Xeon host, 2026-11-23, commit be67a77; gray_scott --device:
medians of 64 MiB copies (the device copy: 256 MiB, counted read + write, so its frame time counts both)" \
  -o $out/transfers.svg

# Lesson 07: timelines of the official run (--timeline files).
charts timeline $data/timeline-no-overlap-h100-be67a77.csv --frames 12 \
  --label "before: --no-overlap, the computing thread copies and writes" \
  --title "The official run on the H100: a frame's compute, copy and write" \
  --note "gray_scott --no-overlap --no-fsync --timeline, l06-temporal, 1080 × 1920; NVIDIA H100 80GB HBM3, 2026-11-23, commit be67a77" \
  -o $out/timeline-no-overlap.svg
charts timeline $data/timeline-no-overlap-h100-be67a77.csv $data/timeline-overlap-h100-4836074.csv \
  --frames 12 --label "before: --no-overlap (be67a77)" \
  --label "after: pipelined, 4 slots, one writer thread (4836074)" \
  --title "The official run on the H100, before and after" \
  --note "gray_scott [--no-overlap] --no-fsync --timeline, l06-temporal, 1080 × 1920; NVIDIA H100 80GB HBM3, 2026-11-23, two sittings: commits be67a77 and 4836074" \
  -o $out/timeline-h100.svg
charts timeline $data/timeline-cpu-no-overlap-2core-09b7902.csv \
  $data/timeline-cpu-overlap-2core-09b7902.csv --frames 12 \
  --label "before: --no-overlap" --label "after: pipelined, 4 slots, one writer thread" \
  --title "On the 2-core CPU machine: the writes move under the compute" \
  --note "gray_scott -r 540 -c 960 -n 200 -e 4 --no-fsync, OMP_WAIT_POLICY=passive; shared 2-core AMD EPYC VM, 2026-11-23, commit 09b7902" \
  -o $out/timeline-cpu.svg


# Lesson 08's scaling on two and four H200s (its README, "Results"): the peer exchange, --halo 32,
# each frame waited for and frames queued, NCCL dotted (the same sitting), beside the predictions.
charts scaling $data/scaling-h200x4-peer-446143d.csv --exchange peer --compare nccl \
  --title "Lesson 08: several GPUs, peer to peer, --halo 32" \
  --note "H200 x 4 (NV18), 2026-11-28, commit 446143d; l06-temporal on every rank; NCCL dotted" \
  -o $out/scaling.svg

# What a call costs from Python (lesson 10's Results): call_cost.py's table of the H100 sitting.
charts calls $data/lesson10-call-cost-h100-575ff0b.csv --title "Lesson 10: what a call costs" \
  --note "official grid, l06-temporal; NVIDIA H100 80GB HBM3, 2026-11-25, commit 575ff0b" \
  -o $out/call-cost.svg

echo "make_figures.sh: every chart drawn from $data/ into $out/"
