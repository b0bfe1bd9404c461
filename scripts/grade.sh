#!/usr/bin/env bash
# Grades a learner's exercises and prints a scoreboard; exits 0 only when every lesson graded
# passes and the work is valid.
#
#   bash scripts/grade.sh                   # every lesson this machine can run
#   bash scripts/grade.sh 01 02             # only these (NN, NN_topic, or a build such as 03_cpu)
#   bash scripts/grade.sh --upstream org/course --out results   # a fork, against its upstream
#   bash scripts/grade.sh --list            # what would be graded here, and why not the others
#
# Options:
#   --upstream U     the course this work started from: a git ref or commit (upstream/main), a
#                    repository (owner/name on GitHub, a URL or a path), fetched. Default:
#                    $GS_UPSTREAM, else the remote named `upstream`. Without one, integrity is
#                    checked against HEAD only and the scoreboard says so.
#   --learner REF    grade this commit instead of the working tree (a teacher grading a fork
#                    fetched into their own clone: the grader is then the teacher's, not the
#                    fork's)
#   --out DIR        DIR/grade.json, DIR/junit/, DIR/scoreboard.md, DIR/logs/
#   --json FILE      the results as JSON (per lesson: tests passed/total, skipped, sanitizer
#                    verdict, speed-up, commit, INVALID reasons)
#   --junit DIR      CTest's JUnit XML, one file per lesson build and sanitizer run
#   --markdown FILE  the scoreboard (e.g. "$GITHUB_STEP_SUMMARY")
#   --require-gpu    this machine is meant to have a GPU: a GPU lesson that cannot run is a failure
#   --no-setup       do not run scripts/setup.sh (also GS_SETUP=0); grading then never needs sudo
#   --no-sanitize    skip AddressSanitizer/UBSan (CPU) and compute-sanitizer (GPU)
#   --no-speed       skip the speed measurement
#   --timeout S      per-test time limit in seconds (default 300; also GS_TEST_TIMEOUT)
#   --work DIR       keep the pristine tree and its builds in DIR and reuse them (locked, so two
#                    gradings never share it at once; a build configured with the same arguments
#                    is not configured again); default: a fresh mktemp folder, removed
#   --keep           keep the work folder
#   Environment: GS_CMAKE_ARGS (extra configure arguments, e.g. -DGS_CUDA=OFF), GS_UPSTREAM_BRANCH
#   (the branch of a fetched upstream; default its HEAD).
#
# How a grade is made (docs/TEACHING.md says it for teachers):
#  - Integrity: the grade is built from a pristine copy of the upstream commit the work started
#    from (git merge-base; for a repository made from a template, the upstream commit whose tree
#    is its first commit's), with upstream's tests, common/, CMake and scripts, into which only
#    the learner's files (the LEARNER files of each lesson, from <build>/lessons.tsv) are laid.
#    Every other changed file is listed; the lessons it concerns (all of them for a file outside
#    lessons/, solutions/ and tests/test_lessonNN.cpp) are INVALID.
#  - A grade cannot be borrowed from the solution: a learner file must be a regular file (a
#    symbolic link, a submodule or anything else makes its lesson INVALID, and upstream's stub is
#    graded instead); while a lesson's learner files are compiled, its solutions/NN_topic/ folder
#    is moved out of the pristine tree; an #include in a learner file that is absolute, has a
#    ".." or names no file literally makes the lesson INVALID; and after the build the
#    compiler's dependency records of the lesson's exercise (ninja -t deps) must name no file
#    under solutions/ or another lesson's folder, none of the learner's own checkout, none under
#    /proc or /dev, and no copy of a solution file (grade_results.py includes). Then each object
#    compiled from a learner file is compiled again, inlining off, from the learner's file and
#    from upstream's stub: a symbol only the learner's has, or uses from a function that did not
#    use it in the stub's (one section per function), that is the reference (gs::reference*),
#    another lesson's namespace, the registry (all_implementations, find_implementation), a
#    solution library's or dlsym/dlopen makes the lesson INVALID, the symbol named
#    (grade_results.py symbols). These checks run while the solution is still out of the tree,
#    and the graded object itself (not a recompile) may define no global name outside the
#    lesson's namespace that the stub's does not (it would replace the test support's, or
#    GoogleTest's, at link time). The learner file's text may not use __has_include, #line,
#    digraphs, trigraphs, the GPU pass's macros, token pasting, a condition on anything but
#    GS_HAVE_CUDA and the like (grade_results.py includes names them).
#  - The verdict is the judge's (apps/gs_judge.cpp; docs/TEACHING.md): built from upstream's tree
#    before any learner file is laid in, linking none of the learner's code, it draws cases at grade
#    time (sizes, a random state's seed, rates, frames, steps), runs the lesson's exercise program
#    (lesson 08: under mpiexec; lesson 10: tests/judge/lesson10_runner.py with the module) in a
#    process of its own, and compares what it wrote with the reference it computes itself. A PASS
#    needs the judge's PASS (PARTIAL where a GPU part cannot run here) and the tests'.
#  - The sandbox: where bubblewrap runs, the judge's runs and every test run with the file system
#    read-only but for their scratch folder, and no network (GS_GRADE_SANDBOX=0: off); else the
#    scoreboard and JSON say "not sandboxed".
#  - Each lesson build is built and tested on its own: a compile error in one leaves the others
#    graded. Tests run through CTest (per-test timeout, JUnit XML), each through
#    scripts/grade_report_wrapper.sh, which has GoogleTest (or pytest) write that test's report
#    into a folder made fresh, under a random name, for the run. A test passes only when its
#    report exists, names it, says it ran and records no failure: an exit status of 0 alone is
#    not a pass (grade_results.py results). Counts are cases (lesson 10: pytest's, not classes).
#  - Nothing tested is not a pass: a lesson that ran no test, or whose tests all skipped, fails;
#    a skipped case is allowed only if it is a GPU test (by its CTest label gpu, or on the list
#    tests/grade/allowed_skips.txt; never by its message) of a lesson whose GPU part is not graded
#    here, and is listed with its reason. Such a lesson (07-10 on a CPU machine) is PARTIAL
#    ("not graded here: GPU"), which does not fail the grade. The work folder is mode 0755, so
#    that a test run as nobody reaches the build's test-tmp folder.
#  - Which lessons: with none named, every lesson build this machine can run: CPU builds always;
#    GPU builds where a GPU answers `nvidia-smi -L` (or with --require-gpu). The others are
#    listed as not graded here, with the reason, and do not fail the grade, so a CPU-only runner
#    is green when the CPU lessons pass. A lesson that is named, or any GPU lesson under
#    --require-gpu (the GPU runner's job), must be graded: not built, no GPU, a broken driver
#    are failures there. An unknown lesson name is an error (exit 2).
#  - Sanitizers, once the tests pass: CPU builds again under AddressSanitizer and UBSan
#    (cmake/GsSanitizers.cmake), GPU builds under compute-sanitizer memcheck, racecheck and
#    synccheck (where a GPU and the tool are there). A report fails the lesson.
#  - Speed-up, once it passes: the exercise program's default implementation against l01-naive
#    (lesson 01's solution program), 1080 x 1920, frames of 16 steps, each timed for at least
#    0.3 s, best of 3 alternating runs, OMP_WAIT_POLICY=passive (no busy-waiting threads).
# Exit status: 0 pass (PARTIAL included); 1 a lesson failed, was INVALID, or could not be graded;
# 2 usage.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RESULTS=$ROOT/scripts/grade_results.py
export OMP_WAIT_POLICY=passive

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
die() { echo "grade.sh: $*" >&2; exit 2; }
fail() {  # an error that stops the grading: said on stderr, and in the requested outputs
  echo "grade.sh: error: $*" >&2
  if [ -n "${json:-}" ]; then
    python3 -c 'import json, sys; json.dump({"schema": 1, "status": "error", "error": sys.argv[1], "lessons": []}, open(sys.argv[2], "w"), indent=2)' \
      "$*" "$json" 2> /dev/null
  fi
  for file in ${markdown[@]+"${markdown[@]}"}; do
    printf '## Gray-Scott School scoreboard: ERROR\n\n%s\n' "$*" > "$file" 2> /dev/null
  done
  exit 1
}

