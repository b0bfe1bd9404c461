#!/usr/bin/env python3
"""Nothing in sight does the exercise for the learner, checked in CI (about 1 s).

For each lesson with a learner's file (solutions/NN_topic/<file> beside lessons/NN_topic/<file>),
the lines the solution adds or changes (a diff against the shipped stubs) are the answer. This
check fails when a run of at least MIN_RUN consecutive tokens of one such line appears in what a
learner reads, in lesson NN or in any other lesson (a learner of lesson 06 may open lesson 09):

  - every lesson's README.md and slides/MM_*.md: the code of fenced blocks and of inline `spans`;
  - every lesson's HINTS.md the same way, except, for the lesson's own answers, a level titled
    "pseudo-code" (the last level, which may show the steps in the lesson's terms; it is read by
    hand, not here): another lesson's pseudo-code level must not show lesson NN's answer;
  - every lesson's body: every file of lessons/MM_topic/ (sources, scripts, CMakeLists.txt), its
    subfolders' included (a lesson's program/), and another lesson's learner files whole;
  - the comments of lesson NN's learner file itself (the stubs say what to achieve, not the code);
  - what every learner may read besides the lessons: README.md, docs/ (its Markdown), the decks of
    no lesson (slides/00_introduction.md) and the notebooks (code cells, and the code of Markdown
    cells; a notebook's line is its cell's number).

Tokens are C++-ish: identifiers, numbers, string and character literals, operators; comments and
whitespace dropped, so a line re-wrapped or re-indented still matches. A solution line of fewer
than MIN_LINE tokens (a brace, `return;`, `++i;`) is too common to be an answer and is skipped;
a line of MIN_LINE to MIN_RUN - 1 tokens counts when it appears whole. Consecutive changed lines
that form one statement (a call wrapped over two lines) are joined first. A run counts only when
it names at least two things of the program (GRAMMAR: a loop header `for (int r = 0; r <`, a cast
`= static_cast<int>(blockIdx.x` name one or none): with the other lessons in sight, such runs
matched in every kernel and picture loop, and six of the exceptions the lessons' own bodies
needed (a cast of threadIdx.x, the 3 x 3 offsets' loop headers) were that grammar.

MIN_RUN = 9, measured on lessons 01-10: at 8, the body's index expressions and argument lists
match (`&in.u[in.index(row - 1, 0)]`, `(rows, cols, u, v, u_next, v_next, rates)`: a body and a
solution both need them), 14 more hits that are vocabulary, not answers; at 9 every hit is a line
a reader would call the same statement; at 12 the check starts to miss copies cut short (a quoted
call without its `;` or its first words). Code files report only stretches: two different answer
lines within CLOSE lines (one line alone there is vocabulary); Markdown reports every line.

Short lines in a row. A solution line shorter than MIN_LINE tokens is skipped above, so a run of
them copied whole passed: lesson 09's streaming kernel held four consecutive lines of lesson 06's
answer (`float box_u = 0.0f;`, `float box_v = 0.0f;`, `#pragma unroll`, the 3 x 3 loop's header),
none of them an answer alone. So in code files the check also looks for RUN_LINES = 3 or more
consecutive code lines (comments and blank lines skipped) that are, line for line and whole,
consecutive lines the solution adds (lines of braces alone do not count), naming at least two
things together. At 3, on lessons 01-11 at 79f1d54, it found that copy and the three tile sizes
of lesson 05's stencil.cu (allowed, as their lines are); at 2, twelve more, each a line for u
and its twin for v (an accumulator, a store, a row's sums) that every kernel writes.

Near-final loops. A line-by-line rule misses a loop of the lesson's own body that is the answer
with a few changes (another name, a statement left out). So the check also compares every loop
(`for`, `while`, `do`, braces matched) of lesson NN's own code (the files of lessons/NN_topic/
but the learner's) with each answer loop: a loop of the solution of at least MIN_LOOP tokens,
at least LOOP_ANSWER_SHARE of them on lines the solution adds. The score is the share of the
answer loop's tokens covered, in order, by runs of at least NEAR_RUN tokens common to both
(difflib's matching blocks); a body loop that scores NEAR_SHARE or more fails. Measured on
lessons 01-11 at 93861d5 (37 answer loops, in every lesson but 07 and 08, whose answers have no
loop of 20 tokens):

  - today's bodies: at most 0.38 (lesson 03's edge path against its array-style add_laplacian();
    lesson 06's write-back against its one-step fused_step_kernel), then 0.34 (lesson 10), 0.31
    (lesson 01); lesson 11's own loops at most 0.22, its kept-tile load loop (on_chip.cpp) at
    most 0.17 against the collect step;
  - copies of each answer loop: whole, 1.00; every fourth statement left out, 0.51 to 1.00
    (median 0.78); one local variable renamed throughout, 0.49 to 1.00 (median 0.89, 95 % of the
    loops at 0.5 or more); every local renamed, 0.27 to 1.00 (median 0.62, 86 %): a disguise
    that thorough is beyond this check, and beyond the line rule too;
  - NEAR_RUN: at 3 today's bodies reach 0.49 (no margin); at 5 and more one renamed variable
    drops some loops to 0.16, since runs break at every use of the name.

So NEAR_RUN = 4 and NEAR_SHARE = 0.5: 0.12 above the closest body loop of today, under nearly
every copy with a name changed or a quarter of it missing. Across lessons the same measure is
not applied: the model's checked 3 x 3 loop is in lessons 01, 03 and 04 (0.75 of lesson 03's
edge path in lesson 04's update_cell_checked()), by design.

Exceptions go only through scripts/no_answers_allow.txt, one per line with its reason (the
material may be a glob, for the model's lines that several lessons' code writes). Run alone:
python3 scripts/check_no_answers.py (exit status 1 and file:line for each match);
python3 scripts/check_no_answers.py --self-test [-v] plants answers in a copy of lessons/,
solutions/, slides/ and notebooks/ (a loop of lesson 06 in lesson 09's sweep.cpp, its update in
lesson 09's pseudo-code level and in its own, a line of lesson 11 in its README, lesson 11's
collect loop renamed and a line short in its on_chip.cpp, lesson 06's update in a notebook's
code cell, four short lines of lesson 06 in a row in sweep.cpp, loop headers alone) and checks
what is found.
"""
import difflib
import fnmatch
import json
import pathlib
import re
import sys

