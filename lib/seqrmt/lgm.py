r"""Linear generative models of next tokens (Chapter 1): the laws of both models, and one sampler.

Two ridge read-outs of one-hot next tokens (Seddik, 2023). **Model 1** (Section 1.3): context
:math:`a` has a random embedding :math:`z_a\sim N(0,I_d)`, frequency :math:`\alpha_a/c` and next-token
distribution :math:`p_a`; the fit predicts :math:`\hat p_a=W^\top z_a`. **Model 2** (Section 1.4):
inputs :math:`x=\mu_a+z`, :math:`z\sim N(0,I_d)`, tested on fresh inputs. ``P`` is ``(k, c)`` with
**columns** :math:`p_a`; ``M`` is ``(d, c)`` with columns :math:`\mu_a`. The Monte Carlo, limits and
figures of both models are in the notebooks, which check them against these laws.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from ._validation import (ConvergenceError, as_generator, check_array, check_positive,
                          check_positive_int, check_positive_weights, check_prob_columns, check_size)
from .rmt import ridge_equivalent

__all__ = ["softmax_distributions", "expected_softmax_sq_norm", "ContextTheory", "context_theory",
           "simulate_context_model", "MixtureTheory", "mixture_theory", "mixture_optimal_ridge"]


# ---------------------------------------------------------------------------
# Next-token distributions
# ---------------------------------------------------------------------------


def softmax_distributions(k, c, rho, rng=None):
    r"""Draw next-token distributions :math:`p_a=\operatorname{softmax}(G_a/\rho)`, :math:`G_a\sim N(0,I_k)`.

    Parameters
    ----------
    k, c : int
        Vocabulary size and number of contexts.
    rho : float
        Temperature :math:`\rho>0` (small :math:`\rho` gives peaked distributions).
    rng : int, numpy.random.Generator or None

    Returns
    -------
    numpy.ndarray, shape (k, c)
        Column :math:`a` is :math:`p_a`.

    Examples
    --------
    >>> P = softmax_distributions(3, 5, 0.9, rng=0)
    >>> P.shape, bool(np.allclose(P.sum(axis=0), 1))
    ((3, 5), True)
    """
    k = check_size(k, "k")
    c = check_size(c, "c")
    rho = check_positive(rho, "rho")
    G = as_generator(rng).standard_normal((k, c))  # the logits, one column per context
    return special.softmax(G / rho, axis=0)


def expected_softmax_sq_norm(k, rho, n_nodes=40):
    r""":math:`\bar s=\mathbb E_G\|\operatorname{softmax}(G/\rho)\|^2` for :math:`G\sim N(0,I_k)`.

    Computed by a tensor Gauss-Hermite rule with ``n_nodes`` nodes per axis (cost
    ``n_nodes**k``, so ``k`` is limited to 6). The integrand is smooth, so the rule converges
    geometrically: 40 nodes give about ten digits for :math:`\rho\ge0.5`.

    Parameters
    ----------
    k : int
        Vocabulary size, ``1 <= k <= 6``.
    rho : float
        Temperature :math:`\rho>0`.
    n_nodes : int
        Quadrature nodes per dimension.

    Returns
    -------
    float

    Examples
    --------
    >>> expected_softmax_sq_norm(1, 0.5)  # a single token: p = 1
    1.0
    >>> round(expected_softmax_sq_norm(2, 1.0), 6)
    0.636838
    """
    k = check_positive_int(k, "k")
    if k > 6:
        raise ValueError(f"k must be at most 6 for tensor quadrature, got {k}")
    rho = check_positive(rho, "rho")
    n_nodes = check_size(n_nodes, "n_nodes")
    # probabilists' Hermite rule: weight exp(-x^2/2), normalised to the N(0, 1) density
    x, w = np.polynomial.hermite_e.hermegauss(n_nodes)
    w = w / np.sqrt(2.0 * np.pi)  # the weights of hermegauss sum to sqrt(2 pi)
    G = np.stack([g.ravel() for g in np.meshgrid(*([x] * k), indexing="ij")], axis=1)
    W = np.prod(np.meshgrid(*([w] * k), indexing="ij"), axis=0).ravel()  # product weights
    p = special.softmax(G / rho, axis=1)
    return float(np.sum(W * np.sum(p**2, axis=1)))


# ---------------------------------------------------------------------------
# Model 1: the context model
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ContextTheory:
    r"""Deterministic predictions of Model 1 (see :func:`context_theory`).

    Attributes
    ----------
    delta, alpha, beta, kappa, tau : float
        :math:`\delta=\lim\frac1c\operatorname{Tr}Q`, :math:`\alpha=\frac1c\sum_au_a`,
        :math:`\beta=\frac1c\sum_au_a^2` with :math:`u_a=\frac{\alpha_a}{1+\alpha_a\delta}`,
        :math:`\kappa=\eta/(\alpha+\gamma)^2` and
        :math:`\tau=\lim\frac1c\operatorname{Tr}\mathbb EQ^2=\kappa/(1-\kappa\beta)=-d\delta/d\gamma`.
    D : numpy.ndarray, shape (c,)
        Shrinkage factors :math:`D_a=\alpha_a\delta/(1+\alpha_a\delta)`.
    m : numpy.ndarray, shape (k, c)
        Predicted means :math:`\mathbb E\hat p_a=D_ap_a` (columns).
    Sigma, C : numpy.ndarray, shape (c, k, k)
        Second moments :math:`\Sigma_a` of the empirical frequencies and
        :math:`C_a=\mathbb E\hat p_a\hat p_a^\top` of the predictions.
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

    The map :math:`\delta\mapsto\delta(\alpha(\delta)+\gamma)` increases from 0 to
    :math:`\infty`, so the root is unique; it lies in :math:`(0,\eta/\gamma]` and is found by
    Brent's method.

    Parameters
    ----------
    P : array_like, shape (k, c)
        Columns are the next-token distributions :math:`p_a`.
    weights : array_like, shape (c,)
        Context weights :math:`\alpha_a>0` with mean one (context :math:`a` has
        probability :math:`\alpha_a/c`).
    d, n : int
        Embedding dimension and number of training samples.
    gamma : float
        Ridge :math:`\gamma>0`.
    tol, max_iter
        Tolerance and iteration cap of the root finder for :math:`\delta`.

    Returns
    -------
    ContextTheory

    Raises
    ------
    seqrmt.ConvergenceError
        If the root finder does not reach ``tol`` in ``max_iter`` iterations.

    Examples
    --------
    >>> P = np.full((3, 81), 1 / 3)
    >>> th = context_theory(P, np.ones(81), d=81, n=5000, gamma=1.0)
    >>> round(th.delta, 6), round(float(th.D[0]), 6)  # (sqrt 5 - 1)/2, (3 - sqrt 5)/2
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

    def excess(delta):  # negative at 0, positive at eta / gamma since alpha(delta) > 0
        return delta - eta / (np.mean(weights / (1.0 + weights * delta)) + gamma)

    delta, info = optimize.brentq(excess, 0.0, eta / gamma, xtol=tol, rtol=4 * np.finfo(float).eps,
                                  maxiter=max_iter, full_output=True, disp=False)
    if not info.converged:
        raise ConvergenceError(f"context_theory: delta did not converge in max_iter={max_iter}")
    u = weights / (1.0 + weights * delta)  # alpha_a / (1 + alpha_a delta)
    alpha, beta = float(np.mean(u)), float(np.mean(u**2))
    kappa = eta / (alpha + gamma) ** 2  # (1/c) Tr Qbar^2 with Qbar = I / (alpha + gamma)
    # kappa beta < 1 follows from the fixed point: tau = -delta' is finite
    tau = kappa / (1.0 - kappa * beta)
    D = weights * delta / (1.0 + weights * delta)  # E S_aa, by Sherman-Morrison and the trace lemma
    m = P * D[None, :]  # E p_hat_a = D_a p_a: the cross terms vanish under z_b -> -z_b

    # Sigma_a = E pbar_a pbar_a^T for a multinomial frequency of n_a = alpha_a n / c draws
    f = c / (weights * n)
    outer = np.einsum("ia,ja->aij", P, P)
    Sigma = f[:, None, None] * np.einsum("ia,ij->aij", P, np.eye(k)) + (1.0 - f)[:, None, None] * outer
    # the leakage term: the weights (alpha_b / (1 + alpha_b delta))^2 stay inside the average
    Sigma_w = np.mean(u[:, None, None] ** 2 * Sigma, axis=0)
    cross = tau / (1.0 + weights * delta) ** 2
    C = D[:, None, None] ** 2 * Sigma + cross[:, None, None] * Sigma_w[None, :, :]
    # E||p_hat_a - p_a||^2 = Tr C_a - 2 D_a ||p_a||^2 + ||p_a||^2
    train = float(np.sum(P**2 * (1.0 - 2.0 * D)[None, :]) / c + np.trace(C, axis1=1, axis2=2).mean())
    return ContextTheory(delta=float(delta), alpha=alpha, beta=beta, kappa=float(kappa),
                         tau=float(tau), D=D, m=m, Sigma=Sigma, C=C, train_error=train)


