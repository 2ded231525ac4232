#!/usr/bin/env python
"""Read the built book in a real browser and report what a reader would see wrong.

Usage (after ``jupyter-book build . -W -n --keep-going``)::

    python scripts/check_site.py _build/html            # every page of _toc.yml at 1280 px
    python scripts/check_site.py _build/html --phone    # plus every page again at phone width (390 px)
    python scripts/check_site.py _build/html --json findings.json --pages 'book/*'

Serves the build on 127.0.0.1 (a ``http.server`` thread on a free port) and opens every
page of the table of contents in headless Chromium driven by selenium and the system
chromedriver. Nothing is fetched from the network. For each page it reports:

``raw-myst``      MyST directive or role text visible outside code (```` ```{ ````, ``:::{``, ``{prf:``, ``{cite``, ``:label:`` ...)
``unresolved``    ``??``, unresolved cross-reference spans, links to missing pages or ``#anchors``
``mathjax``       MathJax missing or failed, error nodes, raw TeX (``\\(``, ``$$``) left outside code
``too-wide``      display maths, code or outputs wider than their container (scrollWidth > clientWidth + 1)
``page-overflow`` the page itself scrolls sideways, or the right-hand contents column is cut off
``clipped-math``  an inline formula cut off by a box that hides its overflow, with no way to scroll to
                  the rest (at both widths; formulas that scroll inside their box are counted, not findings)
``figure-scale``  a figure shown at less than 0.75 of its intended size (PNG pixels * 96 / pHYs dpi)
``alt-text``      a figure without descriptive alt text (empty, a file name or hash, under three words)
``stderr``        stderr or traceback output blocks
``insecure-link`` a plain ``http://`` link to another site in the page content
``console``       SEVERE browser-console errors caused by the book's own files (external URLs ignored)
``load``          the page did not load or its check did not finish within 180 s
``pdf-link``      the site holds ``book.pdf`` but the download menu does not offer it
``figure-link``   a content image that does not open full size with one tap (no link to the image file)
``phone-overflow``  (with ``--phone``) the page is wider than a 390 px phone: the document's width
                  (``document.documentElement.scrollWidth``) is compared with 390 px, not with
                  ``window.innerWidth``, which grows with the page under mobile emulation
``phone-menu``    (with ``--phone``) tapping the visible ☰ (table of contents) or ☷ (page contents)
                  button does not show its sidebar, or choosing a section in the ☷ drawer leaves
                  the drawer open over the text

Solutions and hidden cells (``<details>``) are opened before measuring. The findings are a
list of dicts ``{"page", "check", "detail"}``; the exit status is 1 when there is any.
``tests/test_browser.py`` runs the same check under pytest.
"""

from __future__ import annotations

import argparse
import fnmatch
import functools
import http.server
import json
import pathlib
import re
import struct
import sys
import threading
import time
from urllib.parse import unquote, urlsplit

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROME_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
]
DESKTOP = (1280, 900)
PHONE = (390, 844)
MIN_SCALE = 0.75
MIN_ALT_WORDS = 3
PAGE_TIMEOUT_S = 180


# ----------------------------------------------------------------------------- inputs
def toc_pages(toc: pathlib.Path = ROOT / "_toc.yml") -> list[str]:
    """Docnames of every page in the table of contents, in reading order."""
    import yaml

    data = yaml.safe_load(toc.read_text())
    pages = [data["root"]]

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                pages.append(node["file"])
            for key in ("parts", "chapters", "sections"):
                for child in node.get(key, []) or []:
                    walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk({k: v for k, v in data.items() if k != "root"})
    return [re.sub(r"\.(md|ipynb)$", "", p) for p in pages]


