r"""Classical random-matrix laws and deterministic equivalents (Chapter 1, and every later chapter).

Conventions: the **Stieltjes transform** of a law :math:`\mu` is
:math:`g_\mu(w)=\int\frac{d\mu(\lambda)}{\lambda-w}`, :math:`w\in\mathbb C^+`, with density
:math:`\lim_{\varepsilon\downarrow0}\frac1\pi\Im g_\mu(x+i\varepsilon)`. **Marchenko-Pastur** is the
limiting spectrum of :math:`\frac1nXX^\top`, :math:`X\in\mathbb R^{d\times n}` with iid entries of variance
``var`` and ``ratio`` :math:`=d/n`. The **deterministic equivalent** of the ridge resolvent
:math:`Q(z)=(\frac1nXX^\top+zI_d)^{-1}`, columns :math:`x_i\sim N(0,\Sigma)`, is
:math:`\bar Q(z)=(\Sigma/(1+\delta)+zI_d)^{-1}` with :math:`\delta=\frac1n\operatorname{Tr}\Sigma\bar Q`.
"""

from __future__ import annotations

import functools
from collections import namedtuple
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from ._validation import (ConvergenceError, as_generator, check_allocation, check_array, check_callable,
                          check_positive, check_positive_int, check_returned, check_size)
from .runtime import single_threaded_blas

__all__ = [
    # laws: Marchenko-Pastur, semicircle, Stieltjes transforms
    "mp_edges", "mp_density", "mp_cdf", "mp_stieltjes", "semicircle_density", "semicircle_cdf",
    "semicircle_stieltjes", "empirical_stieltjes", "ks_distance",
    # a sampler: spectra of sample covariances
    "sample_covariance_eigs",
    # deterministic equivalents of the ridge resolvent
    "solve_delta", "deterministic_equivalent_stieltjes", "ridge_delta", "ridge_tau",
    "ridge_equivalent", "mp_resolvent_moments", "RidgeResolventDE", "ridge_resolvent_de",
    # nonlinearities and free convolution (Chapter 5)
    "hermite_coefficients", "semicircle_free_convolution",
]


# ---------------------------------------------------------------------------
# Marchenko-Pastur
# ---------------------------------------------------------------------------


def mp_edges(ratio, var=1.0):
    r"""Edges :math:`\lambda_\pm=\sigma^2(1\pm\sqrt{c})^2` of the Marchenko-Pastur bulk.

    Parameters
    ----------
    ratio : float
        :math:`c=d/n>0`.
    var : float
        Entry variance :math:`\sigma^2>0`.

    Returns
    -------
    tuple of float
        ``(lambda_minus, lambda_plus)``.

    Examples
    --------
    >>> mp_edges(1.0)
    (0.0, 4.0)
    """
    c = check_positive(ratio, "ratio")
    s2 = check_positive(var, "var")
    r = np.sqrt(c)  # the roots of the discriminant (x - 1 - c)^2 - 4c of the quadratic for g
    return (float(s2 * (1.0 - r) ** 2), float(s2 * (1.0 + r) ** 2))


def mp_density(x, ratio, var=1.0):
    r"""Absolutely continuous part of the Marchenko-Pastur law.

    .. math::
        f(x)=\frac{\sqrt{(\lambda_+-x)(x-\lambda_-)}}{2\pi\sigma^2 c\,x}
        \quad\text{on } [\lambda_-,\lambda_+],

    which integrates to :math:`\min(1, 1/c)`; for :math:`c>1` the missing mass
    :math:`1-1/c` is the atom at zero.

    Parameters
    ----------
    x : array_like
        Points at which to evaluate the density.
    ratio, var : float
        :math:`c=d/n>0` and the entry variance, as in :func:`mp_edges`.

    Returns
    -------
    numpy.ndarray
        Density values, zero outside the support.

    Examples
    --------
    >>> float(np.round(mp_density(1.0, 1.0), 6))  # sqrt(3)/(2 pi)
    0.275664
    """
    lo, hi = mp_edges(ratio, var)
    x = check_array(x, "x")
    out = np.zeros_like(x)
    inside = (x > lo) & (x < hi) & (x > 0)  # the atom at 0 (c > 1) is not a density
    xi = x[inside]
    out[inside] = np.sqrt((hi - xi) * (xi - lo)) / (2.0 * np.pi * var * ratio * xi)
    return out


def mp_cdf(x, ratio, var=1.0):
    r"""Cumulative distribution function of the Marchenko-Pastur law, atom included.

    With :math:`x=m+h\cos\theta_0\in[\lambda_-,\lambda_+]` (:math:`m, h` the centre and half-width of
    the bulk), the substitution :math:`x=m+h\cos\theta` integrates the density in closed form:

    .. math::
        F(x)=a+\frac{h\sin\theta_0+m(\pi-\theta_0)
        -2\sqrt{m^2-h^2}\,\big(\frac\pi2-\arctan(r\tan\frac{\theta_0}2)\big)}{2\pi c\sigma^2},
        \qquad r=\sqrt{\frac{m-h}{m+h}},

    where :math:`a=\max(0,1-1/c)` is the atom at zero.

    Parameters
    ----------
    x, ratio, var
        As in :func:`mp_density`.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> float(mp_cdf(5.0, 1.0)), float(mp_cdf(0.0, 4.0))  # the atom 1 - 1/4 sits at zero
    (1.0, 0.75)
    """
    lo, hi = mp_edges(ratio, var)
    x = check_array(x, "x")
    atom = max(0.0, 1.0 - 1.0 / ratio)  # rank(XX^T) <= n: a fraction 1 - n/d of zero eigenvalues
    m, h = 0.5 * (lo + hi), 0.5 * (hi - lo)  # x = m + h cos(theta) sweeps the bulk
    r = np.sqrt((m - h) / (m + h))
    theta0 = np.arccos(np.clip((x - m) / h, -1.0, 1.0))
    with np.errstate(over="ignore"):  # tan(pi/2) = inf at the lower edge: arctan(inf) = pi/2
        # the integral of 1/(m + h cos theta), by the half-angle substitution t = tan(theta/2)
        tail = np.pi / 2 - np.arctan(r * np.tan(theta0 / 2))
    bulk = (h * np.sin(theta0) + m * (np.pi - theta0) - 2.0 * np.sqrt(max(m * m - h * h, 0.0)) * tail)
    bulk = np.clip(bulk / (2.0 * np.pi * ratio * var), 0.0, min(1.0, 1.0 / ratio))
    return np.where(x >= 0, atom, 0.0) + np.where(x >= hi, min(1.0, 1.0 / ratio), np.where(x > lo, bulk, 0.0))


