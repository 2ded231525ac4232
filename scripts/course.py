#!/usr/bin/env python
"""Course edition: otter-grader assignments built from the book's exercises and their checks.

One command writes everything under ``_build/course/``::

    python scripts/course.py build            # assignments, autograder zips, index (about a minute)
    python scripts/course.py build --grade    # ... then grade the book's answers and wrong ones
    python scripts/course.py grade [--jobs 2] # grade what ``build`` wrote (otter run, no Docker)
    python scripts/course.py selftest         # each contract's tests in-process (seconds each)
    python scripts/course.py list             # which exercises are graded, which are not and why

``--only 1.2 ...`` restricts build, grade and selftest to chapters; ``--partial`` only warns about
exercises that are in neither ``course/*.yml`` nor ``course/ungraded.yml`` (for writing contracts).

**What is graded.** Every exercise of the book is classified in ``course/``: a graded one has an
*answer contract* in ``course/<part>/<chapter>.yml`` (the function or variable the student writes,
with a docstring saying what it must return, the book's answer between ``# BEGIN SOLUTION`` and
``# END SOLUTION``, and a *wrong* answer that the tests must reject); one that cannot be graded
(a proof, an open question, a training run too long for an autograder) is listed with its reason
in ``course/ungraded.yml``. The build fails when a contract names an exercise the book no longer
has, or when an exercise of the book is in neither file (a new exercise needs a decision).

**Where the tests come from.** ``tests`` of a contract are a list of test bodies, each public or
hidden. ``check:`` derives one from the exercise's check in the source notebook (the code cell
under the solution whose first line is ``# check of <label>``), read at build time, so that a
change of a check flows into the course: ``replace`` substitutes the student's answer for the
library call or constant the check tests (every ``old`` must occur: a rewritten check fails the
build), ``drop`` removes the check's own definitions of names the student now writes, and
``glue(...)`` statements go. Each test body becomes an otter exception-based test function
``def test_...(names)`` whose parameters are the free names of its body (otter passes them from
the student's notebook).

**One assignment per chapter** (one question per graded exercise, points = level): the master
notebook (otter's v1 format: raw ``# BEGIN QUESTION`` ... delimiters) holds, per question, the
exercise as the reader edition shows it (numbers, macros and citations resolved by
``scripts/editions.py``), the contract, and its tests; ``otter assign`` writes the student
notebook (answers replaced by ``...``, public tests in its metadata for ``grader.check``) and the
autograder zip (all tests) for Gradescope or ``otter run``. Solutions are stripped from every cell
(``strip_solutions_from_all_cells``), and every student file is checked for solution text with
``editions.py check-student`` plus the contracts' own solution lines.

Layout of ``_build/course/``::

    index.md, index.json                    what is graded, points, what is not and why
    student/<part>/<chapter>.ipynb          the notebooks students fill in
    autograder/<part>/<chapter>.zip         upload to Gradescope, or ``otter run -a ZIP NOTEBOOK``
    instructor/<part>/<chapter>/            master.ipynb, otter's output (solutions notebook)
    grading.json                            results of ``grade`` (book's answers, wrong answers)
"""

from __future__ import annotations

import argparse
import ast
import builtins
import copy
import json
import pathlib
import re
import shutil
import sys
import symtable
import textwrap
import time
import warnings
from dataclasses import dataclass, field

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import editions  # noqa: E402  (the reader conversion: numbers, macros, citations)

ROOT = pathlib.Path(__file__).resolve().parents[1]
COURSE = ROOT / "course"
OUT = ROOT / "_build" / "course"
CHECK_LINE = re.compile(r"^# check of (ex-[\w-]+)")
SOLUTION_BLOCK = re.compile(r"^[ \t]*# BEGIN SOLUTION\n(.*?)^[ \t]*# END SOLUTION\n?", re.M | re.S)
POINTS_BY_LEVEL = {1: 1, 2: 2, 3: 3}
# otter tags the code cell of each answer with one of these (otter.assign.solutions)
ANSWER_TAGS = ("otter_answer_cell", "otter_assign_solution_cell")


class CourseError(ValueError):
    """The contracts and the book disagree: fix ``course/`` (or the exercise), do not ignore it."""