def png_dpi(path: pathlib.Path) -> float | None:
    """Horizontal resolution from a PNG's pHYs chunk (matplotlib writes it), or None."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    pos = 8
    while pos + 8 <= len(data):
        length, ctype = struct.unpack(">I4s", data[pos : pos + 8])
        if ctype == b"pHYs" and length == 9:
            ppu_x, _ppu_y, unit = struct.unpack(">IIB", data[pos + 8 : pos + 17])
            return ppu_x * 0.0254 if unit == 1 and ppu_x > 0 else None
        if ctype in (b"IDAT", b"IEND"):
            return None
        pos += 12 + length
    return None


# ----------------------------------------------------------------------------- server and browser
class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # noqa: D401 - silence the per-request log
        pass


class SiteServer:
    """Serve a folder on 127.0.0.1 on a free port, in a daemon thread."""

    def __init__(self, folder: pathlib.Path):
        handler = functools.partial(_QuietHandler, directory=str(folder))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def browser_missing() -> str | None:
    """Why no browser can be started here, or None when one can."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed"
    for exe in (CHROMIUM, CHROMEDRIVER):
        if not pathlib.Path(exe).exists():
            return f"{exe} not found (apt-get install chromium chromium-driver)"
    return None


def start_browser(user_data_dir: str):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in CHROME_ARGS:
        opts.add_argument(arg)
    opts.add_argument(f"--user-data-dir={user_data_dir}")
    opts.add_argument(f"--window-size={DESKTOP[0]},{DESKTOP[1]}")
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    # generous: on a loaded 2-core machine a long notebook page can take a minute
    driver.set_page_load_timeout(PAGE_TIMEOUT_S)
    driver.set_script_timeout(PAGE_TIMEOUT_S)
    return driver


def browser_cpu_seconds(driver) -> float | None:
    """CPU time (user + system) used so far by chromedriver and its live descendants (Linux)."""
    import os

    try:
        root = driver.service.process.pid
        tick = os.sysconf("SC_CLK_TCK")
        children: dict[int, list[int]] = {}
        stats: dict[int, float] = {}
        for entry in pathlib.Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            pid, ppid = int(entry.name), int(fields[1])
            children.setdefault(ppid, []).append(pid)
            stats[pid] = (int(fields[11]) + int(fields[12])) / tick
        total, todo = 0.0, [root]
        while todo:
            pid = todo.pop()
            total += stats.get(pid, 0.0)
            todo.extend(children.get(pid, []))
        return total
    except Exception:
        return None


def set_viewport(driver, width: int, height: int, mobile: bool) -> None:
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
    )


