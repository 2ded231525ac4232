r"""The bilinear sequence regression (BSR) data model.

A sequence :math:`\mu=1,\dots,n` holds :math:`L` tokens in :math:`\mathbb R^d`, stacked as
:math:`X_\mu\in\mathbb R^{L\times d}` with iid :math:`N(0,1)` entries. The target is a planted
rank-:math:`r` matrix :math:`S^*=U^*V^{*\top}/\sqrt r\in\mathbb R^{d\times L}` with
:math:`U^*\in\mathbb R^{d\times r}`, :math:`V^*\in\mathbb R^{L\times r}` iid :math:`N(0,1)`, and

.. math::

    y_\mu=\frac{1}{\sqrt{dL}}\operatorname{Tr}\big[X_\mu S^*\big]+\sqrt\Delta\,\xi_\mu,
    \qquad \xi_\mu\sim N(0,1).

Entries of :math:`S^*` have unit variance, so :math:`\operatorname{Var} y=1+\Delta`.
Scalings: :math:`\alpha=n/(dL)`, :math:`\beta=L/d`, :math:`\rho=r/d`.

Layout: ``X`` has shape ``(n, L, d)`` (one :math:`X_\mu` per row), ``S`` has shape ``(d, L)``.
Used in: Chapter 2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_array, check_nonnegative, check_positive_int, check_size
from .._validation import as_generator

__all__ = ["BSRData", "sample_bsr", "bilinear_readout", "bsr_scalings"]


@dataclass(frozen=True)
class BSRData:
    """One draw of the BSR model.

    Attributes
    ----------
    X : ndarray, shape (n, L, d)
        Token sequences, iid standard Gaussian entries.
    y : ndarray, shape (n,)
        Targets :math:`\\operatorname{Tr}[X_\\mu S^*]/\\sqrt{dL}` plus noise of variance ``delta``.
    S : ndarray, shape (d, L)
        Planted matrix :math:`S^*=U^*V^{*\\top}/\\sqrt r`.
    U : ndarray, shape (d, r)
        Left factor :math:`U^*`.
    V : ndarray, shape (L, r)
        Right factor :math:`V^*`.
    delta : float
        Noise variance :math:`\\Delta`.
    """

    X: np.ndarray
    y: np.ndarray
    S: np.ndarray
    U: np.ndarray
    V: np.ndarray
    delta: float

    @property
    def alpha(self):
        """Sample ratio :math:`n/(dL)`."""
        n, L, d = self.X.shape
        return n / (d * L)

    @property
    def beta(self):
        """Aspect ratio :math:`L/d`."""
        _, L, d = self.X.shape
        return L / d

    @property
    def rho(self):
        """Rank ratio :math:`r/d`."""
        return self.U.shape[1] / self.X.shape[2]


def bsr_scalings(n, d, L, r):
    """Return ``(alpha, beta, rho, alpha_bar)`` for the sizes of a BSR problem.

    Parameters
    ----------
    n, d, L, r : int
        Number of sequences, token dimension, sequence length and rank.

    Returns
    -------
    tuple of float
        :math:`\\alpha=n/(dL)`, :math:`\\beta=L/d`, :math:`\\rho=r/d` and the low-rank units
        :math:`\\bar\\alpha=n/(r(d+L))`.

    Examples
    --------
    >>> bsr_scalings(400, 20, 10, 5)
    (2.0, 0.5, 0.25, 2.6666666666666665)
    """
    n = check_positive_int(n, "n")
    d = check_positive_int(d, "d")
    L = check_positive_int(L, "L")
    r = check_positive_int(r, "r")
    return n / (d * L), L / d, r / d, n / (r * (d + L))


def bilinear_readout(X, S):
    r"""Noiseless outputs :math:`\operatorname{Tr}[X_\mu S]/\sqrt{dL}` for every sequence.

    Parameters
    ----------
    X : array_like, shape (n, L, d)
        Token sequences.
    S : array_like, shape (d, L)
        Bilinear weight matrix.

    Returns
    -------
    ndarray, shape (n,)

    Examples
    --------
    >>> X = np.ones((2, 3, 4)); S = np.ones((4, 3))
    >>> bilinear_readout(X, S)
    array([3.46410162, 3.46410162])
    """
    X = check_array(X, "X", ndim=3)
    _, L, d = X.shape
    S = check_array(S, "S", shape=(d, L))
    return np.einsum("nld,dl->n", X, S) / np.sqrt(d * L)


def _planted(d, L, r, rng):
    """Gaussian factors U (d x r), V (L x r) and S = U V^T / sqrt(r), drawn in this order."""
    U = rng.standard_normal((d, r))
    V = rng.standard_normal((L, r))
    return U, V, U @ V.T / np.sqrt(r)


def sample_bsr(n, d, L, r, delta, rng=None):
    """Draw tokens, a planted rank-``r`` matrix and noisy targets from the BSR model.

    Parameters
    ----------
    n : int
        Number of sequences.
    d : int
        Token dimension.
    L : int
        Sequence length (any ``L``: ``beta = L/d`` may be below or above one).
    r : int
        Rank of the planted matrix.
    delta : float
        Noise variance :math:`\\Delta\\ge0`.
    rng : numpy.random.Generator or int, optional
        Source of randomness. Draw order: ``U`` (d, r), ``V`` (L, r), ``X`` (n, L, d), noise (n,).

    Returns
    -------
    BSRData

    Examples
    --------
    >>> data = sample_bsr(50, 8, 4, 2, 0.0, rng=0)
    >>> data.X.shape, data.y.shape, data.S.shape
    ((50, 4, 8), (50,), (8, 4))
    >>> bool(np.allclose(data.y, bilinear_readout(data.X, data.S)))
    True
    """
    n = check_size(n, "n")
    d = check_size(d, "d")
    L = check_size(L, "L")
    r = check_size(r, "r")
    delta = check_nonnegative(delta, "delta")
    rng = as_generator(rng)
    U, V, S = _planted(d, L, r, rng)
    X = rng.standard_normal((n, L, d))
    y = bilinear_readout(X, S) + np.sqrt(delta) * rng.standard_normal(n)
    return BSRData(X=X, y=y, S=S, U=U, V=V, delta=delta)
