#!/usr/bin/env bash
# The course's test command (the README's second quick-start command): installs what is missing,
# configures and builds if needed, then runs the tests of common/, of the programs and of every
# lesson's solution. GPU tests skip, saying why, on a machine without a GPU. Exercises are graded
# separately by scripts/grade.sh. Extra arguments go to ctest (e.g. -L lesson02).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --quiet --no-slides
[ -f build/CMakeCache.txt ] || cmake --preset default
cmake --build build -j "$(nproc)"
ctest --test-dir build --label-exclude exercise --output-on-failure -j "$(nproc)" "$@"