def mp_stieltjes(z, ratio, var=1.0):
    r"""Stieltjes transform :math:`g(z)=\int\frac{\mu(d\lambda)}{\lambda-z}` of the Marchenko-Pastur law.

    For :math:`\sigma^2=1` it is the root of :math:`c z g^2-(1-c-z)g+1=0` with :math:`g(z)\sim-1/z` at
    infinity (:math:`\Im g>0` for :math:`\Im z>0`), analytic off :math:`[\lambda_-,\lambda_+]\cup\{0\}`:

    .. math::
        g(z)=\frac{1-c-z+\sqrt{z-\lambda_-}\,\sqrt{z-\lambda_+}}{2cz}.

    The atom at zero (:math:`c>1`) is included.

    Parameters
    ----------
    z : array_like of complex
        Points off the support (typically :math:`\Im z>0`, or real outside the bulk).
    ratio, var : float
        As in :func:`mp_density`.

    Returns
    -------
    numpy.ndarray of complex

    Examples
    --------
    >>> g = mp_stieltjes(-1.0, 0.5)
    >>> bool(abs(0.5 * -1.0 * g**2 - (1 - 0.5 + 1.0) * g + 1) < 1e-12)
    True
    """
    c = check_positive(ratio, "ratio")
    s2 = check_positive(var, "var")
    z = check_array(z, "z", allow_complex=True).astype(complex)
    if np.any(z == 0):
        raise ValueError("z must be non-zero")
    u = z / s2  # g_var(z) = g_1(z / var) / var
    lo, hi = mp_edges(c)
    # the product of two principal roots (not sqrt of the product) has its cut on [lo, hi] only,
    # and behaves like z at infinity, which picks the root g ~ -1/z
    g = (1.0 - c - u + np.sqrt(u - lo) * np.sqrt(u - hi)) / (2.0 * c * u)
    return g / s2


# ---------------------------------------------------------------------------
# Semicircle
# ---------------------------------------------------------------------------


def semicircle_density(x, var=1.0):
    r"""Wigner semicircle density :math:`\frac{\sqrt{4\sigma^2-x^2}}{2\pi\sigma^2}`.

    It is the limiting eigenvalue law of :math:`W/\sqrt{n}` for a symmetric
    :math:`W` with iid off-diagonal entries of variance :math:`\sigma^2`.

    Parameters
    ----------
    x, var : array_like, float
        Points, and :math:`\sigma^2>0`; the support is :math:`[-2\sigma,2\sigma]`.

    Returns
    -------
    numpy.ndarray
        Semicircle density at ``x``, zero outside :math:`[-2\sigma,2\sigma]`.

    Examples
    --------
    >>> float(np.round(semicircle_density(0.0), 6))  # 1/pi
    0.31831
    """
    s2 = check_positive(var, "var")
    x = check_array(x, "x")
    return np.sqrt(np.clip(4.0 * s2 - x**2, 0.0, None)) / (2.0 * np.pi * s2)  # zero off the support


def semicircle_cdf(x, var=1.0):
    r"""Distribution function of the semicircle law of variance :math:`\sigma^2`.

    .. math::
        F(x)=\frac12+\frac{u\sqrt{4-u^2}}{4\pi}+\frac{\arcsin(u/2)}{\pi},\qquad u=x/\sigma\in[-2,2].

    Parameters
    ----------
    x, var : array_like, float
        Points, and :math:`\sigma^2>0` as in :func:`semicircle_density`.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> float(semicircle_cdf(0.0))
    0.5
    """
    s2 = check_positive(var, "var")
    x = check_array(x, "x")
    u = np.clip(x / np.sqrt(s2), -2.0, 2.0)  # F = 0 below the support, 1 above
    return 0.5 + u * np.sqrt(4.0 - u * u) / (4.0 * np.pi) + np.arcsin(u / 2.0) / np.pi


def semicircle_stieltjes(z, var=1.0):
    r"""Stieltjes transform :math:`g(z)=\frac{-z+\sqrt{z-2\sigma}\sqrt{z+2\sigma}}{2\sigma^2}`.

    It solves :math:`\sigma^2 g^2+zg+1=0` with :math:`g\sim-1/z` at infinity.

    Parameters
    ----------
    z, var : array_like of complex, float
        Points off the support :math:`[-2\sigma,2\sigma]`, and :math:`\sigma^2>0`.

    Returns
    -------
    numpy.ndarray of complex

    Examples
    --------
    >>> g = semicircle_stieltjes(0.5j)
    >>> bool(abs(g**2 + 0.5j * g + 1) < 1e-12), bool(g.imag > 0)
    (True, True)
    """
    s2 = check_positive(var, "var")
    z = check_array(z, "z", allow_complex=True).astype(complex)
    s = np.sqrt(s2)
    # a product of principal roots: the cut is [-2 sigma, 2 sigma] and the root g ~ -1/z is chosen
    return (-z + np.sqrt(z - 2.0 * s) * np.sqrt(z + 2.0 * s)) / (2.0 * s2)


# ---------------------------------------------------------------------------
# Stieltjes tools
# ---------------------------------------------------------------------------


def empirical_stieltjes(eigs, z):
    r"""Stieltjes transform :math:`\frac1p\sum_j (\lambda_j-z)^{-1}` of an empirical spectrum.

    Parameters
    ----------
    eigs : array_like
        Eigenvalues :math:`\lambda_1,\dots,\lambda_p`.
    z : array_like of complex
        Evaluation points.

    Returns
    -------
    numpy.ndarray of complex
        Same shape as ``z``.

    Examples
    --------
    >>> complex(empirical_stieltjes(np.array([1.0, 3.0]), 2.0j)) == (1 / (1 - 2j) + 1 / (3 - 2j)) / 2
    True
    """
    eigs = check_array(eigs, "eigs", ndim=1)
    z = check_array(z, "z", allow_complex=True).astype(complex)
    return np.mean(1.0 / (eigs[:, None] - z.ravel()[None, :]), axis=0).reshape(z.shape)


