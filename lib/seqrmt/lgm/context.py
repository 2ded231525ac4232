r"""Model 1, the context model: theory, Monte Carlo drivers, summaries and figures.

Used in: Chapter 1.3.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from .._validation import (
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
from ..stats import mean_se
from ..runtime import single_threaded_blas

__all__ = [
    "ContextTheory",
    "context_theory",
    "context_train_error_uniform",
    "context_variance_split",
    "ContextSimulation",
    "sample_context_data",
    "context_predictions",
    "shrinkage_estimate",
    "simulate_context_model",
    "pool_context_simulations",
    "simulate_context_batches",
    "context_batch_shrinkage",
    "context_batch_variance",
    "context_variance_curve",
    "context_variance_vs_samples",
    "context_gaps",
    "context_group_moments",
    "context_second_moment_gap",
    "plot_context_mean_spread",
    "plot_variance_vs_samples",
    "plot_context_ridge_path",
]

# ---------------------------------------------------------------------------
# Model 1: context model
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ContextTheory:
    r"""Deterministic predictions of Model 1 (see :func:`context_theory`).

    Attributes
    ----------
    delta : float
        :math:`\delta=\frac1c\operatorname{Tr}\bar Q`.
    alpha, beta, kappa : float
        :math:`\alpha=\frac1c\sum_a\frac{\alpha_a}{1+\alpha_a\delta}`,
        :math:`\beta=\frac1c\sum_a(\frac{\alpha_a}{1+\alpha_a\delta})^2`,
        :math:`\kappa=\eta/(\alpha+\gamma)^2`.
    tau : float
        :math:`\frac1c\operatorname{Tr}\mathbb EQ^2=\kappa/(1-\kappa\beta)=-d\delta/d\gamma`.
    D : numpy.ndarray, shape (c,)
        Shrinkage factors :math:`D_a=\alpha_a\delta/(1+\alpha_a\delta)`.
    m : numpy.ndarray, shape (k, c)
        Predicted means :math:`\mathbb E\hat p_a=D_ap_a` (columns).
    Sigma : numpy.ndarray, shape (c, k, k)
        Second moments :math:`\Sigma_a` of the empirical next-token frequencies.
    C : numpy.ndarray, shape (c, k, k)
        Second moments :math:`C_a=\mathbb E\hat p_a\hat p_a^\top`.
    train_error : float
        :math:`\frac1c\sum_a\mathbb E\|\hat p_a-p_a\|^2`.
    """

    delta: float
    alpha: float
    beta: float
    kappa: float
    tau: float
    D: np.ndarray
    m: np.ndarray
    Sigma: np.ndarray
    C: np.ndarray
    train_error: float

    @property
    def cov(self):
        r"""Covariances :math:`C_a-m_am_a^\top`, shape ``(c, k, k)``."""
        return self.C - np.einsum("ia,ja->aij", self.m, self.m)


def _solve_context_delta(weights, eta, gamma, tol, max_iter):
    def f(delta):
        alpha = np.mean(weights / (1.0 + weights * delta))
        return delta - eta / (alpha + gamma)

    hi = eta / gamma
    if f(hi) == 0.0:
        return hi
    root, info = optimize.brentq(
        f, 0.0, hi, xtol=tol, rtol=4 * np.finfo(float).eps, maxiter=max_iter,
        full_output=True, disp=False,
    )
    if not info.converged:
        raise ConvergenceError(f"context_theory: delta did not converge in max_iter={max_iter}")
    return root


def context_theory(P, weights, d, n, gamma, tol=1e-13, max_iter=200):
    r"""Deterministic predictions of Model 1, conditional on the next-token distributions.

    With :math:`\eta=d/c`, :math:`\delta` solves :math:`\delta=\eta/(\alpha(\delta)+\gamma)`
    with :math:`\alpha(\delta)=\frac1c\sum_a\alpha_a/(1+\alpha_a\delta)`, and

    .. math::
        \mathbb E\hat p_a=D_ap_a,\qquad
        C_a=D_a^2\Sigma_a+\frac{\kappa}{(1-\kappa\beta)(1+\alpha_a\delta)^2}
        \frac1c\sum_b\Big(\frac{\alpha_b}{1+\alpha_b\delta}\Big)^2\Sigma_b,

    .. math::
        \Sigma_a=\frac{c}{\alpha_an}\operatorname{Diag}(p_a)+\Big(1-\frac{c}{\alpha_an}\Big)p_ap_a^\top,\qquad
        \mathcal E_{\rm train}=\frac1c\operatorname{Tr}[P(I-2D)P^\top]+\frac1c\sum_a\operatorname{Tr}C_a.

    Parameters
    ----------
    P : array_like, shape (k, c)
        Columns are the next-token distributions :math:`p_a`.
    weights : array_like, shape (c,)
        Context weights :math:`\alpha_a>0` with mean one (context :math:`a` has
        probability :math:`\alpha_a/c`).
    d : int
        Embedding dimension.
    n : int
        Number of training samples.
    gamma : float
        Ridge :math:`\gamma>0`.
    tol, max_iter
        Tolerance and iteration cap of the root finder for :math:`\delta`.

    Returns
    -------
    ContextTheory

    Examples
    --------
    >>> P = np.full((3, 81), 1 / 3)
    >>> th = context_theory(P, np.ones(81), d=81, n=5000, gamma=1.0)
    >>> round(th.delta, 6), round(float(th.D[0]), 6)
    (0.618034, 0.381966)
    """
    P = check_prob_columns(P, "P")
    k, c = P.shape
    weights = check_positive_weights(weights, "weights", size=c, mean_one=True)
    d = check_positive_int(d, "d")
    n = check_positive_int(n, "n")
    gamma = check_positive(gamma, "gamma")
    tol = check_positive(tol, "tol")
    max_iter = check_positive_int(max_iter, "max_iter")

    eta = d / c
    delta = _solve_context_delta(weights, eta, gamma, tol, max_iter)
    u = weights / (1.0 + weights * delta)  # alpha_a / (1 + alpha_a delta)
    alpha = float(np.mean(u))
    beta = float(np.mean(u**2))
    kappa = eta / (alpha + gamma) ** 2
    if kappa * beta >= 1.0:  # pragma: no cover - excluded by the fixed point
        raise ConvergenceError("context_theory: kappa*beta >= 1, no valid solution")
    tau = kappa / (1.0 - kappa * beta)
    D = weights * delta / (1.0 + weights * delta)
    m = P * D[None, :]

    f = c / (weights * n)  # c / (alpha_a n)
    outer = np.einsum("ia,ja->aij", P, P)
    Sigma = f[:, None, None] * np.einsum("ia,ij->aij", P, np.eye(k)) + (1.0 - f)[:, None, None] * outer
    Sigma_w = np.mean(u[:, None, None] ** 2 * Sigma, axis=0)
    cross = kappa / ((1.0 - kappa * beta) * (1.0 + weights * delta) ** 2)
    C = D[:, None, None] ** 2 * Sigma + cross[:, None, None] * Sigma_w[None, :, :]

    train = float(
        np.sum(P**2 * (1.0 - 2.0 * D)[None, :]) / c + np.trace(C, axis1=1, axis2=2).mean()
    )
    return ContextTheory(
        delta=float(delta), alpha=alpha, beta=beta, kappa=float(kappa), tau=float(tau),
        D=D, m=m, Sigma=Sigma, C=C, train_error=train,
    )


def context_train_error_uniform(s, d, c, n, gamma):
    r"""Model-1 training error for uniform weights, as a function of :math:`s=\frac1c\sum_a\|p_a\|^2`.

    .. math::
        \mathcal E_{\rm train}=(1-2D)s+\Big[D^2+\frac{\kappa\beta}{(1-\kappa\beta)(1+\delta)^2}\Big]
        \Big(\frac cn+\Big(1-\frac cn\Big)s\Big),

    with :math:`D=\delta/(1+\delta)`, :math:`\beta=(1+\delta)^{-2}`, :math:`\eta=d/c`.
    Passing :math:`\bar s` (:func:`expected_softmax_sq_norm`) gives the error averaged over the logits.

    Parameters
    ----------
    s : float
        Mean squared norm of the next-token distributions, in :math:`(0, 1]`.
    d, c, n : int
        Dimension, number of contexts, number of samples.
    gamma : float or array_like
        Ridge :math:`\gamma>0`.

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    >>> round(float(context_train_error_uniform(0.50361, 81, 81, 5000, 0.1)), 6)
    0.083603
    """
    s = check_positive(s, "s")
    if s > 1.0:
        raise ValueError(f"s must lie in (0, 1], got {s}")
    d = check_positive_int(d, "d")
    c = check_positive_int(c, "c")
    n = check_positive_int(n, "n")
    gamma = check_array(gamma, "gamma", positive=True)
    eq = ridge_equivalent(d / c, gamma)
    delta = np.asarray(eq.delta)
    D = delta / (1.0 + delta)
    beta = (1.0 + delta) ** -2
    kappa = (d / c) / (1.0 / (1.0 + delta) + gamma) ** 2
    kb = kappa * beta
    err = (1.0 - 2.0 * D) * s + (D**2 + kb / ((1.0 - kb) * (1.0 + delta) ** 2)) * (
        c / n + (1.0 - c / n) * s
    )
    return float(err) if np.ndim(err) == 0 else err


def context_variance_split(theory):
    r"""Split the mean prediction variance of Model 1 into token noise and embedding leakage.

    From :func:`context_theory`, :math:`\operatorname{Tr}\operatorname{Cov}\hat p_a=
    \operatorname{Tr}C_a-D_a^2\|p_a\|^2` is the sum of

    * the **token noise** :math:`D_a^2\operatorname{Tr}(\Sigma_a-p_ap_a^\top)=
      D_a^2\frac{c}{\alpha_an}(1-\|p_a\|^2)`, the sampling noise of the context's own
      frequencies, which vanishes as :math:`n/c\to\infty`, and
    * the **leakage** :math:`\operatorname{Tr}C_a-D_a^2\operatorname{Tr}\Sigma_a`, the
      cross term through the other contexts' embeddings, which tends to a positive limit
      as :math:`n\to\infty` at fixed :math:`c,d`.

    Parameters
    ----------
    theory : ContextTheory
        The output of :func:`context_theory`.

    Returns
    -------
    tuple of float
        ``(token_noise, leakage)``, each averaged over the contexts.

    Examples
    --------
    >>> P = np.full((3, 4), 1 / 3)
    >>> th = context_theory(P, np.ones(4), 8, 400, 0.1)
    >>> tok, leak = context_variance_split(th)
    >>> total = np.mean(np.trace(th.cov, axis1=1, axis2=2))
    >>> bool(abs(tok + leak - total) < 1e-12)
    True
    """
    if not isinstance(theory, ContextTheory):
        raise ValueError(f"theory must be a ContextTheory, got {type(theory).__name__}")
    P = theory.m / np.where(theory.D > 0, theory.D, 1.0)  # columns p_a
    tr_sigma = np.trace(theory.Sigma, axis1=1, axis2=2)
    token = theory.D**2 * (tr_sigma - np.sum(P**2, axis=0))
    leak = np.trace(theory.C, axis1=1, axis2=2) - theory.D**2 * tr_sigma
    return float(np.mean(token)), float(np.mean(leak))


@dataclass(frozen=True)
class ContextSimulation:
    r"""Monte Carlo estimates for Model 1 (see :func:`simulate_context_model`).

    Every array has a leading axis over the ridge grid ``gamma``.

    Attributes
    ----------
    gamma : numpy.ndarray, shape (g,)
    n_eff : int
        Number of samples actually used (``sum(counts)``; equals ``n`` for multinomial counts).
    m : numpy.ndarray, shape (g, k, c)
        Mean of :math:`\hat p_a` over trials.
    C : numpy.ndarray, shape (g, c, k, k)
        Mean of :math:`\hat p_a\hat p_a^\top` over trials.
    train_error : numpy.ndarray, shape (g, n_trials)
        :math:`\frac1c\sum_a\|\hat p_a-p_a\|^2` per trial.
    delta : numpy.ndarray, shape (g, n_trials)
        :math:`\frac1c\operatorname{Tr}Q` per trial (estimates :math:`\delta`).
    realised_weights : numpy.ndarray, shape (n_trials, c)
        The weights :math:`\tilde\alpha_a=c\,n_a/n` realised by each trial's context counts.
    """

    gamma: np.ndarray
    n_eff: int
    m: np.ndarray
    C: np.ndarray
    train_error: np.ndarray
    delta: np.ndarray
    realised_weights: np.ndarray

    @property
    def cov(self):
        r"""Monte Carlo covariances :math:`C_a-m_am_a^\top`, shape ``(g, c, k, k)``."""
        if self.C is None:
            raise ValueError("cov needs the second moments: simulate with keep_second_moment=True")
        return self.C - np.einsum("gia,gja->gaij", self.m, self.m)

    train_error_mean = property(lambda self: _trial_mean(self.train_error),
                                doc="Mean training error per ridge value.")
    train_error_se = property(lambda self: _trial_se(self.train_error),
                              doc="Standard error of :attr:`train_error_mean`.")


def sample_context_data(P, weights, d, n, rng=None):
    r"""Draw one training set of Model 1 sample by sample.

    Parameters
    ----------
    P : array_like, shape (k, c)
        Next-token distributions (columns).
    weights : array_like, shape (c,)
        Context weights with mean one.
    d : int
        Embedding dimension.
    n : int
        Number of samples.
    rng : int, numpy.random.Generator or None

    Returns
    -------
    Z : numpy.ndarray, shape (d, c)
        Context embeddings :math:`z_a\sim N(0,I_d)`.
    contexts : numpy.ndarray of int, shape (n,)
        :math:`a_i`, drawn with probabilities :math:`\alpha_a/c`.
    tokens : numpy.ndarray of int, shape (n,)
        Next tokens :math:`y_i\sim\mathrm{Cat}(p_{a_i})`; the data matrix is ``Z[:, contexts]``.

    Used in: Chapter 1, "A linear generative model of next tokens".
    """
    P = check_prob_columns(P, "P")
    k, c = P.shape
    weights = check_positive_weights(weights, "weights", size=c, mean_one=True)
    d = check_size(d, "d")
    n = check_size(n, "n")
    rng = as_generator(rng)
    Z = rng.standard_normal((d, c))
    contexts = rng.choice(c, size=n, p=weights / weights.sum())
    tokens = np.minimum((rng.random(n) > np.cumsum(P[:, contexts], axis=0)).sum(axis=0), k - 1)
    return Z, contexts, tokens


def context_predictions(Z, counts, gamma):
    r"""Ridge predictions of Model 1 from the count matrix: :math:`\hat P=Z^\top QZN/n`.

    With :math:`N_{aj}` the number of samples with context :math:`a` and next token :math:`j`,
    :math:`\frac1nXX^\top=Z\operatorname{diag}(n_a/n)Z^\top` and :math:`XY^\top=ZN`, so the
    ridge fit never needs the :math:`d\times n` data matrix. One eigendecomposition serves
    every ridge value.

    Parameters
    ----------
    Z : array_like, shape (d, c)
        Context embeddings (columns).
    counts : array_like, shape (c, k)
        Count matrix :math:`N` (non-negative integers, at least one sample).
    gamma : float or array_like
        Ridge value(s) :math:`\gamma>0`.

    Returns
    -------
    P_hat : numpy.ndarray, shape (g, k, c)
        Predictions :math:`\hat p_a=W^\top z_a` as columns, one slice per ridge value.
    delta_hat : numpy.ndarray, shape (g,)
        :math:`\frac1c\operatorname{Tr}Q(\gamma)`.

    Used in: Chapter 1, "A linear generative model of next tokens".
    """
    Z = check_array(Z, "Z", ndim=2)
    d, c = Z.shape
    N = check_int_array(counts, "counts", low=0, ndim=2).astype(float)
    if N.shape[0] != c:
        raise ValueError(f"counts must have c={c} rows to match Z, got shape {N.shape}")
    if N.sum() <= 0:
        raise ValueError("counts must be non-negative with a positive total")
    gammas = np.atleast_1d(check_array(gamma, "gamma", positive=True)).ravel()
    n = N.sum()
    lam, U = np.linalg.eigh((Z * (N.sum(axis=1) / n)) @ Z.T)
    B = U.T @ Z  # (d, c)
    BN = B @ N / n  # (d, k)
    P_hat = np.stack([(BN / (lam + g)[:, None]).T @ B for g in gammas])  # (g, k, c)
    delta_hat = np.sum(1.0 / (lam[None, :] + gammas[:, None]), axis=1) / c
    return P_hat, delta_hat


def shrinkage_estimate(m, P):
    r"""Empirical shrinkage :math:`\hat D_a=\langle m_a,p_a\rangle/\|p_a\|^2` of predicted means.

    Parameters
    ----------
    m : array_like, shape (..., k, c)
        Mean predictions (columns), e.g. the field ``m`` of :class:`ContextSimulation`.
    P : array_like, shape (k, c)
        True next-token distributions (columns are probability vectors).

    Raises
    ------
    ValueError
        If a column of ``P`` is not a probability vector, or ``m`` does not end with ``P``'s shape.

    Returns
    -------
    numpy.ndarray, shape (..., c)

    Used in: Chapter 1, "A linear generative model of next tokens".
    """
    P = check_prob_columns(P, "P")
    m = check_array(m, "m")
    if m.shape[-2:] != P.shape:
        raise ValueError(f"m must end with shape {P.shape}, got {m.shape}")
    return np.sum(m * P, axis=-2) / np.sum(P**2, axis=0)


def simulate_context_model(
    P, weights, d, n, gamma, n_trials, rng=None, counts="multinomial", keep_second_moment=True,
    jobs=None,
):
    r"""Monte Carlo of Model 1 without ever forming the :math:`n\times d` data matrix.

    Each trial draws :math:`Z\in\mathbb R^{d\times c}` with iid :math:`N(0,1)` entries,
    context counts :math:`n_a`, next-token counts :math:`N_{a\cdot}\sim\mathrm{Mult}(n_a,p_a)`,
    and computes :math:`\hat P^\top=Z^\top QZN/n` with
    :math:`Q=(Z\operatorname{diag}(n_a/n)Z^\top+\gamma I)^{-1}` from one eigendecomposition,
    reused for every ridge value. Trial ``t`` draws from its own generator, the ``t``-th child
    of ``rng`` (:func:`seqrmt.ensemble.run_ensemble`), so the result does not depend on
    ``jobs``.

    Parameters
    ----------
    P : array_like, shape (k, c)
        Next-token distributions (columns), held fixed across trials.
    weights : array_like, shape (c,)
        Context weights with mean one.
    d : int
        Embedding dimension.
    n : int
        Number of samples.
    gamma : float or array_like
        Ridge value(s).
    n_trials : int
        Number of independent trials.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None
        Root of the trials' generators (see :func:`seqrmt.ensemble.spawn_generators`).
    counts : {"multinomial", "fixed"}
        ``"multinomial"`` draws :math:`(n_a)\sim\mathrm{Mult}(n,\alpha/c)`; ``"fixed"``
        uses :math:`n_a=\operatorname{round}(\alpha_an/c)` (then ``n_eff = sum(n_a)``).
    keep_second_moment : bool
        Accumulate :math:`\hat p_a\hat p_a^\top` (costs ``c*k*k`` per ridge value).
    jobs : int or None
        Workers (see :func:`seqrmt.ensemble.n_jobs`).

    Returns
    -------
    ContextSimulation

    Examples
    --------
    >>> P = softmax_distributions(3, 9, 0.9, rng=0)
    >>> a = simulate_context_model(P, np.ones(9), 9, 90, [0.1], 4, rng=1)
    >>> b = simulate_context_model(P, np.ones(9), 9, 90, [0.1], 4, rng=1, jobs=2)
    >>> bool(np.array_equal(a.train_error, b.train_error))
    True
    """
    P = check_prob_columns(P, "P")
    k, c = P.shape
    weights = check_positive_weights(weights, "weights", size=c, mean_one=True)
    d = check_size(d, "d")
    n = check_size(n, "n")
    gammas = np.atleast_1d(check_array(gamma, "gamma", positive=True)).ravel()
    n_trials = check_size(n_trials, "n_trials")
    if counts not in ("multinomial", "fixed"):
        raise ValueError(f"counts must be 'multinomial' or 'fixed', got {counts!r}")
    root = check_seed(rng)

    if counts == "fixed":
        fixed = np.rint(weights * n / c).astype(int)
        if np.any(fixed < 1):
            raise ValueError("n is too small: some context would have no sample")
        n_eff = int(fixed.sum())
    else:
        fixed, n_eff = None, n
    g = len(gammas)
    m_sum = np.zeros((g, k, c))
    C_sum = np.zeros((g, c, k, k)) if keep_second_moment else None
    errs = np.empty((g, n_trials))
    deltas = np.empty((g, n_trials))
    realised = np.empty((n_trials, c))
    with single_threaded_blas():  # one context for the whole loop: entering it costs milliseconds
        trials = run_ensemble(_context_trial, n_trials, root, args=(P, weights, d, n, gammas, fixed),
                              jobs=jobs, desc="trials")
    for t, (P_hat, deltas[:, t], n_a) in enumerate(trials):  # (g, k, c), columns p_hat_a
        realised[t] = c * n_a / n_eff
        m_sum += P_hat
        if keep_second_moment:
            C_sum += np.einsum("gia,gja->gaij", P_hat, P_hat)
        errs[:, t] = np.sum((P_hat - P) ** 2, axis=(1, 2)) / c
    m = m_sum / n_trials
    C = C_sum / n_trials if keep_second_moment else None
    return ContextSimulation(gammas, n_eff, m, C, errs, deltas, realised)


def _context_trial(rng, P, weights, d, n, gammas, fixed):
    """One trial of :func:`simulate_context_model`: predictions, Tr Q / c and the counts n_a."""
    c = P.shape[1]
    Z = rng.standard_normal((d, c))
    n_a = fixed if fixed is not None else rng.multinomial(n, weights / c)
    N = rng.multinomial(n_a, P.T)  # (c, k) next-token counts
    P_hat, delta = context_predictions(Z, N, gammas)
    return P_hat, delta, n_a


def pool_context_simulations(sims):
    r"""Pool independent runs of :func:`simulate_context_model` into one.

    Running the Monte Carlo as several independent batches gives batch means,
    from which the standard error of any statistic of the pooled means (for
    example a shrinkage averaged over contexts) can be estimated; this function
    returns the pooled simulation used for everything else.

    Parameters
    ----------
    sims : sequence of ContextSimulation
        Runs with the same ridge grid, sample count and shapes. The second
        moments are pooled only if every run kept them.

    Returns
    -------
    ContextSimulation
        Means weighted by the number of trials of each run; per-trial arrays
        concatenated.

    Examples
    --------
    >>> P = softmax_distributions(3, 9, 0.9, rng=0)
    >>> runs = [simulate_context_model(P, np.ones(9), 9, 90, [0.1], 5, rng=s)
    ...         for s in (1, 2)]
    >>> pool_context_simulations(runs).train_error.shape
    (1, 10)
    """
    if isinstance(sims, ContextSimulation) or not isinstance(sims, (list, tuple)):
        raise ValueError("sims must be a non-empty list or tuple of ContextSimulation")
    sims = list(sims)
    if not sims or not all(isinstance(s, ContextSimulation) for s in sims):
        raise ValueError("sims must be a non-empty sequence of ContextSimulation")
    first = sims[0]
    for s in sims[1:]:
        if (s.n_eff != first.n_eff or s.m.shape != first.m.shape
                or not np.array_equal(s.gamma, first.gamma)):
            raise ValueError("sims must share the ridge grid, n_eff and shapes")
    t = np.array([s.train_error.shape[1] for s in sims], dtype=float)
    w = t / t.sum()
    m = sum(wi * s.m for wi, s in zip(w, sims))
    keep = all(s.C is not None for s in sims)
    C = sum(wi * s.C for wi, s in zip(w, sims)) if keep else None
    return ContextSimulation(
        first.gamma, first.n_eff, m, C,
        np.concatenate([s.train_error for s in sims], axis=1),
        np.concatenate([s.delta for s in sims], axis=1),
        np.concatenate([s.realised_weights for s in sims], axis=0),
    )


def simulate_context_batches(P, weights, d, n, gamma, n_trials, rng=None, n_batches=10,
                             counts="multinomial", keep_second_moment=True, jobs=None):
    r"""Independent batches of :func:`simulate_context_model`, for batch-mean error bars.

    Runs ``n_batches`` independent simulations of ``n_trials // n_batches`` trials each;
    batch ``b`` is :func:`simulate_context_model` with the ``b``-th child of ``rng``
    (:func:`seqrmt.ensemble.spawn_generators`) as its root. The spread of a statistic over
    the batches gives its standard error (see :func:`~seqrmt.stats.mean_se`);
    :func:`pool_context_simulations` pools the batches into one simulation.

    Parameters
    ----------
    P, weights, d, n, gamma
        As in :func:`simulate_context_model`.
    n_trials : int
        Total number of trials, at least ``2 * n_batches``.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None
        Root of the batches' generators.
    n_batches : int
        Number of batches, at least 2.
    counts, keep_second_moment, jobs
        As in :func:`simulate_context_model`.

    Returns
    -------
    list of ContextSimulation
        One simulation per batch.

    Examples
    --------
    >>> P = softmax_distributions(3, 9, 0.9, rng=0)
    >>> bs = simulate_context_batches(P, np.ones(9), 9, 90, [0.1], 8, rng=1,
    ...                               n_batches=4)
    >>> len(bs), bs[0].train_error.shape
    (4, (1, 2))
    """
    n_trials = check_size(n_trials, "n_trials")
    n_batches = check_size(n_batches, "n_batches", minimum=2)
    if n_trials < 2 * n_batches:
        raise ValueError(f"n_trials must be at least 2 * n_batches = {2 * n_batches}, got {n_trials}")
    return [
        simulate_context_model(P, weights, d, n, gamma, n_trials // n_batches, child,
                               counts=counts, keep_second_moment=keep_second_moment, jobs=jobs)
        for child in spawn_generators(check_seed(rng), n_batches)
    ]


def _check_theories(theories, n_gamma):
    """Validate a list of ContextTheory, one per ridge value."""
    if not isinstance(theories, (list, tuple)) or len(theories) != n_gamma or not all(
            isinstance(t, ContextTheory) for t in theories):
        raise ValueError("theories must be a list of ContextTheory, one per ridge value")


def _check_batches(batches, second_moment=False):
    """Validate a non-empty list of ContextSimulation (with second moments if asked)."""
    if not isinstance(batches, (list, tuple)) or not batches or not all(
            isinstance(b, ContextSimulation) for b in batches):
        raise ValueError("batches must be a non-empty list or tuple of ContextSimulation")
    if second_moment and any(b.C is None for b in batches):
        raise ValueError("batches must keep the second moments (keep_second_moment=True)")
    return list(batches)

def _group_means(x, groups):
    """Means of ``x`` over its last axis, within each boolean mask of ``groups``."""
    if groups is None:
        return x.mean(axis=-1)
    masks = [np.asarray(g, dtype=bool) for g in groups]
    if not masks or any(m.shape != x.shape[-1:] or not m.any() for m in masks):
        raise ValueError(f"groups must be non-empty boolean masks of length {x.shape[-1]}")
    return np.stack([x[..., m].mean(axis=-1) for m in masks], axis=-1)


def context_batch_shrinkage(batches, P, groups=None):
    r"""Empirical shrinkage :math:`\hat D_a` of each batch, averaged over (groups of) contexts.

    Parameters
    ----------
    batches : list of ContextSimulation
        Independent batches, e.g. from :func:`simulate_context_batches`.
    P : array_like, shape (k, c)
        True next-token distributions.
    groups : sequence of boolean arrays of shape (c,), optional
        Average within each group of contexts instead of over all contexts.

    Returns
    -------
    numpy.ndarray, shape (b, g) or (b, g, len(groups))
        :math:`\frac1{|G|}\sum_{a\in G}\hat D_a` (:func:`shrinkage_estimate`) per batch
        and ridge value.

    Examples
    --------
    >>> P = softmax_distributions(3, 9, 0.9, rng=0)
    >>> bs = simulate_context_batches(P, np.ones(9), 9, 90, [0.1, 1], 6, rng=1,
    ...                               n_batches=3)
    >>> context_batch_shrinkage(bs, P).shape
    (3, 2)
    """
    batches = _check_batches(batches)
    D = np.array([shrinkage_estimate(b.m, P) for b in batches])  # (b, g, c)
    return _group_means(D, groups)


def context_batch_variance(batches):
    r"""Unbiased :math:`\operatorname{Tr}\operatorname{Cov}\hat p_a` of each batch and context.

    The batch covariances of :class:`ContextSimulation` divide by the number of trials
    :math:`t`; this function multiplies their traces by :math:`t/(t-1)`.

    Parameters
    ----------
    batches : list of ContextSimulation
        Independent batches with second moments, each of at least two trials.

    Returns
    -------
    numpy.ndarray, shape (b, g, c)

    Examples
    --------
    >>> P = softmax_distributions(3, 9, 0.9, rng=0)
    >>> bs = simulate_context_batches(P, np.ones(9), 9, 90, [0.1], 6, rng=1,
    ...                               n_batches=3)
    >>> v = context_batch_variance(bs)
    >>> v.shape, bool(np.all(v > 0))
    ((3, 1, 9), True)
    """
    batches = _check_batches(batches, second_moment=True)
    out = []
    for b in batches:
        t = b.train_error.shape[1]
        if t < 2:
            raise ValueError("batches must have at least two trials each")
        out.append(np.trace(b.cov, axis1=2, axis2=3) * t / (t - 1))
    return np.array(out)


def context_variance_curve(P, weights, d, n, gamma):
    r"""Token noise and leakage (:func:`context_variance_split`) over a grid of sample sizes.

    Parameters
    ----------
    P, weights, d
        As in :func:`context_theory`.
    n : array_like of int, shape (m,)
        Sample sizes.
    gamma : float
        Ridge.

    Returns
    -------
    numpy.ndarray, shape (m, 2)
        Columns: token noise and leakage, averaged over the contexts; their sum is the
        mean of :math:`\operatorname{Tr}\operatorname{Cov}\hat p_a`.

    Examples
    --------
    >>> P = np.full((3, 4), 1 / 3)
    >>> v = context_variance_curve(P, np.ones(4), 8, [40, 400, 4000], 0.1)
    >>> bool(np.all(np.diff(v[:, 0]) < 0))  # token noise falls with n
    True
    """
    n = check_int_array(n, "n", low=1, ndim=1)
    return np.array([context_variance_split(context_theory(P, weights, d, int(m), gamma))
                     for m in n])


def context_variance_vs_samples(P, weights, d, samples_per_context, gamma, n_trials,
                                rng=None, n_batches=10, jobs=None):
    r"""Monte Carlo mean prediction variance at several numbers of samples per context.

    For each :math:`n/c` in ``samples_per_context``, runs :func:`simulate_context_batches`
    with fixed counts and :math:`n=c\cdot n/c`, and averages the unbiased
    :math:`\operatorname{Tr}\operatorname{Cov}\hat p_a` over the contexts. Sample size ``j``
    has the ``j``-th child of ``rng`` as its root.

    Parameters
    ----------
    P, weights, d
        As in :func:`simulate_context_model`.
    samples_per_context : array_like of int, shape (m,)
        Values of :math:`n/c`.
    gamma : float
        Ridge.
    n_trials : int
        Trials per sample size, split into ``n_batches`` batches.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None
        Root of the generators (see :func:`seqrmt.ensemble.spawn_generators`).
    n_batches : int
    jobs : int or None
        Workers (see :func:`seqrmt.ensemble.n_jobs`).

    Returns
    -------
    numpy.ndarray, shape (n_batches, m)
        :math:`\frac1c\sum_a\operatorname{Tr}\operatorname{Cov}\hat p_a` per batch; feed it
        to :func:`~seqrmt.stats.mean_se`.

    Examples
    --------
    >>> P = softmax_distributions(3, 9, 0.9, rng=0)
    >>> v = context_variance_vs_samples(P, np.ones(9), 9, [5, 50], 0.1, 8, rng=1,
    ...                                 n_batches=4)
    >>> v.shape
    (4, 2)
    """
    P = check_prob_columns(P, "P")
    sizes = check_int_array(samples_per_context, "samples_per_context", low=1, ndim=1)
    gamma = check_positive(gamma, "gamma")
    root = check_seed(rng)
    c = P.shape[1]
    for m in sizes:
        check_size(c * int(m), "samples_per_context")
    out = []
    for m, child in zip(sizes, spawn_generators(root, len(sizes))):
        bs = simulate_context_batches(P, weights, d, c * int(m), [gamma], n_trials, child,
                                      n_batches, counts="fixed", jobs=jobs)
        out.append(context_batch_variance(bs)[:, 0].mean(axis=1))
    return np.array(out).T


def context_gaps(sim, reference, gamma=None):
    r"""Relative gaps (%) of simulated training error and :math:`\frac1c\operatorname{Tr}Q` to theory.

    Parameters
    ----------
    sim : ContextSimulation
    reference : sequence of ContextTheory, or array_like of shape (h, 2)
        Theory at each ridge value of ``gamma``: objects with ``train_error`` and
        ``delta`` attributes, or rows ``(train_error, delta)``.
    gamma : array_like, shape (h,), optional
        Ridge values compared, each matched to the nearest one of ``sim.gamma``
        (default: ``sim.gamma``).

    Returns
    -------
    numpy.ndarray, shape (h, 4)
        Per ridge: :math:`100(\bar e/e-1)`, its standard error :math:`100\,\mathrm{se}/e`,
        then the same for :math:`\delta`, with :math:`\bar e` the Monte Carlo mean.

    Examples
    --------
    >>> P = softmax_distributions(3, 9, 0.9, rng=0)
    >>> sim = simulate_context_model(P, np.ones(9), 9, 90, [0.1], 20, rng=1)
    >>> ref = [[sim.train_error_mean[0], np.mean(sim.delta[0])]]
    >>> np.round(context_gaps(sim, ref)[:, [0, 2]], 12)
    array([[0., 0.]])
    """
    if not isinstance(sim, ContextSimulation):
        raise ValueError(f"sim must be a ContextSimulation, got {type(sim).__name__}")
    if gamma is None:
        idx = np.arange(sim.gamma.size)
    else:
        gamma = np.atleast_1d(check_array(gamma, "gamma", positive=True)).ravel()
        idx = np.argmin(np.abs(sim.gamma[None, :] - gamma[:, None]), axis=1)
    if isinstance(reference, (list, tuple)) and reference and all(
            isinstance(t, ContextTheory) for t in reference):
        reference = [(t.train_error, t.delta) for t in reference]
    ref = check_array(reference, "reference", shape=(idx.size, 2), positive=True)
    out = []
    for (e_ref, d_ref), i in zip(ref, idx):
        row = []
        for x, r in ((sim.train_error[i], e_ref), (sim.delta[i], d_ref)):
            se = mean_se(x)[1] if x.size > 1 else np.nan
            row += [100 * (x.mean() / r - 1), 100 * se / r]
        out.append(row)
    return np.array(out)


def context_group_moments(batches, theories, P, groups, spread="variance"):
    r"""Shrinkage and spread of the predictions within groups of contexts: theory vs Monte Carlo.

    For each ridge value and group :math:`G` of contexts, compares

    * the mean shrinkage :math:`\frac1{|G|}\sum_{a\in G}D_a` of :func:`context_theory` with
      its batch-mean estimate from :func:`context_batch_shrinkage`, and
    * the mean spread over the group, :math:`\operatorname{Tr}\operatorname{Cov}\hat p_a`
      (``spread="variance"``) or its square root (``spread="sd"``), as a relative gap
      (%) of the Monte Carlo value (:func:`context_batch_variance`) to theory.

    Standard errors come from the spread over the independent batches (:func:`~seqrmt.stats.mean_se`).

    Parameters
    ----------
    batches : list of ContextSimulation
        Independent batches with second moments.
    theories : sequence of ContextTheory
        Theory at each ridge value of the batches.
    P : array_like, shape (k, c)
    groups : sequence of boolean arrays of shape (c,)
    spread : {"variance", "sd"}

    Returns
    -------
    dict of numpy.ndarray, each of shape (g, len(groups))
        ``D_theory``, ``D_mc``, ``D_se``, ``spread_gap``, ``spread_gap_se``.

    Examples
    --------
    >>> P = softmax_distributions(3, 8, 0.9, rng=0)
    >>> w = np.repeat([0.5, 1.5], 4)
    >>> bs = simulate_context_batches(P, w, 8, 400, [0.1], 6, rng=1, n_batches=3,
    ...                               counts="fixed")
    >>> th = [context_theory(P, w, 8, bs[0].n_eff, 0.1)]
    >>> out = context_group_moments(bs, th, P, [w < 1, w > 1])
    >>> out["D_mc"].shape
    (1, 2)
    """
    batches = _check_batches(batches, second_moment=True)
    if spread not in ("variance", "sd"):
        raise ValueError(f"spread must be 'variance' or 'sd', got {spread!r}")
    _check_theories(theories, batches[0].gamma.size)
    power = 1.0 if spread == "variance" else 0.5
    v_th = np.array([np.trace(t.cov, axis1=1, axis2=2) for t in theories]) ** power  # (g, c)
    v_b = context_batch_variance(batches) ** power  # (b, g, c)
    D_mc, D_se = mean_se(context_batch_shrinkage(batches, P, groups))
    gap, gap_se = mean_se(100 * (_group_means(v_b, groups) / _group_means(v_th, groups) - 1))
    D_th = _group_means(np.array([t.D for t in theories]), groups)
    return {"D_theory": D_th, "D_mc": D_mc, "D_se": D_se, "spread_gap": gap, "spread_gap_se": gap_se}


def context_second_moment_gap(batches, theories):
    r"""Distance of the Monte Carlo second moments :math:`C_a` to theory, in units of their noise.

    Returns :math:`\|\bar C-C\|_F/\sigma` per ridge value, where :math:`\bar C` is the mean
    of the batch second moments (all contexts stacked) and
    :math:`\sigma^2=\sum\operatorname{Var}/b` sums the batch variances of its entries
    divided by the number of batches :math:`b`; a value near 1 means the gap is noise.

    Parameters
    ----------
    batches : list of ContextSimulation
        Independent batches with second moments.
    theories : sequence of ContextTheory
        Theory at each ridge value of the batches.

    Returns
    -------
    numpy.ndarray, shape (g,)

    Examples
    --------
    >>> P = softmax_distributions(3, 8, 0.9, rng=0)
    >>> bs = simulate_context_batches(P, np.ones(8), 8, 400, [0.1], 40, rng=1,
    ...                               n_batches=4)
    >>> th = [context_theory(P, np.ones(8), 8, 400, 0.1)]
    >>> context_second_moment_gap(bs, th).shape
    (1,)
    """
    batches = _check_batches(batches, second_moment=True)
    _check_theories(theories, batches[0].gamma.size)
    if len(batches) < 2:
        raise ValueError("batches must hold at least two batches")
    C_b = np.array([b.C for b in batches])  # (b, g, c, k, k)
    out = []
    for i, t in enumerate(theories):
        noise = np.sqrt(np.sum(C_b[:, i].var(axis=0, ddof=1)) / len(batches))
        out.append(np.linalg.norm(C_b[:, i].mean(axis=0) - t.C) / noise)
    return np.array(out)


# ---------------------------------------------------------------------------
# Model 1: figures
# ---------------------------------------------------------------------------


def plot_context_mean_spread(ax, P, context, theory, sim, index, labels=None):
    r"""Draw true, predicted and simulated :math:`\hat p_a` for one context, with spreads.

    Calls :func:`seqrmt.plotting.mean_spread` with the true :math:`p_a`, the predicted
    mean :math:`D_ap_a` with the predicted standard deviations
    :math:`\sqrt{\operatorname{Cov}(\hat p_a)_{jj}}`, and the Monte Carlo mean and
    standard deviations.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    P : array_like, shape (k, c)
    context : int
        The context :math:`a`.
    theory : ContextTheory
        Theory at the ridge value drawn.
    sim : ContextSimulation
        Simulation with second moments.
    index : int
        Position of that ridge value in ``sim.gamma``.
    labels : list of str, optional
        Tick labels (default ``"token 1"``, ...).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> P = softmax_distributions(3, 4, 0.9, rng=0)
    >>> sim = simulate_context_model(P, np.ones(4), 4, 80, [0.1], 5, rng=1)
    >>> th = context_theory(P, np.ones(4), 4, 80, 0.1)
    >>> fig, ax = plt.subplots()
    >>> _ = plot_context_mean_spread(ax, P, 2, th, sim, 0)
    >>> plt.close(fig)
    """
    from .._validation import check_axes  # noqa: PLC0415
    check_axes(ax)
    from ..plotting import mean_spread

    P = check_prob_columns(P, "P")
    k, c = P.shape
    a = check_int_array(context, "context", low=0, high=c, ndim=0).item()
    if not isinstance(theory, ContextTheory):
        raise ValueError(f"theory must be a ContextTheory, got {type(theory).__name__}")
    if not isinstance(sim, ContextSimulation):
        raise ValueError(f"sim must be a ContextSimulation, got {type(sim).__name__}")
    i = check_int_array(index, "index", low=0, high=sim.gamma.size, ndim=0).item()
    sd_th = np.sqrt(np.diag(theory.cov[a]))
    sd_mc = np.sqrt(np.diag(sim.cov[i][a]))
    if labels is None:
        labels = [f"token {j + 1}" for j in range(k)]
    return mean_spread(ax, P[:, a], theory.m[:, a], sd_th, sim.m[i][:, a], sd_mc, labels=labels)


def plot_variance_vs_samples(ax, samples_per_context, split, mc_samples_per_context, mc_mean, mc_err):
    r"""Draw the prediction variance against :math:`n/c`: token noise, leakage, total and Monte Carlo.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    samples_per_context : array_like, shape (m,)
        Grid of :math:`n/c` for the theory curves.
    split : array_like, shape (m, 2)
        Token noise and leakage on that grid (:func:`context_variance_curve`).
    mc_samples_per_context, mc_mean, mc_err : array_like, shape (p,)
        Monte Carlo abscissae, means and error bars.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> x = np.array([1.0, 10.0])
    >>> _ = plot_variance_vs_samples(ax, x, [[1.0, 0.1], [0.1, 0.1]], x,
    ...                              [1.1, 0.2], [0.1, 0.02])
    >>> plt.close(fig)
    """
    from .._validation import check_axes  # noqa: PLC0415
    check_axes(ax)
    from ..plotting import SIM_COLOR, THEORY_COLOR

    x = check_array(samples_per_context, "samples_per_context", ndim=1, positive=True)
    split = check_array(split, "split", shape=(x.size, 2))
    x_mc = check_array(mc_samples_per_context, "mc_samples_per_context", ndim=1, positive=True)
    mc_mean = check_array(mc_mean, "mc_mean", shape=(x_mc.size,))
    mc_err = check_array(mc_err, "mc_err", shape=(x_mc.size,))
    ax.plot(x, split.sum(axis=1), color=THEORY_COLOR, label="theory, total")
    ax.plot(x, split[:, 0], ":", color="k", lw=1.5, label="token noise")
    ax.plot(x, split[:, 1], "--", color="k", lw=1.5, label="leakage")
    ax.errorbar(x_mc, mc_mean, mc_err, fmt="o", mfc="white", capsize=3, color=SIM_COLOR,
                label="Monte Carlo")
    ax.set(xscale="log", yscale="log", xlabel="samples per context $n/c$",
           ylabel=r"$\frac{1}{c}\sum_a\mathrm{tr}\,\mathrm{Cov}\,\hat p_a$")
    ax.legend(loc="upper right")
    return ax


def plot_context_ridge_path(axes, P, weights, d, n, gamma, sim, shrinkage, color=None, label=None):
    r"""Draw the mean shrinkage and the training error of Model 1 against the ridge.

    Left axis: :math:`\frac1c\sum_aD_a` of :func:`context_theory` (curve) and a Monte Carlo
    estimate (points). Right axis: the training error, theory (curve) and
    ``sim.train_error_mean`` with two standard errors (points).

    Parameters
    ----------
    axes : pair of matplotlib.axes.Axes
    P, weights, d, n
        As in :func:`context_theory`.
    gamma : array_like, shape (m,)
        Ridge grid of the theory curves.
    sim : ContextSimulation
        Simulation at the ridge values ``sim.gamma``.
    shrinkage : array_like, shape (len(sim.gamma),)
        Monte Carlo shrinkage at those ridge values.
    color, label : str, optional
        Shared colour; legend entry of the shrinkage curve.

    Returns
    -------
    pair of matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> P = softmax_distributions(3, 4, 0.9, rng=0)
    >>> sim = simulate_context_model(P, np.ones(4), 4, 80, [0.1, 1], 5, rng=1)
    >>> fig, axes = plt.subplots(1, 2)
    >>> D = shrinkage_estimate(sim.m, P).mean(axis=1)
    >>> _ = plot_context_ridge_path(axes, P, np.ones(4), 4, 80, [0.1, 1], sim, D)
    >>> plt.close(fig)
    """
    from .._validation import check_axes_list  # noqa: PLC0415
    check_axes_list(axes)
    from ..plotting import curve_vs_mc

    if len(axes) != 2:
        raise ValueError(f"axes must be a pair of axes, got {len(axes)}")
    gamma = check_array(gamma, "gamma", ndim=1, positive=True)
    if not isinstance(sim, ContextSimulation):
        raise ValueError(f"sim must be a ContextSimulation, got {type(sim).__name__}")
    shrinkage = check_array(shrinkage, "shrinkage", shape=sim.gamma.shape)
    theories = [context_theory(P, weights, d, n, g) for g in gamma]
    curve_vs_mc(axes[0], gamma, [t.D.mean() for t in theories], sim.gamma, shrinkage,
                color=color, theory_label=label, mc_label=None)
    curve_vs_mc(axes[1], gamma, [t.train_error for t in theories], sim.gamma,
                sim.train_error_mean, 2 * sim.train_error_se, color=color,
                theory_label=None, mc_label=None)
    return axes


