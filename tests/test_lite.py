"""The install cell, what each chapter needs, and the JupyterLite configuration (no build needed).

* Every notebook's install cell is the one ``scripts/install_cell.py`` writes from its imports.
* What a chapter needs is read through the library: a synthetic library checks module-level
  imports, imports inside called functions, call chains, star imports, and that a function the
  notebook does not call costs nothing.
* The cell does what it says, run through IPython's input transformer with a recording
  ``%pip``: nothing when everything is importable; ``seqrmt`` with the chapter's extras from the
  repository when it is missing; only the missing extras otherwise; the served wheel and
  Pyodide's packages in JupyterLite (a ``%pip`` line piplite can read: no ``{...}``); a clear
  error for the torch chapters there.
* The browser chapters are all but the three that train with PyTorch (issue 30: 22 of 25).
* ``tests/pyodide/requirements.txt`` pins every dependency of ``seqrmt`` and the browser
  extras, has no torch and no SCS/OSQP/ECOS, and names the Pyodide that ``lite/`` loads.

The built site is checked by ``tests/test_lite_site.py``; the chapters' runs in the
Pyodide-pinned environment by ``tests/pyodide/test_chapters.py``.
"""

from __future__ import annotations

import json
import pathlib
import re
import sys
import textwrap
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import install_cell  # noqa: E402

TORCH_CHAPTERS = {
    "notebooks/part2_bilinear_regression/06_gradient_descent",
    "notebooks/part3_ntp_geometry/05_transformer_and_ufm",
    "notebooks/part4_sgd_rmt/05_gpt_weight_spectra",
}


@pytest.fixture(scope="module")
def chapters():
    return install_cell.chapters(ROOT)


# ----------------------------------------------------------------------------- the notebooks
def test_every_install_cell_is_current():
    stale = install_cell.write(ROOT, check=True)
    assert not stale, f"stale install cells (run python scripts/install_cell.py): {stale}"


def test_the_browser_chapters_are_all_but_the_torch_ones(chapters):
    """All but the torch chapters, and the measured exceptions (install_cell.NOT_IN_BROWSER)."""
    assert len(chapters) == 25
    not_browser = {c.docname for c in chapters if not c.browser}
    assert not_browser == TORCH_CHAPTERS | set(install_cell.NOT_IN_BROWSER)
    for chapter in chapters:
        if chapter.docname in TORCH_CHAPTERS:
            assert "PyTorch" in chapter.why_not_browser
        elif not chapter.browser:
            assert chapter.why_not_browser == install_cell.NOT_IN_BROWSER[chapter.docname]


def test_the_chapters_that_call_cvxpy_or_sklearn_need_them(chapters):
    """Read from the code: 2.5 and 3.1 call cvxpy through the library only; 4.3 loads the digits."""
    needs = {c.docname.split("/")[-1]: set(c.needs) for c in chapters}
    assert "cvxpy" in needs["05_nuclear_norm"]          # bsr.min_nuclear_norm imports it when called
    assert "cvxpy" in needs["01_sparse_soft_labels"]    # seqrmt.ntp imports it
    assert "sklearn" in needs["03_gaussian_rbm"]
    assert needs["01_sample_covariance"] == set()
    assert "torch" not in needs["04_gamp_rie"]          # bsr.gd_factorized (torch) is not called


# ----------------------------------------------------------------------------- the analysis
def _library(tmp_path, files: dict[str, str]) -> pathlib.Path:
    for name, text in {"pyproject.toml": PYPROJECT, **files}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


PYPROJECT = """
[project]
name = "seqrmt"
[project.optional-dependencies]
torch = ["torch>=2.1"]
convex = ["cvxpy>=1.4"]
data = ["scikit-learn>=1.3"]
test = ["pytest>=7"]
"""

FAKE_LIBRARY = {
    "lib/seqrmt/__init__.py": "from . import core\n",
    "lib/seqrmt/core.py": "def mean(x):\n    return sum(x)\n",
    "lib/seqrmt/convex.py": "import cvxpy as cp\n\ndef solve():\n    return cp.Problem\n",
    "lib/seqrmt/algo/__init__.py": "from ._impl import *\n",
    "lib/seqrmt/algo/_impl.py": """
        __all__ = ["fit", "train", "plain"]
        from ..core import mean

        def _solve():
            import cvxpy
            return cvxpy

        def fit(x):
            return _solve()

        def train(x):
            import torch
            return torch.zeros(1)

        def plain(x):
            return mean(x)
    """,
}


def _needs(root, code: str) -> set[str]:
    nb = {"cells": [{"cell_type": "code", "source": "# install"},
                    {"cell_type": "code", "source": textwrap.dedent(code)}]}
    return install_cell.notebook_needs(nb, install_cell.Library(root))


