r"""Attention as a kernel: ridge memorisation and the spectrum of the attention kernel.

Setting (Chapter 5.2, after :cite:`liao2025attention`). Tokens :math:`x_i=y_i\mu+z_i\in\mathbb R^p`,
:math:`i\le n`, with labels :math:`y_i=\pm1`, :math:`z_i\sim N(0,I_p)` and :math:`s=\|\mu\|^2`, are the
columns of :math:`X\in\mathbb R^{p\times n}`; :math:`c=p/n`. A ridge probe with penalty
:math:`\gamma` on features :math:`F\in\mathbb R^{q\times n}` (one column per token) memorises the
labels with error

.. math::
    E(F)=\frac{\gamma^2}{n}\,y^\top\Big(\frac{F^\top F}{n}+\gamma I_n\Big)^{-2}y ,

the mean squared training residual. :math:`F=X` is ridge regression on the tokens; :math:`F=XK`,
with the attention kernel :math:`K=f(X^\top WX/\sqrt p)/\sqrt p` (diagonal set to zero), is one
layer of nonlinear attention with a trained linear read-out.

Used in: Chapter 5 (notebook ``02_attention_memorisation``).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_allocation, check_array, check_callable, check_nonnegative, check_positive, \
    check_size
from ..rmt import _positive_root, mp_stieltjes, semicircle_free_convolution
from .._validation import as_generator

__all__ = [
    "signal_tokens",
    "memorisation_error",
    "coresolvent_stieltjes",
    "ridge_memorisation_error",
    "attention_kernel",
    "gaussian_equivalent_kernel",
    "attention_kernel_stieltjes",
]


def signal_tokens(n, p, snr, rng=None):
    r"""Draw tokens :math:`x_i=y_i\mu+z_i` with balanced random labels.

    Parameters
    ----------
    n, p : int
        Number of tokens and dimension.
    snr : float
        :math:`s=\|\mu\|^2\ge0`; :math:`\mu=\sqrt s\,e_1` (the laws below are rotation invariant).
    rng : None, int or numpy.random.Generator

    Returns
    -------
    X : numpy.ndarray, shape (p, n)
        Tokens as columns.
    y : numpy.ndarray, shape (n,)
        Labels :math:`\pm1`, i.i.d. uniform.
    mu : numpy.ndarray, shape (p,)
        The mean direction times :math:`\sqrt s`.

    Examples
    --------
    >>> X, y, mu = signal_tokens(8, 4, 1.0, rng=0)
    >>> X.shape, y.shape, float(mu @ mu)
    ((4, 8), (8,), 1.0)
    """
    n = check_size(n, "n")
    p = check_size(p, "p")
    check_allocation((p, n), "n, p")
    s = check_nonnegative(snr, "snr")
    rng = as_generator(rng)
    y = rng.choice([-1.0, 1.0], size=n)
    mu = np.zeros(p)
    mu[0] = np.sqrt(s)
    X = rng.standard_normal((p, n)) + np.outer(mu, y)
    return X, y, mu


def memorisation_error(F, y, gamma):
    r"""Memorisation (training) error :math:`\frac{\gamma^2}{n}y^\top(F^\top F/n+\gamma I)^{-2}y`.

    It is the mean squared residual :math:`\frac1n\|y-F^\top w^*\|^2` of the ridge read-out
    :math:`w^*=(FF^\top+n\gamma I)^{-1}Fy`, since :math:`y-F^\top w^*=\gamma(F^\top F/n+\gamma I)^{-1}y`.
    Computed from one thin SVD of ``F``, so an array of ridges costs no more than one.

    Parameters
    ----------
    F : array_like, shape (q, n)
        Features, one column per token.
    y : array_like, shape (n,)
        Targets.
    gamma : float or array_like
        Ridge penalties :math:`\gamma>0`.

    Returns
    -------
    float or numpy.ndarray
        Same shape as ``gamma``.

    Examples
    --------
    >>> F = np.array([[1.0, 0.0], [0.0, 2.0]])
    >>> y = np.array([1.0, 1.0])  # eigenvalues of F^T F / n: 0.5 and 2
    >>> round(memorisation_error(F, y, 1.0), 6) == round(0.5 * (1 / 1.5**2 + 1 / 3**2), 6)
    True
    """
    F = check_array(F, "F", ndim=2)
    n = F.shape[1]
    y = check_array(y, "y", ndim=1, shape=(n,))
    gam = check_array(gamma, "gamma", positive=True)
    _, sv, vt = np.linalg.svd(F, full_matrices=False)
    proj = (vt @ y) ** 2
    rest = max(float(y @ y - proj.sum()), 0.0)  # component of y in the null space of F
    g = gam.reshape(-1, 1)
    err = (np.sum(proj * (g / (sv**2 / n + g)) ** 2, axis=1) + rest) / n
    return float(err[0]) if gam.ndim == 0 else err.reshape(gam.shape)


def coresolvent_stieltjes(ratio, gamma):
    r"""Limit :math:`m=\lim\frac1n\operatorname{Tr}(Z^\top Z/n+\gamma I_n)^{-1}`, :math:`Z` of size :math:`p\times n`.

    :math:`m` is the positive root of :math:`\gamma m^2+(\gamma+c-1)m-1=0`, i.e. of
    :math:`m=1/(\gamma+c/(1+m))`, with :math:`c=p/n`:

    .. math::
        m=\frac{-(\gamma+c-1)+\sqrt{(\gamma+c-1)^2+4\gamma}}{2\gamma}.

    Parameters
    ----------
    ratio : float or array_like
        :math:`c=p/n>0`.
    gamma : float or array_like
        :math:`\gamma>0`.

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    >>> m = coresolvent_stieltjes(0.5, 0.1)
    >>> round(m, 6) == round(1 / (0.1 + 0.5 / (1 + m)), 6)
    True
    """
    c = check_array(ratio, "ratio", positive=True)
    g = check_array(gamma, "gamma", positive=True)
    m = _positive_root(g, 1.0 - c - g, np.ones_like(c * g))
    return float(m) if np.ndim(m) == 0 else m


def ridge_memorisation_error(ratio, snr, gamma):
    r"""Closed-form limit of the ridge memorisation error :math:`E(X)` on signal-plus-noise tokens.

    .. math::
        E_{RR}=\frac{\gamma^2m^2\,\big(1+2m+(1+s)m^2\big)}
        {\big(1+(1+s)m\big)^2\big(1-c\,m^2/(1+m)^2\big)},

    with :math:`m` from :func:`coresolvent_stieltjes`, :math:`c=p/n` and :math:`s=\|\mu\|^2`.
    It is :math:`-\gamma^2\,\partial_\gamma h` for the limit
    :math:`h=m(1+m)/(1+(1+s)m)` of :math:`\frac1ny^\top(X^\top X/n+\gamma)^{-1}y`.

    Parameters
    ----------
    ratio : float or array_like
        :math:`c=p/n>0`.
    snr : float or array_like
        :math:`s\ge0`.
    gamma : float or array_like
        :math:`\gamma>0`. The three arguments broadcast.

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    As :math:`\gamma\to0` with :math:`c<1` the error tends to :math:`(1-c)/(1+s)`:

    >>> round(ridge_memorisation_error(0.5, 1.0, 1e-8), 6)
    0.25
    """
    c = check_array(ratio, "ratio", positive=True)
    s = check_array(snr, "snr")
    if np.any(s < 0):
        raise ValueError("snr must be non-negative")
    g = check_array(gamma, "gamma", positive=True)
    m = _positive_root(g, 1.0 - c - g, np.ones_like(c * g))
    num = g**2 * m**2 * (1.0 + 2.0 * m + (1.0 + s) * m**2)
    den = (1.0 + (1.0 + s) * m) ** 2 * (1.0 - c * m**2 / (1.0 + m) ** 2)
    out = num / den
    return float(out) if np.ndim(out) == 0 else out


def attention_kernel(X, f=np.tanh, direction=None, theta=0.0):
    r"""Attention kernel :math:`K=f(X^\top WX/\sqrt p)/\sqrt p` with zero diagonal.

    The attention weight is :math:`W=W_K^\top W_Q=I_p+\theta\sqrt p\,uu^\top` for a unit vector
    :math:`u` (``direction``), so that the argument of :math:`f` is
    :math:`x_i^\top x_j/\sqrt p+\theta(u^\top x_i)(u^\top x_j)`: the low-rank part is of order one.
    The diagonal :math:`f(\|x_i\|^2/\sqrt p)/\sqrt p` is set to zero: it is not of the order of the
    off-diagonal entries and only shifts the spectrum.

    Parameters
    ----------
    X : array_like, shape (p, n)
        Tokens as columns.
    f : callable
        Vectorised nonlinearity.
    direction : array_like, shape (p,), optional
        :math:`u` (normalised here); required when ``theta`` is non-zero.
    theta : float
        Strength :math:`\theta` of the low-rank part of :math:`W`.

    Returns
    -------
    numpy.ndarray, shape (n, n)
        Symmetric, zero diagonal.

    Examples
    --------
    >>> K = attention_kernel(np.eye(3))
    >>> bool(np.allclose(K, 0.0))  # orthogonal tokens: tanh(0) = 0 off the diagonal
    True
    """
    X = check_array(X, "X", ndim=2)
    check_callable(f, "f")
    theta = float(check_array(theta, "theta", ndim=0))
    p = X.shape[0]
    arg = X.T @ X
    if theta != 0.0:
        if direction is None:
            raise ValueError("direction is required when theta is non-zero")
        u = check_array(direction, "direction", ndim=1, shape=(p,))
        norm = np.linalg.norm(u)
        if norm == 0:
            raise ValueError("direction must be non-zero")
        proj = X.T @ (u / norm)
        arg += theta * np.sqrt(p) * np.outer(proj, proj)
    K = np.asarray(f(arg / np.sqrt(p)), dtype=float) / np.sqrt(p)
    if K.shape != arg.shape:
        raise ValueError("f must map an array to an array of the same shape")
    np.fill_diagonal(K, 0.0)
    return K


def gaussian_equivalent_kernel(X, a1, nu, rng=None):
    r"""Gaussian (linear-plus-Wigner) equivalent of the attention kernel with :math:`W=I`.

    .. math::
        \tilde K=a_1\,\frac{X^\top X}{p}+\sqrt{\nu-a_1^2}\,\frac{H}{\sqrt p},\qquad\text{diagonal set to 0},

    with :math:`H` symmetric, independent of :math:`X`, with i.i.d. :math:`N(0,1)` entries above the
    diagonal. For centred :math:`f` (:math:`a_0=0`) it has the limiting spectrum of
    :func:`attention_kernel` (:func:`attention_kernel_stieltjes`).

    Parameters
    ----------
    X : array_like, shape (p, n)
    a1, nu : float
        :math:`a_1=\mathbb E\xi f(\xi)` and :math:`\nu=\mathbb Ef(\xi)^2\ge a_1^2`
        (:func:`seqrmt.rmt.hermite_coefficients`).
    rng : None, int or numpy.random.Generator

    Returns
    -------
    numpy.ndarray, shape (n, n)

    Examples
    --------
    >>> K = gaussian_equivalent_kernel(np.ones((2, 3)), 0.5, 0.25, rng=0)
    >>> bool(np.allclose(K, 0.5 * (1 - np.eye(3))))  # nu = a1^2: no Wigner part
    True
    """
    X = check_array(X, "X", ndim=2)
    a1 = float(check_array(a1, "a1", ndim=0))
    nu = check_nonnegative(nu, "nu")
    if nu < a1**2 - 1e-12:
        raise ValueError(f"nu must be >= a1**2 = {a1**2:.6g} (Cauchy-Schwarz), got {nu}")
    rng = as_generator(rng)
    p, n = X.shape
    H = np.triu(rng.standard_normal((n, n)), 1)
    K = a1 * (X.T @ X) / p + np.sqrt(max(nu - a1**2, 0.0)) * (H + H.T) / np.sqrt(p)
    np.fill_diagonal(K, 0.0)
    return K


def attention_kernel_stieltjes(z, ratio, a1, nu, tol=1e-10, max_iter=20_000):
    r"""Limiting Stieltjes transform of the attention kernel's spectrum (random inputs, :math:`W=I`).

    For :math:`x_i\sim N(0,I_p)`, :math:`n/p\to\beta` (``ratio``) and centred :math:`f`, the spectral
    law of :math:`K` is :math:`[a_1(\mathrm{MP}_\beta-1)]\boxplus\mathrm{SC}(\sigma^2)` with
    :math:`\sigma^2=(\nu-a_1^2)\beta`. Its Stieltjes transform solves
    :math:`g(z)=g_A(z+\sigma^2g(z))` with :math:`g_A(z)=g_{\mathrm{MP}}(1+z/a_1)/a_1`
    (:func:`seqrmt.rmt.semicircle_free_convolution`).

    Parameters
    ----------
    z : array_like of complex
        Points with :math:`\Im z>0`.
    ratio : float
        :math:`\beta=n/p>0` (tokens per dimension).
    a1 : float
        :math:`a_1>0` (for :math:`a_1<0` use :math:`-f`, which flips the spectrum).
    nu : float
        :math:`\nu>a_1^2`.
    tol, max_iter
        As in :func:`seqrmt.rmt.semicircle_free_convolution`.

    Returns
    -------
    numpy.ndarray of complex

    Examples
    --------
    >>> g = attention_kernel_stieltjes(np.array([0.5 + 0.5j]), 2.0, 0.6057, 0.3943)
    >>> complex(np.round(g[0], 3))
    (-0.421+0.635j)
    """
    beta = check_positive(ratio, "ratio")
    a1 = check_positive(a1, "a1")
    nu = check_positive(nu, "nu")
    if nu <= a1**2:
        raise ValueError(f"nu must exceed a1**2 = {a1**2:.6g}, got {nu}")

    def g_lin(w):
        return mp_stieltjes(1.0 + w / a1, beta) / a1

    return semicircle_free_convolution(g_lin, (nu - a1**2) * beta, z, tol=tol, max_iter=max_iter)
