r"""Bayes-optimal error of bilinear sequence regression, its thresholds and baselines.

Scalings: :math:`\alpha=n/(dL)`, :math:`\beta=L/d`, :math:`\rho=r/d`, low-rank units
:math:`\bar\alpha=n/(r(d+L))=\alpha\beta/(\rho(1+\beta))`. Every function accepts :math:`\beta<1`
(transposition :math:`(\beta,\rho)\to(1/\beta,\rho/\beta)`, which leaves :math:`\alpha` and every error
unchanged); ``beta=np.inf`` selects the closed-form :math:`\beta\to\infty` limit where stated (then
:math:`\rho=r/\min(d,L)`). The Bayes-optimal effective noise is the largest root of
:math:`\alpha\zeta=\Delta+\mathrm{mmse}_{\beta,\rho}(\zeta)`; :math:`\mathrm{MMSE}_S=\alpha\zeta-\Delta`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import integrate, interpolate, optimize

from .._validation import (ConvergenceError, check_array, check_nonnegative, check_positive,
                           check_size)
from ._spectrum import canonical, denoising_mmse_large_beta, mmse_value


def _canon(beta, rho):
    """Validated (beta, rho) with beta >= 1, or (inf, rho)."""
    if isinstance(beta, (float, np.floating)) and np.isposinf(beta):
        return np.inf, check_positive(rho, "rho")
    return canonical(beta, rho)


def _mmse_function(beta, rho):
    """zeta (scalar or array) -> mmse_{beta,rho}(zeta) for canonical (beta, rho)."""
    if np.isinf(beta):
        return lambda z: denoising_mmse_large_beta(rho, z)

    def f(z):
        z = np.asarray(z, dtype=float)
        out = np.array([0.0 if v == 0 else mmse_value(beta, rho, float(v)) for v in z.ravel()])
        return float(out[0]) if z.ndim == 0 else out.reshape(z.shape)

    return f


def alpha_bar(alpha, beta, rho):
    r"""Sample ratio in low-rank units, :math:`\bar\alpha=n/(r(d+L))=\alpha\beta/(\rho(1+\beta))`.

    Parameters
    ----------
    alpha : float or array_like
        Sample ratio(s) :math:`\alpha=n/(dL)>0`.
    beta : float
        Aspect ratio :math:`L/d` (``np.inf``: :math:`\bar\alpha=\alpha/\rho`).
    rho : float
        Rank ratio :math:`r/d`.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> round(alpha_bar(0.36, 1.0, 0.2), 6)           # alpha_PR(1, 0.2) in low-rank units
    0.9
    >>> alpha_bar(0.3, 0.5, 0.2) == alpha_bar(0.3, 2.0, 0.4)     # invariant under transposition
    True
    """
    beta, rho = _canon(beta, rho)
    # n / (r (d + L)) = n / (dL) * dL / (r (d + L)) with L = beta d, r = rho d
    factor = 1 / rho if np.isinf(beta) else beta / (rho * (1 + beta))
    out = check_array(alpha, "alpha", positive=True) * factor
    return float(out) if out.ndim == 0 else out


def alpha_pr(beta, rho):
    r"""Perfect-recovery (counting) threshold :math:`\alpha_{PR}=\rho(1+\beta-\rho)/\beta`.

    A rank-:math:`r` :math:`d\times L` matrix has :math:`r(d+L-r)` degrees of freedom; divided by
    :math:`dL` this is :math:`\alpha_{PR}`. For :math:`\rho\ge\min(1,\beta)` the matrix is generic
    and :math:`\alpha_{PR}=1`.

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
        return 1.0  # a generic matrix: all dL entries must be pinned down
    # r(d + L - r) / (dL) with r = rho d, L = beta d; for L >> d the count is r L / (dL) = rho
    return rho if np.isinf(beta) else rho * (1 + beta - rho) / beta


