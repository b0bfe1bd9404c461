#!/usr/bin/env python3
"""Nothing in sight does the exercise for the learner, checked in CI.

For each lesson with a learner's file (solutions/NN_topic/<file> beside lessons/NN_topic/<file>),
the lines the solution adds or changes (a diff against the shipped stubs) are the answer. This
check fails when a run of at least MIN_RUN consecutive tokens of one such line appears in what the
learner reads while doing the exercise:

  - the lesson's README.md and slides/NN_*.md: the code of fenced blocks and of inline `spans`;
  - its HINTS.md the same way, except a level titled "pseudo-code" (the last level, which may
    show the steps in the lesson's terms; it is read by hand, not here);
  - the lesson's body: every other file of lessons/NN_topic/ (sources, scripts, CMakeLists.txt),
    its subfolders' included (a lesson's program/);
  - the comments of the learner's file itself (the stubs say what to achieve, not the code).

Tokens are C++-ish: identifiers, numbers, string and character literals, operators; comments and
whitespace dropped, so a line re-wrapped or re-indented still matches. A solution line of fewer
than MIN_LINE tokens (a brace, `return;`, `++i;`) is too common to be an answer and is skipped;
a line of MIN_LINE to MIN_RUN - 1 tokens counts when it appears whole. Consecutive changed lines
that form one statement (a call wrapped over two lines) are joined first.

MIN_RUN = 9, measured on lessons 01-10: at 8, the body's index expressions and argument lists
match (`&in.u[in.index(row - 1, 0)]`, `(rows, cols, u, v, u_next, v_next, rates)`: a body and a
solution both need them), 14 more hits that are vocabulary, not answers; at 9 every hit is a line
a reader would call the same statement; at 12 the check starts to miss copies cut short (a quoted
call without its `;` or its first words). Code files report only stretches: two different answer
lines within CLOSE lines (one line alone there is vocabulary); Markdown reports every line.

Exceptions go only through scripts/no_answers_allow.txt, one per line with its reason. Run alone:
python3 scripts/check_no_answers.py (exit status 1 and file:line for each match).
"""
import difflib
import pathlib
import re
import sys

MIN_RUN = 9
MIN_LINE = 6
CLOSE = 3
ROOT = pathlib.Path(__file__).resolve().parent.parent
ALLOW = ROOT / "scripts" / "no_answers_allow.txt"

TOKEN = re.compile(
    r"""
    (?P<string>R"(?P<delim>[^(\s]*)\(.*?\)(?P=delim)"|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<number>\.?\d(?:[\w.']|[eEpP][+-])*)
  | (?P<name>[A-Za-z_]\w*)
  | (?P<op>::|->\*?|\.\.\.|<<=|>>=|<=>|[-+*/%&|^!=<>]=|<<|>>|&&|\|\||\+\+|--|\.\*|[^\s\w])
    """,
    re.VERBOSE | re.DOTALL,
)
C_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


def strip_comments(text, hash_comments=False):
    """Blank the comments, keeping the newlines (so line numbers hold) and string literals."""

    def blank(match):
        return re.sub(r"[^\n]", " ", match.group(0))

    pattern = C_COMMENT
    if hash_comments:
        pattern = re.compile(r"#[^\n]*")
    out, pos = [], 0
    for literal in re.finditer(r'"(?:\\.|[^"\\\n])*"', text):
        out.append(pattern.sub(blank, text[pos : literal.start()]))
        out.append(literal.group(0))
        pos = literal.end()
    out.append(pattern.sub(blank, text[pos:]))
    return "".join(out)


def tokens(text, first_line=1):
    """[(token, line)] of text, whose first line is first_line."""
    result, line, pos = [], first_line, 0
    for match in TOKEN.finditer(text):
        line += text.count("\n", pos, match.start())
        pos = match.start()
        result.append((match.group(0), line))
    return result


def answer_lines(exercise, solution):
    """[(solution line number, its text, its tokens)]: the statements the solution adds."""
    stub = exercise.read_text().splitlines()
    done = solution.read_text().splitlines()
    code = strip_comments("\n".join(done)).splitlines()
    changed = []
    matcher = difflib.SequenceMatcher(None, [s.strip() for s in stub], [s.strip() for s in done],
                                      autojunk=False)
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            changed.extend(range(j1, j2))
    statements, current = [], []
    for index in changed:
        if current and current[-1] != index - 1:
            statements.append(current)
            current = []
        current.append(index)
        ending = code[index].rstrip()
        if not ending or ending.endswith((";", "{", "}", ":")) or ending.lstrip().startswith("#"):
            statements.append(current)
            current = []
    if current:
        statements.append(current)
    result = []
    for lines in statements:
        toks = [t for t, _ in tokens("\n".join(code[i] for i in lines))]
        if len(toks) >= MIN_LINE:
            result.append((lines[0] + 1, " ".join(done[i].strip() for i in lines), toks))
    return result


