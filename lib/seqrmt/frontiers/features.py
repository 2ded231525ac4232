r"""Random-features ridge regression: its high-dimensional equivalent and its linear equivalent.

Setting (Chapter 5.5, the example of :cite:`louart2018nn` that :cite:`liao2025beyond` generalise).
Fixed data :math:`X\in\mathbb R^{p\times n}` (columns :math:`x_i`, :math:`\|x_i\|\approx1`), targets
:math:`y\in\mathbb R^n`, a random first layer :math:`W\in\mathbb R^{N\times p}` with i.i.d.
:math:`N(0,1)` entries and features :math:`\Sigma=\sigma(WX)\in\mathbb R^{N\times n}`. A ridge
read-out with penalty :math:`\gamma` has training error
:math:`E=\frac{\gamma^2}{n}y^\top Q^2y`, :math:`Q=(\Sigma^\top\Sigma/n+\gamma I_n)^{-1}`
(:func:`seqrmt.frontiers.attention.memorisation_error` computes it for one draw of :math:`W`).
Conditionally on :math:`X`, :math:`E` concentrates around a deterministic functional of the kernel
:math:`\Phi=\mathbb E_w[\sigma(X^\top w)\sigma(w^\top X)]`.

Laws here: the arc-cosine kernel of ReLU features (:func:`relu_kernel`) and the equivalent of the
training error (:func:`random_features_training_error`); the sampler :func:`mixture_data`. The
notebook (5.5) draws the features, writes the linear equivalent and runs the simulation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import as_generator, check_array, check_int_array, check_nonnegative, check_size
from ..rmt import solve_delta

__all__ = ["mixture_data", "relu_kernel", "RandomFeaturesEquivalent", "random_features_training_error"]


def mixture_data(n, p, mean_norm, rng=None):
    r"""Two-class Gaussian mixture :math:`x_i=(y_i\mu+z_i)/\sqrt p`, balanced random labels.

    Parameters
    ----------
    n, p : int
        Number of samples and dimension.
    mean_norm : float
        :math:`\|\mu\|\ge0`; :math:`\mu=\|\mu\|e_1`.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    X : numpy.ndarray, shape (p, n)
        Columns of squared norm :math:`1+O(p^{-1/2})`.
    y : numpy.ndarray, shape (n,)
        Labels :math:`\pm1`.

    Examples
    --------
    >>> X, y = mixture_data(6, 4, 2.0, rng=0)
    >>> X.shape, sorted(set(y.tolist()))
    ((4, 6), [-1.0, 1.0])
    """
    n = check_size(n, "n")
    p = check_size(p, "p")
    if n * p > 2**31:
        raise ValueError(f"n, p too large: n * p = {n * p} entries")
    norm = check_nonnegative(mean_norm, "mean_norm")
    rng = as_generator(rng)
    y = rng.choice([-1.0, 1.0], size=n)
    X = rng.standard_normal((p, n))
    X[0] += norm * y  # mu = |mu| e_1: the laws are rotation invariant
    # 1/sqrt(p) makes |x_i|^2 = 1 + O(p^-1/2) and the cosines between tokens O(p^-1/2)
    return X / np.sqrt(p), y


def relu_kernel(X):
    r"""Arc-cosine kernel :math:`\Phi=\mathbb E_w[\mathrm{relu}(X^\top w)\mathrm{relu}(w^\top X)]`, :math:`w\sim N(0,I_p)`.

    .. math::
        \Phi_{ij}=\frac{\|x_i\|\|x_j\|}{2\pi}\big(\sin\theta_{ij}+(\pi-\theta_{ij})\cos\theta_{ij}\big),
        \qquad\cos\theta_{ij}=\frac{x_i^\top x_j}{\|x_i\|\|x_j\|}.

    Parameters
    ----------
    X : array_like, shape (p, n)
        Non-zero columns.

    Returns
    -------
    numpy.ndarray, shape (n, n)

    Examples
    --------
    >>> Phi = relu_kernel(np.eye(2))
    >>> bool(np.allclose(Phi, [[0.5, 1 / (2 * np.pi)], [1 / (2 * np.pi), 0.5]]))
    True
    """
    X = check_array(X, "X", ndim=2)
    norms = np.linalg.norm(X, axis=0)
    if np.any(norms == 0):
        raise ValueError("X must have non-zero columns")
    # the clip guards arccos against rounding just outside [-1, 1] (the diagonal is exactly 1 in theory)
    cos = np.clip((X.T @ X) / np.outer(norms, norms), -1.0, 1.0)
    theta = np.arccos(cos)
    # E[relu(w.x_i) relu(w.x_j)] in the plane of x_i, x_j: (sin t + (pi - t) cos t) |x_i||x_j| / 2 pi
    return np.outer(norms, norms) * (np.sin(theta) + (np.pi - theta) * cos) / (2.0 * np.pi)


@dataclass(frozen=True)
class RandomFeaturesEquivalent:
    r"""High-dimensional equivalent of random-features ridge regression.

    Attributes
    ----------
    train_error : float or numpy.ndarray
        Deterministic equivalent of :math:`\frac{\gamma^2}{n}y^\top Q^2y`.
    delta : float or numpy.ndarray
        :math:`\delta=\frac1n\operatorname{Tr}\Phi\bar Q`.
    """

    train_error: float
    delta: float


def random_features_training_error(Phi, y, n_features, gamma, tol=1e-12, max_iter=200):
    r"""Deterministic equivalent of the random-features training error, given the kernel.

    With :math:`\bar Q=(\Psi+\gamma I)^{-1}`, :math:`\Psi=\frac Nn\frac{\Phi}{1+\delta}` and
    :math:`\delta=\frac1n\operatorname{Tr}\Phi\bar Q` (:func:`seqrmt.rmt.solve_delta`),

    .. math::
        E\simeq\frac{\gamma^2}{n}\,y^\top\bar Q\Big[\frac{\frac1N\operatorname{Tr}\Psi\bar Q^2}
        {1-\frac1N\operatorname{Tr}\Psi\bar Q\Psi\bar Q}\,\Psi+I\Big]\bar Qy .

    :math:`\Phi` is diagonalised once, so arrays of widths and ridges cost little more than one.

    Parameters
    ----------
    Phi : array_like, shape (n, n)
        Symmetric positive semi-definite kernel, e.g. :func:`relu_kernel`.
    y : array_like, shape (n,)
    n_features : int or array_like of int
        :math:`N`.
    gamma : float or array_like
        :math:`\gamma>0`; broadcast against ``n_features``.
    tol, max_iter
        Passed to :func:`seqrmt.rmt.solve_delta`.

    Returns
    -------
    RandomFeaturesEquivalent
        Attributes of the broadcast shape (floats for scalar inputs).

    Examples
    --------
    With a kernel :math:`\Phi=I` and :math:`N=n` the equivalent is that of Marchenko-Pastur:

    >>> eq = random_features_training_error(np.eye(4), np.ones(4), 4, 1.0)
    >>> round(eq.delta, 6)  # delta = ridge_delta(1, 1) = 0.618034
    0.618034
    """
    Phi = check_array(Phi, "Phi", ndim=2)
    n = Phi.shape[0]
    if Phi.shape != (n, n) or not np.allclose(Phi, Phi.T, atol=1e-10 * max(1.0, np.abs(Phi).max())):
        raise ValueError(f"Phi must be a symmetric square matrix, got shape {Phi.shape}")
    y = check_array(y, "y", ndim=1, shape=(n,))
    N_arr = check_int_array(n_features, "n_features", low=1, high=2**31)
    g_arr = check_array(gamma, "gamma", positive=True)
    N_b, g_b = np.broadcast_arrays(N_arr, g_arr)
    # one eigendecomposition serves every width and ridge
    phi, U = np.linalg.eigh(Phi)
    if phi[0] < -1e-8 * max(phi[-1], 1.0):
        raise ValueError("Phi must be positive semi-definite")
    phi = np.clip(phi, 0.0, None)  # rounding can leave tiny negative eigenvalues of a PSD kernel
    # everything below is diagonal in the eigenbasis of Phi: only the energies of y there enter
    yt2 = (U.T @ y) ** 2
    err, dl = np.empty(N_b.shape), np.empty(N_b.shape)
    for idx in np.ndindex(N_b.shape):
        N, g = int(N_b[idx]), float(g_b[idx])
        # N i.i.d. rows of second moment Phi, normalised by n: the fixed point of Chapter 1 with N
        # samples and ridge g n/N, i.e. delta = (1/n) sum phi / ((N/n) phi / (1 + delta) + g)
        delta = float(solve_delta(phi, N, g * n / N, tol=tol, max_iter=max_iter))
        # Psi = (N/n) Phi/(1 + delta) is the "population" of the N feature rows; Qbar its resolvent
        psi = (N / n) * phi / (1.0 + delta)
        qbar = 1.0 / (psi + g)
        # the bracket: numerator tr(Psi Qbar^2)/N and denominator 1 - tr(Psi Qbar Psi Qbar)/N differ
        coef = np.sum(psi * qbar**2) / N / (1.0 - np.sum((psi * qbar) ** 2) / N)
        # E[Q^2] ~ Qbar [coef Psi + I] Qbar: the first-order term plus the fluctuation of Q
        err[idx] = g**2 / n * np.sum(yt2 * qbar**2 * (coef * psi + 1.0))
        dl[idx] = delta
    if err.ndim == 0:
        return RandomFeaturesEquivalent(float(err), float(dl))
    return RandomFeaturesEquivalent(err, dl)