# ----------------------------------------------------------------------------- in-page checks
PAGE_JS = r"""
const done = arguments[arguments.length - 1];
const phone = arguments[0];
const phoneWidth = arguments[1];
const sitePdf = arguments[2];
(async () => {
  const out = {findings: [], images: [], links: [], info: {}};
  const add = (check, detail) => out.findings.push({check, detail});
  const snip = (s, n = 70) => (s || '').replace(/\s+/g, ' ').trim().slice(0, n);
  const article = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;

  // open folded solutions and hidden cells, so that their content is measured too
  document.querySelectorAll('details').forEach(d => { d.open = true; });

  // images loaded
  const imgs = Array.from(article.querySelectorAll('img'));
  await Promise.all(imgs.map(im => (im.complete ? null : new Promise(r => {
    im.addEventListener('load', r); im.addEventListener('error', r); setTimeout(r, 10000); }))));

  // MathJax finished
  const hasMath = article.querySelector('.math, span.math, div.math, mjx-container') !== null;
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    try { await MathJax.startup.promise; } catch (e) { add('mathjax', 'MathJax startup failed: ' + e); }
    out.info.mathjax = (MathJax.version || '?');
  } else if (hasMath) {
    add('mathjax', 'MathJax did not load on a page with maths');
    out.info.noMathJax = true;
  }
  for (const el of article.querySelectorAll('mjx-merror, .MathJax_Error, [data-mjx-error]')) {
    const c = el.closest('mjx-container');
    add('mathjax', 'MathJax error: ' + snip(el.getAttribute('data-mjx-error') || el.textContent ||
        (c && c.getAttribute('data-mjx-error'))));
  }

  // text a reader sees outside code and outside typeset maths
  const clone = article.cloneNode(true);
  clone.querySelectorAll('pre, code, kbd, samp, .highlight, script, style, textarea, mjx-container, ' +
                         'mjx-assistive-mml, .MathJax, .cell_input, .headerlink').forEach(e => e.remove());
  const text = clone.textContent;
  const context = (m) => snip(text.slice(Math.max(0, m.index - 30), m.index + 60), 100);
  const rawMyst = /```\s*\{|:::\s*\{|\{[a-z][a-z-]*(?::[a-z-]+)?\}`|\{(?:prf|cite|glue)[:}]|\{(?:numref|ref|doc|eq|math|term|download)\}|(?:^|\s):(?:label|class|name|numref):(?:\s|$)/gm;
  for (const m of text.matchAll(rawMyst)) add('raw-myst', context(m));
  for (const m of text.matchAll(/\?\?/g)) add('unresolved', '"??" in: ' + context(m));
  const rawTex = /\\\(|\\\)|\$\$|\\\[|\\begin\{|\$[^$\n]{0,120}\\[A-Za-z]+[^$\n]{0,120}\$/g;
  const rawTexHits = Array.from(text.matchAll(rawTex));
  if (out.info.noMathJax) {
    if (rawTexHits.length) add('mathjax', `${rawTexHits.length} raw TeX spans shown, first: ` + context(rawTexHits[0]));
  } else {
    for (const m of rawTexHits) add('mathjax', 'raw TeX outside code: ' + context(m));
  }

  // unresolved references and links
  for (const el of article.querySelectorAll('span.xref.std, span.std-ref, span.std-numref, span.std-doc, .xref.prf, .xref.cite')) {
    if (!el.closest('a')) add('unresolved', 'unresolved reference: ' + snip(el.textContent));
  }
  const here = location.pathname;
  for (const a of document.querySelectorAll('a[href]')) {
    const raw = a.getAttribute('href');
    if (!raw || raw === '#' || raw.startsWith('javascript:') || raw.startsWith('mailto:')) continue;
    let u; try { u = new URL(raw, location.href); } catch (e) { add('unresolved', 'bad link ' + raw); continue; }
    if (u.origin !== location.origin) {
      if (u.protocol === 'http:' && article.contains(a)) add('insecure-link', `http:// link ${raw} (${snip(a.textContent, 40)})`);
      continue;
    }
    if (u.pathname === here) {
      const id = decodeURIComponent(u.hash.slice(1));
      if (id && !document.getElementById(id) && document.getElementsByName(id).length === 0)
        add('unresolved', 'broken anchor ' + raw + ' (' + snip(a.textContent, 40) + ')');
    } else {
      out.links.push(u.pathname + u.hash);
    }
  }

  // stderr and tracebacks
  for (const el of article.querySelectorAll('.output.stderr, .output.traceback, .cell_output .stderr, .cell_output .traceback'))
    add('stderr', snip(el.textContent));
  // a traceback in a page, except in an API docstring's example, which may show an error on purpose
  const noDocs = article.cloneNode(true);
  noDocs.querySelectorAll('dl.py div.doctest, dl.py div.highlight-pycon').forEach(e => e.remove());
  if (noDocs.textContent.includes('Traceback (most recent call last)')) add('stderr', 'a traceback is shown');

  // blocks wider than their container (innermost first; one finding per block)
  const kinds = [
    ['maths', 'mjx-container[display="true"]'], ['maths', 'div.math'],
    ['code', '.cell_input pre'],
    ['output', '.cell_output pre'], ['output', '.cell_output table'], ['output', '.cell_output .output'],
    ['code', 'div.highlight pre'],
    ['table', 'article table'], ['table', '.pst-scrollable-table-container'],
  ];
  const flagged = [];
  for (const [kind, sel] of kinds) {
    for (const el of article.querySelectorAll(sel)) {
      if (flagged.some(f => f === el || f.contains(el) || el.contains(f))) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      const parent = el.parentElement;
      const overScroll = el.scrollWidth - el.clientWidth;
      const overParent = parent ? r.width - parent.clientWidth : 0;
      const over = Math.max(overScroll, overParent);
      if (over > 1) {
        flagged.push(el);
        const title = (el.closest('.cell, .proof, .theorem, .lemma, .proposition, section') || {}).id || '';
        const txt = kind === 'maths'
          ? (el.getAttribute('data-latex') || (el.closest('div.math') || el).getAttribute('data-tex') || '')
          : (el.textContent || '');
        const firstLong = kind === 'code' || kind === 'output'
          ? (el.textContent.split('\n').sort((a, b) => b.length - a.length)[0] || '') : txt;
        out.findings.push({check: 'too-wide',
          detail: `${kind} ${Math.round(over)} px too wide` + (title ? ` (in #${title})` : '') +
                  (firstLong ? `: ${snip(firstLong, 80)}` : '')});
      }
    }
  }

  // inline formulas: MathJax 3 does not break inline maths, and a box that hides its overflow
  // (the theme's span.math) cuts a long formula off with no way to scroll to the rest. From the
  // typeset formula (mjx-math) outwards, every box that does not show its overflow must hold
  // what it holds: one that hides it is a finding; one that scrolls is counted (the reader can
  // swipe), and from there on the scrolling box is what must fit.
  out.info.inlineMath = 0; out.info.scrollMath = 0; out.info.clippedMath = 0;
  const texOf = (c) => {
    try { return MathJax.startup.document.getMathItemsWithin(c)[0].math; } catch (e) { return snip(c.textContent, 60); }
  };
  for (const c of article.querySelectorAll('mjx-container:not([display="true"])')) {
    const m = c.querySelector('mjx-math');
    if (!m || c.closest('mjx-container[display="true"], .cell_output, pre')) continue;
    let inner = m.getBoundingClientRect();
    if (inner.width === 0 && inner.height === 0) continue;
    out.info.inlineMath++;
    let scrolls = false;
    for (let a = m.parentElement; a && a !== article; a = a.parentElement) {
      const ox = getComputedStyle(a).overflowX;
      if (ox === 'visible') continue;
      const box = a.getBoundingClientRect();
      const hidden = Math.max(0, inner.right - box.right) + Math.max(0, box.left - inner.left);
      if (hidden > 1) {
        if (ox === 'hidden' || ox === 'clip') {
          out.info.clippedMath++;
          add('clipped-math', `inline formula cut off: ${Math.round(hidden)} of ${Math.round(m.getBoundingClientRect().width)} px hidden ` +
              `(no scrolling): ${snip(texOf(c), 90)}`);
          break;
        }
        scrolls = true;
      }
      inner = box;
    }
    if (scrolls) out.info.scrollMath++;
  }

  // the whole-book PDF in the download menu, where the site holds book.pdf
  if (sitePdf && !phone && document.querySelector('.dropdown-download-buttons')) {
    for (let i = 0; i < 30 && !document.querySelector('.seqrmt-book-pdf'); i++) await new Promise(r => setTimeout(r, 100));
    if (!document.querySelector('.seqrmt-book-pdf')) add('pdf-link', 'the download menu does not offer the whole-book PDF');
  }

  // the page itself
  const de = document.documentElement;
  out.info.docWidth = de.scrollWidth;
  if (phone) {
    // under mobile emulation window.innerWidth grows with the page: compare with the phone's width
    const over = de.scrollWidth - phoneWidth;
    if (over > 1) {
      // name the outermost elements that stick out (their parent fits), to say what to fix
      const culprits = [];
      const clipped = (el) => {  // inside a box that scrolls or clips sideways: not the page's width
        for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
          if (getComputedStyle(a).overflowX !== 'visible') return true;
        }
        return false;
      };
      for (const el of document.body.querySelectorAll('*')) {
        const r = el.getBoundingClientRect(), p = el.parentElement;
        if (r.right > phoneWidth + 1 && p && p.getBoundingClientRect().right <= phoneWidth + 1 &&
            !['fixed', 'absolute'].includes(getComputedStyle(el).position) && !clipped(el)) {
          culprits.push(`${el.tagName.toLowerCase()}${el.className && typeof el.className === 'string' ? '.' + el.className.split(' ')[0] : ''} ` +
                        `(right edge ${Math.round(r.right)} px): ${snip(el.textContent, 50)}`);
          if (culprits.length >= 3) break;
        }
      }
      add('phone-overflow', `page is ${de.scrollWidth} px wide in a ${phoneWidth} px window` +
          (culprits.length ? `; sticking out: ${culprits.join(' | ')}` : ''));
    }
  } else {
    const pageOver = de.scrollWidth - window.innerWidth;
    if (pageOver > 1) add('page-overflow', `page scrolls sideways by ${pageOver} px`);
  }
  if (!phone) {
    const toc = document.querySelector('.bd-sidebar-secondary');
    if (toc && toc.offsetParent !== null) {
      const r = toc.getBoundingClientRect();
      if (r.right > window.innerWidth + 1) add('page-overflow', `right-hand contents column cut off by ${Math.round(r.right - window.innerWidth)} px`);
    }
  }
  out.info.wideBlocks = flagged.length;

  // figures: size and alt text are judged in Python (needs the PNG's dpi)
  for (const im of imgs) {
    const r = im.getBoundingClientRect();
    const fig = im.closest('figure');
    const cap = fig ? (fig.querySelector('figcaption') || {}).textContent : '';
    const link = im.closest('a[href]');
    let opens = false;
    if (link) {
      try { opens = /\.(png|jpe?g|gif|svg|webp)$/i.test(new URL(link.getAttribute('href'), location.href).pathname); } catch (e) {}
    }
    if (!opens && !phone) add('figure-link', `${snip(cap || (im.closest('.cell') || {}).id || im.getAttribute('src'), 50)}: does not open full size (no link to the image)`);
    out.images.push({src: im.currentSrc || im.src, alt: im.getAttribute('alt'),
                     naturalWidth: im.naturalWidth, width: r.width,
                     label: snip(cap || (im.closest('.cell') || {}).id || '', 40)});
  }
  done(out);
})().catch(e => done({findings: [{check: 'script', detail: String(e)}], images: [], links: [], info: {}}));
"""

