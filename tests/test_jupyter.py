"""The edition notebooks read right in a real JupyterLab (headless Chromium).

Runs ``scripts/check_jupyter.py`` (see its docstring for the checks) on its default set, the
first reader notebook of every part and one student notebook, and asserts that there is no
finding: no raw directive, no literal role, no MathJax error or undefined macro, no unfolded
solution, no solution at all in the student notebook. As controls (so the check can fail): the
solution check must see the folded solutions of each reader notebook, and the same check on
the MyST source of the first chapter must find raw directives, literal roles, undefined macros
and unfolded solutions.

Skipped when jupyterlab or the browser is missing, except under ``CI=true``::

    python -m pytest -m needs_build tests/test_jupyter.py
"""

from __future__ import annotations

import collections
import importlib
import os
import pathlib
import sys
import time

import pytest

pytestmark = pytest.mark.needs_build  # run after the builds: pytest -m needs_build

ROOT = pathlib.Path(__file__).resolve().parents[1]
IN_CI = os.environ.get("CI", "").lower() == "true"
CONTROL = "notebooks/part1_linear_generative/01_sample_covariance.ipynb"


def test_edition_notebooks_render_in_jupyterlab():
    if str(ROOT / "scripts") not in sys.path:  # the script, imported as a module (it loads its helpers)
        sys.path.insert(0, str(ROOT / "scripts"))
    check = importlib.import_module("check_jupyter")
    if (why := check.lab_missing()) is not None:
        if IN_CI:
            pytest.fail(f"JupyterLab check cannot run under CI=true: {why}", pytrace=False)
        pytest.skip(why)
    paths = check.default_notebooks()
    assert len(paths) == 6 and "/student/" in paths[-1]
    t0 = time.perf_counter()
    findings, stats = check.check_jupyter(paths + [CONTROL], log=lambda line: None)
    elapsed = time.perf_counter() - t0
    ours = [f for f in findings if f["notebook"] != CONTROL]
    control = collections.Counter(f["check"] for f in findings if f["notebook"] == CONTROL)
    assert not ours, f"{len(ours)} finding(s) in JupyterLab ({elapsed:.0f} s):\n" + "\n".join(
        f"  {f['notebook']}: {f['check']}: {f['detail']}" for f in ours[:30])
    for path in paths:
        assert stats[path]["math"] > 20 and stats[path]["images"] >= 1, (path, stats[path])
        # the solution check sees the folded solutions of the reader notebooks (so it can fail)
        assert (stats[path]["solutions seen"] > 0) == ("/reader/" in path), (path, stats[path])
    for kind in ("raw-directive", "literal-role", "mathjax", "unfolded"):
        assert control[kind] > 0, f"the check found no {kind} in the MyST source {CONTROL}: {dict(control)}"
