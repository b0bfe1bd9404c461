#!/usr/bin/env bash
# The durable output measured on the GPU machine in one sitting (lesson 07's README,
# section 7 and "Results"): builds only gray_scott and gs_benchmark, then, in a directory on the
# machine's disk (never tmpfs),
#   1. gs_benchmark --end-to-end DIR --fsync: the program against the disk's own durable write of
#      the same bytes, three ways (write(2) + fsync, writeback per frame + fsync, O_DIRECT);
#   2. gray_scott, the official run, default durability, into a new file, twice;
#   3. gray_scott replacing the previous output, twice;
#   4. after each run, the share of the output left in the page cache (gs_benchmark --resident);
#   5. the same with --no-writeback (the "before"): once into a new file, once replacing;
#   6. rm of the output: what a rename over a previous output frees, by itself.
# Every number goes to $OUT/measure_output-<commit>.csv (device, date, commit on every row); a
# short table is printed last. A step that fails says so, and the others still run. About 6
# minutes on the H100 machine (the build 3-4, the runs 2).
#
#   bash scripts/measure_output.sh
#   GS_OUTPUT_DIR=/data/gs bash scripts/measure_output.sh   # where the outputs go (not tmpfs)
#   GS_BUILD_DIR=/tmp/b GS_COMMIT=abc1234 bash scripts/measure_output.sh
#   GS_IMPL=l06-temporal GS_RUN="-n 1000 -e 32" bash scripts/measure_output.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/gs-measure-logs.XXXXXX")}  # the device tool sets OUT
mkdir -p "$OUT"
# A private build folder unless one is given (never a fixed path another user could plant).
BUILD=${GS_BUILD_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/gs-measure-build.XXXXXX")}
IMPL=${GS_IMPL:-l06-temporal}
RUN=${GS_RUN:-"-n 1000 -e 32"}  # the official run: 1080 x 1920 by default, 1000 frames x 32 steps
read -r -a run_flags <<< "$RUN"
COMMIT=${GS_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
DATE=$(date -u +%Y-%m-%d)
DEVICE=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
DEVICE=${DEVICE:-$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)}
DEVICE=${DEVICE//,/ }
CSV=$OUT/measure_output-$COMMIT.csv
failures=()
step_failed() { echo "measure_output.sh: step failed: $1 (going on)" >&2; failures+=("$1"); }

echo "== $DEVICE, $DATE, commit $COMMIT"
echo "== host: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)," \
  "vm.dirty_background_ratio $(cat /proc/sys/vm/dirty_background_ratio)," \
  "vm.dirty_ratio $(cat /proc/sys/vm/dirty_ratio), kernel $(uname -r)"

# ---- the build: only the two programs (every lesson's steppers, CUDA arch 90)
echo "== build gray_scott gs_benchmark in $BUILD"
export PATH=/usr/local/cuda/bin:$PATH
if ! cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DGS_GIT_COMMIT="$COMMIT" > "$OUT/configure.log" 2>&1; then
  tail -30 "$OUT/configure.log"
  exit 1
fi
build_start=$(date +%s)
if ! cmake --build "$BUILD" -j "$(nproc)" --target gray_scott gs_benchmark > "$OUT/build.log" 2>&1; then
  grep -E "error|Error" "$OUT/build.log" | head -40
  exit 1
fi
echo "   built in $(($(date +%s) - build_start)) s"
GRAY_SCOTT=$BUILD/bin/gray_scott
BENCHMARK=$BUILD/bin/gs_benchmark

# ---- the directory: on the machine's disk, never in memory
DIR=""
for parent in "${GS_OUTPUT_DIR:-}" /var/tmp /tmp "$HOME"; do
  [ -n "$parent" ] || continue
  if [ "$parent" = "${GS_OUTPUT_DIR:-}" ]; then
    candidate=$parent
    mkdir -p "$candidate" 2> /dev/null || continue
  else  # a new private folder, never a fixed name
    candidate=$(mktemp -d "$parent/gs-measure-output.XXXXXX" 2> /dev/null) || continue
  fi
  if [ "$(stat -f -c %T "$candidate")" != tmpfs ]; then
    DIR=$candidate
    break
  fi
  echo "   $candidate is on tmpfs (memory, no disk): not there"
done
if [ -z "$DIR" ]; then
  echo "measure_output.sh: no directory on a disk found; give one with GS_OUTPUT_DIR" >&2
  exit 1
fi
FS=$(findmnt -no FSTYPE -T "$DIR" 2> /dev/null || stat -f -c %T "$DIR")
echo "== outputs in $DIR ($FS, $(df -h --output=avail "$DIR" | tail -1 | tr -d ' ') free)"
rm -f "$DIR"/out.h5 "$DIR"/*.partial-* 2> /dev/null
sync  # the build's own dirty pages go to the disk now, not during the runs

echo "device,date,commit,directory,file_system,step,run,seconds,write_seconds,writeback_wait_seconds,flush_seconds,rename_seconds,disk_wait_seconds,resident_share,writeback,status" > "$CSV"
# What every row starts with, for the Python snippets below (csv quotes what needs quoting).
export GS_ROW_PREFIX="$DEVICE|$DATE|$COMMIT|$DIR|$FS"

# Drops a file's pages from the page cache, as an ordinary user can (clean pages only).
drop_cache() {
  python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.fsync(fd)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
os.close(fd)' "$1" 2> /dev/null || true
}

# The share (0 to 1) of a file in the page cache, from gs_benchmark --resident.
resident_share() {
  "$BENCHMARK" --resident "$1" 2> /dev/null | sed -n 's/.*: \([0-9]*\) of \([0-9]*\) pages.*/\1 \2/p' \
    | awk '{ if ($2 > 0) printf "%.4f", $1 / $2; else print "" }'
}

# One gray_scott run: $1 step, $2 run name, the rest gray_scott's extra flags. Appends a CSV row.
run_gray_scott() {
  local step=$1 name=$2
  shift 2
  local json=$OUT/gray_scott-$step.json log=$OUT/gray_scott-$step.log
  echo "== $name: gray_scott $RUN --impl $IMPL -o $DIR/out.h5 $*"
  local status=ok
  if ! timeout 300 "$GRAY_SCOTT" "${run_flags[@]}" --impl "$IMPL" -o "$DIR/out.h5" --json "$@" > "$json" 2> "$log"; then
    status=failed
    step_failed "$name"
    tail -5 "$log"
  fi
  grep -E "^  (write|writeback|flush|rename|disk) |^total" "$log" | sed 's/^/   /'
  local share=""
  [ -f "$DIR/out.h5" ] && share=$(resident_share "$DIR/out.h5")
  echo "   in the page cache after: ${share:-?}"
  python3 - "$json" "$step" "$name" "$share" "$status" >> "$CSV" << 'EOF' || step_failed "$name (its CSV row)"
import csv, json, os, sys
path, step, name, share, status = sys.argv[1:6]
try:
    with open(path) as file:
        run = json.loads(file.read().strip().splitlines()[-1])
except Exception:
    run = {}
fields = [run.get(key, "") for key in ("seconds", "write_seconds", "writeback_wait_seconds",
                                        "flush_seconds", "rename_seconds", "disk_wait_seconds")]
csv.writer(sys.stdout, lineterminator="\n").writerow(
    os.environ["GS_ROW_PREFIX"].split("|") + [step, name] + fields
    + [share, run.get("writeback", ""), status])
EOF
}

# ---- 1. gs_benchmark --end-to-end --fsync: the program against the disk's own durable write
echo "== 1. gs_benchmark $RUN --impl $IMPL --end-to-end $DIR --fsync"
if timeout 420 "$BENCHMARK" "${run_flags[@]}" --impl "$IMPL" --end-to-end "$DIR" --fsync \
  --markdown "$OUT/end-to-end.md" --csv "$OUT/end-to-end.csv" > "$OUT/end-to-end.out" 2> "$OUT/end-to-end.err"; then
  status=ok
else
  status=failed
  step_failed "gs_benchmark --end-to-end --fsync"
  tail -5 "$OUT/end-to-end.err"
fi
sed 's/^/   /' "$OUT/end-to-end.err" | grep -E "raw write|running" || true
python3 - "$OUT/end-to-end.out" "$IMPL" "$status" >> "$CSV" << 'EOF' || step_failed "gs_benchmark's CSV rows"
import csv, os, sys
path, impl, status = sys.argv[1:4]
out = csv.writer(sys.stdout, lineterminator="\n")
prefix = os.environ["GS_ROW_PREFIX"].split("|")
def row_of(name, seconds="", write="", waiting="", flush="", resident="", state=status):
    out.writerow(prefix + ["1", name, seconds, write, waiting, flush, "", "", resident, "", state])
try:
    lines = open(path).read().splitlines()
except OSError:
    lines = []
def cells(line):
    return [cell.strip() for cell in line.strip().strip("|").split("|")]
def share(text):  # "3 %" -> 0.0300
    try:
        return f"{float(text.split()[0]) / 100:.4f}"
    except (ValueError, IndexError):
        return ""
for row in [cells(line) for line in lines if line.startswith("| ")]:
    if row[0] == impl and len(row) == 12:  # the program's row of the first table
        row_of(f"gs_benchmark --end-to-end --fsync: {impl}", row[1], row[5], row[6].split()[0],
               row[7], share(row[9]))
        row_of("the disk's own durable write (the fastest raw write, mean of before and after)",
               row[10])
        row_of("wall / the disk's own write (a ratio, not seconds)", row[11])
    if row[0] == impl and len(row) == 7:  # a raw write, from the second table
        if row[2].startswith("not measured"):
            row_of(f"raw write: {row[1]}", state=row[2])
            continue
        row_of(f"raw write before: {row[1]}", row[2])
        row_of(f"raw write after: {row[1]}", row[3], resident=share(row[6]))
EOF

# ---- 2. and 3. gray_scott, writeback per frame (the default): new file x2, replacing x2
rm -f "$DIR/out.h5"
run_gray_scott 2a "new file (1)"
rm -f "$DIR/out.h5"  # deleting the file drops its pages too
run_gray_scott 2b "new file (2)"
drop_cache "$DIR/out.h5"
run_gray_scott 3a "replacing (1)"
drop_cache "$DIR/out.h5"
run_gray_scott 3b "replacing (2)"

# ---- 5. the "before": no writeback per frame, everything left to the final fsync
rm -f "$DIR/out.h5"
run_gray_scott 5a "--no-writeback, new file" --no-writeback
drop_cache "$DIR/out.h5"
run_gray_scott 5b "--no-writeback, replacing" --no-writeback

# ---- 6. what deleting the output costs by itself: a rename over it frees as much
echo "== 6. rm of the output (what a rename over it frees)"
rm_start=$(date +%s%N)
rm -f "$DIR/out.h5"
rm_seconds=$(awk -v ns=$(($(date +%s%N) - rm_start)) 'BEGIN { printf "%.3f", ns / 1e9 }')
echo "   rm: $rm_seconds s"
echo "$GS_ROW_PREFIX|6|rm of the output|$rm_seconds||||||||ok" | tr '|' ',' >> "$CSV"

echo
echo "== summary ($DEVICE, $DATE, commit $COMMIT, $DIR on $FS); every number in $CSV"
python3 - "$CSV" << 'EOF' || cat "$CSV"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def number(text, digits=3):
    try:
        return f"{float(text):.{digits}f}"
    except ValueError:
        return "-"
def percent(text):
    try:
        return f"{100 * float(text):.1f} %"
    except ValueError:
        return "-"
print(f"| {'run':<100} | {'s':>7} | {'write':>7} | {'waiting':>7} | {'flush':>7} | {'rename':>7} "
      f"| {'cached':>8} |")
print(f"|{'-' * 102}|{'-' * 8}:|{'-' * 8}:|{'-' * 8}:|{'-' * 8}:|{'-' * 8}:|{'-' * 9}:|")
for row in rows:
    name = row["run"] + ("" if row["status"] == "ok" else f" ({row['status']})")
    print(f"| {name[:100]:<100} | {number(row['seconds']):>7} | {number(row['write_seconds']):>7} | "
          f"{number(row['writeback_wait_seconds']):>7} | {number(row['flush_seconds']):>7} | "
          f"{number(row['rename_seconds']):>7} | {percent(row['resident_share']):>8} |")
EOF
if [ ${#failures[@]} -gt 0 ]; then
  echo "measure_output.sh: ${#failures[@]} step(s) failed: ${failures[*]}"
  exit 1
fi
echo "measure_output.sh: every step ran"
