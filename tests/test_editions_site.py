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