# ----------------------------------------------------------------------------- the book's exercises
@dataclass
class Exercise:
    label: str
    docname: str
    level: int | None
    text: str = ""            # the exercise as the reader edition shows it (Markdown)
    check: str | None = None  # source of the check cell under its solution


@dataclass
class Chapter:
    docname: str
    number: str
    title: str
    setup: str                # the chapter's imports (and SEED), for answers and tests
    install: str              # the install cell of the chapter (Colab, fresh environments)
    exercises: dict[str, Exercise] = field(default_factory=dict)


class _ExerciseText(editions.Converter):
    """The student conversion, keeping the converted text of each ``{exercise}`` block."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.exercise_text: dict[str, str] = {}

    def directive(self, d):
        out = super().directive(d)
        if d.name == "exercise":
            self.exercise_text[d.options.get("label", "")] = out
        return out


def _code_setup(cells: list[dict]) -> tuple[str, str]:
    """The install cell (first code cell) and the chapter's imports plus ``SEED``."""
    code = [editions._source(c) for c in cells if c["cell_type"] == "code"]
    install = code[0] if code else ""
    imports, seed = [], []
    for src in code[1:]:
        if CHECK_LINE.match(src):
            continue
        try:
            with warnings.catch_warnings():  # the notebooks' own escape sequences are not ours
                warnings.simplefilter("ignore", SyntaxWarning)
                warnings.simplefilter("ignore", DeprecationWarning)
                tree = ast.parse(src)
        except SyntaxError:  # IPython magics: not part of the setup
            continue
        for node in tree.body:
            text = ast.get_source_segment(src, node)
            if isinstance(node, (ast.Import, ast.ImportFrom)) and text not in imports:
                imports.append(text)
            elif (isinstance(node, ast.Assign) and len(node.targets) == 1
                  and getattr(node.targets[0], "id", "") in ("SEED", "rng")
                  and not any(t.startswith(node.targets[0].id + " ") for t in seed)):
                seed.append(text)
    return install, "\n".join(imports + seed)


def chapters(book: editions.Book) -> dict[str, Chapter]:
    """Every notebook chapter with its exercises (reader text, level, check cell)."""
    out = {}
    for docname in editions.notebook_docs(book):
        doc = book.doc(docname)
        nb = json.loads(doc.path.read_text(encoding="utf-8"))
        conv = _ExerciseText(book, docname, "student")
        conv.notebook()
        install, setup = _code_setup(nb["cells"])
        ch = Chapter(docname, ".".join(map(str, doc.secnum or ())), doc.title, setup, install)
        checks = {}
        for cell in nb["cells"]:
            src = editions._source(cell)
            if cell["cell_type"] == "code" and (m := CHECK_LINE.match(src)):
                checks[m.group(1)] = src
        for label, text in conv.exercise_text.items():
            if not label:
                continue
            ch.exercises[label] = Exercise(label, docname, book.levels.get(label), text,
                                           checks.get(label))
        out[docname] = ch
    return out


# ----------------------------------------------------------------------------- contracts
@dataclass
class Test:
    name: str
    body: str
    hidden: bool


@dataclass
class Contract:
    label: str
    docname: str
    answer: str               # with the solution between BEGIN/END SOLUTION lines
    wrong: str
    tests: list[Test]
    points: int
    prompt: str = ""
    setup: str = ""           # chapter-wide extra setup (course/<chapter>.yml "setup")

    @property
    def names(self) -> list[str]:
        """What the answer cell defines (the contract's names)."""
        return _defined_names(self.answer)

    @property
    def solution(self) -> str:
        """The answer cell as the book answers it (markers removed)."""
        return re.sub(r"^[ \t]*# (BEGIN|END) SOLUTION\n?", "", self.answer, flags=re.M)

    @property
    def solution_lines(self) -> list[str]:
        """Lines of the book's answer that no student file may hold (12 characters or more)."""
        lines = [line.strip() for m in SOLUTION_BLOCK.finditer(self.answer)
                 for line in m.group(1).splitlines()]
        lines += [m.group(1).strip() for m in re.finditer(r"=(.*?)# SOLUTION$", self.answer, re.M)]
        return [line for line in lines if len(line) >= 12]


def _defined_names(code: str) -> list[str]:
    names = []
    for node in ast.parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return names


