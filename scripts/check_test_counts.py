#!/usr/bin/env python3
"""No count of tests in the course's Markdown, checked in CI (well under a second).

A README that says "28 tests passed" or "the build has 3 CPU + 4 GPU tests" is false the day a
test is added (issue 38 found lesson 08 saying 28 and 29 where the build had 23, lesson 09 187
where it had 222). What stays true is what passed ("every test of the solution passed") and the
command that counts them (`ctest --test-dir build -L lesson08 -L gpu -N`). This check fails on a
number of tests or cases written into a tracked Markdown file:

    28 tests, 3 CPU tests, 110 of its 187 tests, 44/44 cases, tests failed out of 666, (15 of 15)

A grid before "tests" is a size, not a count ("the 17 × 33 tests"), and "lesson 06 tests that" a
verb. Run alone:
python3 scripts/check_test_counts.py (exit status 1 and file:line for each); --self-test checks
the patterns on examples.
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COUNT = re.compile(
    r"(?<![×x\d] )(?<![×x\d])(?<!lesson )\b\d+ (?:GPU |CPU |more |of (?:its |the )?\d+ )?"
    r"(?:tests|cases)\b"
    r"|\b\d+/\d+ (?:tests|cases)\b"
    r"|\btests failed out of \d+\b"
    r"|\(\d+ of \d+\)")


def counts(text):
    """[(line number, the count as written)] in a Markdown text."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for match in COUNT.finditer(line):
            found.append((number, match.group(0)))
    return found


def self_test():
    cases = [  # (text, should it be found)
        ("lesson 08's suite, 28 tests with the GPU ones", True),
        ("the solution's 3 CPU tests passed and its 4 GPU tests skipped", True),
        ("the shipped exercise failed 110 of its 187 tests", True),
        ("judge PASS; 44/44 cases passed", True),
        ("`100% tests passed, 0 tests failed out of 666`", True),
        ("every case included (15 of 15)", True),
        ("run the 17 × 33 tests under compute-sanitizer", False),
        ("every test of the solution passed", False),
        ("lesson 06 tests that too", False),
        ("the 5 x 7 tests first", False),
    ]
    wrong = [(text, expected) for text, expected in cases if bool(counts(text)) != expected]
    for text, expected in wrong:
        print(f"self-test: {'missed' if expected else 'wrongly found'}: {text!r}")
    print(f"check_test_counts self-test: {len(cases) - len(wrong)} of {len(cases)} cases right")
    return 1 if wrong else 0


def main(arguments):
    if arguments == ["--self-test"]:
        return self_test()
    if arguments:
        print("usage: check_test_counts.py [--self-test]", file=sys.stderr)
        return 2
    listed = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.split()
    problems = 0
    for name in listed:
        path = ROOT / name
        if not path.is_file():
            continue
        for number, count in counts(path.read_text(errors="replace")):
            problems += 1
            print(f"{name}:{number}: a count of tests, false once a test is added: {count}")
    if problems:
        print(f"check_test_counts: {problems} count(s); say what passed, or the command that "
              "counts them (ctest -N)")
        return 1
    print(f"check_test_counts: ok, no count of tests in {len(listed)} Markdown file(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
