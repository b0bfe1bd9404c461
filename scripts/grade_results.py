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

  grade_results.py results FILE --tests JSON --reports DIR [--strip PREFIX] [--timeout SECONDS]
                   [--allow-gpu-skips] [--allowed-skips LIST] [--skips OUT]
      The same line as junit, with a fifth number (the skips not allowed), for a CTest run whose
      tests went through grade_report_wrapper.sh: each case is counted from the report its own
      framework wrote into DIR (GoogleTest's XML; pytest's JUnit XML, one case per test function),
      never from the exit status alone. JSON is `ctest --show-only=json-v1` of the run (each
      test's command and labels). A test without its report fails; a skipped case is allowed
      only with --allow-gpu-skips and the label gpu (or a case named in LIST,
      tests/grade/allowed_skips.txt), never because of its message; OUT gets "case<TAB>reason<TAB>allowed".

  grade_results.py judge JSON [--log LOG]
      The judge's verdict (gs_judge --json) as the lines grade.sh records: status= (PASS,
      PARTIAL, FAIL; ERROR when JSON is missing or unreadable, LOG's end then the detail),
      detail= (the first failing case and its command), not_here= (why paths were not graded
      here: "needs a GPU", "needs two GPUs"), seed=.

  grade_results.py symbols --build DIR --tree TREE --lesson-folder lessons/NN_topic
                   --learner FILE... --stubs DIR --cache DIR [--target T...]
      What the compiled learner code uses: each object (of the targets T; without, of the build)
      whose compilation read a learner file is compiled again from compile_commands.json (inlining off), once as built and once
      with the pristine stubs (the folder --stubs) first on the include path, one section per
      function; a symbol (nm -C) only the learner's object has, or a use of one (objdump -r) from
      a section that did not use it, that is the reference, another lesson's namespace, the
      registry, a solution library's or dlsym is one line "lessons/NN_topic: ... uses SYMBOL: why".
      The compilations run side by side, one per core, into --cache: the stubs' objects under
      their command and the stubs' text, the learner's under the contents of every file the
      build's compilation of the object read (Ninja's records), so the same code is compiled once.

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
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
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


def gtest_results(path):
    """{Suite.Name: [(status, message)]} of the tests a GoogleTest report says ran."""
    results = {}
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return results
    for case in root.iter("testcase"):
        if case.get("status", "run") != "run" or case.get("result") == "suppressed":
            continue  # listed in the report, not run by this process (filtered out)
        key = f"{case.get('classname')}.{case.get('name')}"
        failure = case.find("failure")
        skipped = case.find("skipped")
        if failure is not None or case.find("error") is not None:
            node = failure if failure is not None else case.find("error")
            results.setdefault(key, []).append(("failed", node.get("message", "") or ""))
        elif skipped is not None or case.get("result") == "skipped":
            message = (skipped.get("message", "") if skipped is not None else "") or ""
            results.setdefault(key, []).append(("skipped", message))
        else:
            results.setdefault(key, []).append(("passed", ""))
    return results