MENU_STATE_JS = r"""
const d = document.getElementById(`pst-${arguments[0]}-sidebar-modal`);
if (!d) return {open: false, links: 0, width: 0, why: 'no sidebar dialog in the page'};
const r = d.getBoundingClientRect();
const links = Array.from(d.querySelectorAll('a[href]')).filter(a => {
  const q = a.getBoundingClientRect(); return q.width > 0 && q.height > 0; }).length;
return {open: d.open, links: links, width: Math.round(r.width), why: ''};
"""

MENUS = (("primary", "\u2630", "table of contents"), ("secondary", "\u2637", "page contents"))


def tap_menus(driver) -> list[dict]:
    """Tap the visible ☰ and ☷ buttons; a finding unless each shows its sidebar with links."""
    from selenium.webdriver.common.by import By

    out = []
    for kind, symbol, what in MENUS:
        buttons = [b for b in driver.find_elements(By.CSS_SELECTOR, f".{kind}-toggle") if b.is_displayed()]
        if not buttons:
            if kind == "primary":
                out.append({"check": "phone-menu", "detail": f"no visible {symbol} button for the {what}"})
            continue
        try:
            buttons[0].click()
        except Exception as exc:  # covered or not clickable
            msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            out.append({"check": "phone-menu", "detail": f"{symbol} cannot be tapped: {msg[:150]}"})
            continue
        state = {}
        for _ in range(10):  # the dialog opens synchronously; allow a repaint
            state = driver.execute_script(MENU_STATE_JS, kind)
            if state["open"] and state["links"]:
                break
            time.sleep(0.1)
        if not (state.get("open") and state.get("links") and state.get("width", 0) >= 150):
            out.append({"check": "phone-menu",
                        "detail": f"tapping {symbol} does not show the {what} "
                                  f"(dialog open={state.get('open')}, {state.get('links')} visible links, "
                                  f"{state.get('width')} px wide{'; ' + state['why'] if state.get('why') else ''})"})
        if kind == "secondary" and state.get("open"):
            out += choose_section(driver)
        driver.execute_script(
            "const d = document.getElementById(arguments[0]); if (d && d.open) d.close();",
            f"pst-{kind}-sidebar-modal")
    return out


