#!/usr/bin/env python3
"""common/'s floors, checked in CI (docs/ARCHITECTURE.md): each library of common/CMakeLists.txt
includes only headers of its own floor or of the floors below it.

    gs_run                      3
    gs_output   gs_device       2 (side by side: neither includes the other)
    gs_problem                  1
    gs_base                     0

A header belongs to the library that compiles its .cpp; the header-only ones are listed below.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
FLOOR = {"gs_base": 0, "gs_problem": 1, "gs_device": 2, "gs_output": 2, "gs_run": 3}
HEADER_ONLY = {"colormap": "gs_output", "cuda_check": "gs_device", "gpu_stencil": "gs_device",
               "gpu": "gs_device", "lesson": "gs_run", "registry": "gs_run",
               "host_device": "gs_base", "step_coefficients": "gs_problem"}


def libraries():
    """Source basename -> library, from common/CMakeLists.txt's add_library() calls."""
    text = (ROOT / "common" / "CMakeLists.txt").read_text()
    owner = {}
    for name, body in re.findall(r"add_library\((gs_\w+) STATIC(.*?)\)\n", text, re.S):
        for source in re.findall(r"src/(\w+)\.cpp", body):
            owner[source] = name
    return owner


def main():
    owner = libraries()
    owner.update(HEADER_ONLY)
    owner.setdefault("gpu", "gs_device")
    if "gpu_cuda" in owner:
        owner["gpu"] = owner["gpu_cuda"]
    problems = []
    files = sorted((ROOT / "common" / "src").glob("*.cpp")) + sorted(
        (ROOT / "common" / "include" / "gs").glob("*.hpp"))
    for path in files:
        name = path.stem
        library = owner.get(name)
        if library is None:
            problems.append(f"{path.relative_to(ROOT)}: in no library of common/CMakeLists.txt "
                            "(add it there, or to HEADER_ONLY here)")
            continue
        for line_number, line in enumerate(path.read_text().splitlines(), 1):
            found = re.match(r'\s*#\s*include\s+"gs/(\w+)\.hpp"', line)
            if not found or found.group(1) == name:
                continue
            included = owner.get(found.group(1))
            if included is None:
                problems.append(f"{path.relative_to(ROOT)}:{line_number}: gs/{found.group(1)}.hpp "
                                "belongs to no library")
            elif included != library and FLOOR[included] >= FLOOR[library]:
                problems.append(f"{path.relative_to(ROOT)}:{line_number}: {library} includes "
                                f"gs/{found.group(1)}.hpp of {included}, a floor not below it")
    for problem in problems:
        print("FAIL", problem)
    if not problems:
        print(f"check_common_floors: ok, {len(files)} files of common/ include only their floor "
              "and the floors below")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
