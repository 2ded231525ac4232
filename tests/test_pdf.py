"""The whole book as one PDF: built with zero LaTeX errors and reading right as text.

Build it first (TeX: see .ci/run for the Debian packages)::

    jupyter-book build . --builder pdflatex     # -> _build/latex/book.pdf
    python -m pytest -m needs_build tests/test_pdf.py

The checks read the LaTeX log next to the PDF and the PDF's text (``pdftotext`` from
poppler-utils): no LaTeX error (``! ...`` lines) and no undefined macro; no raw MyST markup
(``{prf:``, ``:label:``, ``{cite`` ...), no TeX macro of the book's table left as text, no
"??" of an unresolved reference; the book's numbering (Theorem 1.1, Exercise 1.1,
Fig. 1.1); every image of the LaTeX source in the PDF; PDF bookmarks for every section;
and a page count near the recorded one (``tests/pdf_reference.json``: update it, with the
reason in the commit message, when the book grows or shrinks on purpose).

Skipped when the PDF or pdftotext is missing, except under ``CI=true``, where that is a
failure. ``SEQRMT_PDF`` points at another PDF (its ``.log`` and ``.tex`` beside it).
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess

import pytest
import yaml

pytestmark = pytest.mark.needs_build  # run after the builds: pytest -m needs_build

ROOT = pathlib.Path(__file__).resolve().parents[1]
PDF = pathlib.Path(os.environ.get("SEQRMT_PDF", ROOT / "_build" / "latex" / "book.pdf"))
REFERENCE = ROOT / "tests" / "pdf_reference.json"
IN_CI = os.environ.get("CI", "").lower() == "true"

# raw MyST that a reader must never see (roles, directives, options, label lines)
RAW_MARKUP = re.compile(
    r"\{prf:|\{cite[:}]|\{glue[:}]|\{(?:numref|ref|doc|eq|math|term|download)\}"
    r"|:label:|:class:|```\{|:::\{|\{figure\}|\{admonition\}"
)


def _unavailable(reason: str):
    if IN_CI:
        pytest.fail(f"PDF test cannot run under CI=true: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def pdf() -> pathlib.Path:
    if not PDF.is_file():
        _unavailable(f"no PDF at {PDF}: run `jupyter-book build . --builder pdflatex` first")
    for tool in ("pdftotext", "pdfinfo", "pdfimages"):
        if shutil.which(tool) is None:
            _unavailable(f"{tool} not found (apt-get install poppler-utils)")
    return PDF


@pytest.fixture(scope="module")
def pages(pdf) -> list[str]:
    """The PDF's text, page by page (pdftotext separates pages by form feeds)."""
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", str(pdf), "-"], check=True,
                          capture_output=True, text=True).stdout
    return text.split("\f")[:-1] if text.endswith("\f") else text.split("\f")


def _page_count(pdf: pathlib.Path) -> int:
    info = subprocess.run(["pdfinfo", str(pdf)], check=True, capture_output=True, text=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))


def test_latex_log_has_no_error(pdf):
    log = pdf.with_suffix(".log")
    assert log.is_file(), f"no LaTeX log {log} next to the PDF"
    text = log.read_text(errors="replace")
    errors = [line for line in text.splitlines() if line.startswith("! ")]
    assert not errors, f"{len(errors)} LaTeX error(s) in {log.name}, first: {errors[:5]}"
    for warning in ("There were undefined references", "Reference `", "Citation `"):
        assert warning not in text, f"LaTeX reports an undefined reference ({warning!r}) in {log.name}"
    missing = sorted(set(re.findall(r"Missing character: There is no (\S+)", text)))
    assert not missing, f"characters missing from the fonts: {missing}"


def test_no_raw_markup_or_unresolved_references(pages):
    found = []
    for number, page in enumerate(pages, start=1):
        for m in RAW_MARKUP.finditer(page):
            found.append(f"p. {number}: raw markup {m.group(0)!r} in {page[max(0, m.start() - 40):m.end() + 40]!r}")
        for m in re.finditer(r"\?\?", page):
            found.append(f"p. {number}: '??' in {page[max(0, m.start() - 60):m.end() + 20]!r}")
    assert not found, f"{len(found)} finding(s):\n" + "\n".join(found[:20])