MIN_RUN = 9
MIN_LINE = 6
CLOSE = 3
MIN_LOOP = 20
LOOP_ANSWER_SHARE = 0.5
NEAR_RUN = 4
NEAR_SHARE = 0.5
RUN_LINES = 3
CODE = (".c", ".cc", ".cpp", ".cu", ".cuh", ".h", ".hpp")
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


def markdown_code(path, skip_pseudo_code, text=None):
    """[(token, line)] sequences: each fenced block and each inline span of a Markdown file."""
    text = path.read_text() if text is None else text
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


# Words that name nothing of a program: C++'s keywords and types, CUDA's built-in indices. A run
# whose tokens name fewer than two other things is grammar, not an answer.
GRAMMAR = set("""
    alignas auto bool break case char class const constexpr continue default do double else enum
    false float for if inline int long nullptr return short signed size_t sizeof static
    static_assert static_cast reinterpret_cast const_cast struct switch template this true typename
    unsigned using void volatile while std __device__ __global__ __shared__ __restrict__ pragma
    unroll threadIdx blockIdx blockDim gridDim x y z
""".split())


def names_something(run):
    """True when a run of tokens names at least two things of the program (not loop grammar)."""
    named = {t for t in run if re.match(r"[A-Za-z_]\w*$", t) and t not in GRAMMAR}
    return len(named) >= 2


GRAMS = {}  # id(answers): (answers, {MIN_LINE-token run: [(answer, where the run starts)]})