# the last visible link of the open page-contents drawer: a section further down the page
SECTION_LINK_JS = r"""
const d = document.getElementById('pst-secondary-sidebar-modal');
const links = Array.from(d.querySelectorAll('a[href^="#"]')).filter(a => {
  const q = a.getBoundingClientRect(); return q.width > 0 && q.height > 0; });
return links.length ? links[links.length - 1] : null;
"""
DRAWER_AFTER_JS = r"""
const d = document.getElementById('pst-secondary-sidebar-modal');
return {open: d.open, hash: location.hash, scrolled: Math.round(window.scrollY)};
"""


def choose_section(driver) -> list[dict]:
    """Tap a section in the open ☷ drawer: the page must go there and the drawer close."""
    link = driver.execute_script(SECTION_LINK_JS)
    if link is None:
        return []
    target = link.get_attribute("hash")
    try:
        link.click()
    except Exception as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return [{"check": "phone-menu", "detail": f"a section in the \u2637 drawer cannot be tapped: {msg[:150]}"}]
    state = {}
    for _ in range(10):
        time.sleep(0.1)
        state = driver.execute_script(DRAWER_AFTER_JS)
        if not state["open"]:
            break
    out = []
    if state.get("open"):
        out.append({"check": "phone-menu",
                    "detail": f"the \u2637 drawer stays open over the text after choosing the section {target}"})
    if state.get("hash") != target:
        out.append({"check": "phone-menu", "detail": f"choosing {target} in the \u2637 drawer went to {state.get('hash')!r}"})
    return out


