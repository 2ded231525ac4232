"""The reader notebooks say what the built book says: numbers, headings, references, citations.

``scripts/editions.py`` re-implements the book's numbering (Sphinx numfig with multitoc
numbering) and its reference texts. This test reads every notebook page of the HTML build
(``_build/html``, or ``SEQRMT_SITE``) and compares, page by page and in order:

* the numbered titles: "Theorem 1.2", "Exercise 1.4", "Fig. 1.3" (captions), ...;
* the section numbers of the headings ("1.2.3.");
* the text of every cross-reference ({prf:ref}, {ref}, {numref}, {doc}, {py:func}, links to labels);
* the text of every citation ("Bai and Silverstein [2010]", "[Anderson et al., 2010, ...]");
* every glued value ({glue:text});
* the exercise levels shown on the boxes;
* the launch buttons (Binder, Colab) and the ".ipynb" download serve the edition notebook
  (``SEQRMT_EDITION=student`` with ``SEQRMT_SITE=_build/student/html`` for the student site).

Run after ``jupyter-book build .`` (``pytest -m needs_build tests/test_editions_site.py``); skipped
when there is no build, except under ``CI=true``.
"""

from __future__ import annotations

import collections
import html
import importlib.util
import os
import pathlib
import re
import sys

import pytest

pytestmark = pytest.mark.needs_build  # run after the builds: pytest -m needs_build

ROOT = pathlib.Path(__file__).resolve().parents[1]
SITE = pathlib.Path(os.environ.get("SEQRMT_SITE", ROOT / "_build" / "html"))
IN_CI = os.environ.get("CI", "").lower() == "true"
EDITION = os.environ.get("SEQRMT_EDITION", "reader")  # "student" for _build/student/html