def sample_covariance_eigs(d, n, rng=None, var=1.0, population_eigs=None, entries="gaussian"):
    r"""Eigenvalues of a sample covariance :math:`\frac1n XX^\top`, :math:`X\in\mathbb R^{d\times n}`.

    Parameters
    ----------
    d, n : int
        Dimension and number of samples.
    rng : int, numpy.random.Generator or None
    var : float
        Variance of the iid entries (ignored if ``population_eigs`` is given).
    population_eigs : array_like, optional
        Eigenvalues of a diagonal population covariance :math:`\Sigma`, shape ``(d,)``;
        columns are then :math:`x_i=\Sigma^{1/2}w_i`.
    entries : {"gaussian", "rademacher", "student"}
        Law of the i.i.d. entries before scaling, each with mean 0 and variance 1:
        :math:`N(0,1)`, random signs :math:`\pm1`, or Student :math:`t_5/\sqrt{5/3}`
        (heavy tails, finite fourth moment). The Marchenko-Pastur law is the same
        for all three (universality).

    Returns
    -------
    numpy.ndarray
        The ``d`` eigenvalues in ascending order.

    Examples
    --------
    >>> e = sample_covariance_eigs(200, 400, 0, entries="rademacher")
    >>> bool(abs(e.mean() - 1.0) < 0.01)  # (1/d) Tr C = mean of squared signs = 1
    True
    """
    d = check_size(d, "d")
    n = check_size(n, "n")
    var = check_positive(var, "var")
    laws = ("gaussian", "rademacher", "student")
    if entries not in laws:
        raise ValueError(f"entries must be one of {laws}, got {entries!r}")
    check_allocation((d, n), "d, n")
    sigma = np.full(d, var) if population_eigs is None else check_array(
        population_eigs, "population_eigs", shape=(d,))
    if np.any(sigma < 0):
        raise ValueError("population_eigs must be non-negative")
    rng = as_generator(rng)
    if entries == "gaussian":
        W = rng.standard_normal((d, n))
    elif entries == "rademacher":
        W = rng.choice(np.array([-1.0, 1.0]), size=(d, n))
    else:  # Var t_5 = 5/3, and its fourth moment is finite
        W = rng.standard_t(5.0, size=(d, n)) * np.sqrt(3.0 / 5.0)
    X = np.sqrt(sigma)[:, None] * W  # x_i = Sigma^(1/2) w_i, Sigma diagonal
    with single_threaded_blas():  # faster and steadier for the sizes of the book
        # eigenvalues of X X^T / n: use the smaller Gram matrix when n < d
        if n < d:
            nz = np.linalg.eigvalsh(X.T @ X / n)
            return np.sort(np.concatenate([np.zeros(d - n), np.clip(nz, 0.0, None)]))
        return np.clip(np.linalg.eigvalsh(X @ X.T / n), 0.0, None)


# ---------------------------------------------------------------------------
# Deterministic equivalents
# ---------------------------------------------------------------------------


def _atoms(population_eigs):
    """Compress a population spectrum to its distinct values and their counts."""
    s = check_array(population_eigs, "population_eigs", ndim=1)
    if np.any(s < 0):
        raise ValueError("population_eigs must be non-negative")
    vals, counts = np.unique(s, return_counts=True)  # the fixed point only sees the spectral law
    return vals, counts.astype(float)


def solve_delta(population_eigs, n, z, tol=1e-12, max_iter=200):
    r"""Solve the deterministic-equivalent fixed point for :math:`\delta(z)`, :math:`z>0`.

    .. math::
        \delta=\frac1n\sum_{i=1}^d\frac{s_i}{s_i/(1+\delta)+z},

    where :math:`s_i` are the eigenvalues of the population covariance
    :math:`\Sigma`. Then :math:`\bar Q(z)=(\Sigma/(1+\delta)+zI)^{-1}` is a
    deterministic equivalent of :math:`Q(z)=(\frac1nXX^\top+zI)^{-1}`.

    The right-hand side :math:`f(\delta)` is concave in :math:`\delta\ge0` with
    :math:`f(0)>0`, so :math:`f(\delta)/\delta` strictly decreases and the root is unique;
    :math:`f` is bounded by :math:`\delta_{\max}=\frac1n\sum_i s_i/z`, so the root lies in
    :math:`(0,\delta_{\max}]` and is found by Brent's method.

    Parameters
    ----------
    population_eigs : array_like
        Eigenvalues :math:`s_i\ge 0` of :math:`\Sigma` (length ``d``).
    n : float
        Number of samples. Only :math:`d/n` enters, so a non-integer value is allowed (the
        task count :math:`\kappa d` of :mod:`seqrmt.frontiers.icl`).
    z : float or array_like
        Ridge parameter(s) :math:`z>0`.
    tol, max_iter : float, int
        Absolute tolerance on :math:`\delta`, and the cap on Brent's iterations.

    Returns
    -------
    float or numpy.ndarray
        :math:`\delta(z)`, with the shape of ``z``.

    Raises
    ------
    seqrmt.ConvergenceError
        If Brent's method does not converge within ``max_iter`` iterations.

    Examples
    --------
    >>> round(float(solve_delta(np.ones(400), 800, 0.1)), 5)  # = ridge_delta(0.5, 0.1)
    0.74166

    The diagonal of :math:`\bar Q` follows from :math:`\delta`; half of the eigenvalues 1, half 3:

    >>> s = np.r_[np.ones(200), 3 * np.ones(200)]
    >>> delta = solve_delta(s, 800, 0.5)
    >>> round(delta, 6), round(float(np.mean(1 / (s / (1 + delta) + 0.5))), 6)  # (1/d) Tr Qbar
    (0.518817, 0.633629)
    """
    vals, counts = _atoms(population_eigs)  # repeated eigenvalues cost nothing
    n = check_positive(n, "n")
    tol = check_positive(tol, "tol")
    max_iter = check_positive_int(max_iter, "max_iter")
    z_arr = check_array(z, "z", positive=True)
    w = counts / n

    def f(delta, zz):  # delta - f(delta): negative at 0 since f(0) > 0
        return delta - np.sum(w * vals / (vals / (1.0 + delta) + zz))

    out = np.empty_like(z_arr)
    for idx, zz in np.ndenumerate(z_arr):
        hi = float(np.sum(w * vals)) / zz  # f <= (1/n) sum_i s_i / z: the root lies below
        if hi == 0.0:  # Sigma = 0: delta = 0
            out[idx] = 0.0
            continue
        # f(0) < 0 < f(hi): the bracket is valid by construction
        root, info = optimize.brentq(f, 0.0, hi, args=(zz,), xtol=tol, rtol=4 * np.finfo(float).eps,
                                     maxiter=max_iter, full_output=True, disp=False)
        if not info.converged:
            raise ConvergenceError(f"solve_delta did not converge for z={zz} in max_iter={max_iter} iterations")
        out[idx] = root
    return float(out) if out.ndim == 0 else out


