#!/usr/bin/env python3
"""The reading and writing half of scripts/grade.sh (standard library only).

grade.sh builds and runs; CTest writes each lesson's results as JUnit XML (--output-junit). This
script reads those with a real XML parser and writes what people and machines read:

  grade_results.py junit FILE [--strip PREFIX] [--timeout SECONDS]
      One line "passed failed skipped total" for the CTest JUnit FILE, then, when a test failed,
      its name and the first lines of its message (a GoogleTest failure, a sanitizer report, a
      timeout: SECONDS is CTest's limit per test); when every test skipped, the reason. PREFIX
      (the pristine tree's path) is cut from file names so a message points at the learner's
      own paths.

  grade_results.py includes --tree TREE --lesson-folder lessons/NN_topic --learner FILE...
                   [--build DIR --target T...] [--checkout DIR] [--work DIR]
      What a learner's file reaches beyond its lesson, one line per problem ("FILE: why"), none
      when all is well; grade.sh makes the lesson INVALID for each. Two checks:
      - the text of each learner FILE (relative to TREE): an #include whose name is absolute or
        has a ".." component, or that names no file literally (a macro), reaches outside the
        folders a learner file may use (its own lesson folder, common/include, the system);
      - with --build, the dependencies the compiler recorded (`ninja -t deps`) for every object
        of the targets T (the lesson's exercise: its body, program and tests): none may be a file
        under TREE/solutions/ or another lesson's folder of TREE, a file of the learner's own
        checkout DIR (outside the grading's work folder), a file under /proc or /dev, a file that
        is gone, or a file whose content is a solution's (a copy planted elsewhere).

  grade_results.py report RUN_DIR [--json FILE] [--markdown FILE]...
      Reads RUN_DIR/meta and RUN_DIR/records/*.rec (key=value lines grade.sh wrote, one record
      per lesson build, with RUN_DIR/records/<build>.details beside it), prints the scoreboard in
      markdown, writes it to FILE with --markdown and the results as JSON with --json. Exits 0
      when the grade passes, 1 when it does not (the rules are in grade.sh's header).
"""
import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

EXCERPT_LINES = 14
SANITIZER_REPORT = re.compile(
    r"ERROR: (Address|Leak)Sanitizer|runtime error:|WARNING: \w+Sanitizer|"
    r"========= (Invalid|Race|Barrier|Program hit|ERROR SUMMARY: [1-9])")


def read_junit(path):
    """(passed, failed, skipped, total, cases) of a CTest JUnit file; cases: [(status, element)]."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return 0, 0, 0, 0, []
    cases = []
    for case in root.iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None \
                or case.get("status") == "fail":
            cases.append(("failed", case))
        elif case.find("skipped") is not None or case.get("status") in ("notrun", "disabled"):
            cases.append(("skipped", case))
        else:
            cases.append(("passed", case))
    count = {status: sum(1 for s, _ in cases if s == status)
             for status in ("passed", "failed", "skipped")}
    return count["passed"], count["failed"], count["skipped"], len(cases), cases


def case_output(case):
    text = ""
    for tag in ("system-out", "system-err"):
        node = case.find(tag)
        if node is not None and node.text:
            text += node.text
    return text


def excerpt(case, strip, timeout):
    """The lines of a failing test's output that say what went wrong."""
    seconds = float(case.get("time") or 0)
    if timeout and seconds >= timeout - 0.5:
        return [f"stopped after {seconds:.0f} s: the time limit per test is {timeout:g} s (a hang?)"]
    lines = [line.rstrip() for line in case_output(case).splitlines()]
    if strip:
        lines = [line.replace(strip.rstrip("/") + "/", "") for line in lines]
    message = ""
    failure = case.find("failure")
    if failure is not None:
        message = failure.get("message", "") or ""
    # A sanitizer's report: its first line and the frames after it.
    for index, line in enumerate(lines):
        if SANITIZER_REPORT.search(line):
            picked = [l for l in lines[index:index + 40] if l.strip()]
            frames = [l for l in picked[1:] if re.match(r"\s*#\d+ ", l) or "SUMMARY" in l
                      or l.startswith("=========")]
            return [picked[0]] + frames[:EXCERPT_LINES - 1]
    # GoogleTest: from the first "Failure" (or the crash) to the test's FAILED line.
    start = next((i for i, l in enumerate(lines) if re.search(r": Failure$|error: |terminate", l)),
                 None)
    if start is not None:
        picked = []
        for line in lines[start:]:
            if line.startswith("[  FAILED  ]"):
                break
            if line.strip():
                picked.append(line)
        return picked[:EXCERPT_LINES]
    tail = [l for l in lines if l.strip() and not l.startswith("[") and "gtest_main" not in l
            and not l.startswith("Note: Google Test filter")]
    if message and message != "":
        return [message] + tail[-(EXCERPT_LINES - 1):]
    return tail[-EXCERPT_LINES:] or ["(no output: see the JUnit file)"]


