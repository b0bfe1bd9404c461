#!/usr/bin/env bash
# The tests of scripts/grade.sh, run by CI (.ci/run): a throw-away "course" repository made from
# this working tree, a learner's fork cloned from it, and one grading per case, each checked
# through grade.sh's exit status and its --json output:
#   unsolved      the shipped exercises FAIL, with the failing test's message; JUnit written
#   solved        the solutions copied over the exercises (one committed, one not) PASS, with
#                 a speed-up
#   tampered      a test edited, the lesson's body edited (l01-regular marked as a GPU
#                 implementation, the attack that once turned 26/38 into PASS), another lesson's
#                 README edited: those lessons are INVALID, the files listed, and the grade was
#                 made with upstream's files (the tests still fail, none skipped)
#   cmake         a CMake edit that compiles the solution as the exercise: every lesson INVALID,
#                 the edit without effect
#   broken        lesson 02 does not compile: lesson 01 is still graded and passes
#   hang          a lesson that never returns is stopped by the per-test time limit
#   names         unknown lesson names are an error (exit 2); a lesson named but not built here
#                 fails; --list says what a CPU-only machine grades and skips; --require-gpu
#                 without a GPU fails
#   asan          lesson 01's solution is clean under AddressSanitizer + UBSan; an off-by-one
#                 that reads one float past the end passes the tests and fails there
#   teacher       a teacher grades a fork with an edited test from the course's own clone
#                 (--learner)
#   template      a repository made from a template (no shared history) is matched to upstream
#                 by its first commit's tree, upstream fetched from a path
#   symlink       lesson 01's file a symbolic link to the solution's: INVALID (the working tree,
#                 and a commit graded by a teacher with --learner), upstream's stub graded instead
#   include       lesson 01's file includes the solution's by a relative path (the solution is
#                 out of the tree while it compiles: it does not build), lesson 02's by an
#                 absolute path into the learner's own checkout (it builds and passes, and the
#                 compiler's dependency records show it): both INVALID, the include named
#   exit          lesson 02 as shipped plus a static constructor that exits 0 before the test
#                 runs (once: 73/73 PASS): FAIL, no report of the test from GoogleTest
#   reference     lesson 01's update_interior() as one call of gs::reference_step<float> (issue
#                 27: 44/44 PASS): the body no longer lets it see the reference (BUILD FAILED);
#                 with the header included, INVALID, the symbol named; the report has no empty
#                 speed-up column
#   report        the scoreboard of a made-up run (no build): a lesson whose GPU part was not
#                 graded is PARTIAL, not PASS, and the grade still passes; each skipped case is
#                 listed with its reason; no speed-up column when no lesson measured one
#   skips         a CPU test that skips saying "needs a GPU (CUDA)" is not allowed; a GPU-labelled
#                 one is (made-up run)
#   scaling       the measurement scripts name no fixed path under /tmp and build what they run
#   linktime      the test support's functions defined in the learner file: the judge FAILs,
#                 the definitions outside the lesson's namespace make it INVALID
#   has_include   the reference behind __has_include: INVALID, the trick and the symbol named
#   forged        an all-passed GoogleTest report forged by a static constructor: FAIL by the judge
#   spawn         std::system called from the learner file: INVALID, the call named
#   markdown      a compiler message holding a fence and a false PASS heading: the scoreboard
#                 shows one heading, the grader's
# (tests/grade/attacks/ holds the attacks' fragments.)
# Lessons 01 and 02 only, CPU, one -DGS_CUDA=OFF build reused by every case (--work; grade.sh lays
# each case's learner files into its pristine tree, and ninja rebuilds what read them).
#
#   bash tests/grade/test_grade.sh              # GS_KEEP=1 keeps the scratch folder
#   GS_CASES="hang asan" bash tests/grade/test_grade.sh   # only these cases
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/gs-grade-test.XXXXXX")
chmod 0755 "$T"  # the work folder inside must be reachable by nobody (lesson 08's tests, as root)
if [ "${GS_KEEP:-0}" = 1 ]; then echo "scratch folder: $T"; else trap 'rm -rf "$T"' EXIT; fi
export GS_CMAKE_ARGS="-DGS_CUDA=OFF" GIT_AUTHOR_NAME=grader GIT_AUTHOR_EMAIL=grader@example.org
export GIT_COMMITTER_NAME=grader GIT_COMMITTER_EMAIL=grader@example.org
unset GS_UPSTREAM
passed=0 failed=0 start=$SECONDS

