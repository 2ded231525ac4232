#!/usr/bin/env python
"""Open notebooks in a real JupyterLab in headless Chromium and report what a reader would see wrong.

Usage::

    python scripts/check_jupyter.py                      # the default set: the first reader notebook
                                                         # of every part and one student notebook
    python scripts/check_jupyter.py notebooks/part1_linear_generative/01_sample_covariance.ipynb
    python scripts/check_jupyter.py --json findings.json PATH ...

Starts ``jupyter lab`` (the pip package ``jupyterlab``, pinned in requirements.txt) on 127.0.0.1
with a free port, no token, no browser, and throw-away settings and workspace folders (all cells
rendered: ``windowingMode: none``), then opens each notebook with selenium in the system
Chromium (as ``scripts/check_site.py`` does) and waits until its Markdown and MathJax are
rendered. Per notebook it counts:

``raw-directive``  MyST directives shown as code or text: a code block in a Markdown cell whose
                   language is ``{...}`` (```` ```{prf:theorem} ````), ``:::{``, ``:label:`` lines
``literal-role``   roles shown literally: ``{cite:t}``, ``{prf:ref}``, ``{doc}``, ``{numref}``, ...
``mathjax``        MathJax error nodes (``mjx-merror``), undefined macros (red ``\\RR``), untypeset
                   ``$$``, and display maths that starts or ends with a quote marker ``>``
``unfolded``       solutions shown unfolded: ```` ```{solution} ```` blocks, ``<details open>``
``solution``       (student notebooks, path containing ``/student/``) any solution: a "Solution"
                   summary or a phrase of a solution's text
``load``           the notebook did not render within the time limit

The exit status is 1 when there is any finding. ``tests/test_jupyter.py`` runs the default set.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import pathlib
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 90
NOTEBOOK_TIMEOUT_S = 120


def _load(name: str):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def default_notebooks() -> list[str]:
    """The first reader notebook of every part, and the first student notebook."""
    chosen, parts = [], set()
    for path in sorted((ROOT / "editions" / "reader" / "notebooks").glob("*/*.ipynb")):
        if path.parent.name not in parts:
            parts.add(path.parent.name)
            chosen.append(str(path.relative_to(ROOT)))
    student = sorted((ROOT / "editions" / "student" / "notebooks").glob("*/*.ipynb"))
    return chosen + [str(student[0].relative_to(ROOT))]


def lab_missing() -> str | None:
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        return "jupyterlab is not installed (pip install -r requirements.txt)"
    return _load("check_site").browser_missing()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A JupyterLab server on 127.0.0.1 serving the repository, in throw-away folders."""

    def __init__(self, root: pathlib.Path = ROOT):
        self.tmp = tempfile.TemporaryDirectory(prefix="seqrmt-lab-")
        tmp = pathlib.Path(self.tmp.name)
        settings = tmp / "settings" / "@jupyterlab" / "notebook-extension"
        settings.mkdir(parents=True)
        (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
        news = tmp / "settings" / "@jupyterlab" / "apputils-extension"
        news.mkdir(parents=True)
        (news / "notification.jupyterlab-settings").write_text(
            json.dumps({"fetchNews": "false", "checkForUpdates": False}))
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ,
                   JUPYTERLAB_SETTINGS_DIR=str(tmp / "settings"),
                   JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
                   JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
                   JUPYTER_CONFIG_DIR=str(tmp / "config"))
        self.log = open(tmp / "lab.log", "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
             f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0",
             "--IdentityProvider.token=", "--ServerApp.password=",
             f"--ServerApp.root_dir={root}", "--allow-root", "--LabApp.extension_manager=readonly",
             "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
             # checkpoints in the throw-away folder, not .ipynb_checkpoints/ beside the notebooks
             f"--FileCheckpoints.checkpoint_dir={tmp / 'checkpoints'}"],
            cwd=root, env=env, stdout=self.log, stderr=subprocess.STDOUT)

    def wait(self) -> None:
        t0 = time.time()
        while time.time() - t0 < START_TIMEOUT_S:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {self.proc.returncode}: {self.tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/api/status", timeout=5) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"jupyter lab did not answer within {START_TIMEOUT_S} s: {self.tail()}")

    def tail(self) -> str:
        self.log.flush()
        return pathlib.Path(self.log.name).read_text()[-2000:]

    def __enter__(self):
        self.wait()
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        self.tmp.cleanup()


# What the page reports, in one script run after rendering has settled.
PROBE_JS = r"""
const cells = Array.from(document.querySelectorAll('.jp-Notebook .jp-MarkdownCell .jp-RenderedMarkdown'));
const roleRe = /\{(cite(:[a-z]+)?|prf:ref|doc|ref|numref|eq|py:[a-z]+|glue(:[a-z]*)?|math|term|download)\}/g;
const out = {cells: cells.length, math: 0, images: document.querySelectorAll('.jp-Notebook img').length,
             raw: [], roles: [], mathjax: [], unfolded: [], summaries: [], text: ''};
const texts = [];
for (const cell of cells) {
  for (const code of cell.querySelectorAll('pre code')) {
    const lang = Array.from(code.classList).find(c => c.startsWith('language-{'));
    if (lang) {
      out.raw.push(lang.slice(9));
      if (lang.startsWith('language-{solution')) out.unfolded.push('{solution} code block');
    } else if (/^:label:/m.test(code.textContent)) out.raw.push(':label: in a code block');
  }
  for (const mjx of cell.querySelectorAll('mjx-container')) {
    out.math += 1;
    if (mjx.querySelector('mjx-merror, [data-mjx-error]')) out.mathjax.push('mjx-merror: ' + (mjx.querySelector('[data-mjx-error]')?.getAttribute('data-mjx-error') || ''));
    const mml = mjx.querySelector('mjx-assistive-mml');
    const mt = mml ? mml.textContent.trim() : '';
    if (mjx.getAttribute('display') === 'true' && (mt.startsWith('>') || mt.endsWith('>')))
      out.mathjax.push('a quote marker ">" typeset inside display maths');
    const mtext = mjx.querySelectorAll('mjx-mtext');
    for (const t of (mml ? mml.querySelectorAll('mtext') : [])) {
      if (/\\[A-Za-z]+/.test(t.textContent)) out.mathjax.push('undefined macro ' + t.textContent);
    }
  }
  for (const d of cell.querySelectorAll('details')) {
    const s = d.querySelector('summary');
    const label = s ? s.textContent.trim() : '';
    out.summaries.push(label);
    if (d.open && /solution/i.test(label)) out.unfolded.push('<details open>: ' + label);
  }
  const clone = cell.cloneNode(true);
  clone.querySelectorAll('mjx-container, pre').forEach(e => e.remove());
  const text = clone.textContent;
  texts.push(text);
  for (const m of text.matchAll(roleRe)) out.roles.push(m[0]);
  for (const m of text.matchAll(/(```\{[^}]*\}|:::\{[^}]*\}|^\s*:label:.*$)/gm)) out.raw.push(m[0].trim());
  // raw TeX left untypeset (MathJax did not run or failed)
  if (/\$\$|\\begin\{/.test(text)) out.mathjax.push('untypeset TeX: ' + text.match(/.{0,30}(\$\$|\\begin\{).{0,30}/)[0]);
}
out.text = texts.join('\n');
return out;
"""

SETTLED_JS = r"""
const nb = document.querySelector('.jp-Notebook');
if (!nb) return null;
const md = nb.querySelectorAll('.jp-MarkdownCell').length;
const rendered = nb.querySelectorAll('.jp-MarkdownCell .jp-RenderedMarkdown').length;
const math = nb.querySelectorAll('mjx-container').length;
const pending = nb.querySelectorAll('.jp-MarkdownCell .jp-RenderedMarkdown:not(:has(*))').length;
return [md, rendered, math, pending];
"""


# Screenshots (``--screenshots``): the first theorem-like block and the first exercise, in the
# edition notebooks (quoted blocks, <details>) or the sources (code blocks of raw MyST).
SHOT_TARGETS = [".jp-RenderedMarkdown blockquote, .jp-RenderedMarkdown pre code[class*='language-{prf']",
                ".jp-RenderedMarkdown details, .jp-RenderedMarkdown pre code[class*='language-{exercise']"]


def check_notebook(driver, lab: Lab, path: str, phrases: list[str],
                   shots: pathlib.Path | None = None) -> tuple[list[dict], dict]:
    driver.get(f"{lab.url}/lab/tree/{path}?reset")
    t0, last, stable, state = time.time(), None, 0, None
    while time.time() - t0 < NOTEBOOK_TIMEOUT_S:
        try:
            state = driver.execute_script(SETTLED_JS)
        except Exception:  # noqa: BLE001 - the page is still loading
            state = None
        if state and state[0] > 0 and state[1] == state[0]:
            stable = stable + 1 if state == last else 0
            if stable >= 3:
                break
        last = state
        time.sleep(1.0)
    else:
        return [{"notebook": path, "check": "load", "detail": f"not rendered in {NOTEBOOK_TIMEOUT_S} s: {state}"}], {}
    probe = driver.execute_script(PROBE_JS)
    if shots is not None:
        name = path.replace("/", "_").removesuffix(".ipynb")
        for i, css in enumerate(SHOT_TARGETS):
            if driver.execute_script(
                    "const e = document.querySelector(arguments[0]);"
                    "if (e) { e.scrollIntoView({block: 'start'}); return true; } return false;", css):
                time.sleep(0.5)
                driver.save_screenshot(str(shots / f"{name}_{i}.png"))
    findings = []

    def add(check, items):
        for item in items:
            findings.append({"notebook": path, "check": check, "detail": item})

    add("raw-directive", probe["raw"])
    add("literal-role", probe["roles"])
    add("mathjax", probe["mathjax"])
    add("unfolded", probe["unfolded"])
    text = " ".join(probe["text"].split())
    leaks = [f"summary {s!r}" for s in probe["summaries"] if "solution" in s.lower()]
    leaks += [f"solution text {p[:60]!r}" for p in phrases if p in text]
    if "/student/" in path:
        add("solution", leaks)
    stats = {k: probe[k] for k in ("cells", "math", "images")} | {
        "solutions seen": len(leaks), "seconds": round(time.time() - t0, 1)}
    return findings, stats


def check_jupyter(paths: list[str], log=print, shots: pathlib.Path | None = None) -> tuple[list[dict], dict]:
    check_site = _load("check_site")
    editions = _load("editions")
    book = editions.Book()
    prints = editions.solution_fingerprints(book)
    findings, stats = [], {}
    with Lab() as lab, tempfile.TemporaryDirectory(prefix="seqrmt-chrome-") as profile:
        driver = check_site.start_browser(profile)
        driver.set_window_size(1280, 900)
        try:
            for path in paths:
                docname = path.split("notebooks/", 1)[-1].removesuffix(".ipynb")
                phrases = prints.get("notebooks/" + docname, [])
                # a phrase that the exercises or the prose also use (maths taken out) is no leak
                student = ROOT / "editions" / "student" / "notebooks" / f"{docname}.ipynb"
                if student.exists():
                    nb = json.loads(student.read_text(encoding="utf-8"))
                    shown = " ".join(editions.without_maths(" ".join(
                        "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")).split())
                    phrases = [p for p in phrases if p not in shown]
                found, st = check_notebook(driver, lab, path, phrases, shots)
                findings += found
                stats[path] = st
                counts = collections.Counter(f["check"] for f in found)
                log(f"{path}: {dict(counts) or 'no finding'} {st}")
        finally:
            driver.quit()
    return findings, stats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="notebooks, relative to the repository root")
    parser.add_argument("--json", type=pathlib.Path, help="write the findings and statistics here")
    parser.add_argument("--screenshots", type=pathlib.Path, help="save screenshots (PNG) in this folder")
    args = parser.parse_args(argv)
    if (why := lab_missing()) is not None:
        print(f"check_jupyter: cannot run: {why}", file=sys.stderr)
        return 2
    paths = args.paths or default_notebooks()
    t0 = time.time()
    if args.screenshots:
        args.screenshots.mkdir(parents=True, exist_ok=True)
    findings, stats = check_jupyter(paths, shots=args.screenshots)
    counts = collections.Counter(f["check"] for f in findings)
    print(f"check_jupyter: {len(findings)} finding(s) on {len(paths)} notebooks in {time.time() - t0:.0f} s: {dict(counts)}")
    if args.json:
        args.json.write_text(json.dumps({"findings": findings, "stats": stats}, indent=1))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
