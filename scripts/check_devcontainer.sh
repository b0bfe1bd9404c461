#!/usr/bin/env bash
# Checks the dev containers (.devcontainer/devcontainer.json, the CPU one, and
# .devcontainer/gpu/devcontainer.json) without a container engine, in two parts:
#  1. `devcontainer read-configuration` of the Dev Containers CLI (pinned in
#     .devcontainer/cli/package-lock.json, installed there by `npm ci` when missing) must succeed
#     for each. It asks `docker ps` whether the container already exists; with no engine here that
#     question goes to a stand-in that answers "none" (--docker-path), the rest is the CLI's own.
#  2. The CLI reads a truncated file or a number where a path belongs without a word, so each file
#     is also parsed here (JSON with comments) and checked against what the course needs: the
#     fields it uses have the dev container specification's types, build.dockerfile is
#     docker/Dockerfile and build.context the repository, every build argument is an ARG of the
#     Dockerfile, the CPU one is based on a Debian or Ubuntu image without CUDA, and the GPU one
#     keeps the Dockerfile's CUDA base and runs with `--gpus all`.
#
#   bash scripts/check_devcontainer.sh               # the course's two configurations
#   bash scripts/check_devcontainer.sh --self-test   # the checks fail where they should
# Exit status: 0 both pass; 1 a check failed; 2 npm/node missing.
# Building the image is scripts/container_check.sh's (the same docker/Dockerfile).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
cli_dir=$root/.devcontainer/cli
cli=$cli_dir/node_modules/.bin/devcontainer

if [ ! -x "$cli" ]; then
  command -v npm > /dev/null 2>&1 || { echo "check_devcontainer: npm not found (apt-get install nodejs npm)" >&2; exit 2; }
  (cd "$cli_dir" && npm ci --no-audit --no-fund --loglevel=error) || { echo "check_devcontainer: npm ci failed" >&2; exit 1; }
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/gs-devcontainer.XXXXXX")
trap 'rm -rf "$work"' EXIT
printf '#!/bin/sh\n# a container engine with no containers: what read-configuration asks is "docker ps"\nexit 0\n' > "$work/docker"
chmod +x "$work/docker"

# check CONFIG KIND (cpu|gpu): 0 when both parts pass
check() {
  local config=$1 kind=$2 status=0
  if ! "$cli" read-configuration --workspace-folder "$root" --config "$config" \
       --docker-path "$work/docker" > "$work/read.json" 2> "$work/read.log"; then
    echo "FAIL $config: devcontainer read-configuration failed:"; sed 's/^/   /' "$work/read.log" | tail -5
    status=1
  fi
  python3 - "$config" "$kind" "$root" "$work/read.json" <<'EOF' || status=1
import json, re, sys
from pathlib import Path

config, kind, root, read = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
problems = []

def strip_comments(text):
    # // and /* */ outside strings (devcontainer.json is JSON with comments), then trailing commas
    out, i, in_string = [], 0, False
    while i < len(text):
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\":
                out.append(text[i + 1]); i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True; out.append(c)
        elif text.startswith("//", i):
            i = text.find("\n", i); i = len(text) if i < 0 else i; continue
        elif text.startswith("/*", i):
            i = text.find("*/", i) + 2; continue
        else:
            out.append(c)
        i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))

try:
    data = json.loads(strip_comments(config.read_text(encoding="utf-8")))
except (OSError, ValueError) as error:
    print(f"FAIL {config}: not JSON with comments: {error}"); sys.exit(1)

def expect(path, types, required=True):
    value = data
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            if required: problems.append(f"{path} is missing")
            return None
        value = value[key]
    if not isinstance(value, types):
        problems.append(f"{path} is {type(value).__name__}, not {' or '.join(t.__name__ for t in types) if isinstance(types, tuple) else types.__name__}")
        return None
    return value

name = expect("name", str)
dockerfile = expect("build.dockerfile", str)
context = expect("build.context", str)
args = expect("build.args", dict) or {}
expect("postCreateCommand", (str, list, dict))
expect("remoteEnv", dict, required=False)
expect("customizations.vscode.extensions", list, required=False)
run_args = expect("runArgs", list, required=False) or []
if any(not isinstance(value, str) for value in list(args.values()) + run_args):
    problems.append("build.args values and runArgs must be strings")
