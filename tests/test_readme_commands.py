"""The README's commands work in any order and in ordinary use (issue 26, items 4 and 8).

* JupyterLab leaves ``.ipynb_checkpoints/<name>-checkpoint.ipynb`` copies of every notebook it
  opens: nbval does not collect them (pytest skips dot folders), and the edition tests count
  notebooks, not copies (``tests/test_editions.py``).
* The HTML build and the PDF build, in either order, end with a site that offers the PDF, and no
  page ever requests a ``book.pdf`` that is not there (``_ext/seqrmt_site.py``, ``publish_pdf``;
  ``_static/seqrmt-phone.js``), checked with Sphinx's own LaTeX Makefile and, where Node.js is
  installed, by running the two scripts on a stub page.
* ``pytest`` skips the post-build tests unless ``-m needs_build`` selects them, and starts xdist
  workers only for folders or several notebooks (``conftest.py``).
"""

from __future__ import annotations

import fnmatch
import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys
import types

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ----------------------------------------------------------------------------- checkpoints
def test_nbval_does_not_collect_jupyterlab_checkpoints(pytestconfig):
    assert any(fnmatch.fnmatch(".ipynb_checkpoints", pattern) for pattern in pytestconfig.getini("norecursedirs"))


# ----------------------------------------------------------------------------- the PDF on the site
@pytest.fixture()
def site(tmp_path):
    """``_build/`` of a book: the extension, and the two builds' steps as functions."""
    pytest.importorskip("sphinx")
    ext = _module(ROOT / "_ext" / "seqrmt_site.py", "seqrmt_site_under_test")
    build = tmp_path / "_build"

    def html_build():
        (build / "html" / "_static").mkdir(parents=True, exist_ok=True)
        (build / "html" / "index.html").write_text("<html></html>")
        ext.pdf_on_site(types.SimpleNamespace(outdir=str(build / "html"), builder=types.SimpleNamespace(
            format="html", name="html")), None)

    def pdf_build():
        """Sphinx's LaTeX build (its real Makefile), then jupyter-book's `make all-pdf`, with a
        stand-in for latexmk that turns book.tex into book.pdf."""
        from sphinx.util.template import SphinxRenderer

        latex = build / "latex"
        latex.mkdir(parents=True, exist_ok=True)
        template = pathlib.Path(sys.modules["sphinx"].__file__).parent / "texinputs" / "Makefile.jinja"
        (latex / "Makefile").write_text(SphinxRenderer().render_string(template.read_text(), {
            "latex_engine": "xelatex", "xindy_use": False, "xindy_lang_option": "", "xindy_cyrillic": False}))
        (latex / "book.tex").write_text("\\documentclass{article}")
        ext.pdf_on_site(types.SimpleNamespace(outdir=str(latex), builder=types.SimpleNamespace(
            format="latex", name="latex")), None)
        fake = latex / "fake-latexmk"
        fake.write_text('#!/bin/sh\nfor a; do f=$a; done\ncp "$f" "${f%.tex}.pdf"\n')
        fake.chmod(0o755)
        subprocess.run(["make", "all-pdf", f"PDFLATEX={fake}"], cwd=latex, check=True, capture_output=True)

    def offered():
        flag = (build / "html" / "_static" / "seqrmt-pdf.js").read_text()
        held = (build / "html" / "book.pdf").is_file()
        assert ("window.seqrmtBookPdf = true;" in flag) == held  # the page says what the site holds
        return held

    if shutil.which("make") is None:
        pytest.skip("make is missing (the PDF build needs it)")
    return types.SimpleNamespace(html=html_build, pdf=pdf_build, offered=offered)


def test_html_then_pdf_offers_the_pdf_without_a_second_html_build(site):
    site.html()
    assert not site.offered()  # no PDF yet: the pages say so, and request nothing
    site.pdf()
    assert site.offered()  # the PDF build published it


def test_pdf_then_html_offers_the_pdf(site):
    site.pdf()  # no site yet: nothing to publish to
    site.html()
    assert site.offered()


