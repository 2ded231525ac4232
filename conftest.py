"""Rules of a test session anywhere in the repository (``pytest``, the README's test command).

* **Post-build tests** (``@pytest.mark.needs_build``: the built site in a browser, the PDF, the
  reader notebooks against the build, the notebooks in JupyterLab) need ``jupyter-book build .``
  (and the PDF build) first. They run when ``-m`` names the marker (``pytest -m needs_build``, as
  ``.ci/run`` does after the builds); otherwise they are skipped, with that reason.
* **Workers.** ``pyproject.toml`` asks for ``-n auto``: two xdist workers (two notebooks at a
  time, one per core of the CI machine) when a folder or several notebooks run, none when the
  arguments name test files or one notebook, so that one library test runs in this process.
"""

from __future__ import annotations

import os
import pathlib

import pytest

POST_BUILD = "needs_build"


def pytest_collection_modifyitems(config, items):
    """Skip the post-build tests unless ``-m`` selects them by name."""
    if POST_BUILD in (config.option.markexpr or ""):
        return
    skip = pytest.mark.skip(reason="post-build test: after `jupyter-book build .` (and the PDF "
                                   "build) run `pytest -m needs_build`")
    for item in items:
        if item.get_closest_marker(POST_BUILD):
            item.add_marker(skip)


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: 2 workers for folders or several notebooks, else 0 (no worker processes)."""
    paths = [pathlib.Path(config.invocation_params.dir, arg.split("::")[0]) for arg in config.args]
    many = any(p.is_dir() for p in paths) or sum(p.suffix == ".ipynb" for p in paths) > 1
    return min(2, os.cpu_count() or 1) if many and (os.cpu_count() or 1) > 1 else 0
