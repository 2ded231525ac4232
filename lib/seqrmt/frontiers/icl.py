r"""In-context learning of linear regression by linear attention: pretraining/test task alignment.

Model (Letey, Zavatone-Veth, Lu & Pehlevan 2025). Tokens :math:`x_i\sim\mathcal N(0,I_d/d)`, labels
:math:`y_i=\langle x_i,w\rangle+\varepsilon_i`, :math:`\varepsilon_i\sim\mathcal N(0,\rho)`; a context holds
:math:`\ell` labelled pairs and a query :math:`x_{\ell+1}`. Reduced linear attention predicts
:math:`\hat y=\langle\Gamma,H_Z\rangle=x_{\ell+1}^\top\Gamma h`, with
:math:`h=[\tfrac d\ell\sum_{i\le\ell}y_ix_i,\ \tfrac1\ell\sum_{i\le\ell}y_i^2]\in\mathbb R^{d+1}`.
It is pretrained by ridge on :math:`n` contexts whose tasks are drawn uniformly from :math:`k` tasks
:math:`w_j\sim\mathcal N(0,C_{\rm train})`, and tested on fresh tasks :math:`w\sim\mathcal N(0,C_{\rm test})`.
Scaling: :math:`\ell/d\to\alpha`, :math:`k/d\to\kappa`, :math:`n/d^2\to\tau`.

The theoretical error (:func:`icl_error`) is the authors' formula, transcribed from their public code
(``mletey/pretrain-test-icl-alignment-ICLR26``, ``theory.py``, ``ICL_error``), with the
Marchenko-Pastur-type transform :math:`M_\kappa` computed from its deterministic equivalent.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from .. import rmt
from .._validation import (
    check_allocation,
    check_nonnegative,
    check_array,
    check_positive,
    check_positive_int,
    check_size,
)
from .._validation import ConvergenceError, as_generator

__all__ = [
    "power_law_covariance",
    "task_resolvent_trace",
    "icl_error",
    "icl_error_infinite",
    "alignment",
    "pretrain_linear_attention",
    "icl_test_error",
]


def _covariance(C, name):
    C = check_array(C, name, ndim=2)
    if C.shape[0] != C.shape[1]:
        raise ValueError(f"{name} must be square, got shape {C.shape}")
    if not np.allclose(C, C.T, atol=1e-10 * max(1.0, float(np.abs(C).max()))):
        raise ValueError(f"{name} must be symmetric")
    return 0.5 * (C + C.T)


def _pair(C_train, C_test):
    """Eigenvalues s of C_train and the diagonal of C_test in C_train's eigenbasis."""
    C_train = _covariance(C_train, "C_train")
    C_test = _covariance(C_test, "C_test")
    if C_test.shape != C_train.shape:
        raise ValueError(
            f"C_test must have the shape of C_train {C_train.shape}, got {C_test.shape}"
        )
    s, U = np.linalg.eigh(C_train)
    if s.min() < -1e-10 * max(1.0, s.max()):
        raise ValueError("C_train must be positive semi-definite")
    t = np.einsum("ij,ik,kj->j", U, C_test, U)
    if np.linalg.eigvalsh(C_test).min() < -1e-10 * max(1.0, t.max()):
        raise ValueError("C_test must be positive semi-definite")
    return np.clip(s, 0.0, None), t


def power_law_covariance(d, exponent=1.0):
    r"""Diagonal task covariance :math:`\mathrm{diag}(j^{-\text{exponent}})`, normalised to trace :math:`d`.

    Parameters
    ----------
    d : int
        Dimension.
    exponent : float
        Decay exponent (non-negative).

    Returns
    -------
    numpy.ndarray, shape (d, d)

    Examples
    --------
    >>> C = power_law_covariance(4)
    >>> round(float(np.trace(C)), 12), bool(C[0, 0] > C[3, 3])
    (4.0, True)
    """
    d = check_size(d, "d")
    check_allocation((d, d), "d")
    exponent = check_nonnegative(exponent, "exponent")
    s = np.arange(1, d + 1, dtype=float) ** (-exponent)
    return np.diag(s * d / s.sum())


