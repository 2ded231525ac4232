"""``scripts/timings.py``: notebook runs at paper size and on one core, and the pages made from them.

* ``paper`` on tiny generated notebooks (a Jupyter kernel starts for each run): a copy in
  ``_build/paper/``, never in place, with its run record; exit status 1 on a failed or timed-out
  cell, 2 on bad arguments;
* ``collect`` and ``write`` on a small book of their own (hand-written notebooks, no kernel):
  the values side by side, never the chapter's sentences; a run of an earlier version of its
  chapter shown as stale, without numbers; "not measured", never an estimate;
* the committed pages are what ``write`` makes from the committed records.
"""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import warnings

import pytest

nbformat = pytest.importorskip("nbformat")

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "timings.py"


def _load():
    spec = importlib.util.spec_from_file_location("timings", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tm = _load()


def _notebook(path, cells):
    """A notebook of markdown (str starting with '#' or 'md:') and code cells."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell("# A tiny chapter")] + [
        nbformat.v4.new_markdown_cell(c[3:]) if c.startswith("md:") else nbformat.v4.new_code_cell(c)
        for c in cells]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def _cli(cwd, *args, env=None):
    full_env = {**os.environ, **(env or {})}
    for name in ("SEQRMT_JOBS", "CI", "SEQRMT_SCALE"):
        full_env.pop(name, None)
    full_env["PYTHONPATH"] = str(ROOT / "lib") + os.pathsep + full_env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=300)


# ----------------------------------------------------------------------------- paper: the runner
def test_paper_run_writes_a_copy_with_its_record(tmp_path):
    src = _notebook(tmp_path / "notebooks" / "part9" / "tiny.ipynb", [
        "import os\nfrom seqrmt.runtime import preset\nprint('scale', os.environ['SEQRMT_SCALE'], "
        "preset(book=1, paper=2))",
        "from seqrmt.ensemble import n_jobs\nprint('jobs', n_jobs())"])
    before = src.read_bytes()
    proc = _cli(tmp_path, "paper", "notebooks/part9/tiny.ipynb", "--jobs", "2", "--timeout", "120")
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr
    assert "ensemble workers: 2 (SEQRMT_JOBS=2)" in err and "CPU(s) available" in err
    assert "cell 1/2" in err and "cell 2/2" in err and "done in" in err and "finished in" in err
    assert "scale paper 2" in err and "jobs 2" in err  # the notebook's output, as it arrives
    assert src.read_bytes() == before  # the committed notebook is untouched
    nb = json.loads((tmp_path / "_build" / "paper" / "notebooks" / "part9" / "tiny.ipynb").read_text())
    assert nb["cells"][1]["outputs"][0]["text"] == ["scale paper 2\n"]
    rec = nb["metadata"]["seqrmt_run"]
    assert rec["scale"] == "paper" and rec["jobs"] == 2 and rec["error"] is None and rec["seconds"] > 0
    assert rec["command"] == "python scripts/timings.py paper --jobs 2 notebooks/part9/tiny.ipynb"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", rec["date"])
    assert re.search(r"CPU\(s\) available, (GPU .+|no GPU)$", rec["machine"]) and rec["commit"]
    assert [i for i, _ in rec["cells"]] == [1, 2] and all(s >= 0 for _, s in rec["cells"])
    assert rec["chapter"] == tm.fingerprint(json.loads(before))  # which version of the chapter ran


def test_failed_or_timed_out_cell_gives_exit_status_1_and_a_partial_copy(tmp_path):
    bad = _notebook(tmp_path / "bad.ipynb", ["print('first cell ran')", "raise RuntimeError('boom')",
                                             "print('never')"])
    slow = _notebook(tmp_path / "slow.ipynb", ["import time\ntime.sleep(60)"])
    proc = _cli(tmp_path, "paper", str(bad), str(slow), "--out-dir", "out", "--quiet", "--timeout", "3")
    assert proc.returncode == 1
    assert "FAILED: RuntimeError: boom" in proc.stderr and "summary:" in proc.stderr
    assert "\nfirst cell ran\n" not in proc.stderr  # --quiet
    out = json.loads((tmp_path / "out" / "bad.ipynb").read_text())
    assert out["metadata"]["seqrmt_run"]["error"] and out["cells"][1]["outputs"][0]["text"] == ["first cell ran\n"]
    slow_rec = json.loads((tmp_path / "out" / "slow.ipynb").read_text())["metadata"]["seqrmt_run"]
    assert slow_rec["error"] and slow_rec["seconds"] < 50  # stopped by --timeout


def test_paper_refuses_bad_arguments_and_never_writes_in_place(tmp_path, monkeypatch, capsys):
    src = _notebook(tmp_path / "tiny.ipynb", ["print(1)"])
    monkeypatch.chdir(tmp_path)
    assert tm.main(["paper", "tiny.ipynb", "--out-dir", "."]) == 2
    assert "overwrite the notebook itself" in capsys.readouterr().err
    assert tm.main(["paper", "missing.ipynb"]) == 2
    for bad in (["--jobs", "0"], ["--jobs", "two"], ["--timeout", "-1"], ["--timeout", "nan"]):
        with pytest.raises(SystemExit) as exc:
            tm.main(["paper", "tiny.ipynb", *bad])
        assert exc.value.code == 2 and "must be" in capsys.readouterr().err
    assert not (tmp_path / "_build").exists() and json.loads(src.read_text())["cells"][1]["outputs"] == []


@pytest.mark.skipif(shutil.which("taskset") is None, reason="taskset (util-linux) is missing")
def test_one_core_records_time_and_the_kernels_peak_memory(tmp_path, monkeypatch):
    book = tmp_path / "book"
    _notebook(book / "notebooks" / "p1" / "a.ipynb", ["x = bytearray(200 * 2**20)  # 200 MB in the kernel"])
    monkeypatch.setattr(tm, "ROOT", book)
    monkeypatch.setattr(tm, "ONE_CORE", book / "one_core.json")
    monkeypatch.setenv("PYTHONPATH", str(ROOT / "lib"))
    assert tm.one_core([str(book / "notebooks" / "p1" / "a.ipynb")], cpu=0, out_dir=tmp_path / "out") == 0
    row = json.loads((book / "one_core.json").read_text())["notebooks/p1/a.ipynb"]
    assert row["error"] is None and 0 < row["seconds"] < 120 and "core 0 only" in row["machine"]
    assert row["peak_mb"] >= 200  # the kernel's memory, not only the runner's


# ----------------------------------------------------------------------------- collect and write
def _glue(name, value):
    return {"output_type": "display_data", "metadata": {"scrapbook": {"name": name, "mime_prefix":
            "application/papermill.record/"}}, "data": {"application/papermill.record/text/plain": repr(value)}}


def _out(text, name="stdout"):
    return {"output_type": "stream", "name": name, "text": text}


PNG_BOOK, PNG_PAPER = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", \
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def _chapter(d, se, gap, check_line, png, stderr=""):
    """A chapter's notebook at one size, with the outputs a run at that size gives."""
    nb = nbformat.v4.new_notebook()
    md = nbformat.v4.new_markdown_cell
    code = nbformat.v4.new_code_cell
    nb.cells = [
        md("# Gaps and error bars"),
        code("from seqrmt.runtime import preset\nd = preset(book=40, paper=80)\n"
             "n_rep = preset(book=8, paper=8)  # the same at both sizes\nlabel = 'a\\ b'"),
        md("At the notebook's $d = 40$ the gap is {glue:text}`gap:.0f` %, only about two standard "
           "errors: their error bars, {glue:text}`se:.2f`, are comparable to the effects. "
           "The `slope` of {prf:ref}`thm-x` is {glue:text}`slope:.1f` {cite:p}`someone2020`."),
        code("print(f'gap {gap:.1f} ± {se:.3f}')\nglue('gap', gap)\nglue('se', se)\nglue('slope', -1.0)",
             outputs=[_out(f"gap {gap:.1f} ± {se:.3f}\n"), _glue("gap", gap), _glue("se", se),
                      _glue("slope", -1.0)]),
        code("check(gap, 0, se=se, why='x')", outputs=[_out(check_line)]),
        code("plt.plot([d])\nglue('secret', 0.5 * d)", metadata={"mystnb": {"figure": {"name": "fig-gap"}}},
             outputs=[{"output_type": "display_data", "metadata": {}, "data": {"image/png": png}},
                      _glue("secret", 0.5 * d)] + ([_out(stderr, "stderr")] if stderr else [])),
        md("```{solution} ex-a\nThe answer is {glue:text}`secret:.1f`.\n```"),
    ]
    return nbformat.from_dict(nb)  # outputs as notebook nodes


@pytest.fixture()
def small_book(tmp_path, monkeypatch):
    """A book of three chapters (one with a paper size, one without, one never run), the
    paper-size run of the first under _build/paper/, and the module pointed at it."""
    root = tmp_path / "repo"
    (root / "book" / "appendix").mkdir(parents=True)
    book_nb = root / "notebooks" / "p1" / "01_gaps.ipynb"
    book_nb.parent.mkdir(parents=True)
    nbformat.write(_chapter(40, 0.011, 5.2, "✓ 5.2 against 5: 0.2 SE apart, within 4 SE (x)\n", PNG_BOOK), book_nb)
    _notebook(root / "notebooks" / "p1" / "02_one_size.ipynb", ["x = preset(book=3, paper=3)"])
    _notebook(root / "notebooks" / "p2" / "01_unrun.ipynb", ["n = preset(book=3, paper=30)"])
    (book_nb.parent / ".ipynb_checkpoints").mkdir()  # JupyterLab's copy of an opened notebook
    shutil.copy(book_nb, book_nb.parent / ".ipynb_checkpoints" / "01_gaps-checkpoint.ipynb")
    run = _chapter(80, 0.0031, 3.4, "✓ 3.4 against 3: 0.1 SE apart, within 4 SE (x)\n", PNG_PAPER,
                   stderr="UserWarning: Solution may be inaccurate.\n")
    run.metadata["seqrmt_run"] = {"scale": "paper", "command": "python scripts/timings.py paper --jobs 1 "
                                  "notebooks/p1/01_gaps.ipynb", "date": "2030-01-01 00:00 UTC",
                                  "machine": "Test CPU, 1 CPU(s) available, no GPU", "jobs": 1,
                                  "commit": "abc1234", "seconds": 330.0, "error": None,
                                  "chapter": tm.fingerprint(json.loads(book_nb.read_text())), "cells": []}
    paper = root / "_build" / "paper" / "notebooks" / "p1" / "01_gaps.ipynb"
    paper.parent.mkdir(parents=True)
    nbformat.write(run, paper)
    (root / "book" / "appendix" / "timings_table.md").write_text(
        "| 12.0 | 200 | yes | {doc}`/notebooks/p1/01_gaps` |\n")
    for name, value in (("ROOT", root), ("APPENDIX", root / "book" / "appendix"),
                        ("RUNS", root / "book" / "appendix" / "paper_runs"),
                        ("ONE_CORE", root / "book" / "appendix" / "one_core.json"),
                        ("NBVAL_TIMES", root / "none.json"), ("NBVAL_MEMORY", root / "none.json")):
        monkeypatch.setattr(tm, name, value)
    return root


def test_collect_and_write_show_the_two_sizes_side_by_side(small_book):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a chapter's invalid escape ('a\ b') is not reported by us
        assert tm.collect(small_book / "_build" / "paper") == 1
        assert tm.write() == ["one_core_table.md", "paper_results.md", "paper_times_table.md"]
    page = (small_book / "book" / "appendix" / "paper_results.md").read_text()
    assert "| {doc}`/notebooks/p1/01_gaps` | current | 5.5 min | 1 | 2030-01-01 00:00 UTC |" in page
    assert "Run: `python scripts/timings.py paper --jobs 1 notebooks/p1/01_gaps.ipynb` on Test CPU" in page
    assert "- `d = preset(book=40, paper=80)`" in page and "n_rep" not in page  # sizes that change
    # values side by side, labelled by the words before them without the book's sizes; an error
    # bar that rounds to 0.00 keeps two significant digits; the citation goes
    assert "| `gap` | “At the notebook's … the gap is” | 5 | 3 |" in page
    assert "| `se` | “their error bars” | 0.01 | 0.0031 |" in page
    assert "1 more quoted value(s) are the same at both sizes." in page  # the slope
    assert tm.quoted(json.loads((small_book / "notebooks" / "p1" / "01_gaps.ipynb").read_text()))["slope"] == (
        ".1f", "The slope of {prf:ref}`thm-x` is")  # inline code plain, references kept
    # never the chapter's sentences with paper-size numbers put into them
    assert "only about two standard errors" not in page and "comparable to the effects" not in page
    assert "secret" not in page and "answer" not in page  # nothing of a solution
    assert "Every `check(...)` of the paper-size run passed (1 ✓ line(s))" in page
    assert "gap 5.2 ± 0.011" in page and "gap 3.4 ± 0.003" in page  # the printed output, both sizes
    assert "code cell 4: UserWarning: Solution may be inaccurate." in page
    assert "```{image} paper_runs/p1--01_gaps-1.png" in page and "{numref}`fig-gap`" in page
    assert (small_book / "book" / "appendix" / "paper_runs" / "p1--01_gaps-1.png").is_file()
    assert "one size only (no `preset` differs): {doc}`/notebooks/p1/02_one_size`." in page
    assert "no recorded run: {doc}`/notebooks/p2/01_unrun`." in page
    assert "checkpoint" not in page
    table = (small_book / "book" / "appendix" / "paper_times_table.md").read_text()
    assert "| {doc}`/notebooks/p1/01_gaps` | 12 s | **5.5 min**, 1 worker(s), 2030-01-01 | no |" in table
    assert "| {doc}`/notebooks/p2/01_unrun` | – | not measured | no |" in table
    assert "one size only" in table and "estimate" not in table.lower()


def test_a_run_of_an_earlier_version_is_stale_and_shows_no_numbers(small_book):
    tm.collect(small_book / "_build" / "paper")
    path = small_book / "notebooks" / "p1" / "01_gaps.ipynb"
    nb = json.loads(path.read_text())
    nb["cells"][3]["outputs"][0]["text"] = "gap 5.3 ± 0.011\n"  # re-executed: the book-size output changed
    path.write_text(json.dumps(nb))
    tm.write()
    page = (small_book / "book" / "appendix" / "paper_results.md").read_text()
    assert "| stale (chapter changed since `abc1234`) | 5.5 min |" in page
    assert "## Gaps and error bars" not in page and "| `gap` |" not in page and "{image}" not in page
    table = (small_book / "book" / "appendix" / "paper_times_table.md").read_text()
    assert "5.5 min on an earlier version (`abc1234`)" in table


def test_a_failed_run_is_said_to_have_failed(small_book):
    paper = small_book / "_build" / "paper" / "notebooks" / "p1" / "01_gaps.ipynb"
    nb = json.loads(paper.read_text())
    nb["metadata"]["seqrmt_run"]["error"] = "CheckError: ✗ 3.4 against 0: 9 SE apart, beyond 4 SE (x)"
    paper.write_text(json.dumps(nb))
    tm.collect(small_book / "_build" / "paper")
    tm.write()
    page = (small_book / "book" / "appendix" / "paper_results.md").read_text()
    assert "| failed |" in page and "stopped with an error, so nothing of it is shown: `CheckError" in page
    assert "| `gap` |" not in page
    assert "failed after 5.5 min" in (small_book / "book" / "appendix" / "paper_times_table.md").read_text()


def test_tables_of_the_nbval_and_one_core_runs(small_book, monkeypatch):
    chapter = json.loads((small_book / "notebooks" / "p1" / "01_gaps.ipynb").read_text())
    (small_book / "book" / "appendix" / "one_core.json").write_text(json.dumps({
        "notebooks/p1/01_gaps.ipynb": {"seconds": 12.34, "peak_mb": 300, "error": None, "machine": "CPU X",
                                      "date": "2030-01-01 00:00 UTC", "chapter": tm.fingerprint(chapter)},
        "notebooks/p1/02_one_size.ipynb": {"seconds": 70.0, "peak_mb": 300, "error": None, "machine": "CPU X",
                                          "date": "2030-01-01 00:00 UTC", "chapter": "earlier"}}))
    times = {"notebooks/p1/01_gaps.ipynb": 61.0, "notebooks/p1/02_one_size.ipynb": 3.0}
    (small_book / "timings.json").write_text(json.dumps(times))
    (small_book / "memory.json").write_text(json.dumps({"notebooks/p1/01_gaps.ipynb": 250.0}))
    monkeypatch.setattr(tm, "NBVAL_TIMES", small_book / "timings.json")
    monkeypatch.setattr(tm, "NBVAL_MEMORY", small_book / "memory.json")
    assert "timings_table.md" not in tm.write()  # two of three notebooks: the table stays
    (small_book / "timings.json").write_text(json.dumps({**times, "notebooks/p2/01_unrun.ipynb": 1.0}))
    assert "timings_table.md" in tm.write()
    one = (small_book / "book" / "appendix" / "one_core_table.md").read_text()
    assert "| {doc}`/notebooks/p1/01_gaps` | 12.3 s | 300 MB | yes |" in one
    assert "| {doc}`/notebooks/p1/02_one_size` | 70.0 s | 300 MB | **no** |" in one  # over 60 s
    assert "| {doc}`/notebooks/p2/01_unrun` | not measured | | |" in one
    nbval = (small_book / "book" / "appendix" / "timings_table.md").read_text()
    assert "| 61.0 | 250 | **no** | {doc}`/notebooks/p1/01_gaps` |" in nbval
    assert "| 3.0 | n/a | yes | {doc}`/notebooks/p1/02_one_size` |" in nbval
    # the instructors' table takes the book-size time of this run
    assert "| {doc}`/notebooks/p1/01_gaps` | 61 s |" in (
        small_book / "book" / "appendix" / "paper_times_table.md").read_text()


def test_shown_values_keep_their_digits():
    assert tm.show(0.0031, ".2f") == "0.0031" and tm.show(0.013, ".2f") == "0.01"
    assert tm.show(0.0, ".2f") == "0.00" and tm.show(-0.004, ".1f") == "-0.004"
    assert tm.show(3, "") == "3" and tm.show(0.123456, "") == "0.1235" and tm.show("d=80", ".1f") == "d=80"
    assert tm.duration(7.24) == "7.2 s" and tm.duration(119.3) == "119 s" and tm.duration(389.7) == "6.5 min"


# ----------------------------------------------------------------------------- the committed pages
def test_committed_pages_are_what_write_makes(monkeypatch):
    monkeypatch.setattr(tm, "NBVAL_TIMES", ROOT / "no-nbval-run.json")  # the committed table stays
    stale = [name for name, text in tm.pages().items() if (ROOT / "book" / "appendix" / name).read_text() != text]
    assert not stale, f"{stale} differ from what the records give: run `python scripts/timings.py write`"


def test_committed_runs_are_runs_of_chapters():
    records = tm.records()
    stored = sorted(p.name for p in tm.RUNS.glob("*.json"))
    assert len(records) == len(stored), "a record of a chapter that no longer exists"
    figures = {f["file"] for r in records.values() for f in r["figures"]}
    assert figures == {p.name for p in tm.RUNS.glob("*.png")}, "figures without a record, or missing"
    for r in records.values():
        assert r["seconds"] > 0 and r["jobs"] >= 1 and r["machine"] and r["date"] and r["commit"]
