#!/usr/bin/env bash
# Lesson 08 under Slurm, on this machine alone: starts a one-node Slurm cluster of its own
# (munged, slurmctld, slurmd, everything under a temporary directory, on free ports), then runs
# lesson 08's CPU ranks on a small odd grid (67 x 131, 9 steps a frame, halo 4: slabs of 33 and
# 34 rows, an exchange inside each frame) three ways and compares each output file with a
# one-rank run's, exactly (h5diff without a tolerance: the decomposition is bit-identical):
#   srun --mpi=pmix -n 2 lesson08_solution ...
#   sbatch scripts/slurm/lesson08.sbatch ..., with GS_LAUNCHER=srun and with GS_LAUNCHER=mpirun
# then checks that a job whose program fails (a flag it does not know) fails as a Slurm job, with
# the program's exit code, under both launchers. Every wait has a deadline; the daemons are
# stopped by their pid files at the end, on failure too.
#
#   bash tests/slurm/test_slurm.sh [PROGRAM]   # default: build/bin/lesson08_solution
#
# Needs root (slurmd starts each job as its user; CI runs as root), Slurm and munge (bash
# scripts/setup.sh --slurm), h5diff (hdf5-tools) and a built lesson08_solution; without one of
# them it says which and exits 77 (CTest's skip: the test slurm.lesson08), or 1 when
# GS_SLURM_REQUIRED=1 (CI, where a skip would hide a breakage). Prints "ok"/"FAIL" per check
# and exits 1 on a failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
program=${1:-$root/build/bin/lesson08_solution}
[[ "$program" == /* ]] || program=$PWD/$program  # the jobs run in another directory
job_script=$root/scripts/slurm/lesson08.sbatch
grid=(-r 67 -c 131 -n 3 -e 9 --halo 4 --impl l02-simd-omp --no-fsync)
start=$SECONDS
passed=0 failed=0
pass() { echo "ok   $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; failed=$((failed + 1)); }

skip() {
  if [ "${GS_SLURM_REQUIRED:-0}" = 1 ]; then
    echo "test_slurm.sh: FAIL: cannot run: $* (GS_SLURM_REQUIRED=1: a skip counts as a failure)"
    exit 1
  fi
  echo "test_slurm.sh: skipped: $*"
  exit 77
}

# The daemons live in /usr/sbin, which a user's PATH may leave out.
export PATH="$PATH:/usr/sbin:/sbin"
[ "$(id -u)" = 0 ] || skip "needs root (slurmd starts each job as its user; CI runs as root)"
missing=()
for command in munged munge slurmctld slurmd srun sbatch scontrol sinfo squeue scancel; do
  command -v "$command" > /dev/null 2>&1 || missing+=("$command")
done
[ "${#missing[@]}" = 0 ] || skip "no ${missing[*]}: install Slurm and munge (bash scripts/setup.sh --slurm)"
for command in h5diff h5dump; do
  command -v "$command" > /dev/null 2>&1 || skip "no $command: install hdf5-tools (bash scripts/setup.sh)"
done
command -v mpirun > /dev/null 2>&1 || skip "no mpirun: install openmpi-bin (bash scripts/setup.sh)"
command -v python3 > /dev/null 2>&1 || skip "no python3 (it finds free ports): bash scripts/setup.sh"
[ -x "$program" ] || skip "no lesson 08 program at $program (cmake --build build --target lesson08_solution)"
[ "$(nproc)" -ge 2 ] || skip "needs 2 cores for 2 ranks, this machine has $(nproc)"

# If this runs inside a job of a real cluster, its variables would send srun and sbatch there.
while read -r name; do unset "$name"; done < <(compgen -e | grep -E '^(SLURM|SBATCH|SRUN|SALLOC)_' || true)
# Two ranks on two cores: idle OpenMP threads sleep (lesson 08's README says why). As root,
# Open MPI refuses to start without these two.
export OMP_WAIT_POLICY=passive OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

T=$(mktemp -d "${TMPDIR:-/tmp}/gs-slurm.XXXXXX")
# munged refuses a socket in a directory that not everyone can enter; the key's is private.
chmod 755 "$T"
mkdir -p "$T/munge" "$T/state" "$T/spool" "$T/log" "$T/jobs"
mkdir -m 700 "$T/munge-private"
export SLURM_CONF=$T/slurm.conf  # for srun, sbatch, scontrol...: this cluster, not /etc/slurm's

stop_daemon() {  # stop_daemon PID_FILE: TERM, up to 5 s to exit, then KILL
  local pid
  pid=$(cat "$1" 2> /dev/null) || return 0
  kill "$pid" 2> /dev/null || return 0
  for _ in $(seq 50); do
    kill -0 "$pid" 2> /dev/null || return 0
    sleep 0.1
  done
  kill -9 "$pid" 2> /dev/null || true
}
cleanup() {
  local status=$? job
  if [ -f "$T/slurmctld.pid" ]; then
    # Jobs still queued or running (a check that timed out): cancelled, given a few seconds.
    for job in $(timeout 5 squeue -h -o %i 2> /dev/null || true); do
      timeout 5 scancel "$job" 2> /dev/null || true
    done
    for _ in $(seq 20); do
      [ -z "$(timeout 5 squeue -h -o %i 2> /dev/null || true)" ] && break
      sleep 0.25
    done
  fi
  stop_daemon "$T/slurmd.pid"
  stop_daemon "$T/slurmctld.pid"
  stop_daemon "$T/munge/munged.pid"
  if [ "$status" != 0 ] && [ "$status" != 77 ]; then
    for log in "$T"/log/*.log "$T"/munge-private/munged.log; do
      [ -f "$log" ] && { echo "--- last lines of $log"; tail -n 15 "$log"; }
    done
  fi
  rm -rf "$T"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wait_until() {  # wait_until SECONDS WHAT COMMAND...: run COMMAND until it succeeds, or give up
  local deadline=$((SECONDS + $1)) seconds=$1 what=$2
  shift 2
  until "$@" > /dev/null 2>&1; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "test_slurm.sh: FAIL: $what, not within $seconds s"
      return 1
    fi
    sleep 0.2
  done
}

# munge signs Slurm's messages. A munged of our own (its own key, socket, pid and log files),
# as root, so that the system's munge (/etc/munge, /run/munge) is neither needed nor touched, and
# two runs of this test do not share one.
head -c 128 /dev/urandom > "$T/munge-private/munge.key"
chmod 600 "$T/munge-private/munge.key"
timeout 30 munged --socket="$T/munge/munge.socket" --key-file="$T/munge-private/munge.key" \
  --pid-file="$T/munge/munged.pid" --log-file="$T/munge-private/munged.log" \
  --seed-file="$T/munge-private/munged.seed" \
  || { echo "test_slurm.sh: FAIL: munged did not start"; exit 1; }
wait_until 10 "munged answering" munge --socket="$T/munge/munge.socket" --no-input

# Two ports nobody listens on (a system Slurm, or another run of this test, may hold 6817/6818).
read -r controller_port node_port < <(python3 -c 'import socket
sockets = [socket.socket() for _ in range(2)]
for s in sockets: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in sockets))')
host=$(hostname -s)
# The node as slurmd sees it (CPUs, sockets, cores, memory), so that it is not refused for a
# mismatch; it talks on the loopback address, whatever the host name resolves to.
node=$(timeout 30 slurmd -C | head -n 1)
# Two stand-in GPUs: gres/gpu wants one device file per GPU, and /dev/null and /dev/zero are
# files every machine has. No job opens them (TaskPlugin=task/none confines no device); they
# let the job script's `--gpus-per-node=2` be granted as on a GPU node, with Slurm setting
# CUDA_VISIBLE_DEVICES=0,1 for each rank.
cat > "$T/gres.conf" << EOF
NodeName=$host Name=gpu File=/dev/null
NodeName=$host Name=gpu File=/dev/zero
EOF
# proctrack/linuxproc and task/none: no cgroups (a container may offer none); SlurmUser=root:
# the controller runs as root, as this test does.
cat > "$SLURM_CONF" << EOF
ClusterName=gs-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$controller_port
SlurmdPort=$node_port
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge/munge.socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerParameters=batch_sched_delay=0
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
GresTypes=gpu
$node NodeAddr=127.0.0.1 Gres=gpu:2
PartitionName=test Nodes=$host Default=YES MaxTime=10 State=UP
EOF
timeout 30 slurmctld || { echo "test_slurm.sh: FAIL: slurmctld did not start"; exit 1; }
wait_until 20 "slurmctld answering" scontrol ping
timeout 30 slurmd || { echo "test_slurm.sh: FAIL: slurmd did not start"; exit 1; }
node_idle() { [ "$(timeout 5 sinfo -h -N -n "$host" -o %t)" = idle ]; }
if ! wait_until 30 "node $host idle" node_idle; then
  echo "its state: $(timeout 5 sinfo -h -N -o '%t, reason: %E' 2>&1 || true)"
  exit 1
fi
if timeout 10 srun --mpi=list 2>&1 | grep -q pmix; then
  pass "a one-node cluster of our own: node $host idle, srun offers pmix ($((SECONDS - start)) s)"
else
  fail "srun --mpi=list offers no pmix: $(timeout 10 srun --mpi=list 2>&1 | tr '\n' ' ')"
  exit 1
fi

# The one-rank run every output is compared with, no Slurm involved (MPI's singleton mode).
if ! timeout 60 "$program" "${grid[@]}" -o "$T/one-rank.h5" > "$T/one-rank.log" 2>&1; then
  cat "$T/one-rank.log"
  fail "the one-rank run failed"
  exit 1
fi

# same_as_one_rank NAME FILE: FILE holds what the one-rank run wrote, value for value, and was
# written by two ranks. The `implementation` attribute differs by design (l08-slabs(...)x1 or
# x2), so the attributes of /matrix are left out of the comparison and that one is read instead.
same_as_one_rank() {
  local name=$1 file=$2 differences implementation
  if [ ! -f "$file" ]; then
    fail "$name: no output file $file"
    return
  fi
  if ! differences=$(h5diff --exclude-attribute /matrix "$T/one-rank.h5" "$file" 2>&1); then
    fail "$name: the output differs from one rank's: $(head -n 5 <<< "$differences")"
    return
  fi
  implementation=$(h5dump -a /matrix/implementation "$file" | grep -o '"l08-[^"]*"' || true)
  if [[ "$implementation" != *")x2\"" ]]; then
    fail "$name: written by $implementation, not by 2 ranks"
    return
  fi
  pass "$name: output identical to one rank's (h5diff, no tolerance), written by $implementation"
}

# srun alone: Slurm allocates and starts the two ranks, PMIx connects them.
if timeout 120 srun --mpi=pmix -n 2 --time=2 "$program" "${grid[@]}" -o "$T/srun.h5" \
     > "$T/srun.log" 2>&1; then
  same_as_one_rank "srun --mpi=pmix -n 2" "$T/srun.h5"
else
  fail "srun --mpi=pmix -n 2 failed (exit $?): $(tail -n 5 "$T/srun.log")"
fi

# job_end ID SECONDS: waits for the job to end and prints "STATE EXIT_CODE" (FAILED 2:0), or
# "TIMEOUT" after cancelling it. scontrol keeps an ended job for MinJobAge (300 s by default).
job_end() {
  local id=$1 deadline=$((SECONDS + $2)) line state
  while :; do
    line=$(timeout 5 scontrol show job -o "$id" 2> /dev/null || true)
    state=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<< "$line")
    case "$state" in
      PENDING | CONFIGURING | RUNNING | COMPLETING | "") ;;
      *)
        echo "$state $(sed -n 's/.* ExitCode=\([0-9:]*\).*/\1/p' <<< "$line")"
        return
        ;;
    esac
    if [ "$SECONDS" -ge "$deadline" ]; then
      timeout 5 scancel "$id" || true
      echo TIMEOUT
      return
    fi
    sleep 0.3
  done
}
# submit LAUNCHER NAME ARGS...: the job script as a user submits it, with the launcher chosen by
# GS_LAUNCHER; only what this 2-core machine needs differs from its directives: one core a
# rank, and files here. Prints the job's number.
submit() {
  local launcher=$1 name=$2
  shift 2
  GS_LAUNCHER=$launcher GS_PROGRAM=$program timeout 30 sbatch --parsable --chdir="$T" \
    --cpus-per-task=1 --time=2 --job-name="$name" --output="$T/jobs/$name.out" \
    "$job_script" "$@"
}

for launcher in srun mpirun; do
  name="sbatch-$launcher"
  if ! id=$(submit "$launcher" "$name" "${grid[@]}" -o "$T/$name.h5"); then
    fail "$name: sbatch refused the job script"
    continue
  fi
  end=$(job_end "$id" 90)
  if [ "$end" != "COMPLETED 0:0" ]; then
    fail "$name: job $id ended $end: $(tail -n 8 "$T/jobs/$name.out" 2> /dev/null)"
    continue
  fi
  # The launcher's view of each rank, and the program's own line for the second rank.
  if [ "$launcher" = srun ]; then mapping="task 1 on $host: SLURM_LOCALID 1, CUDA_VISIBLE_DEVICES 0,1"
  else mapping="rank 1 on $host: local rank 1, CUDA_VISIBLE_DEVICES 0,1"; fi
  if grep -qF "$mapping" "$T/jobs/$name.out" && grep -qF "rank 1 of 2 on $host" "$T/jobs/$name.out"; then
    pass "$name: job $id completed; its output shows '$mapping' and 'rank 1 of 2 on $host'"
  else
    fail "$name: job $id's output lacks '$mapping' or 'rank 1 of 2': $(head -n 6 "$T/jobs/$name.out")"
  fi
  same_as_one_rank "$name" "$T/$name.h5"
done

# A program that fails fails its job: lesson08_solution exits 2 for a flag it does not know, the
# launcher passes that on, the script stops there (set -e), and Slurm records FAILED, 2.
for launcher in srun mpirun; do
  name="sbatch-$launcher-bad-flag"
  if ! id=$(submit "$launcher" "$name" "${grid[@]}" --no-such-flag); then
    fail "$name: sbatch refused the job script"
    continue
  fi
  end=$(job_end "$id" 90)
  if [ "$end" = "FAILED 2:0" ] && grep -q -- "--no-such-flag" "$T/jobs/$name.out"; then
    pass "$name: job $id FAILED with exit code 2, its output names the flag"
  else
    fail "$name: job $id ended '$end', expected 'FAILED 2:0': $(tail -n 5 "$T/jobs/$name.out" 2> /dev/null)"
  fi
done

echo "$passed passed, $failed failed ($((SECONDS - start)) s)"
[ "$failed" = 0 ]