def deterministic_equivalent_stieltjes(
    population_eigs, n, w, tol=1e-10, max_iter=500, n_continuation=24
):
    r"""Stieltjes transform of the limiting spectrum of :math:`\frac1n XX^\top`, :math:`x_i\sim N(0,\Sigma)`.

    With :math:`z=-w` the deterministic equivalent gives
    :math:`g(w)=\frac1d\operatorname{Tr}\bar Q(-w)=\frac1d\sum_i\big(s_i/(1+\delta)-w\big)^{-1}`,
    where :math:`\delta` solves the fixed point of :func:`solve_delta` at the complex point
    :math:`z=-w`. The equation is solved by Newton's method along a homotopy in
    :math:`\Im w` (from far above the axis down to the requested points), which
    keeps every iterate on the physical branch :math:`\Im\delta>0`.

    Parameters
    ----------
    population_eigs : array_like
        Eigenvalues of :math:`\Sigma` (length ``d``).
    n : int
        Number of samples.
    w : array_like of complex
        Points with :math:`\Im w>0`.
    tol, max_iter, n_continuation : float, int, int
        Tolerance on :math:`|\Delta\delta|` at the final level, Newton steps per level, and
        the number of homotopy levels.

    Returns
    -------
    numpy.ndarray of complex
        :math:`g(w)`; the limiting density is ``g.imag / pi`` (the inversion formula).

    Raises
    ------
    seqrmt.ConvergenceError
        If Newton's method fails to reach ``tol``.

    Examples
    --------
    >>> w = np.array([1.0 + 0.1j])  # Sigma = I: the Marchenko-Pastur transform
    >>> bool(abs(deterministic_equivalent_stieltjes(np.ones(400), 800, w) - mp_stieltjes(w, 0.5)) < 1e-9)
    True
    """
    vals, counts = _atoms(population_eigs)
    n = check_positive_int(n, "n")
    tol = check_positive(tol, "tol")
    max_iter = check_positive_int(max_iter, "max_iter")
    n_continuation = check_positive_int(n_continuation, "n_continuation")
    w = check_array(w, "w", allow_complex=True).astype(complex)
    if np.any(w.imag <= 0):
        raise ValueError("w must lie in the upper half-plane (Im w > 0)")
    d = counts.sum()
    wt = counts / n
    shape = w.shape
    w = w.ravel()
    # start far above the support, where the fixed-point map is a contraction
    top = 10.0 * max(float(np.max(vals)), 1e-12) * (1.0 + d / n)
    target = w.imag
    # imaginary parts of the homotopy: from `top` down to each point's own Im w
    ratio = (min(float(target.min()), top) / top) ** (1.0 / max(n_continuation - 1, 1))
    delta = None
    for k in range(n_continuation):
        final = k == n_continuation - 1
        ww = w if final else w.real + 1j * np.maximum(target, top * ratio**k)
        if delta is None:
            # far from the axis delta ~ (1/n) sum_i s_i / (-w)
            delta = np.sum(wt * vals) / (-ww)
        for _ in range(max_iter):
            den = vals[None, :] / (1.0 + delta[:, None]) - ww[:, None]
            F = np.sum(wt * vals / den, axis=1)
            dF = np.sum(wt * vals**2 / (1.0 + delta[:, None]) ** 2 / den**2, axis=1)
            step = (delta - F) / (1.0 - dF)  # Newton on delta - F(delta); dF = F'(delta)
            new = delta - step
            # stay on the physical branch: fall back to a fixed-point step there
            bad = new.imag < 0
            if np.any(bad):  # a damped fixed-point step maps C+ into C+
                new[bad] = 0.5 * (delta[bad] + F[bad])
            delta = new
            if np.max(np.abs(step)) <= (tol if final else 1e-6) * (1.0 + np.max(np.abs(delta))):
                break
        else:
            if final:
                raise ConvergenceError(
                    "deterministic_equivalent_stieltjes: Newton did not converge "
                    f"in max_iter={max_iter} steps"
                )
    den = vals[None, :] / (1.0 + delta[:, None]) - w[:, None]
    g = np.sum(counts / d / den, axis=1)  # (1/d) Tr Qbar(-w), Qbar diagonal in the eigenbasis
    return g.reshape(shape)


def _positive_root(gamma, b, q):
    """Positive root of gamma x^2 - b x - q = 0 (q > 0), in the form without cancellation."""
    root = np.sqrt(b * b + 4.0 * gamma * q)
    # for b < 0, (b + root) cancels; multiply by (root - b)/(root - b): (b + root)/(2 gamma) = 2q/(root - b)
    with np.errstate(divide="ignore", invalid="ignore"):  # np.where evaluates both branches
        return np.where(b >= 0, (b + root) / (2.0 * gamma), 2.0 * q / (root - b))


def ridge_delta(eta, gamma, variant="corrected"):
    r"""Closed form of :math:`\delta` for :math:`\Sigma=I`.

    .. math::
        \delta=\frac{\eta-\gamma-1+\sqrt{(\eta-\gamma-1)^2+4\gamma\eta}}{2\gamma},

    the positive root of :math:`\gamma\delta^2-(\eta-\gamma-1)\delta-\eta=0`, i.e. of
    :math:`\delta=\eta/\zeta` with :math:`\zeta=\gamma+1/(1+\delta)`.

    Parameters
    ----------
    eta, gamma : float or array_like
        :math:`\eta=d/n>0` (Model 2) or :math:`d/c` (Model 1), and the ridge :math:`\gamma>0`.
    variant : {"corrected", "talk"}
        ``"talk"`` reproduces the talk's typo, a discriminant :math:`4\gamma` instead of
        :math:`4\gamma\eta`; it is correct only at :math:`\eta=1` and is provided for
        the side-by-side comparison of Chapter 1.

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    >>> round(float(ridge_delta(0.5, 0.1)), 5)
    0.74166
    >>> round(float(ridge_delta(0.5, 0.1, variant="talk")), 5)
    1.3589
    """
    eta_a = check_array(eta, "eta", positive=True)
    gamma_a = check_array(gamma, "gamma", positive=True)
    if variant not in ("corrected", "talk"):
        raise ValueError(f"variant must be 'corrected' or 'talk', got {variant!r}")
    # corrected: gamma d^2 - (eta-gamma-1) d - eta = 0; the talk's typo replaces the constant eta by 1
    q = eta_a if variant == "corrected" else np.ones_like(eta_a)
    out = _positive_root(gamma_a, eta_a - gamma_a - 1.0, q)
    return float(out) if np.ndim(out) == 0 else out