def _svt_terms(beta, rho):
    """(lambda_+, large-signal SVT risk M(Lambda), half its derivative) for canonical beta, rho < 1."""
    b = 1.0 / beta
    # the complement of the signal's row and column spaces is (d - r) x (L - r): MP ratio gamma
    gamma = b * (1 - rho) / (1 - rho * b)
    lam_m, lam_p = (1 - np.sqrt(gamma)) ** 2, (1 + np.sqrt(gamma)) ** 2

    def P(lam, k):  # E[sigma^(2k) 1{sigma^2 > lam^2}] for sigma^2 Marchenko-Pastur of ratio gamma
        lo = max(lam**2, lam_m)
        if lo >= lam_p:
            return 0.0
        val, _ = integrate.quad(lambda t: t ** (k - 1) * np.sqrt(max((lam_p - t) * (t - lam_m), 0.0)),
                                lo, lam_p, limit=200)
        return val / (2 * np.pi * gamma)

    def risk(lam):  # tangent + shift of the r signal values + thresholded complement
        # E (sigma - Lambda)_+^2 = P(1) - 2 Lambda P(1/2) + Lambda^2 P(0)
        inner = rho * lam**2 + (1 - rho) * (P(lam, 1.0) - 2 * lam * P(lam, 0.5) + lam**2 * P(lam, 0.0))
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
    :math:`b(1-\rho)/(1-\rho b)`. Its minimum over :math:`\Lambda` is :func:`alpha_mnne`.

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
    beta, rho = canonical(beta, rho)
    if rho >= 1:
        raise ValueError("rho must be below min(1, beta) (otherwise S has full rank)")
    lam = check_array(lam, "lam")
    if np.any(lam < 0):
        raise ValueError("lam must be non-negative")
    # each value needs three Marchenko-Pastur integrals P(Lambda^2; k), k = 0, 1/2, 1
    _, risk, _ = _svt_terms(beta, rho)
    out = np.array([risk(float(v)) for v in lam.ravel()]).reshape(lam.shape)
    return float(out) if out.ndim == 0 else out


def alpha_mnne(beta, rho, tol=1e-13, max_iter=200):
    r"""Phase transition of minimal nuclear-norm recovery, :math:`\alpha_{MNNE}=\min_\Lambda M(\Lambda)`.

    With :math:`M` of :func:`svt_risk`, the minimiser solves
    :math:`(1-\rho)\,\mathbb E(\sigma-\Lambda)_+=\rho\Lambda` (Donoho, Gavish and Montanari 2013;
    the statistical dimension of the descent cone, Amelunxen et al. 2014).

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
    seqrmt.ConvergenceError
        If Brent's method does not converge.

    Examples
    --------
    >>> round(alpha_mnne(1.0, 0.2), 6)
    0.57169
    """
    beta, rho = canonical(beta, rho)
    tol = check_positive(tol, "tol")
    max_iter = check_size(max_iter, "max_iter")
    if rho >= 1:
        return 1.0
    lam_p, risk, stationarity = _svt_terms(beta, rho)
    try:  # the stationarity condition is positive at 0 and negative at the bulk edge
        lam = optimize.brentq(stationarity, 1e-14, np.sqrt(lam_p), xtol=tol, maxiter=max_iter)
    except RuntimeError as exc:
        raise ConvergenceError(f"alpha_mnne: Brent did not converge ({exc})") from exc
    return risk(lam)


