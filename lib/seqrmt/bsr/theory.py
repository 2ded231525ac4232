r"""Bayes-optimal error of bilinear sequence regression, thresholds and baselines.

Scalings: :math:`\alpha=n/(dL)`, :math:`\beta=L/d`, :math:`\rho=r/d`, low-rank units
:math:`\bar\alpha=n/(r(d+L))=\alpha\beta/(\rho(1+\beta))`. Every function accepts :math:`\beta<1`
(transposition :math:`(\beta,\rho)\to(1/\beta,\rho/\beta)`, which leaves :math:`\alpha` and all errors
unchanged); ``beta=np.inf`` selects the closed-form :math:`\beta\to\infty` limit where stated
(then :math:`\rho=r/\min(d,L)`).

The Bayes-optimal effective noise :math:`\zeta` is the largest root of
:math:`\alpha\zeta=\Delta+\mathrm{mmse}_{\beta,\rho}(\zeta)`; then :math:`\mathrm{MMSE}_S=\alpha\zeta-\Delta`
and the test error is :math:`\alpha\zeta=\Delta+\mathrm{MMSE}_S`.

Used in: Chapter 2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import integrate, interpolate, optimize

from .._validation import check_array, check_nonnegative, check_positive, check_size
from .._validation import check_seed
from ..ensemble import run_ensemble
from .._validation import ConvergenceError, as_generator
from ..stats import mean_se
from .model import _planted
from .free_probability import (
    _mmse,
    canonical_beta_rho,
    denoising_mmse_large_beta,
)

__all__ = [
    "BayesOptimalResult",
    "alpha_bar",
    "alpha_from_alpha_bar",
    "alpha_pr",
    "factorisation_jacobian_rank",
    "alpha_mnne",
    "svt_risk",
    "svt_risk_monte_carlo",
    "ridge_error",
    "ridge_estimate",
    "bo_equation",
    "bo_free_entropy",
    "bayes_optimal",
    "bayes_optimal_curve",
    "LowRankResult",
    "low_rank_bayes_optimal",
    "low_rank_weak_recovery",
]


def _is_inf(beta):
    return isinstance(beta, (float, np.floating)) and np.isposinf(beta)


def _canon(beta, rho):
    """Validated (beta, rho) with beta >= 1, or (inf, rho)."""
    if _is_inf(beta):
        return np.inf, check_positive(rho, "rho")
    return canonical_beta_rho(beta, rho)


def _mmse_function(beta, rho):
    """Scalar-or-array zeta -> mmse_{beta,rho}(zeta) for canonical (beta, rho)."""
    if np.isinf(beta):
        return lambda z: denoising_mmse_large_beta(rho, z)

    def f(z):
        z = np.asarray(z, dtype=float)
        out = np.array([0.0 if v == 0 else _mmse(beta, rho, float(v)) for v in z.ravel()])
        return float(out[0]) if z.ndim == 0 else out.reshape(z.shape)

    return f


def _abar_per_alpha(beta, rho):
    """The factor alpha_bar / alpha = beta / (rho (1 + beta)) (1 / rho at beta = inf)."""
    beta, rho = _canon(beta, rho)
    return 1 / rho if np.isinf(beta) else beta / (rho * (1 + beta))


def _scalar(out):
    return float(out) if np.ndim(out) == 0 else out


def alpha_bar(alpha, beta, rho):
    r"""Convert :math:`\alpha=n/(dL)` to low-rank units :math:`\bar\alpha=n/(r(d+L))=\alpha\beta/(\rho(1+\beta))`.

    Parameters
    ----------
    alpha : float or array_like
        Sample ratio(s) :math:`\alpha>0`.
    beta : float
        Aspect ratio :math:`L/d` (``np.inf``: :math:`\bar\alpha=\alpha/\rho`).
    rho : float
        Rank ratio :math:`r/d`.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> round(alpha_bar(0.36, 1.0, 0.2), 6)
    0.9
    """
    return _scalar(check_array(alpha, "alpha", positive=True) * _abar_per_alpha(beta, rho))


def alpha_from_alpha_bar(abar, beta, rho):
    r"""Inverse of :func:`alpha_bar`: :math:`\alpha=\bar\alpha\rho(1+\beta)/\beta`.

    Parameters
    ----------
    abar : float or array_like
        Low-rank sample ratio(s) :math:`\bar\alpha>0`.
    beta, rho : float
        Aspect and rank ratios (``beta=np.inf`` allowed).

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> round(alpha_from_alpha_bar(0.9, 1.0, 0.2), 6)
    0.36
    """
    return _scalar(check_array(abar, "abar", positive=True) / _abar_per_alpha(beta, rho))


def alpha_pr(beta, rho):
    r"""Perfect-recovery (counting) threshold :math:`\alpha_{PR}=\rho(1+\beta-\rho)/\beta`.

    A rank-:math:`r` :math:`d\times L` matrix has :math:`r(d+L-r)` degrees of freedom; for
    :math:`\rho\ge\min(1,\beta)` the matrix is generic and :math:`\alpha_{PR}=1`.

    Parameters
    ----------
    beta : float
        Aspect ratio :math:`L/d>0` (``np.inf``: :math:`\alpha_{PR}=\min(\rho,1)`).
    rho : float
        Rank ratio :math:`r/d>0`.

    Returns
    -------
    float

    Examples
    --------
    >>> [round(alpha_pr(b, r), 6) for b, r in [(1, 0.2), (2, 0.5), (0.5, 0.4), (1, 2)]]
    [0.36, 0.625, 0.88, 1.0]
    """
    beta, rho = _canon(beta, rho)
    if rho >= 1:
        return 1.0
    if np.isinf(beta):
        return rho
    return rho * (1 + beta - rho) / beta


def factorisation_jacobian_rank(d, L, r, rng=None):
    r"""Numerical rank of the Jacobian of :math:`(U,V)\mapsto UV^\top` at a random point.

    It equals the dimension :math:`r(d+L-r)` of the manifold of rank-:math:`r` :math:`d\times L`
    matrices (the :math:`r^2`-dimensional kernel is the gauge :math:`U\to UA`, :math:`V\to VA^{-\top}`),
    the count behind :func:`alpha_pr`.

    Parameters
    ----------
    d, L, r : int
        Sizes, with :math:`r\le\min(d,L)`.
    rng : numpy.random.Generator or int, optional
        Source of randomness for the point :math:`(U,V)`.

    Returns
    -------
    int

    Examples
    --------
    >>> factorisation_jacobian_rank(8, 12, 3, rng=0), 3 * (8 + 12 - 3)
    (51, 51)
    """
    d = check_size(d, "d")
    L = check_size(L, "L")
    r = check_size(r, "r")
    if r > min(d, L):
        raise ValueError(f"r must be at most min(d, L) = {min(d, L)}, got {r}")
    rng = as_generator(rng)
    U = rng.standard_normal((d, r))
    V = rng.standard_normal((L, r))
    J_U = np.einsum("ij,lk->iljk", np.eye(d), V).reshape(d * L, d * r)
    J_V = np.einsum("ik,lm->ilmk", U, np.eye(L)).reshape(d * L, L * r)
    return int(np.linalg.matrix_rank(np.hstack([J_U, J_V])))


def _p_gamma(x, k, lam_m, lam_p, gamma):
    lo = max(x, lam_m)
    if lo >= lam_p:
        return 0.0
    val, _ = integrate.quad(
        lambda t: t ** (k - 1) * np.sqrt(max((lam_p - t) * (t - lam_m), 0.0)), lo, lam_p, limit=200
    )
    return val / (2 * np.pi * gamma)


def alpha_mnne(beta, rho, tol=1e-13, max_iter=200):
    r"""Phase transition of minimal nuclear-norm recovery (Donoho-Gavish-Montanari).

    With :math:`b=1/\beta\le1`, :math:`\rho=r/\min(d,L)`, :math:`\gamma=b(1-\rho)/(1-\rho b)`,
    :math:`\lambda_\pm=(1\pm\sqrt\gamma)^2` and
    :math:`P(x;k)=\frac1{2\pi\gamma}\int_{\max(x,\lambda_-)}^{\lambda_+}t^{k-1}\sqrt{(\lambda_+-t)(t-\lambda_-)}dt`,
    :math:`\Lambda` solves :math:`(1-\rho)[P(\Lambda^2;\frac12)-\Lambda P(\Lambda^2;0)]=\rho\Lambda` and

    .. math::
        \alpha_{MNNE}=\rho+b\rho-b\rho^2+(1-\rho b)\big[\rho\Lambda^2+(1-\rho)\big(P(\Lambda^2;1)
        -2\Lambda P(\Lambda^2;\tfrac12)+\Lambda^2P(\Lambda^2;0)\big)\big].

    Parameters
    ----------
    beta : float
        Aspect ratio :math:`L/d>0` (finite).
    rho : float
        Rank ratio :math:`r/d>0`.
    tol : float
        Absolute tolerance on :math:`\Lambda` (Brent's method).
    max_iter : int
        Maximum Brent iterations.

    Returns
    -------
    float
        :math:`\alpha_{MNNE}` (1 when :math:`\rho\ge\min(1,\beta)`).

    Raises
    ------
    ConvergenceError
        If Brent's method does not converge.
    ValueError
        If an argument is invalid, e.g. ``max_iter`` is not an integer in ``[1, MAX_SIZE]``.

    Examples
    --------
    >>> round(alpha_mnne(1.0, 0.2), 6)
    0.57169
    """
    beta, rho = canonical_beta_rho(beta, rho)
    tol = check_positive(tol, "tol")
    max_iter = check_size(max_iter, "max_iter")
    if rho >= 1:
        return 1.0
    lam_p, risk, stationarity = _svt_terms(beta, rho)
    try:
        lam = optimize.brentq(stationarity, 1e-14, np.sqrt(lam_p), xtol=tol, maxiter=max_iter)
    except RuntimeError as exc:
        raise ConvergenceError(f"alpha_mnne: Brent did not converge ({exc})") from exc
    return risk(lam)


def _svt_terms(beta, rho):
    """(lambda_+, large-signal SVT risk M(Lambda), half its derivative) for canonical beta, rho < 1."""
    b = 1.0 / beta
    gamma = b * (1 - rho) / (1 - rho * b)
    lam_m, lam_p = (1 - np.sqrt(gamma)) ** 2, (1 + np.sqrt(gamma)) ** 2

    def P(lam, k):
        return _p_gamma(lam**2, k, lam_m, lam_p, gamma)

    def risk(lam):  # tangent + shift of the r signal values + thresholded complement
        inner = rho * lam**2 + (1 - rho) * (P(lam, 1.0) - 2 * lam * P(lam, 0.5)
                                            + lam**2 * P(lam, 0.0))
        return rho + b * rho - b * rho**2 + (1 - rho * b) * inner

    def stationarity(lam):  # d risk / d Lambda / (2 (1 - rho b))
        return (1 - rho) * (P(lam, 0.5) - lam * P(lam, 0.0)) - rho * lam

    return lam_p, risk, stationarity


def svt_risk(lam, beta, rho):
    r"""Large-signal risk of singular-value soft thresholding, per entry and per unit noise.

    For :math:`Y=S+\sqrt\zeta Z` with :math:`d\le L` (otherwise transpose), :math:`S` of rank
    :math:`r=\rho d` with singular values :math:`\to\infty`, and the threshold
    :math:`\tau=\Lambda\sqrt{\zeta(L-r)}`,

    .. math::
        M(\Lambda)=\lim\frac{\mathbb E\|\eta_\tau(Y)-S\|_F^2}{\zeta dL}
        =\rho+b\rho-b\rho^2+(1-\rho b)\Big[\rho\Lambda^2+(1-\rho)\,
        \mathbb E(\sigma-\Lambda)_+^2\Big],

    with :math:`b=d/L` and :math:`\sigma^2` Marchenko-Pastur distributed with ratio
    :math:`\gamma=b(1-\rho)/(1-\rho b)`. Its minimum over :math:`\Lambda` is :func:`alpha_mnne`.

    Parameters
    ----------
    lam : float or array_like
        Threshold(s) :math:`\Lambda\ge0` in units of :math:`\sqrt{\zeta(L-r)}`.
    beta : float
        Aspect ratio :math:`L/d>0` (finite).
    rho : float
        Rank ratio :math:`r/d`, with :math:`0<\rho<\min(1,\beta)`.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> round(float(svt_risk(0.0, 1.0, 0.2)), 6)          # no thresholding: the full noise
    1.0
    """
    beta, rho = canonical_beta_rho(beta, rho)
    if rho >= 1:
        raise ValueError("rho must be below min(1, beta) (otherwise S has full rank)")
    lam = check_array(lam, "lam")
    if np.any(lam < 0):
        raise ValueError("lam must be non-negative")
    _, risk, _ = _svt_terms(beta, rho)
    out = np.array([risk(float(v)) for v in lam.ravel()]).reshape(lam.shape)
    return float(out) if out.ndim == 0 else out


def svt_risk_monte_carlo(d, L, r, zeta, lam, n_trials, scale=1e3, rng=None, jobs=None):
    r"""Monte Carlo of the soft-thresholding risk of :func:`svt_risk` at a large signal.

    Draws :math:`S=\texttt{scale}\cdot UV^\top/\sqrt r` (Gaussian factors, rank ``r``), observes
    :math:`Y=S+\sqrt\zeta Z`, soft-thresholds the singular values of :math:`Y` at
    :math:`\tau=\Lambda\sqrt{\zeta(\max(d,L)-r)}` for every ``lam`` (one SVD per trial) and returns
    the mean and standard error of :math:`\|\eta_\tau(Y)-S\|_F^2/(\zeta dL)` over the trials.

    Parameters
    ----------
    d, L, r : int
        Sizes and rank, ``r < min(d, L)``.
    zeta : float
        Noise variance :math:`\zeta>0`.
    lam : array_like
        Thresholds :math:`\Lambda\ge0`.
    n_trials : int
        Number of independent draws (at least 2).
    scale : float
        Signal scale (large: the worst case of the minimax risk).
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None
        Root of the trials' generators: trial ``t`` draws :math:`S` and the noise from the
        ``t``-th child (:func:`seqrmt.ensemble.spawn_generators`).
    jobs : int or None
        Workers (see :func:`seqrmt.ensemble.n_jobs`); the result does not depend on them.

    Returns
    -------
    mean, se : ndarray
        Shape of ``lam``.

    Examples
    --------
    >>> m, se = svt_risk_monte_carlo(60, 60, 12, 1e-2, [0.9], 4, rng=0)
    >>> bool(abs(m[0] - svt_risk(0.9, 1.0, 0.2)) < 0.03)
    True
    """
    d = check_size(d, "d")
    L = check_size(L, "L")
    r = check_size(r, "r")
    if r >= min(d, L):
        raise ValueError("r must be smaller than min(d, L)")
    zeta = check_positive(zeta, "zeta")
    lam = check_array(lam, "lam", ndim=1)
    if np.any(lam < 0):
        raise ValueError("lam must be non-negative")
    n_trials = check_size(n_trials, "n_trials")
    if n_trials < 2:
        raise ValueError("n_trials must be at least 2")
    scale = check_positive(scale, "scale")
    tau = lam * np.sqrt(zeta * (max(d, L) - r))
    out = np.array(run_ensemble(_svt_risk_draw, n_trials, check_seed(rng),
                                args=(d, L, r, zeta, tau, scale), jobs=jobs, desc="trials"))
    out /= zeta * d * L
    return mean_se(out)


def _svt_risk_draw(rng, d, L, r, zeta, tau, scale):
    """One trial of :func:`svt_risk_monte_carlo`: squared errors at every threshold."""
    S = scale * _planted(d, L, r, rng)[2]
    u, s, vt = np.linalg.svd(S + np.sqrt(zeta) * rng.standard_normal((d, L)), full_matrices=False)
    return np.array([np.sum(((u * np.maximum(s - tj, 0.0)) @ vt - S) ** 2) for tj in tau])


def ridge_error(alpha, delta, lam=None):
    r"""Asymptotic error :math:`\frac1{dL}\|\hat S-S^*\|_F^2` of ridge on the vectorised problem.

    The estimator is :math:`(F^\top F+\lambda I)^{-1}F^\top y` (features of variance :math:`1/(dL)`,
    iid :math:`N(0,1)` prior on :math:`\operatorname{vec}S^*`). For :math:`\lambda=\Delta` (the default,
    Bayes-optimal for the Gaussian prior)

    .. math::
        \mathrm{MSE}_{LR}=\tfrac12\big[-(\Delta+\alpha-1)+\sqrt{(\Delta+\alpha-1)^2+4\Delta}\big];

    for general :math:`\lambda`, with :math:`p=\alpha+\lambda`, :math:`c=\alpha-\lambda`,
    :math:`t=\sqrt{(p-1)^2+4\lambda}`, :math:`m=2\alpha/(p+t+1)`,
    :math:`q=\frac{4\alpha(\alpha(p+t-3)+(1+\Delta)(p+t+1))}{(p+t+1)(p^2-2c+t^2+2t(p+1)+1)}`,
    :math:`\mathrm{MSE}=1-2m+q`. The test error is :math:`\Delta+\mathrm{MSE}`.

    Parameters
    ----------
    alpha : float or array_like
        Sample ratio(s) :math:`\alpha>0`.
    delta : float
        Noise variance :math:`\Delta\ge0`.
    lam : float, optional
        Ridge penalty :math:`\lambda\ge0` (default :math:`\Delta`; :math:`\lambda=0` is the
        min-norm interpolator / least squares).

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> round(ridge_error(0.5, 0.1), 6), round(ridge_error(0.25, 0.0), 6)
    (0.574166, 0.75)
    >>> round(ridge_error(0.5, 0.1, lam=1.0), 6)
    0.685071
    """
    a = check_array(alpha, "alpha", positive=True)
    delta = check_nonnegative(delta, "delta")
    if lam is None:
        s = delta + a - 1
        out = 0.5 * (-s + np.sqrt(s**2 + 4 * delta))
    else:
        lam = check_nonnegative(lam, "lam")
        p, c = a + lam, a - lam
        t = np.sqrt((p - 1) ** 2 + 4 * lam)
        m = 2 * a / (p + t + 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            q = (4 * a * (a * (p + t - 3) + (1 + delta) * (p + t + 1))
                 / ((p + t + 1) * (p**2 - 2 * c + t**2 + 2 * t * (p + 1) + 1)))
        out = 1 - 2 * m + q
        if lam == 0:  # interpolation peak at alpha = 1
            out = np.where(a == 1, np.inf if delta > 0 else 0.0, out)
    return float(out) if out.ndim == 0 else out


def ridge_estimate(X, y, lam):
    r"""Ridge regression on the vectorised tokens: the baseline that ignores the low rank.

    With :math:`F_\mu=\operatorname{vec}(X_\mu^\top)/\sqrt{dL}`, returns
    :math:`\hat S=\operatorname{mat}\big((F^\top F+\lambda I)^{-1}F^\top y\big)`, computed in the dual
    form :math:`F^\top(FF^\top+\lambda I)^{-1}y` when :math:`n\le dL` (so :math:`\lambda=0` gives the
    minimum-norm interpolator).

    Parameters
    ----------
    X : array_like, shape (n, L, d)
        Token sequences (layout of :func:`seqrmt.bsr.model.sample_bsr`).
    y : array_like, shape (n,)
        Targets.
    lam : float
        Penalty :math:`\lambda\ge0`.

    Returns
    -------
    ndarray, shape (d, L)

    Examples
    --------
    >>> from seqrmt.bsr import sample_bsr
    >>> data = sample_bsr(200, 10, 10, 2, 0.0, rng=0)
    >>> S_hat = ridge_estimate(data.X, data.y, 0.0)
    >>> round(float(np.mean((S_hat - data.S) ** 2)), 2)      # about 1 - alpha = 0
    0.0
    """
    X = check_array(X, "X", ndim=3)
    n, L, d = X.shape
    y = check_array(y, "y", shape=(n,))
    lam = check_nonnegative(lam, "lam")
    F = X.transpose(0, 2, 1).reshape(n, d * L) / np.sqrt(d * L)
    if n <= d * L:
        w = F.T @ np.linalg.solve(F @ F.T + lam * np.eye(n), y)
    else:
        w = np.linalg.solve(F.T @ F + lam * np.eye(d * L), F.T @ y)
    return w.reshape(d, L)


def bo_equation(zeta, alpha, beta, rho, delta=0.0):
    r"""The function :math:`F(\zeta)=\alpha\zeta-\Delta-\mathrm{mmse}_{\beta,\rho}(\zeta)`.

    Its largest root is the Bayes-optimal effective noise; :math:`F\ge0` for
    :math:`\zeta\ge(1+\Delta)/\alpha` since :math:`\mathrm{mmse}\le1`.

    Parameters
    ----------
    zeta : float or array_like
        Effective noise(s) :math:`\zeta\ge0`.
    alpha : float
        Sample ratio :math:`\alpha>0`.
    beta, rho : float
        Aspect and rank ratios (``beta=np.inf`` allowed).
    delta : float
        Noise variance :math:`\Delta\ge0`.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> round(bo_equation(0.702937, 0.5, 1.0, 0.5), 5)
    0.0
    """
    alpha = check_positive(alpha, "alpha")
    beta, rho = _canon(beta, rho)
    delta = check_nonnegative(delta, "delta")
    z = check_array(zeta, "zeta")
    if np.any(z < 0):
        raise ValueError("zeta must be non-negative")
    out = alpha * z - delta - _mmse_function(beta, rho)(z)
    return float(out) if np.ndim(out) == 0 else out


_Z_TOP = 1e4  # upper end of the free-entropy integral; the tail beyond is added in closed form


def _free_entropy(zeta, alpha, delta, mmse_fn, n_grid):
    """Replica-symmetric potential f(zeta) for an mmse function (zeta > 0, 1-D array)."""
    # a fixed grid for all zeta >= 1e-5, so that repeated calls reuse the cached mmse values
    u = np.linspace(np.log(min(zeta.min(), 1e-5)), np.log(max(_Z_TOP, zeta.max())), n_grid)
    grid = np.exp(u)
    m_grid = np.asarray(mmse_fn(grid), dtype=float)
    # psi(1/zeta) = 1/2 int_zeta^inf (1 - m(s)) / s^2 ds = 1/2 [1/zeta - int m(e^u) e^{-u} du]
    g = m_grid / grid  # bounded as zeta -> 0 (m(s) ~ alpha_PR s), smooth in u
    upper = integrate.cumulative_simpson(g[::-1], dx=u[1] - u[0], initial=0.0)[::-1]
    top = grid[-1]
    tail = 1 / top - (1 - m_grid[-1]) / (2 * top)  # int_top^inf m/s^2 with 1 - m(s) ~ c/s
    smooth = interpolate.CubicSpline(u, upper + tail)(np.log(zeta))
    m = np.asarray(mmse_fn(zeta), dtype=float)
    return m / (2 * zeta) - 0.5 * smooth - 0.5 * alpha * np.log(delta + m)


def bo_free_entropy(zeta, alpha, beta, rho, delta=0.0, n_grid=300):
    r"""Replica-symmetric free entropy of bilinear sequence regression as a function of :math:`\zeta`.

    With :math:`\hat q=1/\zeta`, the overlap :math:`q=1-\mathrm{mmse}_{\beta,\rho}(\zeta)` of the
    denoising channel and :math:`\psi(\hat q)=\frac12\int_0^{\hat q}\big(1-\mathrm{mmse}(1/t)\big)dt`,
    the potential :math:`\psi(\hat q)-\frac12q\hat q-\frac\alpha2\log(\Delta+1-q)` evaluated on the
    stationarity line of :math:`\hat q` is

    .. math::
        f(\zeta)=\frac{\mathrm{mmse}(\zeta)}{2\zeta}-\frac12\int_\zeta^\infty
        \frac{\mathrm{mmse}(s)}{s^2}\,ds-\frac\alpha2\log\big(\Delta+\mathrm{mmse}(\zeta)\big)

    (the constant :math:`-\frac\alpha2(1+\log2\pi)` is dropped). Its derivative is
    :math:`f'(\zeta)=-\mathrm{mmse}'(\zeta)F(\zeta)/(2\zeta(\Delta+\mathrm{mmse}(\zeta)))` with :math:`F`
    of :func:`bo_equation`, so :math:`f` increases where :math:`F<0` and decreases where :math:`F>0`.
    The integral uses Simpson's rule on ``n_grid`` log-spaced points from :math:`10^{-5}` (or the
    smallest ``zeta``) to :math:`10^4`, a
    closed-form tail and a cubic spline in :math:`\log\zeta`.

    Parameters
    ----------
    zeta : float or array_like
        Effective noise(s) :math:`\zeta>0`.
    alpha : float
        Sample ratio :math:`\alpha>0`.
    beta, rho : float
        Aspect and rank ratios (``beta=np.inf`` allowed).
    delta : float
        Noise variance :math:`\Delta\ge0`.
    n_grid : int
        Number of integration points (at least 20).

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> z = bayes_optimal(0.5, 1.0, 0.5).zeta
    >>> f = bo_free_entropy([0.8 * z, z, 1.25 * z], 0.5, 1.0, 0.5)
    >>> bool(f[1] > max(f[0], f[2]))
    True
    """
    alpha = check_positive(alpha, "alpha")
    beta, rho = _canon(beta, rho)
    delta = check_nonnegative(delta, "delta")
    n_grid = check_size(n_grid, "n_grid")
    if n_grid < 20:
        raise ValueError("n_grid must be at least 20")
    z = check_array(zeta, "zeta")
    if np.any(z <= 0):
        raise ValueError("zeta must be positive")
    out = _free_entropy(np.atleast_1d(z).ravel(), alpha, delta, _mmse_function(beta, rho), n_grid)
    return float(out[0]) if z.ndim == 0 else out.reshape(z.shape)


@dataclass(frozen=True)
class BayesOptimalResult:
    """Bayes-optimal solution (scalars, or arrays for :func:`bayes_optimal_curve`).

    Attributes
    ----------
    zeta : float or ndarray
        Effective noise :math:`\\zeta=1/\\hat q` (0 at perfect recovery).
    mmse : float or ndarray
        :math:`\\mathrm{MMSE}_S=\\alpha\\zeta-\\Delta=1-q`.
    test_error : float or ndarray
        :math:`\\mathcal E_{\\rm gen}=\\alpha\\zeta=\\Delta+\\mathrm{MMSE}_S`.
    alpha, beta, rho, delta : float or ndarray
        The inputs (``beta`` and ``rho`` as given, before transposition).
    """

    zeta: float
    mmse: float
    test_error: float
    alpha: float
    beta: float
    rho: float
    delta: float

    @property
    def overlap(self):
        """:math:`q=1-\\mathrm{MMSE}_S`."""
        return 1 - self.mmse


def _solve_zeta(alpha, delta, mmse_fn, a_pr, F_grid=None, grid=None, tol=1e-12, max_iter=200):
    """Largest root of alpha*zeta = delta + mmse(zeta)."""
    if delta == 0 and alpha >= a_pr:
        return 0.0
    z_hi = (1 + delta) / alpha
    if grid is None:
        grid = z_hi * 10.0 ** (-8 * np.arange(60) / 59)
        F_grid = alpha * grid - delta - mmse_fn(grid)
    else:
        F_grid = alpha * grid - delta - F_grid  # F_grid holds mmse values on the common grid
    neg = np.flatnonzero(F_grid < 0)
    if neg.size == 0:
        return 0.0
    j = neg[0]
    if j == 0:  # pragma: no cover - F(z_hi) >= 0 always
        raise ConvergenceError("bayes_optimal: F < 0 at the top of the scan")

    def F(z):
        return alpha * z - delta - mmse_fn(z)

    try:
        return optimize.brentq(F, grid[j], grid[j - 1], xtol=tol * grid[j], rtol=1e-12,
                               maxiter=max_iter)
    except RuntimeError as exc:
        raise ConvergenceError(f"bayes_optimal: Brent did not converge ({exc})") from exc


def bayes_optimal(alpha, beta, rho, delta=0.0, tol=1e-12, max_iter=200):
    r"""Bayes-optimal effective noise, :math:`\mathrm{MMSE}_S` and test error.

    Solves :math:`\alpha\zeta=\Delta+\mathrm{mmse}_{\beta,\rho}(\zeta)` for its **largest** root: scan
    :math:`\zeta_j=\zeta_{hi}10^{-8j/59}` downward from :math:`\zeta_{hi}=(1+\Delta)/\alpha`, stop at the
    first sign change of :math:`F`, polish with Brent. For :math:`\Delta=0` and
    :math:`\alpha\ge\alpha_{PR}` it returns :math:`\zeta=0` (perfect recovery).

    Parameters
    ----------
    alpha : float
        Sample ratio :math:`n/(dL)>0`.
    beta : float
        Aspect ratio :math:`L/d>0`, or ``np.inf`` (closed-form limit).
    rho : float
        Rank ratio :math:`r/d>0`.
    delta : float
        Label noise variance :math:`\Delta\ge0`.
    tol : float
        Relative tolerance on :math:`\zeta`.
    max_iter : int
        Maximum Brent iterations.

    Returns
    -------
    BayesOptimalResult
        Fields ``zeta``, ``mmse`` (:math:`\mathrm{MMSE}_S`), ``test_error``
        (:math:`\Delta+\mathrm{MMSE}_S`), the inputs, and the property ``overlap``.

    Raises
    ------
    ConvergenceError
        If Brent's method does not converge in ``max_iter`` iterations.
    ValueError
        If an argument is invalid, e.g. ``max_iter`` is not an integer in ``[1, MAX_SIZE]``.

    Examples
    --------
    >>> res = bayes_optimal(0.5, 1.0, 0.5)
    >>> round(res.zeta, 4), round(res.mmse, 4), round(res.test_error, 4)
    (0.7029, 0.3515, 0.3515)
    >>> bayes_optimal(0.4, 1.0, 0.2).mmse      # above alpha_PR = 0.36
    0.0
    """
    alpha = check_positive(alpha, "alpha")
    beta_c, rho_c = _canon(beta, rho)
    delta = check_nonnegative(delta, "delta")
    tol = check_positive(tol, "tol")
    max_iter = check_size(max_iter, "max_iter")
    zeta = _solve_zeta(alpha, delta, _mmse_function(beta_c, rho_c), alpha_pr(beta_c, rho_c),
                       tol=tol, max_iter=max_iter)
    mmse = max(alpha * zeta - delta, 0.0)
    return BayesOptimalResult(zeta=zeta, mmse=mmse, test_error=delta + mmse, alpha=alpha,
                              beta=float(beta), rho=float(rho), delta=delta)


def bayes_optimal_curve(alphas, beta, rho, delta=0.0, tol=1e-10, max_iter=200):
    r"""Vectorised :func:`bayes_optimal` over many :math:`\alpha` (shared, cached scan).

    The scan uses one log grid of :math:`\zeta` (same density as :func:`bayes_optimal`, about 7.4
    points per decade) covering every :math:`[10^{-8}\zeta_{hi}(\alpha),\zeta_{hi}(\alpha)]`, evaluated
    once; each root is then polished with Brent. Results agree with :func:`bayes_optimal` to ``tol``.

    Parameters
    ----------
    alphas : array_like
        Sample ratios :math:`\alpha>0` (1-D).
    beta, rho, delta, tol, max_iter
        As in :func:`bayes_optimal`.

    Returns
    -------
    BayesOptimalResult
        With array fields ``zeta``, ``mmse``, ``test_error`` and ``alpha``.

    Examples
    --------
    >>> res = bayes_optimal_curve([0.2, 0.3, 0.4], 1.0, 0.2)
    >>> np.round(res.mmse, 4)
    array([0.6601, 0.3474, 0.    ])
    """
    alphas = check_array(alphas, "alphas", ndim=1, positive=True)
    beta_c, rho_c = _canon(beta, rho)
    delta = check_nonnegative(delta, "delta")
    tol = check_positive(tol, "tol")
    max_iter = check_size(max_iter, "max_iter")
    mmse_fn = _mmse_function(beta_c, rho_c)
    a_pr = alpha_pr(beta_c, rho_c)
    z_top = (1 + delta) / alphas.min()
    z_bot = 1e-8 * (1 + delta) / alphas.max()
    n_grid = int(np.ceil(59 / 8 * np.log10(z_top / z_bot))) + 1
    grid = np.geomspace(z_top, z_bot, n_grid)
    need = ~((delta == 0) & (alphas >= a_pr))
    mmse_grid = mmse_fn(grid) if need.any() else None
    zetas = np.array([
        _solve_zeta(a, delta, mmse_fn, a_pr, F_grid=mmse_grid, grid=grid, tol=tol,
                    max_iter=max_iter)
        for a in alphas
    ])
    mmse = np.maximum(alphas * zetas - delta, 0.0)
    return BayesOptimalResult(zeta=zetas, mmse=mmse, test_error=delta + mmse, alpha=alphas,
                              beta=float(beta), rho=float(rho), delta=delta)


@dataclass(frozen=True)
class LowRankResult:
    """Low-rank (:math:`\\rho\\to0`) Bayes-optimal solution.

    Attributes
    ----------
    q : float
        Overlap :math:`q=g_ag_b`.
    q_hat : float
        Conjugate :math:`\\hat q=\\bar\\alpha/(\\Delta+1-q)` (``inf`` at perfect recovery).
    mmse : float
        :math:`1-q`.
    test_error : float
        :math:`\\Delta+1-q`.
    """

    q: float
    q_hat: float
    mmse: float
    test_error: float


def _low_rank_q(q_hat, beta):
    qh = np.asarray(q_hat, dtype=float)
    num = (1 + beta) ** 2 * qh**2 - beta
    ga = num / ((1 + beta) * qh * ((1 + beta) * qh + 1))
    gb = num / ((1 + beta) * qh * ((1 + beta) * qh + beta))
    return np.where(num > 0, ga * gb, 0.0)


def low_rank_weak_recovery(beta, delta=0.0):
    r"""Weak-recovery threshold of the low-rank limit, :math:`\bar\alpha_w=(1+\Delta)\sqrt\beta/(1+\beta)`.

    Parameters
    ----------
    beta : float
        Aspect ratio :math:`L/d>0` (symmetric under :math:`\beta\to1/\beta`).
    delta : float
        Noise variance :math:`\Delta\ge0`.

    Returns
    -------
    float

    Examples
    --------
    >>> round(low_rank_weak_recovery(1.0), 6)
    0.5
    """
    beta = check_positive(beta, "beta")
    delta = check_nonnegative(delta, "delta")
    return float((1 + delta) * np.sqrt(beta) / (1 + beta))


def low_rank_bayes_optimal(abar, beta, delta=0.0, tol=1e-12, max_iter=200):
    r"""Bayes-optimal error in the low-rank limit :math:`\rho\to0` at fixed :math:`\bar\alpha`.

    Fixed point of :math:`\hat q=\bar\alpha/(\Delta+1-q)`, :math:`q=g_a(\hat q)g_b(\hat q)` with
    :math:`g_a=\frac{(1+\beta)^2\hat q^2-\beta}{(1+\beta)\hat q((1+\beta)\hat q+1)}`,
    :math:`g_b=\frac{(1+\beta)^2\hat q^2-\beta}{(1+\beta)\hat q((1+\beta)\hat q+\beta)}` (:math:`q=0` when
    the numerator is negative). Solved as the largest root in :math:`\hat q` of
    :math:`\hat q(\Delta+1-q(\hat q))=\bar\alpha` (scan from above, then Brent). For :math:`\Delta=0`
    recovery is perfect for :math:`\bar\alpha\ge1`.

    Parameters
    ----------
    abar : float
        :math:`\bar\alpha=n/(r(d+L))>0`.
    beta : float
        Aspect ratio :math:`L/d>0`.
    delta : float
        Noise variance :math:`\Delta\ge0`.
    tol : float
        Relative tolerance on :math:`\hat q`.
    max_iter : int
        Maximum Brent iterations.

    Returns
    -------
    LowRankResult

    Raises
    ------
    ConvergenceError
        If Brent's method does not converge.
    ValueError
        If an argument is invalid, e.g. ``max_iter`` is not an integer in ``[1, MAX_SIZE]``.

    Examples
    --------
    >>> round(low_rank_bayes_optimal(0.75, 1.0).mmse, 6)    # 1 - (2*0.75 - 1)^2
    0.75
    """
    abar = check_positive(abar, "abar")
    beta = check_positive(beta, "beta")
    delta = check_nonnegative(delta, "delta")
    tol = check_positive(tol, "tol")
    max_iter = check_size(max_iter, "max_iter")
    if delta == 0 and abar >= 1:
        return LowRankResult(q=1.0, q_hat=np.inf, mmse=0.0, test_error=0.0)
    lo = abar / (1 + delta)
    hi = abar / delta if delta > 0 else abar * 1e12
    grid = np.geomspace(hi, lo, 400)

    def phi(qh):
        return qh * (delta + 1 - _low_rank_q(qh, beta)) - abar

    vals = phi(grid)
    neg = np.flatnonzero(vals < 0)
    if neg.size == 0:
        q_hat = lo
    else:
        j = neg[0]
        try:
            q_hat = optimize.brentq(lambda t: float(phi(t)), grid[j], grid[j - 1],
                                    xtol=tol * grid[j], maxiter=max_iter)
        except RuntimeError as exc:
            raise ConvergenceError(f"low_rank_bayes_optimal: Brent failed ({exc})") from exc
    q = float(_low_rank_q(q_hat, beta))
    return LowRankResult(q=q, q_hat=float(q_hat), mmse=1 - q, test_error=delta + 1 - q)