def task_resolvent_trace(eigs, kappa, nu, tol=1e-13, max_iter=200):
    r"""Deterministic equivalent :math:`M_\kappa(\nu)` of :math:`\frac1d\mathrm{tr}(\hat C_k+\nu I)^{-1}` and its derivative.

    :math:`\hat C_k=\frac1k\sum_{j\le k}w_jw_j^\top` is the sample covariance of :math:`k=\kappa d`
    tasks :math:`w_j\sim\mathcal N(0,C)`. With :math:`s` the eigenvalues of :math:`C`,

    .. math::
        M=\frac1d\sum_i\frac1{s_i/(1+\delta)+\nu},\qquad
        \delta=\frac1\kappa\,\frac1d\sum_i\frac{s_i}{s_i/(1+\delta)+\nu},

    and :math:`M'=dM/d\nu` is obtained by differentiating both equations (implicitly in
    :math:`\delta`). This is :func:`seqrmt.rmt.solve_delta` with a non-integer sample count
    :math:`n=\kappa d`.

    Parameters
    ----------
    eigs : array_like
        Eigenvalues of :math:`C` (non-negative).
    kappa : float
        Task ratio :math:`k/d>0`.
    nu : float
        Regulariser :math:`\nu>0`.
    tol, max_iter
        Tolerance and iteration cap of Brent's method for :math:`\delta`.

    Returns
    -------
    M, dM : float
        :math:`M_\kappa(\nu)` and :math:`dM_\kappa/d\nu` (negative).

    Examples
    --------
    >>> M, dM = task_resolvent_trace(np.ones(10), 1e9, 0.5)  # kappa -> infinity: 1/(1+nu)
    >>> round(M, 6), round(dM, 6)
    (0.666667, -0.444444)
    """
    s = check_array(eigs, "eigs", ndim=1)
    if np.any(s < 0):
        raise ValueError("eigs must be non-negative")
    kappa = check_positive(kappa, "kappa")
    nu = check_positive(nu, "nu")
    tol = check_positive(tol, "tol")
    max_iter = check_positive_int(max_iter, "max_iter")
    delta = rmt.solve_delta(s, kappa * s.size, nu, tol=tol, max_iter=max_iter)
    a = 1.0 / (1.0 + delta)
    den = s * a + nu
    M = float(np.mean(1.0 / den))
    # delta' from delta = mean(s/den)/kappa with den' = s a' + 1, a' = -a^2 delta'
    num = -np.mean(s / den**2) / kappa
    ddelta = num / (1.0 - np.mean(s**2 * a**2 / den**2) / kappa)
    dM = float(-np.mean((1.0 - s * a**2 * ddelta) / den**2))
    return M, dM


@dataclass(frozen=True)
class ICLError:
    r"""Theoretical ICL error and its parts (see :func:`icl_error`).

    Attributes
    ----------
    error : float
        :math:`e`.
    pretraining : float
        The term that depends on :math:`C_{\rm test}` only through :math:`\mathrm{tr}C_{\rm test}`.
    interaction : float
        The pretrain-test interaction term (traces of :math:`C_{\rm test}F` and :math:`C_{\rm test}F_2`).
    nu, xi, M, dM, c_e : float
        The scalars of the formula.
    """

    error: float
    pretraining: float
    interaction: float
    nu: float
    xi: float
    M: float
    dM: float
    c_e: float