def ridge_error(alpha, delta, lam=None):
    r"""Asymptotic error :math:`\frac1{dL}\|\hat S-S^*\|_F^2` of ridge on the vectorised problem.

    The estimator is :math:`(F^\top F+\lambda I)^{-1}F^\top y` (features of variance :math:`1/(dL)`,
    :math:`\mathbb E\,\operatorname{vec}S^*\operatorname{vec}S^{*\top}=I`). For :math:`\lambda=\Delta`
    (the default; the linear MMSE estimator)

    .. math::
        \mathrm{MSE}_{LR}=\tfrac12\big[-(\Delta+\alpha-1)+\sqrt{(\Delta+\alpha-1)^2+4\Delta}\big];

    for general :math:`\lambda`, with :math:`p=\alpha+\lambda`, :math:`c=\alpha-\lambda`,
    :math:`t=\sqrt{(p-1)^2+4\lambda}`, :math:`m=2\alpha/(p+t+1)`,
    :math:`q=\frac{4\alpha(\alpha(p+t-3)+(1+\Delta)(p+t+1))}{(p+t+1)(p^2-2c+t^2+2t(p+1)+1)}`,
    :math:`\mathrm{MSE}=1-2m+q`.

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
    # both forms come from the Marchenko-Pastur law of F^T F (ratio 1/alpha) at z = -lambda
    if lam is None:
        # positive root of m^2 + (alpha + Delta - 1) m - Delta = 0 (the Marchenko-Pastur quadratic)
        s = delta + a - 1
        out = 0.5 * (-s + np.sqrt(s**2 + 4 * delta))
    else:
        lam = check_nonnegative(lam, "lam")
        p, c = a + lam, a - lam
        t = np.sqrt((p - 1) ** 2 + 4 * lam)
        m = 2 * a / (p + t + 1)  # overlap <w_hat, w> / dL
        with np.errstate(divide="ignore", invalid="ignore"):
            q = (4 * a * (a * (p + t - 3) + (1 + delta) * (p + t + 1))
                 / ((p + t + 1) * (p**2 - 2 * c + t**2 + 2 * t * (p + 1) + 1)))  # |w_hat|^2 / dL
        out = 1 - 2 * m + q
        if lam == 0:  # interpolation peak at alpha = 1
            out = np.where(a == 1, np.inf if delta > 0 else 0.0, out)
    return float(out) if out.ndim == 0 else out


def gamp_state_evolution(alpha, beta, rho, delta, n_iter, v0=1.0):
    r"""State evolution of GAMP-RIE: :math:`V^{t+1}=\mathrm{mmse}_{\beta,\rho}((\Delta+V^t)/\alpha)`.

    Parameters
    ----------
    alpha, beta, rho : float
        Sample ratio :math:`n/(dL)`, aspect ratio :math:`L/d` and rank ratio :math:`r/d`.
    delta : float
        Noise variance :math:`\Delta\ge0`.
    n_iter : int
        Number of iterations.
    v0 : float
        Initial variance (1 for :math:`\hat S^0=0`).

    Returns
    -------
    ndarray, shape (n_iter + 1,)
        :math:`V^0,\dots,V^{n_{\rm iter}}`, the predicted error per entry of the iterates.

    Examples
    --------
    >>> v = gamp_state_evolution(0.5, 1.0, 0.5, 0.0, 30)
    >>> round(float(v[-1]), 3)  # the Bayes-optimal MMSE 0.3515 (largest fixed point)
    0.351
    """
    alpha = check_positive(alpha, "alpha")
    beta, rho = canonical(beta, rho)
    delta = check_nonnegative(delta, "delta")
    n_iter = check_size(n_iter, "n_iter")
    v = [check_nonnegative(v0, "v0")]
    for _ in range(n_iter):
        zeta = (delta + v[-1]) / alpha  # the effective noise of the denoising step
        # below 1e-10 the iterate has converged to perfect recovery (mmse(zeta) ~ alpha_PR zeta)
        v.append(0.0 if zeta < 1e-10 else min(max(mmse_value(beta, rho, zeta), 0.0), 1.0))
    return np.array(v)


_Z_TOP = 1e4  # upper end of the free-entropy integral; the tail beyond is added in closed form


def bo_free_entropy(zeta, alpha, beta, rho, delta=0.0, n_grid=300):
    r"""Replica-symmetric free entropy of bilinear sequence regression as a function of :math:`\zeta`.

    On the stationarity line of :math:`\hat q=1/\zeta` (Chapter 2.3),

    .. math::
        f(\zeta)=\frac{\mathrm{mmse}(\zeta)}{2\zeta}-\frac12\int_\zeta^\infty
        \frac{\mathrm{mmse}(s)}{s^2}\,ds-\frac\alpha2\log\big(\Delta+\mathrm{mmse}(\zeta)\big)

    (the constant :math:`-\frac\alpha2(1+\log2\pi)` is dropped), with
    :math:`f'(\zeta)=-\mathrm{mmse}'(\zeta)\mathcal F(\zeta)/(2\zeta(\Delta+\mathrm{mmse}(\zeta)))` and
    :math:`\mathcal F(\zeta)=\alpha\zeta-\Delta-\mathrm{mmse}(\zeta)`. The integral uses Simpson's rule
    on ``n_grid`` log-spaced points from :math:`10^{-5}` (or the smallest ``zeta``) to
    :math:`10^4`, a closed-form tail and a cubic spline in :math:`\log\zeta`.

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
    n_grid = check_size(n_grid, "n_grid", minimum=20)
    z0 = check_array(zeta, "zeta")
    if np.any(z0 <= 0):
        raise ValueError("zeta must be positive")
    out = potential(np.atleast_1d(z0).ravel(), alpha, delta, _mmse_function(beta, rho), n_grid)
    return float(out[0]) if z0.ndim == 0 else out.reshape(z0.shape)