def pytest_cases(path):
    """[(case name, status, message)] of a pytest --junitxml report."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return []
    cases = []
    for case in root.iter("testcase"):
        name = case.get("name")
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        skipped = case.find("skipped")
        if failure is not None:
            cases.append((name, "failed", failure.get("message", "") or ""))
        elif skipped is not None:
            cases.append((name, "skipped", skipped.get("message", "") or ""))
        else:
            cases.append((name, "passed", ""))
    return cases


def report_files(folder):
    try:
        return sorted(os.path.join(folder, name) for name in os.listdir(folder)
                      if name.endswith(".xml"))
    except OSError:
        return []


def safe_name(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def ctest_tests(path):
    """{name: (command, labels)} of `ctest --show-only=json-v1`."""
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            document = json.load(file)
    except (OSError, ValueError):
        return {}
    tests = {}
    for test in document.get("tests", []):
        labels = []
        for prop in test.get("properties", []):
            if prop.get("name") == "LABELS":
                labels = prop.get("value") or []
        tests[test.get("name")] = (test.get("command") or [], labels)
    return tests


def allowed_skip(case_name, path):
    """Whether @case_name matches a line (a case name, or its end after a dot) of @path."""
    if not path or not os.path.isfile(path):
        return False
    with open(path, encoding="utf-8") as file:
        names = [line.strip() for line in file if line.strip() and not line.startswith("#")]
    return any(case_name == name or case_name.endswith("." + name) for name in names)


def results_command(args):
    """The cases of a lesson's CTest run, each counted from its own framework's report."""
    _, _, _, _, ctest_cases = read_junit(args.file)
    tests = ctest_tests(args.tests)
    reports = {}  # folder name -> report files
    if os.path.isdir(args.reports):
        for name in os.listdir(args.reports):
            reports[name] = report_files(os.path.join(args.reports, name))
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    disallowed = 0
    first_failure = None  # (name, [lines])
    skips = []
    for ctest_status, case in ctest_cases:
        name = case.get("name") or ""
        command, labels = tests.get(name, ([], []))
        wrapped = any(part.endswith("grade_report_wrapper.sh") for part in command)
        filters = [part[len("--gtest_filter="):] for part in command
                   if part.startswith("--gtest_filter=")]
        outcomes = []  # (case name, status, message)
        if not wrapped:
            outcomes.append((name, "failed", "the grader could not run this test through its "
                             "report wrapper (scripts/grade_report_wrapper.sh), so its result "
                             "cannot be read from the framework's own report"))
        elif filters:
            found = []
            for path in reports.get(safe_name("gtest." + filters[0]), []):
                found += gtest_results(path).get(filters[0], [])
            if ctest_status == "failed":
                outcomes.append((name, "failed", None))  # CTest's output says why
            elif not found:
                outcomes.append((name, "failed", "no report of this test from GoogleTest: its "
                                 "process ended (status 0) before the test ran or before "
                                 "GoogleTest recorded its result"))
            elif any(status == "failed" for status, _ in found):
                outcomes.append((name, "failed", None))
            elif any(status == "skipped" for status, _ in found):
                reason = next(message for status, message in found if status == "skipped")
                outcomes.append((name, "skipped", reason))
            else:
                outcomes.append((name, "passed", ""))
        else:  # pytest: one CTest test per class, every case of it counted
            group = command[command.index("-k") + 1] if "-k" in command[:-1] else ""
            cases = []
            for path in reports.get(safe_name("pytest." + group), []):
                cases += pytest_cases(path)
            if not cases:
                outcomes.append((name, "failed", "no report of this test class from pytest: its "
                                 "process ended before pytest recorded its cases"))
            else:
                for case_name, status, message in cases:
                    outcomes.append((f"{name}.{case_name}", status,
                                     None if status == "failed" else message))
                if ctest_status == "failed" and all(s != "failed" for _, s, _ in cases):
                    outcomes.append((name, "failed", None))
        for case_name, status, message in outcomes:
            counts[status] += 1
            if status == "failed" and first_failure is None:
                lines = excerpt(case, args.strip, args.timeout) if message is None \
                    else [message] + excerpt(case, args.strip, 0)[-4:]
                first_failure = (case_name, lines)
            if status == "skipped":
                # Allowed by what the pristine build says of the test, never by its message
                # (which the learner's code writes): a test labelled gpu, or a case on the fixed
                # list tests/grade/allowed_skips.txt, where the GPU part is not graded.
                allowed = args.allow_gpu_skips and (
                    "gpu" in labels or allowed_skip(case_name, args.allowed_skips))
                disallowed += not allowed
                skips.append((case_name, message or "no reason given", allowed))
    total = sum(counts.values())
    print(counts["passed"], counts["failed"], counts["skipped"], total, disallowed)
    if first_failure:
        print(f"first failing test: {first_failure[0]}")
        for line in first_failure[1]:
            print(f"  {line}")
    elif total and counts["skipped"] == total:
        print(f"every test skipped, e.g. {skips[0][0]}: {skips[0][1]}")
    if args.skips:
        with open(args.skips, "w", encoding="utf-8") as file:
            for case_name, reason, allowed in skips:
                reason = " ".join(reason.split())
                file.write(f"{case_name}\t{reason}\t{'allowed' if allowed else 'not allowed'}\n")
    return 0


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


# What lets a learner file see where it is compiled, or hide what it includes (the grade's tests:
# tests/grade/attacks/): it is refused in the text, whatever the build does with it.
PREPROCESSOR_TRICKS = [
    (re.compile(r"__has_include(_next)?\b"), "__has_include (a test of which files exist)"),
    (re.compile(r"^\s*(#|%:|\?\?=)\s*include_next\b"), "#include_next"),
    (re.compile(r"^\s*(#|%:|\?\?=)\s*line\b"), "#line (a file name and line made up)"),
    (re.compile(r"%:"), "the digraph %: (a # in disguise)"),
    (re.compile(r"\?\?[=/'()!<>-]"), "a trigraph"),
    (re.compile(r"\b_Pragma\b|^\s*#\s*pragma\s+(push_macro|pop_macro|GCC\s+(system_header|poison|dependency))"),
     "a pragma that changes what the preprocessor sees"),
    (re.compile(r"\b__(FILE|BASE_FILE|FILE_NAME|COUNTER|TIMESTAMP|DATE|TIME)__\b"),
     "a macro that says where or when the code is compiled"),
    (re.compile(r"\b(asm|__asm__|__asm)\b"), "inline assembly (a system call no symbol shows)"),
    # The point tests of lessons 04, 05, 08 and 09 walk the learner's code on the host, where a
    # GPU runs it in the programs: a branch on the compiler's pass runs one code for the test and
    # another for the GPU (tests/grade/attacks/device_only.fragment).
    (re.compile(r"\b__(CUDA_ARCH|CUDACC|NVCOMPILER)\w*|\b__NVCC__\b|"
                r"\bNV_(IF_TARGET|IF_ELSE_TARGET|DISPATCH_TARGET|IS_DEVICE|IS_HOST|PROVIDES_SM_\w+)\b|"
                r"<nv/target>"),
     "a macro that says whether the code is compiled for the GPU or the host"),
    # A condition is a second program in one file: which one the tests compile and which one the
    # programs do is the build's to say, not the learner's. Only GS_HAVE_CUDA (whether the build
    # has CUDA at all, the same for a lesson's tests and programs) may be asked
    # (tests/grade/attacks/point_macro.fragment: the point test's own macro).
    (re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|elifdef|elifndef)\b"
                r"(?!\s*(!\s*)?(defined\s*\(?\s*)?GS_HAVE_CUDA\s*\)?\s*(//.*)?$)"),
     "a preprocessor condition on anything but GS_HAVE_CUDA"),
]

# Read outside string and character literals (a message may hold "##"): a name pasted together
# is a name the text does not show (tests/grade/attacks/token_pasting.fragment: `__CU` ## `DA_ARCH__`).
TOKEN_PASTING = re.compile(r"##")
LITERALS = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')

# Lesson 08's round is a template over its Block: the kernel's block on the GPU, the model's
# Recorder in the point test and the judge. A round that asks which it was given can show the
# model one order and play the GPU another (tests/grade/attacks/which_block/): its file may name
# neither type, nor ask a type what it is.
LESSON_TRICKS = {
    "halo_exchange.hpp": [
        (re.compile(r"\b(Recorder|KernelBlock|round_model|round_record|round_check|exchange_kernel)\b|\bpeer\s*::"),
         "a name of the model's or of the kernel's (the round works with its Block alone)"),
        (re.compile(r"\b(if\s+constexpr|requires|decltype|typeid|type_info|is_same(_v)?|"
                    r"is_base_of(_v)?|enable_if(_t)?|__is_same|__builtin_\w+|sizeof|alignof)\b"),
         "a question about the Block's type (the round must be the same for every Block)"),
    ],
}


def include_problems(path, shown):
    """The #include lines of learner file @p path that reach outside its lesson (text check)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            text = file.read()
    except OSError as error:
        return [f"{shown}: cannot be read ({error.strerror})"]
    lines = text.splitlines()
    problems = []
    lesson_tricks = LESSON_TRICKS.get(os.path.basename(shown), [])
    for number, line in enumerate(lines, 1):
        code = line.split("//", 1)[0]  # the lesson's names: a comment may say them
        found = [what for pattern, what in PREPROCESSOR_TRICKS if pattern.search(line)]
        if TOKEN_PASTING.search(LITERALS.sub('""', line)):
            found.append("token pasting (a name the text does not show)")
        found += [what for pattern, what in lesson_tricks if pattern.search(code)]
        for what in found:
            problems.append(f"{shown}:{number}: {what}: a learner file may not use it (it lets "
                            f"code compile differently where it is graded)")
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
    # No targets: every object of the build.
    wanted = re.compile(r"(^|/)CMakeFiles/(" + ("|".join(re.escape(t) for t in targets) or
                                               r"[^/]+") + r")\.dir/")
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


