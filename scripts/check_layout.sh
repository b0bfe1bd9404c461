#!/usr/bin/env bash
# The lesson layout, checked in CI (the rule of ARCHITECTURE: every line once, the learner's part
# in a small file):
#  - solutions/NN_topic/ holds exactly the learner's file(s) of the lesson, nothing else;
#  - each learner file exists in lessons/NN_topic/ as stubs that start with a TODO(lesson NN)
#    and differ from the solution;
#  - each learner file stays small (at most 150 lines);
#  - floors run one way (docs/ARCHITECTURE.md): a lesson includes and links only common/ and the
#    lessons of a lower number, never apps/, a higher lesson or the registry of every lesson:
#     . no code or build file in lessons/ or solutions/ names apps/, and no #include there reaches
#       out of its lesson's folder by a relative path;
#     . <build>/lesson_links.tsv (cmake/GsLesson.cmake: what each lesson's targets link and see):
#       the lesson's code (its libraries, learner-alone checks and registry) links and includes
#       only common/, course/ (gs_commit), the build's own targets (gs_warnings), external
#       packages, its own lesson and the lessons of
#       a lower number (a registry: their solutions, named in gs_add_lesson's USES); its programs
#       and suites, built around it by the floors above (course/'s main(), apps/' program that
#       completes it, tests/), never link a higher lesson nor gs_registry / gs_best_frame_loop
#       (every lesson's: its exercise builds without the others); lesson 10's solution module is
#       the exception: it is the program grayscott, every lesson's steppers by name, whose suite
#       compares its list with gray_scott's (the exercise's module links the registry of the
#       lessons lesson 10 USES, as any other lesson's exercise);
#    and within common/ no library includes a header of a floor above it (check_common_floors.py).
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
# A tutorial may point at a program's code; code and build files name nothing above the lesson.
if upward=$(grep -rn --exclude='*.md' "apps/" lessons solutions); then
  echo "$upward" | sed 's/^/FAIL (a lesson names apps\/, the floor above it) /'; status=1
fi
python3 - "$BUILD/lesson_links.tsv" <<'PY' || status=1
import csv, os, re, sys

failed = False
def fail(message):
    global failed
    failed = True
    print("FAIL " + message)

# Includes by a relative path that leave the lesson's folder (lessons/NN_topic/, solutions/NN_topic/).
for top in ("lessons", "solutions"):
    for folder in sorted(os.listdir(top)):
        root = os.path.join(top, folder)
        if not os.path.isdir(root):
            continue
        for path, _, files in os.walk(root):
            for name in files:
                if not name.endswith((".cpp", ".hpp", ".cu", ".cuh", ".h")):
                    continue
                file = os.path.join(path, name)
                with open(file, encoding="utf-8", errors="replace") as text:
                    for number, line in enumerate(text, 1):
                        m = re.match(r'\s*#\s*include\s*["<]([^">]+)[">]', line)
                        if not m or "../" not in m.group(1):
                            continue
                        target = os.path.normpath(os.path.join(path, m.group(1)))
                        if not (target + "/").startswith(root + "/"):
                            fail(f"{file}:{number}: #include \"{m.group(1)}\" reaches out of {root}/")

links = sys.argv[1]
if not os.path.exists(links):
    fail(f"{links} is missing: configure first")
    sys.exit(1)
registries = {"gs_registry", "gs_best_frame_loop"}
own_code = {"library", "registry"}
with open(links, newline="") as table:
    for row in csv.DictReader(table, delimiter="\t"):
        lesson, target, role, what, item, folder = (row[k] for k in
                                                    ("lesson", "target", "role", "what", "item", "folder"))
        n = int(lesson)
        where = f"lesson {lesson}: {target} ({role}) {what}s {item}"
        if what == "include":
            m = re.match(r"(lessons|solutions)/(\d\d)_", item)
            if m:
                if int(m.group(2)) > n:
                    fail(f"{where}: a higher lesson")
            elif item.startswith("common/"):
                pass
            elif role in own_code or not item.startswith(("apps/", "tests/")):
                fail(f"{where}: a lesson sees only common/ and lessons up to its own")
            continue
        if item in registries:
            if role != "module" or target.endswith("_exercise"):
                fail(f"{where}: every lesson's registry (name the lessons it uses: gs_add_lesson USES)")
            continue
        m = re.match(r"(?:test_)?lesson(\d\d)_", item)
        if m and int(m.group(1)) > n:
            fail(f"{where}: a higher lesson")
            continue
        m = re.match(r"lessons/(\d\d)_", folder)
        if m:
            if int(m.group(1)) > n:
                fail(f"{where}: a higher lesson")
        elif folder in ("-", ".", "common", "course"):  # ".": the build's own (gs_warnings)
            pass
        elif role in own_code or not folder.startswith(("apps", "tests")) or folder == "apps":
            fail(f"{where}, defined in {folder}/: a lesson links only common/ and lower lessons")
if not failed:
    print("ok   floors: each lesson includes and links only common/ and the lessons below it")
sys.exit(1 if failed else 0)
PY
# common/'s own floors (docs/ARCHITECTURE.md): no library includes a header of a floor above it.
python3 scripts/check_common_floors.py || status=1
for file in solutions/*/*; do
  [ -n "${expected_files[$file]:-}" ] || { echo "FAIL $file: solutions/ holds only the learner's files of built lessons"; status=1; }
done
exit $status