_FILE_NAME_ALT = re.compile(r"(\.(png|jpe?g|gif|svg|webp)\b)|(^[0-9a-f]{12,})|(_images/)|(^\.\./)", re.I)


def _own_path(site: pathlib.Path, base: str, url: str) -> pathlib.Path | None:
    if not url.startswith(base):
        return None
    return site / unquote(urlsplit(url).path.lstrip("/"))


def check_images(site: pathlib.Path, base: str, images: list[dict]) -> list[dict]:
    out = []
    for im in images:
        name = pathlib.PurePosixPath(urlsplit(im["src"]).path).name
        what = f"{im['label'] or name}"
        alt = (im["alt"] or "").strip()
        if not alt:
            out.append({"check": "alt-text", "detail": f"{what}: no alt text"})
        elif _FILE_NAME_ALT.search(alt):
            out.append({"check": "alt-text", "detail": f"{what}: alt text is a file name ({alt[:50]})"})
        elif len(alt.split()) < MIN_ALT_WORDS:
            out.append({"check": "alt-text", "detail": f"{what}: alt text too short ({alt!r})"})
        nat = im["naturalWidth"]
        if not nat:
            out.append({"check": "figure-scale", "detail": f"{what}: image did not load"})
            continue
        path = _own_path(site, base, im["src"])
        dpi = png_dpi(path) if path is not None else None
        intended = nat * 96.0 / dpi if dpi else float(nat)
        scale = im["width"] / intended
        if im["width"] > 0 and scale < MIN_SCALE - 1e-9:
            out.append({
                "check": "figure-scale",
                "detail": f"{what}: shown at {scale:.2f} of its size ({im['width']:.0f} of {intended:.0f} px"
                + (f", {nat} px at {dpi:.0f} dpi" if dpi else "")
                + ")",
            })
    return out


_ID_CACHE: dict[pathlib.Path, set[str] | None] = {}