def free_names(body: str) -> list[str]:
    """Global names a test body reads (the notebook's namespace passes them), builtins excepted."""
    table = symtable.symtable("def _t():\n" + textwrap.indent(body, "    ") + "\n", "<test>", "exec")
    names: set[str] = set()

    def walk(t):
        for s in t.get_symbols():
            if (s.is_global() or s.is_free()) and s.is_referenced():
                names.add(s.get_name())
        for child in t.get_children():
            walk(child)

    walk(table.get_children()[0])
    defined_at_top = {s.get_name() for s in table.get_children()[0].get_symbols() if s.is_local()}
    return sorted(n for n in names if n not in defined_at_top and not hasattr(builtins, n))


def _drop_glue(src: str) -> str:
    """The check without its ``glue(...)`` statements (they publish numbers to the book only)."""
    lines, out, depth = src.split("\n"), [], 0
    for line in lines:
        if depth == 0 and re.match(r"^\s*glue\(", line):
            depth = line.count("(") - line.count(")")
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}pass")
            continue
        if depth > 0:
            depth += line.count("(") - line.count(")")
            continue
        out.append(line)
    return "\n".join(out)


def _drop_defs(src: str, names: list[str], label: str) -> str:
    """The check without its top-level definitions of ``names`` (the student writes them)."""
    tree = ast.parse(src)
    lines = src.split("\n")
    spans = []
    for node in tree.body:
        name = getattr(node, "name", None)
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            name = getattr(node.targets[0], "id", None)
        if name in names:
            start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            spans.append((start - 1, node.end_lineno))
    missing = set(names) - {getattr(n, "name", None) or getattr(getattr(n, "targets", [None])[0], "id", None)
                            for n in tree.body}
    if missing:
        raise CourseError(f"{label}: the check defines no {sorted(missing)} to drop (was it rewritten?)")
    for start, end in sorted(spans, reverse=True):
        del lines[start:end]
    return "\n".join(lines)


def derive_from_check(label: str, check: str | None, spec: dict) -> str:
    """A test body from the book's check of ``label``: the check, re-pointed at the answer."""
    if check is None:
        raise CourseError(f"{label}: the contract derives a test from its check, but the notebook "
                          f"has no code cell starting '# check of {label}'")
    body = check
    for old, new in (spec.get("replace") or {}).items():
        if old not in body:
            raise CourseError(f"{label}: {old!r} is no longer in the book's check; update "
                              f"course/ (the check now reads:\n{check})")
        body = body.replace(old, new)
    if spec.get("drop"):
        body = _drop_defs(body, list(spec["drop"]), label)
    body = _drop_glue(body)
    for line in spec.get("append", "").splitlines():
        body += "\n" + line
    try:
        ast.parse(body)
    except SyntaxError as exc:
        raise CourseError(f"{label}: the derived test does not parse: {exc}\n{body}") from exc
    return body.strip("\n")