upstream=${GS_UPSTREAM:-}
learner_ref=""
json="" junit="" out="" work="" keep=0 list=0
markdown=()
setup=${GS_SETUP:-1}
sanitize=1 speed=1 require_gpu=0
timeout=${GS_TEST_TIMEOUT:-300}
requested=()
while [ $# -gt 0 ]; do
  case "$1" in
    --upstream|--learner|--json|--junit|--markdown|--out|--work|--timeout)
      [ $# -ge 2 ] || die "$1 needs a value"
      case "$1" in
        --upstream) upstream=$2 ;;
        --learner) learner_ref=$2 ;;
        --json) json=$2 ;;
        --junit) junit=$2 ;;
        --markdown) markdown+=("$2") ;;
        --out) out=$2 ;;
        --work) work=$2 ;;
        --timeout) timeout=$2 ;;
      esac
      shift 2 ;;
    --require-gpu) require_gpu=1; shift ;;
    --no-setup) setup=0; shift ;;
    --no-sanitize) sanitize=0; shift ;;
    --no-speed) speed=0; shift ;;
    --keep) keep=1; shift ;;
    --list) list=1; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) requested+=("$1"); shift ;;
  esac
done
[[ "$timeout" =~ ^[1-9][0-9]*$ ]] || die "--timeout wants seconds, got '$timeout'"
absolute() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
if [ -n "$out" ]; then
  out=$(absolute "$out")
  json=${json:-$out/grade.json} junit=${junit:-$out/junit}
  markdown+=("$out/scoreboard.md")
  mkdir -p "$out" || die "cannot create --out '$out'"
fi
[ -z "$json" ] || json=$(absolute "$json")
[ -z "$junit" ] || junit=$(absolute "$junit")
report_args=()
[ -z "$json" ] || report_args+=(--json "$json")
for file in ${markdown[@]+"${markdown[@]}"}; do report_args+=(--markdown "$(absolute "$file")"); done

if [ "$setup" = 1 ]; then
  bash "$ROOT/scripts/setup.sh" --quiet --build-only \
    || fail "setup.sh could not install what grading needs (install it, or pass --no-setup)"
fi
command -v python3 >/dev/null 2>&1 || fail "python3 is needed to read CTest's results"
jobs=$(nproc 2>/dev/null || echo 2)

# --- the work folder: a fresh one per grading, or a kept one (--work) under a lock
reuse=0
if [ -n "$work" ]; then
  reuse=1
  mkdir -p "$work" && work=$(cd "$work" && pwd) || fail "cannot use --work '$work'"
  exec 9> "$work/.lock"
  if command -v flock >/dev/null 2>&1 && ! flock -n 9; then
    echo "grade.sh: $work is in use by another grading; waiting for it"
    flock 9
  fi
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/gs-grade.XXXXXX") || fail "mktemp failed"
fi
RUN=$(mktemp -d "$work/run.XXXXXX") || fail "mktemp failed"
# mktemp's folders are the owner's alone (0700); a test that drops to the user nobody (lesson
# 08's OutputInAnUnwritableDirectory, run as root) must still reach the build's test-tmp folder,
# or it skips, and the grader must never be the cause of a skip.
chmod 0755 "$work" "$RUN" || fail "cannot make $work reachable (chmod 0755)"
for folder in "$(dirname "$work")" "$(dirname "$(dirname "$work")")"; do
  if [ "$(id -u)" = 0 ] && ! stat -c %A "$folder" | grep -q '^d.\{8\}[xt]'; then
    echo "grade.sh: warning: $folder is not searchable by other users:" \
      "tests run as nobody will skip"
  fi
done
# Each test runs through this wrapper, which has its framework write a report of it (the pass is
# read from there, not from the exit status): a copy in the work folder, so that the configured
# path does not depend on which checkout's grader runs.
wrapper=$work/grade_report_wrapper.sh
cmp -s "$ROOT/scripts/grade_report_wrapper.sh" "$wrapper" \
  || cp "$ROOT/scripts/grade_report_wrapper.sh" "$wrapper" || fail "cannot copy the test wrapper"
