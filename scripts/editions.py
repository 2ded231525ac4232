#!/usr/bin/env python
"""Reader and student editions of the book: notebooks that render in plain Jupyter, and a student site.

The chapters in ``notebooks/`` are written in MyST: ``{prf:theorem}`` and ``{exercise}`` blocks,
``{cite:t}``/``{prf:ref}``/``{doc}`` roles, the book's macros (``\\RR``, ``\\Tr``, ...). The website
renders them; JupyterLab, Notebook 7, Colab, VS Code and GitHub do not. This script writes copies
in plain Jupyter Markdown, with every output kept::

    python scripts/editions.py notebooks          # editions/reader/ and editions/student/ (a few seconds)
    python scripts/editions.py notebooks --check  # exit 1 if a committed edition notebook is stale
    python scripts/editions.py student [--strict] [--pdf]  # the student site (and PDF) in _build/student/
    python scripts/editions.py check-student PATH ...   # no solution text in these files or folders

**Reader notebooks** (``editions/reader/notebooks/<part>/<name>.ipynb``): what the launch buttons
(Binder, Colab) and the ".ipynb" download of the book serve (``_ext/seqrmt_editions.py``).

* ``{prf:...}`` and ``{exercise}`` blocks become quoted blocks led by the book's title and number,
  "**Theorem 1.2 (Marchenko–Pastur).**", "**Exercise 1.4 (level 2).**"; proofs read
  "*Proof.* ... ∎"; ``:label:`` options and ``(target)=`` lines disappear; headings carry the
  book's section numbers ("1.2.3.").
* ``{solution}`` blocks are folded: ``<details><summary>Solution</summary> ... </details>``.
* ``{cite:t}``, ``{cite:p}`` become the book's author-year text ("Bai and Silverstein [2010]",
  "[Anderson *et al.*, 2010, ...]") linked to the entry on the references page of the online
  book (``#cite-<key>``); a cell "Works cited in this notebook" after the References section
  writes each cited work out, so that JupyterLab and Colab readers see which paper is meant;
  ``{prf:ref}``, ``{ref}``, ``{numref}``, ``{doc}``, ``{eq}``, ``{py:func}``... become the text the
  book shows ("Theorem 1.1", "Fig. 1.3", the page title), linked to the online page;
  ``{glue:text}`` and ``{glue}`` become the glued value read from the notebook's own outputs.
* The book's macros are expanded from the one table ``book/macros.yml``.
* Figures keep their outputs and ``mystnb`` metadata (alt text); a caption cell
  "**Fig. 1.3** ..." follows each captioned figure; ``{figure}``/``{glue:figure}`` become images
  (cell attachments) with their alt text and caption.
* The hidden install cell stays the first code cell; ``remove-cell`` cells (glue only) go. The
  check under a solution (a code cell starting ``# check of ex-...``) stays, folded (JupyterLab's
  ``source_hidden``/``outputs_hidden``).

**Student notebooks** (``editions/student/...``): the reader notebooks without any solution or
solution check; exercises keep their numbers and levels. Their links go to the student site
(``<html.baseurl>student/``), where no solution is one click away.

Numbers are those of the HTML build (Sphinx numfig with ``use_multitoc_numbering``: chapter-wide
counters per kind, in table-of-contents order); ``tests/test_editions_site.py`` checks every
number, reference text and citation against ``_build/html``. The online book's address is
``html.baseurl`` in ``_config.yml``, the one place that names it.
"""

from __future__ import annotations

import argparse
import base64
import copy
import hashlib
import html
import importlib.util
import json
import os
import pathlib
import posixpath
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
EDITIONS = ("reader", "student")
# where each edition's website lives under html.baseurl: the student notebooks link to the student
# site, where no solution is one click away (published there by .github/workflows/pages.yml)
SITE_PATHS = {"reader": "", "student": "student/"}
PRF_TYPES = {
    "axiom", "theorem", "lemma", "algorithm", "definition", "remark", "conjecture", "corollary",
    "criterion", "example", "property", "observation", "proposition", "assumption", "notation",
}
ADMONITIONS = {
    "note": "Note", "warning": "Warning", "important": "Important", "tip": "Tip", "hint": "Hint",
    "caution": "Caution", "attention": "Attention", "danger": "Danger", "error": "Error",
    "seealso": "See also",
}
# third-party APIs the book names without a link (_config.yml's nitpick_ignore_regex)
EXTERNAL_PY_PACKAGES = ("numpy", "scipy", "cvxpy", "torch", "sklearn", "matplotlib")
NUMFIG_FORMAT = {"figure": "Fig. %s", "table": "Table %s", "code-block": "Listing %s",
                 "section": "Section %s", "exercise": "Exercise %s"}
PY_ROLES = {"py:func", "py:meth", "py:class", "py:data", "py:mod", "py:obj", "py:attr", "py:exc",
            "func", "meth", "class", "data", "mod", "obj", "attr", "exc"}
TARGET_LINE = re.compile(r"^\s{0,3}\(([^()\s]+)\)=\s*$")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE_OPEN = re.compile(r"^(\s{0,3})(`{3,}|~{3,}|:{3,})(.*)$")
ROLE_OR_CODE = re.compile(
    r"(?P<role>\{(?P<rname>[A-Za-z][\w:.+-]*)\}`(?P<rbody>[^`]*)`)"
    r"|(?P<code>(?P<ticks>`+).+?(?P=ticks))",
    re.S,
)
MD_LINK = re.compile(r"(?<![!\\])\[((?:[^\[\]]|\\[\[\]])*)\]\(([^()\s]+)\)")
LABELED_MATH = re.compile(r"^\$\$\s*\(([^()\s]+)\)\s*$")


class ConversionError(ValueError):
    """A MyST construct the converter does not know: extend the converter, do not ignore it."""


# ----------------------------------------------------------------------------- MyST blocks
@dataclass
class Text:
    lines: list[str]


@dataclass
class Code:
    lines: list[str]


@dataclass
class Directive:
    name: str
    argument: str
    options: dict[str, str]
    body: str
    fence: str
    line: int = 0


