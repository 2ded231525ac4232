r"""L2-SP transfer for isotropic data: the source coefficients, the target risk, the best source ridge.

Source :math:`y_s=X_sw_0+e_s` (:math:`n_s` samples, noise variance :math:`\sigma_s^2`, :math:`\gamma_s=p/n_s`)
fitted by ridge :math:`\tau`; target :math:`y=Xw_1+e` (:math:`n_t` samples, :math:`\sigma_t^2`,
:math:`\gamma_t=p/n_t`) fitted by ridge :math:`\lambda` pulled towards the source fit. Features
:math:`x\sim\mathcal N(0,I_p)`, risk :math:`\|\hat w_t-w_1\|^2`, alignment
:math:`\rho=\langle w_0,w_1\rangle/\|w_0\|^2`, :math:`\mathrm{SNR}=\|w_0\|^2/\sigma_s^2`.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

from ... import rmt
from ..._validation import ConvergenceError, check_array, check_nonnegative, check_positive, check_positive_int


def l2sp_coefficients(tau, gamma_s):
    r"""The source coefficients :math:`a=1-\tau m`, :math:`b=1-2\tau m+\tau^2m_2`, :math:`v=\gamma_s(m-\tau m_2)`.

    :math:`m,m_2` are the Marchenko-Pastur moments at :math:`(\tau,\gamma_s)`
    (:func:`seqrmt.rmt.mp_resolvent_moments`). For the ridge source fit :math:`\hat w_s(\tau)` on
    isotropic data, :math:`\langle\hat w_s,u\rangle\to a\langle w_0,u\rangle` for a fixed
    :math:`u` and :math:`\|\hat w_s\|^2\to b\|w_0\|^2+\sigma_s^2v`; hence
    :math:`D^2=\|\hat w_s-w_1\|^2\to\|w_1\|^2+\|w_0\|^2(b-2\rho a)+\sigma_s^2v`.

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
    At the source-optimal ridge :math:`\tau_S^*=\gamma_s/\mathrm{SNR}` the posterior mean is
    orthogonal to its error, :math:`b+v/\mathrm{SNR}=a` (here :math:`\mathrm{SNR}=2`):

    >>> a, b, v = l2sp_coefficients(0.25, 0.5)
    >>> bool(abs(a - b - v / 2) < 1e-12)
    True
    """
    tau = check_array(tau, "tau", positive=True)
    gamma_s = check_positive(gamma_s, "gamma_s")
    m, m2 = rmt.mp_resolvent_moments(tau, gamma_s)
    # w_s - w0 = -tau Q w0 + Q X^T e / n: <w_s, u> ~ (1 - tau m) <w0, u>,
    # |w_s|^2 ~ |(I - tau Q) w0|^2 + noise = (1 - 2 tau m + tau^2 m2)|w0|^2 + sigma^2 gamma (m - tau m2)
    a = 1.0 - tau * m
    b = 1.0 - 2.0 * tau * m + tau**2 * m2
    v = gamma_s * (m - tau * m2)
    if np.ndim(a) == 0:
        return float(a), float(b), float(v)
    return a, b, v


def target_risk(lam, gamma_t, sigma_t2, distance_sq):
    r"""Limit of the L2-SP target risk :math:`\|\hat w_t-w_1\|^2=\lambda^2m_2D^2+\sigma_t^2\gamma_t(m-\lambda m_2)`.

    :math:`m,m_2` at :math:`(\lambda,\gamma_t)` (:func:`seqrmt.rmt.mp_resolvent_moments`); the source
    enters only through :math:`D^2=\|\hat w_s-w_1\|^2` (no transfer: :math:`D^2=\|w_1\|^2`).

    Parameters
    ----------
    lam : float or array_like
        Target ridge :math:`\lambda>0`.
    gamma_t : float or array_like
        :math:`p/n_t>0`.
    sigma_t2 : float
        Target noise variance :math:`\ge0`.
    distance_sq : float or array_like
        :math:`D^2\ge0`. The array arguments broadcast.

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
    # w_t - w1 = lam R (w_s - w1) + R X^T e / n_t: a bias lam^2 u^T R^2 u ~ lam^2 m2 |u|^2 and the noise
    out = lam**2 * m2 * distance_sq + sigma_t2 * np.asarray(gamma_t) * (m - lam * m2)
    return float(out) if np.ndim(out) == 0 else out


def transfer_optimal_penalty(rho, gamma_s, snr, tol=1e-10, max_iter=500):
    r"""Transfer-optimal source ridge :math:`\tau_0^*=\arg\min_\tau T(\tau)`, :math:`T=b-2\rho a+v/\mathrm{SNR}`.

    :math:`T=(D^2-\|w_1\|^2)/\|w_0\|^2`, so transfer helps iff :math:`T<0`. Its derivative is
    :math:`T'(\tau)=(\tau-\tau_S^*)\,c(\tau)+2(1-\rho)a'(\tau)` with :math:`c>0`, :math:`a'<0` and
    :math:`\tau_S^*=\gamma_s/\mathrm{SNR}`, so for :math:`0<\rho<1` the minimiser lies above
    :math:`\tau_S^*` and for :math:`\rho>1` below it; the search runs over :math:`\log\tau` on that
    side (bounded Brent). For :math:`\rho\le0`, :math:`T>0` decreases to 0 and the infimum is at
    :math:`\tau=\infty` (returned as ``inf``).

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
    seqrmt.ConvergenceError
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
    # the source-optimal ridge (the posterior mean under the isotropic prior of the right variance)
    tau_s = gamma_s / snr
    if rho == 1.0:
        return tau_s
    if rho <= 0.0:  # T = b - 2 rho a + v/SNR > 0 decreases to 0 as tau -> infinity (w_s -> 0)
        return np.inf
    # forty e-folds on the side of tau_S* where the sign of T' allows the minimum
    lo, hi = (np.log(tau_s), np.log(tau_s) + 40.0) if rho < 1 else (np.log(tau_s) - 40.0, np.log(tau_s))

    def objective(u):  # T on a log scale: the minimiser can sit decades away from tau_S*
        a, b, v = l2sp_coefficients(np.exp(u), gamma_s)
        return b - 2 * rho * a + v / snr

    res = optimize.minimize_scalar(
        objective, bounds=(lo, hi), method="bounded", options={"xatol": tol, "maxiter": max_iter}
    )
    # a minimiser on the edge of the interval means the bracket was wrong, not a minimum
    if not res.success or min(res.x - lo, hi - res.x) < 1e-3:
        raise ConvergenceError("transfer_optimal_penalty: no interior minimum found")
    return float(np.exp(res.x))