def _editions():
    spec = importlib.util.spec_from_file_location("editions", ROOT / "scripts" / "editions.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["editions"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _plain(fragment: str) -> str:
    text = html.unescape(re.sub(r"<[^>]+>", "", fragment))
    text = text.replace("\\(", "$").replace("\\)", "$")
    # Sphinx's smart quotes (the notebooks keep straight quotes)
    text = text.translate(str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'}))
    return " ".join(text.split())


def _md_plain(text: str) -> str:
    text = re.sub(r"\[((?:[^\[\]]|\\[\[\]])*)\]\([^()\s]*\)", r"\1", text)
    text = text.replace("\\[", "[").replace("\\]", "]").replace("*", "").replace("`", "")
    return " ".join(text.split())


def site_page(page: str) -> dict:
    text = (SITE / f"{page}.html").read_text(encoding="utf-8")
    start, end = text.find('<article class="bd-article"'), text.find("</article>")
    article = text[start:end]
    numbers = [" ".join(n.split()) for n in re.findall(r'<span class="caption-number">([^<]*)</span>', article)]
    headings = re.findall(r'<h[1-6]><span class="section-number">([\d.]+)\s*</span>', article)
    refs = []
    for m in re.finditer(r'<a class="reference internal" href="([^"]*)"[^>]*>(.*?)</a>', article, re.S):
        if 'class="bibtex-citation' in article[max(0, m.start() - 4000): m.start()].rsplit("</span>", 1)[-1]:
            continue  # the year link inside a citation
        refs.append(_plain(m.group(2)))
    cites = []
    for m in re.finditer(r'<span class="bibtex-citation"[^>]*>(.*?)</span>(?=[^<]*(?:<|$))', article, re.S):
        cites.append(_plain(m.group(1)))
    levels = re.findall(r'<span class="exercise-level">\s*\((level \d)\)', article)
    glue = [_plain(g) for g in re.findall(r'<span class="pasted-text">(.*?)</span>', article, re.S)]
    return {"numbers": [n for n in numbers if re.search(r"\d", n)], "headings": headings,
            "refs": refs, "cites": cites, "levels": levels, "glue": glue}


def notebook_items(nb: dict, conv) -> dict:
    md = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    numbers = re.findall(r"\*\*((?:[A-Z][a-z]+|Fig\.) [\d.]+\d)", md)
    headings = [h + "." for h in re.findall(r"^#{1,6} ([\d.]+\d)\. ", md, re.M)]
    refs = [_md_plain(text) for kind, text, _ in conv.rendered if kind not in ("cite", "glue")]
    cites = [_md_plain(text) for kind, text, _ in conv.rendered if kind == "cite"]
    levels = re.findall(r"\*\*Exercise [\d.]+ \((level \d)\)", md)
    glue = [_md_plain(text) for kind, text, _ in conv.rendered if kind == "glue"]
    return {"numbers": numbers, "headings": headings, "refs": refs, "cites": cites, "levels": levels,
            "glue": glue}


def test_reader_notebooks_match_the_built_book():
    if not (SITE / "index.html").exists():
        if IN_CI:
            pytest.fail(f"no built book at {SITE}", pytrace=False)
        pytest.skip(f"no built book at {SITE}: run `jupyter-book build .` first")
    editions = _editions()
    book = editions.Book()
    problems = []
    checked = collections.Counter()
    for page in editions.notebook_docs(book):
        nb, conv = editions.convert(book, page, EDITION)
        ours, theirs = notebook_items(nb, conv), site_page(page)
        for key in ("numbers", "headings", "levels"):
            if key == "levels" and not theirs["levels"]:
                continue  # a build without the editions extension shows no levels
            if ours[key] != theirs[key]:
                problems.append(f"{page}: {key} differ:\n  notebook {ours[key]}\n  book     {theirs[key]}")
            checked[key] += len(theirs[key])
        for key in ("refs", "cites", "glue"):
            a, b = collections.Counter(ours[key]), collections.Counter(theirs[key])
            if a != b:
                problems.append(f"{page}: {key} differ: only in notebook {sorted((a - b).elements())}, "
                                f"only in book {sorted((b - a).elements())}")
            checked[key] += sum(b.values())
    print(dict(checked))
    assert not problems, "\n".join(problems)
    assert checked["numbers"] > 100 and checked["refs"] > 100 and checked["cites"] > 100, checked


def test_launch_and_download_serve_the_edition_notebooks():
    if not (SITE / "index.html").exists():
        if IN_CI:
            pytest.fail(f"no built book at {SITE}", pytrace=False)
        pytest.skip(f"no built book at {SITE}: run `jupyter-book build .` first")
    editions = _editions()
    problems = []
    pages = editions.notebook_docs(editions.Book())
    for page in pages:
        text = (SITE / f"{page}.html").read_text(encoding="utf-8")
        launch = re.findall(r'href="(https://(?:mybinder\.org|colab\.research\.google\.com)/[^"]*)"', text)
        want = f"editions/{EDITION}/{page}.ipynb"
        if len(launch) != 2 or not all(url.endswith(want) for url in launch):
            problems.append(f"{page}: launch buttons {launch}, expected both to end in {want}")
        download = SITE / "_sources" / f"{page}.ipynb"
        if download.read_bytes() != (ROOT / want).read_bytes():
            problems.append(f"{page}: {download} is not {want}")
    assert not problems, "\n".join(problems)


# ----------------------------------------------------------------------------- links and answers
MD_HREF = re.compile(r"\]\((https?://[^()\s]+)\)|href=\"(https?://[^\"]+)\"")
_IDS: dict[pathlib.Path, set[str]] = {}


def _ids(page: pathlib.Path) -> set[str]:
    if page not in _IDS:
        _IDS[page] = set(re.findall(r'\b(?:id|name)="([^"]+)"', page.read_text(encoding="utf-8", errors="replace")))
    return _IDS[page]


def _require_site():
    if not (SITE / "index.html").exists():
        if IN_CI:
            pytest.fail(f"no built book at {SITE}", pytrace=False)
        pytest.skip(f"no built book at {SITE}: run `jupyter-book build .` first")


def test_notebook_links_resolve_on_their_site():
    """Every link of the edition's notebooks into the online book names a page and an anchor that
    the edition's built site has; the student notebooks link only to the student site; every
    citation goes to its entry on the references page, and the notebook lists the works it cites."""
    _require_site()
    editions = _editions()
    book = editions.Book()
    own = book.baseurl + editions.SITE_PATHS[EDITION]
    other = [book.baseurl + p for e, p in editions.SITE_PATHS.items() if e != EDITION and p]
    problems, checked = [], 0
    for page in editions.notebook_docs(book):
        nb, conv = editions.convert(book, page, EDITION)
        md = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        for m in MD_HREF.finditer(md):
            url = m.group(1) or m.group(2)
            if not url.startswith(book.baseurl):
                continue  # another site: the weekly link check (lychee)
            if not url.startswith(own) or any(url.startswith(o) for o in other if len(o) > len(own)):
                problems.append(f"{page}: {url} is not on the {EDITION} site {own}")
                continue
            path, _, anchor = url[len(own):].partition("#")
            target = SITE / path
            checked += 1
            if not target.is_file():
                problems.append(f"{page}: {url}: no {path} in {SITE}")
            elif anchor and anchor not in _ids(target):
                problems.append(f"{page}: {url}: no anchor #{anchor} in {path}")
        cites = [href for kind, _, href in conv.rendered if kind == "cite"]
        problems += [f"{page}: citation without the entry's anchor: {h}" for h in cites if "#cite-" not in h]
        bib = [c for c in nb["cells"] if c.get("metadata", {}).get("editions") == "bibliography"]
        listed = set(re.findall(r"#(cite-[\w-]+)\)", "".join(bib[0]["source"]))) if bib else set()
        wanted = {editions.cite_anchor(k) for k in conv.cited}
        if listed != wanted or (conv.cited and len(bib) != 1):
            problems.append(f"{page}: the notebook's list of works cited {sorted(listed)} is not what it cites "
                            f"{sorted(wanted)}")
    print(f"{checked} links into the {EDITION} site checked")
    assert not problems, f"{len(problems)} problem(s):\n" + "\n".join(problems[:30])
    assert checked > 500, checked


NUMBER = re.compile(r"(?<![\w.])-?\d+\.\d+(?![\d.])")
FRACTION = re.compile(r"(?<![\w.^_{])(-?)\s*\\frac\{(\d+)\}\{(\d+)\}|(?<![\w.^_{/])(-?\d+)/(\d+)(?![\w./])")


def _significant(text: str) -> int:
    return len(text.lstrip("-").replace(".", "").lstrip("0"))


def _generic(value: float, tol: float) -> bool:
    """A number that many computations print: p/q with q <= 12, or the square root of an integer
    up to 12 (2/3, -1/3, 0.3125 = 5/16 is not)."""
    candidates = [p / q for q in range(1, 13) for p in range(0, 12 * q + 1)]
    candidates += [n ** 0.5 for n in range(2, 13)]
    return any(abs(abs(value) - v) <= tol + 1e-12 for v in candidates)


def answers_of(conv) -> dict[str, list[tuple[str, float, float]]]:
    """exercise label -> (text, value, half a unit of the last digit) of the numbers its
    solution states: decimals with three or more significant digits, and fractions that are not
    round decimals."""
    out: dict[str, list] = {}
    for label, body in zip(conv.solution_labels, conv.solutions):
        found = out.setdefault(label, [])
        for m in NUMBER.finditer(body):
            if _significant(m.group(0)) >= 3:
                found.append((m.group(0), float(m.group(0)), 0.5 * 10.0 ** -len(m.group(0).split(".")[1])))
        for m in FRACTION.finditer(body):
            sign, a, b = (m.group(1), m.group(2), m.group(3)) if m.group(2) else ("", m.group(4), m.group(5))
            value = (-1 if sign else 1) * int(a) / int(b)
            if int(b) > 1 and round(value, 2) != value:  # 1/3, 2/7: a repeating decimal
                found.append((m.group(0).strip(), value, 0.0))
    return out


def api_examples(page: pathlib.Path) -> list[tuple[str, list[tuple[str, float, float]]]]:
    """(object, numbers) of every docstring example of an API page: the numbers with three or
    more significant digits that its output lines print, each with half a unit of its last digit."""
    text = page.read_text(encoding="utf-8")
    out = []
    block = r'<div class="[^"]*highlight-(?:pycon|python|default)[^"]*"><div class="highlight"><pre>(.*?)</pre>'
    for m in re.finditer(block, text, re.S):
        owner = re.findall(r'<dt class="sig[^"]*" id="([^"]+)"', text[: m.start()])
        numbers = []
        for line in html.unescape(re.sub(r"<[^>]+>", "", m.group(1))).splitlines():
            if line.startswith((">>>", "...")):
                continue
            numbers += [(n.group(0), float(n.group(0)), 0.5 * 10.0 ** -len(n.group(0).split(".")[1]))
                        for n in NUMBER.finditer(line) if _significant(n.group(0)) >= 3]
        if numbers:
            out.append((owner[-1] if owner else page.stem, numbers))
    return out


def answer_leaks(answers: dict, examples: list, exercises: dict | None = None) -> list[str]:
    """Docstring examples that print an exercise's answer: two of its numbers in one example (not
    both p/q or sqrt(p/q)), or one that is distinctive (four significant digits, not p/q or
    sqrt(p/q)), or one printed by an object named after the exercise (a word of five letters or
    more of its label). An exercise whose text tells the student to use that very function
    (``exercises``: label -> text: "verify numerically with rmt.ridge_tau") is not answered by
    its example, unless the object is named after the exercise."""
    leaks = set()
    for label, numbers in answers.items():
        words = {w for w in label.split("-") if len(w) >= 5}
        for owner, printed in examples:
            hits = [(a, p) for a in numbers for p in printed if abs(a[1] - p[1]) <= a[2] + p[2] + 1e-12]
            if not hits:
                continue
            named = words & set(re.split(r"[._]", owner.lower()))
            if not named and owner.rsplit(".", 1)[-1] in (exercises or {}).get(label, ""):
                continue  # the exercise asks the student to run this function: its output is the tool
            distinct = {a[0] for a, p in hits if not _generic(p[1], p[2])}
            telling = [(a, p) for a, p in hits if _significant(a[0]) >= 4 and _significant(p[0]) >= 4
                       and not _generic(p[1], p[2])]
            if len(distinct) >= 2 or telling or named:
                leaks.add(f"{owner} prints {', '.join(sorted({p[0] for _, p in hits}))}: "
                          f"the answer ({', '.join(sorted({a[0] for a, _ in hits}))}) of {label}")
    return sorted(leaks)


def test_api_examples_do_not_answer_exercises():
    """The student site keeps the library reference: no docstring example there may print the
    numbers that a solution gives as an exercise's answer (Exercise 1.12's 0.791 and 0.635,
    4.5's -1/3 were)."""
    _require_site()
    if EDITION != "student":
        pytest.skip("the reader site shows the solutions anyway")
    editions = _editions()
    book = editions.Book()
    answers: dict = {}
    exercises: dict = {}
    for page in editions.notebook_docs(book):
        _, conv = editions.convert(book, page, "reader")
        answers.update(answers_of(conv))
        exercises.update(conv.exercise_texts)
    examples = [x for page in sorted((SITE / "book" / "api").glob("*.html")) for x in api_examples(page)]
    assert answers and examples, (len(answers), len(examples))
    # the test can fail: Exercise 1.12's answer, printed as an example would print it, is caught
    assert answer_leaks({"ex-gm-constant": [("0.791", 0.791, 5e-4), ("0.635", 0.635, 5e-4)]},
                        [("seqrmt.lgm.f", [("0.791", 0.791, 5e-4), ("0.635", 0.635, 5e-4)])])
    leaks = answer_leaks(answers, examples, exercises)
    assert not leaks, f"{len(leaks)} docstring example(s) answer an exercise:\n" + "\n".join(leaks)


def test_student_pdf_has_exercises_and_no_solutions():
    """The student site offers its own PDF (``editions.py student --pdf``): every exercise, no
    solution. Skipped on the reader site and where the student PDF was not built."""
    _require_site()
    if EDITION != "student":
        pytest.skip("the reader PDF has the solutions")
    pdf = SITE / "book.pdf"
    if not pdf.is_file():
        if IN_CI:
            pytest.fail(f"no student PDF at {pdf}: python scripts/editions.py student --pdf", pytrace=False)
        pytest.skip(f"no student PDF at {pdf}: python scripts/editions.py student --pdf")
    import shutil
    import subprocess

    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext not found (apt-get install poppler-utils)")
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", str(pdf), "-"], check=True,
                          capture_output=True, text=True).stdout
    editions = _editions()
    book = editions.Book()
    exercises = [t for t in book.targets.values() if t.kind == "exercise"]
    shown = set(re.findall(r"^Exercise (\d+\.\d+)", text, re.M))
    missing = [".".join(map(str, t.number)) for t in exercises if ".".join(map(str, t.number)) not in shown]
    assert not missing, f"exercises missing from the student PDF: {missing[:10]}"
    assert not re.search(r"^Solution to Exercise", text, re.M), "a solution in the student PDF"
    assert "student edition" in text[:3000], "the title page does not say it is the student edition"
    assert not editions.pdf_text_check(pdf, book)
