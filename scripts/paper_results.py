"""The appendix page "Results at paper size", from real paper-size runs.

    python -m seqrmt.paper --jobs 2 notebooks/part5_frontiers/03_icl_alignment.ipynb   # the run
    python scripts/paper_results.py collect [--paper-dir _build/paper] [--machine TEXT] [NOTEBOOK ...]
    python scripts/paper_results.py page

``collect`` reads each executed paper-size notebook under ``--paper-dir`` (written by
:mod:`seqrmt.paper`, which records the scale, the workers and the time in the notebook's
metadata) next to the committed book-size notebook, and stores in
``book/appendix/paper_runs/<part>--<name>.json`` the run (command, date, machine, workers, time,
commit) and every number the chapter's prose glues (``{glue:text}``) at both sizes, with the words
before it in the text; its figures go to ``book/appendix/paper_runs/<part>--<name>-<k>.png``.
Nothing is typed: every value comes from the two notebooks' outputs. A run that failed is not
collected.

``page`` writes ``book/appendix/paper_results.md`` from the stored runs (a summary table, and per
chapter the run, the numbers book size against paper size, and the paper-size figures).
"""

from __future__ import annotations

import argparse
import base64
import datetime
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
RUNS = ROOT / "book" / "appendix" / "paper_runs"
PAGE = ROOT / "book" / "appendix" / "paper_results.md"
GLUE_ROLE = re.compile(r"\{glue:text\}`([A-Za-z0-9_]+)(?::([^`]*))?`")
ROLE = re.compile(r"\{([a-z:]+)\}`([^`]*)`")
FENCE_OPEN = re.compile(r"^(\s*)(`{3,}|:{3,})\{solution\}")
SENTENCE_END = re.compile(r"(?<=[.;:!?])\s+(?=[A-Z(*$])|\n\s*\n|\n\s*[-*] |\n#+ ")
SNIPPET_WORDS = 14


def _strip_solutions(text):
    """The markdown without its ``{solution}`` blocks (the student edition has none)."""
    out, closing = [], None
    for line in text.splitlines():
        if closing is not None:
            if line.strip() == closing:
                closing = None
            continue
        m = FENCE_OPEN.match(line)
        if m:
            closing = m.group(2)
            continue
        out.append(line)
    return "\n".join(out)


def _glued(nb):
    """``{name: value}`` of every value the notebook glues (the stored plain-text form)."""
    values = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            meta = out.get("metadata", {}).get("scrapbook")
            if meta:
                prefix = meta.get("mime_prefix", "")
                text = out.get("data", {}).get(prefix + "text/plain")
                if text is not None:
                    values[meta["name"]] = text
    return values


def _value(text):
    """A glued plain-text value as a Python number or string."""
    try:
        return json.loads(text) if text[:1] not in "'\"" else text[1:-1]
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text.strip("'\"")


def _fmt(value, spec):
    if spec and isinstance(value, (int, float)):
        try:
            return format(value, spec)
        except ValueError:
            pass
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


KEEP_ROLES = ("prf:ref", "numref", "ref", "eq", "doc", "math")
DIRECTIVE_LINE = re.compile(r"^\s*(`{3,}|:{3,}|:[a-z-]+:)")


def _plain(text):
    """A prose sentence as one line of Markdown for this page (``None`` if it cannot stand alone).

    Citations go, cross-references stay (they resolve anywhere in the book), directive fences and
    options go; a sentence with display maths or a formula cut in half is refused.
    """
    text = "\n".join(line for line in text.splitlines() if not DIRECTIVE_LINE.match(line))
    if "$$" in text or "\\begin" in text or re.sub(r"\\\$", "", text).count("$") % 2:
        return None

    def role(m):
        kind = m.group(1)
        if kind.startswith(("cite", "footcite")):
            return ""
        if kind == "math":
            return f"${m.group(2)}$"
        return m.group(0) if kind in KEEP_ROLES else m.group(2)

    text = ROLE.sub(role, text)
    text = re.sub(r"^\s*(?:[-*+>]|\d+\.|#+)\s+", "", text)
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([.,;:])", r"\1", text)
    if text.count("**") % 2 or text.count("`") % 2:
        text = text.replace("**", "")
    return text or None