def _split_options(lines: list[str]) -> tuple[dict[str, str], list[str]]:
    options: dict[str, str] = {}
    i = 0
    if lines and lines[0].strip() == "---":
        end = next((k for k in range(1, len(lines)) if lines[k].strip() == "---"), None)
        if end is not None:
            data = yaml.safe_load("\n".join(lines[1:end])) or {}
            options = {str(k): "" if v is None else str(v) for k, v in data.items()}
            i = end + 1
    else:
        while i < len(lines):
            m = re.match(r"^\s*:([\w-]+):\s*(.*)$", lines[i])
            if not m:
                break
            options[m.group(1)] = m.group(2).strip()
            i += 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    return options, lines[i:]


def parse_blocks(text: str) -> list:
    """Split MyST text into plain text, code fences and directives (not recursive)."""
    lines = text.split("\n")
    out: list = []
    buf: list[str] = []
    i = 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if m and not (m.group(2)[0] == ":" and not m.group(3).startswith("{")) and not (
            m.group(2)[0] == "`" and "`" in m.group(3)
        ):
            fence, info = m.group(2), m.group(3).strip()
            close = re.compile(rf"^\s{{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
            j = i + 1
            while j < len(lines) and not close.match(lines[j]):
                j += 1
            if buf:
                out.append(Text(buf))
                buf = []
            body = [line[len(m.group(1)):] if line.startswith(m.group(1)) else line for line in lines[i + 1: j]]
            if info.startswith("{") and "}" in info:
                name = info[1: info.index("}")]
                argument = info[info.index("}") + 1:].strip()
                options, rest = _split_options(body)
                out.append(Directive(name, argument, options, "\n".join(rest).rstrip("\n"), fence, i))
            else:
                out.append(Code(lines[i: j + 1]))
            i = j + 1
        else:
            buf.append(lines[i])
            i += 1
    if buf:
        out.append(Text(buf))
    return out


# ----------------------------------------------------------------------------- the book
@dataclass
class Target:
    kind: str            # section, prf, exercise, figure, equation, doc
    docname: str
    anchor: str
    text: str            # what {ref}/{prf:ref} shows
    number: tuple = ()
    realtype: str = ""


@dataclass
class Doc:
    docname: str
    path: pathlib.Path
    secnum: tuple | None  # None: unnumbered page
    title: str = ""


@dataclass
class Numbering:
    """Sphinx numfig: one counter per kind and chapter (``numfig_secnum_depth`` = 1)."""

    depth: int
    counters: dict = field(default_factory=dict)

    def next(self, figtype: str, secnum: tuple) -> tuple:
        prefix = tuple(secnum[: self.depth])
        counter = self.counters.setdefault(figtype, {})
        counter[prefix] = counter.get(prefix, 0) + 1
        return prefix + (counter[prefix],)


def _load_ext(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "_ext" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Book:
    """Everything the conversion needs to know about the whole book, read from the sources."""

    def __init__(self, root: pathlib.Path = ROOT):
        self.root = root
        self.config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
        baseurl = (self.config.get("html") or {}).get("baseurl", "")
        if not baseurl:
            raise ConversionError("_config.yml has no html.baseurl (the online book's address)")
        self.baseurl = baseurl.rstrip("/") + "/"
        macros = yaml.safe_load((root / "book" / "macros.yml").read_text(encoding="utf-8"))
        self.macros = {str(k): str(v) for k, v in macros.items()}
        self.macro_re = re.compile(
            r"(?<!\\)\\(" + "|".join(sorted(map(re.escape, self.macros), key=len, reverse=True)) + r")(?![A-Za-z])"
        )
        self.levels = _load_ext("seqrmt_editions").exercise_levels(root)
        sphinx_cfg = (self.config.get("sphinx") or {}).get("config") or {}
        self.numbering = Numbering(int(sphinx_cfg.get("numfig_secnum_depth", 1)))
        self.docs = self._toc()
        self.targets: dict[str, Target] = {}
        self.assigned: dict[str, list] = {}     # docname -> numbers in document order
        self.headings: dict[str, list] = {}     # docname -> heading numbers in order
        self.api_pages = self._api_pages()
        self._bib = None
        self.references_doc = self._references_doc()
        for doc in self.docs:
            self._scan(doc)

    # -- table of contents
    def _toc(self) -> list[Doc]:
        toc = yaml.safe_load((self.root / "_toc.yml").read_text(encoding="utf-8"))
        docs: list[Doc] = []

        def add(file: str, secnum):
            file = re.sub(r"\.(md|ipynb)$", "", file)
            for ext in (".ipynb", ".md"):
                if (self.root / (file + ext)).exists():
                    docs.append(Doc(file, self.root / (file + ext), secnum))
                    return
            raise ConversionError(f"_toc.yml names {file}, which does not exist")

        def walk(entries, prefix, numbered):
            k = 0
            for entry in entries or []:
                k += 1
                secnum = prefix + (k,) if numbered else None
                add(entry["file"], secnum)
                walk(entry.get("sections"), secnum or (), numbered)

        add(toc["root"], None)
        chapter = 0  # use_multitoc_numbering: chapters numbered across parts
        for part in toc.get("parts", []):
            numbered = bool(part.get("numbered"))
            for entry in part.get("chapters", []):
                if numbered:
                    chapter += 1
                secnum = (chapter,) if numbered else None
                add(entry["file"], secnum)
                walk(entry.get("sections"), secnum or (), numbered)
        return docs

    def doc(self, docname: str) -> Doc:
        for d in self.docs:
            if d.docname == docname:
                return d
        raise ConversionError(f"no page {docname!r} in _toc.yml")

    def _api_pages(self) -> dict[str, str]:
        pages = {}
        for doc in self.docs:
            if doc.path.suffix == ".md":
                for m in re.finditer(r"\.\.\s+automodule::\s+([\w.]+)", doc.path.read_text(encoding="utf-8")):
                    pages[m.group(1)] = doc.docname
        return pages

    def _references_doc(self) -> str:
        for doc in self.docs:
            if doc.path.suffix == ".md" and "```{bibliography}" in doc.path.read_text(encoding="utf-8"):
                return doc.docname
        raise ConversionError("no page holds the {bibliography} directive")

    def url(self, docname: str, anchor: str = "", edition: str = "reader") -> str:
        """The address of a page (and anchor) on the online site of ``edition``."""
        return self.baseurl + SITE_PATHS[edition] + docname + ".html" + (f"#{anchor}" if anchor else "")

    # -- sources
    def cells(self, doc: Doc) -> list[dict]:
        """Markdown and code cells of a page (a .md page is one markdown cell)."""
        if doc.path.suffix == ".ipynb":
            nb = json.loads(doc.path.read_text(encoding="utf-8"))
            return [c for c in nb["cells"] if "remove-cell" not in c.get("metadata", {}).get("tags", [])]
        return [{"cell_type": "markdown", "source": doc.path.read_text(encoding="utf-8"), "metadata": {}}]

    # -- pass 1: numbers, titles, labels
    def _scan(self, doc: Doc) -> None:
        self.assigned[doc.docname] = []
        self.headings[doc.docname] = []
        state = {"pending": []}
        for cell in self.cells(doc):
            src = _source(cell)
            if cell["cell_type"] == "markdown":
                self._scan_text(doc, src, state)
            elif cell["cell_type"] == "code":
                fig = (cell.get("metadata", {}).get("mystnb") or {}).get("figure") or {}
                if fig.get("caption"):
                    number = self._number(doc, "figure")
                    if fig.get("name"):
                        self._target(fig["name"], Target("figure", doc.docname, fig["name"], fig["caption"], number))

    def _number(self, doc: Doc, figtype: str) -> tuple:
        number = self.numbering.next(figtype, doc.secnum or ())
        self.assigned[doc.docname].append((figtype, number))
        return number

    def _target(self, label: str, target: Target) -> None:
        if label in self.targets and self.targets[label] != target:
            raise ConversionError(f"label {label!r} defined twice ({self.targets[label].docname}, {target.docname})")
        self.targets[label] = target

    def _scan_text(self, doc: Doc, text: str, state: dict) -> None:
        for block in parse_blocks(text):
            if isinstance(block, Text):
                for line in block.lines:
                    if m := TARGET_LINE.match(line):
                        state["pending"].append(m.group(1))
                        continue
                    if m := LABELED_MATH.match(line):
                        number = self._number(doc, "displaymath")
                        self._target(m.group(1), Target("equation", doc.docname, f"equation-{m.group(1)}", "", number))
                    if m := HEADING.match(line):
                        level, title = len(m.group(1)), m.group(2)
                        number = self._heading_number(doc, level, state)
                        self.headings[doc.docname].append(number)
                        if not doc.title:
                            doc.title = title
                        for label in state["pending"]:
                            self._target(label, Target("section", doc.docname, label, title, number))
                        state["pending"] = []
                    elif line.strip():
                        state["pending"] = []
            elif isinstance(block, Directive):
                self._scan_directive(doc, block, state)

    def _heading_number(self, doc: Doc, level: int, state: dict) -> tuple:
        """The section number the book shows: the page's number, then one counter per level."""
        if doc.secnum is None:
            return ()
        if "top" not in state:  # the page title
            state["top"], state["counts"] = level, []
            return tuple(doc.secnum)
        depth = max(level - state["top"], 1)
        counts = state["counts"]
        counts.extend([0] * (depth - len(counts)))
        del counts[depth:]
        counts[depth - 1] += 1
        return tuple(doc.secnum) + tuple(counts)

    def _scan_directive(self, doc: Doc, d: Directive, state: dict) -> None:
        state["pending"] = []
        name, label = d.name, d.options.get("label") or d.options.get("name")
        if name.startswith("prf:") and name[4:] in PRF_TYPES and "nonumber" not in d.options:
            number = self._number(doc, name[4:])
            if label:
                self._target(label, Target("prf", doc.docname, label, "", number, name[4:]))
        elif name == "exercise" and "nonumber" not in d.options:
            number = self._number(doc, "exercise")
            if label:
                self._target(label, Target("exercise", doc.docname, label, "", number, "exercise"))
        elif name in ("figure", "glue:figure") and d.body.strip():
            number = self._number(doc, "figure")
            if label:
                self._target(label, Target("figure", doc.docname, label, d.body.strip(), number))
        elif name == "math" and label:
            number = self._number(doc, "displaymath")
            self._target(label, Target("equation", doc.docname, f"equation-{label}", "", number))
        if name not in ("code-cell", "code-block", "code", "eval-rst", "bibliography", "raw", "include"):
            self._scan_text(doc, d.body, {"pending": [], "top": 0, "counts": []})

    # -- bibliography
    def bib(self):
        if self._bib is None:
            from pybtex.database import parse_file
            from pybtex.plugin import find_plugin

            site = _load_ext("seqrmt_site")
            files = self.config.get("bibtex_bibfiles") or []
            entries = {}
            for f in files:
                entries.update(parse_file(str(self.root / f)).entries)
            site.disambiguate_entries(entries)
            order = find_plugin("pybtex.style.sorting", "author_year_title")().sort(list(entries.values()))
            rank = {e.key: i for i, e in enumerate(order)}
            authors = {k: site.author_key(e) for k, e in entries.items()}  # slow: render once
            self._bib = (entries, rank, authors)
        return self._bib


SOLUTION_CHECK = re.compile(r"^# check of ex-[\w-]+")


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def cite_anchor(key: str) -> str:
    """The anchor of a bibliography entry on the references page: ``bibtex_cite_id`` of
    ``_config.yml`` ("cite-{key}") made an HTML id as docutils makes it."""
    from docutils.nodes import make_id

    return make_id(f"cite-{key}")


def _after_references(cells: list[dict]) -> int:
    """Where the notebook's bibliography goes: after the "References" section's first cell, or
    at the end."""
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "markdown" and re.search(r"^#{1,6} [\d.]*\s*References\s*$", _source(cell), re.M):
            return i + 1
    return len(cells)


def _escape_link_text(text: str) -> str:
    return text.replace("[", "\\[").replace("]", "\\]")


# ----------------------------------------------------------------------------- conversion
class Converter:
    """Pass 2: one notebook to plain Jupyter Markdown (reader or student)."""

    def __init__(self, book: Book, docname: str, edition: str):
        if edition not in EDITIONS:
            raise ValueError(f"edition must be one of {EDITIONS}")
        self.book, self.edition = book, edition
        self.doc = book.doc(docname)
        self.numbers = list(book.assigned[docname])
        self.heading_numbers = list(book.headings[docname])
        self.glue = _glue_data(json.loads(self.doc.path.read_text(encoding="utf-8")))
        self.attachments: dict[str, dict] = {}
        self.rendered: list[tuple[str, str, str]] = []  # (kind, text, href) of every role, for the site check
        self.solutions: list[str] = []                    # converted solution bodies (reader)
        self.solution_sources: list[str] = []             # the same, as written in the source
        self.solution_labels: list[str] = []              # the exercise each of them solves
        self.exercise_texts: dict[str, str] = {}          # exercise label -> its converted text
        self.cited: list[str] = []                        # citation keys, in order of first citation

    # -- numbers, consumed in the order of pass 1
    def _take(self, figtype: str) -> tuple:
        if not self.numbers or self.numbers[0][0] != figtype:
            raise ConversionError(f"{self.doc.docname}: numbering out of step at a {figtype}")
        return self.numbers.pop(0)[1]

    # -- notebook
    def notebook(self) -> dict:
        nb = json.loads(self.doc.path.read_text(encoding="utf-8"))
        cells = []
        first_markdown = True
        for cell in nb["cells"]:
            tags = cell.get("metadata", {}).get("tags", [])
            if "remove-cell" in tags:
                continue
            is_check = cell["cell_type"] == "code" and SOLUTION_CHECK.match(_source(cell))
            if is_check and self.edition == "student":
                continue
            cell = copy.deepcopy(cell)
            if is_check:  # folded in JupyterLab, as in the book
                cell.setdefault("metadata", {})["jupyter"] = {"source_hidden": True, "outputs_hidden": True}
            cell.get("metadata", {}).pop("execution", None)
            if cell["cell_type"] == "markdown":
                text = self.markdown(_source(cell))
                if first_markdown:
                    text = self._with_banner(text)
                    first_markdown = False
                if not text.strip():
                    continue
                cell["source"] = _lines(text)
                cells.append(cell)
            elif cell["cell_type"] == "code":
                cells.append(cell)
                fig = (cell.get("metadata", {}).get("mystnb") or {}).get("figure") or {}
                if fig.get("caption"):
                    number = self._take("figure")
                    caption = self.inline(fig["caption"])
                    label = NUMFIG_FORMAT["figure"] % ".".join(map(str, number))
                    cells.append({
                        "cell_type": "markdown",
                        "id": _cell_id(cell.get("id", ""), "caption"),
                        "metadata": {"editions": "figure caption"},
                        "source": _lines(f"**{label}** {caption}"),
                    })
            else:
                cells.append(cell)
        if self.numbers:
            raise ConversionError(f"{self.doc.docname}: {len(self.numbers)} numbered items not converted")
        if self.cited:
            cells.insert(_after_references(cells), {
                "cell_type": "markdown",
                "id": _cell_id(self.doc.docname, "bibliography"),
                "metadata": {"editions": "bibliography"},
                "source": _lines(self.bibliography()),
            })
        if nb.get("nbformat_minor", 0) < 5:
            for c in cells:
                c.pop("id", None)
        nb["cells"] = cells
        nb["metadata"] = {k: v for k, v in nb.get("metadata", {}).items() if k in ("kernelspec", "language_info")}
        nb["metadata"]["seqrmt_edition"] = {"edition": self.edition, "source": f"{self.doc.docname}.ipynb"}
        return nb

    def bibliography(self) -> str:
        """The works this notebook cites, written out, in the order of the references page: a
        reader in JupyterLab or Colab sees which paper is meant without the website."""
        from pybtex.plugin import find_plugin

        entries, rank, authors = self.book.bib()
        style = find_plugin("pybtex.style.formatting", "seqrmt_author_year")()
        items = []
        for key in sorted(self.cited, key=lambda k: rank[k]):
            label = f"{authors[key]}, {entries[key].fields.get('year', 'n.d.')}".replace("et al.", "*et al.*")
            try:
                entry = next(iter(style.format_entries([entries[key]])))
                text = " ".join(entry.text.render_as("markdown").split())
            except Exception:  # an entry pybtex's style cannot format (a missing field): its title
                text = entries[key].fields.get("title", key).replace("{", "").replace("}", "") + "."
            items.append(f"- [**{label}.**]({self._url(self.book.references_doc, cite_anchor(key))}) {text}")
        head = (f"**Works cited in this notebook.** All of them are on the book's "
                f"[references page]({self._url(self.book.references_doc)}).")
        return head + "\n\n" + "\n".join(items)

    def _with_banner(self, text: str) -> str:
        url = self._url(self.doc.docname)
        if self.edition == "reader":
            what, site = "Reader edition: solutions are folded", "the online book"
        else:
            what, site = "Student edition: without solutions", "the online student edition"
        banner = (
            f"*{what}. Generated from [{site}]({url}) "
            f"({_escape_link_text(self.book.config.get('title', ''))}); theorem, exercise and figure "
            "numbers are the book's.*"
        )
        lines = text.split("\n")
        for i, line in enumerate(lines):
            if HEADING.match(line):
                return "\n".join(lines[: i + 1] + ["", banner] + lines[i + 1:])
        return banner + "\n\n" + text

    # -- markdown
    def markdown(self, text: str) -> str:
        parts = []
        for block in parse_blocks(text):
            if isinstance(block, Text):
                parts.append(self._text(block.lines))
            elif isinstance(block, Code):
                parts.append("\n".join(block.lines))
            else:
                parts.append(self.directive(block))
        out = "\n".join(parts)
        out = re.sub(r"\n{3,}", "\n\n", out)
        return out.strip("\n")

    def _text(self, lines: list[str]) -> str:
        out = []
        for line in lines:
            if TARGET_LINE.match(line) or re.match(r"^\s{0,3}%", line):
                continue
            if m := LABELED_MATH.match(line):
                number = self._take("displaymath")
                out.append(f"\\tag{{{'.'.join(map(str, number))}}}")
                out.append("$$")
                continue
            if m := HEADING.match(line):
                number = self.heading_numbers.pop(0) if self.heading_numbers else ()
                prefix = ".".join(map(str, number)) + ". " if number else ""
                out.append(f"{m.group(1)} {prefix}{self.inline(m.group(2))}")
                continue
            out.append(line)
        return self.inline("\n".join(out))

    def inline(self, text: str) -> str:
        """Roles to text and links, macros expanded (outside code spans)."""
        pieces, pos = [], 0
        for m in ROLE_OR_CODE.finditer(text):
            pieces.append(self.expand_macros(text[pos: m.start()]))
            if m.group("role"):
                pieces.append(self.role(m.group("rname"), m.group("rbody")))
            else:
                pieces.append(m.group("code"))
            pos = m.end()
        pieces.append(self.expand_macros(text[pos:]))
        return MD_LINK.sub(self._md_link, "".join(pieces))

    def _md_link(self, m: re.Match) -> str:
        """``[text](label)`` or ``[text](page.ipynb)``: MyST links inside the book, made absolute."""
        text, target = m.group(1), m.group(2)
        if re.match(r"^(https?:|mailto:|#|attachment:)", target):
            return m.group(0)
        if target in self.book.targets:
            t = self.book.targets[target]
            return self._link("link", text, self._url(t.docname, t.anchor))
        path, _, anchor = target.partition("#")
        docname = self._docname(path)
        if any(d.docname == docname for d in self.book.docs):
            return self._link("link", text, self._url(docname, anchor))
        raise ConversionError(f"{self.doc.docname}: link target {target!r} is neither a label nor a page")

    def expand_macros(self, text: str) -> str:
        def repl(m):
            body = self.book.macros[m.group(1)]
            before = text[m.start() - 1] if m.start() else ""
            return "{" + body + "}" if before in "_^" else body

        return self.book.macro_re.sub(repl, text)

    # -- roles
    def role(self, name: str, body: str) -> str:
        explicit = None
        if m := re.match(r"^(.*?)\s*<([^<>]+)>$", body, re.S):
            explicit, target = m.group(1), m.group(2).strip()
        else:
            target = body.strip()
        if name in ("cite", "cite:p", "cite:t"):
            return self._cite(name, target)
        if name in ("prf:ref", "ref", "numref", "eq"):
            return self._xref(name, target, explicit)
        if name == "doc":
            docname = self._docname(target)
            text = self.inline(explicit) if explicit else self.inline(self.book.doc(docname).title)
            return self._link(name, text, self._url(docname))
        if name in PY_ROLES:
            return self._py(name, target, explicit)
        if name.startswith("glue"):
            return self._glue_role(name, body)
        if name == "math":
            return f"${self.expand_macros(body)}$"
        if name in ("sub", "sup"):
            return f"<{name}>{body}</{name}>"
        if name in ("term", "abbr", "dfn", "strong", "emphasis"):
            return re.sub(r"\s*\([^)]*\)$", "", body) if name == "abbr" else body
        raise ConversionError(f"{self.doc.docname}: role {{{name}}} is not supported by scripts/editions.py")

    def _url(self, docname: str, anchor: str = "") -> str:
        """A page of this edition's online site (the student notebooks link to the student site)."""
        return self.book.url(docname, anchor, self.edition)

    def _link(self, kind: str, text: str, href: str) -> str:
        self.rendered.append((kind, text, href))
        return f"[{_escape_link_text(text)}]({href})"

    def _docname(self, target: str) -> str:
        target = re.sub(r"\.(md|ipynb)$", "", target)
        if target.startswith("/"):
            return target.lstrip("/")
        return posixpath.normpath(posixpath.join(posixpath.dirname(self.doc.docname), target))

    def _cite(self, name: str, target: str) -> str:
        entries, rank, authors = self.book.bib()
        keys = [k.strip() for k in target.split(",") if k.strip()]
        for k in keys:
            if k not in entries:
                raise ConversionError(f"{self.doc.docname}: unknown citation key {k!r}")
        keys.sort(key=lambda k: rank[k])
        parts, plain = [], []
        for k in keys:
            if k not in self.cited:
                self.cited.append(k)
            # the entry's own anchor on the references page (bibtex_cite_id in _config.yml)
            href = self._url(self.book.references_doc, cite_anchor(k))
            author = authors[k].replace("et al.", "*et al.*")
            year = entries[k].fields.get("year", "n.d.")
            if name == "cite:t":
                parts.append(f"{author} \\[[{year}]({href})\\]")
                plain.append(f"{author} [{year}]")
            else:
                parts.append(f"[{author}, {year}]({href})")
                plain.append(f"{author}, {year}")
        text = ", ".join(plain)
        href = self._url(self.book.references_doc, cite_anchor(keys[0]))
        if name == "cite:t":
            self.rendered.append(("cite", text.replace("*", ""), href))
            return ", ".join(parts)
        self.rendered.append(("cite", f"[{text}]".replace("*", ""), href))
        return "\\[" + ", ".join(parts) + "\\]"

    def _xref(self, name: str, label: str, explicit: str | None) -> str:
        t = self.book.targets.get(label)
        if t is None:
            raise ConversionError(f"{self.doc.docname}: unknown label {label!r} in {{{name}}}")
        num = ".".join(map(str, t.number))
        href = self._url(t.docname, t.anchor)
        if name == "eq":
            return self._link(name, f"({num})", href)
        if explicit is not None and name != "numref":
            return self._link(name, self.inline(explicit), href)
        if name == "numref":
            fmt = explicit if explicit is not None else (
                NUMFIG_FORMAT.get(t.kind) or NUMFIG_FORMAT.get(t.realtype) or f"{t.realtype} %s")
            text = fmt.replace("{number}", num).replace("%s", num).replace("{name}", t.text)
            return self._link(name, self.inline(text), href)
        if t.kind == "prf":
            return self._link(name, f"{t.realtype.title()} {num}", href)
        if t.kind == "exercise":
            return self._link(name, f"Exercise {num}", href)
        return self._link(name, self.inline(t.text), href)

    def _py(self, name: str, target: str, explicit: str | None) -> str:
        short = target.startswith("~")
        target = target.lstrip("~.")
        module = max((m for m in self.book.api_pages if target == m or target.startswith(m + ".")),
                     key=len, default=None)
        kind = name.split(":")[-1]
        text = explicit or (target.rsplit(".", 1)[-1] if short else target)
        if kind in ("func", "meth") and not explicit:
            text += "()"
        if module is None:
            if target.split(".", 1)[0] in EXTERNAL_PY_PACKAGES:
                # the book builds offline (no intersphinx): it shows these as unlinked code too,
                # so they are not among the references the site check compares
                return f"`{text}`"
            raise ConversionError(f"{self.doc.docname}: {{{name}}}`{target}` is not documented in book/api/")
        anchor = f"module-{target}" if kind == "mod" else target
        href = self._url(self.book.api_pages[module], anchor)
        self.rendered.append((name, text, href))
        return f"[`{text}`]({href})"

    # -- glue
    def _glue_value(self, key: str) -> dict:
        doc_key = key.split("::", 1)
        data = self.glue
        if len(doc_key) == 2:
            path = (self.doc.path.parent / doc_key[0]).resolve()
            data = _glue_data(json.loads(path.read_text(encoding="utf-8")))
            key = doc_key[1]
        if key not in data:
            raise ConversionError(f"{self.doc.docname}: no glued value {key!r} in the notebook's outputs")
        return data[key]

    def _glue_role(self, name: str, body: str) -> str:
        from myst_nb.core.variables import format_plain_text

        if name == "glue:text":
            key, _, fmt = body.rpartition(":") if ":" in body.split("::")[-1] else (body, "", "")
            if not key:
                key, fmt = body, ""
            text = format_plain_text(self._glue_value(key)["text/plain"], fmt)
            self.rendered.append(("glue", text, ""))
            return text
        if name in ("glue", "glue:", "glue:any"):
            data = self._glue_value(body)
            if "text/markdown" in data:
                text = data["text/markdown"]
            elif "text/latex" in data:
                text = data["text/latex"]
            else:
                text = data.get("text/plain", "")
            self.rendered.append(("glue", text, ""))
            return text
        if name == "glue:md":
            key = body.rsplit(":", 1)[0] if body.count(":") == 1 and "::" not in body else body
            return self._glue_value(key).get("text/markdown", "")
        if name == "glue:math":
            return self._glue_value(body).get("text/latex", "")
        raise ConversionError(f"{self.doc.docname}: role {{{name}}} is not supported")

    # -- directives
    def directive(self, d: Directive) -> str:
        name = d.name
        if name.startswith("prf:"):
            typ = name[4:]
            if typ == "proof":
                body = self.markdown(d.body)
                title = f" ({self.inline(d.argument)})" if d.argument else ""
                return _lead(f"*Proof{title}.*", body) + " ∎"
            if typ not in PRF_TYPES:
                raise ConversionError(f"{self.doc.docname}: unknown directive {{{name}}}")
            head = typ.title()
            if "nonumber" not in d.options:
                head += " " + ".".join(map(str, self._take(typ)))
            if d.argument:
                head += f" ({self.inline(d.argument)})"
            return _quote(_lead(f"**{head}.**", self.markdown(d.body)))
        if name == "exercise":
            head = "Exercise"
            if "nonumber" not in d.options:
                head += " " + ".".join(map(str, self._take("exercise")))
            if d.argument:
                head += f" ({self.inline(d.argument)})"
            level = self.book.levels.get(d.options.get("label", ""))
            if level is not None:
                head += f" (level {level})"
            body = self.markdown(d.body)
            self.exercise_texts[d.options.get("label", "")] = body
            return _quote(_lead(f"**{head}.**", body))
        if name == "solution":
            mark, cited = len(self.rendered), len(self.cited)
            body = self.markdown(d.body)  # numbers inside are consumed in both editions
            if self.edition == "student":
                del self.rendered[mark:]
                del self.cited[cited:]  # works cited only in a solution are not listed
                return ""
            self.solutions.append(body)
            self.solution_sources.append(d.body)
            self.solution_labels.append(d.argument.strip())
            return f"<details>\n<summary>Solution</summary>\n\n{body}\n\n</details>"
        if name in ("solution-start", "solution-end"):
            raise ConversionError(f"{self.doc.docname}: gated solutions are not supported (use {{solution}})")
        if name in ADMONITIONS or name == "admonition":
            title = self.inline(d.argument) if name == "admonition" else ADMONITIONS[name]
            if name != "admonition" and d.argument:
                body = d.argument + "\n" + d.body
            else:
                body = d.body
            return _quote(_lead(f"**{title}.**", self.markdown(body)))
        if name == "dropdown":
            return f"<details>\n<summary>{self.inline(d.argument)}</summary>\n\n{self.markdown(d.body)}\n\n</details>"
        if name == "math":
            tag = ""
            if d.options.get("label"):
                tag = f"\n\\tag{{{'.'.join(map(str, self._take('displaymath')))}}}"
            return f"$$\n{self.expand_macros(d.body)}{tag}\n$$"
        if name in ("code-block", "code", "sourcecode"):
            return f"```{d.argument}\n{d.body}\n```"
        if name in ("figure", "glue:figure"):
            return self._figure(d)
        if name == "glue:math":
            return "$$\n" + self._glue_value(d.argument).get("text/latex", "").strip().strip("$") + "\n$$"
        if name in ("glue", "glue:any"):
            data = self._glue_value(d.argument)
            return data.get("text/markdown") or "```\n" + data.get("text/plain", "") + "\n```"
        raise ConversionError(f"{self.doc.docname}: directive {{{name}}} is not supported by scripts/editions.py")

    def _figure(self, d: Directive) -> str:
        alt = d.options.get("alt", "")
        if d.name == "glue:figure":
            data = self._glue_value(d.argument)
            png = data.get("image/png")
            if png is None:
                raise ConversionError(f"{self.doc.docname}: glued figure {d.argument!r} has no PNG")
        else:
            path = (self.doc.path.parent / d.argument).resolve()
            png = base64.b64encode(path.read_bytes()).decode()
        name = hashlib.sha1(png.encode()).hexdigest()[:12] + ".png"
        self.attachments[name] = {"image/png": png}
        out = f"![{alt}](attachment:{name})"
        if d.body.strip():
            number = self._take("figure")
            label = NUMFIG_FORMAT["figure"] % ".".join(map(str, number))
            out += f"\n\n**{label}** {self.markdown(d.body)}"
        return out


def _glue_data(nb: dict) -> dict[str, dict]:
    data = {}
    for cell in nb.get("cells", []):
        for out in cell.get("outputs", []) or []:
            meta = (out.get("metadata") or {}).get("scrapbook")
            if meta:
                prefix = len(meta.get("mime_prefix", ""))
                data[meta["name"]] = {k[prefix:]: v for k, v in out.get("data", {}).items()}
    return data


def _lead(lead: str, body: str) -> str:
    """Put a bold lead before a body: on its first paragraph, or alone above maths/lists/code."""
    if not body:
        return lead
    first = body.split("\n", 1)[0]
    if re.match(r"^(\$\$|[-*+] |\d+[.)] |\||`|>|#|<|\\\[)", first) or not first.strip():
        return f"{lead}\n\n{body}"
    return f"{lead} {body}"


def _one_line_maths(text: str) -> str:
    """Display maths on one line each: JupyterLab takes maths out before Markdown, so the "> " of
    a quoted multi-line formula would end up inside the formula."""
    out, block, end = [], [], None
    for line in text.split("\n"):
        stripped = line.strip()
        if end is None:
            begin = re.match(r"^\\begin\{([a-z]+\*?)\}", stripped)
            if stripped.startswith("$$") and not (len(stripped) > 2 and stripped.endswith("$$")):
                block, end = [stripped], "$$"
            elif begin and not stripped.endswith(f"\\end{{{begin.group(1)}}}"):
                block, end = [stripped], f"\\end{{{begin.group(1)}}}"
            else:
                out.append(line)
            continue
        block.append(stripped)
        if stripped.endswith(end):
            if any(b.lstrip().startswith("%") for b in block):
                raise ConversionError("a LaTeX comment (%) inside display maths in a quoted block")
            out.append(" ".join(b for b in block if b))
            end = None
    if end is not None:
        out += block
    return "\n".join(out)


def _quote(text: str) -> str:
    text = _one_line_maths(text)
    return "\n".join("> " + line if line.strip() else ">" for line in text.split("\n"))


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + [lines[-1]] if lines else []


def _cell_id(base: str, suffix: str) -> str:
    return hashlib.sha1(f"{base}-{suffix}".encode()).hexdigest()[:8]


# ----------------------------------------------------------------------------- editions on disk
def notebook_docs(book: Book) -> list[str]:
    return [d.docname for d in book.docs if d.path.suffix == ".ipynb"]


def convert(book: Book, docname: str, edition: str) -> tuple[dict, Converter]:
    conv = Converter(book, docname, edition)
    nb = conv.notebook()
    if conv.attachments:
        # attachments belong to the markdown cell that names them
        for cell in nb["cells"]:
            if cell["cell_type"] == "markdown":
                names = [n for n in conv.attachments if f"attachment:{n}" in _source(cell)]
                if names:
                    cell["attachments"] = {n: conv.attachments[n] for n in names}
    return nb, conv


def dumps(nb: dict) -> str:
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def generate(root: pathlib.Path = ROOT, check: bool = False, out: pathlib.Path | None = None) -> list[str]:
    """Write (or with ``check`` compare) every edition notebook; return the stale or written paths."""
    book = Book(root)
    out = out or root / "editions"
    changed = []
    expected = set()
    for docname in notebook_docs(book):
        for edition in EDITIONS:
            nb, _ = convert(book, docname, edition)
            path = out / edition / f"{docname}.ipynb"
            expected.add(path)
            text = dumps(nb)
            old = path.read_text(encoding="utf-8") if path.exists() else None
            if old != text:
                changed.append(str(path.relative_to(root) if path.is_relative_to(root) else path))
                if not check:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(text, encoding="utf-8")
    for path in sorted(out.glob("*/notebooks/**/*.ipynb")):
        if path not in expected and not any(part.startswith(".") for part in path.relative_to(out).parts):
            changed.append(str(path.relative_to(root) if path.is_relative_to(root) else path))
            if not check:
                path.unlink()
    return changed


# ----------------------------------------------------------------------------- solution check
def without_maths(markdown: str) -> str:
    """Markdown without maths, code, link targets, tags and emphasis: the words a reader sees."""
    return re.sub(r"\$\$.*?\$\$|\$[^$]*\$|`[^`]*`|\[([^\]]*)\]\([^)]*\)|<[^>]+>|[*_>#\\]", " ", markdown, flags=re.S)


def solution_fingerprints(book: Book) -> dict[str, list[str]]:
    """Per notebook, phrases of every solution: runs of >= 6 plain words (no maths, no code)."""
    prints: dict[str, list[str]] = {}
    for docname in notebook_docs(book):
        _, conv = convert(book, docname, "reader")
        phrases = []
        for body in conv.solutions:
            for chunk in re.split(r"[.;:,()!?\n]", without_maths(body)):
                words = chunk.split()
                if len(words) >= 6:
                    phrases.append(" ".join(words))
        prints[docname] = phrases
    return prints


def solution_literals(book: Book, min_chars: int = 24) -> set[str]:
    """Formulas and code of the solutions (>= ``min_chars``, whitespace collapsed), as written in
    the source (the HTML shows that TeX) and as converted (the notebooks show that), except those
    that the book also shows outside its solutions (other pages, the library's docstrings)."""
    literals, public = set(), []
    for doc in book.docs:
        public.append(" ".join(_source(c) for c in book.cells(doc)))
    for docname in notebook_docs(book):
        _, conv = convert(book, docname, "reader")
        student, _ = convert(book, docname, "student")
        public.append(" ".join(_source(c) for c in student["cells"]))
        for body in conv.solutions + conv.solution_sources:
            for m in re.finditer(r"\$\$(.+?)\$\$|\$([^$]+)\$|`([^`]+)`", body, re.S):
                lit = " ".join(next(g for g in m.groups() if g is not None).split())
                if len(lit) >= min_chars and not re.fullmatch(r"[\w.]+(\(\))?", lit):  # not a bare name
                    literals.add(lit)
        src = book.doc(docname)
        text = " ".join(_source(c) for c in book.cells(src))
        for body in conv.solution_sources:
            text = text.replace(body, " ")
        public[[d.docname for d in book.docs].index(docname)] = text
    # the API pages show the library's docstrings
    public += [f.read_text(encoding="utf-8") for f in sorted((book.root / "lib").rglob("*.py"))]
    public_text = " ".join(" ".join(public).split())
    return {lit for lit in literals if lit not in public_text}


def _plain(text: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", text)).split())


def check_student(paths: list[pathlib.Path], book: Book | None = None) -> list[str]:
    """Findings: solution phrases, formulas, code or markers in any file under ``paths``."""
    book = book or Book()
    prints = solution_fingerprints(book)
    phrases = sorted({p for ps in prints.values() for p in ps})
    literals = sorted(solution_literals(book))
    files = []
    for p in paths:
        files += [f for f in sorted(p.rglob("*")) if f.is_file()] if p.is_dir() else [p]
    findings = []
    for f in files:
        if f.suffix not in (".html", ".ipynb", ".js", ".txt", ".md", ".json", ".tex"):
            continue
        raw = f.read_text(encoding="utf-8", errors="replace")
        if f.suffix == ".ipynb":
            nb = json.loads(raw)
            text = " ".join(_source(c) for c in nb.get("cells", []))
            text = " ".join(text.split())
            markers = ["<summary>Solution", "{solution}"]
        else:
            text = _plain(raw) if f.suffix == ".html" else " ".join(raw.split())
            markers = ['class="solution', "{solution}", "<summary>Solution"]
        hay = re.sub(r"[*_>#\\`]", " ", text)
        hay = " ".join(hay.split())
        for marker in markers:
            if marker in raw:
                findings.append(f"{f}: solution marker {marker!r}")
        for phrase in phrases:
            if phrase in hay:
                findings.append(f"{f}: solution text {phrase[:60]!r}")
                break
        for lit in literals:
            if lit in text:
                findings.append(f"{f}: solution formula or code {lit[:60]!r}")
                break
    return findings


# ----------------------------------------------------------------------------- student site
def _hidden(folder: str, names: list[str]) -> list[str]:
    """shutil.copytree ignore function: JupyterLab's .ipynb_checkpoints and other dot files."""
    return [n for n in names if n.startswith(".")]


def pdf_text_check(pdf: pathlib.Path, book: Book) -> list[str]:
    """Solution text in a PDF (its text by pdftotext, from poppler-utils)."""
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", str(pdf), "-"], check=True,
                          capture_output=True, text=True).stdout
    dump = pdf.with_suffix(".txt")
    dump.write_text(" ".join(text.replace("-\n", "").split()), encoding="utf-8")
    try:
        return [f.replace(str(dump), str(pdf)) for f in check_student([dump], book)]
    finally:
        dump.unlink()


def build_student(root: pathlib.Path = ROOT, strict: bool = False, pdf: bool = False) -> int:
    """The student site (and with ``pdf`` its PDF) in ``_build/student/``; the work folder goes."""
    t0 = time.perf_counter()
    stale = generate(root)
    if stale:
        print(f"editions: regenerated {len(stale)} edition notebook(s)")
    work = root / "_build" / ".student-work"
    dest = root / "_build" / "student"
    env = dict(os.environ, SEQRMT_EDITION="student")
    jb = [sys.executable, "-c", "from jupyter_book.cli.main import main; main()",
          "build", str(root), "--path-output", str(work)]
    steps = [("the student site", jb + (["-W", "-n", "--keep-going"] if strict else []), {})]
    if pdf:
        # the PDF reuses the site's doctrees, and its build puts book.pdf in the site and has the
        # download menu offer it (_ext/seqrmt_site.py, publish_pdf), as for the reader site
        steps += [("the student PDF", jb + ["--builder", "pdflatex"], {"LATEXOPTS": "-interaction=nonstopmode"})]
    try:
        for what, cmd, extra in steps:
            print(f"editions: {what}: SEQRMT_EDITION=student jupyter-book", " ".join(cmd[3:]), flush=True)
            rc = subprocess.call(cmd, cwd=root, env={**env, **extra})
            if rc:
                print(f"editions: {what} failed", file=sys.stderr)
                return rc
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(work / "_build" / "html", dest / "html", ignore=_hidden)
        shutil.copytree(root / "editions" / "student" / "notebooks", dest / "notebooks", ignore=_hidden)
        if pdf and not (dest / "html" / "book.pdf").is_file():
            print("editions: the student PDF build did not put book.pdf in the student site", file=sys.stderr)
            return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)  # about 80 MB of doctrees and LaTeX
    book = Book(root)
    findings = check_student([dest], book)
    if pdf:
        findings += pdf_text_check(dest / "html" / "book.pdf", book)
    size = sum(f.stat().st_size for f in dest.rglob("*") if f.is_file())
    print(f"editions: student edition in {dest.relative_to(root)}: {size / 1e6:.1f} MB"
          + (" (with book.pdf)" if pdf else "") + f", {time.perf_counter() - t0:.0f} s")
    if findings:
        print("editions: solution text in the student edition:\n  " + "\n  ".join(findings), file=sys.stderr)
        return 1
    print("editions: no solution text in any student file")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("notebooks", help="write editions/reader and editions/student from notebooks/")
    p.add_argument("--check", action="store_true", help="only report stale edition notebooks (exit 1)")
    p = sub.add_parser("student", help="build the student site into _build/student/ and check it")
    p.add_argument("--strict", action="store_true", help="warnings are errors (-W -n --keep-going)")
    p.add_argument("--pdf", action="store_true", help="also the student PDF (needs TeX, as the reader PDF)")
    p = sub.add_parser("check-student", help="fail on solution text in these files or folders")
    p.add_argument("paths", nargs="+", type=pathlib.Path)
    args = parser.parse_args(argv)
    if args.command == "notebooks":
        t0 = time.perf_counter()
        changed = generate(check=args.check)
        verb = "stale" if args.check else "written"
        for path in changed:
            print(f"{verb}: {path}")
        print(f"editions: {len(changed)} notebook(s) {verb} in {time.perf_counter() - t0:.1f} s")
        if args.check and changed:
            print("run `python scripts/editions.py notebooks` and commit editions/", file=sys.stderr)
            return 1
        return 0
    if args.command == "student":
        return build_student(strict=args.strict, pdf=args.pdf)
    findings = check_student(args.paths)
    for f in findings:
        print(f)
    print(f"check-student: {len(findings)} finding(s)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