# The gradings' work folder (--work): one for every case, its builds reused from case to case.
# GS_GRADE_TEST_WORK=DIR keeps it in DIR after the tests (.ci/run's Classroom check grades the
# same commit in it, reusing its builds).
WORK=${GS_GRADE_TEST_WORK:-$T/work}
# The course: this working tree's files (tracked and new, as they are now). When the working tree
# is clean, that is its HEAD commit, and the course is a clone of it (the same commit, so that a
# grading of this checkout against HEAD finds the pristine tree and builds of these gradings in
# WORK); else one commit of those files.
if [ -z "$(git -C "$ROOT" status --porcelain)" ] && git clone -q "$ROOT" "$T/course" 2> /dev/null \
   && git -C "$T/course" checkout -q -B main \
   && [ "$(git -C "$T/course" rev-parse HEAD)" = "$(git -C "$ROOT" rev-parse HEAD)" ]; then
  git -C "$T/course" remote remove origin
  echo "the course: $ROOT's HEAD, $(git -C "$ROOT" rev-parse --short HEAD) (a clean working tree)"
else
  rm -rf "$T/course" && mkdir -p "$T/course"
  (cd "$ROOT" && git ls-files -z --cached --others --exclude-standard \
     | while IFS= read -r -d '' file; do [ -e "$file" ] && printf '%s\0' "$file"; done \
     | tar --null -T - -cf -) | tar -x -C "$T/course"
  git -C "$T/course" init -q -b main
  git -C "$T/course" add -A
  git -C "$T/course" commit -q -m "the course"
  echo "the course: one commit of $ROOT's files as they are now (its working tree has changes)"
fi
git clone -q "$T/course" "$T/fork"
cd "$T/fork"

ok() { passed=$((passed + 1)); echo "ok   $*"; }
not_ok() { failed=$((failed + 1)); echo "FAIL $*"; }
# grade CASE EXPECTED_EXIT ARGS...: grade.sh in the fork; the log and JSON are $T/CASE.*
grade() {
  local name=$1 expected=$2 status=0
  shift 2
  local began=$SECONDS TIMEFORMAT='%U %S' cpu
  echo "== $name: grade.sh $*"
  # (bash's time: the CPU seconds of the grading, user + system, beside its wall time)
  { time bash scripts/grade.sh --no-setup --work "$WORK" --upstream origin/main \
      --json "$T/$name.json" "$@" > "$T/$name.log" 2>&1 || status=$?; } 2> "$T/$name.cpu"
  cpu=$(awk '{ printf "%.0f", $1 + $2 }' "$T/$name.cpu")
  if [ "$status" = "$expected" ]; then
    ok "$name: exit status $status ($((SECONDS - began)) s, $cpu s CPU)"
  else
    not_ok "$name: exit status $status, expected $expected; the log ends:"
    tail -40 "$T/$name.log" | sed 's/^/     /'
  fi
}
# expect CASE DESCRIPTION PYTHON-EXPRESSION: r is the JSON, L[build] a lesson build's entry
expect() {
  local name=$1 description=$2 expression=$3
  if python3 - "$T/$name.json" "$expression" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
L = {entry["build"]: entry for entry in r["lessons"]}
sys.exit(0 if eval(sys.argv[2]) else 1)
EOF
  then ok "$name: $description"; else not_ok "$name: $description"; fi
}
log_has() {  # log_has CASE DESCRIPTION REGEX
  if grep -Eq -- "$3" "$T/$1.log"; then ok "$1: $2"; else not_ok "$1: $2 (no /$3/ in the log)"; fi
}
solve() { cp "solutions/$1/$2" "lessons/$1/$2"; }
commit() { git add -A && git commit -q -m "$1"; }
branch() { git checkout -q -B "$1" origin/main; }
# attack FRAGMENT FILE MESSAGE [SED]: on a branch of upstream, the learner FILE (cut first by the sed
# script SED, when given) with tests/grade/attacks/FRAGMENT.fragment appended, committed.
attack() {
  branch "$1"
  [ -z "${4:-}" ] || sed -i "$4" "$2"
  cat "tests/grade/attacks/$1.fragment" >> "$2"
  commit "$3"
}