def junit_command(args):
    passed, failed, skipped, total, cases = read_junit(args.file)
    print(passed, failed, skipped, total)
    for status, case in cases:
        if status == "failed":
            print(f"first failing test: {case.get('name')}")
            for line in excerpt(case, args.strip, args.timeout):
                print(f"  {line}")
            return 0
    if total and skipped == total:
        case = cases[0][1]
        node = case.find("skipped")
        reason = node.get("message", "") if node is not None else ""
        found = re.search(r"Skipped\s*\n?(.*)", case_output(case))
        if found and found.group(1).strip():
            reason = found.group(1).strip()
        print(f"every test skipped, e.g. {case.get('name')}: {reason or 'no reason given'}")
    return 0


INCLUDE = re.compile(r'^\s*#\s*(include|include_next|import)\b\s*(.*)$')
NAMED = re.compile(r'^(["<])([^">]*)[">]')


def include_problems(path, shown):
    """The #include lines of learner file @p path that reach outside its lesson (text check)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            text = file.read()
    except OSError as error:
        return [f"{shown}: cannot be read ({error.strerror})"]
    lines = text.splitlines()
    problems = []
    index = 0
    while index < len(lines):
        number, line = index + 1, lines[index]
        while line.endswith("\\") and index + 1 < len(lines):  # one directive over lines
            index += 1
            line = line[:-1] + lines[index]
        index += 1
        found = INCLUDE.match(line)
        if not found:
            continue
        operand = found.group(2).strip()
        named = NAMED.match(operand)
        if not named:
            problems.append(f"{shown}:{number}: #{found.group(1)} {operand[:80]!r} does not name a "
                            f"file literally: a learner file may include only files of its own "
                            f"lesson folder, common/include and the system, by name")
            continue
        name = named.group(2)
        if name.startswith("/") or ".." in name.replace("\\", "/").split("/"):
            problems.append(f"{shown}:{number}: #{found.group(1)} {named.group(0)} reaches outside "
                            f"the lesson (an absolute name or '..'): a learner file may include "
                            f"only files of its own lesson folder, common/include and the system")
    return problems


def recorded_dependencies(build, targets):
    """{object: [dependency, ...]} that Ninja recorded for the objects of @p targets."""
    ninja = "ninja"  # the one CMake configured the build with, when it says
    try:
        with open(os.path.join(build, "CMakeCache.txt"), encoding="utf-8", errors="replace") as cache:
            for line in cache:
                if line.startswith("CMAKE_MAKE_PROGRAM:"):
                    ninja = line.split("=", 1)[1].strip() or ninja
    except OSError:
        pass
    try:
        output = subprocess.run([ninja, "-C", build, "-t", "deps"], check=True,
                                capture_output=True, text=True, errors="replace").stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    wanted = re.compile(r"(^|/)CMakeFiles/(" + "|".join(re.escape(t) for t in targets) +
                        r")\.dir/")
    records, current = {}, None
    for line in output.splitlines():
        if line and not line[0].isspace():
            target = line.split(":", 1)[0]
            current = target if wanted.search(target) else None
            if current:
                records[current] = []
        elif current and line.strip():
            records[current].append(line.strip())
    return records


def digest(path):
    with open(path, "rb") as file:
        return hashlib.sha256(file.read()).hexdigest()


def within(path, folder):
    return folder is not None and (path == folder or path.startswith(folder.rstrip("/") + "/"))


def dependency_problems(args):
    """What the objects of the lesson's exercise depend on that they must not (deps check)."""
    tree = os.path.realpath(args.tree)
    solutions = os.path.join(tree, "solutions")
    lessons = os.path.join(tree, "lessons")
    own = os.path.join(tree, args.lesson_folder)
    checkout = os.path.realpath(args.checkout) if args.checkout else None
    work = os.path.realpath(args.work) if args.work else None
    # Every solution file by size, then by content: a dependency the size of one is hashed.
    solution_digests = {}
    for folder, _, files in os.walk(solutions):
        for name in files:
            path = os.path.join(folder, name)
            solution_digests.setdefault(os.path.getsize(path), {})[digest(path)] = \
                os.path.relpath(path, tree)
    records = recorded_dependencies(args.build, args.target)
    if records is None:
        return [f"{args.lesson_folder}: the compiler's dependency records could not be read "
                f"(ninja -t deps in {args.build})"]
    problems = []
    seen = set()
    for _, dependencies in sorted(records.items()):
        for dependency in dependencies:
            shown = dependency
            joined = os.path.normpath(os.path.join(args.build, dependency))
            if joined.startswith(("/proc/", "/dev/")):
                problems.append(f"{args.lesson_folder}: compiling it read {shown}, a path under "
                                f"/proc or /dev (a way around the folders a learner file may use)")
                continue
            # Relative names are the build folder's (where the compiler ran).
            real = os.path.realpath(os.path.join(args.build, dependency))
            if real in seen:
                continue
            seen.add(real)
            if not os.path.isfile(real):
                problems.append(f"{args.lesson_folder}: compiling it read {shown}, which is not a "
                                f"file now")
            elif within(real, solutions):
                problems.append(f"{args.lesson_folder}: compiling it read "
                                f"{os.path.relpath(real, tree)}, a solution")
            elif within(real, lessons) and not within(real, own):
                problems.append(f"{args.lesson_folder}: compiling it read "
                                f"{os.path.relpath(real, tree)}, a file of another lesson")
            else:
                if within(real, checkout) and not within(real, work) and not within(real, tree):
                    problems.append(f"{args.lesson_folder}: compiling it read {real}, a file of "
                                    f"the learner's repository itself, not of the graded tree")
                match = None
                if not within(real, own) and os.path.getsize(real) in solution_digests:
                    match = solution_digests[os.path.getsize(real)].get(digest(real))
                if match:
                    problems.append(f"{args.lesson_folder}: compiling it read {real}, a copy of "
                                    f"{match}")
    return problems


