#!/usr/bin/env bash
# Formats every C++ and CUDA file of the course with the committed .clang-format;
# `--check` changes nothing and fails if any file is not formatted (CI).
#
# clang-format is pinned to major version 14 (Debian 12's; also packaged as clang-format-14 on
# Ubuntu 22.04 and 24.04): each major version formats the same .clang-format a little
# differently (19 reformats five files that 14 leaves alone), so a check with another version
# would fail, or reformat, for no fault of the code. CLANG_FORMAT=/path/to/clang-format-14 picks
# one binary explicitly.
set -euo pipefail
cd "$(dirname "$0")/.."
pinned=14

major_of() { "$1" --version 2>/dev/null | sed -n 's/.*clang-format version \([0-9]*\).*/\1/p' | head -1; }
clang_format=""
found=()
for candidate in "${CLANG_FORMAT:-}" "clang-format-$pinned" clang-format; do
  [ -n "$candidate" ] && command -v "$candidate" > /dev/null 2>&1 || continue
  major=$(major_of "$candidate")
  if [ "$major" = "$pinned" ]; then
    clang_format=$candidate
    break
  fi
  found+=("$candidate (version ${major:-unknown})")
done
if [ -z "$clang_format" ]; then
  echo "format.sh: the course is formatted with clang-format $pinned, and other major versions" >&2
  echo "  format differently; found: ${found[*]:-no clang-format at all}." >&2
  echo "  Install it: sudo apt-get install clang-format-$pinned (Debian 12, Ubuntu 22.04/24.04;" >&2
  echo "  scripts/setup.sh does it), or: pip install clang-format==14.0.6; then run this again" >&2
  echo "  (CLANG_FORMAT=/path/to/it names one binary)." >&2
  exit 2
fi

mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh')
if [ "${1:-}" = "--check" ]; then
  "$clang_format" --dry-run --Werror "${files[@]}"
  echo "format.sh: ${#files[@]} files are formatted ($("$clang_format" --version | sed 's/^[^0-9]*//'))"
else
  "$clang_format" -i "${files[@]}"
fi
