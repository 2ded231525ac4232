r"""Next-token distributions of the toy language model (Chapter 1.3).

Softmax of Gaussian logits, and the mean squared norm of such a distribution.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .._validation import (
    check_positive,
    check_positive_int,
    check_size,
)
from .._validation import as_generator

__all__ = [
    "softmax_distributions",
    "expected_softmax_sq_norm",
]

# ---------------------------------------------------------------------------
# Next-token distributions
# ---------------------------------------------------------------------------


def softmax_distributions(k, c, rho, rng=None):
    r"""Draw next-token distributions :math:`p_a=\operatorname{softmax}(G_a/\rho)`.

    Parameters
    ----------
    k : int
        Vocabulary size.
    c : int
        Number of contexts.
    rho : float
        Temperature :math:`\rho>0` (small :math:`\rho` gives peaked distributions).
    rng : int, numpy.random.Generator or None

    Returns
    -------
    numpy.ndarray, shape (k, c)
        Column :math:`a` is :math:`p_a`.

    Examples
    --------
    >>> P = softmax_distributions(3, 5, 0.9, rng=0)
    >>> P.shape, bool(np.allclose(P.sum(axis=0), 1))
    ((3, 5), True)
    """
    k = check_size(k, "k")
    c = check_size(c, "c")
    rho = check_positive(rho, "rho")
    G = as_generator(rng).standard_normal((k, c))
    return special.softmax(G / rho, axis=0)


def expected_softmax_sq_norm(k, rho, n_nodes=40):
    r""":math:`\bar s=\mathbb E_G\|\operatorname{softmax}(G/\rho)\|^2` for :math:`G\sim N(0,I_k)`.

    Computed by a tensor Gauss-Hermite rule with ``n_nodes`` nodes per axis
    (cost ``n_nodes**k``, so ``k`` is limited to 6).

    Parameters
    ----------
    k : int
        Vocabulary size, ``1 <= k <= 6``.
    rho : float
        Temperature :math:`\rho>0`.
    n_nodes : int
        Quadrature nodes per dimension.

    Returns
    -------
    float

    Examples
    --------
    >>> round(expected_softmax_sq_norm(3, 0.9), 6)
    0.50361
    """
    k = check_positive_int(k, "k")
    if k > 6:
        raise ValueError(f"k must be at most 6 for tensor quadrature, got {k}")
    rho = check_positive(rho, "rho")
    n_nodes = check_size(n_nodes, "n_nodes")
    x, w = np.polynomial.hermite_e.hermegauss(n_nodes)  # weight exp(-x^2/2)
    w = w / np.sqrt(2.0 * np.pi)
    grids = np.meshgrid(*([x] * k), indexing="ij")
    G = np.stack([g.ravel() for g in grids], axis=1)
    W = np.prod(np.meshgrid(*([w] * k), indexing="ij"), axis=0).ravel()
    p = special.softmax(G / rho, axis=1)
    return float(np.sum(W * np.sum(p**2, axis=1)))


