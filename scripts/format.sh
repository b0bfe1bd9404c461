#!/usr/bin/env bash
# Formats every C++ and CUDA file of the course with the committed .clang-format;
# `--check` changes nothing and fails if any file is not formatted (CI).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh')
if [ "${1:-}" = "--check" ]; then
  clang-format --dry-run --Werror "${files[@]}"
  echo "format.sh: ${#files[@]} files are formatted"
else
  clang-format -i "${files[@]}"
fi
