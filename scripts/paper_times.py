"""Paper-size run times of the book's notebooks: measure them, or extrapolate them from the presets.

Measure (hours on a 2-core machine; run it on the machine you want numbers for, alone):

    python scripts/paper_times.py --measure [--jobs 2] [--timeout 36000] [NOTEBOOK ...]

runs each notebook with ``python -m seqrmt.paper`` semantics (:func:`seqrmt.paper.run_paper`, into
``_build/paper/``, never in place) and writes ``_build/paper/paper_times.json`` and a Markdown table
with the measured wall time, the worker count, the machine (CPU count, GPU) and the load average
before and after each notebook (other processes slow a run; report the load with the time).

Estimate (instant, nothing run):

    python scripts/paper_times.py --estimate [--write]

(``--write`` also rewrites ``book/appendix/paper_times_table.md``, which the instructors' page includes)
reads every ``preset(book=..., paper=...)`` of each notebook (statically, with :mod:`ast`) and the
book-size time measured by CI (``book/appendix/timings_table.md``), and prints an EXTRAPOLATION:
book-size time x the largest cost ratio of one code cell, the product over the integer presets
assigned in that cell of their ratios, where a count (trials, seeds, steps, epochs, layers) costs its
ratio and a matrix dimension costs its ratio cubed (dense eigen/SVD work). It assumes that the whole
book-size time scales like that cell: an order of magnitude, not a measurement (too high when the
cell is a small part of the time, too low when presets of different cells multiply).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import pathlib
import platform
import re
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
TABLE = ROOT / "book" / "appendix" / "timings_table.md"
OUT = ROOT / "_build" / "paper" / "paper_times.json"
PAGE = ROOT / "book" / "appendix" / "paper_times_table.md"
#: preset names that are matrix dimensions (cost ~ ratio**3); every other numeric preset is a count
DIMENSION = re.compile(r"^(d|p|n|d_\w+|[pq]_[a-z]|n_[kas]|sizes)$")
#: notebooks whose paper preset needs (or uses) a GPU, and why
GPU = {
    "part3_ntp_geometry/05_transformer_and_ufm":
        "yes: the paper preset trains on CUDA when available (device=None)",
    "part2_bilinear_regression/06_gradient_descent":
        "advised: the notebook's text suggests a GPU (device=None in its GD calls); its code runs on the CPU",
}
#: the estimate shown where the preset rule misses the main cost (explained in NOTES)
ESTIMATE_OVERRIDE = {
    "part3_ntp_geometry/05_transformer_and_ufm": "about 7 h (CPU)",
    "part4_sgd_rmt/05_gpt_weight_spectra": "about 10 min",
}
#: better-founded numbers than the preset rule, where one exists (still not a paper-size run)
NOTES = {
    "part2_bilinear_regression/06_gradient_descent":
        "at most about 19-21 h on one CPU core: 21-24 ms per gradient step of one student at the paper's d = 100 "
        "(measured twice on 2026-11-27, core shared, by benchmarks/gd_paper_step_time.py: the difference of a 200- and a 400-step run of "
        "`bsr.gd_on_independent_data`, one core) x 64 students x at most 50,000 steps (fewer where a "
        "student meets the tolerance; extrapolated)",
    "part3_ntp_geometry/05_transformer_and_ufm":
        "about 7 h on 2 CPU cores: 0.86 s per epoch measured for the paper model x 30,000 epochs "
        "(reader test, 2026-11-26; extrapolated)",
    "part4_sgd_rmt/05_gpt_weight_spectra":
        "RETRAIN = True retrains the GPT on the CPU: 'about 10 min of one core' per the notebook's "
        "comment (not measured here)",
}


RUNS = ROOT / "book" / "appendix" / "paper_runs"


def measured_runs(runs=RUNS):
    """Paper-size runs stored by ``scripts/paper_results.py collect``: ``{key: record}``."""
    out = {}
    for path in sorted(runs.glob("*.json")):
        rec = json.loads(path.read_text())
        out[str(pathlib.PurePosixPath(rec["notebook"]).relative_to("notebooks").with_suffix(""))] = rec
    return out


def book_times(table=TABLE):
    """Seconds per notebook from the CI timings table (``{relative path without .ipynb: s}``)."""
    out = {}
    for line in table.read_text().splitlines():
        m = re.match(r"\|\s*([\d.]+)\s*\|.*\{doc\}`/notebooks/([^`]+)`", line)
        if m:
            out[m.group(2)] = float(m.group(1))
    return out


def _literal(node):
    """The value of a constant expression (numbers, tuples, ``10**5``, ``range(...)``), else None."""
    try:
        return eval(compile(ast.Expression(node), "<preset>", "eval"), {"__builtins__": {}, "range": range})
    except Exception:  # noqa: BLE001 - anything that is not a constant expression
        return None


def _size(v):
    """An integer preset's magnitude: the int, or the largest int of a short tuple/list; else None."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return float(v)
    if isinstance(v, (tuple, list)) and v and all(isinstance(x, int) for x in v):
        return float(max(v)) if len(v) <= 4 else float(len(v))
    return None


