#!/usr/bin/env bash
# The lesson layout, checked in CI (the rule of ARCHITECTURE: every line once, the learner's part
# in a small file):
#  - solutions/NN_topic/ holds exactly the learner's file(s) of the lesson, nothing else;
#  - each learner file exists in lessons/NN_topic/ as stubs that start with a TODO(lesson NN)
#    and differ from the solution;
#  - each learner file stays small (at most 150 lines);
#  - floors run one way: nothing in lessons/ or solutions/ names apps/ (a lesson includes only
#    common/ and its own folder; the registry's interface is common/'s gs/registry.hpp), and
#    within common/ no library includes a header of a floor above it (check_common_floors.py).
# The lesson list comes from the build (<build>/lessons.tsv, written by cmake/GsLesson.cmake).
# That each shipped exercise fails its tests is a CTest test of its own (label selftest).
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
manifest=$BUILD/lessons.tsv
[ -f "$manifest" ] || { echo "check_layout.sh: $manifest is missing: configure first"; exit 1; }
status=0
declare -A expected_files
while IFS=$'\t' read -r lesson build topic kind labels provides learner rest; do
  [ "$lesson" = lesson ] && continue
  [ "$learner" = - ] && continue
  folder=${lesson}_${topic}
  for exercise in $learner; do
    name=$(basename "$exercise")
    solution=solutions/$folder/$name
    expected_files[$solution]=1
    if [ ! -f "$exercise" ] || [ ! -f "$solution" ]; then
      echo "FAIL $exercise or $solution is missing"; status=1; continue
    fi
    grep -q "TODO(lesson $lesson)" "$exercise" || { echo "FAIL $exercise has no 'TODO(lesson $lesson)'"; status=1; }
    cmp -s "$exercise" "$solution" && { echo "FAIL $exercise is identical to its solution"; status=1; }
    for file in "$exercise" "$solution"; do
      lines=$(wc -l < "$file")
      [ "$lines" -le 150 ] || { echo "FAIL $file has $lines lines (a learner's file stays under 150)"; status=1; }
    done
    echo "ok   $exercise ($(wc -l < "$exercise") lines) / $solution ($(wc -l < "$solution") lines)"
  done
done < "$manifest"
if upward=$(grep -rn "apps/" lessons solutions); then
  echo "$upward" | sed 's/^/FAIL (a lesson names apps\/, the floor above it) /'; status=1
fi
# common/'s own floors (docs/ARCHITECTURE.md): no library includes a header of a floor above it.
python3 scripts/check_common_floors.py || status=1
for file in solutions/*/*; do
  [ -n "${expected_files[$file]:-}" ] || { echo "FAIL $file: solutions/ holds only the learner's files of built lessons"; status=1; }
done
exit $status