def find(sequence, answers):
    """Matches of answer token runs in one material sequence: [(line, answer)]. A match is a run
    of min(MIN_RUN, the answer's length) tokens of the answer, found in the sequence, that names
    something (names_something)."""
    key = id(answers)
    if key not in GRAMS or GRAMS[key][0] is not answers:
        grams = {}
        for number, answer in enumerate(answers):
            toks = answer[2]
            run = min(MIN_RUN, len(toks))
            for start in range(len(toks) - run + 1):
                grams.setdefault(tuple(toks[start : start + MIN_LINE]), []).append((number, start))
        GRAMS[key] = (answers, grams)
    grams = GRAMS[key][1]
    words = [t for t, _ in sequence]
    hits = {}
    for position in range(len(words) - MIN_LINE + 1):
        for number, start in grams.get(tuple(words[position : position + MIN_LINE]), ()):
            if number in hits and hits[number][0] <= start:
                continue
            toks = answers[number][2]
            window = toks[start : start + min(MIN_RUN, len(toks))]
            if words[position : position + len(window)] == window and names_something(window):
                hits[number] = (start, sequence[position][1])
    # Of an answer's runs found, the first of the answer, where it first appears.
    return [(line, answers[number]) for number, (_, line) in sorted(hits.items())]


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


def changed_code_lines(exercise, solution):
    """[(solution line number, its tokens)]: every code line the solution adds or changes, short
    ones included (`float box_u = 0.0f;`, a `#pragma unroll`, a loop header), lines of braces
    alone left out; a line that follows the previous one in the solution (comments and blank
    lines skipped) has the previous one's number + 1 in `rank` order, so runs can be found."""
    stub = [line.strip() for line in exercise.read_text().splitlines()]
    done = solution.read_text().splitlines()
    code = strip_comments("\n".join(done)).splitlines()
    matcher = difflib.SequenceMatcher(None, stub, [line.strip() for line in done], autojunk=False)
    changed = set()
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            changed.update(range(j1, j2))
    result = []  # one entry per line of code, None where the line is not the answer's
    for index, text in enumerate(code):
        toks = tuple(t for t, _ in tokens(text))
        if not toks:
            continue  # blank or comment: the run goes on across it
        substantive = any(t not in "{}();" for t in toks)
        result.append((index + 1, toks) if index in changed and substantive else None)
    return result


def code_lines(sequence):
    """[(line, tokens)]: one token sequence of a code file, cut into its lines."""
    lines = {}
    for token, line in sequence:
        lines.setdefault(line, []).append(token)
    return [(line, tuple(toks)) for line, toks in sorted(lines.items())]


def consecutive(sequence, answer_runs):
    """[(line, answer)]: where RUN_LINES or more consecutive code lines of a body are, one for one,
    consecutive lines of an answer (each line whole, so a run of short lines counts: two
    accumulators set to zero and the loop header that fills them, copied, are the answer even
    though no single line of them is MIN_LINE tokens long), naming at least two things."""
    if not answer_runs:
        return []
    lines = code_lines(sequence)
    texts = [toks for _, toks in lines]
    hits = []
    for origin, answer in answer_runs:
        starts = {}
        for j, entry in enumerate(answer):
            if entry is not None:
                starts.setdefault(entry[1], []).append(j)
        i = 0
        while i < len(texts):
            best = 0
            for j in starts.get(texts[i], ()):
                k = 0
                while (i + k < len(texts) and j + k < len(answer) and answer[j + k] is not None
                       and answer[j + k][1] == texts[i + k]):
                    k += 1
                if k >= RUN_LINES and names_something([t for toks in texts[i:i + k] for t in toks]):
                    best = max(best, k)
                    first = answer[j][0]
            if best:
                shown = " / ".join(" ".join(toks) for toks in texts[i:i + best])
                hits.append((lines[i][0], (f"{origin}:{first}", shown, f"{best} lines")))
                i += best
            else:
                i += 1
    return hits


def twin_free(answer):
    """An answer line with v written as u: a line for u and its twin for v count as one."""
    return tuple(re.sub(r"(?<![^_])v(?![^_])", "u", t) for t in answer[2])