def _sentences(nb):
    """Every prose sentence (outside solutions) that quotes glued numbers.

    Returns ``[(text, [(name, format spec), ...])]``: ``text`` holds ``⟦k⟧`` where the k-th
    number stood.
    """
    found = []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        text = _strip_solutions(cell.source)
        if not GLUE_ROLE.search(text):
            continue
        bounds = [0] + [m.end() for m in SENTENCE_END.finditer(text)] + [len(text)]
        for a, b in zip(bounds, bounds[1:]):
            piece = text[a:b]
            names = [(m.group(1), m.group(2) or "") for m in GLUE_ROLE.finditer(piece)]
            if not names:
                continue
            k = iter(range(len(names)))
            marked = GLUE_ROLE.sub(lambda m: f"⟦{next(k)}⟧", piece)
            plain = _plain(marked)
            if plain is not None:
                found.append((plain, names))
    return found


MAX_PRINTED_LINES = 30


def _stdout(cell):
    return "".join("".join(o.get("text", "")) for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream" and o.get("name") == "stdout")


def _printed(book, run):
    """The printed output of every code cell whose text differs between the two sizes.

    Returns ``(cells, changed)``: ``changed`` counts the code cells whose source is no longer the
    one the paper run executed (the chapter was edited after the run); those are not compared.
    """
    out, changed = [], 0
    code_b = [c for c in book.cells if c.cell_type == "code"]
    code_r = [c for c in run.cells if c.cell_type == "code"]
    by_source = {c.source: c for c in code_r}
    for k, b in enumerate(code_b, 1):
        r = by_source.get(b.source)
        if r is None:
            changed += 1
            continue
        if "remove-cell" in b.metadata.get("tags", []):
            continue
        tb, tr = _stdout(b), _stdout(r)
        if tb.strip() and tr.strip() and tb != tr:
            clip = lambda t: "\n".join(t.rstrip("\n").splitlines()[:MAX_PRINTED_LINES])
            first = next((line for line in b.source.splitlines() if line.strip()), "")
            out.append({"cell": k, "first_line": first[:70], "book": clip(tb), "paper": clip(tr)})
    return out, changed


def _title(nb):
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return ""


def _commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def collect(notebooks, paper_dir, machine, commit, command):
    """Store the run record and figures of each executed paper-size notebook; returns the count."""
    import nbformat

    RUNS.mkdir(parents=True, exist_ok=True)
    stored = 0
    for rel in notebooks:
        rel = pathlib.Path(rel)
        run_path = pathlib.Path(paper_dir) / rel
        if not run_path.is_file():
            print(f"skip {rel}: no paper run at {run_path}")
            continue
        run = nbformat.read(run_path, as_version=4)
        book = nbformat.read(ROOT / rel, as_version=4)
        meta = run.metadata.get("seqrmt_paper", {})
        if meta.get("scale") != "paper" or meta.get("error"):
            print(f"skip {rel}: scale {meta.get('scale')!r}, error {meta.get('error')!r}")
            continue
        key = f"{rel.parent.name}--{rel.stem}"
        if not _has_paper_preset(ROOT / rel):
            for old in [*RUNS.glob(key + "-*.png"), *RUNS.glob(key + ".json")]:
                old.unlink()
            print(f"skip {rel}: no paper preset (one size only)")
            continue
        for old in RUNS.glob(key + "-*.png"):
            old.unlink()
        figures, k = [], 0
        for cell in run.cells:
            if cell.cell_type != "code":
                continue
            label = cell.metadata.get("mystnb", {}).get("figure", {}).get("name")
            for out in cell.get("outputs", []):
                png = out.get("data", {}).get("image/png")
                if png and label:
                    k += 1
                    name = f"{key}-{k}.png"
                    (RUNS / name).write_bytes(base64.b64decode(png))
                    figures.append({"file": name, "label": label})
        book_values, paper_values = _glued(book), _glued(run)
        numbers = []
        for text, names in _sentences(book):
            if all(n in book_values and n in paper_values for n, _ in names):
                numbers.append({"text": text, "names": [n for n, _ in names],
                                "book": [_fmt(_value(book_values[n]), f) for n, f in names],
                                "paper": [_fmt(_value(paper_values[n]), f) for n, f in names]})
        printed, changed = _printed(book, run)
        if not changed and not printed and all(n["book"] == n["paper"] for n in numbers):
            for fig in figures:  # the book's own figures: not stored twice
                (RUNS / fig["file"]).unlink()
            figures = []
        stamp = meta.get("date") or datetime.datetime.fromtimestamp(
            run_path.stat().st_mtime, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        record = {"notebook": str(rel), "title": _title(book),
                  "command": meta.get("command") or command.format(notebook=rel, jobs=meta.get("jobs")),
                  "date": stamp, "machine": meta.get("machine") or machine, "jobs": meta.get("jobs"),
                  "seconds": meta.get("seconds"), "commit": meta.get("commit") or commit,
                  "numbers": numbers, "figures": figures, "printed": printed,
                  "changed_cells": changed}
        (RUNS / f"{key}.json").write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
        stored += 1
        print(f"stored {rel}: {len(numbers)} numbers, {len(figures)} figures, {meta.get('seconds')} s")
    return stored


def _duration(seconds):
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def _has_paper_preset(notebook):
    """Whether any ``preset(book=..., paper=...)`` of the notebook gives different values."""
    from paper_times import presets  # same folder

    return any(book != paper for _, book, paper, *_ in presets(notebook))


def _identical(r):
    """A run whose prose numbers and printed output are the book's (no paper preset changes them)."""
    return (not r.get("changed_cells") and not r.get("printed")
            and all(n["book"] == n["paper"] for n in r["numbers"]))


def page():
    """Write the appendix page from the stored records; returns the number of chapters on it."""
    records = sorted((json.loads(p.read_text()) for p in RUNS.glob("*.json")), key=lambda r: r["notebook"])
    lines = ["<!-- generated by scripts/paper_results.py page; do not edit -->",
             "# Results at paper size", "",
             "Every chapter runs at a reduced *book* size so that it finishes in a minute on a laptop, and "
             "says where that size leaves a finite-size gap. This page shows the same notebooks run at "
             "the papers' size (`SEQRMT_SCALE=paper`, the `paper` value of every `preset`), with the same "
             "code and seeds, by",
             "",
             "```bash",
             "python -m seqrmt.paper --jobs 1 notebooks/<part>/<chapter>.ipynb",
             "python scripts/paper_results.py collect",
             "python scripts/paper_results.py page",
             "```",
             "",
             "The first command writes the executed copy to `_build/paper/` and never touches the book's "
             "committed outputs; the second copies the numbers the chapter's prose quotes and the "
             "figures of that run here. Each number below is read from the two runs' outputs: the "
             "book-size value as the chapter prints it, the paper-size value from the same line of code. "
             "Where a value is a Monte Carlo estimate, its error bar is the one the chapter prints "
             "next to it. The words are the chapter's, written for its book size: where a sentence "
             "names a size, the paper-size run used the chapter's `paper` preset instead, and a "
             "qualitative claim made for the book size need not hold at the other size.",
             "",
             "| chapter | paper-size run time | workers | date |",
             "|---|---:|---:|---|"]
    for r in records:
        page_ref = "/" + r["notebook"].removesuffix(".ipynb")
        lines.append(f"| {{doc}}`{page_ref}` | {_duration(r['seconds'])} | {r['jobs']} | {r['date']} |")
    lines += ["", "Machines and commits are given with each run below. Chapters not listed take "
              "longer at paper size than this page's runs allowed (see {doc}`/book/instructors` for "
              "the estimates), or need a GPU.", ""]
    single = [p for p in sorted((ROOT / "notebooks").glob("part*/*.ipynb")) if not _has_paper_preset(p)]
    if single:
        lines += ["These chapters have no `paper` preset: they run at one size only, so they have no "
                  "paper-size run: " + ", ".join(
                      f"{{doc}}`/{p.relative_to(ROOT).with_suffix('').as_posix()}`" for p in single) + ".", ""]
    same = [r for r in records if _identical(r)]
    if same:
        lines += ["In these chapters the `paper` preset changes nothing the chapter prints: their paper-size "
                  "run reproduced the book's printed output and the numbers its prose quotes, so they are not repeated below: "
                  + ", ".join(f"{{doc}}`/{r['notebook'].removesuffix('.ipynb')}`" for r in same) + ".", ""]
    for r in records:
        if _identical(r):
            continue
        page_ref = "/" + r["notebook"].removesuffix(".ipynb")
        lines += [f"## {r['title']}", "",
                  f"Chapter: {{doc}}`{page_ref}`. Run: `{r['command']}` on {r['machine']}, "
                  f"{r['date']}, commit `{r['commit']}`, {r['jobs']} worker(s): "
                  f"**{_duration(r['seconds'])}**.", ""]
        if r.get("changed_cells"):
            lines += [f"{r['changed_cells']} code cell(s) of the chapter were edited after this run; "
                      "their output is not compared below (the numbers of the prose are those of the "
                      "current chapter at book size and of the run at paper size).", ""]
        changed = [n for n in r["numbers"] if n["book"] != n["paper"]]
        if changed:
            lines += ["The chapter's sentences whose numbers depend on the size, each number as "
                      "*book size* → **paper size**:", ""]
            for n in changed:
                text = n["text"]
                for k, (b, p) in enumerate(zip(n["book"], n["paper"])):
                    text = text.replace(f"⟦{k}⟧", f"*{b}* → **{p}**" if b != p else b)
                lines += [f"- {text}", ""]
        same = len(r["numbers"]) - len(changed)
        if same:
            lines += [f"{same} more sentence(s) quote numbers that are the same at both sizes "
                      "(theory at fixed parameters, or a size-independent setting).", ""]
        if r.get("printed"):
            lines += ["::::{admonition} Printed output, book size and paper size",
                      ":class: dropdown seqrmt-printed", "",
                      "Every code cell of the chapter whose printed output differs between the two "
                      "sizes (at most the first " + str(MAX_PRINTED_LINES) + " lines of each).", ""]
            for p in r["printed"]:
                lines += [f"Code cell {p['cell']} (`{p['first_line'].replace('`', '')}`), book size:", "",
                          "```text", p["book"], "```", "", "paper size:", "", "```text", p["paper"], "```", ""]
            lines += ["::::", ""]
        for f in r["figures"]:
            lines += [f"```{{image}} paper_runs/{f['file']}",
                      f":alt: The figure {f['label']} of the chapter, redrawn from the paper-size run.",
                      ":width: 100%",
                      "```", "",
                      f"*Above: {{numref}}`{f['label']}` of the chapter, at the papers' size "
                      "(same code, `SEQRMT_SCALE=paper`).*", ""]
    PAGE.write_text("\n".join(lines).rstrip() + "\n")
    return len(records)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    c = sub.add_parser("collect", help="store the runs found under --paper-dir")
    c.add_argument("notebooks", nargs="*", help="default: every notebook of the book")
    c.add_argument("--paper-dir", default=str(ROOT / "_build" / "paper"))
    c.add_argument("--machine", default=None, help="where the runs ran (default: this machine)")
    c.add_argument("--commit", default=None, help="the commit the runs ran at (default: HEAD)")
    c.add_argument("--command", default="python -m seqrmt.paper --jobs {jobs} {notebook}")
    sub.add_parser("page", help="write book/appendix/paper_results.md")
    args = parser.parse_args(argv)
    if args.what == "collect":
        import os

        from seqrmt.paper import cpu_model
        nbs = args.notebooks or sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("notebooks/part*/*.ipynb"))
        machine = args.machine or f"{cpu_model()} ({os.cpu_count()} CPUs)"
        n = collect(nbs, args.paper_dir, machine, args.commit or _commit(), args.command)
        print(f"{n} run(s) stored in {RUNS}")
    else:
        print(f"wrote {PAGE} ({page()} chapters)")
    return 0


sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # paper_times, one_core_times

if __name__ == "__main__":
    sys.exit(main())
