#!/usr/bin/env bash
# Runs one test of a grading so that the test framework writes its own report of it where the
# grader looks (scripts/grade.sh; docs/TEACHING.md says what this guarantees and what it cannot).
#
# grade.sh copies this file into its work folder and configures the build with it as
# CMAKE_CROSSCOMPILING_EMULATOR (and CMAKE_TEST_LAUNCHER, CMake 3.29 and later): CTest then starts
# every test of a lesson through it, `wrapper test_lessonNN_exercise --gtest_filter=Suite.Name ...`
# for GoogleTest, `wrapper test_lesson10_exercise -k TestClass` for lesson 10's pytest classes.
# The exit status alone says nothing: a learner's static constructor that exits 0 before the test
# runs looked like a pass. So each test process gets a report file of its own, in a folder made
# fresh for each CTest run (GS_GRADE_REPORTS, random), which GoogleTest (GTEST_OUTPUT) or pytest
# (--junitxml) writes once the test has run; grade_results.py counts a test only from its report.
#
# Outside a grading (GS_GRADE_REPORTS unset: ctest run by hand in a kept build), and for anything
# that is not a test (the discovery's --gtest_list_tests, a program run by the build), it only
# runs the command.
set -euo pipefail
if [ -z "${GS_GRADE_REPORTS:-}" ] || [ -n "${GS_GRADE_WRAPPED:-}" ]; then
  exec "$@"  # not grading, or already wrapped (emulator and launcher both set)
fi
name=""
previous=""
for argument in "$@"; do
  case "$argument" in
    --gtest_list_tests) exec "$@" ;;
    --gtest_filter=*) name=gtest.${argument#--gtest_filter=} ;;
  esac
  [ "$previous" = -k ] && [ -z "$name" ] && name=pytest.$argument
  previous=$argument
done
[ -n "$name" ] || exec "$@"

# One folder per test (its name made safe for a file name), one file per process in it.
folder=$GS_GRADE_REPORTS/$(printf '%s' "$name" | tr -c 'A-Za-z0-9._-' '_')
mkdir -p "$folder"
report=$folder/$$.xml  # exec keeps the process id: the test's own
export GS_GRADE_WRAPPED=1
unset GS_GRADE_REPORTS  # the test needs its own file's name, not the folder of every report
case "$name" in
  gtest.*) export GTEST_OUTPUT="xml:$report" ;;
  pytest.*) export PYTEST_ADDOPTS="${PYTEST_ADDOPTS:+$PYTEST_ADDOPTS }--junitxml=$report" ;;
esac
# In the sandbox (GS_GRADE_SANDBOX=1, where grade.sh found bubblewrap working): the file system
# read-only but for this test's report folder, its temporary folder (TEST_TMPDIR) and a /tmp of
# its own (empty, writable by every user: a test that drops to the user nobody still has one);
# the grading's work folder (this script's), which may lie under /tmp, is laid over it read-only.
# No network. The test cannot change the judge, the build, the records or another test's report.
# (A report it forges in its own folder is still possible: the judge decides a grade.)
if [ "${GS_GRADE_SANDBOX:-0}" = 1 ]; then
  unset GS_GRADE_SANDBOX
  work_dir=$(cd "$(dirname "$0")" && pwd)
  jail=(bwrap --ro-bind / / --dev-bind /dev /dev --proc /proc --perms 1777 --tmpfs /tmp
        --ro-bind "$work_dir" "$work_dir" --bind "$folder" "$folder"
        --unshare-net --unshare-ipc --die-with-parent)
  if [ -n "${TEST_TMPDIR:-}" ]; then
    mkdir -p "$TEST_TMPDIR"
    jail+=(--bind "$TEST_TMPDIR" "$TEST_TMPDIR")
  fi
  exec "${jail[@]}" -- "$@"
fi
exec "$@"