def check_links(site: pathlib.Path, links: list[str]) -> list[dict]:
    out = []
    for link in sorted(set(links)):
        path_s, _, anchor = link.partition("#")
        path = site / unquote(path_s.lstrip("/"))
        if path.is_dir():
            path = path / "index.html"
        if not path.exists():
            out.append({"check": "unresolved", "detail": f"link to missing file {link}"})
            continue
        if anchor and path.suffix == ".html":
            if path not in _ID_CACHE:
                _ID_CACHE[path] = set(re.findall(r'\b(?:id|name)="([^"]+)"', path.read_text(errors="replace")))
            if unquote(anchor) not in _ID_CACHE[path]:
                out.append({"check": "unresolved", "detail": f"link to missing anchor {link}"})
    return out


def console_findings(driver, base: str) -> list[dict]:
    out = []
    try:
        entries = driver.get_log("browser")
    except Exception:  # pragma: no cover - driver without log support
        return out
    for e in entries:
        if e.get("level") != "SEVERE":
            continue
        msg = e.get("message", "")
        first = msg.split(" ", 1)[0]
        if first.startswith(("http://", "https://")) and not first.startswith(base):
            continue  # an external URL (never reached: the browser is offline)
        out.append({"check": "console", "detail": msg.replace(base, "/")[:300]})
    return out


# ----------------------------------------------------------------------------- driver
def check_site(
    site: pathlib.Path,
    pages: list[str] | None = None,
    phone: bool = False,
    log=print,
    widths: dict | None = None,
    stats: list | None = None,
) -> list[dict]:
    """Check every page; return the findings as a list of dicts ``page``/``check``/``detail``.

    With ``phone``, every page is checked again in a 390 px window, and its ☰ and ☷ buttons
    are tapped. ``widths``, when given, receives each page's document width at 390 px;
    ``stats``, when given, receives one dict per page and width: the inline formulas measured,
    those that scroll inside their box and those cut off.
    """
    import tempfile

    site = pathlib.Path(site).resolve()
    pages = toc_pages() if pages is None else pages
    findings: list[dict] = []
    missing = [p for p in pages if not (site / f"{p}.html").exists()]
    for p in missing:
        findings.append({"page": p, "check": "missing-page", "detail": f"{p}.html not in the build"})
    site_pdf = (site / "book.pdf").is_file()
    with SiteServer(site) as server, tempfile.TemporaryDirectory(prefix="check-site-") as profile:
        driver = start_browser(profile)
        try:
            runs = [(p, False) for p in pages if p not in missing]
            if phone:
                runs += [(p, True) for p in pages if p not in missing]
            current = None
            for page, is_phone in runs:
                if current != is_phone:
                    w, h = PHONE if is_phone else DESKTOP
                    set_viewport(driver, w, h, is_phone)
                    current = is_phone
                t0 = time.perf_counter()
                driver.get_log("browser")  # drop what earlier pages logged late
                try:
                    driver.get(server.url + f"{page}.html")
                    result = driver.execute_async_script(PAGE_JS, is_phone, PHONE[0], site_pdf)
                    if is_phone:
                        result["findings"] += tap_menus(driver)
                except Exception as exc:  # a timeout or a crashed tab: a finding, not the end of the run
                    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    result = {"findings": [{"check": "load", "detail": f"page did not finish: {msg[:200]}"}],
                              "images": [], "links": [], "info": {}}
                page_findings = list(result["findings"])
                if not is_phone:
                    page_findings += check_images(site, server.url, result["images"])
                    page_findings += check_links(site, result["links"])
                page_findings += console_findings(driver, server.url)
                width = PHONE[0] if is_phone else DESKTOP[0]
                info = result.get("info", {})
                if stats is not None:
                    stats.append({"page": page, "width": width,
                                  **{k: info.get(k) for k in ("inlineMath", "scrollMath", "clippedMath")}})
                label = f"{page} @{width}px"
                if is_phone:
                    # at phone width, code and maths scroll inside their boxes: reported, not a finding
                    page_findings = [f for f in page_findings if f["check"] != "too-wide"]
                for f in page_findings:
                    findings.append({"page": page, "width": PHONE[0] if is_phone else DESKTOP[0], **f})
                note = ""
                if is_phone:
                    doc_width = result["info"].get("docWidth")
                    if widths is not None and doc_width is not None:
                        widths[page] = doc_width
                    note = f" (width {doc_width} px; {result['info'].get('wideBlocks', 0)} blocks scroll inside)"
                if info.get("inlineMath"):
                    note += (f" [inline maths {info['inlineMath']}: {info.get('scrollMath', 0)} scroll,"
                             f" {info.get('clippedMath', 0)} cut off]")
                log(f"{label:70s} {len(page_findings):3d} finding(s){note}  {time.perf_counter() - t0:5.1f} s")
        finally:
            cpu = browser_cpu_seconds(driver)
            if cpu is not None:
                log(f"browser CPU time (chromedriver + chromium processes still running): {cpu:.1f} s")
            driver.quit()
    return findings


