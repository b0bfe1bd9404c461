#!/usr/bin/env python3
"""Checks .github/workflows/classroom.yml, the course's GitHub Classroom autograding.

GitHub Classroom reads an assignment's tests from a workflow in its template: one step per test
through classroom-resources/autograding-command-grader (inputs test-name, setup-command, command,
timeout in minutes, max-score; a test passes when its command exits 0), then
classroom-resources/autograding-grading-reporter, which sends the points: its `runners` input
lists the tests' step ids, and for each an environment variable <ID in capitals>_RESULTS holds
that step's output `result`. (The formats are the actions' own READMEs; docs/TEACHING.md,
section 8, names them.)

    python3 scripts/check_classroom.py                      # the format, and the lessons covered
    python3 scripts/check_classroom.py --lessons build/lessons.tsv
    python3 scripts/check_classroom.py --run 01 --expect fail --upstream HEAD [--work DIR]
    python3 scripts/check_classroom.py --self-test          # the check refuses broken copies

1. The file is validated against SCHEMA below (a JSON schema of the subset of a workflow the
   Classroom format uses, written from the actions' documented inputs), then for what the schema
   cannot say: the reporter's runners are exactly the graders' ids, in order, each with its
   _RESULTS variable; every test runs `bash scripts/grade.sh NN --no-setup ... --upstream` with
   the course found by the step `upstream`; with --lessons, every lesson build a CPU runner
   grades (lessons.tsv: labels with `cpu`) has exactly one test, and no test names another.
2. --run NN runs lesson NN's listed command as the grader would (only PATH and HOME in its
   environment, in the repository's root, within the test's timeout), with the expressions
   replaced (the upstream by --upstream, /tmp/gs-classroom by a fresh folder; with --work DIR,
   grade.sh's work folder /tmp/gs-classroom/work by DIR, whose builds of the same upstream commit
   it then reuses, as the workflow's later tests reuse the first one's), and checks that it
   passes or fails as --expect says, and that grade.sh's JSON gives that lesson the status that
   goes with it (PASS or PARTIAL; with --expect fail, FAIL: its tests failed, as a shipped stub's
   do, not INVALID or BUILD FAILED).

Exit status: 0 the checks passed; 1 one failed; 2 usage (PyYAML missing: apt-get install
python3-yaml).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github/workflows/classroom.yml"
GRADER = r"^(classroom-resources|education)/autograding-command-grader@v\d+$"
REPORTER = r"^(classroom-resources|education)/autograding-grading-reporter@v\d+$"
STEP_ID = r"^[a-z0-9][a-z0-9-]*$"
UPSTREAM_EXPRESSION = "${{ steps.upstream.outputs.upstream }}"
OUTPUT_FOLDER = "/tmp/gs-classroom"

# The workflow, as far as Classroom's format goes (JSON Schema, the keywords validate() knows).
SCHEMA = {
    "type": "object",
    "required": ["name", "on", "permissions", "jobs"],
    "properties": {
        "name": {"type": "string"},
        "on": {"type": "array", "items": {"enum": ["push", "workflow_dispatch", "repository_dispatch"]},
               "contains_all": ["push", "repository_dispatch"]},
        # The reporter writes a check run: checks write; it reads the run: actions read.
        "permissions": {"type": "object", "required": ["checks", "actions", "contents"],
                        "properties": {"checks": {"const": "write"}, "actions": {"const": "read"},
                                       "contents": {"const": "read"}},
                        "additionalProperties": False},
        "jobs": {"type": "object", "minProperties": 1, "maxProperties": 1,
                 "additionalProperties": {
                     "type": "object", "required": ["runs-on", "steps"],
                     "properties": {"runs-on": {"type": "string"}, "if": {"type": "string"},
                                    "timeout-minutes": {"type": "integer", "minimum": 1},
                                    "steps": {"type": "array", "minItems": 3,
                                              "items": {"$ref": "step"}}},
                     "additionalProperties": False}},
    },
}
STEP = {
    "anyOf": [
        {"type": "object", "required": ["id", "uses", "with"],  # a test
         "properties": {
             "name": {"type": "string"}, "id": {"type": "string", "pattern": STEP_ID},
             "if": {"type": "string"}, "continue-on-error": {"type": "boolean"},
             "uses": {"type": "string", "pattern": GRADER},
             "with": {"type": "object", "required": ["test-name", "command", "timeout", "max-score"],
                      "properties": {"test-name": {"type": "string", "minLength": 1},
                                     "setup-command": {"type": "string"},
                                     "command": {"type": "string", "minLength": 1},
                                     "timeout": {"type": "integer", "minimum": 1, "maximum": 360},
                                     "max-score": {"type": "integer", "minimum": 1}},
                      "additionalProperties": False}},
         "additionalProperties": False},
        {"type": "object", "required": ["uses", "env", "with"],  # the reporter
         "properties": {
             "name": {"type": "string"}, "if": {"type": "string"},
             "uses": {"type": "string", "pattern": REPORTER},
             "env": {"type": "object", "minProperties": 1,
                     "propertyNames": {"pattern": r"^[A-Z0-9][A-Z0-9-]*_RESULTS$"},
                     "additionalProperties": {
                         "type": "string",
                         "pattern": r"^\$\{\{ ?steps\.[a-z0-9-]+\.outputs\.result ?\}\}$"}},
             "with": {"type": "object", "required": ["runners"],
                      "properties": {"runners": {"type": "string",
                                                 "pattern": r"^[a-z0-9-]+(,[a-z0-9-]+)*$"}},
                      "additionalProperties": False}},
         "additionalProperties": False},
        {"type": "object", "required": ["uses"],  # anything else: checkout, upload
         "properties": {"uses": {"type": "string",
                                 "not_pattern": r"autograding-(command-grader|grading-reporter)"}}},
        {"type": "object", "required": ["run"], "properties": {"run": {"type": "string"}}},
    ]
}
TYPES = {"object": dict, "array": list, "string": str, "boolean": bool}


def validate(value, schema, where="$") -> list[str]:
    """The errors of `value` against `schema` (a small JSON Schema: the keywords used above)."""
    if "$ref" in schema:
        schema = STEP
    errors: list[str] = []
    if "anyOf" in schema:
        branches = [validate(value, branch, where) for branch in schema["anyOf"]]
        if all(branches):
            best = min(branches, key=len)
            return [f"{where}: matches no allowed form; closest: {best[0]}"]
        return []
    kind = schema.get("type")
    if kind == "integer":
        if not isinstance(value, int) or isinstance(value, bool):
            return [f"{where}: {value!r} is not an integer"]
    elif kind and not isinstance(value, TYPES[kind]):
        return [f"{where}: {value!r} is not of type {kind}"]
    if "const" in schema and value != schema["const"]:
        errors.append(f"{where}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{where}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, str):
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append(f"{where}: {value!r} does not match {schema['pattern']}")
        if "not_pattern" in schema and re.search(schema["not_pattern"], value):
            errors.append(f"{where}: {value!r} must not match {schema['not_pattern']}")
        if len(value) < schema.get("minLength", 0):
            errors.append(f"{where}: is empty")
    if isinstance(value, int) and not isinstance(value, bool):
        if value < schema.get("minimum", value) or value > schema.get("maximum", value):
            errors.append(f"{where}: {value} is out of range")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            errors.append(f"{where}: fewer than {schema['minItems']} items")
        for item in schema.get("contains_all", []):
            if item not in value:
                errors.append(f"{where}: must contain {item!r}")
        for index, item in enumerate(value):
            if "items" in schema:
                errors += validate(item, schema["items"], f"{where}[{index}]")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{where}: {key!r} is required")
        if len(value) < schema.get("minProperties", 0) or len(value) > schema.get("maxProperties", len(value)):
            errors.append(f"{where}: {len(value)} properties")
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if "propertyNames" in schema:
                errors += validate(key, schema["propertyNames"], f"{where}.{key} (name)")
            if key in properties:
                errors += validate(item, properties[key], f"{where}.{key}")
            elif extra is False:
                errors.append(f"{where}: unexpected property {key!r}")
            elif isinstance(extra, dict):
                errors += validate(item, extra, f"{where}.{key}")
    return errors


def load(path: Path):
    try:
        import yaml
    except ImportError:
        print("check_classroom: PyYAML is missing (apt-get install python3-yaml)", file=sys.stderr)
        sys.exit(2)
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def tests_of(workflow) -> tuple[list[dict], list[dict]]:
    steps = next(iter(workflow["jobs"].values()))["steps"]
    graders = [s for s in steps if re.search(GRADER, str(s.get("uses", "")))]
    reporters = [s for s in steps if re.search(REPORTER, str(s.get("uses", "")))]
    return graders, reporters


def lesson_of(step: dict) -> str | None:
    words = shlex.split(step["with"]["command"])
    return words[2] if words[:2] == ["bash", "scripts/grade.sh"] and len(words) > 2 else None


def check(workflow, lessons_tsv: Path | None) -> list[str]:
    if not isinstance(workflow, dict):
        return ["the file is not a YAML mapping"]
    # PyYAML reads the key on: as True (YAML 1.1) unless it is quoted, as Classroom writes it.
    if True in workflow:
        return ["the key on: must be written \"on\" (quoted): unquoted, YAML 1.1 reads true"]
    errors = validate(workflow, SCHEMA)
    if errors:
        return errors
    steps = next(iter(workflow["jobs"].values()))["steps"]
    graders, reporters = tests_of(workflow)
    ids = [s["id"] for s in graders]
    if not graders:
        errors.append("no test (autograding-command-grader step)")
    if len(reporters) != 1:
        return errors + [f"{len(reporters)} reporter steps, not one"]
    reporter = reporters[0]
    if steps.index(reporter) < max(steps.index(s) for s in graders):
        errors.append("the reporter runs before a test")
    if len(set(ids)) != len(ids):
        errors.append(f"step ids repeat: {ids}")
    runners = reporter["with"]["runners"].split(",")
    if runners != ids:
        errors.append(f"the reporter's runners {runners} are not the tests' ids {ids}")
    expected_env = {f"{i.upper()}_RESULTS" for i in ids}
    if set(reporter["env"]) != expected_env:
        errors.append(f"the reporter's variables {sorted(reporter['env'])} are not {sorted(expected_env)}")
    for name, value in reporter["env"].items():
        step_id = re.search(r"steps\.([a-z0-9-]+)\.", value).group(1)
        if f"{step_id.upper()}_RESULTS" != name:
            errors.append(f"{name} holds the result of step {step_id}")
    upstream_steps = [s for s in steps if s.get("id") == "upstream"]
    if not upstream_steps or steps.index(upstream_steps[0]) > steps.index(graders[0]):
        errors.append("no step with id `upstream` before the tests (it finds the course)")
    lessons = []
    for step in graders:
        command = step["with"]["command"]
        lesson = lesson_of(step)
        words = shlex.split(command)
        if lesson is None or lesson.startswith("-"):
            errors.append(f"{step['id']}: the command does not start `bash scripts/grade.sh NN`: {command}")
            continue
        lessons.append(lesson)
        if "--no-setup" not in words:
            errors.append(f"{step['id']}: no --no-setup (the packages are installed once, before the tests)")
        if UPSTREAM_EXPRESSION not in command or "--upstream" not in words:
            errors.append(f"{step['id']}: no `--upstream {UPSTREAM_EXPRESSION}`")
        if not re.search(r"!cancelled\(\)|always\(\)", str(step.get("if", ""))):
            errors.append(f"{step['id']}: no `if: ${{{{ !cancelled() ... }}}}`: a failed lesson would skip the rest")
        if not step["with"]["test-name"].startswith(f"Lesson {lesson}"):
            errors.append(f"{step['id']}: test-name does not start with 'Lesson {lesson}'")
    if len(set(lessons)) != len(lessons):
        errors.append(f"a lesson has two tests: {lessons}")
    if lessons_tsv is not None:
        rows = [line.split("\t") for line in lessons_tsv.read_text(encoding="utf-8").splitlines()[1:]]
        cpu = {row[1] for row in rows if len(row) > 4 and "cpu" in row[4].split(",")}
        allowed = cpu | {row[1] for row in rows if row[1].endswith("_cpu")}
        for lesson in sorted(cpu - set(lessons)):
            errors.append(f"lesson build {lesson} is graded on a CPU runner but has no test")
        for lesson in sorted(set(lessons) - allowed):
            errors.append(f"the test of {lesson} names no lesson build a CPU runner grades")
    return errors


def run(workflow, lesson: str, expect: str, upstream: str, environment: list[str],
        work: Path | None = None) -> list[str]:
    graders, _ = tests_of(workflow)
    step = next((s for s in graders if lesson_of(s) == lesson), None)
    if step is None:
        return [f"no test of lesson {lesson}"]
    with tempfile.TemporaryDirectory(prefix="gs-classroom-") as folder:
        os.chmod(folder, 0o755)  # as the workflow's mkdir makes it: tests run as nobody reach it
        command = step["with"]["command"].replace(UPSTREAM_EXPRESSION, shlex.quote(upstream))
        if work is not None:
            if OUTPUT_FOLDER + "/work" not in command:
                return [f"--work: lesson {lesson}'s command names no {OUTPUT_FOLDER}/work to replace"]
            command = command.replace(OUTPUT_FOLDER + "/work", shlex.quote(str(work.resolve())))
        command = command.replace(OUTPUT_FOLDER, folder)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/root")}
        env.update(item.split("=", 1) for item in environment)
        timeout = step["with"]["timeout"] * 60
        print(f"check_classroom: running the test {step['with']['test-name']!r} as the grader would "
              f"(PATH and HOME only, {step['with']['timeout']} min):\n  {command}", flush=True)
        try:
            status = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, timeout=timeout,
                                    check=False).returncode
        except subprocess.TimeoutExpired:
            return [f"lesson {lesson}'s command ran past the test's timeout"]
        results = sorted(Path(folder).glob("*.json"))
        if not results:
            return [f"lesson {lesson}'s command wrote no JSON (exit status {status})"]
        record = json.loads(results[0].read_text(encoding="utf-8"))
        statuses = [entry.get("status") for entry in record.get("lessons", [])
                    if entry.get("build", entry.get("lesson")) == lesson]
    passed = status == 0
    print(f"check_classroom: exit status {status}, grade.json says {statuses} for {lesson}")
    errors = []
    if passed != (expect == "pass"):
        errors.append(f"lesson {lesson}'s test {'passed' if passed else 'failed'} (exit {status}), "
                      f"expected to {expect}")
    if not statuses:
        errors.append(f"grade.json has no entry for {lesson}")
    elif passed != all(s in ("PASS", "PARTIAL") for s in statuses):
        errors.append(f"exit status {status} disagrees with grade.json's {statuses}")
    elif expect == "fail" and statuses != ["FAIL"]:
        # the shipped stub fails its tests: FAIL, not INVALID (a dirty tree) or BUILD FAILED
        errors.append(f"grade.json says {statuses} for {lesson}, not FAIL (the tests failing)")
    return errors


def self_test(workflow, lessons_tsv: Path | None) -> int:
    import copy

    def broken(change):
        data = copy.deepcopy(workflow)
        change(data)
        return data

    job = lambda data: next(iter(data["jobs"].values()))  # noqa: E731
    graders = lambda data: [s for s in job(data)["steps"] if "command-grader" in str(s.get("uses"))]  # noqa: E731
    reporter = lambda data: [s for s in job(data)["steps"] if "grading-reporter" in str(s.get("uses"))][0]  # noqa: E731
    cases = [
        ("a timeout given as text", lambda d: graders(d)[0]["with"].update(timeout="ten")),
        ("points missing", lambda d: graders(d)[0]["with"].pop("max-score")),
        ("a misspelt input", lambda d: graders(d)[0]["with"].update({"maxscore": 10})),
        ("a runner the reporter does not list",
         lambda d: reporter(d)["with"].update(runners=reporter(d)["with"]["runners"].rsplit(",", 1)[0])),
        ("a result variable of another step",
         lambda d: reporter(d)["env"].update({list(reporter(d)["env"])[0]: "${{steps.nothing.outputs.result}}"})),
        ("a test that does not run grade.sh", lambda d: graders(d)[0]["with"].update(command="true")),
        ("a test without --no-setup", lambda d: graders(d)[0]["with"].update(
            command=graders(d)[0]["with"]["command"].replace(" --no-setup", ""))),
        ("checks: read", lambda d: d["permissions"].update(checks="read")),
        ("a test skipped after an earlier one failed", lambda d: graders(d)[1].pop("if")),
    ]
    if lessons_tsv is not None:
        cases.append(("a lesson left out", lambda d: job(d)["steps"].remove(graders(d)[-1])))
    failures = 0
    for what, change in cases:
        if not check(broken(change), lessons_tsv):
            print(f"self-test: accepted but should refuse: {what}", file=sys.stderr)
            failures += 1
    print(f"check_classroom self-test: {len(cases) - failures} of {len(cases)} broken copies refused")
    return 1 if failures else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workflow", type=Path, default=WORKFLOW)
    parser.add_argument("--lessons", type=Path, help="a build's lessons.tsv: check the lessons covered")
    parser.add_argument("--run", metavar="NN", help="run this lesson's listed command")
    parser.add_argument("--expect", choices=("pass", "fail"), default="fail")
    parser.add_argument("--upstream", default="HEAD", help="what the command's --upstream becomes")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="add to the command's environment (e.g. GS_CMAKE_ARGS=-DGS_CUDA=OFF)")
    parser.add_argument("--work", type=Path, metavar="DIR",
                        help="grade.sh's work folder (--work) instead of a fresh one: its builds are reused")
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    workflow = load(args.workflow)
    if args.self_test and self_test(workflow, args.lessons):
        return 1
    errors = check(workflow, args.lessons)
    if not errors and args.run:
        errors = run(workflow, args.run, args.expect, args.upstream, args.env, args.work)
    for error in errors:
        print(f"check_classroom: {args.workflow}: {error}", file=sys.stderr)
    if errors:
        return 1
    graders, _ = tests_of(workflow)
    points = sum(s["with"]["max-score"] for s in graders)
    print(f"check_classroom: ok, {len(graders)} tests ({', '.join(lesson_of(s) for s in graders)}), "
          f"{points} points")
    return 0


if __name__ == "__main__":
    sys.exit(main())
