"""Every chapter the book runs in the browser runs to the end in a Pyodide-like CPython.

JupyterLite runs the chapters in Pyodide, whose packages are not the book's (no torch; cvxpy
with Clarabel only; older scipy, matplotlib and scikit-learn). No browser reaches Pyodide's CDN
in CI, so this runs the same notebooks (``editions/reader/notebooks/``: what the site serves)
in a CPython environment pinned to Pyodide's package versions, ``tests/pyodide/requirements.txt``:
every cell, no error (the notebooks' ``check(...)`` lines raise when an agreement fails), timed.

It runs only in that environment (``.ci/run`` makes it; ``SEQRMT_PYODIDE_ENV=1``)::

    python -m venv /tmp/pyodide-venv && . /tmp/pyodide-venv/bin/activate
    pip install -r tests/pyodide/requirements.txt && pip install --no-deps -e .
    SEQRMT_PYODIDE_ENV=1 python -m pytest -o addopts="" -n 2 tests/pyodide

Elsewhere (the book's own environment) it is skipped. The times go to
``_build/pyodide-times.jsonl`` (one line per chapter).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import pathlib
import re
import resource
import sys
import tempfile
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
if os.environ.get("SEQRMT_PYODIDE_ENV", "") != "1":
    pytest.skip("runs in the Pyodide-pinned environment only (SEQRMT_PYODIDE_ENV=1)", allow_module_level=True)

import nbformat  # noqa: E402
from nbclient import NotebookClient  # noqa: E402

sys.path.insert(0, str(ROOT / "scripts"))
import install_cell  # noqa: E402

TIMES = ROOT / "_build" / "pyodide-times.jsonl"
# an edition notebook whose cells take longer than this has a problem worth a failure
CELL_TIMEOUT = 600
BROWSER = [c for c in install_cell.chapters(ROOT) if c.browser]


def _pins() -> dict[str, str]:
    """Package -> pinned version of the requirements file, for this Python."""
    pins = {}
    for line in (ROOT / "tests" / "pyodide" / "requirements.txt").read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.-]+)==([^\s;]+)\s*(?:;\s*(.*))?$", line.strip())
        if not m:
            continue
        name, version, marker = m.groups()
        if marker:
            from packaging.markers import Marker
            if not Marker(marker).evaluate():
                continue
        pins[name.lower()] = version
    return pins


def test_the_environment_is_pyodides():
    """The versions are the pinned ones; torch and cvxpy's other solvers are absent, as in Pyodide."""
    wrong = {name: importlib.metadata.version(name) for name, version in _pins().items()
             if importlib.metadata.version(name) != version}
    assert not wrong, f"installed versions differ from tests/pyodide/requirements.txt: {wrong}"
    for module in ("torch", "scs", "osqp", "ecos"):
        assert importlib.util.find_spec(module) is None, f"{module} is installed; Pyodide has none"
    import cvxpy
    assert set(cvxpy.installed_solvers()) <= {"CLARABEL", "SCIPY"}, cvxpy.installed_solvers()


def test_the_kernel_runs_in_this_environment():
    """The notebooks' kernel is this environment's Python (not a kernel registered elsewhere)."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import sys; print(sys.prefix)")])
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    assert nb.cells[0].outputs[0]["text"].strip() == sys.prefix


@pytest.mark.parametrize("chapter", BROWSER, ids=[c.docname.split("/", 1)[1] for c in BROWSER])
def test_chapter_runs_to_the_end(chapter):
    path = ROOT / "editions" / "reader" / f"{chapter.docname}.ipynb"
    nb = nbformat.read(path, as_version=4)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # in an empty folder, as in JupyterLite, where the notebook is alone
    with tempfile.TemporaryDirectory() as folder:
        client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                                resources={"metadata": {"path": folder}})
        client.execute()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    TIMES.parent.mkdir(exist_ok=True)
    # one line per chapter; xdist workers append to the same file
    with open(TIMES, "a", encoding="utf-8") as f:
        f.write(json.dumps({"chapter": chapter.docname, "wall_s": round(wall, 1),
                            "cpu_s": round(cpu, 1)}) + "\n")
    print(f"{chapter.docname}: {wall:.1f} s wall, {cpu:.1f} s CPU (kernel)")