def includes_command(args):
    problems = []
    for learner in args.learner:
        problems += include_problems(os.path.join(args.tree, learner), learner)
    if args.build:
        problems += dependency_problems(args)
    for problem in problems:
        print(problem)
    return 0


def read_record(path):
    record = {}
    with open(path, encoding="utf-8", errors="replace") as file:
        for line in file:
            key, _, value = line.rstrip("\n").partition("=")
            if key:
                record[key] = value
    return record


def number(text, kind=int):
    try:
        return kind(text)
    except (TypeError, ValueError):
        return None


def report_command(args):
    meta = read_record(os.path.join(args.run, "meta"))
    records_dir = os.path.join(args.run, "records")
    records = []
    for name in sorted(os.listdir(records_dir)) if os.path.isdir(records_dir) else []:
        if name.endswith(".rec"):
            record = read_record(os.path.join(records_dir, name))
            details_path = os.path.join(records_dir, name[:-4] + ".details")
            record["details"] = ""
            if os.path.exists(details_path):
                with open(details_path, encoding="utf-8", errors="replace") as file:
                    record["details"] = file.read().rstrip()
            records.append(record)

    lessons = []
    problems = []
    graded = 0
    for record in records:
        status = record.get("status", "")
        requested = record.get("requested") == "1"
        counted = record.get("graded") == "1"
        graded += counted
        invalid = record.get("invalid", "").split()
        entry = {
            "lesson": record.get("lesson"),
            "build": record.get("build"),
            "topic": record.get("topic"),
            "kind": record.get("kind"),
            "labels": [l for l in record.get("labels", "").split(",") if l and l != "-"],
            "learner_files": record.get("learner_files", "").split(),
            "requested": requested,
            "graded": counted,
            "status": status,
            "reason": record.get("reason") or None,
            "tests": {
                "passed": number(record.get("passed")),
                "failed": number(record.get("failed")),
                "skipped": number(record.get("skipped")),
                "total": number(record.get("total")),
            } if counted and record.get("total") else None,
            "tests_verdict": record.get("tests_verdict") or None,
            "sanitizer": {
                "tools": record.get("sanitizer_tools") or None,
                "verdict": record.get("sanitizer") or "not run",
            },
            "speedup": number(record.get("speedup"), float),
            "cell_updates_per_s": number(record.get("rate"), float),
            "baseline_cell_updates_per_s": number(record.get("baseline_rate"), float),
            "seconds": number(record.get("seconds")),
            "invalid": invalid,
            "invalid_reasons": [r for r in record.get("invalid_reasons", "").split("; ") if r],
            "details": record["details"] or None,
            "junit": record.get("junit", "").split(),
            "commit": meta.get("commit"),
        }
        lessons.append(entry)
        if status == "PASS":
            continue
        if status == "SKIPPED" and not requested:
            continue  # not runnable here and not asked for: listed, not a failure
        problems.append(entry)

    passed = graded > 0 and not problems
    if graded == 0:
        summary = "FAIL: no lesson was graded (nothing tested is not a pass)"
    elif passed:
        summary = "PASS"
    elif any(entry["status"] == "INVALID" for entry in problems):
        summary = "INVALID" if all(e["status"] == "INVALID" for e in problems) else "FAIL, INVALID"
    else:
        summary = "FAIL"

    out = []
    title = f"## Gray-Scott School scoreboard: {summary}"
    out.append(title)
    out.append("")
    commit = meta.get("commit", "unknown")
    out.append(f"- graded: `{commit[:12]}`{' (with uncommitted changes)' if meta.get('dirty') == '1' else ''}"
               f"{', ' + meta['source'] if meta.get('source') else ''}")
    if meta.get("integrity") == "checked":
        out.append(f"- against upstream `{meta.get('base', '')[:12]}` (the commit this work started "
                   f"from; upstream: {meta.get('upstream', '?')}): upstream's tests, common/, CMake "
                   f"and scripts, with only the learner's files laid in")
    else:
        out.append(f"- integrity NOT checked: {meta.get('integrity', 'unknown')}")
    out.append(f"- machine: {meta.get('cpu', '?')}; GPU: {meta.get('gpu') or 'none'}; "
               f"{meta.get('date', '')}")
    invalid_files = meta.get("invalid_files", "").split()
    if invalid_files:
        out.append(f"- **INVALID**: files changed outside the exercises (graded without them): "
                   + ", ".join(f"`{f}`" for f in invalid_files))
    out.append("")
    out.append("| lesson | build | tests passed | skipped | sanitizer | speed-up vs l01-naive | time "
               "| status |")
    out.append("|---|---|---:|---:|---|---:|---:|---|")
    not_here = []
    for entry in lessons:
        if not entry["graded"] and entry["status"] == "SKIPPED" and not entry["requested"]:
            not_here.append(entry)
            continue
        tests = entry["tests"]
        passed_text = f"{tests['passed']}/{tests['total']}" if tests else "-"
        skipped_text = str(tests["skipped"]) if tests else "-"
        speedup = f"{entry['speedup']:.1f}x" if entry["speedup"] else "-"
        seconds = f"{entry['seconds']} s" if entry["seconds"] is not None else "-"
        status = entry["status"]
        if entry["reason"]:
            status += f": {entry['reason']}"
        sanitizer = entry["sanitizer"]["verdict"]
        if entry["sanitizer"]["tools"] and sanitizer != "not run":
            sanitizer = f"{entry['sanitizer']['tools']} {sanitizer}"
        out.append(f"| {entry['lesson']} | {entry['build']} | {passed_text} | {skipped_text} | "
                   f"{sanitizer} | {speedup} | {seconds} | {status} |")
    out.append("")
    if not_here:
        out.append("Not graded on this machine (not asked for; a runner that can run them grades "
                   "them):")
        for entry in not_here:
            out.append(f"- {entry['build']} ({entry['topic']}): {entry['reason']}")
        out.append("")
    for entry in problems:
        if entry["details"]:
            out.append(f"<details><summary>{entry['build']} ({entry['topic']}): "
                       f"{entry['status']}</summary>")
            out.append("")
            out.append("```")
            out.append(entry["details"])
            out.append("```")
            out.append("</details>")
            out.append("")
    if meta.get("speed_rule"):
        out.append(f"speed-up: {meta['speed_rule']}")
        out.append("")
    text = "\n".join(out) + "\n"
    sys.stdout.write(text)

    for path in args.markdown:
        with open(path, "w", encoding="utf-8") as file:
            file.write(text)
    if args.json:
        document = {
            "schema": 1,
            "status": "pass" if passed else ("invalid" if "INVALID" in summary else "fail"),
            "summary": summary,
            "commit": meta.get("commit"),
            "dirty": meta.get("dirty") == "1",
            "source": meta.get("source"),
            "upstream": meta.get("upstream") or None,
            "upstream_commit": meta.get("upstream_commit") or None,
            "base": meta.get("base") or None,
            "integrity": meta.get("integrity"),
            "invalid_files": invalid_files,
            "date": meta.get("date"),
            "machine": {"cpu": meta.get("cpu"), "gpu": meta.get("gpu") or None},
            "speed_rule": meta.get("speed_rule"),
            "lessons": lessons,
        }
        with open(args.json, "w", encoding="utf-8") as file:
            json.dump(document, file, indent=2)
            file.write("\n")
    return 0 if passed else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    junit = commands.add_parser("junit")
    junit.add_argument("file")
    junit.add_argument("--strip", default="")
    junit.add_argument("--timeout", type=float, default=0)
    report = commands.add_parser("report")
    report.add_argument("run")
    report.add_argument("--json")
    report.add_argument("--markdown", action="append", default=[])
    includes = commands.add_parser("includes")
    includes.add_argument("--tree", required=True)
    includes.add_argument("--lesson-folder", required=True)
    includes.add_argument("--learner", nargs="+", default=[])
    includes.add_argument("--build")
    includes.add_argument("--target", nargs="+", default=[])
    includes.add_argument("--checkout")
    includes.add_argument("--work")
    args = parser.parse_args()
    if args.command == "includes":
        return includes_command(args)
    return junit_command(args) if args.command == "junit" else report_command(args)


if __name__ == "__main__":
    sys.exit(main())
