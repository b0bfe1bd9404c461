#!/usr/bin/env bash
# Checks every picture that a tracked Markdown file shows: the README, the lessons' tutorials, the
# slide decks, docs/ and the rest. For each image -- Markdown `![alt](path)` (Marp's
# `![w:700 alt](path)` included), reference-style `![alt][label]` with its `[label]: path`, and
# HTML `<img src="..." alt="...">` -- it checks that
#   - the file exists, relative to the Markdown file (or to the repository root for a path that
#     starts with /), and is tracked by git, so that GitHub and a fresh clone have it;
#   - the alt text is not empty (Marp's size and position keywords do not count as text);
# and that every lesson's tutorial (lessons/NN_topic/README.md) shows at least one picture.
# Pictures on http(s) are not checked (the course's figures live in the repository). Code blocks,
# inline code and HTML comments are skipped. Prints every problem as file:line: message and exits
# 1 if there is any, 0 otherwise. Needs bash, git (optional) and python3's standard library.
#
#   bash scripts/check_images.sh            # every tracked *.md file
#   bash scripts/check_images.sh FILE.md…   # only these
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v python3 > /dev/null; then
  echo "check_images.sh: python3 is needed (Debian/Ubuntu: sudo apt-get install python3)" >&2
  exit 2
fi

if [ "$#" -gt 0 ]; then
  files=("$@")
elif git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.md')
else
  mapfile -t files < <(find . -name '*.md' -not -path '*/node_modules/*' -not -path './build*' | sed 's|^\./||' | sort)
fi

if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  tracked="$(git ls-files)"
else
  tracked=""
fi

GS_TRACKED="$tracked" python3 - "${files[@]}" <<'PYTHON'
import os
import re
import sys
from urllib.parse import unquote

root = os.getcwd()
tracked_list = os.environ.get("GS_TRACKED", "")
tracked = set(tracked_list.splitlines()) if tracked_list else None

# Marp's image keywords (https://marpit.marp.app/image-syntax): sizes, filters, backgrounds.
MARP_KEYWORD = re.compile(
    r"^(?:(?:w|h|width|height):\S+|bg|contain|cover|fit|auto|left|right|vertical|"
    r"(?:left|right):\S+|\d+(?:\.\d+)?%|"
    r"(?:blur|brightness|contrast|drop-shadow|grayscale|hue-rotate|invert|opacity|saturate|sepia)"
    r"(?::\S+)?)$")