# What a learner's code must not reach, by the (demangled) names of the symbols its objects define
# or use: the pattern and what it is. A second lesson's namespace is checked apart (its number).
FORBIDDEN_SYMBOLS = [
    (re.compile(r"\bgs::reference\w*"), "the reference implementation (gs/reference.hpp)"),
    (re.compile(r"\b(all_implementations|find_implementation)\b"),
     "the registry of the course's implementations"),
    (re.compile(r"^(dlsym|dlvsym|dlopen|dlmopen)(@.*)?$"),
     "a symbol looked up at run time, which no check of the build can follow"),
    # (tests/grade/attacks/spawn.fragment: a program started from the learner's code could build
    # and run the solution that the learner's own checkout holds, out of every check's sight)
    (re.compile(r"^(system|popen|fork|vfork|clone|clone3|syscall|execl|execlp|execle|execv|execve"
                r"|execvp|execvpe|fexecve|posix_spawnp?)(@.*)?$"),
     "another program started from the learner's code, which no check of the build can follow"),
]
LESSON_NAMESPACE = re.compile(r"\blesson(\d\d)(_cpu)?::")
NM_LINE = re.compile(r"^\s*(?:[0-9a-fA-F]+\s+)?([A-Za-z?-])\s+(.+)$")


RELOCATIONS_FOR = re.compile(r"^RELOCATION RECORDS FOR \[(.*)\]:$")
RELOCATION = re.compile(r"^[0-9a-fA-F]+\s+\S+\s+(.*?)(?:[+-]0x[0-9a-fA-F]+)?$")
# The suffixes of GCC's clones of a function (.constprop.0, .isra.0, .part.0, .cold): the same
# function, whichever clones one compilation makes.
CLONE = re.compile(r"(\.(constprop|isra|part|cold|lto_priv|localalias)(\.\d+)?)+$")