def icl_error(C_train, C_test, alpha, kappa, tau, rho, tol=1e-13, max_iter=200):
    r"""Asymptotic test error of pretrained linear attention under a task-covariance mismatch.

    With :math:`\rho_{\rm tr}=\frac1d\mathrm{tr}C_{\rm train}+\rho`,
    :math:`\rho_{\rm te}=\frac1d\mathrm{tr}C_{\rm test}+\rho`: :math:`\xi=0` if :math:`\tau>1`,
    otherwise :math:`\xi` solves :math:`\xi M_\kappa(\xi+\rho_{\rm tr}/\alpha)=1-\tau`;
    :math:`\nu=\rho_{\rm tr}/\alpha+\xi`, :math:`M=M_\kappa(\nu)`, :math:`M'=M_\kappa'(\nu)`
    (:func:`task_resolvent_trace`);
    :math:`F=[(1-\frac1\kappa+\frac{\nu M}\kappa)C_{\rm train}+\nu I]^{-1}`,
    :math:`F_2=F[(\frac M\kappa+\frac{\nu M'}\kappa)C_{\rm train}+I]F`,

    .. math::
        c_e=\frac{\rho+\nu-\nu^2M-\xi(1-2\nu M-\nu^2M')}{\tau-(1-2\xi M-\xi^2M')},

    .. math::
        e=\rho+\frac{\rho_{\rm te}}\alpha\big[1+(c_e-2\nu)M+(\xi c_e-\nu^2)M'\big]
        +c_e\tfrac1d\mathrm{tr}(C_{\rm test}F)-(\xi c_e-\nu^2)\tfrac1d\mathrm{tr}(C_{\rm test}F_2).

    This is the formula of the authors' code (``ICL_error``), not re-derived here.

    Parameters
    ----------
    C_train, C_test : array_like, shape (d, d)
        Pretraining and test task covariances (symmetric positive semi-definite).
    alpha : float
        Context ratio :math:`\ell/d>0`.
    kappa : float
        Task-diversity ratio :math:`k/d>0`.
    tau : float
        Pretraining ratio :math:`n/d^2>0`, not equal to 1 (the formula is singular there).
    rho : float
        Label-noise variance :math:`\rho\ge0`.
    tol, max_iter
        Passed to the root finders.

    Returns
    -------
    ICLError

    Examples
    --------
    >>> I = np.eye(20)
    >>> round(icl_error(I, I, alpha=1.0, kappa=1.0, tau=4.0, rho=0.1).error, 4)
    0.9826
    """
    s, t = _pair(C_train, C_test)
    alpha = check_positive(alpha, "alpha")
    kappa = check_positive(kappa, "kappa")
    tau = check_positive(tau, "tau")
    if tau == 1.0:
        raise ValueError("tau must differ from 1 (interpolation threshold)")
    rho = check_nonnegative(rho, "rho")
    tol = check_positive(tol, "tol")
    max_iter = check_positive_int(max_iter, "max_iter")
    rho_tr = s.mean() + rho
    rho_te = t.mean() + rho
    if rho_tr <= 0:
        raise ValueError("C_train and rho cannot both vanish")

    def trace(nu):
        return task_resolvent_trace(s, kappa, nu, tol=tol, max_iter=max_iter)

    xi = 0.0
    if tau < 1:
        def g(x):
            return x * trace(x + rho_tr / alpha)[0] - (1.0 - tau)

        hi = 1.0
        for _ in range(max_iter):
            if g(hi) > 0:
                break
            hi *= 2.0
        else:  # pragma: no cover - x M(x + c) -> 1 > 1 - tau
            raise ConvergenceError("icl_error: no bracket for xi")
        xi = optimize.brentq(g, 0.0, hi, xtol=tol, maxiter=max_iter)
    nu = rho_tr / alpha + xi
    M, dM = trace(nu)
    a = 1.0 - 1.0 / kappa + nu * M / kappa
    f = 1.0 / (a * s + nu)
    f2 = f**2 * ((M / kappa + nu * dM / kappa) * s + 1.0)
    c_e = (rho + nu - nu**2 * M - xi * (1 - 2 * nu * M - nu**2 * dM)) / (
        tau - (1 - 2 * xi * M - xi**2 * dM)
    )
    pre = rho + rho_te / alpha * (1 + (c_e - 2 * nu) * M + (xi * c_e - nu**2) * dM)
    inter = c_e * np.mean(t * f) - (xi * c_e - nu**2) * np.mean(t * f2)
    return ICLError(float(pre + inter), float(pre), float(inter), nu, xi, M, dM, float(c_e))


def _infinite_prior(C_train, C_test, alpha, rho):
    """Validated spectra s, t and the prior ridge nu = rho_tr / alpha of the tau, kappa -> inf limit."""
    s, t = _pair(C_train, C_test)
    alpha = check_positive(alpha, "alpha")
    rho = check_nonnegative(rho, "rho")
    nu = (s.mean() + rho) / alpha
    if nu <= 0:
        raise ValueError("C_train and rho cannot both vanish")
    return s, t, nu