def ridge_tau(eta, gamma):
    r""":math:`\tau=\frac1n\operatorname{Tr}\mathbb E[Q^2]=-\frac{d\delta}{d\gamma}` for :math:`\Sigma=I`.

    .. math::
        \tau=\frac{\eta(1+\delta)^2}{\zeta^2(1+\delta)^2-\eta},\qquad \zeta=\gamma+\frac1{1+\delta}.

    Parameters
    ----------
    eta, gamma : float or array_like
        :math:`\eta=d/n>0` and the ridge :math:`\gamma>0`, as in :func:`ridge_delta`.

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    >>> round(float(ridge_tau(1.5, 0.5)), 5)  # delta = sqrt(3), tau = 1 + sqrt(3)
    2.73205
    """
    return ridge_equivalent(eta, gamma).tau


_RidgeScalars = namedtuple("RidgeEquivalent", ["delta", "zeta", "tau", "kappa"])


def ridge_equivalent(eta, gamma):
    r"""The scalars :math:`\delta,\zeta,\tau,\kappa` of the :math:`\Sigma=I` ridge resolvent.

    :math:`\delta=\frac1n\operatorname{Tr}\bar Q` (:func:`ridge_delta`),
    :math:`\zeta=\gamma+1/(1+\delta)` so that :math:`\bar Q=I/\zeta` and :math:`\delta=\eta/\zeta`,
    :math:`\tau=-d\delta/d\gamma=\lim\frac1n\operatorname{Tr}\mathbb EQ^2` (:func:`ridge_tau`) and
    :math:`\kappa=\eta/\zeta^2`, so that :math:`\tau=\kappa/(1-\kappa/(1+\delta)^2)`.

    Parameters
    ----------
    eta, gamma : float or array_like
        :math:`\eta=d/n>0` and the ridge :math:`\gamma>0`.

    Returns
    -------
    tuple of float or numpy.ndarray
        ``(delta, zeta, tau, kappa)``, also readable by name (``.delta``, ...).

    Examples
    --------
    >>> delta, zeta, tau, kappa = ridge_equivalent(0.5, 1.0)
    >>> round(delta, 5), round(tau, 5), round(delta * zeta, 12)  # delta = eta / zeta
    (0.28078, 0.17444, 0.5)
    """
    delta = ridge_delta(eta, gamma)
    eta_a = np.asarray(eta, dtype=float)
    gamma_a = np.asarray(gamma, dtype=float)
    zeta = gamma_a + 1.0 / (1.0 + delta)
    # differentiate gamma delta^2 - (eta - gamma - 1) delta - eta = 0 in gamma and simplify
    tau = eta_a * (1.0 + delta) ** 2 / (zeta**2 * (1.0 + delta) ** 2 - eta_a)
    kappa = eta_a / zeta**2

    def out(v):
        return float(v) if np.ndim(v) == 0 else v

    return _RidgeScalars(out(delta), out(zeta), out(tau), out(kappa))


def mp_resolvent_moments(lam, ratio):
    r"""Marchenko-Pastur :math:`m(\lambda)=\int\frac{d\mu(x)}{x+\lambda}` and :math:`m_2=\int\frac{d\mu(x)}{(x+\lambda)^2}`.

    :math:`\mu` is the limiting spectral law of :math:`X^\top X/n` with :math:`X` an
    :math:`n\times p` matrix of i.i.d. standard entries and :math:`p/n=` ``ratio`` (it carries an
    atom :math:`1-1/\text{ratio}` at zero when ``ratio`` > 1). So :math:`m(\lambda)` is the
    Stieltjes transform at :math:`-\lambda` and :math:`m_2=-m'(\lambda)`. They are the scalars of
    :func:`ridge_equivalent`: :math:`m=\delta/\eta` and :math:`m_2=\tau/\eta` with
    :math:`\eta=` ``ratio``.

    Parameters
    ----------
    lam, ratio : float or array_like
        Ridge :math:`\lambda>0` and :math:`p/n>0`.

    Returns
    -------
    m, m2 : float or numpy.ndarray

    Examples
    --------
    >>> m, m2 = mp_resolvent_moments(1.0, 0.5)
    >>> bool(abs(m - float(mp_stieltjes(-1.0, 0.5).real)) < 1e-12)
    True
    """
    lam = check_array(lam, "lam", positive=True)
    ratio = check_array(ratio, "ratio", positive=True)
    eq = ridge_equivalent(ratio, lam)
    m = np.asarray(eq.delta) / ratio  # (1/p) Tr Qbar = delta / eta
    m2 = np.asarray(eq.tau) / ratio  # (1/p) Tr Qbar^2 = tau / eta
    if m.ndim == 0:
        return float(m), float(m2)
    return m, m2


def ks_distance(samples, cdf):
    r"""Kolmogorov-Smirnov distance :math:`\sup_x|F_n(x)-F(x)|` between a sample and a law.

    Atoms are handled: both the empirical and the theoretical distribution
    functions are compared at every sample point and at its left limit, so
    tied samples (e.g. the exact zeros of a rank-deficient sample covariance)
    are compared with the atom of :math:`F` correctly.

    Parameters
    ----------
    samples : array_like
        The sample (any shape; flattened).
    cdf : callable
        Right-continuous distribution function of the law, vectorised.

    Returns
    -------
    float

    Examples
    --------
    >>> ks_distance(np.zeros(4), lambda x: (x >= 0).astype(float))
    0.0
    """
    check_callable(cdf, "cdf")
    x = np.sort(check_array(samples, "samples").ravel())
    n = x.size
    F = check_returned(cdf(x), "cdf")
    F_left = check_returned(cdf(np.nextafter(x, -np.inf)), "cdf")  # F(x-), for the atoms of F
    # the empirical F_n just after and just before each sample point (ties counted once)
    Fn = np.searchsorted(x, x, side="right") / n
    Fn_left = np.searchsorted(x, x, side="left") / n
    return float(max(np.max(np.abs(Fn - F)), np.max(np.abs(Fn_left - F_left))))