# --- unsolved: the shipped exercises fail
case_unsolved() {
  git checkout -q main  # the fork as cloned: the shipped stubs
  grade unsolved 1 01 02 --no-speed --junit "$T/junit-unsolved"
  expect unsolved "both lessons FAIL" "L['01']['status'] == 'FAIL' and L['02']['status'] == 'FAIL'"
  expect unsolved "tests ran and failed, none skipped" \
    "all(L[b]['tests']['failed'] > 0 and L[b]['tests']['skipped'] == 0 for b in ('01', '02'))"
  expect unsolved "the first failure's message is kept" "'Failure' in L['01']['details']"
  expect unsolved "valid, checked against upstream" \
    "r['invalid_files'] == [] and r['integrity'] == 'checked' and r['status'] == 'fail'"
  log_has unsolved "the failure is printed under its lesson" "^   first failing test: lesson01\.exercise\."
  if [ -s "$T/junit-unsolved/01.xml" ] && [ -s "$T/junit-unsolved/02.xml" ]; then
    ok "unsolved: JUnit XML for each lesson"
  else
    not_ok "unsolved: JUnit XML for each lesson"
  fi
}

# --- solved: lesson 01 committed, lesson 02 in the working tree only
case_solved() {
  branch solved
  solve 01_profiling interior.hpp
  commit "lesson 01 solved"
  solve 02_simd_threads row_loop.hpp
  grade solved 0 01 02 --no-sanitize
  expect solved "both lessons PASS" "L['01']['status'] == 'PASS' and L['02']['status'] == 'PASS'"
  expect solved "every test passed, none skipped" \
    "all(L[b]['tests']['passed'] == L[b]['tests']['total'] > 0 for b in ('01', '02'))"
  expect solved "a speed-up against l01-naive" "all(L[b]['speedup'] and L[b]['speedup'] > 0 for b in ('01', '02'))"
  expect solved "the uncommitted change is graded and said to be" "r['dirty'] is True"
  git checkout -q -- lessons
}

# --- tampered: a test, the lesson's body and another lesson's README edited
case_tampered() {
  branch tampered
  sed -i 's/^\(TEST.*\)$/\1  \/\/ edited/' tests/test_lesson01.cpp
  sed -i '0,/gs::Device::cpu,/s//gs::Device::gpu,/' lessons/01_profiling/stencil.cpp
  echo "My notes." >> lessons/02_simd_threads/README.md
  commit "tampered"
  grade tampered 1 01 02 --no-speed --no-sanitize
  expect tampered "lesson 01 INVALID, its test and body listed" \
    "L['01']['status'] == 'INVALID' and L['01']['invalid'] == ['tests/test_lesson01.cpp', 'lessons/01_profiling/stencil.cpp'] or sorted(L['01']['invalid']) == ['lessons/01_profiling/stencil.cpp', 'tests/test_lesson01.cpp']"
  expect tampered "lesson 02 INVALID for its README only" \
    "L['02']['status'] == 'INVALID' and L['02']['invalid'] == ['lessons/02_simd_threads/README.md']"
  expect tampered "graded with upstream's files: the unsolved exercise still fails, nothing skipped" \
    "L['01']['tests_verdict'] == 'FAIL' and L['01']['tests']['skipped'] == 0"
  expect tampered "every changed file listed" "len(r['invalid_files']) == 3 and r['status'] == 'invalid'"
}

# --- cmake: the build changed to compile the solution as the exercise
case_cmake() {
  branch cmake
  sed -i 's|set(learner_dir ${body_dir})|set(learner_dir ${PROJECT_SOURCE_DIR}/solutions/${number}_${topic})|' \
    cmake/GsLesson.cmake
  commit "CMake tampered"
  grade cmake 1 01 --no-speed --no-sanitize
  expect cmake "INVALID, the CMake file listed, the edit without effect" \
    "L['01']['status'] == 'INVALID' and r['invalid_files'] == ['cmake/GsLesson.cmake'] and L['01']['tests_verdict'] == 'FAIL'"
}