def icl_error_infinite(C_train, C_test, alpha, rho):
    r"""ICL error in the infinite-pretraining limit :math:`\tau,\kappa\to\infty`.

    The pretrained matrix becomes :math:`\Gamma_\infty=[C_{\rm train}F,\,0]`, with
    :math:`F=(C_{\rm train}+\nu I)^{-1}` and :math:`\nu=\rho_{\rm tr}/\alpha`, and

    .. math::
        e_\infty=\rho+\frac{\rho_{\rm te}}{\alpha}\,\frac1d\mathrm{tr}(C_{\rm train}^2F^2)
        +\nu^2\,\frac1d\mathrm{tr}(C_{\rm test}F^2).

    The last term is :func:`alignment`.

    Parameters
    ----------
    C_train, C_test : array_like, shape (d, d)
        Task covariances.
    alpha : float
        Context ratio :math:`\ell/d>0`.
    rho : float
        Label-noise variance :math:`\ge0`.

    Returns
    -------
    float

    Examples
    --------
    >>> I = np.eye(5)   # nu = 1.1: rho + 1.1/2.1^2 + 1.1^2/2.1^2
    >>> round(icl_error_infinite(I, I, 1.0, 0.1), 6)
    0.623810
    """
    s, t, nu = _infinite_prior(C_train, C_test, alpha, rho)
    f = 1.0 / (s + nu)
    rho_te = t.mean() + float(rho)
    return float(rho + rho_te / alpha * np.mean(s**2 * f**2) + nu**2 * np.mean(t * f**2))


def alignment(C_train, C_test, alpha, rho):
    r"""Misalignment term :math:`\nu^2\frac1d\mathrm{tr}\big(C_{\rm test}(C_{\rm train}+\nu I)^{-2}\big)`, :math:`\nu=\rho_{\rm tr}/\alpha`.

    The test-task power in the directions that the pretraining prior under-weights; the only place
    where :math:`C_{\rm test}` enters :func:`icl_error_infinite` other than through its trace.

    Parameters
    ----------
    C_train, C_test : array_like, shape (d, d)
        Task covariances.
    alpha : float
        Context ratio :math:`\ell/d>0`.
    rho : float
        Label-noise variance :math:`\ge0`.

    Returns
    -------
    float

    Examples
    --------
    >>> I = np.eye(5)
    >>> round(alignment(I, I, 1.0, 0.1), 6)   # 1.1^2 / 2.1^2
    0.274376
    """
    s, t, nu = _infinite_prior(C_train, C_test, alpha, rho)
    return float(nu**2 * np.mean(t / (s + nu) ** 2))


def _contexts(tasks, ell, rho, rng, n):
    """Features h (n, d+1), queries x (n, d) and targets y (n,) of n contexts.

    The draws (tokens, noise, then one uniform per context for its task) do not depend on the
    number of tasks, so equal generators give common random numbers across task counts.
    """
    k, d = tasks.shape
    X = rng.standard_normal((n, ell + 1, d)) / np.sqrt(d)
    noise = np.sqrt(rho) * rng.standard_normal((n, ell + 1))
    w = tasks[np.minimum((rng.random(n) * k).astype(int), k - 1)]
    y = np.einsum("nld,nd->nl", X, w) + noise
    h = np.empty((n, d + 1))
    h[:, :d] = np.einsum("nl,nld->nd", y[:, :ell], X[:, :ell]) * (d / ell)
    h[:, d] = np.sum(y[:, :ell] ** 2, axis=1) / ell
    return h, X[:, ell], y[:, ell]