def load_contracts(chs: dict[str, Chapter], partial: bool = False) -> tuple[dict[str, Contract], dict[str, str]]:
    """The contracts of ``course/`` and the ungraded list, checked against the book (``partial``:
    exercises in neither file are only reported, for writing new contracts)."""
    book_exercises = {lab: ex for ch in chs.values() for lab, ex in ch.exercises.items()}
    contracts: dict[str, Contract] = {}
    for path in sorted(COURSE.glob("*/*.yml")):
        docname = f"notebooks/{path.parent.name}/{path.stem}"
        if docname not in chs:
            raise CourseError(f"{path.relative_to(ROOT)}: no chapter {docname}.ipynb in the book")
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        setup = data.pop("setup", "") or ""
        for label, spec in data.items():
            ex = chs[docname].exercises.get(label)
            if ex is None:
                where = book_exercises.get(label)
                raise CourseError(
                    f"{path.relative_to(ROOT)}: exercise {label} is not in {docname}"
                    + (f" (it is in {where.docname})" if where else " nor anywhere in the book"))
            tests = []
            for k, t in enumerate(spec.get("tests") or []):
                kind = next(iter(t))
                if kind == "check":
                    body = derive_from_check(label, ex.check, t["check"] or {})
                    hidden = not (t["check"] or {}).get("public", False)
                elif kind in ("public", "hidden"):
                    body, hidden = t[kind].strip("\n"), kind == "hidden"
                else:
                    raise CourseError(f"{label}: unknown test kind {kind!r} (public, hidden, check)")
                tests.append(Test(f"{kind}_{k + 1}", body, hidden))
            if not tests or all(t.hidden for t in tests):
                raise CourseError(f"{label}: a contract needs a public test and at least one other")
            for key in ("answer", "wrong"):
                if not spec.get(key):
                    raise CourseError(f"{label}: the contract has no {key!r}")
            if not re.search(r"# BEGIN SOLUTION|# SOLUTION$", spec["answer"], re.M):
                raise CourseError(f"{label}: the answer has no '# BEGIN SOLUTION' block "
                                  "nor '# SOLUTION' line")
            contract = Contract(label, docname, spec["answer"].strip("\n") + "\n",
                                spec["wrong"].strip("\n") + "\n", tests,
                                int(spec.get("points", POINTS_BY_LEVEL.get(ex.level or 1, 1))),
                                spec.get("prompt", ""), setup)
            if sorted(_defined_names(contract.wrong)) != sorted(contract.names):
                raise CourseError(f"{label}: the wrong answer must define {contract.names}")
            contracts[label] = contract
    ungraded = yaml.safe_load((COURSE / "ungraded.yml").read_text(encoding="utf-8")) or {}
    problems = []
    for label in ungraded:
        if label not in book_exercises:
            problems.append(f"course/ungraded.yml names {label}, which the book no longer has")
        if label in contracts:
            problems.append(f"{label} is both graded and in course/ungraded.yml")
        if not str(ungraded[label]).strip():
            problems.append(f"course/ungraded.yml: {label} needs a reason")
    unclassified = []
    for label, ex in book_exercises.items():
        if label not in contracts and label not in ungraded:
            kind = "a level-3 (computational)" if ex.level == 3 else "an"
            unclassified.append(f"{kind} exercise {label} ({ex.docname}) has no contract in course/ "
                            "and is not in course/ungraded.yml")
    if partial:
        for line in unclassified:
            print(f"course: warning: {line}", file=sys.stderr)
    else:
        problems += unclassified
    if problems:
        raise CourseError("\n".join(problems))
    return contracts, {k: str(v).strip() for k, v in ungraded.items()}


# ----------------------------------------------------------------------------- tests as code
def test_function(contract: Contract, test: Test) -> str:
    """The otter exception-based test function of one test body."""
    params = ", ".join(free_names(test.body))
    doc = f"{'Hidden' if test.hidden else 'Public'} test of {contract.label}."
    return f"def test_{test.name}({params}):\n    \"\"\"{doc}\"\"\"\n{textwrap.indent(test.body, '    ')}\n"


def run_tests_inprocess(chapter: Chapter, contract: Contract, answer: str) -> list[tuple[str, str | None]]:
    """Run a contract's tests on ``answer`` as otter does: the notebook's namespace (setup, answer)
    passed to each test function by parameter name. Returns (test name, error or None)."""
    import inspect

    env: dict = {"__name__": "__main__"}
    exec(compile(chapter.setup + "\n" + contract.setup, f"<setup {chapter.docname}>", "exec"), env)
    exec(compile(answer, f"<answer {contract.label}>", "exec"), env)
    results = []
    for test in contract.tests:
        scope: dict = {}
        exec(compile(test_function(contract, test), f"<test {contract.label}>", "exec"), scope)
        func = scope[f"test_{test.name}"]
        kwargs = {p: env.get(p) for p in inspect.signature(func).parameters}
        try:
            func(**kwargs)
            results.append((test.name, None))
        except Exception as exc:  # noqa: BLE001  (any failure of a test is a failed test)
            results.append((test.name, f"{type(exc).__name__}: {exc}"[:300]))
    return results