def symbol_uses(path):
    """(names, uses) of an object file, or None: the demangled names it defines or uses (`nm -C`),
    and which section uses which (`objdump -rC`: one section per function and per datum, the
    check compiles with -ffunction-sections -fdata-sections), as (section, name) pairs. The pairs
    tell the learner's use of a symbol from the body's own: lesson 10's module uses the registry
    itself, a binding.hpp that calls it too adds a pair."""
    try:
        names_output = subprocess.run(["nm", "-C", path], check=True, capture_output=True,
                                      text=True, errors="replace").stdout
        relocations = subprocess.run(["objdump", "-rC", path], check=True, capture_output=True,
                                     text=True, errors="replace").stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    names = set()
    for line in names_output.splitlines():
        found = NM_LINE.match(line)
        if found and not line.endswith(":"):
            names.add(found.group(2).strip())
    uses = set()
    section = None
    for line in relocations.splitlines():
        header = RELOCATIONS_FOR.match(line)
        if header:
            section = CLONE.sub("", header.group(1))
            continue
        found = RELOCATION.match(line.strip())
        if section and found and not line.startswith("OFFSET"):
            uses.add((section, CLONE.sub("", found.group(1).strip())))
    return names, uses


def demangle(mangled):
    try:
        return subprocess.run(["c++filt", mangled], check=True, capture_output=True, text=True,
                              errors="replace").stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return mangled


def check_compile(entry, output, extra_include=None, plain=False):
    """Compiles a compile_commands.json entry again into @p output, inlining off, or says why not.

    Inlining hides a call (an optimised build can inline gs::reference_step<float> and keep no
    symbol of it), so the check's objects are compiled with -fno-inline, and without the
    __NO_INLINE__ macro that flag defines, so that the code compiled is the code the build made.
    @p extra_include (the pristine stubs' folder) goes first on the include path."""
    words = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    words = list(words)
    for flag in ("-o", "-MF"):
        if flag in words[:-1]:
            words[words.index(flag) + 1] = output if flag == "-o" else output + ".d"
    nvcc = "nvcc" in os.path.basename(words[0])
    flags = ["-fno-inline", "-U__NO_INLINE__", "-ffunction-sections", "-fdata-sections"]
    if not plain:  # plain: the build's own command (the stub's twin of a graded object)
        words += ["-Xcompiler=" + ",".join(flags)] if nvcc else flags
    if extra_include:
        first_flag = next((i for i, w in enumerate(words) if i > 0 and w.startswith("-")),
                          len(words))
        words.insert(first_flag, "-I" + extra_include)
    os.makedirs(os.path.dirname(output), exist_ok=True)
    result = subprocess.run(words, cwd=entry.get("directory"), capture_output=True, text=True,
                            errors="replace")
    if result.returncode != 0:
        return (result.stderr or result.stdout).strip().splitlines()[:3] or ["failed"]
    return None


def global_definitions(path):
    """{mangled name: nm type} of the global symbols object @p path defines, or None."""
    try:
        output = subprocess.run(["nm", "--defined-only", "--extern-only", path], check=True,
                                capture_output=True, text=True, errors="replace").stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    found = {}
    for line in output.splitlines():
        match = NM_LINE.match(line)
        if match and not line.endswith(":"):
            found[match.group(2).strip()] = match.group(1)
    return found


# The Itanium C++ ABI's special names, before the name they are about: vtables, typeinfo, guard
# variables, thunks (_ZTh/_ZTv/_ZTc) and local names (_ZZ, checked by their enclosing function).
SPECIAL_PREFIX = re.compile(r"^_Z(T[VTISC]|GV|Th[n]?\d*_|Tv[n]?\d+_n?\d+_|Tc|Z)?")
# Weak instantiations of a library's templates, which any code that uses the library emits.
LIBRARY_TEMPLATE = re.compile(r"^(St|NSt|NKSt|N9__gnu_cxx|NK9__gnu_cxx|N6thrust|NK6thrust|N3cub|"
                              r"NK3cub|N4cuda|NK4cuda|N3CLI|NK3CLI|N8nlohmann|NK8nlohmann|"
                              r"N8pybind11|NK8pybind11|N10__cxxabiv1|N3fmt)")


def stub_declared_names(stubs_folder, learner):
    """The names upstream's stubs declare at their outermost level (namespace handoff in lesson 07,
    namespace on_chip in lesson 11): the learner's own, wherever the lesson puts them."""
    names = set()
    for path in learner:
        try:
            with open(os.path.join(stubs_folder, os.path.basename(path)), encoding="utf-8",
                      errors="replace") as file:
                text = file.read()
        except OSError:
            continue
        names.update(re.findall(r"^\s*(?:class|struct|union|namespace|enum(?:\s+class)?)\s+"
                                r"([A-Za-z_]\w*)", text, re.M))
    return names


_OTHERS = {}