@dataclass(frozen=True)
class RidgeResolventDE:
    r"""Deterministic equivalent of :math:`R=(S+\lambda I)^{-1}` for a general :math:`\Sigma`.

    Returned by :func:`ridge_resolvent_de`. With ``k`` ridges the scalars have shape ``(k,)`` and
    the diagonals shape ``(k, d)`` (a scalar ridge drops the first axis).

    Attributes
    ----------
    delta : float or numpy.ndarray
        :math:`\delta=\frac1n\operatorname{Tr}\Sigma\bar R`.
    zeta : float or numpy.ndarray
        :math:`\zeta=\frac{\operatorname{Tr}(\Sigma\bar R\Sigma\bar R)}{n(1+\delta)^2}<1`.
    delta_prime : float or numpy.ndarray
        :math:`d\delta/d\lambda=-\frac{\operatorname{Tr}(\Sigma\bar R^2)/n}{1-\zeta}`.
    diag : numpy.ndarray
        :math:`\bar R_{kk}` in the basis in which :math:`\Sigma` was given.
    diag_sigma : numpy.ndarray
        :math:`[\bar R\Sigma\bar R]_{kk}`.
    diag_prime : numpy.ndarray
        :math:`\frac{d}{d\lambda}\bar R_{kk}`, differentiating :math:`\delta(\lambda)` too.
    """

    delta: object
    zeta: object
    delta_prime: object
    diag: np.ndarray
    diag_sigma: np.ndarray
    diag_prime: np.ndarray


def _check_covariance(Sigma, name="Sigma"):
    """Symmetric positive semi-definite 2-D array, returned with its eigendecomposition."""
    S = check_array(Sigma, name, ndim=2)
    if S.shape[0] != S.shape[1]:
        raise ValueError(f"{name} must be square, got shape {S.shape}")
    if not np.allclose(S, S.T, rtol=1e-10, atol=1e-12 * max(1.0, float(np.abs(S).max()))):
        raise ValueError(f"{name} must be symmetric")
    with single_threaded_blas():
        s, U = np.linalg.eigh((S + S.T) / 2)
    if s[0] < -1e-10 * max(1.0, s[-1]):
        raise ValueError(f"{name} must be positive semi-definite, got eigenvalue {s[0]:.3g}")
    return S, np.clip(s, 0.0, None), U


def ridge_resolvent_de(Sigma, n, lam, tol=1e-12, max_iter=200):
    r"""Diagonal of the ridge resolvent's deterministic equivalent, and its :math:`\lambda`-derivative.

    For :math:`x_i\sim N(0,\Sigma)`, :math:`S=\frac1n\sum_ix_ix_i^\top` and
    :math:`R=(S+\lambda I)^{-1}`, the equivalent is
    :math:`\bar R=(\Sigma/(1+\delta)+\lambda I)^{-1}` with :math:`\delta` from :func:`solve_delta`.
    This returns its diagonal :math:`\bar R_{kk}` *in the basis in which* :math:`\Sigma` *is given*
    (computed as ``(U**2) @ rbar`` from one eigendecomposition), the diagonal of
    :math:`\bar R\Sigma\bar R`, the scalar

    .. math::
        \zeta=\frac{\operatorname{Tr}(\Sigma\bar R\Sigma\bar R)}{n(1+\delta)^2},

    which gives :math:`R\Sigma R\simeq\bar R\Sigma\bar R/(1-\zeta)`, and the exact derivative
    with respect to :math:`\lambda` of :math:`\bar R_{kk}`, including that of :math:`\delta`:

    .. math::
        \delta'=-\frac{\frac1n\operatorname{Tr}(\Sigma\bar R^2)}{1-\zeta},\qquad
        \frac{d\bar r_j}{d\lambda}=-\bar r_j^2\Big(1-\frac{s_j\delta'}{(1+\delta)^2}\Big),

    with :math:`s_j` the eigenvalues of :math:`\Sigma` and :math:`\bar r_j=1/(s_j/(1+\delta)+\lambda)`.
    (Differentiate :math:`\delta=\frac1n\sum_js_j\bar r_j` and solve for :math:`\delta'`.)

    Parameters
    ----------
    Sigma : array_like, shape (d, d)
        Population covariance (symmetric, positive semi-definite).
    n : int
        Number of samples.
    lam : float or array_like
        Ridge(s) :math:`\lambda>0`.
    tol, max_iter
        Passed to :func:`solve_delta`.

    Returns
    -------
    RidgeResolventDE

    Examples
    --------
    >>> de = ridge_resolvent_de(np.eye(400), 800, 0.1)
    >>> round(float(de.delta), 5)  # = ridge_delta(0.5, 0.1)
    0.74166
    >>> bool(np.allclose(de.diag, 2 * de.delta))  # Sigma = I: R_kk = (n/d) delta
    True
    """
    _, s, U = _check_covariance(Sigma)
    n = check_positive_int(n, "n")
    lam_a = check_array(lam, "lam", positive=True)
    lams = lam_a.ravel()
    delta = np.atleast_1d(solve_delta(s, n, lams, tol=tol, max_iter=max_iter))
    rbar = 1.0 / (s[None, :] / (1.0 + delta[:, None]) + lams[:, None])  # (k, d)
    zeta = np.sum(s**2 * rbar**2, axis=1) / (n * (1.0 + delta) ** 2)
    # delta' = (1/n) sum_j s_j r_j' with r_j' = -r_j^2 (1 - s_j delta' / (1 + delta)^2): solve for delta'
    delta_prime = -np.sum(s * rbar**2, axis=1) / n / (1.0 - zeta)
    drbar = -(rbar**2) * (1.0 - s[None, :] * (delta_prime / (1.0 + delta) ** 2)[:, None])
    U2 = U**2  # diag(U D U^T) = (U * U) @ diag(D): the diagonal in the basis of Sigma
    out = RidgeResolventDE(
        delta=delta, zeta=zeta, delta_prime=delta_prime, diag=rbar @ U2.T,
        diag_sigma=(rbar**2 * s) @ U2.T, diag_prime=drbar @ U2.T,
    )
    if lam_a.ndim == 0:
        return RidgeResolventDE(*(float(v[0]) if v.ndim == 1 else v[0] for v in
                                  (out.delta, out.zeta, out.delta_prime, out.diag,
                                   out.diag_sigma, out.diag_prime)))
    return out