def format_findings(findings: list[dict]) -> str:
    lines, last = [], None
    for f in findings:
        key = (f["page"], f.get("width"))
        if key != last:
            lines.append(f"\n{f['page']} @{f.get('width', DESKTOP[0])}px")
            last = key
        lines.append(f"  [{f['check']}] {f['detail']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("site", nargs="?", default=str(ROOT / "_build" / "html"), help="the built HTML folder")
    ap.add_argument("--phone", action="store_true", help="also every page at 390 px, tapping its menu buttons")
    ap.add_argument("--widths", help="write each page's document width at 390 px to this JSON file")
    ap.add_argument("--pages", action="append", help="only pages matching this glob (repeatable), e.g. 'book/*'")
    ap.add_argument("--json", help="write the findings to this file")
    ap.add_argument("--stats", help="write the inline-maths counts of every page and width to this JSON file")
    args = ap.parse_args(argv)
    site = pathlib.Path(args.site)
    if not (site / "index.html").exists():
        print(f"no built site at {site} (run jupyter-book build first)", file=sys.stderr)
        return 2
    if (why := browser_missing()) is not None:
        print(f"cannot start a browser: {why}", file=sys.stderr)
        return 2
    pages = toc_pages()
    if args.pages:
        pages = [p for p in pages if any(fnmatch.fnmatch(p, g) for g in args.pages)]
    t0 = time.perf_counter()
    widths: dict[str, int] = {}
    stats: list[dict] = []
    findings = check_site(site, pages, phone=args.phone, widths=widths, stats=stats)
    if args.stats:
        pathlib.Path(args.stats).write_text(json.dumps(stats, indent=1))
    for width in sorted({s["width"] for s in stats}):
        rows = [s for s in stats if s["width"] == width]
        clipped = [s for s in rows if s["clippedMath"]]
        print(f"inline maths at {width} px: {sum(s['inlineMath'] or 0 for s in rows)} formulas, "
              f"{sum(s['scrollMath'] or 0 for s in rows)} scroll inside their box, "
              f"{sum(s['clippedMath'] or 0 for s in rows)} cut off on {len(clipped)} of {len(rows)} pages")
    if args.widths:
        pathlib.Path(args.widths).write_text(json.dumps(widths, indent=1))
    if widths:
        wide = {p: w for p, w in widths.items() if w > PHONE[0] + 1}
        print(f"phone: {len(wide)} of {len(widths)} pages wider than {PHONE[0]} px"
              + (": " + ", ".join(f"{p} {w}" for p, w in wide.items()) if wide else ""))
    elapsed = time.perf_counter() - t0
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(findings, indent=1))
    if findings:
        print(format_findings(findings))
    by_check: dict[str, int] = {}
    for f in findings:
        by_check[f["check"]] = by_check.get(f["check"], 0) + 1
    summary = ", ".join(f"{k} {v}" for k, v in sorted(by_check.items())) or "none"
    print(f"\n{len(pages)} pages checked in {elapsed:.1f} s; {len(findings)} finding(s): {summary}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