# --- broken: lesson 02 does not compile, lesson 01 is solved
case_broken() {
  branch broken
  solve 01_profiling interior.hpp
  echo "this does not compile;" >> lessons/02_simd_threads/row_loop.hpp
  commit "lesson 02 broken"
  grade broken 1 01 02 --no-speed --no-sanitize
  expect broken "lesson 01 PASS, lesson 02 BUILD FAILED with the compiler's message" \
    "L['01']['status'] == 'PASS' and L['02']['status'] == 'BUILD FAILED' and 'error' in L['02']['details'] and 'row_loop.hpp' in L['02']['details']"
}

# --- hang: a test that never ends is stopped by the per-test time limit
case_hang() {
  branch hang
  # (a loop that needs no header)
  sed -i 's|^inline void update_interior(const gs::State\& in, gs::State\& out, const gs::Rates\& r) {|&\n  for (volatile bool forever = true; forever;) {\n  }|' \
    lessons/01_profiling/interior.hpp
  commit "lesson 01 hangs"
  # Every test that calls update_interior() (most of lesson 01's) runs out its time limit, two
  # at a time, and the judge's l01-regular case too: 2 s keeps this case short, and is still well
  # above what a test that fails without hanging takes (grade_results.py calls a failure at the
  # limit's last half second a stop by the limit).
  grade hang 1 01 --timeout 2 --no-speed --no-sanitize
  expect hang "stopped by the time limit, and said so" \
    "L['01']['status'] == 'FAIL' and 'time limit per test is 2 s' in L['01']['details']"
}

# --- names: what is asked for must be graded
case_names() {
  branch names
  grade typo 2 1
  log_has typo "'1' is an unknown lesson" "unknown lesson '1'"
  grade unknown 2 99
  grade not_built 1 04 --no-speed --no-sanitize
  expect not_built "lesson 04 named but not built here: NOT GRADED" \
    "L['04']['status'] == 'NOT GRADED' and 'not built' in L['04']['reason'] and r['status'] == 'fail'"
  grade list 0 --list
  log_has list "a CPU-only machine grades lesson 01" "== 01 \(profiling\): would be graded"
  log_has list "and lists the GPU lessons as not graded here, with the reason" \
    "== 04 \(cuda_kernels\): not graded here: not built here: "
  grade require_gpu 1 --list --require-gpu
  log_has require_gpu "--require-gpu without a GPU fails the GPU lessons" "== 04 \(cuda_kernels\): NOT GRADED"
}

# --- asan: reads one float past the end of u, results unchanged (a read the point test cannot
#     see: it writes no edge and reads no weight)
case_asan() {
  branch asan
  solve 01_profiling interior.hpp
  commit "lesson 01 solved"
  grade asan_clean 0 01 --no-speed
  expect asan_clean "the solution is clean under AddressSanitizer + UBSan" \
    "L['01']['sanitizer'] == {'tools': 'asan+ubsan', 'verdict': 'clean'} and L['01']['status'] == 'PASS'"
  sed -i -e '/^inline void update_interior(/a\  volatile float past = in.u.data()[in.u.size()];' \
    -e '/^inline void update_interior(/a\  (void)past;' lessons/01_profiling/interior.hpp
  grep -q 'in.u.size()\];' lessons/01_profiling/interior.hpp || not_ok "asan: the overflow was not made"
  commit "one float past the end"
  grade asan 1 01 --no-speed
  expect asan "the tests pass, AddressSanitizer fails the lesson" \
    "L['01']['tests']['failed'] == 0 and L['01']['sanitizer']['verdict'] == 'FAILED' and L['01']['status'] == 'FAIL'"
  expect asan "the report is kept" "'heap-buffer-overflow' in L['01']['details']"
}

