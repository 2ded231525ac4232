r"""Dyson Brownian motion of symmetric matrices, its stationary Coulomb gas, and the Wishart process of Gram matrices.

A symmetric :math:`n\times n` matrix follows the matrix Ornstein-Uhlenbeck process

.. math::
    dH=-\theta H\,dt+s\,dB^{\rm GOE}_t ,

where :math:`dB^{\rm GOE}` has independent off-diagonal increments of variance :math:`dt` and diagonal
increments of variance :math:`2dt`. This is the continuum limit of the SGD-like update
:math:`H\leftarrow H-\alpha\theta H+\sqrt{\alpha}\,s\,G` with GOE noise :math:`G` (one step = time :math:`\alpha`).
Its eigenvalues perform Dyson Brownian motion (Dyson index :math:`\beta=1`),

.. math::
    d\lambda_i=\Big[-\theta\lambda_i+s^2\sum_{j\ne i}\frac1{\lambda_i-\lambda_j}\Big]dt+\sqrt2\,s\,d\beta_i ,

and the stationary law is the Coulomb gas
:math:`P\propto\prod_{i<j}|\lambda_i-\lambda_j|\prod_ie^{-\theta\lambda_i^2/2s^2}`, i.e. the GOE with off-diagonal
variance :math:`s^2/2\theta`, whose eigenvalue density tends to the semicircle of variance :math:`ns^2/2\theta`.

For a rectangular :math:`W\in\mathbb R^{m\times n}` with :math:`dW=s\,dB_t`, the eigenvalues of the Gram matrix
:math:`W^\top W` follow the Wishart (Bru) process instead (:func:`wishart_process`, :func:`wishart_drift`):
multiplicative noise :math:`2s\sqrt{x_i}` and interaction :math:`s^2(x_i+x_j)/(x_i-x_j)`.

Shapes: a matrix ``h0`` of shape ``(n, n)`` or a batch ``(m, n, n)``; eigenvalue paths have shape
``(n_steps + 1, n)`` or ``(n_steps + 1, m, n)``, sorted increasingly at each time.

Realisations: each matrix of a batch (each row of a batch of walkers) is one realisation with its own
generator, the ``i``-th child of ``rng`` (:func:`seqrmt.ensemble.spawn_generators`), from which it
draws its increments step after step. A path therefore depends only on the seed and its index in
the batch, not on the size of the batch; a single matrix is the batch of one.

Used in: Chapter 4.
"""

from __future__ import annotations

import numpy as np

from .._validation import (
    check_allocation,
    check_array,
    check_nonnegative,
    check_positive,
    check_positive_int,
    check_size,
)
from .._validation import check_seed
from ..ensemble import spawn_generators
from ..rmt import semicircle_density
from ..runtime import single_threaded_blas

__all__ = [
    "dyson_brownian_motion",
    "independent_brownian_motion",
    "dyson_drift",
    "coulomb_gas_log_weight",
    "stationary_entry_variance",
    "stationary_density",
    "wishart_process",
    "wishart_drift",
]


def _ou_coefficients(theta, s, dt):
    """Exact one-step decay a and noise amplitude b of dx = -theta x dt + s dB."""
    if theta == 0:
        return 1.0, s * np.sqrt(dt)
    a = np.exp(-theta * dt)
    return a, s * np.sqrt(-np.expm1(-2.0 * theta * dt) / (2.0 * theta))


_NOISE_BLOCK = 2**22  # standard normals drawn at once (32 MiB)