def markdown_code(path, skip_pseudo_code):
    """[(token, line)] sequences: each fenced block and each inline span of a Markdown file."""
    text = path.read_text()
    sequences, fence, block, block_start = [], None, [], 0
    level_heading = re.compile(r"^(#{2,4})\s+Level\s+\d|<summary>\s*Level\s+\d")
    skipping, skip_depth = False, 0
    for number, line in enumerate(text.splitlines(), 1):
        heading = re.match(r"^(#+)\s", line)
        if fence is None:
            if skipping:
                ends = ("</details>" in line) if skip_depth == 0 else (
                    heading is not None and len(heading.group(1)) <= skip_depth)
                if ends:
                    skipping = False
                else:
                    continue
            level = level_heading.search(line)
            if skip_pseudo_code and level and "pseudo-code" in line.lower():
                skipping = True
                skip_depth = len(level.group(1)) if level.group(1) else 0
                continue
            opening = re.match(r"^\s*(`{3,}|~{3,})", line)
            if opening:
                fence, block, block_start = opening.group(1), [], number + 1
                continue
            for span in re.finditer(r"(`+)(.+?)\1", line):
                sequences.append(tokens(span.group(2), number))
        elif line.strip().startswith(fence):
            sequences.append(tokens(strip_comments("\n".join(block)), block_start))
            fence = None
        else:
            block.append(line)
    return sequences


def source_code(path):
    text = path.read_text(errors="replace")
    hash_comments = path.suffix in (".py", ".sh") or path.name == "CMakeLists.txt"
    return [tokens(strip_comments(text, hash_comments))]


def comment_text(path):
    """The comments of a learner's file, as one sequence (their code-like words)."""
    text = path.read_text()
    kept = re.sub(r"[^\n]", " ", text)
    kept = list(kept)
    for match in C_COMMENT.finditer(text):
        kept[match.start() + 2 : match.end()] = text[match.start() + 2 : match.end()]
    return [tokens("".join(kept))]


def find(sequence, answers):
    """Matches of answer token runs in one material sequence: [(line, answer)]."""
    words = [t for t, _ in sequence]
    index = {}
    for position in range(len(words) - MIN_LINE + 1):
        index.setdefault(tuple(words[position : position + MIN_LINE]), []).append(position)
    found = []
    for answer in answers:
        toks = answer[2]
        run = min(MIN_RUN, len(toks))
        hit = None
        for start in range(len(toks) - run + 1):
            window = toks[start : start + run]
            for position in index.get(tuple(window[:MIN_LINE]), ()):
                if words[position : position + run] == window:
                    hit = sequence[position][1]
                    break
            if hit is not None:
                break
        if hit is not None:
            found.append((hit, answer))
    return found


def stretches(hits):
    """The hits of a code file that show a stretch of an answer: a line of the answer alone is
    vocabulary a body may share (a lock, a loop header, an index it needs itself); two different
    answer lines within CLOSE lines of each other are the answer being shown (a line for u and
    its twin for v count as one line)."""
    kept = []
    for line, answer in hits:
        if any(twin_free(other) != twin_free(answer) and other_line != line and
               abs(other_line - line) <= CLOSE for other_line, other in hits):
            kept.append((line, answer))
    return kept


def twin_free(answer):
    """An answer line with v written as u: a line for u and its twin for v count as one."""
    return tuple(re.sub(r"(?<![^_])v(?![^_])", "u", t) for t in answer[2])


def allowed():
    entries = set()
    if not ALLOW.exists():
        return entries
    for number, line in enumerate(ALLOW.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        material, _, rest = line.partition(" | ")
        answer, _, reason = rest.rpartition(" | ")
        parts = [material.strip(), answer.strip(), reason.strip()]
        if not all(parts):
            sys.exit(f"{ALLOW}:{number}: write 'material file | solution line | reason'")
        entries.add((parts[0], parts[1]))
    return entries


def main():
    allow = allowed()
    used, failures, checked = set(), 0, 0
    for solution_dir in sorted((ROOT / "solutions").iterdir()):
        lesson_dir = ROOT / "lessons" / solution_dir.name
        learner = {p.name for p in solution_dir.iterdir()}
        answers = []
        for name in sorted(learner):
            for number, text, toks in answer_lines(lesson_dir / name, solution_dir / name):
                answers.append((f"solutions/{solution_dir.name}/{name}:{number}", text, toks))
        material = []
        for name in ("README.md", "HINTS.md"):
            if (lesson_dir / name).exists():
                material.append((lesson_dir / name, markdown_code(lesson_dir / name, True)))
        number = solution_dir.name.split("_")[0]
        for deck in sorted((ROOT / "slides").glob(f"{number}_*.md")):
            material.append((deck, markdown_code(deck, False)))
        # Subfolders too: a lesson's program/ (its program's plumbing) is in the learner's sight.
        for path in sorted(lesson_dir.rglob("*")):
            if not path.is_file() or path.suffix == ".md" or "__pycache__" in path.parts:
                continue
            if path.parent == lesson_dir and path.name in learner:
                continue
            material.append((path, source_code(path)))
        for name in sorted(learner):
            material.append((lesson_dir / name, comment_text(lesson_dir / name)))
        for path, sequences in material:
            where = str(path.relative_to(ROOT))
            hits = [hit for sequence in sequences for hit in find(sequence, answers)]
            if path.suffix != ".md":
                hits = stretches(hits)
            for line, (origin, text, _) in sorted(hits):
                checked += 1
                if (where, text) in allow:
                    used.add((where, text))
                    continue
                failures += 1
                print(f"{where}:{line}: shows the answer of {origin}\n    {text}")
    for entry in sorted(allow - used):
        print(f"{ALLOW.relative_to(ROOT)}: unused entry (remove it): {entry[0]} | {entry[1]}")
        failures += 1
    if failures:
        print(f"check_no_answers: {failures} problem(s); a learner's answer belongs in solutions/ "
              "only (the last hint level may give pseudo-code)")
        return 1
    print(f"check_no_answers: ok, no solution line in any lesson's material ({len(used)} allowed "
          f"in {ALLOW.relative_to(ROOT)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