def definitions_elsewhere(build, own):
    """The global names defined (strongly) by the libraries a lesson's programs and tests link
    that are not the lesson's own: the build's archives but lessonNN_*'s, and GoogleTest's. A weak
    definition of one of them in the learner's object replaces it whenever the linker needs
    nothing else from the archive member that has it (tests/grade/attacks/linktime.fragment)."""
    key = (build, own)
    if key in _OTHERS:
        return _OTHERS[key]
    archives = []
    for folder, _, files in os.walk(build):
        for name in files:
            if name.endswith(".a") and not name.startswith(f"liblesson{own}_"):
                archives.append(os.path.join(folder, name))
    for folder in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib",
                   "/usr/local/lib"):
        for name in ("libgtest.a", "libgtest_main.a", "libgmock.a", "libgmock_main.a"):
            if os.path.exists(os.path.join(folder, name)):
                archives.append(os.path.join(folder, name))
    names = set()  # strong definitions only: a weak one is an inline function every user emits
    for archive in archives:
        found = global_definitions(archive)
        if found:
            names.update(name for name, kind in found.items() if kind not in "WVwvu")
    _OTHERS[key] = names
    return names


def foreign_definition(mangled, kind, namespace, own_names=(), elsewhere=frozenset()):
    """Why a global definition of the learner's graded object is not its own, or None: a name
    outside @p namespace (lessonNN) and the names its stub declares (@p own_names) that the stub's
    object does not define replaces, at link time, what the test support, GoogleTest, common/ or
    the C library defines (tests/grade/attacks/)."""
    if not mangled.startswith("_Z"):
        return "a C name (no C++ namespace)"
    rest = SPECIAL_PREFIX.sub("", mangled, count=1)
    for prefix in ("N", "NK", "NV", "NVK", "NKR", "NR", "NO", "NKO"):
        if rest.startswith(prefix) and rest[len(prefix):len(prefix) + 1].isdigit():
            rest = rest[len(prefix):]
            break
    length = re.match(r"^(\d+)", rest)
    first = rest[len(length.group(1)):len(length.group(1)) + int(length.group(1))] if length else ""
    if first == namespace or first in own_names:
        return None
    if kind in "WVu" and mangled not in elsewhere:
        # A weak copy of an inline function of a header (gs::Stepper's, say) that the learner's
        # code calls: every object that calls it emits one, and nothing defines it otherwise.
        return None
    if first == "_GLOBAL__N_1":
        return None  # an anonymous namespace: its names cannot replace another object's
    if kind in "WVu" and LIBRARY_TEMPLATE.match(SPECIAL_PREFIX.sub("", mangled, count=1)):
        return None
    return f"outside its lesson's namespace {namespace}::"


def solution_symbols(build):
    """The names the solutions' libraries define (every lessonNN_solution*_impl, the registry)."""
    defined = set()
    for folder, _, files in os.walk(build):
        for name in files:
            if re.match(r"lib(lesson\d\d_solution\w*_impl|gs_registry|lesson\d\d\w*_registry)\.a$", name):
                try:
                    output = subprocess.run(["nm", "-C", "--defined-only", os.path.join(folder, name)],
                                            check=True, capture_output=True, text=True,
                                            errors="replace").stdout
                except (OSError, subprocess.CalledProcessError):
                    continue
                for line in output.splitlines():
                    found = NM_LINE.match(line)
                    if found and found.group(1) in "TWVDBR" and "(anonymous namespace)" not in line:
                        defined.add(found.group(2).strip())
    return defined


