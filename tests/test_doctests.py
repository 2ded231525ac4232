"""Every docstring example of seqrmt runs and prints what it shows.

The examples are compared with ``numeric_text.NumericOutputChecker``:
text exactly, numbers to one unit in the last printed digit, so that a CPU with
other floating-point kernels (``-0.0`` for ``0.0``) passes.
"""

import importlib
import pkgutil

import numpy as np
import pytest

import seqrmt
from numeric_text import run_doctests
from seqrmt.runtime import single_threaded_blas

MODULES = sorted(name for _, name, _ in pkgutil.walk_packages(seqrmt.__path__, prefix="seqrmt."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    with single_threaded_blas():
        result = run_doctests(module, extraglobs={"np": np})
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def test_every_module_with_examples_is_covered():
    """The walk finds the subpackages' modules (a regression guard for the list above)."""
    assert {"seqrmt.rmt", "seqrmt.bsr._theory", "seqrmt.ntp._programs", "seqrmt.dyson._rbm",
            "seqrmt.models.char_gpt"} <= set(MODULES)