def simulate_context_model(P, weights, d, n, rng=None, counts="multinomial"):
    r"""Draw one training set of Model 1 in counts form: the embeddings and the count matrix.

    Draws :math:`Z=[z_1,\dots,z_c]` with i.i.d. :math:`N(0,1)` entries, the context counts
    :math:`(n_a)\sim\mathrm{Mult}(n,(\alpha_a/c)_a)` (or fixed :math:`n_a=\operatorname{round}(\alpha_an/c)`)
    and the next-token counts :math:`N_{a\cdot}\sim\mathrm{Mult}(n_a,p_a)`. The data matrix
    :math:`X` repeats :math:`z_a` :math:`n_a` times, so :math:`(Z,N)` is all a ridge fit needs:
    :math:`\frac1nXX^\top=Z\operatorname{Diag}(n_a/n)Z^\top` and :math:`XY^\top=ZN`.

    Parameters
    ----------
    P, weights, d : array_like, array_like, int
        As in :func:`context_theory`.
    n : int
        Number of samples (with fixed counts, ``N.sum()`` is the rounded total).
    rng : int, numpy.random.Generator or None
    counts : {"multinomial", "fixed"}
        How the context counts are drawn.

    Returns
    -------
    Z : numpy.ndarray, shape (d, c)
        Context embeddings (columns).
    N : numpy.ndarray of int, shape (c, k)
        :math:`N_{aj}`, the number of samples with context :math:`a` followed by token :math:`j`.

    Examples
    --------
    >>> P = softmax_distributions(3, 4, 0.9, rng=0)
    >>> Z, N = simulate_context_model(P, np.ones(4), 6, 40, rng=1, counts="fixed")
    >>> Z.shape, N.sum(axis=1).tolist()
    ((6, 4), [10, 10, 10, 10])
    """
    P = check_prob_columns(P, "P")
    c = P.shape[1]
    weights = check_positive_weights(weights, "weights", size=c, mean_one=True)
    d = check_size(d, "d")
    n = check_size(n, "n")
    if counts not in ("multinomial", "fixed"):
        raise ValueError(f"counts must be 'multinomial' or 'fixed', got {counts!r}")
    rng = as_generator(rng)
    Z = rng.standard_normal((d, c))
    if counts == "fixed":
        n_a = np.rint(weights * n / c).astype(int)
        if np.any(n_a < 1):
            raise ValueError("n is too small: with fixed counts some context would have no sample")
    else:
        n_a = rng.multinomial(n, weights / c)  # contexts a_i ~ alpha_a / c
    # given the counts, the next tokens of context a are n_a draws from p_a
    return Z, rng.multinomial(n_a, P.T)