def symbol_problems(args):
    """New names the learner's code brings into the lesson's objects that it must not reach."""
    own = re.match(r"lessons/(\d\d)_", args.lesson_folder)
    own = own.group(1) if own else ""
    learner = {os.path.realpath(os.path.join(args.tree, f)) for f in args.learner}
    # Every object whose compilation read a learner file (lesson 10's module too, which is not
    # one of the lesson's named targets).
    records = recorded_dependencies(args.build, args.target) or {}
    try:
        with open(os.path.join(args.build, "compile_commands.json"), encoding="utf-8") as file:
            entries = json.load(file)
    except (OSError, ValueError):
        return [f"{args.lesson_folder}: the symbols of its code could not be checked (no "
                f"compile_commands.json in {args.build})"]
    by_output = {}
    for entry in entries:
        output = entry.get("output")  # CMake 3.20+ with some generators; else the -o of the command
        if not output:
            words = entry.get("arguments") or shlex.split(entry.get("command", ""))
            output = words[words.index("-o") + 1] if "-o" in words[:-1] else None
        if output:
            by_output[os.path.realpath(os.path.join(entry.get("directory", ""), output))] = entry
    problems = []
    solutions = None
    checked = 0
    own_names = stub_declared_names(args.stubs, args.learner)
    # The objects that compile a learner file, each with its entry and cache key.
    checked_objects = []
    for target, dependencies in sorted(records.items()):
        reached = {os.path.realpath(os.path.join(args.build, d)) for d in dependencies}
        if not reached & learner:
            continue  # this object does not compile a learner file
        entry = by_output.get(os.path.realpath(os.path.join(args.build, target)))
        if entry is None:
            problems.append(f"{args.lesson_folder}: {target}: no compile command to check its "
                            f"symbols")
            continue
        key = hashlib.sha256((CHECK_VERSION + json.dumps(entry, sort_keys=True) + "".join(
            open(os.path.join(args.stubs, os.path.basename(f)), encoding="utf-8",
                 errors="replace").read() for f in sorted(args.learner))).encode()).hexdigest()
        # The learner's version of the object: cached under the contents of every file its
        # compilation read (Ninja's records of the build just made: the learner's files among
        # them), so that the same code compiled by the same command is compiled once.
        sources = hashlib.sha256(key.encode())
        for dependency in sorted(set(dependencies)):
            sources.update(dependency.encode() + b"\0")
            try:
                with open(os.path.join(args.build, dependency), "rb") as file:
                    sources.update(hashlib.sha256(file.read()).digest())
            except OSError:
                sources.update(b"missing")
        learner_object = os.path.join(args.cache, "learner", sources.hexdigest()[:24] + ".o")
        checked_objects.append((target, entry, key, learner_object))
    # Their compilations, made first and side by side (one per core; each is one compiler
    # process): the learner's version of each object and the stub's two, where not cached yet.
    # The checks below read the objects as they would have made them one by one.
    compilations = {}
    for _, entry, key, learner_object in checked_objects:
        if not os.path.exists(learner_object):
            compilations[learner_object + ".tmp"] = (entry, None, False)
        if not os.path.exists(os.path.join(args.cache, key[:24] + ".o")):
            compilations[os.path.join(args.cache, key[:24] + ".o.tmp")] = (entry, args.stubs, False)
        if not os.path.exists(os.path.join(args.cache, key[:24] + ".plain.o")):
            compilations[os.path.join(args.cache, key[:24] + ".plain.o.tmp")] = (entry, args.stubs,
                                                                                 True)
    workers = max(1, min(len(compilations), len(os.sched_getaffinity(0))))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        compiled = dict(zip(compilations, pool.map(
            lambda item: check_compile(item[1][0], item[0], item[1][1], plain=item[1][2]),
            compilations.items())))

    def compile_once(entry, output, extra_include=None, plain=False):
        """check_compile()'s answer for @p output: the one made above, else made now."""
        if output in compiled:
            return compiled.pop(output)
        return check_compile(entry, output, extra_include, plain=plain)

    for target, entry, key, learner_object in checked_objects:
        stub_object = os.path.join(args.cache, key[:24] + ".o")
        stub_uses = None
        error = None
        if os.path.exists(stub_object):
            stub_uses = symbol_uses(stub_object)
        if stub_uses is None:
            error = compile_once(entry, stub_object + ".tmp", args.stubs)
            if error is None:
                os.replace(stub_object + ".tmp", stub_object)
                stub_uses = symbol_uses(stub_object)
        learner_uses = None
        if stub_uses is not None and os.path.exists(learner_object):
            learner_uses = symbol_uses(learner_object)
        if stub_uses is not None and learner_uses is None:
            error = compile_once(entry, learner_object + ".tmp")
            if error is None:
                os.replace(learner_object + ".tmp", learner_object)
                learner_uses = symbol_uses(learner_object)
        shown = os.path.basename(target)
        if stub_uses is None or learner_uses is None:
            which = "the pristine stub's" if stub_uses is None else "the learner's"
            problems.append(f"{args.lesson_folder}: {shown}: the symbol check could not compile "
                            f"{which} version ({'; '.join(error or ['nm failed'])[:300]})")
            continue
        checked += 1
        # The graded object itself (not a recompile): the global names it defines that the
        # stub's object, compiled with the same command, does not.
        graded = global_definitions(os.path.realpath(os.path.join(args.build, target)))
        plain_stub = os.path.join(args.cache, key[:24] + ".plain.o")
        if not os.path.exists(plain_stub):
            error = compile_once(entry, plain_stub + ".tmp", args.stubs, plain=True)
            if error is None:
                os.replace(plain_stub + ".tmp", plain_stub)
        stub_definitions = global_definitions(plain_stub) if os.path.exists(plain_stub) else None
        if graded is None or stub_definitions is None:
            problems.append(f"{args.lesson_folder}: {shown}: the definitions of the graded object "
                            f"could not be read")
        else:
            for mangled in sorted(set(graded) - set(stub_definitions)):
                why = foreign_definition(mangled, graded[mangled], args.namespace or f"lesson{own}",
                                         own_names, definitions_elsewhere(args.build, own))
                if why:
                    problems.append(f"{args.lesson_folder}: the learner's code defines "
                                    f"{demangle(mangled)[:200]} ({mangled[:80]}): {why}, in the "
                                    f"graded object {shown}")
        # A name new to the object, or a use of a name from a section that did not use it.
        new_uses = learner_uses[1] - stub_uses[1]
        users = {}
        for section, name in new_uses:
            users.setdefault(name, section)
        for name in sorted((learner_uses[0] - stub_uses[0]) | set(users)):
            why = next((what for pattern, what in FORBIDDEN_SYMBOLS if pattern.search(name)), None)
            other = LESSON_NAMESPACE.search(name)
            if why is None and other and other.group(1) != own:
                why = f"lesson {other.group(1)}'s code"
            if why is None and not learner_names_defined(learner_object, name):
                if solutions is None:
                    solutions = solution_symbols(args.build)
                if name in solutions:
                    why = "code of solutions/ (a solution's library defines it)"
            if why:
                where = f", from {demangled_section(users[name])[:160]}" if name in users else ""
                problems.append(f"{args.lesson_folder}: the learner's code uses {name[:200]}: "
                                f"{why} (a use in {shown} that the pristine stub's has not"
                                f"{where})")
    if checked == 0 and not problems:
        problems.append(f"{args.lesson_folder}: the symbol check found no object compiled from "
                        f"the learner's files")
    return problems


