#!/usr/bin/env python
"""Run one chapter in the book's JupyterLite site, in a real browser, as a reader would.

Usage::

    python scripts/check_lite.py                          # _build/html, chapter 1.1
    python scripts/check_lite.py --url https://seqrmt.github.io/seqrmt-book/   # the published site
    python scripts/check_lite.py --chapter part4_sgd_rmt/03_gaussian_rbm.ipynb --json out.json

Serves the built site (``--site``, default ``_build/html``) on 127.0.0.1, or opens a published
one (``--url``), in headless Chromium (selenium, the system ``chromium`` and ``chromedriver``, as
``scripts/check_site.py``), opens the chapter in the Notebook app of ``lite/``
(``lite/notebooks/index.html?path=...``, the page's "Run in your browser" link), runs all its
cells ("Run" > "Run All Cells") and waits until the last one has run. The Pyodide runtime and
its packages come from Pyodide's CDN (``pyodideUrl`` in ``lite/jupyter-lite.json``), so this
needs the internet: it is the weekly workflow's job (CI here has no route to the CDN).

It fails (exit 1) when the notebook does not open, the kernel does not start, a cell shows a
traceback (the install cell's ``%pip``, an ``ImportError``, a failed ``check(...)``), or the
last cell has not run within ``--timeout`` seconds. It prints the time to a running kernel and
to the end, and with ``--json`` writes them with the findings; ``--screenshot`` saves the page.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import pathlib
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_CHAPTER = "part1_linear_generative/01_sample_covariance.ipynb"
OPEN_TIMEOUT_S = 120

# the state of the notebook in the page: cells, prompts ("[*]" while running), tracebacks
STATE_JS = r"""
const cells = Array.from(document.querySelectorAll('.jp-Notebook .jp-CodeCell'));
const prompts = cells.map(c => {
  const p = c.querySelector('.jp-InputArea-prompt');
  return p ? p.textContent.trim() : '';
});
const tracebacks = [];
cells.forEach((c, i) => {
  c.querySelectorAll('.jp-OutputArea-output').forEach(o => {
    const t = o.textContent || '';
    if (/Traceback|Error:/.test(t) && (o.dataset.mimeType || '').includes('stderr')) {
      tracebacks.push({cell: i, text: t.slice(-600)});
    }
  });
});
const status = document.querySelector('.jp-Notebook-ExecutionIndicator, #jp-KernelStatus, .jp-KernelStatus');
return {cells: cells.length, prompts: prompts, tracebacks: tracebacks,
        kernel: status ? (status.getAttribute('title') || status.textContent || '') : '',
        menus: Array.from(document.querySelectorAll('.lm-MenuBar-itemLabel')).map(m => m.textContent)};
"""


class _Handler(http.server.SimpleHTTPRequestHandler):
    """A static server with the MIME types a JupyterLite site needs, quiet."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".js": "text/javascript", ".mjs": "text/javascript",
                      ".wasm": "application/wasm", ".json": "application/json",
                      ".ipynb": "application/json", ".whl": "application/octet-stream"}

    def log_message(self, *args):
        pass