# ----------------------------------------------------------------------------- master notebooks
def _cell(kind: str, source: str, **meta) -> dict:
    cell = {"cell_type": kind, "metadata": meta, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def assignment_name(ch: Chapter) -> str:
    return "seqrmt-" + ch.number


def master_notebook(ch: Chapter, contracts: list[Contract], ungraded: dict[str, str],
                    book: editions.Book) -> dict:
    config = {
        "name": assignment_name(ch),
        "init_cell": True,
        "check_all_cell": True,
        "export_cell": {"pdf": False, "run_tests": True,
                        "instructions": "Upload the zip file this cell writes to your course's "
                                        "autograder (Gradescope)."},
        "generate": {"pdf": False, "show_stdout": True, "show_hidden": False},
        "requirements": "requirements.txt",
        "python_version": "3.11",
        "run_tests": False,  # scripts/course.py grade runs them (in-process and with otter run)
        "strip_solutions_from_all_cells": True,
        "tests": {"files": False, "ok_format": False},
    }
    url = book.url(ch.docname)
    total = sum(c.points for c in contracts)
    cells = [
        _cell("raw", "# ASSIGNMENT CONFIG\n" + yaml.safe_dump(config, sort_keys=False)),
        _cell("markdown", (
            f"# Exercises of Chapter {ch.number}: {ch.title}\n\n"
            f"*Course edition of [{editions._escape_link_text(book.config.get('title', ''))}]({url}): "
            f"the exercises of this chapter that can be graded, {len(contracts)} questions, "
            f"{total} points.*\n\n"
            "Each question is an exercise of the chapter, with the book's number and level. "
            "Write your answer in the code cell under it, in place of `...`, keeping the names and "
            "arguments the cell defines: the docstring says what each must return. "
            "`grader.check(...)` runs the public tests (a first check only); the hidden tests "
            "run when your work is graded. Run the setup cell first.")),
        _cell("code", ch.install.rstrip("\n") + "\n\n" + ch.setup + "\n", tags=["setup"]),
    ]
    for c in contracts:
        ex = ch.exercises[c.label]
        names = ", ".join(f"`{n}`" for n in c.names)
        prompt = ex.text + "\n\n" + (c.prompt.strip() + "\n\n" if c.prompt.strip() else "")
        prompt += (f"**Your answer:** {names} in the cell below "
                   f"({c.points} point{'s' if c.points > 1 else ''}).")
        cells += [
            _cell("raw", "# BEGIN QUESTION\n" + yaml.safe_dump(
                {"name": c.label, "points": c.points}, sort_keys=False)),
            _cell("markdown", prompt),
            _cell("raw", "# BEGIN SOLUTION"),
            _cell("code", c.answer),
            _cell("raw", "# END SOLUTION"),
            _cell("raw", "# BEGIN TESTS"),
        ]
        for t in c.tests:
            head = '""" # BEGIN TEST CONFIG\nhidden: true\n""" # END TEST CONFIG\n' if t.hidden else ""
            cells.append(_cell("code", head + test_function(c, t)))
        cells += [_cell("raw", "# END TESTS"), _cell("raw", "# END QUESTION")]
    skipped = [lab for lab in ch.exercises if lab in ungraded]
    if skipped:
        lines = [f"- {_exercise_ref(ch, lab, book)}: {ungraded[lab]}" for lab in skipped]
        cells.append(_cell("markdown", "## Exercises of this chapter that are not graded\n\n"
                           + "\n".join(lines)))
    if contracts and contracts[0].setup:
        cells[2]["source"] += "\n" + contracts[0].setup
    nb = json.loads(ch_source_metadata(ch, book))
    nb["cells"] = [_with_id(cell, k) for k, cell in enumerate(cells)]
    return nb


def _with_id(cell: dict, k: int) -> dict:
    cell = copy.deepcopy(cell)
    cell["id"] = f"course-{k:03d}"
    return cell


def ch_source_metadata(ch: Chapter, book: editions.Book) -> str:
    nb = json.loads(book.doc(ch.docname).path.read_text(encoding="utf-8"))
    meta = {k: v for k, v in nb.get("metadata", {}).items() if k in ("kernelspec", "language_info")}
    return json.dumps({"cells": [], "metadata": meta, "nbformat": 4, "nbformat_minor": 5})


def _exercise_ref(ch: Chapter, label: str, book: editions.Book) -> str:
    t = book.targets.get(label)
    num = ".".join(map(str, t.number)) if t else "?"
    return f"[Exercise {num}]({book.url(ch.docname, label)})"


# ----------------------------------------------------------------------------- build
def requirements_for_grading(torch: bool = False) -> str:
    """The autograder's environment (Gradescope installs it): the book's pins, less the book build;
    with ``torch``, PyTorch's CPU build and its wheel index (the chapters that import torch)."""
    keep, skip = [], ("jupyter-book", "sphinx", "myst-", "pydata-sphinx", "docutils", "jupyter-cache",
                      "django-static", "selenium", "dask", "distributed", "jupyterlab", "nbval",
                      "pytest", "otter-grader", "-e ")
    if not torch:
        skip += ("torch", "--extra-index-url")
    for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#") and not line.startswith(skip):
            keep.append(line)
    keep.append("seqrmt @ git+https://github.com/seqrmt/seqrmt-book")
    return "\n".join(keep) + "\n"


def _relpath(p: pathlib.Path) -> str:
    return str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)