# Part of the cache key of the stubs' objects: a change of the check's flags recompiles them.
CHECK_VERSION = "symbols-2: -fno-inline -U__NO_INLINE__ -ffunction-sections -fdata-sections"


def demangled_section(section):
    """`.text._ZN...` as `.text: the function's name`."""
    found = re.match(r"^(\.[a-z.]*?)\.(_Z.*)$", section)
    if not found:
        return section
    try:
        name = subprocess.run(["c++filt", found.group(2)], check=True, capture_output=True,
                              text=True, errors="replace").stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return section
    return f"{found.group(1)} of {name}"


_DEFINED = {}


def learner_names_defined(path, name):
    """Whether object @p path defines @p name (a use of the learner's own code is not a borrow)."""
    if path not in _DEFINED:
        try:
            output = subprocess.run(["nm", "-C", "--defined-only", path], check=True,
                                    capture_output=True, text=True, errors="replace").stdout
        except (OSError, subprocess.CalledProcessError):
            output = ""
        _DEFINED[path] = {m.group(2).strip() for m in map(NM_LINE.match, output.splitlines()) if m}
    return name in _DEFINED[path]


def symbols_command(args):
    for problem in symbol_problems(args):
        print(problem)
    return 0


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


def judge_command(args):
    """The judge's JSON (gs_judge --json) as the key=value lines grade.sh records: its status
    (ERROR when it wrote none), the first failing case with its command, what it could not grade
    here and why, and the cases' seed."""
    try:
        with open(args.file, encoding="utf-8", errors="replace") as file:
            document = json.load(file)
        status = document["status"] if document["status"] in ("PASS", "PARTIAL", "FAIL") \
            else "ERROR"
        cases = document.get("cases", [])
    except (OSError, ValueError, KeyError, TypeError):
        document, status, cases = {}, "ERROR", []
    detail = ""
    failed = [case for case in cases if case.get("status") == "fail"]
    if failed:
        case = failed[0]
        detail = (f"{case['graded']}, case {case['case']}: {' '.join(case['detail'].split())[:600]}"
                  f" (the case: {case['command'][:400]})")
    elif status == "ERROR":
        try:
            with open(args.log, encoding="utf-8", errors="replace") as file:
                tail = file.read().splitlines()[-3:]
        except OSError:
            tail = []
        detail = "the judge did not finish: " + " ".join(tail)
    not_here = sorted({case["detail"] for case in cases if case.get("status") == "not graded here"})
    for key, value in (("status", status), ("detail", detail), ("not_here", ", ".join(not_here)),
                       ("seed", document.get("seed", ""))):
        print(f"{key}={' '.join(str(value).split())}")
    return 0


