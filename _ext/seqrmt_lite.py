"""'Run in your browser (no install)': a JupyterLite site built with the book (a local Sphinx extension).

The HTML build writes a JupyterLite site to ``<html>/lite/`` (``jupyter lite build``, from the
pinned ``jupyterlite-core`` and ``jupyterlite-pyodide-kernel``): the JupyterLab and Notebook
apps, the edition notebooks of every chapter that Pyodide can run (``editions/<edition>/``: the
reader notebooks, or the student ones in the student edition) and the ``seqrmt`` wheel, built
from this checkout and served by piplite (``lite/pypi/``), which the notebooks' install cell
installs (``scripts/install_cell.py``). Its configuration is in ``lite/`` at the repository root.

Each chapter page gets a line under its title: "Run in your browser (no install)", which opens
that chapter in the Notebook app of the site, or, for the chapters that need PyTorch (which has
no Pyodide build), why they run on Binder or Colab instead. The launch menu (the rocket) gets a
"JupyterLite" entry next to Binder and Colab. Which chapters run in the browser is read from
their imports (``scripts/install_cell.py``), not listed by hand.

``lite/overrides.json`` renders every cell of a notebook (no windowing), so that the browser's
find-in-page sees the whole chapter. The site itself needs no network to build. A reader's browser fetches the Pyodide runtime
(Python compiled to WebAssembly, with numpy, scipy, ...) from its CDN on first use
(``pyodideUrl`` in ``lite/jupyter-lite.json``); the page says so.

``SEQRMT_LITE=0`` skips the JupyterLite build and its links (a quicker local build); the PDF
and other non-HTML builders never build it. ``jupyterlite-sphinx`` is not used: it adds a Google
Fonts stylesheet to every page of the book (which is built to read offline) and writes a
``_contents/`` folder into the source root on every build.
"""

from __future__ import annotations

import html
import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

LITE_DIR = "lite"            # in the built site, and the configuration folder of the repository
APP = "notebooks"            # the Notebook app: one chapter per tab, the simplest interface
KERNEL_PLUGIN = "@jupyterlite/pyodide-kernel-extension:kernel"