def potential(z, alpha, delta, mmse, n_grid=300):
    """f(zeta) of :func:`bo_free_entropy` for any mmse function (zeta > 0, 1-D array)."""
    # one fixed grid for every zeta >= 1e-5, so that repeated calls reuse the cached mmse values
    u = np.linspace(np.log(min(z.min(), 1e-5)), np.log(max(_Z_TOP, z.max())), n_grid)
    grid = np.exp(u)
    m_grid = np.asarray(mmse(grid), dtype=float)
    # int_zeta^inf m(s) / s^2 ds = int m(e^u) e^(-u) du: bounded as zeta -> 0 (m ~ alpha_PR s)
    upper = integrate.cumulative_simpson((m_grid / grid)[::-1], dx=u[1] - u[0], initial=0.0)[::-1]
    # beyond the top, 1 - m(s) ~ c / s with c = top (1 - m(top)): int_top^inf (1 - c / s) / s^2
    top = grid[-1]
    tail = 1 / top - (1 - m_grid[-1]) / (2 * top)
    integral = interpolate.CubicSpline(u, upper + tail)(np.log(z))
    m = np.asarray(mmse(z), dtype=float)
    return m / (2 * z) - 0.5 * integral - 0.5 * alpha * np.log(delta + m)


@dataclass(frozen=True)
class BayesOptimalResult:
    """Bayes-optimal solution (scalars, or arrays for :func:`bayes_optimal_curve`).

    Fields: ``zeta`` (effective noise, 0 at perfect recovery), ``mmse``
    (:math:`\\mathrm{MMSE}_S=\\alpha\\zeta-\\Delta`), ``test_error`` (:math:`\\alpha\\zeta`), and the
    inputs ``alpha``, ``beta``, ``rho``, ``delta``.
    """

    zeta: float
    mmse: float
    test_error: float
    alpha: float
    beta: float
    rho: float
    delta: float


def scan_grid(z_top, z_bot):
    """Descending log grid of zeta on the lattice 10^(8k/59) covering [z_bot, z_top].

    7.4 points per decade; on a fixed lattice, so that every curve of the same (beta, rho)
    reuses the cached mmse values of the others.
    """
    k = np.arange(np.ceil(np.log10(z_top) * 59 / 8), np.floor(np.log10(z_bot) * 59 / 8) - 1, -1)
    return 10.0 ** (8 * k / 59)


def solve_zeta(alpha, delta, mmse_fn, a_pr, grid, m_grid, tol=1e-12, max_iter=200):
    """Largest root of alpha zeta = delta + mmse(zeta): downward scan, then Brent."""
    if delta == 0 and alpha >= a_pr:
        return 0.0  # perfect recovery: mmse(zeta) <= alpha_PR zeta leaves no positive root
    # F >= 0 above z_hi = (1 + Delta) / alpha since mmse <= 1: the grid starts there or above.
    # The first negative value from above brackets the largest root (the one state evolution
    # reaches from V^0 = 1); a root finder started elsewhere could land on a smaller one
    neg = np.flatnonzero(alpha * grid - delta - m_grid < 0)
    if neg.size == 0:
        return 0.0
    j = neg[0]
    if j == 0:  # F(z_hi) < 0 would mean mmse > 1: a failed quadrature
        raise ConvergenceError("bayes_optimal: F < 0 at the top of the scan")
    try:
        return optimize.brentq(lambda z: alpha * z - delta - mmse_fn(z), grid[j], grid[j - 1],
                               xtol=tol * grid[j], rtol=1e-12, maxiter=max_iter)
    except RuntimeError as exc:
        raise ConvergenceError(f"bayes_optimal: Brent did not converge ({exc})") from exc