# --- teacher: a fork with an edited test, graded from the course's clone with its grader
case_teacher() {
  branch teacher
  echo "// edited" >> tests/test_lesson01.cpp
  commit "a test edited"
  git -C "$T/course" fetch -q "$T/fork" teacher:learner
  (cd "$T/course" && bash scripts/grade.sh --no-setup --work "$WORK" --learner learner \
     --upstream main --json "$T/teacher.json" --no-speed --no-sanitize 01) > "$T/teacher.log" 2>&1 \
    && not_ok "teacher: exit status 0" || ok "teacher: exit status not 0"
  expect teacher "INVALID, from the teacher's clone" \
    "L['01']['status'] == 'INVALID' and r['source'] == 'commit learner'"
}

# --- template: no shared history; its first commit has the tree of upstream's commit
case_template() {
  mkdir "$T/template"
  git -C "$T/course" archive main | tar -x -C "$T/template"
  (cd "$T/template" && git init -q -b main && git add -A && git commit -q -m "Initial commit" \
     && cp solutions/01_profiling/interior.hpp lessons/01_profiling/interior.hpp \
     && git commit -q -am "lesson 01 solved" \
     && bash scripts/grade.sh --no-setup --work "$WORK" --upstream "$T/course" \
          --json "$T/template.json" --no-speed --no-sanitize 01) > "$T/template.log" 2>&1 \
    && ok "template: exit status 0" || { not_ok "template: exit status not 0"; tail -20 "$T/template.log"; }
  expect template "matched to upstream's commit by tree, lesson 01 PASS" \
    "L['01']['status'] == 'PASS' and r['integrity'] == 'checked' and r['base'] == '$(git -C "$T/course" rev-parse main)'"
}

# --- symlink: a learner file that is a link to the solution's file
case_symlink() {
  branch symlink
  ln -sf ../../solutions/01_profiling/interior.hpp lessons/01_profiling/interior.hpp
  commit "lesson 01 linked to the solution"
  grade symlink 1 01 --no-speed --no-sanitize
  expect symlink "INVALID, the link named, upstream's stub graded (its tests fail)" \
    "L['01']['status'] == 'INVALID' and any('lessons/01_profiling/interior.hpp is a symbolic link (to ../../solutions/01_profiling/interior.hpp)' in x for x in L['01']['invalid_reasons']) and L['01']['tests_verdict'] == 'FAIL'"
  log_has symlink "the reason is printed under the lesson" "INVALID: lessons/01_profiling/interior.hpp is a symbolic link"
  git -C "$T/course" fetch -q "$T/fork" symlink:learner-symlink
  (cd "$T/course" && bash scripts/grade.sh --no-setup --work "$WORK" --learner learner-symlink \
     --upstream main --json "$T/symlink_commit.json" --no-speed --no-sanitize 01) \
    > "$T/symlink_commit.log" 2>&1 && not_ok "symlink_commit: exit status 0" || ok "symlink_commit: exit status not 0"
  expect symlink_commit "a commit graded with --learner: INVALID too" \
    "L['01']['status'] == 'INVALID' and any('is a symbolic link' in x for x in L['01']['invalid_reasons']) and L['01']['tests_verdict'] == 'FAIL'"
}

# --- include: learner files that include the solution's, relatively and absolutely
case_include() {
  branch include
  printf '#include "../../solutions/01_profiling/interior.hpp"\n' > lessons/01_profiling/interior.hpp
  printf '#include "%s/solutions/02_simd_threads/row_loop.hpp"\n' "$PWD" \
    > lessons/02_simd_threads/row_loop.hpp
  commit "lessons 01 and 02 include the solutions"
  grade include 1 01 02 --no-speed --no-sanitize
  expect include "lesson 01 INVALID for its relative include, which did not even compile" \
    "L['01']['status'] == 'INVALID' and L['01']['tests_verdict'] == 'BUILD FAILED' and any('#include \"../../solutions/01_profiling/interior.hpp\" reaches outside the lesson' in x for x in L['01']['invalid_reasons'])"
  expect include "lesson 02 INVALID for its absolute include, named by the text and by the compiler's records" \
    "L['02']['status'] == 'INVALID' and any('/solutions/02_simd_threads/row_loop.hpp\" reaches outside the lesson' in x for x in L['02']['invalid_reasons']) and any('a file of the learner' in x for x in L['02']['invalid_reasons']) and any('a copy of solutions/02_simd_threads/row_loop.hpp' in x for x in L['02']['invalid_reasons'])"
  expect include "lesson 02's borrowed solution passed its tests, and it does not count" \
    "L['02']['tests_verdict'] == 'PASS' and r['status'] == 'invalid'"
}