if dockerfile and (config.parent / dockerfile).resolve() != (root / "docker/Dockerfile").resolve():
    problems.append(f"build.dockerfile {dockerfile!r} is not docker/Dockerfile")
if context and (config.parent / context).resolve() != root.resolve():
    problems.append(f"build.context {context!r} is not the repository's root")
dockerfile_text = (root / "docker/Dockerfile").read_text(encoding="utf-8")
declared = set(re.findall(r"^ARG (\w+)", dockerfile_text, re.M))
for argument in args:
    if argument not in declared:
        problems.append(f"build.args names {argument}, which docker/Dockerfile does not declare (ARG)")
base = args.get("BASE_IMAGE")
if kind == "cpu":
    if not base or not re.match(r"(docker\.io/)?(library/)?(debian|ubuntu):", base) or "cuda" in base:
        problems.append(f"the CPU container's BASE_IMAGE must be a Debian or Ubuntu image without CUDA, not {base!r}")
    if "--gpus" in run_args:
        problems.append("the CPU container must not ask for --gpus")
else:
    if base is not None:
        problems.append(f"the GPU container must keep the Dockerfile's CUDA base, not BASE_IMAGE={base!r}")
    pairs = list(zip(run_args, run_args[1:]))
    if ("--gpus", "all") not in pairs and "--gpus=all" not in run_args:
        problems.append("the GPU container must run with runArgs [\"--gpus\", \"all\"]")
try:
    read_name = json.loads(read.read_text(encoding="utf-8") or "{}").get("configuration", {}).get("name")
except ValueError:
    read_name = None
if name and read_name != name:
    problems.append(f"devcontainer read-configuration read the name {read_name!r}, not {name!r}")
for problem in problems:
    print(f"FAIL {config}: {problem}")
if not problems:
    print(f"ok   {config}: read by devcontainer read-configuration; {name}, docker/Dockerfile"
          + (f", BASE_IMAGE={base}" if base else ", CUDA base") + (", --gpus all" if run_args else ""))
sys.exit(1 if problems else 0)
EOF
  return $status
}

if [ "${1:-}" = --self-test ]; then
  # Each broken copy, written beside the file it breaks (so its relative paths stay right apart
  # from the break), must fail; the real files must pass below.
  failures=0 cases=0
  broken_cpu=.devcontainer/selftest-$$.json
  broken_gpu=.devcontainer/gpu/selftest-$$.json
  trap 'rm -rf "$work" "$broken_cpu" "$broken_gpu"' EXIT
  refused() {  # refused WHAT KIND FILE: the check must fail on FILE
    cases=$((cases + 1))
    if check "$3" "$2" > "$work/out"; then
      echo "self-test: passed but should fail: $1"; failures=$((failures + 1))
    fi
  }
  sed 's|"../docker/Dockerfile"|"../docker/Dockerfile.missing"|' .devcontainer/devcontainer.json > "$broken_cpu"
  refused "a Dockerfile that is not docker/Dockerfile" cpu "$broken_cpu"
  head -c 400 .devcontainer/devcontainer.json > "$broken_cpu"
  refused "a truncated file" cpu "$broken_cpu"
  sed 's|"debian:bookworm"|"nvidia/cuda:13.0.2-devel-ubuntu24.04"|' .devcontainer/devcontainer.json > "$broken_cpu"
  refused "a CUDA base for the CPU container" cpu "$broken_cpu"
  sed 's|"BUILD_COURSE"|"BUILD_COURSES"|' .devcontainer/devcontainer.json > "$broken_cpu"
  refused "an argument the Dockerfile does not declare" cpu "$broken_cpu"
  sed 's|"--gpus", "all"|"--privileged"|' .devcontainer/gpu/devcontainer.json > "$broken_gpu"
  refused "a GPU container without --gpus all" gpu "$broken_gpu"
  echo "check_devcontainer self-test: $((cases - failures)) of $cases broken configurations refused"
  [ "$failures" = 0 ] || exit 1
fi

status=0
check .devcontainer/devcontainer.json cpu || status=1
check .devcontainer/gpu/devcontainer.json gpu || status=1
exit $status
