"""The JupyterLite site of the built book (after ``jupyter-book build .``; skipped before).

* ``_build/html/lite/`` holds the JupyterLite app (the Notebook and JupyterLab apps, the
  Pyodide kernel extension), with the Pyodide runtime that ``lite/jupyter-lite.json`` names;
* every chapter that runs in the browser is there, byte for byte the edition notebook
  (``editions/reader/...``; ``editions/student/...`` in the student site, with no solution);
* the ``seqrmt`` wheel of this checkout is served by piplite (listed in ``pypi/all.json``,
  which the kernel's settings name) and holds every module of ``lib/seqrmt``;
* each browser chapter's page links to its notebook in the Notebook app (the line under the
  title and the launch menu); each torch chapter's page says why it does not run there.

``SEQRMT_SITE`` and ``SEQRMT_EDITION`` choose the site, as in ``tests/test_editions_site.py``.
"""

from __future__ import annotations

import html
import json
import os
import pathlib
import re
import sys
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SITE = ROOT / os.environ.get("SEQRMT_SITE", "_build/html")
EDITION = os.environ.get("SEQRMT_EDITION", "reader")
LITE = SITE / "lite"
sys.path.insert(0, str(ROOT / "scripts"))
import install_cell  # noqa: E402

pytestmark = pytest.mark.skipif(not (LITE / "jupyter-lite.json").is_file(),
                                reason=f"no JupyterLite site in {SITE} (build the book first)")
CHAPTERS = install_cell.chapters(ROOT)


def _config() -> dict:
    return json.loads((LITE / "jupyter-lite.json").read_text())["jupyter-config-data"]


def test_the_site_holds_the_jupyterlite_apps_and_the_pyodide_kernel():
    for app in ("notebooks", "lab", "tree"):
        assert (LITE / app / "index.html").is_file(), f"lite/{app}/index.html is missing"
    config = _config()
    names = [e["name"] for e in config.get("federated_extensions", [])]
    assert "@jupyterlite/pyodide-kernel-extension" in names, names
    kernel = config["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    source = json.loads((ROOT / "lite" / "jupyter-lite.json").read_text())["jupyter-config-data"]
    want = source["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]["pyodideUrl"]
    assert kernel["pyodideUrl"] == want
    # no source maps (about 40 MB)
    assert not list(LITE.rglob("*.js.map"))


def test_every_browser_chapter_is_the_edition_notebook():
    files = LITE / "files"
    served = {p.relative_to(files).as_posix() for p in files.rglob("*.ipynb")}
    want = {c.docname.removeprefix("notebooks/") + ".ipynb" for c in CHAPTERS if c.browser}
    assert served == want, (sorted(served - want), sorted(want - served))
    for chapter in CHAPTERS:
        if chapter.browser:
            name = chapter.docname.removeprefix("notebooks/") + ".ipynb"
            edition = ROOT / "editions" / EDITION / f"{chapter.docname}.ipynb"
            assert (files / name).read_bytes() == edition.read_bytes(), f"{name} is not {edition}"


def test_the_seqrmt_wheel_is_served():
    kernel = _config()["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    assert any(u.startswith("./pypi/all.json") for u in kernel.get("pipliteUrls", [])), kernel
    index = json.loads((LITE / "pypi" / "all.json").read_text())
    sys.path.insert(0, str(ROOT / "lib"))
    import seqrmt
    releases = index["seqrmt"]["releases"]
    assert list(releases) == [seqrmt.__version__], list(releases)
    (release,) = releases[seqrmt.__version__]
    wheel = LITE / "pypi" / release["filename"]
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    modules = {p.relative_to(ROOT / "lib").as_posix() for p in (ROOT / "lib" / "seqrmt").rglob("*.py")}
    assert modules <= names, sorted(modules - names)
    # no module that the checkout does not have (a stale build/lib)
    assert {n for n in names if n.endswith(".py")} == modules


def test_chapter_pages_link_to_the_browser_or_say_why_not():
    for chapter in CHAPTERS:
        page = (SITE / f"{chapter.docname}.html").read_text(encoding="utf-8")
        if chapter.browser:
            target = chapter.docname.removeprefix("notebooks/") + ".ipynb"
            links = re.findall(r'href="([^"]*lite/notebooks/index\.html\?path=[^"]*)"', page)
            want = f"lite/notebooks/index.html?path={target}"
            # the line under the title and the launch menu's entry
            assert len(links) == 2 and all(html.unescape(u).endswith(want) for u in links), (chapter.docname, links)
            assert "Run in your browser (no install)" in page and "CDN" in page
            base = (SITE / chapter.docname).parent
            assert (base / html.unescape(links[0]).split("?")[0]).resolve() == (LITE / "notebooks" / "index.html").resolve()
        else:
            assert "lite/notebooks/index.html" not in page, chapter.docname
            assert "does not run in your browser" in page, chapter.docname
            assert html.escape(chapter.why_not_browser, quote=False) in page.replace("&#x27;", "'"), chapter.docname
