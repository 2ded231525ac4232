r"""The Gaussian (scalar-field) restricted Boltzmann machine and its training dynamics.

The model has visible units :math:`\phi\in\mathbb R^{N_v}`, hidden units :math:`h\in\mathbb R^{N_h}` and action

.. math::

    S(\phi,h)=\tfrac12\mu^2\phi^\top\phi+\tfrac1{2\sigma_h^2}h^\top h-\phi^\top Wh,
    \qquad W\in\mathbb R^{N_v\times N_h}

(hidden bias :math:`\eta=0`). Integrating out :math:`h` leaves a Gaussian field with kernel
:math:`K=\mu^2I-\sigma_h^2WW^\top`. Conventions used throughout:

* ``W`` has shape ``(n_v, n_h)`` (the papers' orientation; the authors' code stores the transpose);
* :math:`X=WW^\top` (:math:`N_v\times N_v`); its non-zero eigenvalues are those of :math:`W^\top W`;
* the target is a kernel ``K_target`` (symmetric positive definite) with eigenvalues :math:`\kappa_i`;
  the positive phase of the gradient is the exact target correlator :math:`(K^{\rm target})^{-1}`;
* one "epoch" of persistent contrastive divergence (PCD) is one update of ``W``.

With :math:`\sigma_h=1`, the drift of a mode (the diagonal element :math:`X_{ii}` in the target eigenbasis) is
:math:`2\alpha F_i(x)` per update, with :math:`F_i(x)=x\,(1/\kappa_i-1/(\mu^2-x))` and fixed point
:math:`x_i^*=\mu^2-\kappa_i`; its stationary variance under mini-batch noise is
:math:`2(\alpha/|\mathcal B|)(\mu^2-\kappa_i)` to leading order. The two eigenvalues of a degenerate pair have
the same width parameter but the two-mode law (:func:`~seqrmt.dyson.rbm_pairs.rbm_pair_eigenvalues`).

The ensemble analysis of PCD runs (degenerate pairs, variance ratios) and the figures of notebook
``03_gaussian_rbm`` are in :mod:`seqrmt.dyson.rbm_pairs`; their names are re-exported here.

Used in: Chapter 4 (notebooks ``03_gaussian_rbm`` and ``04_fokker_planck``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._validation import (
    check_array,
    check_nonnegative,
    check_positive,
    check_positive_int,
    check_size,
)
from .._validation import check_seed
from ..ensemble import progress_bar, spawn_generators
from .._validation import as_generator
from ..runtime import single_threaded_blas

__all__ = [
    "rbm_target_kernel",
    "rbm_target_spectrum",
    "rbm_model_spectrum",
    "rbm_data_kernel",
    "rbm_fixed_points",
    "rbm_drift",
    "rbm_potential",
    "rbm_curvature",
    "rbm_stationary_variance",
    "rbm_learning_bias",
    "rbm_mode_dynamics",
    "train_rbm_exact",
    "PCDTrajectory",
    "train_rbm_pcd",
    "rbm_learned_spectrum",
]


# ---------------------------------------------------------------- target and model kernels
def rbm_target_kernel(n_v, m2):
    r"""Kernel of a free scalar field on a periodic 1-D lattice.

    :math:`K_{ii}=2+m^2`, :math:`K_{i,i\pm1}=-1` (indices modulo ``n_v``).

    Parameters
    ----------
    n_v : int
        Number of lattice sites (visible units), at least 3.
    m2 : float
        Squared mass :math:`m^2>0` (makes the kernel positive definite).

    Returns
    -------
    ndarray, shape (n_v, n_v)

    Examples
    --------
    >>> rbm_target_kernel(4, 1.0)[0]
    array([ 3., -1.,  0., -1.])
    """
    n_v = check_size(n_v, "n_v")
    if n_v < 3:
        raise ValueError(f"n_v must be at least 3, got {n_v}")
    m2 = check_positive(m2, "m2")
    K = (2.0 + m2) * np.eye(n_v)
    K -= np.roll(np.eye(n_v), 1, axis=1) + np.roll(np.eye(n_v), -1, axis=1)
    return K


def rbm_target_spectrum(n_v, m2):
    r"""Eigenvalues :math:`\kappa_k=m^2+2-2\cos(2\pi k/N_v)` of :func:`rbm_target_kernel`.

    Parameters
    ----------
    n_v : int
        Number of lattice sites, at least 3.
    m2 : float
        Squared mass, positive.

    Returns
    -------
    ndarray, shape (n_v,)
        :math:`\kappa_k` in the order of the momentum index :math:`k=0,\dots,N_v-1` (not sorted:
        :math:`\kappa_k=\kappa_{N_v-k}`, so every mode except :math:`k=0` and :math:`k=N_v/2` is doubly
        degenerate).

    Examples
    --------
    >>> np.round(rbm_target_spectrum(6, 4.0), 3)
    array([4., 5., 7., 8., 7., 5.])
    """
    n_v = check_size(n_v, "n_v")
    if n_v < 3:
        raise ValueError(f"n_v must be at least 3, got {n_v}")
    m2 = check_positive(m2, "m2")
    k = np.arange(n_v)
    return m2 + 2.0 - 2.0 * np.cos(2.0 * np.pi * k / n_v)


def rbm_model_spectrum(W, mu2, sigma_h=1.0):
    r"""Eigenvalues of the model kernel :math:`K=\mu^2I-\sigma_h^2WW^\top`.

    Parameters
    ----------
    W : array_like, shape (n_v, n_h) or (..., n_v, n_h)
        Weight matrix (or a stack of them).
    mu2 : float
        Visible mass :math:`\mu^2>0`.
    sigma_h : float
        Hidden-unit standard deviation, positive.

    Returns
    -------
    ndarray, shape (..., n_v)
        Ascending eigenvalues. :math:`N_v-N_h` of them equal :math:`\mu^2` when :math:`N_h<N_v`.

    Examples
    --------
    >>> np.round(rbm_model_spectrum(np.array([[1.0], [0.0]]), 9.0), 3)
    array([8., 9.])
    """
    W = check_array(W, "W")
    if W.ndim < 2:
        raise ValueError(f"W must have at least 2 dimensions (n_v, n_h), got shape {W.shape}")
    mu2 = check_positive(mu2, "mu2")
    sigma_h = check_positive(sigma_h, "sigma_h")
    X = W @ np.swapaxes(W, -1, -2)
    return np.linalg.eigvalsh(mu2 * np.eye(W.shape[-2]) - sigma_h**2 * X)


def rbm_data_kernel(data, ridge=0.0):
    r"""Target kernel of a data set: the inverse of its (centred) covariance.

    :math:`K^{\rm target}=(\hat\Sigma+\lambda I)^{-1}` with :math:`\hat\Sigma=\frac1n\sum_a(\phi_a-\bar\phi)(\phi_a-\bar\phi)^\top`.
    The model has no visible bias, so it learns the centred correlations.

    Parameters
    ----------
    data : array_like, shape (n_samples, n_v)
        One sample per row, at least two rows.
    ridge : float
        Non-negative :math:`\lambda`; needed when some direction has (almost) no variance, e.g.
        pixels that are constant over the data set.

    Returns
    -------
    ndarray, shape (n_v, n_v)

    Examples
    --------
    >>> data = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [2.0, 2.0]])
    >>> rbm_data_kernel(data)
    array([[1., 0.],
           [0., 1.]])
    """
    data = check_array(data, "data", ndim=2)
    if data.shape[0] < 2:
        raise ValueError(f"data must hold at least two samples (rows), got {data.shape[0]}")
    ridge = check_nonnegative(ridge, "ridge")
    centred = data - data.mean(axis=0)
    cov = centred.T @ centred / data.shape[0] + ridge * np.eye(data.shape[1])
    evals = np.linalg.eigvalsh(cov)
    if evals[0] <= 1e-12 * max(evals[-1], 1e-300):
        raise ValueError("the covariance of data is singular; pass ridge > 0")
    K = np.linalg.inv(cov)
    return 0.5 * (K + K.T)


# ---------------------------------------------------------------- one mode: drift, potential, variance
def _check_kappa(kappa):
    return check_array(kappa, "kappa", positive=True)


def _check_learnable(kappa, mu2):
    """kappa (positive) and mu2, with every kappa below mu2 (each mode has a fixed point)."""
    kappa = _check_kappa(kappa)
    mu2 = check_positive(mu2, "mu2")
    if np.any(kappa >= mu2):
        raise ValueError("mu2 must exceed every kappa (no fixed point otherwise)")
    return kappa, mu2


def rbm_fixed_points(kappa, mu2):
    r"""Fixed points :math:`x^*=\max(\mu^2-\kappa,0)` of the eigenvalue drift.

    A mode with :math:`\kappa\ge\mu^2` cannot be learned: its only fixed point in :math:`[0,\mu^2)` is
    :math:`x=0`, so its model-kernel eigenvalue stays at :math:`\mu^2` (the ultraviolet cutoff).

    Parameters
    ----------
    kappa : array_like
        Target-kernel eigenvalues, positive.
    mu2 : float
        Visible mass, positive.

    Returns
    -------
    ndarray
        Same shape as ``kappa``.

    Examples
    --------
    >>> rbm_fixed_points([4.0, 8.0, 10.0], 9.0)
    array([5., 1., 0.])
    """
    kappa = _check_kappa(kappa)
    mu2 = check_positive(mu2, "mu2")
    return np.maximum(mu2 - kappa, 0.0)


def rbm_drift(x, kappa, mu2):
    r"""Mode drift :math:`F(x)=x\,\big(1/\kappa-1/(\mu^2-x)\big)` (:math:`\sigma_h=1`).

    One PCD update moves a diagonal element :math:`X_{ii}` of :math:`X=WW^\top` in the target eigenbasis by
    :math:`2\alpha F(x)` on average (an eigenvalue, when :math:`X` is diagonal in that basis).

    Parameters
    ----------
    x : array_like
        Points in :math:`[0,\mu^2)`.
    kappa : float or array_like
        Target eigenvalue(s), positive; broadcast against ``x``.
    mu2 : float
        Visible mass, positive.

    Returns
    -------
    ndarray

    Examples
    --------
    >>> np.round(rbm_drift([0.0, 2.0, 5.0], 4.0, 9.0), 4)
    array([0.    , 0.2143, 0.    ])
    """
    x = check_array(x, "x")
    kappa = _check_kappa(kappa)
    mu2 = check_positive(mu2, "mu2")
    if np.any(x < 0) or np.any(x >= mu2):
        raise ValueError("x must lie in [0, mu2)")
    return x * (1.0 / kappa - 1.0 / (mu2 - x))


def rbm_potential(x, kappa, mu2):
    r"""Potential :math:`V(x)=-\frac{x^2}{2\kappa}-x-\mu^2\log(\mu^2-x)` with :math:`V'=-F`.

    Parameters
    ----------
    x : array_like
        Points below :math:`\mu^2` (the potential is also defined for :math:`x<0`).
    kappa, mu2 : float
        As in :func:`rbm_drift` (a single target eigenvalue).

    Returns
    -------
    ndarray

    Examples
    --------
    >>> np.round(rbm_potential([0.0, 5.0], 4.0, 9.0), 4)
    array([-19.775 , -20.6016])
    """
    x = check_array(x, "x")
    kappa = check_positive(kappa, "kappa")
    mu2 = check_positive(mu2, "mu2")
    if np.any(x >= mu2):
        raise ValueError("x must lie below mu2")
    return -(x**2) / (2.0 * kappa) - x - mu2 * np.log(mu2 - x)


def rbm_curvature(kappa, mu2):
    r"""Curvature :math:`\Omega=V''(x^*)=(\mu^2-\kappa)/\kappa^2` at the fixed point.

    Parameters
    ----------
    kappa : array_like
        Target eigenvalues, each below ``mu2``.
    mu2 : float
        Visible mass.

    Returns
    -------
    ndarray

    Examples
    --------
    >>> rbm_curvature([4.0, 8.0], 9.0)
    array([0.3125  , 0.015625])
    """
    kappa, mu2 = _check_learnable(kappa, mu2)
    return (mu2 - kappa) / kappa**2


def rbm_stationary_variance(kappa, mu2, lr, batch, k=None):
    r"""Stationary variance of a learned diagonal element :math:`X_{ii}` under PCD mini-batch noise (:math:`\sigma_h=1`).

    Leading order (``k=None``): :math:`\operatorname{Var}x=2(\alpha/|\mathcal B|)(\mu^2-\kappa)`, which
    depends on :math:`\alpha` and :math:`|\mathcal B|` only through their ratio.

    With ``k`` given, the linearised recursion :math:`\delta_{n+1}=(1-a)\delta_n-b\,\xi_n` is solved exactly in
    discrete time, with :math:`a=2\alpha x^*/\kappa^2`, :math:`b=2\alpha x^*`,
    :math:`\operatorname{Var}\xi=2/(|\mathcal B|\kappa^2)` and the lag-one correlation
    :math:`r=(x^*/\mu^2)^{2k}` of the persistent chains after ``k`` Gibbs sweeps:

    .. math::

        \operatorname{Var}x=\frac{b^2\operatorname{Var}\xi}{1-(1-a)^2}\,\frac{1+(1-a)r}{1-(1-a)r}.

    Parameters
    ----------
    kappa, mu2
        As in :func:`rbm_curvature` (every ``kappa`` below ``mu2``).
    lr : float
        Learning rate :math:`\alpha>0`.
    batch : int
        Batch size (number of persistent chains).
    k : int, optional
        Gibbs sweeps per update, for the discrete-time correction.

    Returns
    -------
    ndarray

    Examples
    --------
    >>> np.round(rbm_stationary_variance([4.0, 8.0], 9.0, 0.1, 16), 5)
    array([0.0625, 0.0125])
    >>> np.round(rbm_stationary_variance([4.0, 8.0], 9.0, 0.1, 16, k=3), 5)
    array([0.06817, 0.01252])
    """
    kappa, mu2 = _check_learnable(kappa, mu2)
    lr = check_positive(lr, "lr")
    batch = check_positive_int(batch, "batch")
    x_star = mu2 - kappa
    if k is None:
        return 2.0 * lr / batch * x_star
    k = check_positive_int(k, "k")
    a = 2.0 * lr * x_star / kappa**2
    if np.any(a >= 2.0):
        raise ValueError("lr too large: the linearised recursion is unstable")
    r = (x_star / mu2) ** (2 * k)
    var_xi = 2.0 / (batch * kappa**2)
    return (2.0 * lr * x_star) ** 2 * var_xi / (a * (2.0 - a)) * (1 + (1 - a) * r) / (1 - (1 - a) * r)


def rbm_learning_bias(kappa, mu2, lr, batch):
    r"""Leading-order shift :math:`\langle X_{ii}\rangle-x_i^*` of the learned modes under PCD noise (:math:`\sigma_h=1`).

    Averaging the update of :math:`X_{ii}` (target eigenbasis) at stationarity, to second order in the
    fluctuations :math:`\delta=X-X^*` and with the linear-noise covariances
    :math:`\langle\delta_{ij}^2\rangle=\frac{\alpha}{2|\mathcal B|}(x_i^*+x_j^*)(1+\delta_{ij})`, gives

    .. math::

        \langle\delta_{ii}\rangle=-\frac{\alpha}{2|\mathcal B|\,x_i^*}\sum_j\frac{1+\delta_{ij}}{\kappa_j}
        \big[\mu^2(x_i^*+x_j^*)-\kappa_ix_j^*\big],

    negative and proportional to :math:`\alpha/|\mathcal B|`. Every mode enters every shift: the bias comes
    from the coupling of all eigenvalues (the same fluctuations that produce the Coulomb repulsion).
    Valid for a full-rank model (:math:`N_h=N_v`) with every :math:`\kappa_j<\mu^2`.

    Parameters
    ----------
    kappa : array_like, shape (n_v,)
        All target eigenvalues, each below ``mu2``.
    mu2 : float
        Visible mass.
    lr : float
        Learning rate.
    batch : int
        Batch size.

    Returns
    -------
    ndarray, shape (n_v,)

    Examples
    --------
    >>> np.round(rbm_learning_bias([4.0, 6.0, 6.0, 8.0], 9.0, 0.1, 16), 4)
    array([-0.0383, -0.0336, -0.0336, -0.0312])
    """
    kappa, mu2 = _check_learnable(kappa, mu2)
    if kappa.ndim != 1:
        raise ValueError(f"kappa must be 1-D, got shape {kappa.shape}")
    lr = check_positive(lr, "lr")
    batch = check_positive_int(batch, "batch")
    x = mu2 - kappa
    weight = (1.0 + np.eye(kappa.size)) / kappa[None, :]
    bracket = mu2 * (x[:, None] + x[None, :]) - kappa[:, None] * x[None, :]
    return -lr / (2.0 * batch) / x * np.sum(weight * bracket, axis=1)


def rbm_mode_dynamics(x0, kappa, mu2, lr, steps):
    r"""Exact-gradient dynamics of modes aligned with the target eigenbasis (:math:`\sigma_h=1`).

    If :math:`W` has singular vectors along the target eigenvectors, the exact gradient update
    :math:`W\leftarrow W+\alpha[(K^{\rm target})^{-1}-(\mu^2-WW^\top)^{-1}]W` decouples into
    :math:`x\leftarrow x\,\big(1+\alpha(1/\kappa-1/(\mu^2-x))\big)^2` for each mode.

    Parameters
    ----------
    x0 : array_like
        Initial eigenvalues, in :math:`[0,\mu^2)`.
    kappa : array_like
        Target eigenvalues, broadcast with ``x0``.
    mu2 : float
        Visible mass.
    lr : float
        Learning rate.
    steps : int
        Number of updates.

    Returns
    -------
    ndarray, shape (steps + 1, ...)
        The trajectory, starting with ``x0``.

    Examples
    --------
    >>> traj = rbm_mode_dynamics([0.1, 0.1], [4.0, 8.0], 9.0, 0.1, 4000)
    >>> np.round(traj[-1], 2)
    array([5., 1.])
    """
    x0 = check_array(x0, "x0")
    kappa = _check_kappa(kappa)
    mu2 = check_positive(mu2, "mu2")
    lr = check_positive(lr, "lr")
    steps = check_size(steps, "steps")
    if np.any(x0 < 0) or np.any(x0 >= mu2):
        raise ValueError("x0 must lie in [0, mu2)")
    x = np.broadcast_to(x0, np.broadcast_shapes(x0.shape, kappa.shape)).astype(float)
    out = np.empty((steps + 1,) + x.shape)
    out[0] = x
    for n in range(steps):
        x = x * (1.0 + lr * (1.0 / kappa - 1.0 / (mu2 - x))) ** 2
        if np.any(x >= mu2) or not np.all(np.isfinite(x)):
            raise FloatingPointError("the dynamics left [0, mu2): reduce lr")
        out[n + 1] = x
    return out


# ---------------------------------------------------------------- training
def _check_target(K_target, mu2):
    K = check_array(K_target, "K_target", ndim=2)
    if K.shape[0] != K.shape[1]:
        raise ValueError(f"K_target must be square, got shape {K.shape}")
    if not np.allclose(K, K.T, atol=1e-10 * max(1.0, np.abs(K).max())):
        raise ValueError("K_target must be symmetric")
    kappa, U = np.linalg.eigh(K)
    if kappa[0] <= 0:
        raise ValueError("K_target must be positive definite")
    if mu2 <= kappa[0]:
        raise ValueError(
            f"mu2 = {mu2} must exceed the smallest eigenvalue of K_target ({kappa[0]:.4g}): "
            "otherwise no mode can be learned"
        )
    return K, kappa, U


def _check_training(K_target, n_h, mu2, lr, steps, sigma_h, w_std):
    """The arguments shared by the two trainers; the target as (K, kappa, U)."""
    mu2 = check_positive(mu2, "mu2")
    target = _check_target(K_target, mu2)
    return (target, check_size(n_h, "n_h"), mu2, check_positive(lr, "lr"), check_size(steps, "steps"),
            check_positive(sigma_h, "sigma_h"), check_positive(w_std, "w_std"))


def train_rbm_exact(K_target, n_h, mu2, lr, steps, rng=None, sigma_h=1.0, w_std=0.1, progress=None):
    r"""Train the Gaussian RBM with the exact (mean-field) gradient.

    Iterates :math:`W\leftarrow W+\alpha\sigma_h^2\big[(K^{\rm target})^{-1}-(\mu^2I-\sigma_h^2WW^\top)^{-1}\big]W`
    from :math:`W_{ia}\sim N(0,w_{\rm std}^2)`: the PCD update with the sampled correlator replaced by its
    expectation (no mini-batch noise).

    Parameters
    ----------
    K_target : array_like, shape (n_v, n_v)
        Symmetric positive-definite target kernel; ``mu2`` must exceed its smallest eigenvalue.
    n_h : int
        Number of hidden units.
    mu2 : float
        Visible mass.
    lr : float
        Learning rate.
    steps : int
        Number of updates.
    rng : int, numpy.random.Generator or None
        Randomness of the initial weights.
    sigma_h : float
        Hidden-unit standard deviation.
    w_std : float
        Standard deviation of the initial weights.

    progress : bool or None
        Show a progress bar (one update per tick, on stderr); ``None``: on at the paper's
        size, off at the book's size and under CI (``seqrmt.ensemble.progress_enabled``).

    Returns
    -------
    ndarray, shape (n_v, n_h)
        The trained ``W``.

    Examples
    --------
    >>> W = train_rbm_exact(rbm_target_kernel(6, 4.0), 6, 9.0, 0.1, 6000, rng=0)
    >>> np.round(rbm_model_spectrum(W, 9.0), 2)
    array([4., 5., 5., 7., 7., 8.])
    """
    (K, _, _), n_h, mu2, lr, steps, sigma_h, w_std = _check_training(
        K_target, n_h, mu2, lr, steps, sigma_h, w_std)
    rng = as_generator(rng)
    n_v = K.shape[0]
    C_target = np.linalg.inv(K)
    W = rng.normal(0.0, w_std, size=(n_v, n_h))
    s2 = sigma_h**2
    eye = np.eye(n_v)
    with single_threaded_blas():
        for n in progress_bar(range(steps), desc="RBM exact-gradient steps", enabled=progress):
            M = mu2 * eye - s2 * (W @ W.T)
            try:
                W = W + lr * s2 * (C_target - np.linalg.inv(M)) @ W
            except np.linalg.LinAlgError as exc:
                raise FloatingPointError("the model kernel became singular: reduce lr") from exc
            if n % 200 == 0 and np.linalg.eigvalsh(mu2 * eye - s2 * (W @ W.T))[0] <= 0:
                raise FloatingPointError("the model kernel lost positivity: reduce lr")
    if not np.all(np.isfinite(W)) or rbm_model_spectrum(W, mu2, sigma_h)[0] <= 0:
        raise FloatingPointError("the model kernel lost positivity: reduce lr")
    return W


class PCDTrajectory(NamedTuple):
    """Recorded PCD training of an ensemble of Gaussian RBMs.

    Attributes
    ----------
    steps : ndarray, shape (n_rec,)
        Update counts at which the state was recorded (0 = initial state).
    eigs : ndarray, shape (n_rec, n_seeds, n_h)
        Ascending eigenvalues of :math:`W^\\top W` per seed.
    modes : ndarray, shape (n_rec, n_seeds, n_v)
        Diagonal :math:`u_i^\\top WW^\\top u_i` of :math:`X=WW^\\top` in the target eigenbasis, in the order of ``kappa``.
    kappa : ndarray, shape (n_v,)
        Ascending target eigenvalues; their eigenvectors :math:`u_i` define ``modes``.
    W : ndarray, shape (n_seeds, n_v, n_h)
        Final weights.
    gram : ndarray, shape (n_rec, n_seeds, n_v, n_v)
        The whole matrix :math:`U^\\top XU` in the target eigenbasis (``modes`` is its diagonal); input of
        :func:`~seqrmt.dyson.rbm_pairs.rbm_pair_eigenvalues`.
    """

    steps: np.ndarray
    eigs: np.ndarray
    modes: np.ndarray
    kappa: np.ndarray
    W: np.ndarray
    gram: np.ndarray


_NOISE_BLOCK = 2**20  # standard normals drawn at once (8 MiB)


def _gibbs_noise(gens, steps, item_shape):
    """Standard normals for each update, shape ``(len(gens),) + item_shape``.

    Training ``i`` draws its numbers, update after update, from ``gens[i]``; the blocks (at most
    ``_NOISE_BLOCK`` numbers, at least one update) only bound memory and do not change the numbers.
    """
    per_step = len(gens) * int(np.prod(item_shape, dtype=np.int64))
    chunk = max(1, min(steps, _NOISE_BLOCK // per_step))
    for k0 in range(0, steps, chunk):
        m = min(chunk, steps - k0)
        block = np.stack([g.standard_normal((m,) + item_shape) for g in gens], axis=1)
        yield from block


def train_rbm_pcd(K_target, n_h, mu2, lr, batch, steps, n_seeds, rng=None, k=3, sigma_h=1.0,
                  record_steps=None, init="random", w_std=0.1, progress=None):
    r"""Train an ensemble of Gaussian RBMs by persistent contrastive divergence, vectorised over seeds.

    Each update (one "epoch"): ``k`` Gibbs sweeps on each of the ``batch`` persistent chains,
    :math:`h\sim N(\sigma_h^2W^\top\phi,\sigma_h^2)`, :math:`\phi\sim N(Wh/\mu^2,\mu^{-2})`; then
    :math:`W\leftarrow W+\alpha\sigma_h^2[(K^{\rm target})^{-1}-\hat C]W` with the analytic positive phase and
    the sampled negative phase :math:`\hat C=\frac1{|\mathcal B|}\sum_b\phi_b\phi_b^\top`. No momentum,
    weight decay or learning-rate schedule.

    Parameters
    ----------
    K_target, n_h, mu2
        As in :func:`train_rbm_exact`: target kernel, number of hidden units, visible mass.
    lr : float
        Learning rate :math:`\alpha`.
    batch : int
        Number of persistent chains :math:`|\mathcal B|`.
    steps : int
        Number of updates.
    n_seeds : int
        Ensemble size (independent trainings).
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None
        Root of the trainings' generators: training ``i`` draws its initial weights, its initial
        chains and its Gibbs noise from the ``i``-th child (:func:`seqrmt.ensemble.spawn_generators`),
        so the first ``k`` trainings do not depend on ``n_seeds``.
    k : int
        Gibbs sweeps per update.
    sigma_h : float
        Hidden-unit standard deviation.
    record_steps : array_like of int, optional
        Update counts in ``[0, steps]`` at which to record the spectra (default: ``[steps]``).
    init : {"random", "fixed_point"} or array_like
        ``"random"``: :math:`W_{ia}\sim N(0,w_{\rm std}^2)` and chains started at all ones (the authors'
        choice). ``"fixed_point"``: :math:`W=U_{:,:N_h}\operatorname{diag}(\sqrt{x^*}/\sigma_h)`, the learned
        solution on the ``n_h`` smallest-:math:`\kappa` modes, with chains drawn from the model distribution
        (no transient; for stationary studies). An array of shape ``(n_v, n_h)`` or
        ``(n_seeds, n_v, n_h)`` starts there, with chains drawn from the model distribution.
    w_std : float
        Standard deviation of the random initial weights.

    progress : bool or None
        Show a progress bar (one update of the whole ensemble per tick, on stderr); ``None``: on at the paper's
        size, off at the book's size and under CI (``seqrmt.ensemble.progress_enabled``).

    Returns
    -------
    PCDTrajectory

    Examples
    --------
    >>> K = rbm_target_kernel(4, 4.0)
    >>> res = train_rbm_pcd(K, 4, 9.0, 0.1, 16, 3000, 20, rng=0)
    >>> res.eigs.shape, res.modes.shape
    ((1, 20, 4), (1, 20, 4))
    >>> np.round(res.modes[-1].mean(axis=0), 1)  # near mu2 - kappa = 5, 3, 3, 1
    array([5. , 3. , 3. , 0.8])
    """
    (K, kappa, U), n_h, mu2, lr, steps, sigma_h, w_std = _check_training(
        K_target, n_h, mu2, lr, steps, sigma_h, w_std)
    batch = check_size(batch, "batch")
    n_seeds = check_size(n_seeds, "n_seeds")
    k = check_positive_int(k, "k")
    gens = spawn_generators(check_seed(rng), n_seeds)
    n_v = K.shape[0]
    if record_steps is None:
        record_steps = np.array([steps])
    else:
        record_steps = np.unique(check_array(record_steps, "record_steps", ndim=1)).astype(int)
        if record_steps[0] < 0 or record_steps[-1] > steps:
            raise ValueError("record_steps must lie in [0, steps]")
    s2, mu = sigma_h**2, np.sqrt(mu2)
    C_target = np.linalg.inv(K)

    if isinstance(init, str):
        if init == "random":
            W = np.stack([g.normal(0.0, w_std, size=(n_v, n_h)) for g in gens])
            phi = np.ones((n_seeds, batch, n_v))
        elif init == "fixed_point":
            m = min(n_h, n_v)
            W0 = np.zeros((n_v, n_h))
            W0[:, :m] = U[:, :m] * np.sqrt(np.maximum(mu2 - kappa[:m], 0.0) / s2)
            W, phi = np.broadcast_to(W0, (n_seeds, n_v, n_h)).copy(), None
        else:
            raise ValueError(f"init must be 'random', 'fixed_point' or an array, got {init!r}")
    else:
        W0 = check_array(init, "init")
        if W0.shape not in {(n_v, n_h), (n_seeds, n_v, n_h)}:
            raise ValueError(f"init must have shape {(n_v, n_h)} or {(n_seeds, n_v, n_h)}, got {W0.shape}")
        W, phi = np.broadcast_to(W0, (n_seeds, n_v, n_h)).copy(), None
    if phi is None:  # chains from the model distribution N(0, (mu2 - s2 W W^T)^{-1})
        M = mu2 * np.eye(n_v) - s2 * W @ W.transpose(0, 2, 1)
        if np.linalg.eigvalsh(M)[:, 0].min() <= 0:
            raise ValueError("init: the model kernel mu2 - sigma_h^2 W W^T must be positive definite")
        L = np.linalg.cholesky(np.linalg.inv(M))
        z = np.stack([g.standard_normal((batch, n_v)) for g in gens])
        phi = z @ L.transpose(0, 2, 1)

    eigs = np.empty((record_steps.size, n_seeds, n_h))
    gram = np.empty((record_steps.size, n_seeds, n_v, n_v))
    rec = 0

    def record(W, rec):
        eigs[rec] = np.linalg.eigvalsh(W.transpose(0, 2, 1) @ W)
        UW = U.T @ W
        gram[rec] = UW @ UW.transpose(0, 2, 1)

    if record_steps[0] == 0:
        record(W, 0)
        rec = 1
    noise = _gibbs_noise(gens, steps, (k, batch, n_h + n_v))
    with single_threaded_blas():
        for n in progress_bar(range(1, steps + 1), desc="RBM PCD updates", enabled=progress):
            z = next(noise)  # (n_seeds, k, batch, n_h + n_v)
            for j in range(k):
                h = s2 * (phi @ W) + sigma_h * z[:, j, :, :n_h]
                phi = (h @ W.transpose(0, 2, 1)) / mu2 + z[:, j, :, n_h:] / mu
            C_hat = phi.transpose(0, 2, 1) @ phi / batch
            W = W + lr * s2 * (C_target - C_hat) @ W
            if n % 100 == 0 and not np.all(np.isfinite(W)):
                raise FloatingPointError("PCD training diverged: reduce lr or increase mu2")
            if rec < record_steps.size and n == record_steps[rec]:
                record(W, rec)
                rec += 1
    if not np.all(np.isfinite(W)):
        raise FloatingPointError("PCD training diverged: reduce lr or increase mu2")
    modes = np.diagonal(gram, axis1=-2, axis2=-1).copy()
    return PCDTrajectory(record_steps, eigs, modes, kappa, W, gram)


# ---------------------------------------------------------------- the ultraviolet regulator
def rbm_learned_spectrum(kappa, n_h, mu2):
    r"""Model-kernel spectrum at the learned fixed point: :math:`\min(\kappa_i,\mu^2)` for the ``n_h`` modes.

    Exact-gradient training with ``n_h`` hidden units learns the ``n_h`` smallest target eigenvalues
    (the infrared modes) that lie below :math:`\mu^2`; every other model eigenvalue stays at :math:`\mu^2`.

    Parameters
    ----------
    kappa : array_like, shape (n_v,)
        Target-kernel eigenvalues, positive (any order).
    n_h : int
        Number of hidden units.
    mu2 : float
        Visible mass, positive.

    Returns
    -------
    ndarray, shape (n_v,)
        Ascending predicted model-kernel eigenvalues.

    Examples
    --------
    >>> rbm_learned_spectrum([4.0, 8.0, 5.0, 10.0], 3, 9.0)
    array([4., 5., 8., 9.])
    >>> rbm_learned_spectrum([4.0, 8.0, 5.0, 10.0], 1, 9.0)
    array([4., 9., 9., 9.])
    """
    kappa = np.sort(_check_kappa(kappa).ravel())
    n_h = check_positive_int(n_h, "n_h")
    mu2 = check_positive(mu2, "mu2")
    m = min(n_h, kappa.size)
    return np.sort(np.r_[np.minimum(kappa[:m], mu2), np.full(kappa.size - m, mu2)])


from .rbm_pairs import (  # noqa: E402,F401  (re-exported: the former home of these names)
    plot_mode_learning,
    plot_pair_histograms,
    plot_stationary_eigenvalues,
    rbm_pair_eigenvalues,
    rbm_pair_scaled,
    rbm_pair_statistics,
    rbm_pair_widths,
    rbm_variance_ratio,
)
