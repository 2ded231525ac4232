"""``python -m seqrmt.paper``: a paper-size run of a notebook into _build/paper/, never in place (issue 19, item 3).

Run on tiny generated notebooks (a Jupyter kernel starts for each of the two runs), not the book's.
"""

import json
import pathlib
import re
import os
import subprocess
import sys

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")


def _notebook(path, cells):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell("# A tiny chapter")] + [nbformat.v4.new_code_cell(c) for c in cells]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def _run(cwd, *args, env=None):
    full_env = {**os.environ, **(env or {})}
    full_env.pop("SEQRMT_JOBS", None)
    full_env.pop("CI", None)
    lib = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib")
    full_env["PYTHONPATH"] = lib + os.pathsep + full_env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "seqrmt.paper", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=300)


CELLS = [
    "import os\nfrom seqrmt.runtime import preset\nprint('scale', os.environ['SEQRMT_SCALE'], preset(book=1, paper=2))",
    "from seqrmt.ensemble import n_jobs, progress_bar\nprint('jobs', n_jobs())\n"
    "for _ in progress_bar(range(3), desc='demo loop'):\n    pass",
]


def test_paper_run_writes_to_build_paper_with_progress_workers_and_time(tmp_path):
    src = _notebook(tmp_path / "notebooks" / "part9" / "tiny.ipynb", CELLS)
    before = src.read_bytes()
    proc = _run(tmp_path, "notebooks/part9/tiny.ipynb", "--jobs", "2", "--timeout", "120")
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr
    assert "ensemble workers: 2 (SEQRMT_JOBS=2)" in err
    assert "cell 1/2" in err and "cell 2/2" in err and "done in" in err
    assert "scale paper 2" in err and "jobs 2" in err  # the notebook's output, streamed
    assert "demo loop" in err  # its progress bar too (on at paper size)
    assert "finished in" in err
    assert src.read_bytes() == before  # the committed notebook is untouched
    out = tmp_path / "_build" / "paper" / "notebooks" / "part9" / "tiny.ipynb"
    nb = nbformat.read(out, as_version=4)
    texts = ["".join(o.get("text", "")) for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert "scale paper 2\n" in texts and "jobs 2\n" in texts
    meta = nb.metadata["seqrmt_paper"]
    assert meta["scale"] == "paper" and meta["jobs"] == 2 and meta["error"] is None and meta["seconds"] > 0
    # the run's record, for the "Results at paper size" page: when, where, how
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", meta["date"])
    assert "CPU(s) available" in meta["machine"]
    assert meta["command"] == f"python -m seqrmt.paper --jobs 2 {pathlib.Path('notebooks/part9/tiny.ipynb')}"
    assert meta["commit"]


def test_failing_cell_gives_exit_status_1_and_a_partial_notebook(tmp_path):
    src = _notebook(tmp_path / "bad.ipynb", ["print('first cell ran')", "raise RuntimeError('boom')",
                                             "print('never')"])
    slow = _notebook(tmp_path / "slow.ipynb", ["import time\ntime.sleep(60)"])
    proc = _run(tmp_path, str(src), str(slow), "--out-dir", "out", "--quiet", "--timeout", "3")
    assert proc.returncode == 1
    assert "FAILED: RuntimeError: boom" in proc.stderr
    assert "summary:" in proc.stderr and proc.stderr.count("FAILED") >= 4  # two runs, two summary lines
    slow_meta = json.loads((tmp_path / "out" / "slow.ipynb").read_text())["metadata"]["seqrmt_paper"]
    assert slow_meta["error"] and slow_meta["seconds"] < 50  # stopped by --timeout, not by the sleep
    assert "\nfirst cell ran\n" not in proc.stderr  # --quiet: the notebook's output is not echoed
    nb = json.loads((tmp_path / "out" / "bad.ipynb").read_text())
    assert nb["metadata"]["seqrmt_paper"]["error"]
    assert nb["cells"][1]["outputs"][0]["text"] == ["first cell ran\n"]


def test_never_in_place_and_bad_arguments(tmp_path):
    from seqrmt.paper import run_paper

    src = _notebook(tmp_path / "tiny.ipynb", ["print(1)"])
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with pytest.raises(ValueError, match="overwrite"):
            run_paper("tiny.ipynb", out_dir=".")
        for kwargs, name in ((dict(timeout=0), "timeout"), (dict(timeout=float("nan")), "timeout"),
                             (dict(jobs=0), "jobs"), (dict(jobs=2.5), "jobs"), (dict(scale="huge"), "scale")):
            with pytest.raises(ValueError, match=name):
                run_paper("tiny.ipynb", **kwargs)
        with pytest.raises(ValueError, match="notebook"):
            run_paper("missing.ipynb")
    finally:
        os.chdir(cwd)
    assert _run(tmp_path, "tiny.ipynb", "--out-dir", ".").returncode == 2
    for bad in (["--jobs", "0"], ["--jobs", "two"], ["--timeout", "-1"]):
        proc = _run(tmp_path, "tiny.ipynb", *bad)
        assert proc.returncode == 2 and "must be" in proc.stderr
    assert not (tmp_path / "_build").exists()
    assert nbformat.read(src, as_version=4).cells[1].outputs == []


def test_paper_times_estimate_reads_the_presets(tmp_path):
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts", "paper_times.py")
    spec = importlib.util.spec_from_file_location("paper_times", path)
    pt = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pt)
    nb = _notebook(tmp_path / "x.ipynb", [
        "n_trials = preset(book=10, paper=100)\nd = preset(book=20, paper=40)",  # one cell: 10 x 2^3
        "steps, lr = preset(book=10**3, paper=10**4), preset(book=1e-3, paper=1e-4)",  # 10; lr is no cost
        "flag = preset(book=False, paper=True)",
    ])
    rows = {r[0]: r for r in pt.presets(nb)}
    assert rows["n_trials"][3] == 10 and rows["n_trials"][4] == "count"
    assert rows["d"][3] == 2 and rows["d"][4] == "dimension"
    assert rows["steps"][3] == 10 and rows["lr"][4] == "other" and rows["flag"][4] == "other"
    factor, seconds = pt.estimate(nb, 3.0)
    assert factor == 80 and seconds == 240
    assert pt.book_times()["part1_linear_generative/01_sample_covariance"] > 0


def test_cpu_model_reads_proc_cpuinfo_or_falls_back():
    from seqrmt.paper import cpu_model

    name = cpu_model()
    assert isinstance(name, str) and name.strip()
    cpuinfo = pathlib.Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        models = [l.split(":", 1)[1].strip() for l in cpuinfo.read_text().splitlines() if l.startswith("model name")]
        if models:
            assert name == models[0]
