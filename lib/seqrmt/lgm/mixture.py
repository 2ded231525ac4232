r"""Model 2, the Gaussian mixture: theory, limits, optimal ridge, Monte Carlo and figures.

Used in: Chapter 1.4.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from .._validation import (
    check_allocation,
    check_array,
    check_int_array,
    check_positive,
    check_positive_int,
    check_positive_weights,
    check_prob_columns,
    check_size,
)
from ..rmt import ridge_equivalent
from ._trials import _trial_mean, _trial_se
from .distributions import softmax_distributions  # noqa: F401 (doctests)
from .._validation import check_seed
from ..ensemble import run_ensemble, spawn_generators
from .._validation import ConvergenceError, as_generator
from ..runtime import single_threaded_blas

__all__ = [
    "means_from_gram",
    "MixtureTheory",
    "mixture_theory",
    "MixtureSimulation",
    "simulate_mixture_model",
    "MixtureLimits",
    "mixture_limits",
    "mixture_test_error_talk",
    "mixture_optimal_ridge",
    "mixture_error_curves",
    "mixture_test_error_deviations",
    "plot_mixture_ridge_path",
]

# ---------------------------------------------------------------------------
# Model 2: Gaussian mixture
# ---------------------------------------------------------------------------


def _check_mixture(M, pi, P):
    """Validate the inputs shared by the Model-2 functions."""
    M = check_array(M, "M", ndim=2)
    c = M.shape[1]
    pi = check_positive_weights(pi, "pi", size=c, sum_one=True)
    P = check_prob_columns(P, "P")
    if P.shape[1] != c:
        raise ValueError(f"P must have c={c} columns to match M, got shape {P.shape}")
    return M, pi, P


def _mixture_traces(G, pi, P, scale):
    r"""Return :math:`R,\hat P,T,T_2` for :math:`R=(s\,\Pi^{-1}+\mathcal G)^{-1}`.

    :math:`\hat P=PR\mathcal G`, :math:`T=\operatorname{Tr}(PR\mathcal G\Pi P^\top)`,
    :math:`T_2=\operatorname{Tr}(PR\Pi^{-1}R\mathcal G\Pi P^\top)`; shared by
    :func:`mixture_theory` (:math:`s=\zeta(1+\delta)`) and :func:`mixture_limits`
    (:math:`s=\max(1,\eta)`).
    """
    R = np.linalg.inv(scale * np.diag(1.0 / pi) + G)
    R = 0.5 * (R + R.T)
    P_hat = P @ R @ G
    T = float(np.trace(P_hat @ np.diag(pi) @ P.T))
    T2 = float(np.trace(P @ R @ np.diag(1.0 / pi) @ R @ G @ np.diag(pi) @ P.T))
    return R, P_hat, T, T2


def means_from_gram(gram, d, rng=None):
    r"""Build means :math:`M=U\operatorname{chol}(\mathcal G)^\top` with Gram matrix :math:`M^\top M=\mathcal G`.

    Parameters
    ----------
    gram : array_like, shape (c, c)
        Symmetric positive-definite Gram matrix :math:`\mathcal G`.
    d : int
        Dimension, ``d >= c``.
    rng : int, numpy.random.Generator or None
        Randomness of the orthonormal frame :math:`U`.

    Returns
    -------
    numpy.ndarray, shape (d, c)
    """
    gram = check_array(gram, "gram", ndim=2)
    c = gram.shape[0]
    if gram.shape != (c, c) or not np.allclose(gram, gram.T):
        raise ValueError("gram must be a symmetric square matrix")
    d = check_size(d, "d")
    if d < c:
        raise ValueError(f"d must be at least the number of means c={c}, got {d}")
    try:
        L = np.linalg.cholesky(gram)
    except np.linalg.LinAlgError as exc:
        raise ValueError("gram must be positive definite") from exc
    U, _ = np.linalg.qr(as_generator(rng).standard_normal((d, c)))
    return U @ L.T


@dataclass(frozen=True)
class MixtureTheory:
    r"""Deterministic predictions of Model 2 (see :func:`mixture_theory`).

    Attributes
    ----------
    delta, zeta, tau, kappa : float
        Scalars of the noise resolvent (:func:`seqrmt.rmt.ridge_equivalent` with :math:`\eta=d/n`).
    R : numpy.ndarray, shape (c, c)
        :math:`R=(\zeta(1+\delta)\Pi^{-1}+\mathcal G)^{-1}`.
    P_hat : numpy.ndarray, shape (k, c)
        Predicted means :math:`PR\mathcal G` (column :math:`a` for context :math:`a`).
    h : float
        :math:`\frac1{n^2}\operatorname{Tr}(YX^\top QXY^\top)`.
    w_norm2 : float
        :math:`\|W\|_F^2`.
    test_error : float
        :math:`\sum_a\pi_a\mathbb E\|W^\top x-p_a\|^2` for fresh :math:`x=\mu_a+z`.
    test_error_onehot : float
        Same error against a fresh one-hot label.
    train_error : float
        :math:`\frac1n\|Y-W^\top X\|_F^2`.
    """

    delta: float
    zeta: float
    tau: float
    kappa: float
    R: np.ndarray
    P_hat: np.ndarray
    h: float
    w_norm2: float
    test_error: float
    test_error_onehot: float
    train_error: float


def mixture_theory(M, pi, P, n, gamma):
    r"""Deterministic predictions of Model 2: ridge on a Gaussian mixture :math:`x=\mu_a+z`.

    With :math:`\eta=d/n`, :math:`\delta,\zeta,\tau` of :func:`seqrmt.rmt.ridge_equivalent`,
    :math:`\mathcal G=M^\top M`, :math:`\Pi=\operatorname{diag}(\pi)`:

    .. math::
        R=(\zeta(1+\delta)\Pi^{-1}+\mathcal G)^{-1},\quad \hat P=PR\mathcal G,\quad
        T=\operatorname{Tr}(PR\mathcal G\Pi P^\top),\quad h=\frac{\delta+T}{1+\delta},

    .. math::
        \|W\|_F^2=\frac{\tau(1-T)}{(1+\delta)^2}+\frac{s'\operatorname{Tr}(PR\Pi^{-1}R\mathcal G\Pi P^\top)}{1+\delta},
        \quad s'=\Big(1+\frac{\tau}{(1+\delta)^2}\Big)(1+\delta)-\zeta\tau,

    .. math::
        \mathcal E_{\rm test}=\sum_a\pi_a\|\hat Pe_a-p_a\|^2+\|W\|_F^2,\qquad
        \mathcal E_{\rm train}=1-h-\gamma\|W\|_F^2.

    Parameters
    ----------
    M : array_like, shape (d, c)
        Class means (columns); only :math:`\mathcal G=M^\top M` matters.
    pi : array_like, shape (c,)
        Context probabilities (positive, summing to one).
    P : array_like, shape (k, c)
        Next-token distributions (columns).
    n : int
        Number of training samples.
    gamma : float
        Ridge :math:`\gamma>0`.

    Returns
    -------
    MixtureTheory
    """
    M, pi, P = _check_mixture(M, pi, P)
    d, c = M.shape
    n = check_positive_int(n, "n")
    gamma = check_positive(gamma, "gamma")

    eq = ridge_equivalent(d / n, gamma)
    delta, zeta, tau, kappa = eq.delta, eq.zeta, eq.tau, eq.kappa
    G = M.T @ M
    R, P_hat, T, T2 = _mixture_traces(G, pi, P, zeta * (1.0 + delta))
    h = (delta + T) / (1.0 + delta)
    s_prime = (1.0 + tau / (1.0 + delta) ** 2) * (1.0 + delta) - zeta * tau
    w_norm2 = tau * (1.0 - T) / (1.0 + delta) ** 2 + s_prime * T2 / (1.0 + delta)
    bias = float(np.sum(pi * np.sum((P_hat - P) ** 2, axis=0)))
    test = bias + w_norm2
    onehot = test + float(np.sum(pi * (1.0 - np.sum(P**2, axis=0))))
    train = 1.0 - h - gamma * w_norm2
    return MixtureTheory(
        delta=delta, zeta=zeta, tau=tau, kappa=kappa, R=R, P_hat=P_hat, h=float(h),
        w_norm2=float(w_norm2), test_error=test, test_error_onehot=onehot, train_error=float(train),
    )


@dataclass(frozen=True)
class MixtureSimulation:
    r"""Monte Carlo estimates for Model 2 (see :func:`simulate_mixture_model`).

    Arrays have shape ``(g, n_trials)`` with ``g`` ridge values.

    Attributes
    ----------
    gamma : numpy.ndarray
    test_error : numpy.ndarray
        Exact expectation over a fresh input of :math:`\sum_a\pi_a\|W^\top x-p_a\|^2`.
    train_error : numpy.ndarray
        :math:`\frac1n\|Y-W^\top X\|_F^2`.
    w_norm2 : numpy.ndarray
        :math:`\|W\|_F^2`.
    """

    gamma: np.ndarray
    test_error: np.ndarray
    train_error: np.ndarray
    w_norm2: np.ndarray

    test_error_mean = property(lambda self: _trial_mean(self.test_error),
                               doc="Mean test error per ridge value.")
    test_error_se = property(lambda self: _trial_se(self.test_error),
                             doc="Standard error of :attr:`test_error_mean`.")
    train_error_mean = property(lambda self: _trial_mean(self.train_error),
                                doc="Mean training error per ridge value.")
    train_error_se = property(lambda self: _trial_se(self.train_error),
                              doc="Standard error of :attr:`train_error_mean`.")


def simulate_mixture_model(M, pi, P, n, gamma, n_trials, rng=None, jobs=None):
    r"""Monte Carlo of Model 2: ridge regression of one-hot tokens on :math:`x_i=\mu_{a_i}+z_i`.

    Each trial draws contexts :math:`a_i\sim\pi`, fresh noise, one-hot labels
    :math:`y_i\sim\mathrm{Cat}(p_{a_i})`, fits :math:`W=\frac1nQXY^\top` for every ridge value
    (one eigendecomposition of :math:`\frac1nXX^\top` per trial) and evaluates the test
    error exactly over a fresh input, :math:`\sum_a\pi_a\|W^\top\mu_a-p_a\|^2+\|W\|_F^2`.
    Trial ``t`` draws from the ``t``-th child of ``rng`` (:func:`seqrmt.ensemble.run_ensemble`),
    so the result does not depend on ``jobs``.

    Parameters
    ----------
    M : array_like, shape (d, c)
        Class means (columns).
    pi : array_like, shape (c,)
        Context probabilities.
    P : array_like, shape (k, c)
        Next-token distributions (columns).
    n : int
        Number of training samples.
    gamma : float or array_like
        Ridge value(s).
    n_trials : int
        Number of independent trials.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None
        Root of the trials' generators (see :func:`seqrmt.ensemble.spawn_generators`).
    jobs : int or None
        Workers (see :func:`seqrmt.ensemble.n_jobs`).

    Returns
    -------
    MixtureSimulation

    Examples
    --------
    >>> P = softmax_distributions(2, 3, 0.9, rng=0)
    >>> M, pi = np.eye(6, 3) * 3, np.full(3, 1 / 3)
    >>> a = simulate_mixture_model(M, pi, P, 30, [0.1, 1.0], 3, rng=1)
    >>> b = simulate_mixture_model(M, pi, P, 30, [0.1, 1.0], 3, rng=1, jobs=2)
    >>> a.test_error.shape, bool(np.array_equal(a.test_error, b.test_error))
    ((2, 3), True)
    """
    M, pi, P = _check_mixture(M, pi, P)
    n = check_size(n, "n")
    gammas = np.atleast_1d(check_array(gamma, "gamma", positive=True)).ravel()
    n_trials = check_size(n_trials, "n_trials")
    root = check_seed(rng)
    with single_threaded_blas():
        trials = run_ensemble(_mixture_trial, n_trials, root, args=(M, pi, P, n, gammas),
                              jobs=jobs, desc="trials")
    test, train, wn = np.array(trials).transpose(1, 2, 0)  # each (g, n_trials)
    return MixtureSimulation(gammas, test, train, wn)


def _mixture_trial(rng, M, pi, P, n, gammas):
    """One trial of :func:`simulate_mixture_model`: test, training error and ||W||^2 per ridge."""
    d, c = M.shape
    k = P.shape[0]
    out = np.empty((3, len(gammas)))
    a = rng.choice(c, size=n, p=pi)
    X = M[:, a] + rng.standard_normal((d, n))
    u = rng.random(n)
    tokens = np.minimum((u[None, :] > np.cumsum(P, axis=0)[:, a]).sum(axis=0), k - 1)
    XY = np.zeros((d, k))
    np.add.at(XY.T, tokens, X.T)  # X Y^T, (d, k)
    lam, U = np.linalg.eigh(X @ X.T / n)
    UXY = U.T @ XY / n  # (d, k)
    UM = U.T @ M  # (d, c)
    for i, gm in enumerate(gammas):
        Wr = UXY / (lam + gm)[:, None]  # W in the eigenbasis, (d, k)
        w2 = float(np.sum(Wr**2))
        pred = Wr.T @ UM  # (k, c) = W^T mu_a
        out[0, i] = float(np.sum(pi * np.sum((pred - P) ** 2, axis=0))) + w2
        # (1/n)||Y - W^T X||^2 = 1 - 2 tr(W^T X Y^T)/n + tr(W^T X X^T W)/n
        out[1, i] = 1.0 - 2.0 * float(np.sum(Wr * UXY)) + float(np.sum(lam[:, None] * Wr**2))
        out[2, i] = w2
    return out


@dataclass(frozen=True)
class MixtureLimits:
    r"""Limits of the Model-2 predictions as :math:`\gamma\to0` and :math:`\gamma\to\infty`.

    See :func:`mixture_limits`.

    Attributes
    ----------
    eta : float
        :math:`\eta=d/n`.
    ridgeless_P_hat : numpy.ndarray, shape (k, c)
        :math:`\lim_{\gamma\to0}\hat P=PR_0\mathcal G` with
        :math:`R_0=(\max(1,\eta)\Pi^{-1}+\mathcal G)^{-1}`.
    ridgeless_w_norm2 : float
        :math:`\lim_{\gamma\to0}\|W\|_F^2` (``inf`` at :math:`\eta=1`).
    ridgeless_test_error : float
        :math:`\lim_{\gamma\to0}\mathcal E_{\rm test}` (``inf`` at :math:`\eta=1`).
    ridgeless_train_error : float
        :math:`\lim_{\gamma\to0}\mathcal E_{\rm train}`: :math:`(1-\eta)(1-T_0)` for
        :math:`\eta<1`, zero (interpolation) for :math:`\eta\ge1`.
    null_test_error : float
        :math:`\lim_{\gamma\to\infty}\mathcal E_{\rm test}=\sum_a\pi_a\|p_a\|^2` (the prediction is zero).
    null_train_error : float
        :math:`\lim_{\gamma\to\infty}\mathcal E_{\rm train}=1`.
    large_gamma_test_slope, large_gamma_train_slope : float
        First-order coefficients: :math:`\mathcal E_{\rm test}=\sum_a\pi_a\|p_a\|^2-2T_1/\gamma+O(\gamma^{-2})`
        and :math:`\mathcal E_{\rm train}=1-2(\eta+T_1)/\gamma+O(\gamma^{-2})`, with
        :math:`T_1=\operatorname{Tr}(P\Pi\mathcal G\Pi P^\top)`; the attributes hold
        :math:`2T_1` and :math:`2(\eta+T_1)`.

    Used in: Chapter 1, "Generalization in a Gaussian-mixture model".
    """

    eta: float
    ridgeless_P_hat: np.ndarray
    ridgeless_w_norm2: float
    ridgeless_test_error: float
    ridgeless_train_error: float
    null_test_error: float
    null_train_error: float
    large_gamma_test_slope: float
    large_gamma_train_slope: float


def mixture_limits(M, pi, P, n):
    r"""Small- and large-ridge limits of :func:`mixture_theory`.

    As :math:`\gamma\to0`, :math:`\zeta(1+\delta)\to\max(1,\eta)`, so
    :math:`R\to R_0=(\max(1,\eta)\Pi^{-1}+\mathcal G)^{-1}` and, with
    :math:`T_0=\operatorname{Tr}(PR_0\mathcal G\Pi P^\top)`,

    .. math::
        \|W\|_F^2\to\begin{cases}
        \operatorname{Tr}(PR_0\Pi^{-1}R_0\mathcal G\Pi P^\top)+\dfrac{\eta(1-T_0)}{1-\eta}, & \eta<1,\\[1ex]
        \dfrac{1-T_0}{\eta-1}, & \eta>1,\end{cases}
        \qquad
        \mathcal E_{\rm train}\to\begin{cases}(1-\eta)(1-T_0), & \eta<1,\\ 0, & \eta\ge1,\end{cases}

    and :math:`\mathcal E_{\rm test}\to\sum_a\pi_a\|PR_0\mathcal Ge_a-p_a\|^2+\lim\|W\|_F^2`.
    As :math:`\gamma\to\infty`, :math:`W\to0`:
    :math:`\mathcal E_{\rm test}=\sum_a\pi_a\|p_a\|^2-2T_1/\gamma+O(\gamma^{-2})` and
    :math:`\mathcal E_{\rm train}=1-2(\eta+T_1)/\gamma+O(\gamma^{-2})`,
    :math:`T_1=\operatorname{Tr}(P\Pi\mathcal G\Pi P^\top)`.

    Parameters
    ----------
    M, pi, P : array_like
        Means ``(d, c)``, context probabilities ``(c,)`` and next-token
        distributions ``(k, c)``, as in :func:`mixture_theory`.
    n : int
        Number of training samples (:math:`\eta=d/n`).

    Returns
    -------
    MixtureLimits

    Examples
    --------
    >>> M = np.zeros((200, 1)); M[0, 0] = 1.0  # c = k = 1, ||mu||^2 = 1
    >>> lim = mixture_limits(M, [1.0], np.ones((1, 1)), n=400)
    >>> round(lim.ridgeless_test_error, 6)  # 1 / ((1 + 1) (1 - 0.5))
    1.0

    Used in: Chapter 1, "Generalization in a Gaussian-mixture model".
    """
    M, pi, P = _check_mixture(M, pi, P)
    d, c = M.shape
    n = check_positive_int(n, "n")

    eta = d / n
    G = M.T @ M
    _, P_hat, T0, T2 = _mixture_traces(G, pi, P, max(1.0, eta))
    if eta < 1.0:
        w_norm2 = T2 + eta * (1.0 - T0) / (1.0 - eta)
        train = (1.0 - eta) * (1.0 - T0)
    else:
        w_norm2 = (1.0 - T0) / (eta - 1.0) if eta > 1.0 else np.inf
        train = 0.0
    bias = float(np.sum(pi * np.sum((P_hat - P) ** 2, axis=0)))
    T1 = float(np.trace(P @ np.diag(pi) @ G @ np.diag(pi) @ P.T))
    return MixtureLimits(
        eta=eta, ridgeless_P_hat=P_hat, ridgeless_w_norm2=float(w_norm2),
        ridgeless_test_error=float(bias + w_norm2), ridgeless_train_error=float(train),
        null_test_error=float(np.sum(pi * np.sum(P**2, axis=0))), null_train_error=1.0,
        large_gamma_test_slope=2.0 * T1, large_gamma_train_slope=2.0 * (eta + T1),
    )


def mixture_test_error_talk(M, P, n, gamma):
    r"""Model-2 test error as printed in the talk (uniform contexts), read with :math:`P^\top P`.

    Seddik (2023) states, for :math:`\pi_a=1/c`,

    .. math::
        \bar E_{\rm test}=\frac1c\operatorname{Tr}\Big[P^\top P\Big(I_c-
        \frac{2M^\top\bar QM}{(1+\delta)c}\Big)\Big]+\frac1c\sum_{a=1}^c\operatorname{Tr}C_a,

    .. math::
        C_a=\frac{\tau\sum_b\operatorname{Diag}(p_b)}{(1+\delta)^2c}
        +PM^\top\Big(\frac{\bar Q\mu_a\mu_a^\top\bar Q+\mathcal R}{(1+\delta)^2c^2}
        -\frac{2\tau\bar Q}{(1+\delta)^3c^2}\Big)MP^\top,

    .. math::
        \bar Q=\frac1\zeta I_d-\frac1{\zeta^2}M\Big((1+\delta)cI_c+\frac1\zeta M^\top M\Big)^{-1}M^\top,\quad
        \mathcal R=\frac{\bar Q^2+\kappa\bar QMM^\top\bar Q/((1+\delta)^2c)}{1-\kappa/(1+\delta)^2}.

    The talk prints :math:`PP^\top` in the first trace, which does not type-check
    (:math:`P` is :math:`k\times c`); :math:`P^\top P` is meant. The scalars
    :math:`\delta,\zeta,\tau,\kappa` are those of :func:`seqrmt.rmt.ridge_equivalent`
    (the corrected :math:`\delta`, discriminant :math:`4\gamma\eta`). The result equals
    ``mixture_theory(M, np.full(c, 1 / c), P, n, gamma).test_error`` exactly (Chapter 1,
    Section 1.4 proves it); this function is an independent implementation used to check that.

    Parameters
    ----------
    M, P, n, gamma
        Means ``(d, c)``, next-token distributions ``(k, c)``, number of samples
        and ridge, as in :func:`mixture_theory` (here with :math:`\pi_a=1/c`).

    Returns
    -------
    float

    Examples
    --------
    >>> M = np.eye(40, 2); P = np.array([[0.8, 0.3], [0.2, 0.7]])
    >>> t = mixture_test_error_talk(M, P, 80, 0.5)
    >>> b = mixture_theory(M, [0.5, 0.5], P, 80, 0.5).test_error
    >>> bool(abs(t - b) < 1e-12)
    True
    """
    M = check_array(M, "M", ndim=2)
    d, c = M.shape
    M, _, P = _check_mixture(M, np.full(c, 1.0 / c), P)
    n = check_positive_int(n, "n")
    gamma = check_positive(gamma, "gamma")
    eq = ridge_equivalent(d / n, gamma)
    delta, zeta, tau, kappa = eq.delta, eq.zeta, eq.tau, eq.kappa
    b = (1.0 + delta) * c
    Qbar = np.eye(d) / zeta - M @ np.linalg.solve(
        b * np.eye(c) + M.T @ M / zeta, M.T) / zeta**2
    QM = Qbar @ M  # (d, c)
    R_talk = (Qbar @ Qbar + kappa * QM @ QM.T / ((1.0 + delta) ** 2 * c)) / (
        1.0 - kappa / (1.0 + delta) ** 2)
    first = np.trace(P.T @ P @ (np.eye(c) - 2.0 * M.T @ QM / b)) / c
    PM = P @ M.T  # (k, d)
    common = PM @ (R_talk / b**2 - 2.0 * tau * Qbar / ((1.0 + delta) * b**2)) @ PM.T
    diag_term = tau * np.sum(P) / ((1.0 + delta) ** 2 * c)  # Tr sum_b Diag(p_b)
    per_a = np.sum((P @ M.T @ QM) ** 2, axis=0) / b**2  # ||P M^T Qbar mu_a||^2
    return float(first + diag_term + np.trace(common) + per_a.mean())


def mixture_optimal_ridge(M, pi, P, n, bounds=(1e-4, 1e3), tol=1e-6):
    r"""Ridge :math:`\gamma^*` minimising the Model-2 test error of :func:`mixture_theory`.

    A bounded scalar search over :math:`\log\gamma`.

    Parameters
    ----------
    M, pi, P : array_like
        As in :func:`mixture_theory`.
    n : int
        Number of training samples.
    bounds : tuple of float
        Search interval ``(gamma_min, gamma_max)``, ``0 < gamma_min < gamma_max``.
    tol : float
        Absolute tolerance on :math:`\log\gamma`.

    Returns
    -------
    tuple of float
        ``(gamma_star, test_error_at_gamma_star)``.

    Raises
    ------
    ConvergenceError
        If the search does not converge.

    Examples
    --------
    >>> M = np.zeros((400, 1)); M[0, 0] = 1.0  # c = k = 1, ||mu||^2 = 1
    >>> g, e = mixture_optimal_ridge(M, [1.0], np.ones((1, 1)), 800)
    >>> round(g, 3), round(e, 3)
    (0.791, 0.635)
    """
    M, pi, P = _check_mixture(M, pi, P)
    n = check_positive_int(n, "n")
    lo = check_positive(bounds[0], "bounds")
    hi = check_positive(bounds[1], "bounds")
    if not lo < hi:
        raise ValueError(f"bounds must satisfy 0 < gamma_min < gamma_max, got {bounds}")
    tol = check_positive(tol, "tol")

    def f(t):
        return mixture_theory(M, pi, P, n, float(np.exp(t))).test_error

    res = optimize.minimize_scalar(f, bounds=(np.log(lo), np.log(hi)),
                                   method="bounded", options={"xatol": tol})
    if not res.success:
        raise ConvergenceError(f"optimal ridge search failed: {res.message}")
    return float(np.exp(res.x)), float(res.fun)


def mixture_error_curves(M, pi, P, n, gamma):
    r"""Test and training errors of Model 2 (:func:`mixture_theory`) along a ridge grid.

    Parameters
    ----------
    M, pi, P, n
        As in :func:`mixture_theory`.
    gamma : array_like, shape (g,)
        Ridge values.

    Returns
    -------
    test_error, train_error : numpy.ndarray, shape (g,)

    Examples
    --------
    >>> M = np.zeros((400, 1)); M[0, 0] = 1.0  # c = k = 1, ||mu||^2 = 1
    >>> te, tr = mixture_error_curves(M, [1.0], np.ones((1, 1)), 800, [0.1, 1.0])
    >>> bool(np.all(tr < te))
    True
    """
    gamma = np.atleast_1d(check_array(gamma, "gamma", positive=True)).ravel()
    th = [mixture_theory(M, pi, P, n, g) for g in gamma]
    return np.array([t.test_error for t in th]), np.array([t.train_error for t in th])


def mixture_test_error_deviations(G, pi, P, n, gamma, n_trials, rng=None, eta=0.5, jobs=None):
    r"""Deviations of the test error of single training sets from the Model-2 formula.

    For each sample size :math:`n`, draws means with Gram matrix :math:`\mathcal G` in
    dimension :math:`d=\operatorname{round}(\eta n)` (:func:`means_from_gram`), then
    ``n_trials`` training sets (:func:`simulate_mixture_model`), and returns
    :math:`E_{\rm test}-\bar E_{\rm test}` of each, :math:`\bar E_{\rm test}` from
    :func:`mixture_theory`. Their root mean square measures the rate of convergence.
    Sample size ``j`` draws its means, then roots its trials, from the ``j``-th child of ``rng``.

    Parameters
    ----------
    G : array_like, shape (c, c)
        Gram matrix :math:`M^\top M` (symmetric positive definite).
    pi, P
        As in :func:`mixture_theory`.
    n : array_like of int, shape (m,)
        Sample sizes.
    gamma : float
        Ridge.
    n_trials : int
        Training sets per sample size.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None
        Root of the generators (see :func:`seqrmt.ensemble.spawn_generators`).
    eta : float
        Ratio :math:`d/n`.
    jobs : int or None
        Workers (see :func:`seqrmt.ensemble.n_jobs`).

    Returns
    -------
    numpy.ndarray, shape (m, n_trials)

    Examples
    --------
    >>> P = softmax_distributions(2, 3, 0.9, rng=0)
    >>> gaps = mixture_test_error_deviations(np.eye(3) + 1, np.full(3, 1 / 3), P,
    ...                                      [40, 80], 0.1, 4, rng=1)
    >>> gaps.shape
    (2, 4)
    """
    G = check_array(G, "G", ndim=2)
    if G.shape[0] != G.shape[1] or not np.allclose(G, G.T) or np.linalg.eigvalsh(G)[0] <= 0:
        raise ValueError("G must be a symmetric positive definite matrix")
    n = check_int_array(n, "n", low=2, ndim=1)
    gamma = check_positive(gamma, "gamma")
    eta = check_positive(eta, "eta")
    for m in n:  # each trial holds a d x n data matrix
        check_allocation((max(1, int(round(eta * m))), int(m)), "n")
    out = []
    for m, child in zip(n, spawn_generators(check_seed(rng), len(n))):
        M = means_from_gram(G, max(1, int(round(eta * m))), child)
        sim = simulate_mixture_model(M, pi, P, int(m), gamma, n_trials, child, jobs=jobs)
        out.append(sim.test_error[0] - mixture_theory(M, pi, P, int(m), gamma).test_error)
    return np.array(out)


def plot_mixture_ridge_path(axes, gamma, curves, sim, limits, optimum, color=None, label=None,
                            every=2):
    r"""Draw Model-2 test and training errors against the ridge: theory, Monte Carlo and limits.

    Left axis: the test-error curve, every ``every``-th Monte Carlo point with two
    standard errors, the ridgeless limit (dotted, :math:`\gamma\le1`, if finite) and the
    optimum (star). Right axis: the same for the training error, without the optimum.

    Parameters
    ----------
    axes : pair of matplotlib.axes.Axes
    gamma : array_like, shape (g,)
        Ridge grid of the theory curves.
    curves : pair of array_like, shape (g,)
        Test and training errors on that grid (:func:`mixture_error_curves`).
    sim : MixtureSimulation
    limits : MixtureLimits
    optimum : tuple of float
        ``(gamma_star, test_error)`` from :func:`mixture_optimal_ridge`.
    color, label : str, optional
        Shared colour; legend entry of the test-error curve.
    every : int
        Plot every ``every``-th Monte Carlo ridge value.

    Returns
    -------
    pair of matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> M = np.zeros((40, 1)); M[0, 0] = 1.0
    >>> pi, P, g = [1.0], np.ones((1, 1)), np.array([0.1, 1.0])
    >>> sim = simulate_mixture_model(M, pi, P, 80, g, 3, rng=0)
    >>> fig, axes = plt.subplots(1, 2)
    >>> _ = plot_mixture_ridge_path(axes, g, mixture_error_curves(M, pi, P, 80, g), sim,
    ...                             mixture_limits(M, pi, P, 80),
    ...                             mixture_optimal_ridge(M, pi, P, 80))
    >>> plt.close(fig)
    """
    from .._validation import check_axes_list  # noqa: PLC0415
    check_axes_list(axes)
    from ..plotting import curve_vs_mc

    if len(axes) != 2:
        raise ValueError(f"axes must be a pair of axes, got {len(axes)}")
    gamma = check_array(gamma, "gamma", ndim=1, positive=True)
    if len(curves) != 2:
        raise ValueError("curves must be a pair (test_error, train_error)")
    if not isinstance(sim, MixtureSimulation):
        raise ValueError(f"sim must be a MixtureSimulation, got {type(sim).__name__}")
    if not isinstance(limits, MixtureLimits):
        raise ValueError(f"limits must be a MixtureLimits, got {type(limits).__name__}")
    g_star = check_positive(optimum[0], "optimum")
    e_star = check_positive(optimum[1], "optimum")
    every = check_positive_int(every, "every")
    sl = slice(None, None, every)
    ax1, ax2 = axes
    for ax, curve, mean, se, lim, lab in (
            (ax1, curves[0], sim.test_error_mean, sim.test_error_se,
             limits.ridgeless_test_error, label),
            (ax2, curves[1], sim.train_error_mean, sim.train_error_se,
             limits.ridgeless_train_error, None)):
        curve = check_array(curve, "curves", shape=gamma.shape)
        curve_vs_mc(ax, gamma, curve, sim.gamma[sl], mean[sl], 2 * se[sl],
                    theory_label=lab, mc_label=None, color=color)
        if np.isfinite(lim):
            ax.hlines(lim, gamma.min(), 1, colors=color, linestyles=":", lw=1.5, zorder=3)
    ax1.plot(g_star, e_star, "*", ms=12, color=color, mec="k")
    return axes