def presets(notebook):
    """``[(name, book, paper, ratio, kind, cell)]`` for every ``preset(book=..., paper=...)`` of a notebook."""
    nb = json.loads(pathlib.Path(notebook).read_text())
    rows = []
    for i_cell, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"])
        try:
            tree = ast.parse("\n".join(line for line in src.splitlines() if not line.lstrip().startswith(("%", "!"))))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    targets += [e.id for e in t.elts if isinstance(e, ast.Name)] if isinstance(t, ast.Tuple) else \
                        [getattr(t, "id", "?")]
                targets = targets or ["?"]
                values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
                pairs = list(zip(targets, values)) if len(targets) == len(values) else [(targets[0], node.value)]
            elif isinstance(node, ast.keyword):
                pairs = [(node.arg, node.value)]
            else:
                continue
            for name, value in pairs:
                calls = [value] if isinstance(value, ast.Call) else [c for c in ast.walk(value) if isinstance(c, ast.Call)]
                for call in calls:
                    if getattr(call.func, "id", getattr(call.func, "attr", "")) != "preset":
                        continue
                    kw = {k.arg: _literal(k.value) for k in call.keywords}
                    b, p = _size(kw.get("book")), _size(kw.get("paper"))
                    if b and p:
                        kind = "dimension" if DIMENSION.match(str(name)) else "count"
                        rows.append((str(name), kw["book"], kw["paper"], p / b, kind, i_cell))
                    else:
                        rows.append((str(name), kw.get("book"), kw.get("paper"), None, "other", i_cell))
    return rows


def estimate(notebook, book_seconds):
    """Book-size seconds x the largest per-cell product of preset cost ratios (count: r, dimension: r**3)."""
    cells = {}
    for _, _, _, r, kind, cell in presets(notebook):
        if r:
            cells[cell] = cells.get(cell, 1.0) * (r if kind == "count" else r**3)
    factor = max(cells.values(), default=1.0)
    return factor, None if book_seconds is None else book_seconds * factor


def _fmt(s):
    if s is None:
        return "?"
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.0f} min" if s < 7200 else f"{s / 3600:.1f} h"