def pretrain_linear_attention(C_train, ell, k, n, rho, rng, lam=1e-6, chunk=2000):
    r"""Pretrain reduced linear attention by ridge on :math:`n` simulated contexts.

    Draws :math:`k` tasks :math:`w_j\sim\mathcal N(0,C_{\rm train})` once, then :math:`n` contexts
    of :math:`\ell` labelled tokens plus a query (tokens :math:`\mathcal N(0,I_d/d)`, noise
    variance :math:`\rho`), each with a uniformly drawn task, and returns

    .. math::
        \Gamma^*=\arg\min_\Gamma\sum_{\mu\le n}\big(y^\mu_{\ell+1}-x^{\mu\top}_{\ell+1}\Gamma h^\mu\big)^2
        +\frac nd\lambda\|\Gamma\|_F^2 .

    The primal :math:`d(d+1)` system is solved when :math:`n\ge d(d+1)`, otherwise the dual
    :math:`n\times n` one, whose Gram matrix :math:`(x^\mu\cdot x^\nu)(h^\mu\cdot h^\nu)` costs
    :math:`O(n^2d)`.

    Parameters
    ----------
    C_train : array_like, shape (d, d)
        Pretraining task covariance.
    ell, k, n : int
        Context length, number of tasks, number of pretraining contexts.
    rho : float
        Label-noise variance.
    rng : numpy.random.Generator or int or None
        Random generator (or seed). Tasks and contexts come from two generators spawned from it, and the
        task list is the first :math:`k` rows of one draw, so two calls with generators in the same
        state share their contexts and their first tasks (common random numbers across :math:`k`).
    lam : float
        Ridge :math:`\lambda>0` (small: the theory is the ridgeless limit).
    chunk : int
        Contexts simulated at a time (bounds the memory to ``chunk * (ell+1) * d`` floats).

    Returns
    -------
    numpy.ndarray, shape (d, d+1)

    Examples
    --------
    >>> G = pretrain_linear_attention(np.eye(4), 4, 4, 40, 0.1, np.random.default_rng(0))
    >>> G.shape
    (4, 5)
    """
    C = _covariance(C_train, "C_train")
    d = C.shape[0]
    ell = check_size(ell, "ell")
    k = check_size(k, "k")
    n = check_size(n, "n")
    check_allocation((k, d), "k")
    check_allocation((ell + 1, d), "ell")
    check_allocation((n, ell + 1, d), "n")
    rho = check_nonnegative(rho, "rho")
    lam = check_positive(lam, "lam")
    chunk = check_size(chunk, "chunk")
    check_allocation((chunk, ell + 1, d), "chunk")
    rng = as_generator(rng)
    s, U = np.linalg.eigh(C)
    root = U * np.sqrt(np.clip(s, 0.0, None))
    task_rng, rng = rng.spawn(2)
    tasks = task_rng.standard_normal((k, d)) @ root.T  # the first k rows of a longer list
    p = d * (d + 1)
    ridge = n / d * lam
    if n >= p:
        A = np.zeros((p, p))
        b = np.zeros(p)
        for start in range(0, n, chunk):
            h, x, y = _contexts(tasks, ell, rho, rng, min(chunk, n - start))
            feats = (x[:, :, None] * h[:, None, :]).reshape(len(y), p)
            A += feats.T @ feats
            b += feats.T @ y
        A[np.diag_indices(p)] += ridge
        return np.linalg.solve(A, b).reshape(d, d + 1)
    h, x, y = _contexts(tasks, ell, rho, rng, n)
    K = (x @ x.T) * (h @ h.T)
    K[np.diag_indices(n)] += ridge
    a = np.linalg.solve(K, y)
    return (x * a[:, None]).T @ h


def icl_test_error(Gamma, C_test, alpha, rho):
    r"""Test error of a linear-attention matrix :math:`\Gamma=[G,g]` on tasks :math:`w\sim\mathcal N(0,C_{\rm test})`.

    The asymptotic trace formula of the authors' code (``trace_formula_gamma``), with
    :math:`\rho_{\rm te}=\frac1d\mathrm{tr}C_{\rm test}+\rho`:

    .. math::
        e(\Gamma)=\rho+\frac1d\mathrm{tr}\big[(I-G)C_{\rm test}(I-G)^\top\big]
        +\frac{\rho_{\rm te}}{\alpha}\frac1d\|G\|_F^2+\frac{\rho_{\rm te}^2}{d}\|g\|^2 .

    It drops :math:`O(1/\ell)` terms of the exact expectation, as the theory does.

    Parameters
    ----------
    Gamma : array_like, shape (d, d+1)
        Linear-attention parameters.
    C_test : array_like, shape (d, d)
        Test task covariance.
    alpha : float
        Context ratio :math:`\ell/d`.
    rho : float
        Label-noise variance.

    Returns
    -------
    float

    Examples
    --------
    >>> d = 5; G = np.hstack([np.eye(d) / 2.1, np.zeros((d, 1))])
    >>> round(icl_test_error(G, np.eye(d), 1.0, 0.1), 6)   # = icl_error_infinite(I, I, 1, 0.1)
    0.62381
    """
    Gamma = check_array(Gamma, "Gamma", ndim=2)
    C = _covariance(C_test, "C_test")
    d = C.shape[0]
    if Gamma.shape != (d, d + 1):
        raise ValueError(f"Gamma must have shape {(d, d + 1)}, got {Gamma.shape}")
    alpha = check_positive(alpha, "alpha")
    rho = check_nonnegative(rho, "rho")
    G, g = Gamma[:, :d], Gamma[:, d]
    rho_te = np.trace(C) / d + rho
    R = np.eye(d) - G
    return float(
        rho + np.sum((R @ C) * R) / d + rho_te / alpha * np.sum(G**2) / d
        + rho_te**2 * (g @ g) / d
    )
