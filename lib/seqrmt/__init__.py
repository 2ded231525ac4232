"""seqrmt: the companion library of *Random Matrix Theory for Sequence Models*.

Modules
-------
rmt
    Marchenko-Pastur and semicircle laws, Stieltjes transforms, deterministic equivalents.
lgm
    Linear generative models of next tokens (Chapter 1).
bsr
    Bilinear sequence regression: free probability, Bayes-optimal error, GAMP-RIE (Chapter 2).
ntp
    The implicit geometry of next-token prediction: NTP data, NTP-SVMs (cvxpy), unconstrained
    features, embedding geometry (Chapter 3).
dyson
    SGD and random matrix theory: Dyson Brownian motion, Coulomb gas, Gaussian RBM,
    weight spectra (Chapter 4).
nanogpt
    A small, CUDA-optional GPT with training loop and command line (needs torch).
data
    Corpora built at first use (the Shakespeare corpus) and a character tokenizer.
plotting
    Theory-against-simulation figures in the book's style.
utils
    Random generators (the notebooks' seeds, shifted by ``SEQRMT_SEED_OFFSET``), single-threaded
    BLAS, torch devices, size presets.
frontiers
    Recent results (Chapter 5): masked-token regression, attention as a kernel, in-context
    learning, fine-tuning as transfer, random features and PLS.
ensemble
    Independent realisations with spawned generators, serial or parallel (joblib, Dask).
testing
    Numeric-aware comparison of printed output (nbval and doctests).

``rmt``, ``lgm``, ``plotting`` and ``utils`` are imported with the package; the other modules are
imported on first access (``seqrmt.bsr``) so that ``import seqrmt`` needs neither torch nor cvxpy.
"""

import importlib

from . import lgm, plotting, rmt, utils
from .utils import (
    ConvergenceError,
    as_generator,
    available_cpus,
    fit_threads,
    notebook_rng,
    notebook_seed,
    preset,
    scale,
    single_threaded_blas,
    torch_device,
)

__version__ = "0.1.0"

_LAZY_MODULES = ("bsr", "ntp", "dyson", "frontiers", "nanogpt", "data", "testing", "ensemble")

__all__ = [
    "lgm",
    "plotting",
    "rmt",
    "utils",
    *_LAZY_MODULES,
    "ConvergenceError",
    "as_generator",
    "available_cpus",
    "fit_threads",
    "notebook_rng",
    "notebook_seed",
    "preset",
    "scale",
    "single_threaded_blas",
    "torch_device",
    "__version__",
]


def __getattr__(name):
    if name in _LAZY_MODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'seqrmt' has no attribute {name!r}")