def test_no_book_macro_left_as_text(pages):
    """Every macro of book/macros.yml is typeset; none shows as ``\\Tr`` in the text."""
    macros = yaml.safe_load((ROOT / "book" / "macros.yml").read_text())
    pattern = re.compile(r"\\(?:" + "|".join(map(re.escape, macros)) + r")(?![A-Za-z])")
    found = [f"p. {n}: {m.group(0)}" for n, page in enumerate(pages, 1) for m in pattern.finditer(page)]
    assert not found, f"macros shown as text: {found[:20]}"


def test_numbering_like_the_website(pages):
    text = "\n".join(pages)
    for label in ("Theorem 1.1", "Definition 1.1", "Exercise 1.1", "Fig. 1.1", "Theorem 5.1", "Exercise 5.1"):
        assert label in text, f"{label!r} is not in the PDF: the numbering differs from the website's"
    # numbered boxes keep their number (sphinx-proof lost it when it could not place a box)
    unnumbered = re.findall(r"^(?:Theorem|Lemma|Proposition|Definition|Corollary|Remark)\s{2,}\(", text, re.M)
    assert not unnumbered, f"{len(unnumbered)} theorem-like boxes without a number"


def test_every_image_and_bookmark(pdf):
    tex = pdf.with_suffix(".tex").read_text(errors="replace")
    included = len(re.findall(r"\\sphinxincludegraphics", tex))
    listed = subprocess.run(["pdfimages", "-list", str(pdf)], check=True, capture_output=True, text=True).stdout
    images = sum(1 for line in listed.splitlines()[2:] if line.split()[2:3] == ["image"])
    assert included > 0 and images >= included, f"{images} images in the PDF, {included} in the LaTeX source"
    out = pdf.with_suffix(".out")
    bookmarks = out.read_text(errors="replace").count("\\BOOKMARK") if out.is_file() else 0
    sections = len(re.findall(r"^\\(?:chapter|section)\{", tex, re.M))
    assert bookmarks >= sections, f"{bookmarks} PDF bookmarks for {sections} chapters and sections"


def test_page_count_near_the_recorded_one(pdf):
    reference = json.loads(REFERENCE.read_text())
    pages = _page_count(pdf)
    low = reference["pages"] * (1 - reference["tolerance"])
    high = reference["pages"] * (1 + reference["tolerance"])
    assert low <= pages <= high, (
        f"the PDF has {pages} pages, the recorded count is {reference['pages']} "
        f"(±{reference['tolerance']:.0%}): a lost part or a layout break? If the change is "
        f"intended, update {REFERENCE.relative_to(ROOT)}"
    )


def test_appendices_are_lettered(pages):
    """The part captioned "Appendices" in _toc.yml is Appendix A, B, ... in the PDF, not Chapters
    6, 7, ... (``_ext/seqrmt_site.py``, ``AppendicesForLatex``)."""
    text = "\n".join(pages)
    assert re.search(r"^Appendix A\. ", text, re.M), "no 'Appendix A.' in the PDF"
    chapters = set(re.findall(r"^Chapter (\d+)$", text, re.M))
    parts = len(yaml.safe_load((ROOT / "_toc.yml").read_text())["parts"][0]["chapters"])
    assert chapters <= {str(n) for n in range(1, parts + 1)}, f"chapters beyond the book's {parts}: {sorted(chapters)}"


def test_tables_are_not_squeezed(pdf):
    """Narrow table columns get at least 6em, ragged right: "ad-vanced under-graduate" was split."""
    tex = pdf.with_suffix(".tex").read_text(errors="replace")
    assert "\\setlength{\\tymin}{6em}" in tex and "\\newcolumntype{T}{L}" in tex