def loops(sequence):
    """The loops of one token sequence: [(first, last)] index ranges of each `for`, `while` and
    `do` statement, its body included (braces matched; a body without braces ends at its `;`)."""
    words = [t for t, _ in sequence]

    def closing(i, opening, closer):
        depth = 0
        for j in range(i, len(words)):
            depth += (words[j] == opening) - (words[j] == closer)
            if depth == 0:
                return j
        return len(words) - 1

    def statement_end(i):
        if i >= len(words):
            return len(words) - 1
        if words[i] == "{":
            return closing(i, "{", "}")
        if words[i] in ("for", "while", "if", "switch") and words[i + 1 : i + 2] == ["("]:
            end = statement_end(closing(i + 1, "(", ")") + 1)
            if words[i] == "if" and words[end + 1 : end + 2] == ["else"]:
                end = statement_end(end + 2)
            return end
        depth = 0
        for j in range(i, len(words)):
            depth += (words[j] in "([{") - (words[j] in ")]}")
            if words[j] == ";" and depth == 0:
                return j
        return len(words) - 1

    found = []
    for i, word in enumerate(words):
        if word in ("for", "while") and words[i + 1 : i + 2] == ["("]:
            if word == "while" and i > 0 and words[i - 1] == "}":
                continue  # the end of a do ... while
            found.append((i, statement_end(i)))
        elif word == "do" and words[i + 1 : i + 2] == ["{"]:
            found.append((i, statement_end(i + 1)))
    return found


def solution_loops(exercise, solution):
    """[(solution file:line, header text, tokens)]: the loops of the solution that are the answer
    (at least LOOP_ANSWER_SHARE of their tokens on lines the solution adds to the stubs) and at
    least MIN_LOOP tokens long."""
    stub = [line.strip() for line in exercise.read_text().splitlines()]
    done = solution.read_text().splitlines()
    matcher = difflib.SequenceMatcher(None, stub, [line.strip() for line in done], autojunk=False)
    changed = set()
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            changed.update(range(j1 + 1, j2 + 1))
    sequence = tokens(strip_comments("\n".join(done)))
    result = []
    for first, last in loops(sequence):
        block = sequence[first : last + 1]
        if len(block) < MIN_LOOP:
            continue
        if sum(line in changed for _, line in block) < LOOP_ANSWER_SHARE * len(block):
            continue
        line = block[0][1]
        result.append((line, done[line - 1].strip(), [t for t, _ in block]))
    return result


def coverage(answer, body):
    """The share of an answer loop's tokens that runs of at least NEAR_RUN tokens of a body loop
    cover, in order (difflib's longest matching blocks, which never cross)."""
    matcher = difflib.SequenceMatcher(None, answer, body, autojunk=False)
    # An upper bound first: most pairs share too few tokens to be worth the full alignment.
    if matcher.real_quick_ratio() * (len(answer) + len(body)) < 2 * NEAR_SHARE * len(answer):
        return 0.0
    covered = sum(size for _, _, size in matcher.get_matching_blocks() if size >= NEAR_RUN)
    return covered / len(answer)


def near_final(path, answer_loops):
    """[(line, (origin, header, score))]: the loops of a body file at least NEAR_SHARE like an
    answer loop of its own lesson (the best body loop for each answer loop)."""
    sequence = tokens(strip_comments(path.read_text(errors="replace")))
    best = {}
    for first, last in loops(sequence):
        body = [t for t, _ in sequence[first : last + 1]]
        if len(body) < MIN_LINE:
            continue
        for origin, header, toks in answer_loops:
            score = coverage(toks, body)
            if score >= NEAR_SHARE and score > best.get(origin, (0.0,))[0]:
                best[origin] = (score, sequence[first][1], header)
    return [(line, (origin, header, score)) for origin, (score, line, header) in best.items()]