chmod 0755 "$wrapper"
hide_solution() { :; }  # both defined once the pristine tree is known
restore_solutions() { :; }
cleanup() {
  restore_solutions
  if [ "$keep" = 1 ]; then
    echo "grade.sh: kept $RUN (logs, JUnit) and the builds in $work"
  elif [ "$reuse" = 1 ]; then
    rm -rf "$RUN"
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
mkdir -p "$RUN/records" "$RUN/logs" "$RUN/junit"
# What grade_results.py reads: key=value lines, one file per lesson build (record) and one for
# the grading (meta).
record() { printf '%s=%s\n' "$2" "$(printf '%s' "$3" | tr '\n\t' '  ')" >> "$RUN/records/$1.rec"; }
meta() { printf '%s=%s\n' "$1" "$(printf '%s' "$2" | tr '\n\t' '  ')" >> "$RUN/meta"; }

# --- what is graded: the learner's commit or working tree, against which upstream commit
in_git=0
if [ "$(git -C "$ROOT" rev-parse --show-toplevel 2>/dev/null)" = "$ROOT" ]; then in_git=1; fi
git_() { git -C "$ROOT" "$@"; }
source_kind=worktree
integrity=checked
base="" upstream_commit="" dirty=0
if [ "$in_git" = 1 ]; then
  if [ -n "$learner_ref" ]; then
    learner_commit=$(git_ rev-parse --verify -q "$learner_ref^{commit}") \
      || die "--learner: '$learner_ref' is not a commit here (fetch it first)"
    source_kind="commit $learner_ref"
  else
    learner_commit=$(git_ rev-parse --verify -q HEAD) || fail "this repository has no commit"
    [ -z "$(git_ status --porcelain --untracked-files=no)" ] || dirty=1
    source_kind="working tree"
  fi
  if [ -z "$upstream" ]; then
    for candidate in upstream/HEAD upstream/main upstream/master; do
      if git_ rev-parse --verify -q "$candidate^{commit}" > /dev/null; then
        upstream=$candidate
        break
      fi
    done
  fi
  if [ -n "$upstream" ]; then
    if ! upstream_commit=$(git_ rev-parse --verify -q "$upstream^{commit}"); then
      case "$upstream" in
        *://*|git@*|/*|./*|../*) url=$upstream ;;
        */*) url=https://github.com/$upstream ;;
        *) die "--upstream: '$upstream' is neither a commit here nor a repository" ;;
      esac
      [ "$(git_ rev-parse --is-shallow-repository)" = false ] \
        || fail "this clone is shallow: the commit it started from cannot be found (clone with full history; in a workflow, actions/checkout with fetch-depth: 0)"
      fetched=refs/gs-grade/upstream-$$
      echo "grade.sh: fetching ${GS_UPSTREAM_BRANCH:-HEAD} of $url"
      git_ fetch --quiet --no-tags "$url" "+${GS_UPSTREAM_BRANCH:-HEAD}:$fetched" \
        || fail "cannot fetch '$url' (a private repository? then grade from a clone that can: --learner)"
      upstream_commit=$(git_ rev-parse "$fetched")
      git_ update-ref -d "$fetched"
    fi
    base=$(git_ merge-base "$learner_commit" "$upstream_commit" 2>/dev/null || true)
    if [ -z "$base" ]; then
      # A repository made from a template shares no history: its first commit has the tree of
      # the upstream commit it was made from.
      for first in $(git_ rev-list --max-parents=0 "$learner_commit"); do
        tree=$(git_ rev-parse "$first^{tree}")
        base=$(git_ log --format='%H %T' "$upstream_commit" | awk -v t="$tree" '$2 == t { print $1; exit }')
        [ -n "$base" ] && break
      done
    fi
    [ -n "$base" ] || fail "no upstream commit of $upstream is an ancestor of $learner_commit, nor has the tree of its first commit: this work did not start from that course"
  else
    base=$learner_commit
    integrity="no upstream given (--upstream, GS_UPSTREAM or a remote named upstream): tests, common/ and CMake are this repository's HEAD, so edits committed to them go unnoticed"
  fi
else
  learner_commit=${GS_GIT_COMMIT:-unknown}
  integrity="not a git repository: the tree is graded as it is"
fi

# --- the pristine tree: upstream's files at the base commit (kept per base under --work)
if [ "$in_git" = 1 ]; then
  tree=$work/tree-$base
  if [ ! -f "$tree.complete" ]; then
    rm -rf "$tree" && mkdir -p "$tree"
    git_ archive --format=tar "$base" | tar -x -C "$tree" || fail "git archive of $base failed"
    touch "$tree.complete"
  fi
  build=$work/build-$base
  asan_build=$work/build-asan-$base
  # While a lesson's learner files compile, its solution waits here, outside the tree (and comes
  # back after, or here if a grading was interrupted: the tree is reused under --work).
  hidden=$work/hidden-$base
  hide_solution() {  # hide_solution LESSON TOPIC: solutions/LESSON_TOPIC/ out of the tree
    [ -d "$tree/solutions/$1_$2" ] || return 0
    mkdir -p "$hidden" && mv "$tree/solutions/$1_$2" "$hidden/"
  }
  restore_solutions() {
    local folder
    for folder in "$hidden"/*; do
      [ -d "$folder" ] && mv "$folder" "$tree/solutions/"
    done
    rmdir "$hidden" 2>/dev/null
    return 0
  }
  restore_solutions
else
  tree=$ROOT
  build=$work/build-tree
  asan_build=$work/build-asan-tree
fi
gpu=0 gpu_name="" cuda_off_here=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  gpu=1
  gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
fi
# The wrapper as the emulator of every executable: CTest (and gtest_discover_tests) then start
# each test through it; CMAKE_TEST_LAUNCHER does the same from CMake 3.29 (the wrapper runs once).
# compile_commands.json: the symbol check compiles the lesson's objects again from it.
wrapper_args=("-DCMAKE_CROSSCOMPILING_EMULATOR=$wrapper" "-DCMAKE_TEST_LAUNCHER=$wrapper"
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
configure_args=(-G Ninja -DCMAKE_BUILD_TYPE=Release "-DGS_GIT_COMMIT=grade-${base:0:12}"
  "${wrapper_args[@]}")
if [ "$gpu" = 1 ] && [[ "${GS_CMAKE_ARGS:-}" != *CMAKE_CUDA_ARCHITECTURES* ]]; then
  configure_args+=(-DCMAKE_CUDA_ARCHITECTURES=native)  # this GPU only: half the compile time
fi
# No GPU here (and none required): nothing compiled for one could run, and the GPU parts are not
# graded here anyway; CUDA compilation was most of a hybrid lesson's grade (lessons 07-09, 11:
# their CPU paths and the host walks of the learner's GPU code still build and run).
# GS_CMAKE_ARGS=-DGS_CUDA=ON compiles it anyway.
if [ "$gpu" = 0 ] && [ "$require_gpu" = 0 ] && [[ "${GS_CMAKE_ARGS:-}" != *GS_CUDA=* ]]; then
  configure_args+=(-DGS_CUDA=OFF)
  cuda_off_here=1
  echo "grade.sh: no GPU answers nvidia-smi -L: CUDA code is not compiled for this grade (GS_CMAKE_ARGS=-DGS_CUDA=ON compiles it)"
fi
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
# A build kept under --work that was configured with these same arguments is not configured again
# (seconds of each grading): its tree is upstream's commit, into which only learner files (headers,
# which CMake does not read) are laid, and Ninja re-runs CMake itself if a CMake file changed.
# shellcheck disable=SC2086  # GS_CMAKE_ARGS is a list of arguments
configured_with=$(printf '%s\n' "${configure_args[@]}" ${GS_CMAKE_ARGS:-})
if [ -f "$build/build.ninja" ] && [ -f "$build/gs-grade-configure.args" ] \
   && [ "$(cat "$build/gs-grade-configure.args")" = "$configured_with" ]; then
  echo "grade.sh: $build was configured with these arguments already" > "$RUN/logs/configure.log"
else
  rm -f "$build/gs-grade-configure.args"
  # shellcheck disable=SC2086  # GS_CMAKE_ARGS is a list of arguments
  if ! cmake -S "$tree" -B "$build" "${configure_args[@]}" ${GS_CMAKE_ARGS:-} > "$RUN/logs/configure.log" 2>&1; then
    tail -30 "$RUN/logs/configure.log"
    fail "configuring upstream's tree failed (log above)"
  fi
  printf '%s\n' "$configured_with" > "$build/gs-grade-configure.args"
fi
manifest=$build/lessons.tsv
[ -f "$manifest" ] || fail "$manifest is missing: this upstream commit predates lessons.tsv"

# --- the judge: built from upstream's tree before any learner file is laid into it (it links
# common/ and nothing of a lesson), then kept outside the build, where no test can reach it
cmake --build "$build" -j "$jobs" --target gs_judge > "$RUN/logs/build-judge.log" 2>&1 \
  || fail "the judge (gs_judge) of upstream's tree does not build (log: $RUN/logs/build-judge.log)"
judge=$RUN/judge/gs_judge
mkdir -p "$RUN/judge" && cp "$build/bin/gs_judge" "$judge" || fail "cannot copy the judge"
cache_value() { sed -n "s|^$1:[A-Z]*=||p" "$build/CMakeCache.txt" | head -1; }
mpiexec=$(cache_value MPIEXEC_EXECUTABLE)
python=$(cache_value Python_EXECUTABLE)
# The sandbox of the learner's processes (the judge's runs and every test): bubblewrap, the file
# system read-only but for a scratch folder (and a test's report and temporary folders), no
# network. Where it cannot run, the grade says "not sandboxed" (GS_GRADE_SANDBOX=0 turns it off).
sandbox=0
sandbox_note="not sandboxed: bubblewrap (bwrap) is not installed"
if [ "${GS_GRADE_SANDBOX:-1}" = 0 ]; then
  sandbox_note="not sandboxed: GS_GRADE_SANDBOX=0"
elif command -v bwrap > /dev/null 2>&1; then
  if bwrap --ro-bind / / --dev /dev --proc /proc --unshare-net --die-with-parent true 2>/dev/null; then
    sandbox=1 sandbox_note="sandboxed (bubblewrap: read-only file system, no network)"
  else
    sandbox_note="not sandboxed: bubblewrap cannot run here ($(bwrap --ro-bind / / true 2>&1 | head -1))"
  fi
fi

# --- the learner's files: every lesson's, laid into the pristine tree
declare -A learner_file_lesson=()
mapfile -t rows < <(tail -n +2 "$manifest")
for row in "${rows[@]}"; do
  IFS=$'\t' read -r lesson _ _ _ _ _ files _ <<< "$row"
  for file in $files; do learner_file_lesson[$file]=$lesson; done
done
declare -A missing_file=()
# Per lesson: why its grade cannot count although its files compiled (INVALID), "; "-separated.
declare -A learner_problem=()
shown() { printf '%s' "$1" | tr -c '[:print:]' '?'; }  # a name from the work, safe to print
# A learner file must be a regular file: a symbolic link (to the solution, say) would be followed
# by the build of a working tree; in a commit it is a link's text.
learner_file_kind() {  # learner_file_kind FILE: nothing for a regular file, else what it is
  local mode
  if [ -n "$learner_ref" ]; then
    mode=$(git_ ls-tree "$learner_commit" -- "$1" | awk '{ print $1 }')
    case "$mode" in
      ''|100644|100755) ;;
      120000) echo "a symbolic link (to $(shown "$(git_ show "$learner_commit:$1")"))" ;;
      160000) echo "a submodule" ;;
      *) echo "not a regular file (git mode $mode)" ;;
    esac
  elif [ -L "$ROOT/$1" ]; then
    echo "a symbolic link (to $(shown "$(readlink "$ROOT/$1")"))"
  elif [ -e "$ROOT/$1" ] && [ ! -f "$ROOT/$1" ]; then
    echo "not a regular file ($(stat -c %F "$ROOT/$1" 2>/dev/null))"
  fi
}
for file in "${!learner_file_lesson[@]}"; do
  kind=$(learner_file_kind "$file")
  if [ -n "$kind" ]; then
    learner_problem[${learner_file_lesson[$file]}]+="$file is $kind: a learner file must be a regular file; "
  fi
done
if [ "$in_git" = 1 ]; then
  for file in "${!learner_file_lesson[@]}"; do
    content=$RUN/learner.tmp
    lesson=${learner_file_lesson[$file]}
    if [[ "${learner_problem[$lesson]:-}" == *"$file is "* ]]; then
      git_ show "$base:$file" > "$content"  # not followed: upstream's stub is graded instead
    elif [ -n "$learner_ref" ]; then
      git_ show "$learner_commit:$file" > "$content" 2>/dev/null || missing_file[$file]=1
    elif [ -f "$ROOT/$file" ]; then
      cat "$ROOT/$file" > "$content"
    else
      missing_file[$file]=1
    fi
    [ -z "${missing_file[$file]:-}" ] || git_ show "$base:$file" > "$content"
    cmp -s "$content" "$tree/$file" || cat "$content" > "$tree/$file"  # new mtime only if changed
    # Upstream's stub, kept apart: the symbol check compiles the lesson against it.
    stub=$work/stubs-$base/$(dirname "$file")
    mkdir -p "$stub" && git_ show "$base:$file" > "$stub/$(basename "$file")"
  done
fi

# --- every other changed file: listed, and the lessons it concerns are INVALID
invalid_all=()
declare -A invalid_lesson=()
if [ "$in_git" = 1 ]; then
  if [ -n "$learner_ref" ]; then
    changed=$(git_ diff --name-only --no-renames "$base" "$learner_commit")
  else
    changed=$(git_ diff --name-only --no-renames "$base")
  fi
  while IFS= read -r file; do
    [ -n "$file" ] || continue
    [ -n "${learner_file_lesson[$file]:-}" ] && continue
    # The notebooks are the learner's to run and save (with their outputs): no part of a grade.
    [[ "$file" == notebooks/* ]] && continue
    if [[ "$file" =~ ^(lessons|solutions)/([0-9][0-9])_ ]]; then
      invalid_lesson[${BASH_REMATCH[2]}]+=" $file"
    elif [[ "$file" =~ ^tests/test_lesson([0-9][0-9])\. ]]; then
      invalid_lesson[${BASH_REMATCH[1]}]+=" $file"
    else
      invalid_all+=("$file")
    fi
  done <<< "$changed"
fi
all_invalid_files=$(printf '%s\n' "${invalid_all[@]}" ${invalid_lesson[@]+"${invalid_lesson[@]}"} | tr ' ' '\n' | sed '/^$/d' | sort -u | tr '\n' ' ')

# --- which lesson builds: the ones named, or every one this machine can run
declare -A wanted=()
unknown=()
for name in "${requested[@]}"; do
  found=0
  for row in "${rows[@]}"; do
    IFS=$'\t' read -r lesson id topic _ <<< "$row"
    if [ "$name" = "$lesson" ] || [ "$name" = "$id" ] || [ "$name" = "${lesson}_$topic" ]; then
      wanted[$id]=1
      found=1
    fi
  done
  [ "$found" = 1 ] || unknown+=("$name")
done
if [ "${#unknown[@]}" -gt 0 ]; then
  known=$(for row in "${rows[@]}"; do IFS=$'\t' read -r lesson id topic _ <<< "$row"; echo "$id"; done | sort -u | tr '\n' ' ')
  die "unknown lesson '${unknown[*]}': this course has ${known}(a lesson number NN, NN_topic, or a build such as 03_cpu)"
fi

meta date "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
meta commit "$learner_commit"
meta dirty "$dirty"
meta source "$source_kind"
meta upstream "$upstream"
meta upstream_commit "$upstream_commit"
meta base "$base"
meta integrity "$integrity"
meta invalid_files "$all_invalid_files"
meta cpu "$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo 2>/dev/null | head -1) ($jobs cores)"
meta gpu "$gpu_name"
meta sandbox "$sandbox"
meta sandbox_note "$sandbox_note"
[ "$speed" = 1 ] && meta speed_rule "the exercise program's default implementation against l01-naive (lesson 01's solution), 1080 x 1920, frames of 16 steps, each timed >= 0.3 s, best of 3, OMP_WAIT_POLICY=passive"

echo "grade.sh: grading the $source_kind at ${learner_commit:0:12}$([ "$dirty" = 1 ] && echo ' (with uncommitted changes)')"
if [ "$integrity" = checked ]; then
  echo "grade.sh: against upstream ${base:0:12} ($upstream): pristine tree $tree"
else
  echo "grade.sh: integrity NOT checked: $integrity"
fi
echo "grade.sh: the learner's code runs $sandbox_note"
[ -z "$all_invalid_files" ] || echo "grade.sh: INVALID: changed outside the exercises: $all_invalid_files"
for file in "${!missing_file[@]}"; do echo "grade.sh: $file is missing from the work: upstream's stub is graded"; done

# --- one lesson build: build, test, sanitize, measure
baseline_rate=""
asan_ready=""
measure() {  # measure PROGRAM IMPLEMENTATION: cell-updates/s of one timed benchmark run, or nothing
  local csv=$RUN/bench.csv
  rm -f "$csv"
  "$1" benchmark --impl "$2" -r 1080 -c 1920 -n 100000 -e 16 --max-seconds 0.3 --csv "$csv" \
    > /dev/null 2>> "$RUN/logs/speed.log" || return 0
  awk -F, 'NR == 2 { print $6 }' "$csv"
}
ensure_asan() {
  [ -n "$asan_ready" ] && { [ "$asan_ready" = yes ]; return; }
  asan_ready=no
  [ -f "$tree/cmake/GsSanitizers.cmake" ] || return 1
  # Upstream's own asan preset (CMakePresets.json), into this grading's folder.
  (cd "$tree" && cmake --preset asan -B "$asan_build" "-DGS_GIT_COMMIT=grade-${base:0:12}" \
     "${wrapper_args[@]}") \
    > "$RUN/logs/configure-asan.log" 2>&1 || return 1
  asan_ready=yes
}
# run_tests BUILD NAME LIMIT REGEX KEY [--allow-gpu-skips]: the lesson's exercise tests in BUILD
# through CTest, each writing its own report into a folder made for this run; prints what
# grade_results.py results reads from them ("passed failed skipped total disallowed-skips", then
# the first failure), and the skips with their reasons into the lesson's record (KEY).
run_tests() {
  local build_dir=$1 name=$2 limit=$3 regex=$4 key=$5 reports
  shift 5
  reports=$(mktemp -d "$RUN/reports.XXXXXX")
  ctest --test-dir "$build_dir" -R "$regex" -L '^exercise$' --show-only=json-v1 \
    > "$RUN/tests-$name.json" 2> /dev/null
  GS_GRADE_SANDBOX=$sandbox GS_GRADE_REPORTS=$reports ctest --test-dir "$build_dir" -R "$regex" -L '^exercise$' \
    --timeout "$limit" -j "$jobs" --output-junit "$RUN/junit/$name.xml" \
    > "$RUN/logs/test-$name.log" 2>&1
  python3 "$RESULTS" results "$RUN/junit/$name.xml" --tests "$RUN/tests-$name.json" \
    --reports "$reports" --strip "$tree" --timeout "$limit" \
    ${key:+--skips "$RUN/records/$key.skips"} "$@"
}
# run_judge KEY BUILD PROGRAM: the judge on the lesson build's exercise, its cases drawn now, the
# learner's processes in the sandbox when there is one; writes status=, detail=, not_here= and
# seed= into $RUN/judge-BUILD.rec (grade_results.py judge) and the judge's JSON beside it.
run_judge() {
  local key=$1 id=$2 program=$3 scratch judge_json=$RUN/judge-$2.json
  scratch=$(mktemp -d "$RUN/judge-scratch.XXXXXX")
  local args=(--lesson "$id" --program "$program" --scratch "$scratch" --json "$judge_json"
              --timeout "$timeout")
  [ "$sandbox" = 1 ] && args+=(--sandbox)
  [ "$gpu" = 1 ] && [ "$cuda_built" = 1 ] && args+=(--gpu --gpus "$(nvidia-smi -L | grep -c '^GPU')")
  [ -n "$mpiexec" ] && args+=(--mpiexec "$mpiexec")
  if [ -n "$python" ]; then
    args+=(--python "$python" --runner "$tree/tests/judge/lesson10_runner.py"
           --pythonpath "$build/python-exercise")
  fi
  rm -f "$judge_json"
  "$judge" "${args[@]}" > "$RUN/logs/judge-$id.log" 2>&1
  # Its verdict, first failing case, what it could not grade here and its seed, as key=value.
  python3 "$RESULTS" judge "$judge_json" --log "$RUN/logs/judge-$id.log" > "$RUN/judge-$id.rec"
  record "$key" judge "$(sed -n 's/^status=//p' "$RUN/judge-$id.rec")"
  record "$key" judge_detail "$(sed -n 's/^detail=//p' "$RUN/judge-$id.rec")"
  record "$key" judge_seed "$(sed -n 's/^seed=//p' "$RUN/judge-$id.rec")"
  rm -rf "$scratch"
}
grade_build() {  # grade_build KEY LESSON BUILD TOPIC LABELS PROVIDES PROGRAM TESTS
  local key=$1 lesson=$2 id=$3 topic=$4 labels=$5 provides=$6 program=$7 tests=$8
  local ns=lesson$id start=$SECONDS details=$RUN/records/$key.details
  local test_target program_target passed failed skipped total verdict reason=""
  test_target=$(basename "$tests")
  program_target=$(basename "$program")
  printf '== %s (%s): ' "$id" "$topic"
  # What the learner's files reach beyond the lesson: their text now, the compiler's records after
  # a build that succeeds (grade_results.py includes). A problem makes the lesson INVALID.
  local folder=lessons/${lesson}_$topic learner_files=() problem
  for file in "${!learner_file_lesson[@]}"; do
    [ "${learner_file_lesson[$file]}" = "$lesson" ] && learner_files+=("$file")
  done
  check_includes() {
    while IFS= read -r problem; do
      [ -n "$problem" ] && [[ "${learner_problem[$lesson]:-}" != *"$problem; "* ]] \
        && learner_problem[$lesson]+="$problem; "
    done < <(python3 "$RESULTS" includes --tree "$tree" --lesson-folder "$folder" \
               --learner "${learner_files[@]}" --checkout "$ROOT" --work "$work" "$@")
  }
  check_includes
  local built=1 extra_targets=()
  # Lesson 10's module is what its judge runs.
  [ "$provides" = module ] && extra_targets+=(grayscott_exercise)
  hide_solution "$lesson" "$topic"
  cmake --build "$build" -j "$jobs" --target "$test_target" "$program_target" \
    ${extra_targets[@]+"${extra_targets[@]}"} > "$RUN/logs/build-$id.log" 2>&1 || built=0
  # The symbol check runs while the solution is still hidden: a learner file that compiles
  # differently when solutions/ is there is checked as it was graded.
  if [ "$built" = 1 ]; then
    # What the compiled learner code uses: every object of the build that read a learner file
    # (lesson 10's module is none of the targets above), against the same object built from
    # upstream's stub (outside git there is no upstream stub: not checked).
    if [ "$in_git" = 1 ]; then
      while IFS= read -r problem; do
        [ -n "$problem" ] && learner_problem[$lesson]+="$problem; "
      done < <(python3 "$RESULTS" symbols --build "$build" --tree "$tree" \
                 --lesson-folder "$folder" --learner "${learner_files[@]}" \
                 --stubs "$work/stubs-$base/$folder" --cache "$work/symbols-$base" \
                 --namespace "lesson$id")
    fi
  fi
  restore_solutions
  # The compiler's records, with the solutions back in the tree: a file it read that is a copy of
  # one of them is named as such.
  if [ "$built" = 1 ]; then
    check_includes --build "$build" --target "${program_target}_impl" \
      "$program_target" "$test_target"
  fi
  if [ "$built" = 0 ]; then
    grep -E -A4 ': (fatal )?error|error:' "$RUN/logs/build-$id.log" | sed "s|$tree/||g" \
      | head -24 > "$details"
    [ -s "$details" ] || tail -20 "$RUN/logs/build-$id.log" | sed "s|$tree/||g" > "$details"
    printf 'does not compile'
    settle "$key" "$lesson" "BUILD FAILED" "does not compile"
    record "$key" seconds $((SECONDS - start))
    return
  fi
  # GPU parts (a hybrid or Python lesson's): graded only where they are compiled and a GPU runs
  # them; elsewhere their tests may skip, and the grade says PARTIAL.
  local gpu_parts="" disallowed
  if [[ ",$labels," == *,gpu,* ]] && [[ ",$labels," == *,cpu,* ]]; then
    if [ "$cuda_built" = 0 ]; then
      gpu_parts="its GPU code is not compiled in this build (no CUDA)"
    elif [ "$gpu" = 0 ]; then
      gpu_parts="its GPU tests cannot run (no GPU answers nvidia-smi -L)"
    fi
  fi
  local allow=()
  [ -n "$gpu_parts" ] && [ "$require_gpu" = 0 ] \
    && allow=(--allow-gpu-skips --allowed-skips "$tree/tests/grade/allowed_skips.txt")
  # The verdict: the judge's (apps/gs_judge.cpp), before any test of the learner's code runs.
  local judge_status judge_detail judge_not_here judge_partial=""
  run_judge "$key" "$id" "$program"
  judge_status=$(sed -n 's/^status=//p' "$RUN/judge-$id.rec")
  judge_detail=$(sed -n 's/^detail=//p' "$RUN/judge-$id.rec")
  judge_not_here=$(sed -n 's/^not_here=//p' "$RUN/judge-$id.rec")
  printf 'judge %s; ' "$judge_status"
  { read -r passed failed skipped total disallowed; cat > "$details"; } \
    < <(run_tests "$build" "$id" "$timeout" "^$ns\\.exercise\\." "$key" ${allow[@]+"${allow[@]}"})
  record "$key" junit "$id.xml"
  record "$key" passed "$passed"; record "$key" failed "$failed"
  record "$key" skipped "$skipped"; record "$key" total "$total"
  verdict=PASS
  if [ "$total" = 0 ]; then
    verdict=FAIL reason="ran no test"
  elif [ "$failed" -gt 0 ]; then
    verdict=FAIL reason="$failed failed"
  elif [ "$passed" = 0 ]; then
    verdict=FAIL reason="every test skipped"
  elif [ "$disallowed" -gt 0 ]; then
    verdict=FAIL reason="$disallowed test(s) skipped on a machine that should run them"
  fi
  # A pass needs the judge's: tests that pass (or were made to say so) while the judge's cases
  # fail are a FAIL, the judge's first failing case shown.
  if [ "$judge_status" = FAIL ] || [ "$judge_status" = ERROR ]; then
    { echo "the judge (cases drawn at grade time, run apart from the tests): $judge_detail"
      cat "$details"; } > "$details.new" && mv "$details.new" "$details"
    if [ "$verdict" = PASS ]; then
      verdict=FAIL reason="the judge's cases fail although the tests pass"
    else
      reason="$reason; the judge's cases fail too"
    fi
  elif [ "$judge_status" = PARTIAL ] && [ -z "$gpu_parts" ] && [ "$verdict" = PASS ]; then
    if [[ "$judge_not_here" == *"needs a GPU"* ]]; then
      verdict=FAIL reason="the judge could not grade its GPU paths on a machine that should"
    else  # lesson 08's peer ranks on a machine of one GPU: PARTIAL once the rest passed
      judge_partial="not graded here: the judge's GPU ranks (one GPU each) ($judge_not_here)"
    fi
  fi
  printf '%s/%s cases passed, %s skipped' "$passed" "$total" "$skipped"

  local sanitizer="" tools=()
  if [ "$verdict" = PASS ] && [ "$sanitize" = 1 ]; then
    if [[ ",$labels," == *,cpu,* ]] && ensure_asan; then
      tools+=(asan+ubsan)
      local asan_built=1
      hide_solution "$lesson" "$topic"
      cmake --build "$asan_build" -j "$jobs" --target "$test_target" \
        > "$RUN/logs/build-asan-$id.log" 2>&1 || asan_built=0
      restore_solutions
      if [ "$asan_built" = 0 ]; then
        sanitizer=FAILED reason="does not compile under the sanitizers"
        grep -E -A4 'error' "$RUN/logs/build-asan-$id.log" | sed "s|$tree/||g" | head -20 > "$details"
      else
        record "$key" junit "$id.xml $id.asan.xml"
        local a_passed a_failed a_total
        { read -r a_passed a_failed _ a_total _; cat > "$RUN/asan.details"; } \
          < <(run_tests "$asan_build" "$id.asan" $((timeout * 3)) "^$ns\\.exercise\\." "" \
                ${allow[@]+"${allow[@]}"})
        if [ "$a_failed" = 0 ] && [ "$a_passed" -gt 0 ]; then
          sanitizer=clean
        else
          sanitizer=FAILED reason="AddressSanitizer/UBSan: $a_failed of $a_total tests failed"
          { echo "under AddressSanitizer + UBSan:"; cat "$RUN/asan.details"; } > "$details"
        fi
      fi
    fi
    if [[ ",$labels," == *,gpu,* ]] && [ "$gpu" = 1 ] \
       && ctest --test-dir "$build" -N -R "^$ns\\.exercise_sanitizer\\." | grep -q 'Total Tests: [1-9]'; then
      tools+=(compute-sanitizer)
      ctest --test-dir "$build" -R "^$ns\\.exercise_sanitizer\\." --timeout 1800 \
        --output-junit "$RUN/junit/$id.compute-sanitizer.xml" > "$RUN/logs/test-cs-$id.log" 2>&1
      local c_passed c_failed c_total
      { read -r c_passed c_failed _ c_total; cat > "$RUN/cs.details"; } \
        < <(python3 "$RESULTS" junit "$RUN/junit/$id.compute-sanitizer.xml" --strip "$tree" --timeout 1800)
      if [ "$c_failed" = 0 ] && [ "$c_passed" -gt 0 ] && [ "$sanitizer" != FAILED ]; then
        sanitizer=clean
      elif [ "$c_failed" != 0 ] || [ "$c_passed" = 0 ]; then
        sanitizer=FAILED reason="compute-sanitizer: $c_failed of $c_total runs failed"
        { echo "under compute-sanitizer:"; cat "$RUN/cs.details"; } >> "$details"
      fi
    fi
    if [ "${#tools[@]}" -gt 0 ]; then
      record "$key" sanitizer_tools "$(IFS=,; echo "${tools[*]}")"
      record "$key" sanitizer "$sanitizer"
      printf ', %s %s' "$(IFS=,; echo "${tools[*]}")" "$sanitizer"
      [ "$sanitizer" = clean ] || verdict=FAIL
    fi
  fi

  if [ "$verdict" = PASS ] && [ "$speed" = 1 ] && [ "$provides" = implementations ]; then
    if [ -z "$baseline_rate" ] && [ -n "$baseline_program" ]; then
      baseline_rate=none
      cmake --build "$build" -j "$jobs" --target "$(basename "$baseline_program")" \
        >> "$RUN/logs/build-baseline.log" 2>&1 || baseline_program=""
    fi
    local implementation rate best="" base_best="" _round
    implementation=$("$program" -r 8 -c 8 -n 1 -e 1 --no-output --json 2>/dev/null \
      | sed -n 's/.*"implementation":"\([^"]*\)".*/\1/p')
    if [ -n "$implementation" ]; then
      for _round in 1 2 3; do
        if [ -n "$baseline_program" ] && [ "$baseline_rate" = none ]; then
          rate=$(measure "$baseline_program" l01-naive)
          [ -n "$rate" ] && base_best=$(awk -v a="$rate" -v b="${base_best:-0}" 'BEGIN { print (a > b) ? a : b }')
        fi
        rate=$(measure "$program" "$implementation")
        [ -n "$rate" ] && best=$(awk -v a="$rate" -v b="${best:-0}" 'BEGIN { print (a > b) ? a : b }')
      done
      [ -n "$base_best" ] && baseline_rate=$base_best
    fi
    if [ -n "$best" ]; then
      record "$key" rate "$best"
      if [ -n "$baseline_rate" ] && [ "$baseline_rate" != none ]; then
        record "$key" baseline_rate "$baseline_rate"
        local speedup
        speedup=$(awk -v a="$best" -v b="$baseline_rate" 'BEGIN { printf "%.2f", a / b }')
        record "$key" speedup "$speedup"
        printf ', %sx l01-naive (%s)' "$speedup" "$implementation"
      fi
    fi
  fi

  if [ "$verdict" = PASS ] && [ -n "$gpu_parts" ]; then
    verdict=PARTIAL reason="not graded here: GPU ($gpu_parts)"
  elif [ "$verdict" = PASS ] && [ -n "$judge_partial" ]; then
    verdict=PARTIAL reason=$judge_partial
  fi
  settle "$key" "$lesson" "$verdict" "$reason"
  record "$key" seconds $((SECONDS - start))
}

