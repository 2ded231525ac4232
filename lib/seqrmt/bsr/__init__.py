r"""Bilinear sequence regression (Chapter 2).

Submodules
----------
model
    The data model: Gaussian token sequences and a planted rank-r bilinear target.
free_probability
    The density of signal-plus-noise singular values, its Hilbert transform, the rectangular
    rotationally-invariant estimator (RIE) and its MMSE.
theory
    Bayes-optimal error, perfect-recovery and nuclear-norm thresholds, ridge baselines.
symmetric
    The symmetric variant (Wishart plus GOE): its cubic, density, RIE MMSE and the
    Bayes-optimal error of the extensive-width quadratic network.
algorithms
    GAMP-RIE with its state evolution, minimal nuclear norm (cvxpy), gradient descent.

Every public name of the submodules is available directly as ``seqrmt.bsr.<name>``.
"""

from . import algorithms, free_probability, model, symmetric, theory
from .algorithms import *  # noqa: F401,F403
from .free_probability import *  # noqa: F401,F403
from .model import *  # noqa: F401,F403
from .theory import *  # noqa: F401,F403
from .symmetric import *  # noqa: F401,F403

__all__ = model.__all__ + free_probability.__all__ + theory.__all__ + algorithms.__all__ + symmetric.__all__