def serve(site: pathlib.Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    """Serve ``site`` on 127.0.0.1 (a free port) in a thread; the server and its base URL."""
    handler = functools.partial(_Handler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def _click_menu(driver, menu: str, item: str) -> None:
    """Open the menu bar's ``menu`` and click its ``item`` (lumino menus exist only while open)."""
    from selenium.webdriver.common.by import By

    bar = driver.find_element(By.XPATH, f"//div[contains(@class,'lm-MenuBar-itemLabel')][text()='{menu}']")
    bar.click()
    time.sleep(0.5)
    entry = driver.find_element(By.XPATH, f"//div[contains(@class,'lm-Menu-itemLabel')][text()='{item}']")
    entry.click()


def run_chapter(driver, base: str, chapter: str, timeout: float, log=print) -> dict:
    """Open ``chapter`` in the Notebook app under ``base``, run all cells; timings and findings."""
    url = f"{base.rstrip('/')}/lite/notebooks/index.html?path={chapter}"
    result = {"url": url, "findings": [], "kernel_s": None, "run_s": None}
    # the number of code cells, from the notebook the site serves
    with urllib.request.urlopen(f"{base.rstrip('/')}/lite/files/{chapter}", timeout=60) as response:
        nb = json.loads(response.read())
    n_code = sum(cell["cell_type"] == "code" for cell in nb["cells"])
    start = time.time()
    driver.get(url)
    state = None
    while time.time() - start < OPEN_TIMEOUT_S:
        state = driver.execute_script(STATE_JS)
        # every cell rendered (lite/overrides.json: no windowing) and the menu bar up
        if state["cells"] == n_code and "Run" in state["menus"]:
            break
        time.sleep(2)
    else:
        result["findings"].append({"check": "open", "detail": f"the notebook did not open in {OPEN_TIMEOUT_S} s"})
        return result
    log(f"opened {chapter}: {state['cells']} code cells in {time.time() - start:.0f} s")
    _click_menu(driver, "Run", "Run All Cells")
    run_start = time.time()
    last = ""
    while time.time() - run_start < timeout:
        time.sleep(5)
        state = driver.execute_script(STATE_JS)
        prompts = state["prompts"]
        ran = [p for p in prompts if p.strip("[]: ").isdigit()]
        if ran and result["kernel_s"] is None:
            result["kernel_s"] = round(time.time() - run_start, 1)
            log(f"kernel running: first cell done after {result['kernel_s']} s")
        progress = f"{len(ran)}/{len(prompts)} cells run"
        if progress != last:
            log(progress)
            last = progress
        if state["tracebacks"]:
            break
        if prompts and prompts[-1].strip("[]: ").isdigit() and not any("*" in p for p in prompts):
            result["run_s"] = round(time.time() - run_start, 1)
            break
    for tb in state["tracebacks"]:
        result["findings"].append({"check": "traceback", "detail": f"cell {tb['cell']}: {tb['text']}"})
    if result["run_s"] is None and not state["tracebacks"]:
        detail = f"{last} after {timeout:.0f} s (kernel: {state['kernel'] or 'unknown'})"
        result["findings"].append({"check": "timeout", "detail": detail})
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--site", type=pathlib.Path, default=ROOT / "_build" / "html",
                       help="a built site to serve (default: _build/html)")
    where.add_argument("--url", help="a published site instead (its root, e.g. the GitHub Pages URL)")
    parser.add_argument("--chapter", default=DEFAULT_CHAPTER,
                        help=f"the notebook, relative to lite/files (default: {DEFAULT_CHAPTER})")
    parser.add_argument("--timeout", type=float, default=1200, help="seconds for all cells to run")
    parser.add_argument("--json", type=pathlib.Path, help="write timings and findings here")
    parser.add_argument("--screenshot", type=pathlib.Path, help="save a PNG of the page at the end")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT / "scripts"))
    import check_site  # the browser, as the book's site check starts it
    why = check_site.browser_missing()
    if why:
        print(f"check_lite: {why}", file=sys.stderr)
        return 2
    server = None
    if args.url:
        base = args.url
    else:
        if not (args.site / "lite" / "jupyter-lite.json").is_file():
            print(f"check_lite: no JupyterLite site in {args.site} (build the book)", file=sys.stderr)
            return 2
        server, base = serve(args.site)
    with tempfile.TemporaryDirectory() as profile:
        driver = check_site.start_browser(profile)
        try:
            result = run_chapter(driver, base, args.chapter, args.timeout)
            if args.screenshot:
                driver.save_screenshot(str(args.screenshot))
        finally:
            driver.quit()
            if server is not None:
                server.shutdown()
    for finding in result["findings"]:
        print(f"check_lite: {finding['check']}: {finding['detail']}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    if result["findings"]:
        return 1
    print(f"check_lite: {args.chapter} ran to the end in {result['run_s']} s "
          f"(kernel ready after {result['kernel_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