# settle KEY LESSON VERDICT REASON: the lesson's status. INVALID when the work changed other
# files, or when its learner files are not regular files or reach beyond the lesson (the grade
# then says what the tests did); else the verdict (PASS, FAIL, BUILD FAILED) and its reason.
settle() {
  local key=$1 lesson=$2 verdict=$3 reason=$4 details=$RUN/records/$1.details
  local invalid="${invalid_all[*]} ${invalid_lesson[$lesson]:-}" problems=${learner_problem[$lesson]:-}
  invalid=$(echo $invalid)
  problems=${problems%; }
  record "$key" tests_verdict "$verdict"
  record "$key" invalid "$invalid"
  record "$key" invalid_reasons "$problems"
  if [ -n "$invalid" ] || [ -n "$problems" ]; then
    local why=$problems
    [ -z "$invalid" ] || why="${why:+$why; }changed outside the exercise: $invalid, graded without those changes"
    record "$key" status INVALID
    record "$key" reason "$why (tests: $verdict${reason:+, $reason})"
    printf ' -> INVALID (tests: %s)\n' "$verdict"
    [ -z "$problems" ] || printf '%s\n' "$problems" | sed 's/; /\n/g' | sed 's/^/   INVALID: /'
  elif [ "$verdict" = "BUILD FAILED" ]; then
    record "$key" status "$verdict"
    record "$key" reason "$reason"
    printf ' -> BUILD FAILED\n'
  else
    record "$key" status "$verdict"
    record "$key" reason "$reason"
    printf ' -> %s%s\n' "$verdict" "${reason:+ ($reason)}"
  fi
  [ "$verdict" = PASS ] || sed 's/^/   /' "$details"
}