def bayes_optimal(alpha, beta, rho, delta=0.0, tol=1e-12, max_iter=200):
    r"""Bayes-optimal effective noise, :math:`\mathrm{MMSE}_S` and test error.

    Solves :math:`\alpha\zeta=\Delta+\mathrm{mmse}_{\beta,\rho}(\zeta)` for its **largest** root: scan
    the log grid :math:`10^{8k/59}` downward from :math:`\zeta_{hi}=(1+\Delta)/\alpha` (above which
    :math:`\mathcal F>0`) over eight decades, stop at the first sign change, polish with Brent. For :math:`\Delta=0` and :math:`\alpha\ge\alpha_{PR}` it
    returns :math:`\zeta=0` (perfect recovery).

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
        (:math:`\Delta+\mathrm{MMSE}_S`) and the inputs.

    Raises
    ------
    seqrmt.ConvergenceError
        If Brent's method does not converge in ``max_iter`` iterations.

    Examples
    --------
    >>> res = bayes_optimal(0.5, 1.0, 0.5)
    >>> round(res.zeta, 4), round(res.mmse, 4), round(res.test_error, 4)
    (0.7029, 0.3515, 0.3515)
    >>> bayes_optimal(0.4, 1.0, 0.2).mmse      # above alpha_PR = 0.36
    0.0
    """
    alpha = check_positive(alpha, "alpha")
    beta_c, rho_c = _canon(beta, rho)  # the transposed problem has the same errors
    delta = check_nonnegative(delta, "delta")
    tol = check_positive(tol, "tol")
    max_iter = check_size(max_iter, "max_iter")
    mmse_fn, a_pr = _mmse_function(beta_c, rho_c), alpha_pr(beta_c, rho_c)
    zeta = 0.0  # perfect recovery when delta = 0 and alpha >= alpha_PR
    if delta > 0 or alpha < a_pr:
        grid = scan_grid((1 + delta) / alpha, 1e-8 * (1 + delta) / alpha)
        zeta = solve_zeta(alpha, delta, mmse_fn, a_pr, grid, mmse_fn(grid), tol, max_iter)
    # at the root alpha zeta = Delta + mmse(zeta): MMSE_S = mmse(zeta) = alpha zeta - Delta
    mmse = max(alpha * zeta - delta, 0.0)
    return BayesOptimalResult(zeta=zeta, mmse=mmse, test_error=delta + mmse, alpha=alpha,
                              beta=float(beta), rho=float(rho), delta=delta)


