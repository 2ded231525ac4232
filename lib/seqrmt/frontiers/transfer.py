r"""Fine-tuning as regularisation towards a pretrained model: L2-SP ridge transfer and alpha-LoRA.

**L2-SP transfer** (isotropic re-derivation of the setting of Hedges 2025). Source
:math:`y_s=X_sw_0+e_s` (:math:`n_s` samples, noise variance :math:`\sigma_s^2`,
:math:`\gamma_s=p/n_s`), ridge source fit :math:`\hat w_s(\tau)`; target :math:`y=Xw_1+e`
(:math:`n_t` samples, :math:`\sigma_t^2`, :math:`\gamma_t=p/n_t`), fitted by ridge pulled towards
:math:`\hat w_s`: :math:`\hat w_t=\arg\min\frac1{n_t}\|y-Xw\|^2+\lambda\|w-\hat w_s\|^2`.
Features :math:`x\sim\mathcal N(0,I_p)`; risk :math:`\|\hat w_t-w_1\|^2`; alignment
:math:`\rho=\langle w_0,w_1\rangle/\|w_0\|^2`; :math:`\mathrm{SNR}=\|w_0\|^2/\sigma_s^2`.
With :math:`m(\tau)` the Marchenko-Pastur Stieltjes transform at :math:`-\tau` (ratio
:math:`\gamma_s`) and :math:`m_2=-m'`, put :math:`a=1-\tau m`, :math:`b=1-2\tau m+\tau^2m_2`,
:math:`v=\gamma_s(m-\tau m_2)`.

**alpha-LoRA** (El Firdoussi, Chayti, Seddik & Jaggi 2025). Gaussian-mixture source
:math:`x=y\mu+z` (:math:`N` samples) and target :math:`x=y\mu_\beta+z` (:math:`n` samples), a ridge
source classifier :math:`\tilde w`, and the fine-tuned :math:`w=\alpha\tilde w+a`, which is L2-SP
ridge towards :math:`\alpha\tilde w`. The moments follow the authors' public code
(``elfirdoussilab1/alpha-LoRA``, ``rmt_results.py``) except the :math:`\alpha^2` coefficient
:math:`T_3`, re-derived here (:func:`alpha_lora_t3`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from .. import plotting, rmt
from .._validation import (
    check_allocation,
    check_nonnegative,
    check_array,
    check_choice,
    check_positive,
    check_positive_int,
    check_size,
)
from ..ensemble import progress_bar, spawn_generators
from .._validation import ConvergenceError, as_generator
from ..stats import mean_se

__all__ = [
    "l2sp_coefficients",
    "source_distance",
    "target_risk",
    "transfer_objective",
    "critical_alignment",
    "source_optimal_penalty",
    "transfer_optimal_penalty",
    "l2sp_ridge",
    "simulate_l2sp",
    "l2sp_experiment",
    "l2sp_theory",
    "l2sp_table",
    "plot_transfer_region",
    "plot_l2sp_learning_curves",
    "alpha_lora_moments",
    "alpha_lora_source_norm_sq",
    "alpha_lora_t3",
    "alpha_lora_accuracy",
    "alpha_lora_optimal_alpha",
    "simulate_alpha_lora",
    "alpha_lora_experiment",
    "alpha_lora_report",
    "plot_alpha_lora",
]


def _real(x, name):
    x = check_array(x, name)
    return float(x) if x.ndim == 0 else x


def l2sp_coefficients(tau, gamma_s):
    r"""The source coefficients :math:`a=1-\tau m`, :math:`b=1-2\tau m+\tau^2m_2`, :math:`v=\gamma_s(m-\tau m_2)`.

    For the ridge source fit :math:`\hat w_s(\tau)` on isotropic data,
    :math:`\langle\hat w_s,u\rangle\to a\langle w_0,u\rangle`,
    :math:`\|\hat w_s\|^2\to b\|w_0\|^2+\sigma_s^2v`.

    Parameters
    ----------
    tau : float or array_like
        Source ridge :math:`\tau>0`.
    gamma_s : float
        :math:`p/n_s>0`.

    Returns
    -------
    a, b, v : float or numpy.ndarray

    Examples
    --------
    >>> a, b, v = l2sp_coefficients(0.25, 0.5)
    >>> bool(abs(a - b - v / 2) < 1e-12)   # source-optimal tau = gamma_s / SNR with SNR = 2
    True
    """
    tau = check_array(tau, "tau", positive=True)
    gamma_s = check_positive(gamma_s, "gamma_s")
    m, m2 = rmt.mp_resolvent_moments(tau, gamma_s)
    a = 1.0 - tau * m
    b = 1.0 - 2.0 * tau * m + tau**2 * m2
    v = gamma_s * (m - tau * m2)
    if np.ndim(a) == 0:
        return float(a), float(b), float(v)
    return a, b, v


def source_distance(tau, gamma_s, w0_sq, w1_sq, rho, sigma_s2):
    r"""Limit of :math:`D^2=\|\hat w_s-w_1\|^2`: :math:`\|w_1\|^2+\|w_0\|^2(b-2\rho a)+\sigma_s^2v`.

    Parameters
    ----------
    tau : float or array_like
        Source ridge :math:`\tau>0`.
    gamma_s : float
        :math:`p/n_s>0`.
    w0_sq, w1_sq : float
        :math:`\|w_0\|^2>0`, :math:`\|w_1\|^2\ge0`.
    rho : float
        Alignment :math:`\langle w_0,w_1\rangle/\|w_0\|^2`.
    sigma_s2 : float
        Source noise variance :math:`\ge0`.

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    >>> round(source_distance(0.25, 0.5, 1.0, 1.0, 0.5, 0.5), 6)  # rho = 1/2 at tau_S*: D^2 = |w1|^2
    1.0
    """
    gamma_s = check_positive(gamma_s, "gamma_s")
    w0_sq = check_positive(w0_sq, "w0_sq")
    w1_sq = check_nonnegative(w1_sq, "w1_sq")
    rho = float(check_array(rho, "rho", ndim=0))
    sigma_s2 = check_nonnegative(sigma_s2, "sigma_s2")
    a, b, v = l2sp_coefficients(check_array(tau, "tau", positive=True), gamma_s)
    return w1_sq + w0_sq * (b - 2 * rho * a) + sigma_s2 * v


def target_risk(lam, gamma_t, sigma_t2, distance_sq):
    r"""Limit of the L2-SP target risk :math:`\|\hat w_t-w_1\|^2=\lambda^2m_2D^2+\sigma_t^2\gamma_t(m-\lambda m_2)`.

    :math:`m,m_2` at :math:`(\lambda,\gamma_t)` (:func:`seqrmt.rmt.mp_resolvent_moments`); the source enters only
    through :math:`D^2=\|\hat w_s-w_1\|^2` (no transfer: :math:`D^2=\|w_1\|^2`).

    Parameters
    ----------
    lam : float or array_like
        Target ridge :math:`\lambda>0`.
    gamma_t : float or array_like
        :math:`p/n_t>0`.
    sigma_t2 : float
        Target noise variance :math:`\ge0`.
    distance_sq : float or array_like
        :math:`D^2\ge0`.

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    >>> round(target_risk(0.5, 2.0, 0.25, 1.0), 4)
    0.6404
    """
    sigma_t2 = check_nonnegative(sigma_t2, "sigma_t2")
    distance_sq = check_array(distance_sq, "distance_sq")
    if np.any(distance_sq < 0):
        raise ValueError("distance_sq must be non-negative")
    lam = check_array(lam, "lam", positive=True)
    gamma_t = check_array(gamma_t, "gamma_t", positive=True)
    m, m2 = rmt.mp_resolvent_moments(lam, gamma_t)
    out = lam**2 * m2 * distance_sq + sigma_t2 * np.asarray(gamma_t) * (m - lam * m2)
    return float(out) if np.ndim(out) == 0 else out


def transfer_objective(tau, rho, gamma_s, snr):
    r""":math:`T(\tau)=b-2\rho a+v/\mathrm{SNR}=(D^2-\|w_1\|^2)/\|w_0\|^2`; transfer helps iff :math:`T<0`.

    Parameters
    ----------
    tau : float or array_like
        Source ridge :math:`\tau>0`.
    rho : float
        Alignment.
    gamma_s : float
        :math:`p/n_s>0`.
    snr : float
        :math:`\|w_0\|^2/\sigma_s^2>0`.

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    >>> round(transfer_objective(0.25, 0.5, 0.5, 2.0), 12)
    0.0
    """
    rho = float(check_array(rho, "rho", ndim=0))
    gamma_s = check_positive(gamma_s, "gamma_s")
    snr = check_positive(snr, "snr")
    a, b, v = l2sp_coefficients(check_array(tau, "tau", positive=True), gamma_s)
    return b - 2 * rho * a + v / snr


def critical_alignment(tau, gamma_s, snr):
    r"""Alignment above which transfer helps at source ridge :math:`\tau`: :math:`\rho_c=(b+v/\mathrm{SNR})/(2a)`.

    At :math:`\tau=\tau_S^*=\gamma_s/\mathrm{SNR}` it equals :math:`1/2` exactly.

    Parameters
    ----------
    tau : float or array_like
        Source ridge :math:`\tau>0`.
    gamma_s : float
        :math:`p/n_s>0`.
    snr : float
        :math:`\|w_0\|^2/\sigma_s^2>0`.

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    >>> round(critical_alignment(source_optimal_penalty(0.3, 5.0), 0.3, 5.0), 10)
    0.5
    """
    gamma_s = check_positive(gamma_s, "gamma_s")
    snr = check_positive(snr, "snr")
    a, b, v = l2sp_coefficients(check_array(tau, "tau", positive=True), gamma_s)
    return (b + v / snr) / (2 * a)


def source_optimal_penalty(gamma_s, snr):
    r"""Source-optimal ridge :math:`\tau_S^*=\gamma_s/\mathrm{SNR}`, minimiser of the source risk :math:`\|\hat w_s-w_0\|^2`.

    Parameters
    ----------
    gamma_s : float
        :math:`p/n_s>0`.
    snr : float
        :math:`\|w_0\|^2/\sigma_s^2>0`.

    Returns
    -------
    float

    Examples
    --------
    >>> source_optimal_penalty(0.5, 2.0)
    0.25
    """
    return check_positive(gamma_s, "gamma_s") / check_positive(snr, "snr")


def transfer_optimal_penalty(rho, gamma_s, snr, tol=1e-10, max_iter=500):
    r"""Transfer-optimal source ridge :math:`\tau_0^*=\arg\min_\tau\,b-2\rho a+v/\mathrm{SNR}`.

    :math:`T'(\tau)=(\tau-\tau_S^*)\,c(\tau)+2(1-\rho)a'(\tau)` with :math:`c>0` and :math:`a'<0`,
    so for :math:`\rho<1` the minimiser lies above :math:`\tau_S^*` and for :math:`\rho>1` below it;
    the search runs over :math:`\log\tau` on that side (bounded Brent). For :math:`\rho\le0`,
    :math:`T>0` decreases to 0 and the infimum is at :math:`\tau=\infty` (returned as ``inf``).

    Parameters
    ----------
    rho : float
        Alignment.
    gamma_s : float
        :math:`p/n_s>0`.
    snr : float
        :math:`\|w_0\|^2/\sigma_s^2>0`.
    tol : float
        Tolerance on :math:`\log\tau`.
    max_iter : int
        Iteration cap.

    Returns
    -------
    float

    Raises
    ------
    ConvergenceError
        If the minimiser is not found inside the search interval.

    Examples
    --------
    >>> round(transfer_optimal_penalty(0.5, 0.5, 2.0), 4)
    1.475
    """
    rho = float(check_array(rho, "rho", ndim=0))
    gamma_s = check_positive(gamma_s, "gamma_s")
    snr = check_positive(snr, "snr")
    tol = check_positive(tol, "tol")
    max_iter = check_positive_int(max_iter, "max_iter")
    ts = gamma_s / snr
    if rho == 1.0:
        return ts
    if rho <= 0.0:
        return np.inf
    lo, hi = (np.log(ts), np.log(ts) + 40.0) if rho < 1 else (np.log(ts) - 40.0, np.log(ts))

    def f(u):
        return transfer_objective(np.exp(u), rho, gamma_s, snr)

    res = optimize.minimize_scalar(
        f, bounds=(lo, hi), method="bounded", options={"xatol": tol, "maxiter": max_iter}
    )
    if not res.success or min(res.x - lo, hi - res.x) < 1e-3:
        raise ConvergenceError("transfer_optimal_penalty: no interior minimum found")
    return float(np.exp(res.x))


def l2sp_ridge(X, y, lam, w_prior=None):
    r"""Ridge regression pulled towards a prior vector: :math:`\arg\min_w\frac1n\|y-Xw\|^2+\lambda\|w-w_{\rm prior}\|^2`.

    The solution is :math:`w_{\rm prior}+(X^\top X/n+\lambda I)^{-1}X^\top(y-Xw_{\rm prior})/n`;
    ``w_prior=None`` is plain ridge.

    Parameters
    ----------
    X : array_like, shape (n, p)
        Design matrix (rows are samples).
    y : array_like, shape (n,)
        Responses.
    lam : float
        Ridge :math:`\lambda>0`.
    w_prior : array_like, shape (p,), optional
        The vector the fit is pulled towards.

    Returns
    -------
    numpy.ndarray, shape (p,)

    Examples
    --------
    >>> X = np.eye(3); y = np.ones(3)
    >>> l2sp_ridge(X, y, 1 / 3, w_prior=np.zeros(3))   # (1/3 + 1/3)^-1 * 1/3
    array([0.5, 0.5, 0.5])
    """
    X = check_array(X, "X", ndim=2)
    n, p = X.shape
    y = check_array(y, "y", shape=(n,))
    lam = check_positive(lam, "lam")
    w0 = np.zeros(p) if w_prior is None else check_array(w_prior, "w_prior", shape=(p,))
    r = y - X @ w0
    if p <= n:
        A = X.T @ X / n
        A[np.diag_indices(p)] += lam
        return w0 + np.linalg.solve(A, X.T @ r / n)
    K = X @ X.T / n
    K[np.diag_indices(n)] += lam
    return w0 + X.T @ np.linalg.solve(K, r / n)


def simulate_l2sp(p, n_s, sigma_s2, taus, targets, rho, rng, w0_norm=1.0):
    r"""One realisation of L2-SP transfer: :math:`D^2` and target risks for several source ridges.

    Draws :math:`w_0` uniformly on the sphere of radius ``w0_norm`` and
    :math:`w_1=\rho w_0+c\,u` with :math:`u\perp w_0` and :math:`c` chosen so that
    :math:`\|w_1\|=\|w_0\|` when :math:`|\rho|\le1` (for :math:`|\rho|>1`, :math:`c=0`), one source
    sample and one sample per target, and returns the exact risks :math:`\|\hat w-w_1\|^2`.

    Parameters
    ----------
    p, n_s : int
        Dimension and source sample size.
    sigma_s2 : float
        Source noise variance.
    taus : array_like
        Source ridges :math:`\tau>0`.
    targets : sequence of (n_t, sigma_t2, lam)
        Target settings.
    rho : float
        Alignment.
    rng : numpy.random.Generator or int or None
        Random generator.
    w0_norm : float
        :math:`\|w_0\|`.

    Returns
    -------
    distance_sq : numpy.ndarray, shape (len(taus),)
        :math:`\|\hat w_s(\tau)-w_1\|^2`.
    risk : numpy.ndarray, shape (len(targets), len(taus) + 1)
        Target risks; the last column is plain ridge (no transfer).

    Examples
    --------
    >>> D2, R = simulate_l2sp(20, 40, 0.5, [0.25], [(40, 0.25, 0.5)], 0.5, 0)
    >>> D2.shape, R.shape
    ((1,), (1, 2))
    """
    p = check_size(p, "p")
    n_s = check_size(n_s, "n_s")
    check_allocation((n_s, p), "n_s")
    sigma_s2 = check_nonnegative(sigma_s2, "sigma_s2")
    taus = check_array(taus, "taus", ndim=1, positive=True)
    rho = float(check_array(rho, "rho", ndim=0))
    w0_norm = check_positive(w0_norm, "w0_norm")
    settings = []
    for t in targets:
        if len(t) != 3:
            raise ValueError("targets must hold (n_t, sigma_t2, lam) triples")
        n_t = check_size(t[0], "targets")
        check_allocation((n_t, p), "targets")
        s2 = float(check_array(t[1], "targets", ndim=0))
        if s2 < 0:
            raise ValueError("targets: sigma_t2 must be non-negative")
        settings.append((n_t, s2, check_positive(t[2], "targets")))
    if not settings:
        raise ValueError("targets must not be empty")
    rng = as_generator(rng)
    g = rng.standard_normal((2, p))
    w0 = g[0] / np.linalg.norm(g[0])
    u = g[1] - (g[1] @ w0) * w0
    u /= np.linalg.norm(u)
    w1 = w0_norm * (rho * w0 + np.sqrt(max(1.0 - rho**2, 0.0)) * u)
    w0 = w0_norm * w0
    Xs = rng.standard_normal((n_s, p))
    ys = Xs @ w0 + np.sqrt(sigma_s2) * rng.standard_normal(n_s)
    sources = [l2sp_ridge(Xs, ys, tau) for tau in taus]
    distance_sq = np.array([np.sum((ws - w1) ** 2) for ws in sources])
    risk = np.empty((len(settings), len(taus) + 1))
    for i, (n_t, s2, lam) in enumerate(settings):
        X = rng.standard_normal((n_t, p))
        y = X @ w1 + np.sqrt(s2) * rng.standard_normal(n_t)
        for j, ws in enumerate(sources + [np.zeros(p)]):
            risk[i, j] = np.sum((l2sp_ridge(X, y, lam, ws) - w1) ** 2)
    return distance_sq, risk


def l2sp_experiment(p, n_s, sigma_s2, taus, targets, rho, n_seeds, rng, w0_norm=1.0):
    r"""Independent realisations of :func:`simulate_l2sp`, stacked.

    Parameters
    ----------
    p, n_s, sigma_s2, taus, targets, rho, w0_norm
        As in :func:`simulate_l2sp`.
    n_seeds : int
        Number of independent realisations (at least 2, for standard errors).
    rng : numpy.random.Generator or int or None
        Random generator, used by the realisations in turn.

    Returns
    -------
    distance_sq : numpy.ndarray, shape (n_seeds, len(taus))
        :math:`\|\hat w_s(\tau)-w_1\|^2` per realisation.
    risk : numpy.ndarray, shape (n_seeds, len(targets), len(taus) + 1)
        Target risks per realisation; the last column is plain ridge (no transfer).

    Examples
    --------
    >>> D2, R = l2sp_experiment(20, 40, 0.5, [0.25], [(40, 0.25, 0.5)], 0.5, 3, 0)
    >>> D2.shape, R.shape
    ((3, 1), (3, 1, 2))
    """
    n_seeds = check_size(n_seeds, "n_seeds", minimum=2)
    runs = [simulate_l2sp(p, n_s, sigma_s2, taus, targets, rho, g, w0_norm)
            for g in progress_bar(spawn_generators(as_generator(rng), n_seeds), desc="seeds")]
    return np.array([r[0] for r in runs]), np.array([r[1] for r in runs])


def _target_triples(targets):
    out = []
    for t in targets:
        if len(t) != 3:
            raise ValueError("targets must hold (n_t, sigma_t2, lam) triples")
        out.append((check_size(t[0], "targets"), check_nonnegative(t[1], "targets"),
                    check_positive(t[2], "targets")))
    if not out:
        raise ValueError("targets must not be empty")
    return out


def l2sp_theory(p, n_s, sigma_s2, taus, targets, rho, w0_norm=1.0):
    r"""Deterministic equivalents of :math:`D^2` and of the target risks of :func:`simulate_l2sp`.

    :math:`D^2(\tau)` is :func:`source_distance` and the risk :func:`target_risk` at
    :math:`\gamma_t=p/n_t`; the last entry is plain ridge, i.e. a source :math:`\hat w_s=0` at
    distance :math:`\|w_1\|^2=\max(1,\rho^2)\|w_0\|^2` (the :math:`w_1` that
    :func:`simulate_l2sp` draws).

    Parameters
    ----------
    p, n_s, sigma_s2, taus, targets, rho, w0_norm
        As in :func:`simulate_l2sp`.

    Returns
    -------
    distance_sq : numpy.ndarray, shape (len(taus) + 1,)
        :math:`D^2` per source ridge, then :math:`\|w_1\|^2`.
    risk : numpy.ndarray, shape (len(targets), len(taus) + 1)
        Target risk per target and source (last column: no transfer).

    Examples
    --------
    >>> D2, R = l2sp_theory(200, 400, 0.5, [0.25], [(100, 0.25, 0.5)], 0.5)
    >>> round(float(D2[0]), 6), float(D2[1])  # at tau_S* = gamma_s / SNR, D^2 = |w1|^2
    (1.0, 1.0)
    """
    p = check_size(p, "p")
    n_s = check_size(n_s, "n_s")
    sigma_s2 = check_nonnegative(sigma_s2, "sigma_s2")
    taus = check_array(taus, "taus", ndim=1, positive=True)
    rho = float(check_array(rho, "rho", ndim=0))
    w0_sq = check_positive(w0_norm, "w0_norm") ** 2
    w1_sq = max(1.0, rho**2) * w0_sq
    d2 = np.r_[source_distance(taus, p / n_s, w0_sq, w1_sq, rho, sigma_s2), w1_sq]
    risk = np.array([target_risk(lam, p / n_t, s2, d2) for n_t, s2, lam in
                     _target_triples(targets)])
    return d2, risk


def l2sp_table(taus, targets, distance_sq, risk, distance_sq_theory, risk_theory):
    r"""Text table of theory against Monte Carlo (mean :math:`\pm` standard error) for L2-SP.

    One block per source ridge (then "no transfer"): :math:`D^2` and the risk of each target,
    each as ``theory | mean ± se``; a last line gives the largest :math:`|{\rm MC}-{\rm theory}|`
    in standard errors.

    Parameters
    ----------
    taus : array_like, shape (k,)
        Source ridges.
    targets : sequence of (n_t, sigma_t2, lam)
        Target settings (``n_t`` labels the rows).
    distance_sq : array_like, shape (n_seeds, k)
        Monte Carlo :math:`D^2` (:func:`l2sp_experiment`).
    risk : array_like, shape (n_seeds, len(targets), k + 1)
        Monte Carlo risks (:func:`l2sp_experiment`).
    distance_sq_theory : array_like, shape (k + 1,)
        From :func:`l2sp_theory`.
    risk_theory : array_like, shape (len(targets), k + 1)
        From :func:`l2sp_theory`.

    Returns
    -------
    str

    Examples
    --------
    >>> D2 = np.array([[1.0], [1.2]])
    >>> R = np.array([[[0.5, 0.6]], [[0.7, 0.6]]])
    >>> print(l2sp_table([0.25], [(100, 0.25, 0.5)], D2, R, [1.0, 1.0], [[0.6, 0.6]]))
    tau = 0.250  D^2 1.000 | 1.100 ± 0.100
        risk, n_t = 100: 0.600 | 0.600 ± 0.100
    no transfer  D^2 1 (= |w1|^2)
        risk, n_t = 100: 0.600 | 0.600 ± 0.000
    largest |MC - theory|: 1.0 se
    """
    taus = check_array(taus, "taus", ndim=1)
    k, targets = taus.size, _target_triples(targets)
    D2 = check_array(distance_sq, "distance_sq", ndim=2)
    if D2.shape[1] != k or D2.shape[0] < 2:
        raise ValueError("distance_sq must have shape (n_seeds >= 2, len(taus))")
    risk = check_array(risk, "risk", shape=(D2.shape[0], len(targets), k + 1))
    d2_th = check_array(distance_sq_theory, "distance_sq_theory", shape=(k + 1,))
    r_th = check_array(risk_theory, "risk_theory", shape=(len(targets), k + 1))
    (dm, ds), (rm, rs) = mean_se(D2), mean_se(risk)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.r_[((dm - d2_th[:k]) / ds), ((rm - r_th) / rs).ravel()]
    lines = []
    for j in range(k + 1):
        if j < k:
            lines.append(f"tau = {taus[j]:.3f}  D^2 {d2_th[j]:.3f} | {dm[j]:.3f} ± {ds[j]:.3f}")
        else:
            lines.append(f"no transfer  D^2 {d2_th[k]:g} (= |w1|^2)")
        for i, (n_t, _, _) in enumerate(targets):
            lines.append(f"    risk, n_t = {n_t}: {r_th[i, j]:.3f} | "
                         f"{rm[i, j]:.3f} ± {rs[i, j]:.3f}")
    lines.append(f"largest |MC - theory|: {np.abs(np.nan_to_num(z)).max():.1f} se")
    return "\n".join(lines)


def plot_transfer_region(ax, gamma_s, snr, tau_range=(0.01, 100.0), rho_max=2.0):
    r"""Draw where L2-SP transfer helps in the plane of source ridge and alignment (theory).

    Shades :math:`\rho>\rho_c(\tau)` (:func:`critical_alignment`), draws the boundary, the
    transfer-optimal ridge :math:`\tau_0^*(\rho)` (:func:`transfer_optimal_penalty`, dashed), the
    source-optimal ridge :math:`\tau_S^*` (vertical line) and the alignment
    :math:`\rho_c(\tau_S^*)` (dotted horizontal line).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    gamma_s, snr : float
        :math:`p/n_s` and :math:`\|w_0\|^2/\sigma_s^2`.
    tau_range : (float, float)
        Range of the (log-scaled) ridge axis.
    rho_max : float
        Top of the alignment axis.

    Returns
    -------
    matplotlib.axes.Axes
    """
    from .._validation import check_axes  # noqa: PLC0415
    check_axes(ax)
    gamma_s = check_positive(gamma_s, "gamma_s")
    snr = check_positive(snr, "snr")
    lo, hi = check_array(tau_range, "tau_range", shape=(2,), positive=True)
    if not lo < hi:
        raise ValueError("tau_range must be increasing")
    rho_max = check_positive(rho_max, "rho_max")
    tau_grid = np.geomspace(lo, hi, 200)
    rho_c = critical_alignment(tau_grid, gamma_s, snr)
    rhos = np.linspace(0.025, 0.8, 60) * rho_max
    tau_opt = [transfer_optimal_penalty(r, gamma_s, snr) for r in rhos]
    tau_s = source_optimal_penalty(gamma_s, snr)
    ax.fill_between(tau_grid, rho_c, rho_max, color="C2", alpha=0.15,
                    label="transfer helps")
    ax.plot(tau_grid, rho_c, "C2", label=r"$\rho_c(\tau)$")
    ax.plot(tau_opt, rhos, "C3--", label=r"$\tau_0^*(\rho)$")
    ax.axvline(tau_s, color="k", lw=1, label=r"$\tau_S^*$")
    ax.axhline(critical_alignment(tau_s, gamma_s, snr), color="k", lw=0.8, ls=":")
    ax.set(xscale="log", xlim=(lo, hi), ylim=(0, rho_max),
           xlabel=r"source ridge $\tau$", ylabel=r"alignment $\rho$")
    ax.legend(fontsize=8, loc="upper left")
    return ax


def plot_l2sp_learning_curves(ax, p, n_s, sigma_s2, tau, n_ts, sigma_t2, lam, risks):
    r"""Draw target risk against the target sample size: theory lines and Monte Carlo points.

    One curve per alignment (transfer from the source ridge ``tau``) and one for plain ridge (no
    transfer, the Monte Carlo of all alignments pooled); error bars are two standard errors.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    p, n_s, sigma_s2 : int, int, float
        Source setting, as in :func:`simulate_l2sp`.
    tau : float
        Source ridge.
    n_ts : array_like of int
        Target sample sizes of the simulation.
    sigma_t2, lam : float
        Target noise variance and L2-SP penalty.
    risks : dict
        ``rho -> risk`` with ``risk`` of shape (n_seeds, len(n_ts), 2), as returned by
        :func:`l2sp_experiment` for ``taus=[tau]`` and one target per ``n_t``.

    Returns
    -------
    matplotlib.axes.Axes
    """
    from .._validation import check_axes  # noqa: PLC0415
    check_axes(ax)
    n_ts = check_array(n_ts, "n_ts", ndim=1, positive=True)
    if not isinstance(risks, dict) or not risks:
        raise ValueError("risks must be a non-empty dict rho -> risk array")
    sims = {float(check_array(r, "risks", ndim=0)): check_array(v, "risks", ndim=3)
            for r, v in risks.items()}
    if any(v.shape[1:] != (n_ts.size, 2) or v.shape[0] < 2 for v in sims.values()):
        raise ValueError("risks: each array must have shape (n_seeds >= 2, len(n_ts), 2)")
    if any(abs(r) > 1 for r in sims):
        raise ValueError("risks: alignments must lie in [-1, 1] (then |w1| = |w0| = 1)")
    p, n_s = check_size(p, "p"), check_size(n_s, "n_s")
    sigma_s2, sigma_t2 = check_nonnegative(sigma_s2, "sigma_s2"), check_nonnegative(sigma_t2, "sigma_t2")
    tau, lam = check_positive(tau, "tau"), check_positive(lam, "lam")
    n_grid = np.geomspace(0.8 * n_ts.min(), 1.25 * n_ts.max(), 60)
    for k, (rho, v) in enumerate(sims.items()):
        d2 = source_distance(tau, p / n_s, 1.0, 1.0, rho, sigma_s2)
        m, s = mean_se(v[:, :, 0])
        plotting.curve_vs_mc(ax, n_grid, target_risk(lam, p / n_grid, sigma_t2, d2),
                             n_ts, m, 2 * s, theory_label=rf"transfer, $\rho={rho:g}$",
                             mc_label=None, color=f"C{k}")
    m, s = mean_se(np.concatenate([v[:, :, 1] for v in sims.values()]))
    plotting.curve_vs_mc(ax, n_grid, target_risk(lam, p / n_grid, sigma_t2, 1.0), n_ts, m,
                         2 * s, theory_label="no transfer", mc_label=None, color="k")
    ax.set(xscale="log", xlabel="target samples $n_t$", ylabel="target risk")
    ax.legend(fontsize=8)
    return ax


# ---------------------------------------------------------------------------
# alpha-LoRA
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class AlphaLoRAMoments:
    r"""Moments of the fine-tuned classifier's score :math:`g=w^\top x` (see :func:`alpha_lora_moments`).

    The mean is :math:`\mathbb E[yg]=m_0+\alpha m_1` and the second moment
    :math:`\mathbb E[g^2]=T_1+\alpha T_2+\alpha^2T_3`.
    """

    m0: float
    m1: float
    T1: float
    T2: float
    T3: float

    def mean(self, alpha):
        """:math:`\\mathbb E[yg]` at ``alpha``."""
        alpha = _real(alpha, "alpha")
        return self.m0 + alpha * self.m1

    def second_moment(self, alpha):
        """:math:`\\mathbb E[g^2]` at ``alpha``."""
        alpha = _real(alpha, "alpha")
        return self.T1 + alpha * self.T2 + alpha**2 * self.T3


def _lora_scalars(N, n, p, mu, mu_orth, beta, gamma_pre, gamma):
    N = check_size(N, "N")
    n = check_size(n, "n")
    p = check_size(p, "p")
    mu = check_positive(mu, "mu")
    mu_orth = check_nonnegative(mu_orth, "mu_orth")
    beta = float(check_array(beta, "beta", ndim=0))
    if not -1.0 <= beta <= 1.0:
        raise ValueError(f"beta must lie in [-1, 1], got {beta}")
    gamma_pre = check_positive(gamma_pre, "gamma_pre")
    gamma = check_positive(gamma, "gamma")
    eta, eta_s = p / n, p / N
    dQ = rmt.ridge_delta(eta, gamma)
    dR = rmt.ridge_delta(eta_s, gamma_pre)
    h = 1.0 - eta / (1.0 + gamma * (1.0 + dQ)) ** 2
    h_s = 1.0 - eta_s / (1.0 + gamma_pre * (1.0 + dR)) ** 2
    mb2 = beta**2 * mu**2 + (1.0 - beta**2) * mu_orth**2
    lam_R = mu**2 + 1.0 + gamma_pre * (1.0 + dR)
    lam_Q = mb2 + 1.0 + gamma * (1.0 + dQ)
    return dict(eta=eta, eta_s=eta_s, dQ=dQ, dR=dR, h=h, h_s=h_s, mb2=mb2, lam_R=lam_R,
                lam_Q=lam_Q, mu=mu, beta=beta, gamma=gamma, gamma_pre=gamma_pre)


def alpha_lora_source_norm_sq(N, p, mu, gamma_pre, variant="corrected"):
    r"""Limit :math:`W_2` of :math:`\|\tilde w\|^2` for the ridge source classifier of alpha-LoRA.

    With :math:`\tilde Q=(X_s^\top X_s/N+\gamma_{\rm pre}I_N)^{-1}` (samples as the columns of
    :math:`X_s`), the push-through identity gives :math:`\tilde w=X_s\tilde Qy_s/N` and
    :math:`\|\tilde w\|^2=\frac1Ny_s^\top(\tilde Q-\gamma_{\rm pre}\tilde Q^2)y_s`, so by the
    ridge memorisation theorem of Chapter 5.2
    (:func:`seqrmt.frontiers.attention.ridge_memorisation_error`, with :math:`c=p/N`,
    :math:`s=\mu^2` and ridge :math:`\gamma_{\rm pre}`)

    .. math::
        W_2=h(m)-E_{RR}/\gamma_{\rm pre},\qquad h(m)=\frac{m(1+m)}{1+(1+\mu^2)m}.

    ``variant="repository"`` returns the closed form that the authors' public code uses in its
    ridge-specific :math:`T_3`, :math:`\mu^2/\lambda_R^2+(1-\tilde h)(1-2\mu^2/\lambda_R)`,
    which is where that code's :math:`T_3` goes wrong (Chapter 5.4, erratum).

    Parameters
    ----------
    N, p : int
        Source sample size and dimension (only :math:`p/N` enters).
    mu : float
        :math:`\|\mu\|>0`.
    gamma_pre : float
        Source ridge :math:`\gamma_{\rm pre}>0`.
    variant : {"corrected", "repository"}

    Returns
    -------
    float

    Examples
    --------
    >>> round(alpha_lora_source_norm_sq(8000, 800, 1.5, 1.0), 4)
    0.1301
    >>> round(alpha_lora_source_norm_sq(1000, 800, 1.0, 0.3, variant="repository"), 4)
    0.2203
    """
    from .attention import coresolvent_stieltjes, ridge_memorisation_error

    N = check_size(N, "N")
    p = check_size(p, "p")
    mu = check_positive(mu, "mu")
    gamma_pre = check_positive(gamma_pre, "gamma_pre")
    variant = check_choice(variant, "variant", ("corrected", "repository"))
    c = p / N
    if variant == "repository":
        dR = rmt.ridge_delta(c, gamma_pre)
        lam_R = mu**2 + 1.0 + gamma_pre * (1.0 + dR)
        h_s = 1.0 - c / (1.0 + gamma_pre * (1.0 + dR)) ** 2
        return float(mu**2 / lam_R**2 + (1.0 - h_s) * (1.0 - 2.0 * mu**2 / lam_R))
    m = coresolvent_stieltjes(c, gamma_pre)
    h = m * (1.0 + m) / (1.0 + (1.0 + mu**2) * m)
    return float(h - ridge_memorisation_error(c, mu**2, gamma_pre) / gamma_pre)


def alpha_lora_t3(N, n, p, mu, mu_orth, beta, gamma_pre, gamma, variant="corrected"):
    r"""The :math:`\alpha^2` coefficient :math:`T_3` of :math:`\mathbb E[g^2]` for alpha-LoRA.

    Corrected (derived from :math:`T_3=(\gamma\mu_\beta^\top Q\tilde w)^2+\gamma^2\tilde w^\top Q^2\tilde w`
    with :math:`Q^2=-\partial_\gamma Q`):

    .. math::
        T_3=\gamma^2\Big[\frac{r^2}h\Big(W_2-\frac{s^2}{\lambda_Q}\Big)
        -\frac{r\,s^2\,(1+\delta_Q+\gamma\delta_Q')}{\lambda_Q^2}\Big]
        +\Big(\frac{\gamma(1+\delta_Q)s}{\lambda_Q}\Big)^2,

    with :math:`r=\frac{1+\delta_Q}{1+\gamma(1+\delta_Q)}`, :math:`\delta_Q'=-\eta r^2/h`,
    :math:`s=\beta\mu^2/\lambda_R` (the limit of :math:`\mu_\beta^\top\tilde w`) and
    :math:`W_2` the limit of :math:`\|\tilde w\|^2` (:func:`alpha_lora_source_norm_sq`).
    ``variant="repository"`` evaluates the expression of
    the authors' public code instead, for the erratum comparison.

    Parameters
    ----------
    N, n, p : int
        Source and target sample sizes, dimension (only the ratios p/N, p/n enter).
    mu, mu_orth : float
        :math:`\|\mu\|>0` and :math:`\|\mu_\perp\|\ge0`.
    beta : float
        Source-target alignment in :math:`[-1,1]`.
    gamma_pre, gamma : float
        Source and fine-tuning ridges.
    variant : {"corrected", "repository"}

    Returns
    -------
    float

    Examples
    --------
    >>> round(alpha_lora_t3(8000, 200, 800, 1.5, 1.5, 0.9, 1.0, 1.0), 4)
    0.1442
    """
    variant = check_choice(variant, "variant", ("corrected", "repository"))
    c = _lora_scalars(N, n, p, mu, mu_orth, beta, gamma_pre, gamma)
    g, dQ, h, lam_Q, lam_R = c["gamma"], c["dQ"], c["h"], c["lam_Q"], c["lam_R"]
    if variant == "repository":
        bm2 = (beta * mu) ** 2
        pre = (g * (1 + dQ)) ** 2 / h
        first = mu**2 / lam_R**2 * (
            bm2 / lam_Q**2
            + (1 - h) / c["eta"] * (1 + bm2 * c["mb2"] / lam_Q**2 - 2 * bm2 / lam_Q)
        )
        second = (1 - h) * (1 - c["h_s"]) / c["eta"] * (1 - 2 * mu**2 / lam_R)
        return float(pre * (first + second))
    r = (1 + dQ) / (1 + g * (1 + dQ))
    ddQ = -c["eta"] * r**2 / h
    s = beta * mu**2 / lam_R
    W2 = alpha_lora_source_norm_sq(N, p, mu, c["gamma_pre"])
    t3 = g**2 * (r**2 / h * (W2 - s**2 / lam_Q) - r * s**2 * ((1 + dQ) + g * ddQ) / lam_Q**2)
    return float(t3 + (g * (1 + dQ) * s / lam_Q) ** 2)


def alpha_lora_moments(N, n, p, mu, mu_orth, beta, gamma_pre, gamma, variant="corrected"):
    r"""Deterministic equivalents of the mean and second moment of the alpha-LoRA score.

    With :math:`\delta_Q=\Delta(p/n,\gamma)`, :math:`\delta_R=\Delta(p/N,\gamma_{\rm pre})`
    (:func:`seqrmt.rmt.ridge_delta`), :math:`h=1-\eta/(1+\gamma(1+\delta_Q))^2`,
    :math:`\lambda_R=\mu^2+1+\gamma_{\rm pre}(1+\delta_R)`,
    :math:`\lambda_Q=\mu_\beta^2+1+\gamma(1+\delta_Q)`:

    .. math::
        \mathbb E[yg]=\frac{\mu_\beta^2+\alpha\gamma(1+\delta_Q)\beta\mu^2/\lambda_R}{\lambda_Q},\quad
        T_1=\frac{\mu_\beta^2}{h\lambda_Q}\Big[\frac{\mu_\beta^2+1}{\lambda_Q}-2(1-h)\Big]+\frac{1-h}h,\quad
        T_2=\frac{2\gamma\beta(1+\delta_Q)\mu^2}{\lambda_R\lambda_Q}\Big[1-\frac{\gamma(1+\delta_Q)}{h\lambda_Q}\Big],

    as in the authors' code, and :math:`T_3` from :func:`alpha_lora_t3`.

    Parameters
    ----------
    N, n, p, mu, mu_orth, beta, gamma_pre, gamma, variant
        As in :func:`alpha_lora_t3`.

    Returns
    -------
    AlphaLoRAMoments

    Examples
    --------
    >>> mom = alpha_lora_moments(1000, 200, 100, 1.0, 1.5, 0.3, 1.0, 1.0)
    >>> round(mom.second_moment(0.0), 4)
    0.3835
    """
    c = _lora_scalars(N, n, p, mu, mu_orth, beta, gamma_pre, gamma)
    g, dQ, h, lam_Q, lam_R, mb2 = c["gamma"], c["dQ"], c["h"], c["lam_Q"], c["lam_R"], c["mb2"]
    m0 = mb2 / lam_Q
    m1 = g * (1 + dQ) * beta * mu**2 / (lam_R * lam_Q)
    T1 = mb2 / (h * lam_Q) * ((mb2 + 1) / lam_Q - 2 * (1 - h)) + (1 - h) / h
    T2 = 2 * g * beta * (1 + dQ) * mu**2 / (lam_R * lam_Q) * (1 - g * (1 + dQ) / (h * lam_Q))
    T3 = alpha_lora_t3(N, n, p, mu, mu_orth, beta, gamma_pre, gamma, variant=variant)
    return AlphaLoRAMoments(float(m0), float(m1), float(T1), float(T2), T3)


def alpha_lora_accuracy(alpha, N, n, p, mu, mu_orth, beta, gamma_pre, gamma, variant="corrected"):
    r"""Asymptotic test accuracy :math:`\Phi\big(\mathbb E[yg]/\sqrt{\mathbb E[g^2]-\mathbb E[yg]^2}\big)` (signed).

    Parameters
    ----------
    alpha : float or array_like
        Rescaling of the source classifier.
    N, n, p, mu, mu_orth, beta, gamma_pre, gamma, variant
        As in :func:`alpha_lora_t3`.

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    >>> round(alpha_lora_accuracy(0.0, 1000, 200, 100, 1.0, 1.5, 0.3, 1.0, 1.0), 4)
    0.8946
    """
    mom = alpha_lora_moments(N, n, p, mu, mu_orth, beta, gamma_pre, gamma, variant=variant)
    mean = mom.mean(alpha)
    var = mom.second_moment(alpha) - mean**2
    if np.any(var <= 0):
        raise ValueError("the moments give a non-positive variance at this alpha")
    out = special.ndtr(mean / np.sqrt(var))
    return float(out) if np.ndim(out) == 0 else out


def alpha_lora_optimal_alpha(N, n, p, mu, mu_orth, beta, gamma_pre, gamma, variant="corrected"):
    r"""Accuracy-maximising :math:`\alpha^*=\frac{m_1v_0-m_0v_1/2}{m_0v_2-m_1v_1/2}`.

    With mean :math:`m_0+\alpha m_1` and variance :math:`v_0+v_1\alpha+v_2\alpha^2`
    (:math:`v_0=T_1-m_0^2`, :math:`v_1=T_2-2m_0m_1`, :math:`v_2=T_3-m_1^2`), the stationary point of
    mean/std.

    Parameters
    ----------
    N, n, p, mu, mu_orth, beta, gamma_pre, gamma, variant
        As in :func:`alpha_lora_t3`.

    Returns
    -------
    float

    Examples
    --------
    >>> round(alpha_lora_optimal_alpha(2000, 50, 200, 1.5, 1.5, 0.9, 1.0, 1.0), 4)
    1.6405
    """
    mom = alpha_lora_moments(N, n, p, mu, mu_orth, beta, gamma_pre, gamma, variant=variant)
    v0 = mom.T1 - mom.m0**2
    v1 = mom.T2 - 2 * mom.m0 * mom.m1
    v2 = mom.T3 - mom.m1**2
    den = mom.m0 * v2 - mom.m1 * v1 / 2
    if den == 0:
        raise ValueError("alpha* is undefined for these parameters (beta = 0 gives alpha* = 0)")
    return float((mom.m1 * v0 - mom.m0 * v1 / 2) / den)


def simulate_alpha_lora(N, n, p, mu, mu_orth, beta, gamma_pre, gamma, alphas, rng):
    r"""One realisation of alpha-LoRA fine-tuning; the exact conditional accuracy and moments per :math:`\alpha`.

    Source :math:`x=y\mu+z` (:math:`N` samples, random :math:`\pm1` labels), target
    :math:`x=y\mu_\beta+z` with :math:`\mu_\beta=\beta\mu+\sqrt{1-\beta^2}\mu_\perp`
    (:math:`n` samples); :math:`\tilde w` = ridge(:math:`\gamma_{\rm pre}`) on the source and
    :math:`w=` :func:`l2sp_ridge` on the target towards :math:`\alpha\tilde w`.

    Parameters
    ----------
    N, n, p : int
        Source and target sample sizes, dimension (at least 2).
    mu, mu_orth, beta, gamma_pre, gamma
        As in :func:`alpha_lora_t3`.
    alphas : array_like
        Values of :math:`\alpha`.
    rng : numpy.random.Generator or int or None
        Random generator.

    Returns
    -------
    accuracy : numpy.ndarray
        :math:`\Phi(w^\top\mu_\beta/\|w\|)` per :math:`\alpha`.
    second_moment : numpy.ndarray
        :math:`(w^\top\mu_\beta)^2+\|w\|^2=\mathbb E_x[g^2\mid w]` per :math:`\alpha`.
    t3 : float
        The :math:`\alpha^2` coefficient of :math:`\mathbb E_x[g^2\mid w]` for this draw,
        :math:`(\mu_\beta^\top c)^2+\|c\|^2` with :math:`c=\gamma Q\tilde w`, whose limit is
        :math:`T_3` (:func:`alpha_lora_t3`).

    Examples
    --------
    >>> acc, g2, t3 = simulate_alpha_lora(200, 50, 20, 1.0, 1.0, 0.5, 1.0, 1.0, [0.0, 1.0], 0)
    >>> acc.shape
    (2,)
    """
    N = check_size(N, "N")
    n = check_size(n, "n")
    p = check_size(p, "p", minimum=2)
    check_allocation((N, p), "N")
    check_allocation((n, p), "n")
    _lora_scalars(N, n, p, mu, mu_orth, beta, gamma_pre, gamma)  # validates the rest
    alphas = check_array(alphas, "alphas", ndim=1)
    rng = as_generator(rng)
    mu_vec = np.zeros(p)
    mu_vec[0] = mu
    mu_b = np.zeros(p)
    mu_b[0] = beta * mu
    mu_b[1] = np.sqrt(1.0 - beta**2) * mu_orth
    ys = rng.choice([-1.0, 1.0], size=N)
    Xs = ys[:, None] * mu_vec + rng.standard_normal((N, p))
    w_src = l2sp_ridge(Xs, ys, gamma_pre)
    y = rng.choice([-1.0, 1.0], size=n)
    X = y[:, None] * mu_b + rng.standard_normal((n, p))
    acc, g2 = [], []
    for a in alphas:
        w = l2sp_ridge(X, y, gamma, a * w_src)
        proj, norm2 = w @ mu_b, w @ w
        acc.append(special.ndtr(proj / np.sqrt(norm2)))
        g2.append(proj**2 + norm2)
    c = l2sp_ridge(X, np.zeros(n), gamma, w_src)  # (I - QS) w_tilde = gamma Q w_tilde
    return np.array(acc), np.array(g2), float((c @ mu_b) ** 2 + c @ c)


def alpha_lora_experiment(N, n, p, mu, mu_orth, beta, gamma_pre, gamma, alphas, n_draws, rng):
    r"""Independent realisations of :func:`simulate_alpha_lora`, stacked.

    Parameters
    ----------
    N, n, p, mu, mu_orth, beta, gamma_pre, gamma, alphas
        As in :func:`simulate_alpha_lora`.
    n_draws : int
        Independent draws, at least 2 (:func:`alpha_lora_report` needs standard errors).
    rng : numpy.random.Generator or int or None
        Root of the draws: draw :math:`i` uses the :math:`i`-th child generator
        (:func:`seqrmt.ensemble.spawn_generators`).

    Returns
    -------
    accuracy : numpy.ndarray, shape (n_draws, len(alphas))
        Exact conditional accuracy per draw and :math:`\alpha`.
    t3 : numpy.ndarray, shape (n_draws,)
        The :math:`\alpha^2` coefficient of the second moment per draw.

    Examples
    --------
    >>> acc, t3 = alpha_lora_experiment(200, 50, 20, 1.0, 1.0, 0.5, 1.0, 1.0, [0.0, 1.0], 3, 0)
    >>> acc.shape, t3.shape
    ((3, 2), (3,))
    """
    n_draws = check_size(n_draws, "n_draws", minimum=2)
    runs = [simulate_alpha_lora(N, n, p, mu, mu_orth, beta, gamma_pre, gamma, alphas, g)
            for g in progress_bar(spawn_generators(as_generator(rng), n_draws), desc="draws")]
    return np.array([r[0] for r in runs]), np.array([r[2] for r in runs])


def _alpha_lora_setting(setting):
    if len(setting) != 8:
        raise ValueError("setting must be (N, n, p, mu, mu_orth, beta, gamma_pre, gamma)")
    _lora_scalars(*setting)  # validates
    return tuple(setting)


def _columns(alphas, values, name):
    cols = []
    for a in values:
        hit = np.flatnonzero(np.isclose(alphas, a, rtol=0, atol=1e-12))
        if hit.size == 0:
            raise ValueError(f"{name}: alpha = {a:g} is not among the simulated alphas")
        cols.append(int(hit[-1]))
    return cols


def _in_se(gap, se):
    """``gap / se``, infinite (or NaN for a zero gap) when the draws do not spread."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.divide(gap, se))


def alpha_lora_report(setting, alphas, accuracy, t3, show=(0.0, 1.0)):
    r"""Text report of theory against simulation for alpha-LoRA in one setting.

    Lists :math:`\alpha^*` (corrected and repository :math:`T_3`); the accuracy, theory against
    mean :math:`\pm` standard error and the gap in standard errors, at each :math:`\alpha` of
    ``show`` and at :math:`\alpha^*`; :math:`T_3` (both variants) against the simulated one; and
    the paired accuracy difference between the two optima.

    Parameters
    ----------
    setting : tuple
        ``(N, n, p, mu, mu_orth, beta, gamma_pre, gamma)``.
    alphas : array_like, shape (k,)
        The simulated :math:`\alpha`; must contain ``show`` and both optima
        (:func:`alpha_lora_optimal_alpha`, ``variant="corrected"`` and ``"repository"``).
    accuracy : array_like, shape (n_draws, k)
        From :func:`alpha_lora_experiment`.
    t3 : array_like, shape (n_draws,)
        From :func:`alpha_lora_experiment`.
    show : sequence of float
        Values of :math:`\alpha` to report besides :math:`\alpha^*`.

    Returns
    -------
    str
        The lines, starting with ``alpha* = ...``.

    Examples
    --------
    >>> s = (1000, 200, 100, 1.0, 1.5, 0.3, 1.0, 1.0)
    >>> a = [alpha_lora_optimal_alpha(*s, variant=v) for v in ("corrected", "repository")]
    >>> acc, t3 = alpha_lora_experiment(*s, np.r_[1.0, a], 2, 0)
    >>> print(alpha_lora_report(s, np.r_[1.0, a], acc, t3, show=[1.0]))  # doctest: +ELLIPSIS
    alpha* = 0.079 (repository T3: 0.083)
      alpha =  1.000: accuracy 0.8730 | ...
    """
    s = _alpha_lora_setting(setting)
    alphas = check_array(alphas, "alphas", ndim=1)
    acc = check_array(accuracy, "accuracy", ndim=2)
    if acc.shape[1] != alphas.size or acc.shape[0] < 2:
        raise ValueError("accuracy must have shape (n_draws >= 2, len(alphas))")
    t3 = check_array(t3, "t3", shape=(acc.shape[0],))
    show = check_array(show, "show", ndim=1)
    a_c, a_r = (alpha_lora_optimal_alpha(*s, variant=v) for v in ("corrected", "repository"))
    cols = _columns(alphas, list(show) + [a_c, a_r], "alphas")
    lines = [f"alpha* = {a_c:.3f} (repository T3: {a_r:.3f})"]
    for a, j in zip(list(show) + [a_c], cols[:-1]):
        th, (m, se) = alpha_lora_accuracy(a, *s), mean_se(acc[:, j])
        lines.append(f"  alpha = {a:6.3f}: accuracy {th:.4f} | {m:.4f} ± {se:.4f}")
        lines.append(f"      gap {_in_se(m - th, se):+.1f} se")
    t3c, t3r = (alpha_lora_t3(*s, variant=v) for v in ("corrected", "repository"))
    m, se = mean_se(t3)
    lines.append(f"  T3: corrected {t3c:.4f}, repository {t3r:.4f}, simulated {m:.4f} ± {se:.4f}")
    lines.append(f"      gap to corrected {_in_se(m - t3c, se):+.1f} se,"
                 f" to repository {_in_se(m - t3r, se):+.1f} se")
    d_mean, d_se = mean_se(acc[:, cols[-2]] - acc[:, cols[-1]])
    th = alpha_lora_accuracy(a_c, *s) - alpha_lora_accuracy(a_r, *s)
    lines.append(f"  acc(alpha*) - acc(repository alpha*): {th:+.5f} |"
                 f" {d_mean:+.5f} ± {d_se:.5f}")
    return "\n".join(lines)


def plot_alpha_lora(ax, setting, alphas, accuracy, color=None, n_grid=201):
    r"""Draw target accuracy against :math:`\alpha` for one alpha-LoRA setting.

    The theory with the corrected :math:`T_3` (solid, labelled by :math:`\beta`) and with the
    public code's (dotted), the simulated means with two standard errors (circles) and the
    corrected optimum :math:`\alpha^*` (star).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    setting : tuple
        ``(N, n, p, mu, mu_orth, beta, gamma_pre, gamma)``.
    alphas : array_like, shape (k,)
        Simulated :math:`\alpha`; the theory is drawn over their range.
    accuracy : array_like, shape (n_draws, k)
        Simulated accuracies (:func:`alpha_lora_experiment`).
    color : str, optional
        Colour of the curves and points.
    n_grid : int
        Points of the theory curves.

    Returns
    -------
    matplotlib.axes.Axes
    """
    from .._validation import check_axes  # noqa: PLC0415
    check_axes(ax)
    s = _alpha_lora_setting(setting)
    alphas = check_array(alphas, "alphas", ndim=1)
    acc = check_array(accuracy, "accuracy", ndim=2)
    if acc.shape[1] != alphas.size or acc.shape[0] < 2:
        raise ValueError("accuracy must have shape (n_draws >= 2, len(alphas))")
    fine = np.linspace(alphas.min(), alphas.max(), check_size(n_grid, "n_grid", minimum=2))
    m, se = mean_se(acc)
    plotting.curve_vs_mc(ax, fine, alpha_lora_accuracy(fine, *s), alphas, m, 2 * se,
                         mc_label=None, theory_label=rf"$\beta={s[5]:g}$", color=color)
    color = ax.lines[-1].get_color() if color is None else color
    ax.plot(fine, alpha_lora_accuracy(fine, *s, variant="repository"), ":", color=color, lw=1.5)
    a_c = alpha_lora_optimal_alpha(*s)
    ax.plot(a_c, alpha_lora_accuracy(a_c, *s), "*", color=color, ms=12)
    return ax