def _noise_blocks(rng, batch_shape, item_shape, n_steps):
    """Standard normal increments, blocks of shape ``(k,) + batch_shape + item_shape``.

    Item ``i`` of the batch draws its increments, step after step, from the ``i``-th child of
    ``rng``; the blocks (at most ``_NOISE_BLOCK`` numbers, at least one step) only bound memory
    and do not change the numbers.
    """
    gens = spawn_generators(check_seed(rng), int(np.prod(batch_shape, dtype=np.int64)))
    per_step = len(gens) * int(np.prod(item_shape, dtype=np.int64))
    chunk = max(1, min(n_steps, _NOISE_BLOCK // max(per_step, 1)))
    for k0 in range(0, n_steps, chunk):
        k = min(chunk, n_steps - k0)
        block = np.stack([g.standard_normal((k,) + item_shape) for g in gens], axis=1)
        yield block.reshape((k,) + batch_shape + item_shape)


def dyson_brownian_motion(h0, t_max, n_steps, rng=None, theta=0.0, s=1.0):
    r"""Simulate :math:`dH=-\theta H\,dt+s\,dB^{\rm GOE}` and return the eigenvalue paths.

    The Ornstein-Uhlenbeck transition is sampled exactly,
    :math:`H_{k+1}=e^{-\theta\Delta t}H_k+s\sqrt{(1-e^{-2\theta\Delta t})/2\theta}\,G_k` (Brownian increment when
    :math:`\theta=0`), so the eigenvalues at the grid times have the law of Dyson Brownian motion for any
    step size. Eigenvalues are returned sorted; their paths never meet (level repulsion).

    Parameters
    ----------
    h0 : array_like, shape (n, n) or (m, n, n)
        Initial symmetric matrix (or a batch of them).
    t_max : float
        Final time.
    n_steps : int
        Number of time steps (the paths have ``n_steps + 1`` points).
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None
        Root of the matrices' generators (matrix ``i`` of a batch: the ``i``-th child).
    theta : float
        Restoring strength :math:`\theta\ge0` (quadratic potential :math:`\theta\lambda^2/2`).
    s : float
        Noise scale (off-diagonal increments of variance :math:`s^2dt`).

    Returns
    -------
    t : numpy.ndarray, shape (n_steps + 1,)
        Times.
    eigs : numpy.ndarray, shape (n_steps + 1, n) or (n_steps + 1, m, n)
        Sorted eigenvalues at each time.

    Examples
    --------
    >>> t, eigs = dyson_brownian_motion(np.zeros((4, 4)), 1.0, 100, rng=0)
    >>> eigs.shape, bool(np.all(np.diff(eigs[1:], axis=-1) > 0))
    ((101, 4), True)
    """
    h = check_array(h0, "h0")
    if h.ndim not in (2, 3) or h.shape[-1] != h.shape[-2]:
        raise ValueError(f"h0 must have shape (n, n) or (m, n, n), got {h.shape}")
    if not np.allclose(h, np.swapaxes(h, -1, -2)):
        raise ValueError("h0 must be symmetric")
    t_max = check_positive(t_max, "t_max")
    n_steps = check_size(n_steps, "n_steps")
    check_allocation((n_steps + 1,) + h.shape[:-1], "n_steps, h0")
    theta = check_nonnegative(theta, "theta")
    s = check_positive(s, "s")
    rng = check_seed(rng)
    a, b = _ou_coefficients(theta, s, t_max / n_steps)
    out = np.empty((n_steps + 1,) + h.shape[:-1])
    k = 0
    with single_threaded_blas():
        out[0] = np.linalg.eigvalsh(h)
        for block in _noise_blocks(rng, h.shape[:-2], h.shape[-2:], n_steps):
            for g in block:
                h = a * h + (b / np.sqrt(2.0)) * (g + np.swapaxes(g, -1, -2))
                k += 1
                out[k] = np.linalg.eigvalsh(h)
    return np.linspace(0.0, t_max, n_steps + 1), out


def independent_brownian_motion(x0, t_max, n_steps, rng=None, theta=0.0, s=1.0):
    r"""Independent walkers :math:`dx_i=-\theta x_i\,dt+\sqrt2\,s\,d\beta_i`: Dyson's SDE without the repulsion.

    The same noise as the eigenvalue SDE (exact Ornstein-Uhlenbeck transitions); the walkers keep
    their labels and are free to cross.

    Parameters
    ----------
    x0 : array_like, shape (n,) or (m, n)
        Initial positions (each row of a batch one realisation).
    t_max, n_steps, rng, theta, s
        As in :func:`dyson_brownian_motion`.

    Returns
    -------
    t : numpy.ndarray, shape (n_steps + 1,)
    x : numpy.ndarray, shape (n_steps + 1,) + x0.shape
        Unsorted paths.

    Examples
    --------
    >>> t, x = independent_brownian_motion(np.zeros(3), 1.0, 10, rng=0)
    >>> x.shape
    (11, 3)
    """
    x = check_array(x0, "x0")
    if x.ndim not in (1, 2):
        raise ValueError(f"x0 must be 1-D or 2-D, got shape {x.shape}")
    t_max = check_positive(t_max, "t_max")
    n_steps = check_size(n_steps, "n_steps")
    theta = check_nonnegative(theta, "theta")
    s = check_positive(s, "s")
    rng = check_seed(rng)
    check_allocation((n_steps + 1,) + x.shape, "n_steps, x0")
    a, b = _ou_coefficients(theta, np.sqrt(2.0) * s, t_max / n_steps)
    out = np.empty((n_steps + 1,) + x.shape)
    out[0] = x
    k = 0
    for block in _noise_blocks(rng, x.shape[:-1], x.shape[-1:], n_steps):
        for z in block:
            out[k + 1] = a * out[k] + b * z
            k += 1
    return np.linspace(0.0, t_max, n_steps + 1), out


def dyson_drift(lam, theta=0.0, s=1.0):
    r"""Drift of the eigenvalue SDE, :math:`-\theta\lambda_i+s^2\sum_{j\ne i}1/(\lambda_i-\lambda_j)`.

    Parameters
    ----------
    lam : array_like, shape (n,) or (m, n)
        Distinct eigenvalues.
    theta : float
        Restoring strength.
    s : float
        Noise scale.

    Returns
    -------
    numpy.ndarray, same shape as ``lam``

    Examples
    --------
    >>> dyson_drift([-1.0, 1.0]).tolist()
    [-0.5, 0.5]
    """
    lam = _spectrum(lam, "lam")
    theta = check_nonnegative(theta, "theta")
    s = check_positive(s, "s")
    return -theta * lam + s**2 * _pair_sum(lam, lambda a, b: 1.0)


def _spectrum(lam, name):
    """A 1-D or 2-D array of eigenvalues, each spectrum with distinct entries."""
    lam = check_array(lam, name)
    if lam.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D or 2-D, got shape {lam.shape}")
    if np.any(np.diff(np.sort(lam, axis=-1), axis=-1) == 0):
        raise ValueError(f"{name} must hold distinct eigenvalues")
    return lam


def _pair_sum(lam, numerator):
    """sum_{j != i} numerator(lam_i, lam_j) / (lam_i - lam_j) along the last axis."""
    a, b = lam[..., :, None], lam[..., None, :]
    off = ~np.eye(lam.shape[-1], dtype=bool)
    terms = np.zeros(np.broadcast_shapes(a.shape, b.shape))
    num = np.broadcast_to(numerator(a, b), terms.shape)
    diff = np.broadcast_to(a - b, terms.shape)
    terms[..., off] = num[..., off] / diff[..., off]
    return terms.sum(axis=-1)


def coulomb_gas_log_weight(lam, theta=1.0, s=1.0):
    r"""Log of the unnormalised Coulomb-gas weight :math:`\sum_{i<j}\log|\lambda_i-\lambda_j|-\frac{\theta}{2s^2}\sum_i\lambda_i^2`.

    It is the stationary law of :func:`dyson_brownian_motion` (:math:`\beta=1`): a gas of charges with
    logarithmic repulsion in the confining potential :math:`\theta\lambda^2/2` at temperature :math:`s^2`.

    Parameters
    ----------
    lam : array_like, shape (n,) or (m, n)
        Eigenvalues.
    theta : float
        Restoring strength (> 0).
    s : float
        Noise scale.

    Returns
    -------
    float or numpy.ndarray, shape (m,)

    Examples
    --------
    >>> round(float(coulomb_gas_log_weight([-1.0, 1.0])), 6)  # log 2 - 1
    -0.306853
    """
    lam = check_array(lam, "lam")
    if lam.ndim not in (1, 2):
        raise ValueError(f"lam must be 1-D or 2-D, got shape {lam.shape}")
    theta = check_positive(theta, "theta")
    s = check_positive(s, "s")
    iu = np.triu_indices(lam.shape[-1], 1)
    diff = np.abs(lam[..., :, None] - lam[..., None, :])[..., iu[0], iu[1]]
    with np.errstate(divide="ignore"):
        rep = np.log(diff).sum(axis=-1)
    return rep - theta / (2.0 * s**2) * np.sum(lam**2, axis=-1)


def stationary_entry_variance(theta=1.0, s=1.0):
    r"""Off-diagonal variance :math:`s^2/2\theta` of the stationary matrix (diagonal: twice that).

    Examples
    --------
    >>> stationary_entry_variance(2.0, 1.0)
    0.25
    """
    theta = check_positive(theta, "theta")
    s = check_positive(s, "s")
    return s**2 / (2.0 * theta)


def stationary_density(x, n, theta=1.0, s=1.0):
    r"""Large-:math:`n` stationary eigenvalue density of the Coulomb gas: the semicircle of variance :math:`ns^2/2\theta`.

    The density of the gas minimises the energy :math:`\frac{\theta}{2}\int\lambda^2\rho-\frac{s^2}2\iint\log|\lambda-\mu|\rho\rho`
    (with :math:`n` charges); its minimiser is the semicircle on :math:`[-2R,2R]`, :math:`R^2=ns^2/2\theta`
    (computed by :func:`seqrmt.rmt.semicircle_density`).

    Parameters
    ----------
    x : array_like
        Points.
    n : int
        Number of eigenvalues (matrix size).
    theta, s : float
        As in :func:`dyson_brownian_motion` (:math:`\theta>0`).

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> round(float(stationary_density(0.0, 50, theta=25.0, s=1.0)), 6)  # radius 2: 1/pi
    0.31831
    """
    n = check_positive_int(n, "n")
    return semicircle_density(x, var=n * stationary_entry_variance(theta, s))


def wishart_process(w0, t_max, n_steps, rng=None, s=1.0):
    r"""Brownian motion :math:`dW=s\,dB_t` of a rectangular matrix and the eigenvalues of :math:`X=W^\top W`.

    Each step adds independent :math:`N(0,s^2\Delta t)` entries to :math:`W\in\mathbb R^{m\times n}`; the
    increments are exact, so the eigenvalues of :math:`W^\top W` at the grid times have the law of the
    Wishart (Bru) process of :func:`wishart_drift` for any step size. From :math:`W_0=0`,
    :math:`X_t/(mts^2)` is a white Wishart matrix, whose spectrum tends to the Marchenko-Pastur law of
    ratio :math:`n/m`.

    Parameters
    ----------
    w0 : array_like, shape (m, n) or (b, m, n)
        Initial matrix (or a batch of them).
    t_max : float
        Final time.
    n_steps : int
        Number of time steps.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None
        Root of the matrices' generators (matrix ``i`` of a batch: the ``i``-th child).
    s : float
        Noise scale (entry increments of variance :math:`s^2dt`).

    Returns
    -------
    t : numpy.ndarray, shape (n_steps + 1,)
        Times.
    eigs : numpy.ndarray, shape (n_steps + 1, n) or (n_steps + 1, b, n)
        Ascending eigenvalues of :math:`W^\top W` at each time.

    Examples
    --------
    >>> t, x = wishart_process(np.zeros((2000, 3)), 1.0, 1, rng=0)
    >>> np.round(x[-1] / 2000, 1)  # W^T W / m -> s^2 t I for m >> n
    array([1., 1., 1.])
    """
    w = check_array(w0, "w0")
    if w.ndim not in (2, 3):
        raise ValueError(f"w0 must have shape (m, n) or (b, m, n), got {w.shape}")
    t_max = check_positive(t_max, "t_max")
    n_steps = check_size(n_steps, "n_steps")
    check_allocation((n_steps + 1,) + w.shape[:-2] + w.shape[-1:], "n_steps, w0")
    s = check_positive(s, "s")
    rng = check_seed(rng)
    amp = s * np.sqrt(t_max / n_steps)
    out = np.empty((n_steps + 1,) + w.shape[:-2] + w.shape[-1:])
    k = 0
    with single_threaded_blas():
        out[0] = np.linalg.eigvalsh(np.swapaxes(w, -1, -2) @ w)
        for block in _noise_blocks(rng, w.shape[:-2], w.shape[-2:], n_steps):
            for z in block:
                w = w + amp * z
                k += 1
                out[k] = np.linalg.eigvalsh(np.swapaxes(w, -1, -2) @ w)
    return np.linspace(0.0, t_max, n_steps + 1), out


def wishart_drift(x, m, s=1.0):
    r"""Drift :math:`s^2\big[m+\sum_{j\ne i}\frac{x_i+x_j}{x_i-x_j}\big]` of the eigenvalues of :math:`X=W^\top W`.

    For :math:`dW=s\,dB_t` with :math:`W\in\mathbb R^{m\times n}`, :math:`m\ge n`, the eigenvalues of
    :math:`X` obey Bru's Wishart process

    .. math::
        dx_i=s^2\Big[m+\sum_{j\ne i}\frac{x_i+x_j}{x_i-x_j}\Big]dt+2s\sqrt{x_i}\,d\beta_i ,

    with independent Brownian motions :math:`\beta_i`. The drifts sum to :math:`mns^2`, the growth rate
    of :math:`\mathbb E\operatorname{Tr}X`.

    Parameters
    ----------
    x : array_like, shape (n,) or (b, n)
        Distinct positive eigenvalues.
    m : int
        Number of rows of :math:`W` (at least ``n``).
    s : float
        Noise scale.

    Returns
    -------
    numpy.ndarray, same shape as ``x``

    Examples
    --------
    >>> wishart_drift([1.0, 3.0], m=2).tolist()  # 2 + (1+3)/(1-3), 2 + (3+1)/(3-1)
    [0.0, 4.0]
    """
    x = _spectrum(x, "x")
    if np.any(x <= 0):
        raise ValueError("x must be positive (eigenvalues of a full-rank W^T W)")
    m = check_positive_int(m, "m")
    if m < x.shape[-1]:
        raise ValueError(f"m must be at least n = {x.shape[-1]} (the number of eigenvalues), got {m}")
    s = check_positive(s, "s")
    return s**2 * (m + _pair_sum(x, lambda a, b: a + b))