def build(out: pathlib.Path = OUT, only: list[str] | None = None, quiet: bool = True,
          partial: bool = False) -> dict:
    """Write the masters, run ``otter assign`` on each, collect the bundles, check for leaks."""
    from contextlib import redirect_stdout, redirect_stderr
    import io

    import otter.assign

    t0 = time.perf_counter()
    book = editions.Book(ROOT)
    chs = chapters(book)
    contracts, ungraded = load_contracts(chs, partial)
    if out.exists():
        shutil.rmtree(out)
    index = {"book": book.config.get("title", ""), "assignments": [], "ungraded": []}
    for docname, ch in chs.items():
        mine = [contracts[lab] for lab in ch.exercises if lab in contracts]
        for lab in ch.exercises:
            if lab in ungraded:
                index["ungraded"].append({"label": lab, "chapter": ch.number, "reason": ungraded[lab],
                                          "level": ch.exercises[lab].level})
        if not mine or (only and docname not in only and ch.number not in only):
            continue
        rel = pathlib.Path(docname).relative_to("notebooks")
        inst = out / "instructor" / rel
        inst.mkdir(parents=True)
        needs_torch = bool(re.search(r"^\s*(import|from) torch\b", ch.setup + "\n" + mine[0].setup, re.M))
        (inst / "requirements.txt").write_text(requirements_for_grading(needs_torch), encoding="utf-8")
        master = inst / f"{rel.name}.ipynb"
        master.write_text(editions.dumps(master_notebook(ch, mine, ungraded, book)), encoding="utf-8")
        sink = io.StringIO()
        with redirect_stdout(sink), redirect_stderr(sink):
            try:
                otter.assign.main(str(master), str(inst / "dist"), no_pdfs=True, no_run_tests=True)
            except Exception:
                print(sink.getvalue(), file=sys.stderr)
                raise
        if not quiet:
            print(sink.getvalue())
        zips = sorted((inst / "dist" / "autograder").glob("*.zip"))
        if len(zips) != 1:
            raise CourseError(f"{docname}: otter assign wrote {len(zips)} autograder zips")
        student = out / "student" / rel.parent / f"{rel.name}.ipynb"
        student.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(inst / "dist" / "student" / master.name, student)
        bundle = out / "autograder" / rel.parent / f"{rel.name}.zip"
        bundle.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(zips[0], bundle)
        index["assignments"].append({
            "chapter": ch.number, "title": ch.title, "docname": docname,
            "name": assignment_name(ch), "student": _relpath(student), "autograder": _relpath(bundle),
            "solutions": _relpath(inst / "dist" / "autograder" / master.name),
            "points": sum(c.points for c in mine),
            "questions": [{"label": c.label, "level": ch.exercises[c.label].level, "points": c.points,
                           "answer": c.names, "tests": len(c.tests),
                           "hidden": sum(t.hidden for t in c.tests)} for c in mine],
        })
    findings = leak_findings(out, contracts, book)
    if findings:
        raise CourseError("solution text in student files:\n  " + "\n  ".join(findings))
    (out / "index.json").write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
    (out / "index.md").write_text(index_markdown(index), encoding="utf-8")
    n_q = sum(len(a["questions"]) for a in index["assignments"])
    pending = sum(u["reason"].startswith("pending:") for u in index["ungraded"])
    print(f"course: {len(index['assignments'])} assignments, {n_q} graded exercises, "
          f"{len(index['ungraded'])} not graded ({pending} with a contract pending), in {_relpath(out)} "
          f"({time.perf_counter() - t0:.0f} s); no solution text in any student file")
    return index