# --- exit: the test process exits 0 before GoogleTest runs the test (an attack that once passed)
case_exit() {
  branch exit
  cat >> lessons/02_simd_threads/row_loop.hpp <<'EOF'
#include <cstdlib>
#include <cstring>
__attribute__((constructor)) static void f(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (!std::strncmp(argv[i], "--gtest_filter=", 15)) std::_Exit(0);
}
EOF
  commit "lesson 02: exit 0 before the test"
  grade exit 1 02 --no-speed --no-sanitize
  expect exit "FAIL: no test counts as passed, each for want of GoogleTest's report" \
    "L['02']['status'] == 'FAIL' and L['02']['tests']['passed'] == 0 and L['02']['tests']['failed'] == L['02']['tests']['total'] > 0 and 'no report of this test from GoogleTest' in L['02']['details']"
}

# --- reference: the exercise as one call of the reference (an attack that once passed)
case_reference() {
  branch reference
  sed -i '/^inline void update_interior/,$d' lessons/01_profiling/interior.hpp
  cat >> lessons/01_profiling/interior.hpp <<'EOF'
inline void update_interior(const gs::State& in, gs::State& out, const gs::Rates& r) {
  gs::reference_step<float>(in.rows, in.cols, in.u.data(), in.v.data(), out.u.data(),
                            out.v.data(), r);
}
}  // namespace interior
EOF
  commit "lesson 01: the reference's step"
  grade reference 1 01 --no-speed --no-sanitize
  expect reference "as reported: the reference is out of sight, it does not compile" \
    "L['01']['status'] == 'BUILD FAILED' and 'reference_step' in L['01']['details']"
  # (interior.hpp is included at file scope: the header goes at its top)
  sed -i '/^#pragma once/a #include "gs/reference.hpp"' lessons/01_profiling/interior.hpp
  commit "lesson 01: the reference's step, its header included"
  grade reference_included 1 01 --no-speed --no-sanitize
  # (the reference's step writes the edges too: lesson 01's point test fails it as well)
  expect reference_included "with its header: INVALID for the symbol it uses" \
    "L['01']['status'] == 'INVALID' and any('gs::reference_step<float>' in x and 'the reference implementation' in x for x in L['01']['invalid_reasons'])"
  log_has reference_included "no speed-up column where no speed was measured" \
    "^\\| lesson \\| build \\| judge \\| cases passed \\| skipped \\| sanitizer \\| time \\| status \\|$"
}

# --- report: the scoreboard of a made-up run, as grade.sh records one
case_report() {
  local run=$T/report-run
  mkdir -p "$run/records"
  printf 'commit=0123456789abcdef\nintegrity=checked\nbase=fedcba9876543210\n' > "$run/meta"
  printf '%s\n' lesson=08 build=08 topic=multi_gpu labels=cpu,gpu graded=1 requested=0 \
    passed=18 failed=0 skipped=1 total=19 tests_verdict=PARTIAL status=PARTIAL \
    "reason=not graded here: GPU (its GPU code is not compiled in this build (no CUDA))" \
    > "$run/records/001-08.rec"
  printf 'lesson08.exercise.Lesson08Gpu.OneRank\tthis build has no CUDA support\tallowed\n' \
    > "$run/records/001-08.skips"
  python3 scripts/grade_results.py report "$run" --json "$T/report.json" > "$T/report.log" \
    && ok "report: exit status 0" || not_ok "report: exit status not 0"
  expect report "PARTIAL, the grade a pass that says so" \
    "L['08']['status'] == 'PARTIAL' and r['status'] == 'pass' and r['partial'] == ['08'] and 'PARTIAL' in r['summary']"
  expect report "the skip and its reason" \
    "L['08']['skips'] == [{'test': 'lesson08.exercise.Lesson08Gpu.OneRank', 'reason': 'this build has no CUDA support', 'allowed': True}]"
  log_has report "the skip in the scoreboard" "^- 08 \`lesson08.exercise.Lesson08Gpu.OneRank\`: this build has no CUDA support"
  if grep -q "speed-up" "$T/report.log"; then not_ok "report: a speed-up column or footnote"; else ok "report: no speed-up column or footnote"; fi
}


