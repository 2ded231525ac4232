"""Reader and student notebooks (``scripts/editions.py``): current, plain Jupyter, no leaked solutions.

* the committed ``editions/`` notebooks are what the converter makes of ``notebooks/`` now
  (regenerate with ``python scripts/editions.py notebooks``);
* no MyST is left in them (directives, roles, labels, the book's macros) and every solution is
  folded (reader) or absent (student);
* every exercise has a level;
* the converter on a small book of its own: chapter-wide numbering across pages, titles with
  citations, folded solutions, macros, glue, references, unknown syntax refused.

The numbers and reference texts are compared with the HTML build in ``test_editions_site.py``.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib
import re
import shutil
import sys
import textwrap
import warnings

import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _editions():
    if "editions" in sys.modules:
        return sys.modules["editions"]
    spec = importlib.util.spec_from_file_location("editions", ROOT / "scripts" / "editions.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["editions"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


ed = _editions()
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="  # 1x1


@pytest.fixture(scope="module")
def book():
    return ed.Book()


def _markdown(nb: dict) -> str:
    return "\n\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


def _outside_code(md: str) -> str:
    md = re.sub(r"^```.*?^```", "", md, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", md)


# ----------------------------------------------------------------------------- the committed editions
def test_edition_notebooks_are_current():
    stale = ed.generate(check=True)
    assert not stale, (
        f"{len(stale)} edition notebook(s) differ from what `python scripts/editions.py notebooks` "
        "writes now (run it and commit editions/): " + ", ".join(stale[:5])
    )


def _notebooks(folder: pathlib.Path) -> list[pathlib.Path]:
    """``<part>/<name>.ipynb`` under ``folder``: JupyterLab's copies of the notebooks it opened
    (``<part>/.ipynb_checkpoints/<name>-checkpoint.ipynb``) are not notebooks of the book."""
    return sorted(folder.glob("*/*.ipynb"))


def _edition_notebooks(edition: str) -> list[pathlib.Path]:
    paths = _notebooks(ROOT / "editions" / edition / "notebooks")
    assert len(paths) == len(_notebooks(ROOT / "notebooks"))
    return paths


def _with_solutions(folder: pathlib.Path, book) -> set[str]:
    """The notebooks under ``folder`` in which the student-edition check finds solution text."""
    return {f.split(":")[0] for f in ed.check_student(_notebooks(folder), book)}


@pytest.mark.parametrize("edition", ed.EDITIONS)
def test_edition_notebooks_are_plain_jupyter(edition, book):
    raw = re.compile(r"```\{|:::\{|^:label:|^:class:|\{(cite|prf:|doc\}|ref\}|numref\}|eq\}|glue|py:)|^\([\w-]+\)=$", re.M)
    macro = book.macro_re
    problems = []
    for path in _edition_notebooks(edition):
        nb = json.loads(path.read_text(encoding="utf-8"))
        nbformat.validate(nbformat.from_dict(nb))
        md = _outside_code(_markdown(nb))
        problems += [f"{path.name}: {m.group(0)!r}" for m in raw.finditer(md)]
        problems += [f"{path.name}: macro {m.group(0)!r}" for m in macro.finditer(md)]
        # JupyterLab takes maths out before Markdown: a quoted formula must fit on its line
        problems += [f"{path.name}: multi-line maths in a quote {m.group(0)!r}"
                     for m in re.finditer(r"^> *(\$\$(?!.*\$\$)|\\begin\{(?!.*\\end\{)).*$", md, re.M)]
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert "seqrmt" in "".join(code[0]["source"]) and "hide-cell" in code[0]["metadata"]["tags"], path
        assert not any("remove-cell" in c["metadata"].get("tags", []) for c in nb["cells"]), path
        assert any(o.get("output_type") for c in code for o in c.get("outputs", [])), f"{path}: no outputs"
        details = re.findall(r"<details[^>]*>\s*<summary>Solution</summary>", md)
        exercises = re.findall(r"^> \*\*Exercise \d+\.\d+ \(level \d\)\.\*\*", md, re.M)
        assert exercises, f"{path}: no exercise with its number and level"
        assert "<details open" not in md, path
        if edition == "reader":
            assert len(details) == md.count("<summary>Solution</summary>") >= 1, path
        else:
            # no solution block; a reference title may say "Solution" (Risken's book in 4.4)
            assert not details and "<summary>Solution" not in md and "**Solution" not in md, path
    assert not problems, "\n".join(problems[:20])


def test_student_notebooks_hold_no_solution_text(book):
    student = ed.check_student([ROOT / "editions" / "student"], book)
    assert not student, "\n".join(student[:10])
    # the check can fail: every reader notebook with a solution is caught
    caught = _with_solutions(ROOT / "editions" / "reader" / "notebooks", book)
    assert len(caught) == len(_edition_notebooks("reader")), sorted(caught)


def test_jupyterlab_checkpoints_are_not_counted_as_notebooks(book, tmp_path):
    """Opening the reader notebooks in JupyterLab, as the README suggests, leaves a checkpoint
    copy of each: the reader count above must stay one per notebook (it read ``50 == 25``)."""
    first = _edition_notebooks("reader")[0]
    part = tmp_path / first.parent.name
    (part / ".ipynb_checkpoints").mkdir(parents=True)
    shutil.copy(first, part / first.name)
    shutil.copy(first, part / ".ipynb_checkpoints" / f"{first.stem}-checkpoint.ipynb")
    assert _notebooks(tmp_path) == [part / first.name]
    assert _with_solutions(tmp_path, book) == {str(part / first.name)}


def test_every_exercise_has_a_level(book):
    exercises = [t for t in book.targets.values() if t.kind == "exercise"]
    assert len(exercises) >= 80
    missing = [label for label, t in book.targets.items() if t.kind == "exercise" and label not in book.levels]
    assert not missing, f"exercises without a level in book/instructors.md: {missing}"
    assert set(book.levels.values()) == {1, 2, 3}


# ----------------------------------------------------------------------------- a small book
def _nb(cells: list) -> dict:
    out = []
    for i, (kind, src, *rest) in enumerate(cells):
        cell = {"cell_type": kind, "id": f"c{i}", "metadata": rest[0] if rest else {}, "source": src}
        if kind == "code":
            cell.update(execution_count=1, outputs=rest[1] if len(rest) > 1 else [])
        out.append(cell)
    return {"cells": out, "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}


@pytest.fixture()
def small_book(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "notebooks" / "p1").mkdir(parents=True)
    (tmp_path / "_config.yml").write_text(
        "title: Small\nbibtex_bibfiles: [book/references.bib]\nhtml:\n  baseurl: https://x.org/b\n")
    (tmp_path / "_toc.yml").write_text(textwrap.dedent("""\
        format: jb-book
        root: book/intro
        parts:
          - numbered: true
            chapters:
              - file: book/ch1
                sections:
                  - file: notebooks/p1/a
                  - file: notebooks/p1/b
              - file: book/ch2
          - caption: Appendices
            chapters:
              - file: book/references
        """))
    shutil.copy(ROOT / "book" / "macros.yml", tmp_path / "book" / "macros.yml")
    (tmp_path / "book" / "intro.md").write_text("# Intro\n")
    (tmp_path / "book" / "ch1.md").write_text("(ch1)=\n# Chapter one\n\n```{prf:theorem} In the index\n:label: thm-index\nA.\n```\n")
    (tmp_path / "book" / "ch2.md").write_text("# Chapter two\n\n```{prf:theorem}\n:label: thm-two\nB.\n```\n")
    (tmp_path / "book" / "references.md").write_text("# References\n\n```{bibliography}\n```\n")
    (tmp_path / "book" / "instructors.md").write_text(
        "# I\n\n## Exercises by level\n\n| level | exercises |\n|---|---|\n| 1: easy | {ref}`ex-a` |\n| 2: hard | {ref}`ex-b` |\n")
    (tmp_path / "book" / "references.bib").write_text(textwrap.dedent("""\
        @book{smith2020, author = {Smith, Ann and Jones, Bob}, title = {T1}, year = {2020}}
        @book{adams2019, author = {Adams, Al and Brown, B. and Clark, C.}, title = {T2}, year = {2019}}
        @book{lee2021a, author = {Lee, K}, title = {Alpha}, year = {2021}}
        @book{lee2021b, author = {Lee, K}, title = {Beta}, year = {2021}}
        """))
    glue = {"output_type": "display_data", "data": {"application/papermill.record/text/plain": "0.123456"},
            "metadata": {"scrapbook": {"name": "err", "mime_prefix": "application/papermill.record/"}}}
    a = _nb([
        ("markdown", "(sec-a)=\n# Page A\n\n## Setting\n\nText with $\\RR^d$, $x_\\RR$ and `\\RR` in code."),
        ("code", "# install\nimport seqrmt", {"tags": ["hide-cell"]}),
        ("markdown", textwrap.dedent("""\
            :::{prf:lemma} Trace lemma {cite:p}`smith2020,adams2019`
            :label: lem-a
            Body of the lemma.
            :::

            ```{prf:proof}
            By {prf:ref}`thm-index` and {prf:ref}`lem-a`; see {cite:t}`lee2021b`.
            ```

            ```python
            x = "{cite}`not-a-role`"
            ```

            The error is {glue:text}`err:.3f`, see {numref}`fig-a` and [the setting](sec-a).
            """)),
        ("code", "plot()", {"mystnb": {"figure": {"caption": "A figure of $\\EE X$.", "name": "fig-a"},
                                       "image": {"alt": "A line."}}}, [glue]),
        ("code", "assert True", {"tags": ["remove-cell"]}),
        ("markdown", textwrap.dedent("""\
            ## Exercises

            ```{exercise}
            :label: ex-a
            Show it.
            ```

            ```{solution} ex-a
            :class: dropdown
            It holds since $\\Tr A = 0$.
            ```
            """)),
    ])
    glued_png = {"output_type": "display_data",
                 "data": {"application/papermill.record/image/png": PNG,
                          "application/papermill.record/text/plain": "<Figure>"},
                 "metadata": {"scrapbook": {"name": "figkey", "mime_prefix": "application/papermill.record/"}}}
    b = _nb([
        ("markdown", "# Page B\n\n```{prf:theorem} Second\n:label: thm-b\nSee {doc}`a` and {ref}`ex-b`.\n```\n\n"
                     "````{exercise}\n:label: ex-b\nHard.\n````\n\n```{solution} ex-b\nYes, with a long enough sentence here to fingerprint it.\n```"),
        ("code", "import seqrmt", {"tags": ["hide-cell"]}),
        ("code", "glue('figkey', fig, display=False)", {}, [glued_png]),
        ("markdown", "```{glue:figure} figkey\n:alt: A glued plot of $x$\n:name: fig-glued\n\nThe glued figure, {numref}`fig-a` again.\n```"),
    ])
    (tmp_path / "notebooks" / "p1" / "a.ipynb").write_text(json.dumps(a))
    (tmp_path / "notebooks" / "p1" / "b.ipynb").write_text(json.dumps(b))
    return tmp_path


def test_small_book_numbering_and_text(small_book):
    book = ed.Book(small_book)
    # chapter-wide counters per kind, the chapter page first, then its sections in order
    assert book.targets["thm-index"].number == (1, 1)
    assert book.targets["lem-a"].number == (1, 1)
    assert book.targets["thm-b"].number == (1, 2)
    assert book.targets["thm-two"].number == (2, 1)
    assert book.targets["fig-a"].number == (1, 1)
    assert book.targets["ex-b"].number == (1, 2)
    nb, conv = ed.convert(book, "notebooks/p1/a", "reader")
    md = _markdown(nb)
    assert md.startswith("# 1.1. Page A\n")
    assert "## 1.1.1. Setting" in md and "## 1.1.2. Exercises" in md
    assert "$\\mathbb{R}^d$, $x_{\\mathbb{R}}$ and `\\RR` in code" in md
    ref = "https://x.org/b/book/references.html"
    # each citation links to its entry's anchor on the references page (bibtex_cite_id)
    assert (f"> **Lemma 1.1 (Trace lemma \\[[Adams *et al.*, 2019]({ref}#cite-adams2019), "
            f"[Smith and Jones, 2020]({ref}#cite-smith2020)\\]).** Body of the lemma.") in md
    assert ("*Proof.* By [Theorem 1.1](https://x.org/b/book/ch1.html#thm-index) and "
            f"[Lemma 1.1](https://x.org/b/notebooks/p1/a.html#lem-a); see Lee \\[[2021b]({ref}#cite-lee2021b)\\]. ∎") in md
    # the notebook writes out the works it cites, in the references page's order
    bib = next(c for c in nb["cells"] if c["metadata"].get("editions") == "bibliography")
    bib_md = "".join(bib["source"])
    assert bib_md.startswith("**Works cited in this notebook.**") and conv.cited == ["adams2019", "smith2020", "lee2021b"]
    assert [m for m in re.findall(r"#(cite-[\w-]+)\)", bib_md)] == ["cite-adams2019", "cite-lee2021b", "cite-smith2020"]
    assert "T2" in bib_md and "Beta" in bib_md and "Alpha" not in bib_md
    assert 'x = "{cite}`not-a-role`"' in md  # code untouched
    assert "The error is 0.123, see [Fig. 1.1](https://x.org/b/notebooks/p1/a.html#fig-a) and " \
           "[the setting](https://x.org/b/notebooks/p1/a.html#sec-a)." in md
    assert "**Fig. 1.1** A figure of $\\mathbb{E} X$." in md
    assert "> **Exercise 1.1 (level 1).** Show it." in md
    assert "<details>\n<summary>Solution</summary>\n\nIt holds since $\\operatorname{Tr} A = 0$.\n\n</details>" in md
    assert "(sec-a)=" not in md and ":label:" not in md
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert [c["source"] for c in code] == ["# install\nimport seqrmt", "plot()"]  # remove-cell dropped
    assert code[1]["outputs"] and code[1]["metadata"]["mystnb"]["image"]["alt"] == "A line."
    student, _ = ed.convert(book, "notebooks/p1/a", "student")
    smd = _markdown(student)
    assert "Solution" not in smd and "Tr A = 0" not in smd and "> **Exercise 1.1 (level 1).**" in smd
    # the student notebooks link only to the student site
    links = re.findall(r"\]\((https?://[^)]+)\)", smd)
    assert links and all(u.startswith("https://x.org/b/student/") for u in links), links
    nb_b, _ = ed.convert(book, "notebooks/p1/b", "reader")
    mdb = _markdown(nb_b)
    assert "> **Theorem 1.2 (Second).** See [Page A](https://x.org/b/notebooks/p1/a.html) and " \
           "[Exercise 1.2](https://x.org/b/notebooks/p1/b.html#ex-b)." in mdb
    assert "> **Exercise 1.2 (level 2).** Hard." in mdb
    fig_cell = next(c for c in nb_b["cells"] if "attachment:" in "".join(c["source"]))
    name = next(iter(fig_cell["attachments"]))
    assert fig_cell["attachments"][name] == {"image/png": PNG}
    assert "".join(fig_cell["source"]) == (
        f"![A glued plot of $x$](attachment:{name})\n\n**Fig. 1.2** The glued figure, "
        "[Fig. 1.1](https://x.org/b/notebooks/p1/a.html#fig-a) again.")
    assert book.targets["fig-glued"].number == (1, 2)


def test_small_book_student_check_and_staleness(small_book):
    book = ed.Book(small_book)
    written = ed.generate(small_book)
    assert len(written) == 4 and ed.generate(small_book, check=True) == []
    assert ed.check_student([small_book / "editions" / "student"], book) == []
    leaked = ed.check_student([small_book / "editions" / "reader"], book)
    assert any("long enough sentence" in f for f in leaked), leaked
    # an edited source makes its editions stale
    a = small_book / "notebooks" / "p1" / "a.ipynb"
    a.write_text(a.read_text().replace("Show it.", "Show it now."))
    assert len(ed.generate(small_book, check=True)) == 2


@pytest.mark.parametrize("source, message", [
    ("{unknownrole}`x`", "role {unknownrole}"),
    ("```{tab-set}\nx\n```", "directive {tab-set}"),
    ("{prf:ref}`no-such-label`", "unknown label"),
    ("{cite:t}`nokey`", "unknown citation key"),
    ("[x](nowhere)", "neither a label nor a page"),
])
def test_unknown_syntax_is_refused(small_book, source, message):
    book = ed.Book(small_book)
    conv = ed.Converter(book, "notebooks/p1/a", "reader")
    with pytest.raises(ed.ConversionError, match=re.escape(message)):
        conv.markdown(source)


def _names(src: str) -> tuple[set[str], set[str]]:
    """Names a cell binds and names it reads (IPython magics and shell lines dropped)."""
    import ast

    code = "\n".join(line for line in src.split("\n") if not line.lstrip().startswith(("%", "!")))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences in notebook strings
            tree = ast.parse(code)
    except SyntaxError:
        return set(), set()
    bound, read = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, ast.Store) else read).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return bound, read


def test_dropped_cells_define_nothing_the_edition_notebooks_use():
    """``remove-cell`` cells (hidden checks) are dropped: nothing after them may need their names."""
    problems = []
    for path in sorted((ROOT / "notebooks").glob("*/*.ipynb")):
        cells = [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
        kept_bound, removed_only = set(), set()
        for cell in cells:
            bound, read = _names("".join(cell["source"]))
            if "remove-cell" in cell["metadata"].get("tags", []):
                removed_only |= bound - kept_bound
                continue
            if used := (read - bound) & removed_only:
                problems.append(f"{path.name}: {sorted(used)} come only from a remove-cell cell")
            kept_bound |= bound
            removed_only -= bound
    assert not problems, "\n".join(problems)
