"""The built book read in a real browser (headless Chromium): every page of _toc.yml.

Runs ``scripts/check_site.py`` (see its docstring for the checks) on ``_build/html``: every
page at 1280 px, then every page again in a 390 px phone window, where the page's document
width must not exceed 390 px, tapping ☰ and ☷ must show the table of contents and the
page contents, and choosing a section in the ☷ drawer must close it; at both widths no inline
formula may be cut off by a box that hides its overflow ("clipped-math"); in one browser
session; and asserts that there is no finding. The student site is checked the same way with
``SEQRMT_SITE=_build/student/html``. Build the book first::

    jupyter-book build . -W -n --keep-going
    python -m pytest -m needs_build tests/test_browser.py

Skipped when the build or the browser (selenium, /usr/bin/chromium, /usr/bin/chromedriver)
is missing, except under ``CI=true``, where that is a failure. ``SEQRMT_SITE`` points at
another build folder; ``SEQRMT_SITE_PAGES`` (comma-separated globs, e.g. ``book/*``)
restricts the pages.
"""

from __future__ import annotations

import fnmatch
import importlib.util
import os
import pathlib
import time

import pytest

pytestmark = pytest.mark.needs_build  # run after the builds: pytest -m needs_build

ROOT = pathlib.Path(__file__).resolve().parents[1]
SITE = pathlib.Path(os.environ.get("SEQRMT_SITE", ROOT / "_build" / "html"))
IN_CI = os.environ.get("CI", "").lower() == "true"


def _load_checker():
    spec = importlib.util.spec_from_file_location("check_site", ROOT / "scripts" / "check_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _unavailable(reason: str):
    if IN_CI:
        pytest.fail(f"browser test cannot run under CI=true: {reason}", pytrace=False)
    pytest.skip(reason)


def test_browser_every_page_reads_right():
    check_site = _load_checker()
    if not (SITE / "index.html").exists():
        _unavailable(f"no built book at {SITE}: run `jupyter-book build . -W -n --keep-going` first")
    if (why := check_site.browser_missing()) is not None:
        _unavailable(f"no browser: {why}")
    pages = check_site.toc_pages()
    if globs := os.environ.get("SEQRMT_SITE_PAGES"):
        pages = [p for p in pages if any(fnmatch.fnmatch(p, g.strip()) for g in globs.split(","))]
    t0 = time.perf_counter()
    findings = check_site.check_site(SITE, pages, phone=True, log=lambda line: None)
    elapsed = time.perf_counter() - t0
    assert not findings, (
        f"{len(findings)} finding(s) on {len(pages)} pages ({elapsed:.0f} s):"
        + check_site.format_findings(findings)
    )