# ---------------------------------------------------------------------------
# Nonlinearities and free convolution (Chapter 5)
# ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=16)
def _half_line_gauss_rule(n_nodes):
    r"""Gauss rule of ``n_nodes`` nodes for the weight :math:`\phi(x)=e^{-x^2/2}/\sqrt{2\pi}` on :math:`[0,\infty)`.

    The Jacobi matrix of the weight comes from the Lanczos process (with full
    reorthogonalisation) on a discretisation of :math:`\phi` on :math:`[0,40]` (40 panels of a
    40-point Gauss-Legendre rule: exact to rounding; :math:`\phi(40)` underflows). Its
    eigenvalues are the nodes; the weights are the Christoffel numbers
    :math:`\tfrac12/\sum_{k<n}p_k(x_j)^2` (orthonormal :math:`p_k`, from the recurrence), which,
    unlike the eigenvector formula of Golub and Welsch, keep their relative accuracy in the tail.
    Read-only arrays (cached).
    """
    from scipy.linalg import eigh_tridiagonal  # noqa: PLC0415

    t, s = np.polynomial.legendre.leggauss(40)
    x = (np.arange(40.0)[:, None] + 0.5 * (t + 1.0)).ravel()
    q = np.sqrt(0.5 * np.tile(s, 40) * np.exp(-0.5 * x * x))
    q /= np.linalg.norm(q)
    basis = np.empty((x.size, n_nodes))
    alpha, beta = np.empty(n_nodes), np.empty(n_nodes - 1)
    q_prev = np.zeros_like(q)
    for k in range(n_nodes):
        basis[:, k] = q
        v = x * q - (beta[k - 1] * q_prev if k else 0.0)
        alpha[k] = q @ v
        v -= alpha[k] * q
        v -= basis[:, : k + 1] @ (basis[:, : k + 1].T @ v)
        if k < n_nodes - 1:
            beta[k] = np.linalg.norm(v)
            q_prev, q = q, v / beta[k]
    nodes = eigh_tridiagonal(alpha, beta, eigvals_only=True)
    p_prev, p, total = np.zeros(n_nodes), np.ones(n_nodes), np.ones(n_nodes)
    with np.errstate(over="ignore"):  # far nodes: p_k overflows, the weight is 0
        for k in range(n_nodes - 1):
            p_prev, p = p, ((nodes - alpha[k]) * p - (beta[k - 1] * p_prev if k else 0.0)) / beta[k]
            total += p * p
    weights = 0.5 / total
    nodes.flags.writeable = weights.flags.writeable = False
    return nodes, weights


def hermite_coefficients(f, n_nodes=101):
    r"""Gaussian moments :math:`a_0,a_1,\nu` of a nonlinearity, by Gauss quadrature on each half-line.

    .. math::
        a_0=\mathbb E f(\xi),\qquad a_1=\mathbb E[\xi f(\xi)],\qquad
        \nu=\mathbb E f(\xi)^2,\qquad \xi\sim N(0,1).

    :math:`a_0` and :math:`a_1` are the first two coefficients of :math:`f` in the orthonormal
    Hermite basis; :math:`\nu-a_0^2-a_1^2\ge0` is the energy of its nonlinear part.
    They are the constants of every linear equivalent of a random kernel matrix.

    The Gaussian integral is split at 0 and each half is computed with the Gauss rule of the
    half-Gaussian weight :math:`\phi(x)\mathbb 1[x\ge0]` (mirrored for :math:`x<0`). It is
    exact for functions that are polynomials of degree below ``n_nodes`` on each half-line, so
    a kink at 0 (ReLU, :math:`|x|`, leaky ReLU, sign) costs no accuracy: the moments are exact
    to rounding (about :math:`10^{-15}`), where a Gauss-Hermite rule on the whole line
    converges like :math:`1/n` (for ReLU at 101 nodes its :math:`\nu` is off by
    :math:`3\times10^{-3}`). Smooth functions converge as fast as with Gauss-Hermite. A kink
    away from 0 still converges slowly (hard tanh, kinks at :math:`\pm1`:
    :math:`4\times10^{-4}` at 101 nodes).

    Parameters
    ----------
    f : callable
        Vectorised real function.
    n_nodes : int
        Number of quadrature nodes on each half-line (``2 n_nodes`` evaluations of ``f``), at
        most 250.

    Returns
    -------
    tuple of float
        ``(a0, a1, nu)``.

    Examples
    --------
    >>> a0, a1, nu = hermite_coefficients(np.tanh)
    >>> round(a0, 4), round(a1, 4), round(nu, 4)
    (0.0, 0.6057, 0.3943)
    >>> a0, a1, nu = hermite_coefficients(lambda x: np.maximum(x, 0.0))
    >>> bool(abs(a0 - 1 / np.sqrt(2 * np.pi)) < 1e-14), round(a1, 14), round(nu, 14)
    (True, 0.5, 0.5)
    """
    check_callable(f, "f")
    n_nodes = check_size(n_nodes, "n_nodes")
    if n_nodes > 250:  # the rule is built on a 1600-point discretisation of the weight
        raise ValueError(f"n_nodes must be at most 250, got {n_nodes}")
    x, w = _half_line_gauss_rule(n_nodes)
    xx = np.concatenate([x, -x])
    fx = np.asarray(f(xx), dtype=float)
    if fx.shape != xx.shape or not np.all(np.isfinite(fx)):
        raise ValueError("f must map a real array to a finite real array of the same shape")
    f_pos, f_neg = fx[:n_nodes], fx[n_nodes:]  # pairs +-x: an odd f gives a0 = 0 exactly
    return float(w @ (f_pos + f_neg)), float(w @ (x * (f_pos - f_neg))), float(w @ (f_pos**2 + f_neg**2))


def semicircle_free_convolution(stieltjes, var, z, tol=1e-10, max_iter=20_000, damping=0.5):
    r"""Stieltjes transform of :math:`\mu_A\boxplus\mathrm{SC}(\sigma^2)` by subordination.

    If :math:`A` has spectral law :math:`\mu_A` and :math:`H/\sqrt n` is an independent Wigner
    matrix of variance :math:`\sigma^2` (semicircle on :math:`[-2\sigma,2\sigma]`), the spectral
    law of :math:`A+H/\sqrt n` has Stieltjes transform :math:`g` solving

    .. math::
        g(z)=g_A\big(z+\sigma^2 g(z)\big),\qquad g(z)=\int\frac{\mu(d\lambda)}{\lambda-z}.

    (With the Cauchy transform :math:`G=-g` the shift has the opposite sign:
    :math:`G(z)=G_A(z-\sigma^2G(z))`.) The equation is solved by the damped iteration
    :math:`g\leftarrow(1-\beta)g+\beta g_A(z+\sigma^2g)`, started at :math:`g_A(z)`; it keeps
    :math:`\Im g>0` for :math:`\Im z>0`.

    Parameters
    ----------
    stieltjes : callable
        :math:`g_A`, vectorised over complex arrays of the upper half-plane.
    var : float
        :math:`\sigma^2>0`.
    z : array_like of complex
        Points with :math:`\Im z>0`.
    tol : float
        Stop when every update is below ``tol``.
    max_iter : int
        Maximum number of iterations.
    damping : float
        :math:`\beta\in(0,1]`.

    Returns
    -------
    numpy.ndarray of complex
        Same shape as ``z``.

    Raises
    ------
    seqrmt.ConvergenceError
        If the iteration has not converged after ``max_iter`` steps.

    Examples
    --------
    The semicircle of variance 1 plus the semicircle of variance 2 is the semicircle of
    variance 3:

    >>> z = np.array([0.3 + 0.5j])
    >>> g = semicircle_free_convolution(lambda w: semicircle_stieltjes(w, 1.0), 2.0, z)
    >>> bool(abs(g[0] - semicircle_stieltjes(z, 3.0)[0]) < 1e-8)
    True
    """
    check_callable(stieltjes, "stieltjes")
    s2 = check_positive(var, "var")
    tol = check_positive(tol, "tol")
    max_iter = check_size(max_iter, "max_iter")
    beta = check_positive(damping, "damping")
    if beta > 1:
        raise ValueError(f"damping must be in (0, 1], got {beta}")
    z = check_array(z, "z", allow_complex=True).astype(complex)
    if np.any(z.imag <= 0):
        raise ValueError("z must lie in the upper half-plane (Im z > 0)")
    g = np.asarray(stieltjes(z), dtype=complex)
    for _ in range(max_iter):
        new = (1.0 - beta) * g + beta * np.asarray(stieltjes(z + s2 * g), dtype=complex)
        step = np.max(np.abs(new - g))
        g = new
        if step < tol:
            return g
    raise ConvergenceError(
        f"semicircle_free_convolution: no convergence in max_iter={max_iter} steps (last step {step:.2e})"
    )