def _notebooks(args):
    if args:
        return [pathlib.Path(a) for a in args]
    return sorted((ROOT / "notebooks").glob("part*/*.ipynb"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--measure", action="store_true", help="run the notebooks at paper size and time them")
    mode.add_argument("--estimate", action="store_true", help="extrapolate from the presets (nothing runs)")
    ap.add_argument("notebooks", nargs="*")
    ap.add_argument("--jobs", type=int, default=None, help="SEQRMT_JOBS of the runs")
    ap.add_argument("--timeout", type=float, default=None, help="limit per cell in seconds")
    ap.add_argument("--write", action="store_true", help=f"with --estimate: rewrite {PAGE.relative_to(ROOT)}")
    args = ap.parse_args(argv)
    book = book_times()
    if args.estimate:
        page, runs = [], measured_runs()
        print("EXTRAPOLATION from the presets, not a measurement: book-size time (CI) x largest per-cell "
              "product of preset cost ratios (count r, dimension r^3)")
        print("| notebook | book size (measured) | presets paper/book | factor | paper size (estimate) | GPU | note |")
        print("|---|---:|---|---:|---:|---|---|")
        for nb in _notebooks(args.notebooks):
            key = str(nb.resolve().relative_to(ROOT / "notebooks").with_suffix(""))
            rows = presets(nb)
            factor, est = estimate(nb, book.get(key))
            desc = ", ".join(f"{n} x{r:.3g}" + ("^3" if k == "dimension" else "") for n, _, _, r, k, _ in rows
                             if r and r != 1) or "none"
            other = [n for n, _, _, r, k, _ in rows if k == "other"]
            if other:
                desc += "; not counted: " + ", ".join(other)
            print(f"| {key} | {_fmt(book.get(key))} | {desc} | {factor:.3g} | {_fmt(est)} | "
                  f"{GPU.get(key, 'no')} | {NOTES.get(key, '')} |")
            run = runs.get(key)
            single = not any(r and r != 1 for _, _, _, r, _, _ in rows) and not other
            paper = (f"**{_fmt(run['seconds'])}** measured, {run['jobs']} worker(s)" if run else
                     "book size (no paper preset)" if single else
                     f"{ESTIMATE_OVERRIDE.get(key, _fmt(est))} (estimate)")
            page.append(f"| {_fmt(book.get(key))} | {paper} | {GPU.get(key, 'no').split(':')[0]} | "
                        f"{{doc}}`/notebooks/{key}` {NOTES.get(key, '') if not run else ''} |")
        if args.write:
            PAGE.write_text(
                "<!-- generated by scripts/paper_times.py --estimate --write; do not edit -->\n"
                "| book size (measured) | paper size | GPU | section, note |\n"
                "|---:|---:|:---:|---|\n" + "\n".join(page) + "\n\n"
                "Book size: the CI run above. Paper size, **measured**: the wall time of "
                "`python -m seqrmt.paper` on the machine, with the worker count, given with each run in "
                "{doc}`/book/appendix/paper_results`"
                + (f" ({machines})" if (machines := "; ".join(sorted({r['machine'] for r in runs.values()})))
                   else "") + ". "
                "Paper size, **estimate** (not measured): an extrapolation from the "
                "`preset(book=..., paper=...)` calls of each notebook: the book-size time times the largest "
                "cost ratio of one code cell (the product of its presets' ratios, a count costing its ratio "
                "and a matrix dimension its ratio cubed). An order of magnitude only: "
                "`python scripts/paper_times.py --measure` measures it.\n")
            print(f"written to {PAGE}")
        return 0
    import joblib

    from seqrmt.paper import run_paper

    try:
        import torch

        gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    except ImportError:
        gpu = "torch not installed"
    machine = {"cpus": os.cpu_count(), "available_cpus": joblib.cpu_count(), "gpu": gpu,
               "platform": platform.platform(), "python": platform.python_version(),
               "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    results = []
    for nb in _notebooks(args.notebooks):
        load0 = os.getloadavg()
        r = run_paper(nb, timeout=args.timeout, jobs=args.jobs, stream=False)
        r["load_before"], r["load_after"] = load0, os.getloadavg()
        results.append(r)
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(json.dumps({"machine": machine, "runs": results}, indent=1))
    print(f"MEASURED paper-size times on {machine}")
    print("| notebook | paper size (measured) | workers | load average before / after | status |")
    print("|---|---:|---:|---|---|")
    for r in results:
        print(f"| {r['notebook']} | {_fmt(r['seconds'])} | {r['jobs']} | {r['load_before'][0]:.1f} / "
              f"{r['load_after'][0]:.1f} | {'failed: ' + r['error'] if r['error'] else 'ok'} |")
    print(f"written to {OUT}")
    return 1 if any(r["error"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