# ---------------------------------------------------------------------------
# Model 2: the Gaussian mixture
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class MixtureTheory:
    r"""Deterministic predictions of Model 2 (see :func:`mixture_theory`).

    Attributes
    ----------
    delta, zeta, tau, kappa : float
        Scalars of the noise resolvent (:func:`seqrmt.rmt.ridge_equivalent` at :math:`\eta=d/n`).
    R : numpy.ndarray, shape (c, c)
        :math:`R=(\zeta(1+\delta)\Pi^{-1}+\mathcal G)^{-1}`.
    P_hat : numpy.ndarray, shape (k, c)
        Predicted means :math:`PR\mathcal G` (column :math:`a` for context :math:`a`).
    h, w_norm2 : float
        :math:`h=\frac1{n^2}\operatorname{Tr}(YX^\top QXY^\top)` and :math:`\|W\|_F^2=-h'(\gamma)`.
    test_error, test_error_onehot, train_error : float
        :math:`\sum_a\pi_a\mathbb E\|W^\top x-p_a\|^2` for a fresh :math:`x=\mu_a+z`, the same
        against a fresh one-hot label, and :math:`\frac1n\|Y-W^\top X\|_F^2`.
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


def _check_mixture(M, pi, P):
    """Validate the means, context probabilities and next-token distributions of Model 2."""
    M = check_array(M, "M", ndim=2)
    c = M.shape[1]
    pi = check_positive_weights(pi, "pi", size=c, sum_one=True)
    P = check_prob_columns(P, "P")
    if P.shape[1] != c:
        raise ValueError(f"P must have c={c} columns to match M, got shape {P.shape}")
    return M, pi, P


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
        Means (columns); only :math:`\mathcal G=M^\top M` and :math:`d` matter.
    pi : array_like, shape (c,)
        Context probabilities (positive, summing to one).
    P : array_like, shape (k, c)
        Next-token distributions (columns).
    n, gamma : int, float
        Number of training samples and ridge :math:`\gamma>0`.

    Returns
    -------
    MixtureTheory

    Examples
    --------
    >>> M = np.zeros((400, 1)); M[0, 0] = 2.0  # c = k = 1, ||mu||^2 = 4
    >>> th = mixture_theory(M, [1.0], np.ones((1, 1)), n=800, gamma=1e6)
    >>> round(th.test_error, 4), round(th.train_error, 4)  # W -> 0: both errors -> ||p||^2 = 1
    (1.0, 1.0)
    """
    M, pi, P = _check_mixture(M, pi, P)
    d, c = M.shape
    n = check_positive_int(n, "n")
    gamma = check_positive(gamma, "gamma")

    delta, zeta, tau, kappa = ridge_equivalent(d / n, gamma)
    G = M.T @ M
    # Woodbury: M^T Qbar M is a function of the c x c matrix R alone
    R = np.linalg.inv(zeta * (1.0 + delta) * np.diag(1.0 / pi) + G)  # symmetric positive definite
    P_hat = P @ R @ G  # the limit of W^T mu_a, column a
    T = float(np.trace(P_hat @ np.diag(pi) @ P.T))
    T2 = float(np.trace(P @ R @ np.diag(1.0 / pi) @ R @ G @ np.diag(pi) @ P.T))
    h = (delta + T) / (1.0 + delta)  # y_i^T W^T x_i = (delta + y_i^T W_-i^T x_i) / (1 + delta)
    # s' = d[zeta (1 + delta)]/d gamma, with delta' = -tau; it gives dR/dgamma = -s' R Pi^-1 R
    s_prime = (1.0 + tau / (1.0 + delta) ** 2) * (1.0 + delta) - zeta * tau
    w_norm2 = tau * (1.0 - T) / (1.0 + delta) ** 2 + s_prime * T2 / (1.0 + delta)  # = -h'
    test = float(np.sum(pi * np.sum((P_hat - P) ** 2, axis=0))) + w_norm2  # bias + variance
    # against a one-hot label, add the irreducible sum_a pi_a (1 - ||p_a||^2)
    onehot = test + float(np.sum(pi * (1.0 - np.sum(P**2, axis=0))))
    train = 1.0 - h - gamma * w_norm2  # exact given h and ||W||^2: (1/n) X X^T = Q^-1 - gamma I
    return MixtureTheory(delta=delta, zeta=zeta, tau=tau, kappa=kappa, R=R, P_hat=P_hat,
                         h=float(h), w_norm2=float(w_norm2), test_error=test,
                         test_error_onehot=onehot, train_error=float(train))