def test_needs_follow_module_imports_and_calls(tmp_path):
    root = _library(tmp_path, FAKE_LIBRARY)
    assert _needs(root, "from seqrmt import core\ncore.mean([1])") == set()
    # a module that imports cvxpy at import time
    assert _needs(root, "from seqrmt import convex") == {"cvxpy"}
    # a function that calls a private function that imports cvxpy when called (star import)
    assert _needs(root, "from seqrmt import algo\nalgo.fit(1)") == {"cvxpy"}
    assert _needs(root, "import seqrmt.algo as a\na.train(1)") == {"torch"}
    assert _needs(root, "from seqrmt.algo import plain\nplain(1)") == set()
    # a function of the module that the notebook does not call costs nothing
    assert _needs(root, "from seqrmt import algo\nalgo.plain(1)") == set()
    # direct imports, and magics ignored
    assert _needs(root, "%matplotlib inline\nimport sklearn.datasets\n!ls") == {"sklearn"}
    assert _needs(root, "import numpy as np") == set()


# ----------------------------------------------------------------------------- the cell
class _Shell:
    """A stand-in for IPython's shell: records ``%pip`` lines, with IPython's ``{...}`` expansion."""

    def __init__(self, namespace):
        self.namespace = namespace
        self.pip = []

    def run_line_magic(self, name, line, _stack_depth=1):
        assert name == "pip", name
        from IPython.utils.text import DollarFormatter
        self.pip.append(DollarFormatter().vformat(line, (), self.namespace))


def _run_cell(source: str, installed: set[str], platform: str = "linux") -> list[str]:
    """Run an install cell with these modules importable, on ``platform``; the ``%pip`` lines."""
    from IPython.core.inputtransformer2 import TransformerManager

    python = TransformerManager().transform_cell(source)
    namespace: dict = {}
    shell = _Shell(namespace)

    class _Spec:
        @staticmethod
        def find_spec(name):
            return object() if name in installed else None

    class _Sys:
        pass

    _Sys.platform = platform
    namespace["get_ipython"] = lambda: shell
    # the cell's own imports of importlib.util and sys, replaced by the stand-ins
    python = python.replace("import importlib.util\n", "").replace("import sys\n", "")
    namespace["importlib"] = type("importlib", (), {"util": _Spec})
    namespace["sys"] = _Sys
    exec(compile(python, "<install cell>", "exec"), namespace)
    return shell.pip


BASE = {"numpy", "scipy", "matplotlib"}


def test_cell_installs_nothing_when_everything_is_there():
    for needs in ([], ["cvxpy"], ["sklearn"], ["cvxpy", "torch"]):
        source = install_cell.cell_source(needs, ROOT)
        assert _run_cell(source, BASE | {"seqrmt", *needs}) == []


def test_cell_installs_seqrmt_with_the_chapters_extras():
    source = install_cell.cell_source(["cvxpy"], ROOT)
    assert _run_cell(source, BASE) == ['install -q "seqrmt[convex] @ git+https://github.com/seqrmt/seqrmt-book"']
    assert _run_cell(install_cell.cell_source([], ROOT), BASE) == [
        'install -q "seqrmt @ git+https://github.com/seqrmt/seqrmt-book"']


def test_cell_installs_only_the_missing_extras():
    source = install_cell.cell_source(["cvxpy", "sklearn"], ROOT)
    assert _run_cell(source, BASE | {"seqrmt", "cvxpy"}) == ['install -q "scikit-learn>=1.3"']
    assert _run_cell(source, BASE | {"seqrmt"}) == ['install -q "cvxpy>=1.4" "scikit-learn>=1.3"']


def test_cell_takes_torch_from_the_cpu_index_on_linux_only():
    source = install_cell.cell_source(["torch"], ROOT)
    index = "--extra-index-url https://download.pytorch.org/whl/cpu"
    assert _run_cell(source, BASE | {"seqrmt"}) == [f'install -q {index} "torch>=2.1"']
    assert _run_cell(source, BASE | {"seqrmt"}, "darwin") == ['install -q  "torch>=2.1"']
    assert _run_cell(source, BASE | {"torch"}) == [
        'install -q  "seqrmt[torch] @ git+https://github.com/seqrmt/seqrmt-book"']


