r"""The bilinear sequence regression (BSR) data model.

A sequence :math:`\mu=1,\dots,n` holds :math:`L` tokens in :math:`\mathbb R^d`, stacked as
:math:`X_\mu\in\mathbb R^{L\times d}` with iid :math:`N(0,1)` entries. The target is a planted
rank-:math:`r` matrix :math:`S^*=U^*V^{*\top}/\sqrt r\in\mathbb R^{d\times L}` with Gaussian
factors, and :math:`y_\mu=\operatorname{Tr}[X_\mu S^*]/\sqrt{dL}+\sqrt\Delta\,\xi_\mu`.
Layout: ``X`` has shape ``(n, L, d)``, ``S`` shape ``(d, L)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import as_generator, check_nonnegative, check_size


@dataclass(frozen=True)
class BSRData:
    """One draw of the BSR model (returned by :func:`sample_bsr`).

    Attributes
    ----------
    X : ndarray, shape (n, L, d)
        Token sequences, iid standard Gaussian entries.
    y : ndarray, shape (n,)
        Labels :math:`\\operatorname{Tr}[X_\\mu S^*]/\\sqrt{dL}` plus noise of variance ``delta``.
    S : ndarray, shape (d, L)
        Planted matrix :math:`S^*=U^*V^{*\\top}/\\sqrt r`.
    U, V : ndarray, shapes (d, r) and (L, r)
        Its factors.
    delta : float
        Noise variance :math:`\\Delta`.
    """

    X: np.ndarray
    y: np.ndarray
    S: np.ndarray
    U: np.ndarray
    V: np.ndarray
    delta: float


def planted(d, L, r, rng):
    """Gaussian factors U (d x r), V (L x r) and S = U V^T / sqrt(r), drawn in this order."""
    U = rng.standard_normal((d, r))
    V = rng.standard_normal((L, r))
    # dividing by sqrt(r) gives the entries of S unit variance: sum of r products of N(0,1)
    return U, V, U @ V.T / np.sqrt(r)


def design(X):
    """Design matrix F (n, dL) with rows vec(X_mu^T) / sqrt(dL), so that F @ S.ravel() = y."""
    n, L, d = X.shape
    # X_mu^T is (d, L); its row-major ravel matches S.ravel() for S of shape (d, L)
    return np.ascontiguousarray(X.transpose(0, 2, 1).reshape(n, d * L)) / np.sqrt(d * L)


def sample_bsr(n, d, L, r, delta, rng=None):
    r"""Draw tokens, a planted rank-``r`` matrix and noisy labels from the BSR model.

    .. math::

        y_\mu=\frac{1}{\sqrt{dL}}\operatorname{Tr}\big[X_\mu S^*\big]+\sqrt\Delta\,\xi_\mu,\qquad
        S^*=\frac{U^*V^{*\top}}{\sqrt r},

    with :math:`X_\mu\in\mathbb R^{L\times d}`, :math:`U^*`, :math:`V^*` and :math:`\xi` iid
    :math:`N(0,1)`. The entries of :math:`S^*` have unit variance, so :math:`\operatorname{Var}y=1+\Delta`.

    Parameters
    ----------
    n, d, L, r : int
        Number of sequences, token dimension, sequence length (``L/d`` may be below or above
        one) and rank of the planted matrix.
    delta : float
        Noise variance :math:`\Delta\ge0`.
    rng : numpy.random.Generator or int, optional
        Source of randomness. Draw order: ``U`` (d, r), ``V`` (L, r), ``X`` (n, L, d), noise (n,).

    Returns
    -------
    BSRData
        Fields ``X`` (n, L, d), ``y`` (n,), ``S`` (d, L), ``U``, ``V``, ``delta``.

    Examples
    --------
    >>> data = sample_bsr(50, 8, 4, 2, 0.0, rng=0)
    >>> data.X.shape, data.y.shape, data.S.shape
    ((50, 4, 8), (50,), (8, 4))
    >>> y = np.einsum("nld,dl->n", data.X, data.S) / np.sqrt(8 * 4)   # Tr[X S] / sqrt(dL)
    >>> bool(np.allclose(data.y, y))
    True
    """
    n, d, L, r = (check_size(v, k) for v, k in ((n, "n"), (d, "d"), (L, "L"), (r, "r")))
    delta = check_nonnegative(delta, "delta")
    rng = as_generator(rng)
    U, V, S = planted(d, L, r, rng)
    X = rng.standard_normal((n, L, d))
    # Tr[X_mu S*] / sqrt(dL) = <F_mu, vec S*>: Gaussian with variance |S*|^2 / (dL) ~ 1
    y = design(X) @ S.ravel() + np.sqrt(delta) * rng.standard_normal(n)
    return BSRData(X=X, y=y, S=S, U=U, V=V, delta=delta)
