#!/usr/bin/env bash
# Runs the command blocks of the repository's Markdown that are marked to run in CI, so that a
# README's commands cannot rot unnoticed (a renamed target, program, flag or implementation).
#
# A block runs when its opening fence has the info string `sh ci` (GitHub still highlights it as
# shell); every other block is left alone. Mark a block `sh ci` only if it runs on the CPU build
# (no GPU, no root, no ffmpeg, perf or valgrind) in well under 30 s, writes nothing outside the
# build folder and /tmp, and passes on the shipped exercises (a learner's "run the tests" block
# fails until the exercise is done: leave it plain `sh`).
#
# Each block runs on its own, in a fresh non-interactive bash started in the repository root,
# with `set -e -o pipefail`: any command that fails fails the block. Blocks are written for a
# build in build/; with BUILD=other, the words `build` and `build/...` that name that folder are
# rewritten to it before the block runs. For each failing block the script prints file:line (of
# the opening fence) and the block's output, and at the end it exits nonzero.
#
# Usage: bash scripts/run_readme_commands.sh            # against build/
#        BUILD=build-ci bash scripts/run_readme_commands.sh
# The Markdown files: README.md, lessons/*/README.md and every other Markdown file git tracks.
# GS_README_BLOCK_TIMEOUT (seconds, default 120) stops a block that hangs.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
root=$(pwd)
BUILD=${BUILD:-build}
timeout_seconds=${GS_README_BLOCK_TIMEOUT:-120}

if [[ ! "$BUILD" =~ ^[A-Za-z0-9_./-]+$ ]]; then
  echo "run_readme_commands.sh: BUILD='$BUILD': use a plain relative or absolute path"
  exit 2
fi
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  echo "run_readme_commands.sh: $BUILD is not a configured build folder: configure and build" \
       "first (cmake --preset default && cmake --build build)"
  exit 2
fi

# The Markdown files: git's list when this is a clone, else the files on disk.
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.md' | sort)
else
  mapfile -t files < <(find . -name '*.md' -not -path './build*' -not -path './.git/*' \
                         -not -path '*/node_modules/*' | sed 's|^\./||' | sort)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Splits the `sh ci` blocks of one file into $work/block-N.sh and writes "N<TAB>line" for each
# to $work/blocks.tsv. A fence is three or more backticks indented by at most three spaces; the
# block ends at a fence of at least as many backticks with nothing after it. The block's own
# indentation (a block inside a list item) is removed. (POSIX awk: mawk runs it too.)
extract_blocks() {
  awk -v out="$work" '
    # Sets fence_indent, fence_length and fence_rest for a line that starts a fence; 0 if not.
    function fence_of(line,    ticks) {
      if (!match(line, /^ *`+/)) return 0
      fence_indent = index(line, "`") - 1
      ticks = substr(line, fence_indent + 1, RLENGTH - fence_indent)
      fence_length = length(ticks)
      fence_rest = substr(line, RLENGTH + 1)
      return fence_indent <= 3 && fence_length >= 3
    }
    {
      if (!inside) {
        if (!fence_of($0)) next
        info = fence_rest
        gsub(/^[ \t]+|[ \t]+$/, "", info)
        inside = 1; open_length = fence_length; indent = fence_indent
        running = (info == "sh ci")
        if (running) {
          count++; file = out "/block-" count ".sh"; printf "" > file
          print count "\t" NR > (out "/blocks.tsv")
        }
        next
      }
      if (fence_of($0) && fence_length >= open_length && fence_rest ~ /^[ \t]*$/) {
        if (running) close(file)
        inside = 0; running = 0; next
      }
      if (running) {
        line = $0
        if (indent > 0 && substr(line, 1, indent) ~ /^ *$/) line = substr(line, indent + 1)
        print line > file
      }
    }' "$1"
}

# `build` as a word and `build/...` become $BUILD (only when BUILD is not build).
retarget() {
  if [ "$BUILD" = build ]; then
    cat "$1"
  else
    sed -E "s#(^|[[:space:]=\"'(])build(/|[[:space:];)]|\$)#\\1${BUILD}\\2#g" "$1"
  fi
}

blocks=0
failures=0
for markdown in "${files[@]}"; do
  rm -f "$work"/block-*.sh "$work/blocks.tsv"
  touch "$work/blocks.tsv"
  extract_blocks "$markdown"
  while IFS=$'\t' read -r number line; do
    blocks=$((blocks + 1))
    script="$work/run.sh"
    { echo 'set -e -o pipefail'; retarget "$work/block-$number.sh"; } > "$script"
    start=$SECONDS
    if (cd "$root" && BUILD="$BUILD" timeout "$timeout_seconds" \
          bash --noprofile --norc "$script" < /dev/null > "$work/output" 2>&1); then
      echo "ok   $markdown:$line ($((SECONDS - start)) s)"
    else
      status=$?
      failures=$((failures + 1))
      echo "FAIL $markdown:$line (exit status $status after $((SECONDS - start)) s$(
        [ "$status" = 124 ] && echo ", stopped after ${timeout_seconds} s"))"
      echo "---- the block:"
      cat "$work/block-$number.sh"
      echo "---- its output:"
      cat "$work/output"
      echo "----"
    fi
  done < "$work/blocks.tsv"
done

if [ "$failures" -gt 0 ]; then
  echo "run_readme_commands.sh: $failures of $blocks block(s) marked 'sh ci' failed"
  exit 1
fi
echo "run_readme_commands.sh: all $blocks block(s) marked 'sh ci' passed (BUILD=$BUILD)"
