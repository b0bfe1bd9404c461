#!/usr/bin/env bash
# The course's test command (the README's second quick-start command): installs what is missing,
# configures and builds if needed, then runs the tests of common/, of the programs, of every
# lesson's solution, and the tests of the tests (each shipped exercise must fail its suite).
# GPU tests skip, saying why, on a machine without a GPU. The shipped exercises' own test results
# (label exercise: they fail, as they must) are left to scripts/grade.sh. Extra arguments go to
# ctest (e.g. -L lesson02, or --output-junit results.xml).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --quiet --no-slides
[ -f build/CMakeCache.txt ] || cmake --preset default
cmake --build build -j "$(nproc)"
ctest --test-dir build --label-exclude '^exercise$' --output-on-failure -j "$(nproc)" "$@"
# Say once, plainly, why the GPU tests were skipped (each test's own output says it too).
if [ -x build/bin/gray_scott ] && ! reason=$(build/bin/gray_scott --device 2>&1); then
  echo "test.sh: the GPU tests above were skipped: ${reason}"
fi
