"""seqrmt: the companion library of *Random Matrix Theory for Sequence Models*.

The notebooks derive a result and check it against this small library. It holds the **laws**
the book derives (closed forms, fixed points, deterministic equivalents, densities, thresholds),
the **algorithms and samplers** that two or more notebooks use or that a notebook's own code is
checked against, the **models** (one readable file each), and the shared **tools**. The lesson's
simulations, training loops, fits, tables and figures are written in the notebooks.

Public modules (each lists its names in ``__all__``; nothing else is public)
-----------------------------------------------------------------------------
rmt
    Marchenko-Pastur and semicircle laws, Stieltjes transforms, deterministic equivalents.
lgm
    Linear generative models of next tokens (Part 1).
bsr
    Bilinear sequence regression: free probability, Bayes-optimal error, GAMP-RIE (Part 2).
ntp
    Next-token prediction: NTP data, NTP-SVMs (cvxpy), unconstrained features, geometry (Part 3).
dyson
    SGD and random matrices: Dyson Brownian motion, universality, the Gaussian RBM (Part 4).
frontiers
    Part 5, one module per paper: ``masked``, ``attention``, ``icl``, ``transfer``, ``features``,
    ``pls``.
models
    The two transformers, one file each (needs torch).
data
    The Shakespeare corpus, built at first use.
ensemble
    Independent realisations with spawned generators, serial or parallel (joblib, Dask, Ray).
runtime
    Seeds, threads, the size switch (``SEQRMT_SCALE``), torch devices and ``glue``.
stats
    Standard errors, log-log exponents and ``check``, the one-line agreement test.
plotting
    The book's figure style and its two figures: a histogram against a density, a curve
    against Monte Carlo.

``import seqrmt`` imports none of them: ``from seqrmt import bsr`` imports what it names, and
only ``models``, ``ntp`` and ``data`` need torch, cvxpy or the network's package registry.
"""

from ._validation import ConvergenceError

__version__ = "0.1.0"

__all__ = [
    "ConvergenceError",
    "rmt",
    "lgm",
    "bsr",
    "ntp",
    "dyson",
    "frontiers",
    "models",
    "data",
    "ensemble",
    "runtime",
    "stats",
    "plotting",
]