INLINE = re.compile(r"!\[((?:[^\[\]\\]|\\.|\[[^\]]*\])*)\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
REFERENCE = re.compile(r"!\[((?:[^\[\]\\]|\\.)*)\]\[([^\]]*)\]")
DEFINITION = re.compile(r"^ {0,3}\[([^\]]+)\]:\s*(<[^>]*>|\S+)")
IMG_TAG = re.compile(r"<img\b[^>]*>", re.IGNORECASE | re.DOTALL)
ATTRIBUTE = re.compile(r"""([a-zA-Z-]+)\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)""")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")

problems = []
shown = {}  # pictures each file shows


def strip_code_and_comments(lines):
    """The text GitHub and Marp render as Markdown: no fenced code, no inline code, no comments.
    Line numbers are kept; skipped text becomes spaces."""
    out = []
    fence = None
    in_comment = False
    for line in lines:
        if fence is None:
            match = FENCE.match(line)
            if match and not in_comment:
                fence = match.group(1)
                out.append("")
                continue
        else:
            stripped = line.strip()
            if stripped.startswith(fence[0] * len(fence)) and set(stripped) <= {fence[0]}:
                fence = None
            out.append("")
            continue
        text = ""
        rest = line
        while rest:
            if in_comment:
                end = rest.find("-->")
                if end < 0:
                    rest = ""
                else:
                    rest = rest[end + 3:]
                    in_comment = False
                continue
            start = rest.find("<!--")
            if start < 0:
                text += rest
                rest = ""
            else:
                text += rest[:start]
                rest = rest[start + 4:]
                in_comment = True
        out.append(CODE_SPAN.sub(lambda m: " " * len(m.group(0)), text))
    return out


def real_alt(alt):
    words = [w for w in alt.split() if not MARP_KEYWORD.match(w)]
    return " ".join(words).strip()


def check_target(md, line, target):
    shown[md] = shown.get(md, 0) + 1
    target = target.strip()
    if target.startswith("<") and target.endswith(">"):
        target = target[1:-1].strip()
    if not target:
        problems.append((md, line, "image with an empty path"))
        return
    lowered = target.lower()
    if lowered.startswith(("http://", "https://")):
        return
    if re.match(r"^[a-z][a-z0-9+.-]*:", lowered):
        problems.append((md, line, f"{target}: not a file in the repository (use a path)"))
        return
    path = unquote(target.split("#", 1)[0].split("?", 1)[0])
    if path.startswith("/"):
        resolved = os.path.normpath(os.path.join(root, path.lstrip("/")))
    else:
        resolved = os.path.normpath(os.path.join(root, os.path.dirname(md), path))
    relative = os.path.relpath(resolved, root)
    if relative.startswith(".."):
        problems.append((md, line, f"{target}: outside the repository"))
    elif not os.path.isfile(resolved):
        problems.append((md, line, f"{target}: no such file ({relative})"))
    elif tracked is not None and relative.replace(os.sep, "/") not in tracked:
        problems.append((md, line, f"{target}: {relative} exists but is not tracked by git"))


def check_file(md):
    try:
        with open(md, encoding="utf-8") as handle:
            lines = handle.read().split("\n")
    except OSError as error:
        problems.append((md, 0, f"cannot read: {error.strerror}"))
        return
    text_lines = strip_code_and_comments(lines)
    definitions = {}
    for line in text_lines:
        match = DEFINITION.match(line)
        if match:
            definitions.setdefault(match.group(1).strip().lower(), match.group(2))
    # Markdown images, one line at a time (an image's markup does not span lines here).
    for number, line in enumerate(text_lines, start=1):
        for match in INLINE.finditer(line):
            if not real_alt(match.group(1)):
                problems.append((md, number, f"{match.group(2)}: empty alt text"))
            check_target(md, number, match.group(2))
        for match in REFERENCE.finditer(line):
            label = (match.group(2) or match.group(1)).strip().lower()
            if not real_alt(match.group(1)):
                problems.append((md, number, f"![{match.group(1)}][{match.group(2)}]: empty alt text"))
            if label not in definitions:
                problems.append((md, number, f"image reference [{label}] is not defined"))
            else:
                check_target(md, number, definitions[label])
    # HTML <img> tags, which may span lines.
    joined = "\n".join(text_lines)
    for match in IMG_TAG.finditer(joined):
        number = joined.count("\n", 0, match.start()) + 1
        attributes = {name.lower(): value.strip("\"'") for name, value in ATTRIBUTE.findall(match.group(0))}
        if "src" not in attributes:
            problems.append((md, number, "<img> without src"))
        else:
            check_target(md, number, attributes["src"])
        if not attributes.get("alt", "").strip():
            problems.append((md, number, f"<img src=\"{attributes.get('src', '')}\">: empty or missing alt text"))


files = sys.argv[1:]
for md in files:
    check_file(md)
    if re.fullmatch(r"lessons/\d\d_[^/]+/README\.md", md) and shown.get(md, 0) == 0:
        problems.append((md, 1, "a lesson's tutorial shows no picture (a figure of its idea or "
                                "of what it measured)"))
lessons = sum(1 for md in files if re.fullmatch(r"lessons/\d\d_[^/]+/README\.md", md))
for md, number, message in sorted(problems, key=lambda p: (files.index(p[0]), p[1])):
    print(f"{md}:{number}: {message}")
if problems:
    print(f"check_images: {len(problems)} problem(s) in {len(files)} Markdown file(s)", file=sys.stderr)
    sys.exit(1)
print(f"check_images: {len(files)} Markdown file(s), every image found, every alt text present, "
      f"every lesson's tutorial ({lessons}) with a picture")
PYTHON