def test_cell_in_jupyterlite_installs_the_served_wheel_and_pyodides_packages():
    source = install_cell.cell_source(["cvxpy", "sklearn"], ROOT)
    # nothing is importable at first in JupyterLite; the cell installs even what is
    assert _run_cell(source, set(), "emscripten") == ["install -q seqrmt cvxpy-base scikit-learn"]
    assert _run_cell(source, BASE | {"seqrmt", "cvxpy", "sklearn"}, "emscripten") == [
        "install -q seqrmt cvxpy-base scikit-learn"]
    # piplite reads the %pip line with shlex, without IPython's {...} expansion
    lite_line = next(line for line in source.splitlines() if "%pip" in line and "seqrmt " in line + " ")
    assert "{" not in lite_line and "seqrmt" in lite_line


def test_cell_of_a_torch_chapter_explains_itself_in_jupyterlite():
    source = install_cell.cell_source(["cvxpy", "torch"], ROOT)
    with pytest.raises(RuntimeError, match="PyTorch.*Binder or Colab"):
        _run_cell(source, set(), "emscripten")


def test_cell_fits_the_books_code_style():
    for needs in ([], ["cvxpy"], ["sklearn"], ["cvxpy", "torch"], ["torch"]):
        lines = install_cell.cell_source(needs, ROOT).splitlines()
        assert len(lines) <= 40 and max(map(len, lines)) <= 77, needs


# ----------------------------------------------------------------------------- Pyodide's pins
PINS_FILE = ROOT / "tests" / "pyodide" / "requirements.txt"


def _pinned() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in PINS_FILE.read_text().splitlines():
        if m := re.match(r"^([A-Za-z0-9_.-]+)==(\S+)", line.strip()):
            out.setdefault(m.group(1).lower(), []).append(m.group(2))
    return out


def test_pyodide_pins_cover_seqrmt_and_the_browser_extras():
    pinned = _pinned()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for requirement in project["dependencies"] + project["optional-dependencies"]["data"]:
        name = re.match(r"[A-Za-z0-9_.-]+", requirement).group(0).lower()
        assert name in pinned, f"{name} is not pinned in {PINS_FILE.name}"
    assert "cvxpy-base" in pinned and "clarabel" in pinned
    for absent in ("torch", "cvxpy", "scs", "osqp", "ecos"):
        assert absent not in pinned, f"{absent}: Pyodide has no such package"
    assert all(len(set(v)) == 1 or name == "scipy" for name, v in pinned.items())


def test_pyodide_pins_name_the_runtime_that_the_site_loads():
    config = json.loads((ROOT / "lite" / "jupyter-lite.json").read_text())
    url = config["jupyter-config-data"]["litePluginSettings"][
        "@jupyterlite/pyodide-kernel-extension:kernel"]["pyodideUrl"]
    version = re.search(r"/pyodide/v([\d.]+)/", url).group(1)
    header = PINS_FILE.read_text().split("\n\n")[0]
    assert f"`pyodide` {version}" in header and f"Pyodide {version}" in header, (version, header)


# ----------------------------------------------------------------------------- cvxpy without SCS
def test_solvers_fall_back_to_clarabel_without_scs(monkeypatch):
    """Pyodide's cvxpy-base has Clarabel only: the library's SCS defaults fall back to it, and the
    NTP-SVM* of a large support matrix takes the numpy ADMM either way (no cvxpy solve)."""
    import cvxpy
    import numpy as np

    from seqrmt import bsr, ntp

    class Chosen(Exception):
        pass

    def chosen(self, *args, **kwargs):   # record the solver, skip the solve
        raise Chosen(kwargs.get("solver"))

    data = bsr.sample_bsr(30, 6, 6, 1, 0.0, rng=0)
    S = np.eye(6, dtype=int)[:, np.arange(90) % 6]            # 540 > 500 entries: ADMM by default

    def solvers():
        with pytest.raises(Chosen) as info:
            bsr.min_nuclear_norm(data.X, data.y)
        L = ntp.ntp_svm_nuclear(S, deduplicate=False)          # never reaches Problem.solve
        assert np.allclose(L, ntp.centered_support(S), atol=1e-5)
        return str(info.value)

    monkeypatch.setattr(cvxpy.Problem, "solve", chosen)
    assert solvers() == "SCS"                                   # where SCS is installed
    monkeypatch.setattr(cvxpy, "installed_solvers", lambda: ["CLARABEL", "SCIPY"])
    assert solvers() == "CLARABEL"


def test_clarabel_solves_the_determined_nuclear_norm_problem():
    """At alpha >= 1 the constraints fix S; Clarabel alone fails there (no interior), the fallback is exact."""
    import numpy as np

    from seqrmt import bsr

    data = bsr.sample_bsr(64, 8, 8, 2, 0.0, rng=1)           # alpha = 1: one feasible point
    S = bsr.min_nuclear_norm(data.X, data.y, solver="CLARABEL")
    assert np.max(np.abs(S - data.S)) < 1e-10