# --- The attacks on the verdict found on 2026-11-28 (tests/grade/attacks/ holds their files): each
# ends FAIL or INVALID with its reason named, and a solved lesson still passes (case solved).

# linktime: the learner file defines the tests' own comparisons, which the linker takes in place
# of the test support's (once: lesson 01 PASS 44/44 with the exercise unsolved)
case_linktime() {
  attack linktime lessons/01_profiling/interior.hpp "lesson 01: the tests' comparisons replaced"
  grade linktime 1 01 --no-speed --no-sanitize
  expect linktime "the judge's cases fail (it links none of the learner's code)" \
    "L['01']['judge']['status'] == 'FAIL' and 'the reference' in L['01']['judge']['detail']"
  expect linktime "INVALID: the definitions outside the lesson's namespace named" \
    "L['01']['status'] == 'INVALID' and any('defines gs::test::states_match' in x and 'outside its lesson' in x for x in L['01']['invalid_reasons'])"
}

# has_include: the reference called only where the solution is out of sight (once: PASS 44/44)
case_has_include() {
  attack has_include lessons/01_profiling/interior.hpp \
    "lesson 01: the reference behind __has_include" '/^inline void update_interior/,$d'
  grade has_include 1 01 --no-speed --no-sanitize
  expect has_include "INVALID: __has_include named" \
    "L['01']['status'] == 'INVALID' and any('__has_include' in x for x in L['01']['invalid_reasons'])"
  expect has_include "and the reference's symbol named, from the graded object" \
    "any('gs::reference' in x for x in L['01']['invalid_reasons'])"
}

# forged: a static constructor writes an all-passed report where GTEST_OUTPUT says and exits 0
# (once: lesson 02's stubs PASS 73/73)
case_forged() {
  attack forged_report lessons/02_simd_threads/row_loop.hpp "lesson 02: a forged report"
  grade forged 1 02 --no-speed --no-sanitize
  expect forged "FAIL by the judge, whatever the reports say" \
    "L['02']['status'] == 'FAIL' and L['02']['judge']['status'] == 'FAIL' and 'judge' in L['02']['reason']"
  expect forged "the learner's code ran in the sandbox" "r['sandboxed'] is True"
}

# spawn: a program started from the learner's code (std::system here; fork, exec, posix_spawn,
# popen and inline assembly the same), which could build and run the solution of the learner's
# own checkout while the judge waits
case_spawn() {
  attack spawn lessons/01_profiling/interior.hpp "lesson 01: a shell started from its code"
  grade spawn 1 01 --no-speed --no-sanitize
  expect spawn "INVALID: the call of system named" \
    "L['01']['status'] == 'INVALID' and any('uses system' in x and 'another program' in x for x in L['01']['invalid_reasons'])"
}

# markdown: a compiler message that holds a fence and a false heading (once: a second PASS
# heading in the --markdown scoreboard)
case_markdown() {
  attack markdown lessons/01_profiling/interior.hpp "lesson 01: a static_assert that writes Markdown"
  grade markdown 1 01 --no-speed --no-sanitize --markdown "$T/markdown.md"
  # Headings outside fenced blocks, read as CommonMark reads fences (a fence of N backticks ends
  # at a line of N or more): what a reader of the scoreboard sees as headings.
  local headings
  headings=$(python3 - "$T/markdown.md" <<'PY'
import re, sys
fence = None
for line in open(sys.argv[1], encoding="utf-8"):
    found = re.match(r"^ {0,3}(`{3,})", line)
    if fence is None and found:
        fence = len(found.group(1))
    elif fence is not None and found and len(found.group(1)) >= fence and not line.strip("`\n "):
        fence = None
    elif fence is None and re.match(r"^ {0,3}#{1,6} ", line):
        print(line.rstrip())
PY
)
  if [ "$(printf '%s\n' "$headings" | grep -c .)" = 1 ] && [[ "$headings" == *": FAIL" ]]; then
    ok "markdown: one heading outside the quoted text, the grader's, and it says FAIL"
  else
    not_ok "markdown: the scoreboard shows a heading the grader did not write: $headings"
  fi
}