def mixture_optimal_ridge(M, pi, P, n, bounds=(1e-4, 1e3), tol=1e-6):
    r"""Ridge :math:`\gamma^*` minimising the Model-2 test error of :func:`mixture_theory`.

    A bounded scalar search over :math:`\log\gamma` (the error is flat near its minimum on a
    linear scale, and the optimum spans decades across settings).

    Parameters
    ----------
    M, pi, P, n
        As in :func:`mixture_theory`.
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
    seqrmt.ConvergenceError
        If the search does not converge.

    Examples
    --------
    >>> M = np.zeros((200, 1)); M[0, 0] = 2.0  # c = k = 1, ||mu||^2 = 4, eta = 1/4
    >>> g, e = mixture_optimal_ridge(M, [1.0], np.ones((1, 1)), 800)
    >>> round(g, 3), round(e, 3)  # below the ridgeless 1 / ((1 + 4)(1 - 1/4)) = 0.267
    (0.517, 0.232)
    """
    M, pi, P = _check_mixture(M, pi, P)
    n = check_positive_int(n, "n")
    if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
        raise ValueError(f"bounds must be a pair (gamma_min, gamma_max), got {bounds!r}")
    lo = check_positive(bounds[0], "bounds")
    hi = check_positive(bounds[1], "bounds")
    if not lo < hi:
        raise ValueError(f"bounds must satisfy 0 < gamma_min < gamma_max, got {bounds}")
    tol = check_positive(tol, "tol")

    def error(t):  # t = log gamma
        return mixture_theory(M, pi, P, n, float(np.exp(t))).test_error

    res = optimize.minimize_scalar(error, bounds=(np.log(lo), np.log(hi)), method="bounded",
                                   options={"xatol": tol})
    if not res.success:
        raise ConvergenceError(f"mixture_optimal_ridge: the search failed: {res.message}")
    return float(np.exp(res.x)), float(res.fun)