def install_cell_module(root: pathlib.Path):
    """``scripts/install_cell.py`` as a module (what each chapter needs)."""
    spec = importlib.util.spec_from_file_location("seqrmt_install_cell", root / "scripts" / "install_cell.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


def enabled(app: Sphinx) -> bool:
    """Whether this build writes the JupyterLite site (HTML builders, unless SEQRMT_LITE=0)."""
    return app.builder.format == "html" and os.environ.get("SEQRMT_LITE", "1").strip() != "0"


def pyodide_url(root: pathlib.Path) -> str:
    """The Pyodide runtime that a reader's browser loads (``lite/jupyter-lite.json``)."""
    config = json.loads((root / LITE_DIR / "jupyter-lite.json").read_text(encoding="utf-8"))
    plugins = config["jupyter-config-data"].get("litePluginSettings", {})
    return plugins.get(KERNEL_PLUGIN, {}).get("pyodideUrl", "")


def edition(app: Sphinx) -> str:
    return getattr(app.config, "seqrmt_edition", "") or "reader"


def lite_path(docname: str) -> str:
    """Where the chapter ``notebooks/<part>/<name>`` lies in the JupyterLite file browser."""
    return docname.removeprefix("notebooks/") + ".ipynb"


def collect_chapters(app: Sphinx) -> None:
    """Read once which chapters run in the browser (``app.seqrmt_lite_chapters``)."""
    root = pathlib.Path(app.srcdir)
    app.seqrmt_lite_chapters = {}
    if not enabled(app):
        return
    if importlib.util.find_spec("jupyterlite_core") is None:
        raise RuntimeError("the JupyterLite build needs jupyterlite-core and jupyterlite-pyodide-kernel "
                           "(pip install -r requirements.txt), or set SEQRMT_LITE=0 to skip it")
    for chapter in install_cell_module(root).chapters(root):
        app.seqrmt_lite_chapters[chapter.docname] = chapter


def _note(url: str | None, why: str) -> str:
    """The line under a chapter's title."""
    if url:
        return (
            '<p class="seqrmt-run-online"><a class="reference external" '
            f'href="{html.escape(url)}">Run in your browser (no install)</a>: '
            "this chapter opens in JupyterLite, where Python runs in your browser "
            "(Pyodide, fetched from its CDN the first time). Binder and Colab are in the "
            "launch menu at the top of the page.</p>"
        )
    return (
        '<p class="seqrmt-run-online">This chapter does not run in your browser: '
        f"{html.escape(why)}. Run it on Binder or Colab (the launch menu at the top of the "
        "page) or locally.</p>"
    )


def add_links(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """A line under the title of every chapter page, and a JupyterLite entry in its launch menu."""
    chapter = getattr(app, "seqrmt_lite_chapters", {}).get(pagename)
    if chapter is None or "body" not in context:
        return
    url = None
    if chapter.browser:
        url = context["pathto"](f"{LITE_DIR}/{APP}/index.html", 1) + "?path=" + lite_path(pagename)
        for group in context.get("header_buttons", []):
            if group.get("label") == "launch-buttons":
                group.setdefault("buttons", []).append({
                    "type": "link", "text": "JupyterLite", "tooltip": "Run in your browser (no install)",
                    "icon": "fas fa-play", "url": url,
                })
    body = context["body"]
    end = body.find("</h1>")
    if end >= 0:
        end += len("</h1>")
        context["body"] = body[:end] + _note(url, chapter.why_not_browser) + body[end:]


# what pyproject.toml reads to build the wheel
WHEEL_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "LICENSE-TEXT", "lib")


def build_wheel(root: pathlib.Path, work: pathlib.Path) -> pathlib.Path:
    """The ``seqrmt`` wheel of this checkout (pure Python; built offline, no build isolation).

    Built from a copy of the sources: setuptools builds in the source tree and packs what an older
    ``build/lib`` holds, deleted modules included.
    """
    src = work / "src"
    for name in WHEEL_SOURCES:
        if (root / name).is_dir():
            shutil.copytree(root / name, src / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc"))
        else:
            src.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / name, src / name)
    out = work / "wheels"
    # --no-build-isolation: the environment's setuptools (>= 77, pyproject.toml), no download
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                           "--wheel-dir", str(out), str(src)], cwd=work, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"building the seqrmt wheel failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    wheels = sorted(out.glob("seqrmt-*.whl"))
    if len(wheels) != 1:
        raise RuntimeError(f"expected one seqrmt wheel in {out}, found {wheels}")
    return wheels[0]


def build_lite(app: Sphinx, exception) -> None:
    """Write the JupyterLite site to ``<html>/lite/`` after the HTML pages."""
    chapters = getattr(app, "seqrmt_lite_chapters", {})
    if exception is not None or not enabled(app) or not chapters:
        return
    start = time.time()
    root = pathlib.Path(app.srcdir)
    out = pathlib.Path(app.outdir) / LITE_DIR
    name = edition(app)
    with tempfile.TemporaryDirectory(prefix="seqrmt-lite-") as tmp:
        work = pathlib.Path(tmp)
        # the configuration, copied so that the build's state file stays out of the repository
        lite_dir = work / "lite"
        shutil.copytree(root / LITE_DIR, lite_dir)
        contents = work / "contents"
        for docname, chapter in chapters.items():
            if not chapter.browser:
                continue
            src = root / "editions" / name / f"{docname}.ipynb"
            if not src.is_file():
                raise FileNotFoundError(f"{src} is missing: run python scripts/editions.py notebooks")
            dest = contents / lite_path(docname)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
        wheel = build_wheel(root, work)
        shutil.rmtree(out, ignore_errors=True)
        command = [sys.executable, "-m", "jupyter", "lite", "build", "--lite-dir", str(lite_dir),
                   "--contents", str(contents), "--piplite-wheels", str(wheel),
                   "--output-dir", str(out)]
        done = subprocess.run(command, cwd=work, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"jupyter lite build failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) / 1e6
    n = sum(chapter.browser for chapter in chapters.values())
    logger.info(f"[seqrmt_lite] JupyterLite site: {n} chapters ({name} edition) and {wheel.name} "
                f"in {out} ({size:.0f} MB, {time.time() - start:.0f} s)")


def setup(app: Sphinx) -> dict:
    app.connect("builder-inited", collect_chapters)
    # after sphinx-book-theme builds the launch buttons (priority 501) and seqrmt_editions (600)
    app.connect("html-page-context", add_links, priority=650)
    app.connect("build-finished", build_lite)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