def leak_findings(out: pathlib.Path, contracts: dict[str, Contract], book: editions.Book) -> list[str]:
    """``editions.py check-student`` on every student file, and the contracts' solution lines."""
    student = out / "student"
    if not student.exists():
        return []
    findings = editions.check_student([student], book)
    lines = {line for c in contracts.values() for line in c.solution_lines}
    for f in sorted(student.rglob("*.ipynb")):
        nb = json.loads(f.read_text(encoding="utf-8"))
        text = "\n".join(editions._source(c) for c in nb["cells"])
        meta = json.dumps(nb.get("metadata", {}))
        for marker in ("BEGIN SOLUTION", "END SOLUTION", "hidden: true"):
            if marker in text:
                findings.append(f"{f}: otter marker {marker!r}")
        if '"hidden": true' in meta or "hidden=True" in meta:
            findings.append(f"{f}: a hidden test in the notebook metadata")
        for line in lines:
            if line in text:
                findings.append(f"{f}: solution line {line[:60]!r}")
    return findings


def index_markdown(index: dict) -> str:
    out = [f"# Course edition of *{index['book']}*", "",
           "One otter-grader assignment per chapter; one question per graded exercise "
           "(points = the exercise's level). Students fill in `student/<part>/<chapter>.ipynb`; "
           "grade with `autograder/<part>/<chapter>.zip` on Gradescope or "
           "`otter run -a <zip> <submission.ipynb>`.", "",
           "| chapter | assignment | questions | points |", "|---|---|---|---|"]
    for a in index["assignments"]:
        qs = ", ".join(f"{q['label']} ({q['points']})" for q in a["questions"])
        out.append(f"| {a['chapter']} {a['title']} | `{a['name']}` | {qs} | {a['points']} |")
    out += ["", "## Exercises that are not graded", "", "| exercise | chapter | level | why |",
            "|---|---|---|---|"]
    for u in index["ungraded"]:
        out.append(f"| {u['label']} | {u['chapter']} | {u['level']} | {u['reason']} |")
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------- grading
def wrong_submission(student_nb: dict, contracts: list[Contract]) -> dict:
    """The student notebook with every answer cell filled in with the contract's wrong answer."""
    nb = copy.deepcopy(student_nb)
    answers = [c for c in nb["cells"]
               if set(ANSWER_TAGS) & set(c.get("metadata", {}).get("tags", []))]
    if len(answers) != len(contracts):
        raise CourseError(f"{len(answers)} answer cells for {len(contracts)} questions")
    for cell, c in zip(answers, contracts):
        cell["source"] = c.wrong
    return nb


def _grade_one(submission: str, autograder: str) -> dict:
    """One ``otter run`` (its Python API: same code path, no Docker) of one submission."""
    from otter.api import grade_submission

    t0 = time.perf_counter()
    res = grade_submission(submission, autograder, quiet=True)
    return {"score": round(res.total, 3), "seconds": round(time.perf_counter() - t0, 1),
            "questions": {q: round(r.score, 3) for q, r in res.results.items()}}


def grade(out: pathlib.Path = OUT, only: list[str] | None = None, partial: bool = False,
          jobs: int = 2) -> int:
    """Grade every assignment with otter run's code path (no Docker), ``jobs`` at a time: the
    book's answers must get full marks on every question, the wrong answers less on every one."""
    from concurrent.futures import ProcessPoolExecutor

    book = editions.Book(ROOT)
    chs = chapters(book)
    contracts, _ = load_contracts(chs, partial)
    index = json.loads((out / "index.json").read_text(encoding="utf-8"))
    todo = []
    for a in index["assignments"]:
        if only and a["docname"] not in only and a["chapter"] not in only:
            continue
        mine = [contracts[q["label"]] for q in a["questions"]]
        work = out / "grading" / pathlib.Path(a["docname"]).relative_to("notebooks")
        work.mkdir(parents=True, exist_ok=True)
        right = work / "book-answers.ipynb"
        shutil.copy(ROOT / a["solutions"], right)
        wrong = work / "wrong-answers.ipynb"
        student = json.loads((ROOT / a["student"]).read_text(encoding="utf-8"))
        wrong.write_text(editions.dumps(wrong_submission(student, mine)), encoding="utf-8")
        todo.append((a, mine, right, wrong))
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [(pool.submit(_grade_one, str(right), str(ROOT / a["autograder"])),
                    pool.submit(_grade_one, str(wrong), str(ROOT / a["autograder"])))
                   for a, _, right, wrong in todo]
        report, failures = [], []
        for (a, mine, _, _), (f_right, f_wrong) in zip(todo, futures):
            row = {"chapter": a["chapter"], "points": a["points"],
                   "book": f_right.result(), "wrong": f_wrong.result()}
            points = {c.label: c.points for c in mine}
            short = {q: s for q, s in row["book"]["questions"].items() if s < points[q]}
            if row["book"]["score"] < a["points"] or short:
                failures.append(f"{a['chapter']}: the book's answers score {row['book']['score']}/"
                                f"{a['points']} (short on {short})")
            full = [q for q, s in row["wrong"]["questions"].items() if s >= points[q]]
            if row["wrong"]["score"] >= a["points"] or full:
                failures.append(f"{a['chapter']}: wrong answers get full marks on {full}")
            print(f"course: {a['chapter']} {a['name']}: book's answers {row['book']['score']:g}/"
                  f"{a['points']} ({row['book']['seconds']} s), wrong answers "
                  f"{row['wrong']['score']:.2f}/{a['points']} ({row['wrong']['seconds']} s)", flush=True)
            report.append(row)
    (out / "grading.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"course: graded {2 * len(todo)} submissions in {time.perf_counter() - t0:.0f} s "
          f"({max(1, jobs)} at a time)")
    for f in failures:
        print("course: FAIL " + f, file=sys.stderr)
    return 1 if failures else 0