STUB_PAGE = r"""
const fs = require("fs"), vm = require("vm");
const [phone, flag, order] = process.argv.slice(2);
const requests = [];
function element(tag) {
  const el = {tag, children: [], dataset: {}, className: "", parentNode: null,
    appendChild(c) { this.children.push(c); c.parentNode = this; return c; },
    insertBefore(c) { this.children.push(c); return c; },
    addEventListener() {}, closest() { return null; }, getAttribute() { return null; },
    querySelector(sel) { return sel === ".seqrmt-book-pdf" ? find(this) : null; },
    querySelectorAll() { return []; }};
  return el;
}
function find(el) {
  for (const c of el.children) {
    if ((c.className || "").includes("seqrmt-book-pdf")) return c;
    const f = find(c); if (f) return f;
  }
  return null;
}
const menu = element("ul");
const listeners = [];
const document = {readyState: "loading", documentElement: {dataset: {content_root: "../"}},
  createElement: element, addEventListener: (e, f) => listeners.push(f),
  querySelector: () => null, getElementById: () => null,
  querySelectorAll: (sel) => sel.includes("dropdown-menu") ? [menu] : []};
const window = {};
const context = vm.createContext({window, document, console,
  fetch: (url) => { requests.push(url); return new Promise(() => {}); },
  XMLHttpRequest: function () { requests.push("xhr"); }});
window.fetch = context.fetch;
const pdfScript = fs.readFileSync(flag, "utf8"), phoneScript = fs.readFileSync(phone, "utf8");
if (order === "flag-first") { vm.runInContext(pdfScript, context); vm.runInContext(phoneScript, context); }
else { vm.runInContext(phoneScript, context); }
document.readyState = "interactive";
listeners.forEach((f) => f());
if (order !== "flag-first") vm.runInContext(pdfScript, context);  // a deferred script, after the page
const link = find(menu);
console.log(JSON.stringify({offered: !!link, href: link ? link.href : null, requests}));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is missing")
@pytest.mark.parametrize("held", [False, True])
@pytest.mark.parametrize("order", ["flag-first", "flag-last"])
def test_pages_request_no_missing_pdf_and_offer_a_present_one(site, tmp_path, held, order):
    site.html()
    if held:
        site.pdf()
    script = tmp_path / "page.js"
    script.write_text(STUB_PAGE)
    out = subprocess.run(["node", str(script), str(ROOT / "_static" / "seqrmt-phone.js"),
                          str(tmp_path / "_build" / "html" / "_static" / "seqrmt-pdf.js"), order],
                         capture_output=True, text=True, check=True, timeout=60)
    page = json.loads(out.stdout)
    assert page["requests"] == []  # nothing fetched: a missing book.pdf would be a 404 in the console
    assert page["offered"] == held and page["href"] in (None, "../book.pdf")


# ----------------------------------------------------------------------------- pytest itself
def _pytest(*args):
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_post_build_tests_are_skipped_unless_selected():
    test = "tests/test_release.py::test_built_site_footer_shows_version_and_licences"
    plain = _pytest(test)
    assert plain.returncode == 0 and "1 skipped" in plain.stdout
    assert "post-build test: after `jupyter-book build .`" in plain.stdout
    run = _pytest("-m", "needs_build", test)  # selected: it runs (and skips itself without a site)
    assert run.returncode == 0 and "post-build test" not in run.stdout
    assert "1 passed" in run.stdout or "no built site" in run.stdout


def test_workers_only_for_folders_or_several_notebooks(monkeypatch):
    hook = _module(ROOT / "conftest.py", "root_conftest").pytest_xdist_auto_num_workers
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    nb = sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("notebooks/*/*.ipynb"))[:2]

    def workers(*args):
        return hook(types.SimpleNamespace(args=list(args), invocation_params=types.SimpleNamespace(dir=ROOT)))

    assert workers("tests/test_rmt.py") == 0 and workers("tests/test_rmt.py::test_x", "tests/test_lgm.py") == 0
    assert workers(nb[0]) == 0 and workers(*nb) == 2
    assert workers("tests") == 2 and workers("tests", "notebooks") == 2
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert workers("notebooks") == 0