def allowed(root):
    entries = set()
    allow = root / ALLOW.relative_to(ROOT)
    if not allow.exists():
        return entries
    for number, line in enumerate(allow.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        material, _, rest = line.partition(" | ")
        answer, _, reason = rest.rpartition(" | ")
        parts = [material.strip(), answer.strip(), reason.strip()]
        if not all(parts):
            sys.exit(f"{allow}:{number}: write 'material file | solution line | reason'")
        entries.add((parts[0], parts[1]))
    return entries


def is_allowed(where, text, allow, used):
    """An entry's material may be a glob (`lessons/*`): a line of the model every lesson writes."""
    matching = {(material, answer) for material, answer in allow
                if answer == text and fnmatch.fnmatchcase(where, material)}
    used.update(matching)
    return bool(matching)


def lessons(root):
    """{lesson folder name: (lesson folder, learner file names, answer lines, answer loops, the
    answer's code lines per learner file)}."""
    found = {}
    for solution_dir in sorted((root / "solutions").iterdir()):
        lesson_dir = root / "lessons" / solution_dir.name
        learner = sorted(p.name for p in solution_dir.iterdir())
        answers, answer_loops, answer_runs = [], [], []
        for name in learner:
            where = f"solutions/{solution_dir.name}/{name}"
            answer_runs.append((where, changed_code_lines(lesson_dir / name, solution_dir / name)))
            for number, text, toks in answer_lines(lesson_dir / name, solution_dir / name):
                answers.append((f"{where}:{number}", text, toks))
            for number, header, toks in solution_loops(lesson_dir / name, solution_dir / name):
                answer_loops.append((f"{where}:{number}", header, toks))
        found[solution_dir.name] = (lesson_dir, set(learner), answers, answer_loops, answer_runs)
    return found


def notebook_code(path):
    """[(token, line)] sequences of a Jupyter notebook: its code cells (Python) and the code of its
    Markdown cells; the line of a token is its cell's number (1 for the first cell)."""
    sequences = []
    for number, cell in enumerate(json.loads(path.read_text()).get("cells", []), 1):
        text = "".join(cell.get("source", []))
        if cell.get("cell_type") == "code":
            found = [tokens(strip_comments(text, hash_comments=True))]
        elif cell.get("cell_type") == "markdown":
            found = markdown_code(path, False, text)
        else:
            continue
        sequences.extend([(token, number) for token, _ in sequence] for sequence in found)
    return sequences


def course_material(root, lessons_with_folders):
    """[(path, token sequences)]: what every learner may read besides the lessons' folders: the
    README, docs/, the decks of no lesson folder (slides/00_introduction.md) and the notebooks."""
    material = []
    if (root / "README.md").exists():
        material.append((root / "README.md", markdown_code(root / "README.md", False)))
    for path in sorted((root / "docs").rglob("*.md")):
        material.append((path, markdown_code(path, False)))
    for deck in sorted((root / "slides").glob("*.md")):
        if deck.name.split("_")[0] not in lessons_with_folders:
            material.append((deck, markdown_code(deck, False)))
    for path in sorted((root / "notebooks").glob("*.ipynb")):
        material.append((path, notebook_code(path)))
    return material


def material_of(root, lesson_dir, learner, own):
    """[(path, token sequences)]: what a learner reads in one lesson. For the lesson's own answers
    (own): the pseudo-code hint level and the learner's stubs' code are left out; for another
    lesson's answers, every file of the folder counts, whole."""
    material = []
    for name in ("README.md", "HINTS.md"):
        if (lesson_dir / name).exists():
            material.append((lesson_dir / name, markdown_code(lesson_dir / name, own)))
    number = lesson_dir.name.split("_")[0]
    for deck in sorted((root / "slides").glob(f"{number}_*.md")):
        material.append((deck, markdown_code(deck, False)))
    # Subfolders too: a lesson's program/ (its program's plumbing) is in the learner's sight.
    for path in sorted(lesson_dir.rglob("*")):
        if not path.is_file() or path.suffix == ".md" or "__pycache__" in path.parts:
            continue
        if own and path.parent == lesson_dir and path.name in learner:
            continue
        material.append((path, source_code(path)))
    if own:
        for name in sorted(learner):
            material.append((lesson_dir / name, comment_text(lesson_dir / name)))
    return material


def check(root):
    """Every problem found under root: ["file:line: what"]."""
    allow = allowed(root)
    used, problems = set(), []
    taught = lessons(root)
    others = sorted(p for p in (root / "lessons").iterdir() if p.is_dir() and p.name[:2].isdigit())

    read = {}  # (lesson folder, own): its material, read once
    course = course_material(root, {folder.name.split("_")[0] for folder in others})

    def report(path, hits, what):
        where = str(path.relative_to(root))
        for line, (origin, text, extra) in sorted(hits, key=lambda hit: (hit[0], hit[1][0])):
            if is_allowed(where, text, allow, used):
                continue
            shown = f" (covers {extra:.2f} of its tokens)" if isinstance(extra, float) else ""
            shown = f" ({extra} in a row)" if isinstance(extra, str) else shown
            problems.append(f"{where}:{line}: {what} {origin}{shown}\n    {text}")

    for lesson_dir, learner, answers, answer_loops, answer_runs in taught.values():
        for other_dir in others:
            own = other_dir == lesson_dir
            other_learner = taught.get(other_dir.name, (None, set()))[1]
            if (other_dir, own) not in read:
                read[other_dir, own] = material_of(root, other_dir, other_learner, own)
            for path, sequences in read[other_dir, own]:
                hits = [hit for sequence in sequences for hit in find(sequence, answers)]
                if path.suffix != ".md":
                    hits = stretches(hits)
                report(path, hits, "shows the answer of")
                if path.suffix in CODE:
                    runs = [hit for sequence in sequences for hit in consecutive(sequence, answer_runs)]
                    report(path, runs, "shows consecutive lines of the answer of")
        for path, sequences in course:
            report(path, [hit for sequence in sequences for hit in find(sequence, answers)],
                   "shows the answer of")
        # The lesson's own code: no loop near the answer's final form.
        for path in sorted(lesson_dir.rglob("*")):
            if path.suffix not in CODE or (path.parent == lesson_dir and path.name in learner):
                continue
            report(path, near_final(path, answer_loops), "has a loop near the answer loop of")
    for entry in sorted(allow - used):
        problems.append(f"{ALLOW.relative_to(ROOT)}: unused entry (remove it): "
                        f"{entry[0]} | {entry[1]}")
    return problems


def self_test(verbose=False):
    """A copy of the course (lessons/, solutions/, slides/, notebooks/) with answers planted where
    the check must find them, and vocabulary where it must not."""
    import shutil
    import tempfile

    def planted(root, relative, text, where="end"):
        path = root / relative
        old = path.read_text()
        path.write_text(old + text if where == "end" else text + old)

    def solution_lines(root, relative, first, count):
        return "\n".join(
            (root / relative).read_text().splitlines()[first - 1 : first - 1 + count]) + "\n"

    l06 = "solutions/06_fused_stencil/shared_blocking.cuh"
    l11 = "solutions/11_on_chip/exchange.hpp"
    cases = []  # (what, edit(root), text a problem must contain or None for a clean pass)

    def l06_in_l09(root):
        text = (root / l06).read_text()
        start = text.index("  for (int i = rank; i < kRows * kCols;")
        planted(root, "lessons/09_parameter_sweep/sweep.cpp",
                "\n// planted\nvoid planted() {\n" + text[start : text.index("__syncthreads();",
                                                                              start)] + "}\n")
    cases.append(("lesson 06's load loop copied into lesson 09's sweep.cpp", l06_in_l09,
                  "lessons/09_parameter_sweep/sweep.cpp:"))

    def l06_update_in_pseudo(hints):
        """Plants lesson 06's update line in the pseudo-code level of @p hints."""
        def plant(root):
            text = (root / l06).read_text()
            line = next(l for l in text.splitlines() if "u_next = fmaf(" in l)
            planted(root, hints, f"\n## Level 3 — pseudo-code\n\n```\n{line.strip()}\n```\n")
        return plant

    cases.append(("lesson 06's update in lesson 09's pseudo-code level",
                  l06_update_in_pseudo("lessons/09_parameter_sweep/HINTS.md"),
                  "lessons/09_parameter_sweep/HINTS.md:"))
    cases.append(("lesson 06's update in its own pseudo-code level (allowed)",
                  l06_update_in_pseudo("lessons/06_fused_stencil/HINTS.md"), None))

    def l11_in_readme(root):
        text = (root / l11).read_text()
        line = next(l for l in text.splitlines() if "mailbox[plan.global(" in l)
        planted(root, "lessons/11_on_chip/README.md", f"\nThen `{line.strip()}` posts it.\n")
    cases.append(("a line of lesson 11's answer quoted in its README", l11_in_readme,
                  "lessons/11_on_chip/README.md:"))

    def l11_near_final(root):
        # The collect step's side loop, with a name changed and one statement left out: near.
        text = (root / l11).read_text()
        start = text.index("  for (int first = thread; first < side;")
        loop = text[start : text.index("\n  }\n", start) + 4]
        loop = loop.replace("value[k]", "got[k]").replace("float value[kInFlight];",
                                                          "float got[kInFlight];")
        loop = loop.replace("      const int col = j < h ? j : plan.tile_cols + j;\n", "")
        planted(root, "lessons/11_on_chip/on_chip.cpp",
                "\nvoid planted(int first, int thread, int side) {\n" + loop + "}\n")
    cases.append(("lesson 11's collect loop, renamed and one line short, in on_chip.cpp",
                  l11_near_final, "has a loop near the answer loop of"))

    def l06_in_notebook(root):
        text = (root / l06).read_text()
        line = next(l for l in text.splitlines() if "u_next = fmaf(" in l)
        notebook = root / "notebooks" / "planted.ipynb"
        notebook.write_text(json.dumps({"cells": [
            {"cell_type": "markdown", "source": ["# Planted\n"]},
            {"cell_type": "code", "source": [f"kernel = \"\"\"\n{line.strip()}\n\"\"\"\n"]}]}))
    cases.append(("lesson 06's update in a notebook's code cell", l06_in_notebook,
                  "notebooks/planted.ipynb:2:"))

    def l06_short_lines_in_l09(root):
        # The accumulators and the 3 x 3 loop's header of lesson 06's kernel: no line of them is
        # MIN_LINE tokens long, four in a row are the answer (sweep.cpp had them until 2026-11).
        planted(root, "lessons/09_parameter_sweep/sweep.cpp",
                "\nvoid planted() {\n  float box_u = 0.0f;\n  float box_v = 0.0f;\n"
                "#pragma unroll\n  for (int dr = -1; dr <= 1; ++dr) {\n  }\n}\n")
    cases.append(("four short lines of lesson 06's kernel in a row in lesson 09's sweep.cpp",
                  l06_short_lines_in_l09, "shows consecutive lines of the answer of "
                  "solutions/06_fused_stencil/"))

    def grammar_only(root):
        planted(root, "lessons/09_parameter_sweep/sweep.cpp",
                "\nvoid planted(int n) {\n  for (int r = 0; r < n; ++r) {\n"
                "    for (int c = 0; c < n; ++c) {\n    }\n  }\n}\n")
    cases.append(("loop headers alone (grammar)", grammar_only, None))

    failures = 0
    with tempfile.TemporaryDirectory() as scratch:
        for what, edit, expected in cases:
            root = pathlib.Path(scratch) / "course"
            if root.exists():
                shutil.rmtree(root)
            for folder in ("lessons", "solutions", "slides", "notebooks"):
                shutil.copytree(ROOT / folder, root / folder,
                                ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
            (root / "scripts").mkdir()
            shutil.copy(ALLOW, root / "scripts")
            edit(root)
            problems = check(root)
            if expected is None:
                right = not problems
            else:
                right = any(expected in problem for problem in problems)
            if verbose:
                print(f"{what}:\n  " + "\n  ".join(problems or ["no problem"]))
            if not right:
                failures += 1
                print(f"self-test: wrong for {what}: expected "
                      f"{expected or 'no problem'}, got:\n  " + "\n  ".join(problems or ["none"]))
    print(f"check_no_answers self-test: {len(cases) - failures} of {len(cases)} cases right")
    return 1 if failures else 0


def main(arguments):
    if arguments and arguments[0] == "--self-test" and set(arguments[1:]) <= {"-v"}:
        return self_test(verbose="-v" in arguments)
    if arguments:
        print("usage: check_no_answers.py [--self-test [-v]]", file=sys.stderr)
        return 2
    problems = check(ROOT)
    for problem in problems:
        print(problem)
    if problems:
        print(f"check_no_answers: {len(problems)} problem(s); a learner's answer belongs in "
              "solutions/ only (the last hint level may give pseudo-code)")
        return 1
    print("check_no_answers: ok, no solution line in any lesson's material and no body loop near "
          "its lesson's answer")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