def bayes_optimal_curve(alphas, beta, rho, delta=0.0, tol=1e-10, max_iter=200):
    r"""Vectorised :func:`bayes_optimal` over many :math:`\alpha` (shared, cached scan).

    The grid of :func:`bayes_optimal` (7.4 points per decade, on a fixed lattice, so that curves
    of the same :math:`(\beta,\rho)` share the cached values) covers every
    :math:`[10^{-8}\zeta_{hi}(\alpha),\zeta_{hi}(\alpha)]` and is evaluated once; each root is then
    polished with Brent. Results agree with :func:`bayes_optimal` to ``tol``.

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
    mmse_fn, a_pr = _mmse_function(beta_c, rho_c), alpha_pr(beta_c, rho_c)
    # one grid from the largest z_hi down to 1e-8 times the smallest: it brackets every root
    grid = scan_grid((1 + delta) / alphas.min(), 1e-8 * (1 + delta) / alphas.max())
    m_grid = mmse_fn(grid) if (delta > 0 or np.any(alphas < a_pr)) else None
    zetas = np.array([solve_zeta(a, delta, mmse_fn, a_pr, grid, m_grid, tol, max_iter)
                      for a in alphas])
    mmse = np.maximum(alphas * zetas - delta, 0.0)
    return BayesOptimalResult(zeta=zetas, mmse=mmse, test_error=delta + mmse, alpha=alphas,
                              beta=float(beta), rho=float(rho), delta=delta)


def _low_rank_q(q_hat, beta):
    """q = g_a g_b: squared overlaps of the outlier singular vectors (rectangular BBP)."""
    qh = np.asarray(q_hat, dtype=float)
    # with t = (1 + beta) q_hat: theta^2 = t / beta and c = 1 / beta in Benaych-Georges-Nadakuditi
    num = (1 + beta) ** 2 * qh**2 - beta
    ga = num / ((1 + beta) * qh * ((1 + beta) * qh + 1))
    gb = num / ((1 + beta) * qh * ((1 + beta) * qh + beta))
    return np.where(num > 0, ga * gb, 0.0)  # below the BBP threshold no outlier: q = 0


def low_rank_bayes_optimal(abar, beta, delta=0.0, tol=1e-12, max_iter=200):
    r"""Bayes-optimal error in the low-rank limit :math:`\rho\to0` at fixed :math:`\bar\alpha`.

    Largest fixed point of :math:`\hat q=\bar\alpha/(\Delta+1-q)`, :math:`q=g_a(\hat q)g_b(\hat q)` with

    .. math::
        g_a=\frac{(1+\beta)^2\hat q^2-\beta}{(1+\beta)\hat q((1+\beta)\hat q+1)},\qquad
        g_b=\frac{(1+\beta)^2\hat q^2-\beta}{(1+\beta)\hat q((1+\beta)\hat q+\beta)}

    (:math:`q=0` when the numerator is negative): downward scan in :math:`\hat q`, then Brent.
    Weak recovery (:math:`q>0`) starts at :math:`\bar\alpha_w=(1+\Delta)\sqrt\beta/(1+\beta)`.

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
    tuple of float
        ``(q, mmse)`` with :math:`\mathrm{MMSE}_S=1-q`; raises :class:`~seqrmt.ConvergenceError`
        if the root is not polished in ``max_iter`` Brent iterations.

    Examples
    --------
    >>> q, mmse = low_rank_bayes_optimal(0.75, 1.0)
    >>> round(mmse, 6)                                    # 1 - (2 * 0.75 - 1)^2
    0.75
    """
    abar = check_positive(abar, "abar")
    beta = check_positive(beta, "beta")
    delta = check_nonnegative(delta, "delta")
    tol = check_positive(tol, "tol")
    max_iter = check_size(max_iter, "max_iter")
    if delta == 0 and abar >= 1:
        return 1.0, 0.0  # as many samples as factor entries: perfect recovery
    # q_hat = abar / (Delta + 1 - q) runs from abar / (1 + Delta) (q = 0) to abar / Delta (q = 1)
    lo, hi = abar / (1 + delta), (abar / delta if delta > 0 else abar * 1e12)
    grid = np.geomspace(hi, lo, 400)

    def phi(qh):  # zero at a fixed point: q_hat (Delta + 1 - q(q_hat)) = abar
        return qh * (delta + 1 - _low_rank_q(qh, beta)) - abar

    neg = np.flatnonzero(phi(grid) < 0)
    q_hat = lo  # no sign change: q = 0 is the only fixed point
    if neg.size:
        j = neg[0]
        try:
            q_hat = optimize.brentq(lambda t: float(phi(t)), grid[j], grid[j - 1],
                                    xtol=tol * grid[j], maxiter=max_iter)
        except RuntimeError as exc:
            raise ConvergenceError(f"low_rank_bayes_optimal: Brent failed ({exc})") from exc
    q = float(_low_rank_q(q_hat, beta))
    return q, 1 - q