# ---------------------------------------------------------------------------
# Ridge memorisation of signal-plus-noise tokens (Part 5: 5.2 derives it, 5.4 and 5.5 reuse it)
# ---------------------------------------------------------------------------

__all__ += ["coresolvent_stieltjes", "ridge_memorisation_error"]


def _coresolvent_root(c, g):
    """Positive root m of g m^2 + (g + c - 1) m - 1 = 0, without cancellation for either sign."""
    b = g + c - 1.0
    r = np.sqrt(b * b + 4.0 * g)
    # the roots have product -1/g: for b >= 0 take m = 2 / (b + r), for b < 0 (b + r small) (r - b) / (2g)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b >= 0, 2.0 / (b + r), (r - b) / (2.0 * g))


def coresolvent_stieltjes(ratio, gamma):
    r"""Limit :math:`m` of :math:`\frac1n\operatorname{Tr}(Z^\top Z/n+\gamma I_n)^{-1}` for :math:`Z\in\mathbb R^{p\times n}` white.

    The **co-resolvent**: :math:`Z^\top Z/n` is the :math:`n\times n` Gram matrix of :math:`n`
    tokens of dimension :math:`p`, :math:`c=p/n`. By the deterministic equivalent of
    :func:`solve_delta` (read with the roles of :math:`p` and :math:`n` exchanged), :math:`m` is the
    positive solution of :math:`m=1/(\gamma+c/(1+m))`, i.e. of
    :math:`\gamma m^2+(\gamma+c-1)m-1=0`:

    .. math::
        m=\frac{-(\gamma+c-1)+\sqrt{(\gamma+c-1)^2+4\gamma}}{2\gamma}.

    Parameters
    ----------
    ratio : float or array_like
        :math:`c=p/n>0`.
    gamma : float or array_like
        Ridge :math:`\gamma>0`; broadcast against ``ratio``.

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    >>> m = coresolvent_stieltjes(0.5, 0.1)
    >>> bool(abs(m - 1 / (0.1 + 0.5 / (1 + m))) < 1e-12)
    True
    >>> round(coresolvent_stieltjes(2.0, 1e-9), 6)  # c > 1: m -> 1 / (c - 1) as gamma -> 0
    1.0
    """
    c = check_array(ratio, "ratio", positive=True)
    g = check_array(gamma, "gamma", positive=True)
    m = _coresolvent_root(c, g)
    return float(m) if np.ndim(m) == 0 else m


def ridge_memorisation_error(ratio, snr, gamma):
    r"""Limit :math:`E_{RR}` of the ridge memorisation error on signal-plus-noise tokens.

    Tokens :math:`x_i=y_i\mu+z_i\in\mathbb R^p` with labels :math:`y_i=\pm1` independent of the noise
    :math:`z_i\sim N(0,I_p)`, :math:`s=\|\mu\|^2`, :math:`c=p/n`, stacked as the columns of :math:`X`.
    The mean squared training residual of ridge with penalty :math:`\gamma`,
    :math:`\frac{\gamma^2}{n}y^\top(X^\top X/n+\gamma I)^{-2}y`, converges to

    .. math::
        E_{RR}=\frac{\gamma^2m^2\,\big(1+2m+(1+s)m^2\big)}
        {\big(1+(1+s)m\big)^2\big(1-c\,m^2/(1+m)^2\big)},

    with :math:`m` from :func:`coresolvent_stieltjes`. It is :math:`-\gamma^2\partial_\gamma h` for
    the limit :math:`h(m)=m(1+m)/(1+(1+s)m)` of :math:`\frac1ny^\top(X^\top X/n+\gamma I)^{-1}y`
    (one Sherman-Morrison step on the rank-one signal; Chapter 5.2, ``thm-attn-ridge``).

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
    Without signal it is the training error of ridge on pure noise; as :math:`\gamma\to0` with
    :math:`c<1` it tends to :math:`(1-c)/(1+s)`, the part of :math:`y` outside the span of the
    :math:`p` features:

    >>> round(ridge_memorisation_error(0.5, 0.0, 0.1), 4)
    0.5173
    >>> round(ridge_memorisation_error(0.5, 1.0, 1e-8), 6)
    0.25
    """
    c = check_array(ratio, "ratio", positive=True)
    s = check_array(snr, "snr")
    if np.any(s < 0):
        raise ValueError("snr must be non-negative")
    g = check_array(gamma, "gamma", positive=True)
    m = _coresolvent_root(c, g)
    # -gamma^2 h'(m) dm/dgamma: h'(m) = (1+2m+(1+s)m^2)/(1+(1+s)m)^2 and, differentiating
    # m (gamma + c/(1+m)) = 1, dm/dgamma = -m^2 / (1 - c m^2/(1+m)^2)
    num = g**2 * m**2 * (1.0 + 2.0 * m + (1.0 + s) * m**2)
    den = (1.0 + (1.0 + s) * m) ** 2 * (1.0 - c * m**2 / (1.0 + m) ** 2)
    out = num / den
    return float(out) if np.ndim(out) == 0 else out