def md_inline(text):
    """@p text as literal Markdown on one line: the learner's code writes some of what the
    scoreboard shows (a skip's reason, a compiler's message), and only the grader writes
    headings, tables and links (tests/grade/test_grade.sh, case markdown)."""
    text = " ".join(str(text).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_{}\[\]()#+!|~-])", r"\\\1", text)


def md_code(text):
    """@p text as an inline code span that nothing inside can close."""
    text = " ".join(str(text).split())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if longest else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_block(text):
    """@p text as a fenced code block that nothing inside can close: the fence is longer than
    any run of backticks in it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, text, fence]


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
            record["skips"] = []
            skips_path = os.path.join(records_dir, name[:-4] + ".skips")
            if os.path.exists(skips_path):
                with open(skips_path, encoding="utf-8", errors="replace") as file:
                    for line in file:
                        test, _, rest = line.rstrip("\n").partition("\t")
                        reason, _, allowed = rest.rpartition("\t")
                        record["skips"].append({"test": test, "reason": reason,
                                                "allowed": allowed == "allowed"})
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
            "skips": record["skips"],
            "tests_verdict": record.get("tests_verdict") or None,
            # The verdict's source: gs_judge, apart from the learner's code (grade.sh).
            "judge": {
                "status": record.get("judge") or "not run",
                "detail": record.get("judge_detail") or None,
                "seed": record.get("judge_seed") or None,
            },
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
        if status in ("PASS", "PARTIAL"):
            continue  # PARTIAL: what this machine can grade passed; the rest is said
        if status == "SKIPPED" and not requested:
            continue  # not runnable here and not asked for: listed, not a failure
        problems.append(entry)

    passed = graded > 0 and not problems
    if graded == 0:
        summary = "FAIL: no lesson was graded (nothing tested is not a pass)"
    elif passed:
        partial = [e["build"] for e in lessons if e["status"] == "PARTIAL"]
        summary = "PASS" if not partial else \
            f"PASS, PARTIAL (not graded here: the GPU parts of {', '.join(partial)})"
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
               f"{', ' + md_inline(meta['source']) if meta.get('source') else ''}")
    if meta.get("integrity") == "checked":
        out.append(f"- against upstream `{meta.get('base', '')[:12]}` (the commit this work started "
                   f"from; upstream: {md_inline(meta.get('upstream', '?'))}): upstream's tests, common/, CMake "
                   f"and scripts, with only the learner's files laid in")
    else:
        out.append(f"- integrity NOT checked: {meta.get('integrity', 'unknown')}")
    out.append(f"- machine: {meta.get('cpu', '?')}; GPU: {meta.get('gpu') or 'none'}; "
               f"{meta.get('date', '')}")
    if meta.get("sandbox_note"):
        out.append(f"- the learner's code ran {md_inline(meta['sandbox_note'])}; the verdict is "
                   f"the judge's (cases drawn at grade time, results compared with the reference "
                   f"outside the learner's processes)")
    invalid_files = meta.get("invalid_files", "").split()
    if invalid_files:
        out.append(f"- **INVALID**: files changed outside the exercises (graded without them): "
                   + ", ".join(md_inline(f) for f in invalid_files))
    out.append("")
    # The speed-up column only when a lesson measured one (lessons 07-10 measure no speed).
    speed = any(entry["speedup"] for entry in lessons)
    out.append("| lesson | build | judge | cases passed | skipped | sanitizer | "
               + ("speed-up vs l01-naive | " if speed else "") + "time | status |")
    out.append("|---|---|---|---:|---:|---|" + ("---:|" if speed else "") + "---:|---|")
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
            status += f": {md_inline(entry['reason'])}"
        sanitizer = entry["sanitizer"]["verdict"]
        if entry["sanitizer"]["tools"] and sanitizer != "not run":
            sanitizer = f"{entry['sanitizer']['tools']} {sanitizer}"
        judge = entry["judge"]["status"] if entry["judge"]["status"] != "not run" else "-"
        out.append(f"| {entry['lesson']} | {entry['build']} | {judge} | {passed_text} | {skipped_text} | "
                   f"{sanitizer} | " + (f"{speedup} | " if speed else "") + f"{seconds} | {status} |")
    out.append("")
    skipped_cases = [(entry, skip) for entry in lessons for skip in entry["skips"]]
    if skipped_cases:
        out.append("Skipped cases, each with the reason its test gave:")
        for entry, skip in skipped_cases:
            allowed = "allowed: a GPU test where the GPU part is not graded" if skip["allowed"] \
                else "not allowed here: a failure"
            out.append(f"- {entry['build']} {md_code(skip['test'])}: {md_inline(skip['reason'])} "
                       f"({allowed})")
        out.append("")
    if not_here:
        out.append("Not graded on this machine (not asked for; a runner that can run them grades "
                   "them):")
        for entry in not_here:
            out.append(f"- {entry['build']} ({entry['topic']}): {md_inline(entry['reason'])}")
        out.append("")
    for entry in problems:
        if entry["details"]:
            out.append(f"<details><summary>{entry['build']} ({entry['topic']}): "
                       f"{entry['status']}</summary>")
            out.append("")
            out += md_block(entry["details"])
            out.append("</details>")
            out.append("")
    if meta.get("speed_rule") and speed:
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
            "partial": [e["build"] for e in lessons if e["status"] == "PARTIAL"],
            "summary": summary,
            "commit": meta.get("commit"),
            "dirty": meta.get("dirty") == "1",
            "source": meta.get("source"),
            "upstream": meta.get("upstream") or None,
            "upstream_commit": meta.get("upstream_commit") or None,
            "base": meta.get("base") or None,
            "integrity": meta.get("integrity"),
            "sandboxed": meta.get("sandbox") == "1",
            "sandbox": meta.get("sandbox_note") or "not sandboxed: unknown",
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
    results = commands.add_parser("results")
    results.add_argument("file")
    results.add_argument("--tests", required=True)
    results.add_argument("--reports", required=True)
    results.add_argument("--strip", default="")
    results.add_argument("--timeout", type=float, default=0)
    results.add_argument("--allow-gpu-skips", action="store_true")
    results.add_argument("--allowed-skips")
    results.add_argument("--skips")
    judge = commands.add_parser("judge")
    judge.add_argument("file")
    judge.add_argument("--log", default="")
    symbols = commands.add_parser("symbols")
    symbols.add_argument("--build", required=True)
    symbols.add_argument("--tree", required=True)
    symbols.add_argument("--lesson-folder", required=True)
    symbols.add_argument("--learner", nargs="+", default=[])
    symbols.add_argument("--stubs", required=True)
    symbols.add_argument("--cache", required=True)
    symbols.add_argument("--target", nargs="*", default=[])
    symbols.add_argument("--namespace", help="the lesson build's namespace (lessonNN[_cpu])")
    args = parser.parse_args()
    if args.command == "includes":
        return includes_command(args)
    if args.command == "results":
        return results_command(args)
    if args.command == "symbols":
        return symbols_command(args)
    if args.command == "judge":
        return judge_command(args)
    return junit_command(args) if args.command == "junit" else report_command(args)


if __name__ == "__main__":
    sys.exit(main())