def selftest(only: list[str] | None = None, partial: bool = False) -> int:
    """Every contract's tests in-process: all pass on the book's answer, one fails on the wrong one."""
    book = editions.Book(ROOT)
    chs = chapters(book)
    contracts, _ = load_contracts(chs, partial)
    bad = 0
    for label, c in contracts.items():
        ch = chs[c.docname]
        if only and label not in only and c.docname not in only and ch.number not in only:
            continue
        t0 = time.perf_counter()
        right = run_tests_inprocess(ch, c, c.solution)
        t1 = time.perf_counter()
        wrong = run_tests_inprocess(ch, c, c.wrong)
        t2 = time.perf_counter()
        ok = all(err is None for _, err in right) and any(err is not None for _, err in wrong)
        bad += not ok
        print(f"{'ok ' if ok else 'BAD'} {ch.number:>4} {label:28} book {t1 - t0:5.1f} s, "
              f"wrong {t2 - t1:5.1f} s, wrong fails {[n for n, e in wrong if e]}")
        for name, err in right:
            if err:
                print(f"      {name} fails on the book's answer: {err}")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("build", help="write _build/course/ (assignments, autograder zips, index)")
    p.add_argument("--grade", action="store_true", help="then grade the book's and wrong answers")
    p.add_argument("--only", nargs="*", help="chapters (docname or number, e.g. 1.1)")
    p = sub.add_parser("grade", help="grade the book's answers and wrong answers with otter")
    p.add_argument("--only", nargs="*", help="chapters (docname or number, e.g. 1.1)")
    for name in ("build", "grade"):
        sub.choices[name].add_argument("--jobs", type=int, default=2,
                                       help="submissions graded at a time (default 2)")
    p = sub.add_parser("selftest", help="each contract's tests in-process, book's and wrong answer")
    p.add_argument("--only", nargs="*", help="exercise labels or chapters")
    p = sub.add_parser("list", help="graded and ungraded exercises")
    for p in sub.choices.values():
        p.add_argument("--partial", action="store_true",
                       help="only warn about exercises in neither course/*.yml nor ungraded.yml")
    args = parser.parse_args(argv)
    try:
        if args.command == "list":
            book = editions.Book(ROOT)
            chs = chapters(book)
            contracts, ungraded = load_contracts(chs, args.partial)
            for ch in chs.values():
                for lab, ex in ch.exercises.items():
                    what = (f"graded, {contracts[lab].points} points" if lab in contracts else
                            f"not graded: {ungraded[lab]}" if lab in ungraded else "NOT CLASSIFIED")
                    print(f"{ch.number:>4} {lab:28} level {ex.level}  {what}")
            return 0
        if args.command == "selftest":
            return selftest(args.only, args.partial)
        if args.command == "build":
            build(only=args.only, partial=args.partial)
            if not args.grade:
                return 0
        t0 = time.perf_counter()
        rc = grade(only=args.only, partial=args.partial, jobs=args.jobs)
        print(f"course: grading took {time.perf_counter() - t0:.0f} s")
        return rc
    except CourseError as exc:
        print(f"course: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