# skips: a CPU test that skips saying "GPU" is not a GPU test (once: lesson 10 PASS, PARTIAL with
# 128 CPU tests skipped); checked on a made-up run of grade_results.py, as grade.sh calls it
case_skips() {
  local run=$T/skips-run
  mkdir -p "$run/reports/gtest.Suite.Cpu" "$run/reports/gtest.Suite.Gpu"
  cat > "$run/junit.xml" <<'XML'
<testsuite><testcase name="lesson10.exercise.Suite.Cpu" status="run"/><testcase name="lesson10.exercise.Suite.Gpu" status="run"/></testsuite>
XML
  cat > "$run/tests.json" <<'JSON'
{"tests": [{"name": "lesson10.exercise.Suite.Cpu", "command": ["grade_report_wrapper.sh", "t", "--gtest_filter=Suite.Cpu"], "properties": [{"name": "LABELS", "value": ["lesson10", "exercise", "cpu"]}]},
           {"name": "lesson10.exercise.Suite.Gpu", "command": ["grade_report_wrapper.sh", "t", "--gtest_filter=Suite.Gpu"], "properties": [{"name": "LABELS", "value": ["lesson10", "exercise", "gpu"]}]}]}
JSON
  for which in Cpu Gpu; do
    cat > "$run/reports/gtest.Suite.$which/1.xml" <<XML
<testsuites><testsuite name="Suite"><testcase classname="Suite" name="$which" status="run" result="skipped"><skipped message="needs a GPU (CUDA) here"/></testcase></testsuite></testsuites>
XML
  done
  local line
  # (all of its output read, then its first line: `| head -1` could close the pipe before the
  # script's next line, which then fails with EPIPE when Python's output is unbuffered)
  line=$(python3 scripts/grade_results.py results "$run/junit.xml" --tests "$run/tests.json" \
           --reports "$run/reports" --allow-gpu-skips \
           --allowed-skips tests/grade/allowed_skips.txt)
  line=${line%%$'\n'*}
  # passed failed skipped total disallowed
  if [ "$line" = "0 0 2 2 1" ]; then
    ok "skips: the CPU test's skip is not allowed for its message, the GPU test's is by its label"
  else
    not_ok "skips: expected '0 0 2 2 1', got '$line'"
  fi
}

# scaling: the measurement scripts build what they run, in a folder of their own, and write only
# under $OUT or mktemp's folders: a program planted at a fixed path (measure_scaling.sh once ran
# /tmp/gs-scaling/bin/lesson08_solution when it existed) is never run. They need a GPU, so the
# check here reads them.
case_scaling() {
  local script found=0
  for script in scripts/measure_scaling.sh scripts/measure_output.sh scripts/gpu_check.sh \
                scripts/container_check.sh; do
    if grep -nE '/tmp/gs-[a-z-]+(/|\.h5|[^.a-zA-Z-]|$)' "$script" | grep -v 'mktemp' | grep -q .; then
      not_ok "scaling: $script names a fixed path under /tmp"
      found=1
    fi
  done
  [ "$found" = 1 ] || ok "scaling: no measurement script names a fixed path under /tmp"
  if grep -q 'if \[ ! -x "\$BUILD/bin' scripts/measure_scaling.sh; then
    not_ok "scaling: measure_scaling.sh runs a program it did not build"
  else
    ok "scaling: measure_scaling.sh builds before it runs"
  fi
}

cases=${GS_CASES:-report unsolved solved tampered cmake broken hang names asan teacher template symlink include exit reference skips scaling linktime has_include forged spawn markdown}
for name in $cases; do
  "case_$name"
done

echo
echo "grade.sh's tests took $((SECONDS - start)) s"
echo "test_grade: $passed passed, $failed failed"
[ "$failed" = 0 ]