baseline_program=""
cuda_built=0  # whether this build compiles CUDA: a CUDA lesson was built
for row in "${rows[@]}"; do
  IFS=$'\t' read -r _ _ _ kind _ _ _ _ _ _ _ status <<< "$row"
  [ "$kind" = cuda ] && [ "$status" = built ] && cuda_built=1
done
for row in "${rows[@]}"; do
  IFS=$'\t' read -r lesson id _ _ _ _ _ _ solution_program _ _ status <<< "$row"
  [ "$lesson" = 01 ] && [ "$status" = built ] && [ -z "$baseline_program" ] && baseline_program=$solution_program
done

index=0
plan_failures=0
[ "$require_gpu" = 1 ] && [ "$gpu" = 0 ] && echo "grade.sh: --require-gpu, but no GPU answers nvidia-smi -L (no driver, a broken one, or none visible)"
for row in "${rows[@]}"; do
  IFS=$'\t' read -r lesson id topic kind labels provides files program _ tests _ status <<< "$row"
  index=$((index + 1))
  if [ "${#requested[@]}" -gt 0 ] && [ -z "${wanted[$id]:-}" ]; then continue; fi
  key=$(printf '%03d-%s' "$index" "$id")
  rec() { record "$key" "$1" "$2"; }
  rec lesson "$lesson"; rec build "$id"; rec topic "$topic"; rec kind "$kind"; rec labels "$labels"
  rec learner_files "$files"; rec requested "${wanted[$id]:-0}"
  must=${wanted[$id]:-0}
  why=""
  if [ "$status" != built ]; then
    why=${status#not built: }
    why="not built here: $why"
    [ "$cuda_off_here" = 1 ] && [ "$kind" = cuda ] && why="$why (no GPU answers nvidia-smi -L here, so the grade did not compile CUDA)"
    [ "$require_gpu" = 1 ] && must=1
  elif [[ ",$labels," != *,cpu,* ]] && [ "$gpu" = 0 ]; then
    why="a GPU lesson, and no GPU answers nvidia-smi -L here"
    [ "$require_gpu" = 1 ] && must=1
  fi
  if [ -n "$why" ]; then
    if [ "$must" = 1 ]; then
      rec status "NOT GRADED"; rec reason "$why"; rec graded 0; rec requested 1
      echo "== $id ($topic): NOT GRADED: $why"
      plan_failures=$((plan_failures + 1))
    else
      rec status SKIPPED; rec reason "$why"; rec graded 0
      echo "== $id ($topic): not graded here: $why"
    fi
    continue
  fi
  rec graded 1
  if [ "$list" = 1 ]; then
    rec status "WOULD GRADE"
    echo "== $id ($topic): would be graded"
    continue
  fi
  grade_build "$key" "$lesson" "$id" "$topic" "$labels" "$provides" "$program" "$tests"
done

if [ "$list" = 1 ]; then
  [ "$plan_failures" = 0 ]
  exit
fi

echo
python3 "$RESULTS" report "$RUN" ${report_args[@]+"${report_args[@]}"}
status=$?
if [ -n "$junit" ]; then
  mkdir -p "$junit" && cp "$RUN"/junit/*.xml "$junit"/ 2>/dev/null
fi
if [ -n "$out" ]; then
  mkdir -p "$out/logs" && cp "$RUN"/logs/*.log "$out/logs/" 2>/dev/null
fi
exit $status
