#!/usr/bin/env python3
"""A figure README must not say a figure is still to come once it exists.

Every README.md in a folder named `figures` (docs/figures/README.md today) is read paragraph by
paragraph (a list item counts as one). A paragraph that says something is pending ("not measured
yet", "being written", "none is measured", "waits for the two-GPU runs", "will draw it") must
name, in backticks, the figure file it waits for, and that file must not exist beside the README:
once the figure is drawn, the claim is false and this check fails, naming the file and the words.
A claim that names no figure file fails too (nobody could tell when it became false).

    python3 scripts/check_figure_claims.py               # the repository's figure READMEs
    python3 scripts/check_figure_claims.py FILE...       # these READMEs
    python3 scripts/check_figure_claims.py --self-test   # the check fails where it should

Exit status: 0 every claim is still true, 1 a claim is false or names no figure, 2 usage.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PENDING = re.compile(
    r"not measured yet|is measured yet|not (?:yet )?drawn yet|(?:is|are) being written"
    r"|still being written|will draw it|waits? for the [\w× -]*runs?|to be measured",
    re.IGNORECASE,
)
FIGURE = re.compile(r"`([\w.-]+\.(?:svg|png|gif|jpg))`")


def paragraphs(text: str) -> list[tuple[int, str, list[str]]]:
    """(first line number, text, figure names of its ### heading) of each paragraph or item."""
    found: list[tuple[int, str, list[str]]] = []
    heading: list[str] = []
    block: list[str] = []
    start = 0

    def close() -> None:
        if block:
            found.append((start, " ".join(block), heading))

    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("#"):
            close()
            block = []
            heading = FIGURE.findall(stripped) if stripped.startswith("###") else []
            continue
        if not stripped or stripped.startswith("- ") or stripped.startswith("!["):
            close()
            block = [stripped] if stripped else []
            start = number
            continue
        if not block:
            start = number
        block.append(stripped)
    close()
    return found


def check(readme: Path) -> list[str]:
    problems = []
    for line, text, heading in paragraphs(readme.read_text(encoding="utf-8")):
        claim = PENDING.search(text)
        if claim is None:
            continue
        names = FIGURE.findall(text) or heading
        where = f"{readme}:{line}"
        if not names:
            problems.append(f'{where}: says "{claim.group(0)}" but names no figure file it waits '
                            "for (name it in backticks, e.g. `scaling.svg`)")
            continue
        for name in names:
            if (readme.parent / name).exists():
                problems.append(f'{where}: says "{claim.group(0)}", but {name} exists beside it: '
                                "describe the figure as it is now")
    return problems


def figure_readmes() -> list[Path]:
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "*figures/README.md"],
                            capture_output=True, text=True, check=False).stdout.split()
    return [ROOT / name for name in listed] or sorted(ROOT.glob("**/figures/README.md"))


def self_test() -> int:
    cases = [  # (README text, files beside it, should it pass)
        ("A scaling chart waits for the two-GPU runs: none is measured yet.\n", [], False),
        ("`scaling.svg` waits for the two-GPU runs.\n", ["scaling.svg"], False),
        ("`scaling.svg` waits for the two-GPU runs.\n", [], True),
        ("### `deck.svg` — x\n\n- The deck is being written.\n", ["deck.svg"], False),
        ("### `ladder.svg` — x\n\nA copy stream waits for that event.\n", ["ladder.svg"], True),
        ("### `ladder.svg` — x\n\nMeasured on 2026-11-23.\n", ["ladder.svg"], True),
    ]
    failures = 0
    for text, files, should_pass in cases:
        with tempfile.TemporaryDirectory() as folder:
            readme = Path(folder) / "README.md"
            readme.write_text(text, encoding="utf-8")
            for name in files:
                (Path(folder) / name).write_text("", encoding="utf-8")
            passed = not check(readme)
        if passed != should_pass:
            failures += 1
            print(f"self-test: {'passed' if passed else 'failed'} but should have "
                  f"{'passed' if should_pass else 'failed'}: {text!r} with {files}", file=sys.stderr)
    print(f"check_figure_claims self-test: {len(cases) - failures} of {len(cases)} cases right")
    return 1 if failures else 0


def main(arguments: list[str]) -> int:
    if arguments[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    if arguments == ["--self-test"]:
        return self_test()
    readmes = [Path(name) for name in arguments] or figure_readmes()
    if not readmes:
        print("check_figure_claims: no figure README found", file=sys.stderr)
        return 2
    problems = [problem for readme in readmes for problem in check(readme)]
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return 1
    print(f"check_figure_claims: ok, {len(readmes)} figure README(s) claim nothing that is drawn")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
