"""Tests of seqrmt.lgm, Model 2 (the Gaussian mixture): checkpoints A15-A16 of the Part 1 spec,
the small- and large-ridge limits of Section 1.4, the talk's printed formula, the optimal ridge.

Every reference here is computed independently of the library: the limits from their closed
forms, the talk's formula verbatim with d x d matrices, the Monte Carlo from the data matrix.
"""

import numpy as np
import pytest

from seqrmt import lgm, rmt
from seqrmt.runtime import single_threaded_blas

C, K = 6, 3



@pytest.fixture(autouse=True)
def _one_blas_thread():
    """Monte Carlo loops over small matrices run faster and steadier on one BLAS thread."""
    with single_threaded_blas():
        yield

@pytest.fixture(scope="module")
def mixture6():
    """A fixed non-uniform mixture: Gram matrix with O(1) entries, Dirichlet weights."""
    rng = np.random.default_rng(104)
    P = lgm.softmax_distributions(K, C, 0.9, rng)
    A = rng.standard_normal((2 * C, C))
    G = 3.0 * A.T @ A / (2 * C)
    pi = rng.dirichlet(np.full(C, 5.0))
    return G, pi, P


def _means(G, d, seed=0):
    """Means M = U chol(G)^T with orthonormal U, so that M^T M = G."""
    U, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, G.shape[0])))
    return U @ np.linalg.cholesky(G).T


def _trial(rng, M, pi, P, n, gammas):
    """One training set from the data matrix: test error (exact over a fresh input), training error."""
    d, c = M.shape
    a = rng.choice(c, size=n, p=pi)
    X = M[:, a] + rng.standard_normal((d, n))
    Y = np.eye(P.shape[0])[[rng.choice(P.shape[0], p=P[:, j]) for j in a]].T
    out = []
    for g in gammas:
        W = np.linalg.solve(X @ X.T / n + g * np.eye(d), X @ Y.T / n)
        out.append((np.sum(pi * np.sum((W.T @ M - P) ** 2, axis=0)) + np.sum(W**2),
                    np.sum((Y - W.T @ X) ** 2) / n, np.sum(W**2)))
    return np.array(out)  # (g, 3)


def _limits(M, pi, P, n):
    """The ridgeless limits of Proposition prop-gm-limits: (test error, training error, ||W||^2)."""
    d = M.shape[0]
    eta, G, Pi = d / n, M.T @ M, np.diag(pi)
    R = np.linalg.inv(max(1.0, eta) * np.diag(1 / pi) + G)
    T = np.trace(P @ R @ G @ Pi @ P.T)
    T2 = np.trace(P @ R @ np.diag(1 / pi) @ R @ G @ Pi @ P.T)
    w2 = T2 + eta * (1 - T) / (1 - eta) if eta < 1 else (1 - T) / (eta - 1)
    bias = np.sum(pi * np.sum((P @ R @ G - P) ** 2, axis=0))
    return bias + w2, (1 - eta) * (1 - T) if eta < 1 else 0.0, w2


# ---------------------------------------------------------------- theory: invariants
def test_mixture_theory_invariants(mixture6):
    G, pi, P = mixture6
    M1, M2 = _means(G, 400, 1), _means(G, 400, 2)
    t1, t2 = lgm.mixture_theory(M1, pi, P, 800, 0.3), lgm.mixture_theory(M2, pi, P, 800, 0.3)
    assert t1.test_error == pytest.approx(t2.test_error, rel=1e-10)  # depends on M only through G
    # ||W||^2 = -h'(gamma), independently by finite differences
    h = 1e-5
    fd = -(lgm.mixture_theory(M1, pi, P, 800, 0.3 + h).h - lgm.mixture_theory(M1, pi, P, 800, 0.3 - h).h) / (2 * h)
    assert t1.w_norm2 == pytest.approx(fd, rel=1e-6)
    # Qbar = (I - M R M^T) / zeta is the inverse of zeta I + M Pi M^T / (1 + delta)
    Qbar = (np.eye(400) - M1 @ t1.R @ M1.T) / t1.zeta
    np.testing.assert_allclose(Qbar @ (t1.zeta * np.eye(400) + M1 @ np.diag(pi) @ M1.T / (1 + t1.delta)),
                               np.eye(400), atol=1e-10)
    # P_hat = W-bar^T M with W-bar = Qbar M Pi P^T / (1 + delta)
    np.testing.assert_allclose(t1.P_hat, (Qbar @ M1 @ np.diag(pi) @ P.T / (1 + t1.delta)).T @ M1, atol=1e-10)
    big = lgm.mixture_theory(M1, pi, P, 800, 1e8)  # W -> 0
    assert big.test_error == pytest.approx(float(np.sum(pi * np.sum(P**2, axis=0))), rel=1e-6)
    assert big.test_error_onehot == pytest.approx(1.0, rel=1e-6)


# ---------------------------------------------------------------- theory: limits
@pytest.mark.parametrize("d,n", [(100, 400), (200, 400), (600, 300), (400, 100)])
def test_ridgeless_limits(mixture6, d, n):
    G, pi, P = mixture6
    M = _means(G, d)
    th = lgm.mixture_theory(M, pi, P, n, 1e-10)
    # the theory is smooth in gamma at 0 for eta != 1: the gap is O(gamma)
    for got, want in zip((th.test_error, th.train_error, th.w_norm2), _limits(M, pi, P, n)):
        assert got == pytest.approx(want, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("d,n", [(100, 400), (600, 300)])
def test_large_gamma_expansion(mixture6, d, n):
    """E_test = sum_a pi_a ||p_a||^2 - 2 T1 / gamma + O(gamma^-2), E_train = 1 - 2 (eta + T1) / gamma + ..."""
    G, pi, P = mixture6
    M = _means(G, d)
    T1 = np.trace(P @ np.diag(pi) @ G @ np.diag(pi) @ P.T)
    assert T1 > 0
    null = np.sum(pi * np.sum(P**2, axis=0))
    rem = {}
    for g in (1e3, 1e4):
        th = lgm.mixture_theory(M, pi, P, n, g)
        rem[g] = (g**2 * (th.test_error - null + 2 * T1 / g),
                  g**2 * (th.train_error - 1 + 2 * (d / n + T1) / g))
    for r3, r4 in zip(rem[1e3], rem[1e4]):
        assert abs(r3 - r4) <= 1e-2 * abs(r4)  # the remainder is O(gamma^-2): gamma^2 rem converges


@pytest.mark.parametrize("eta", [0.25, 0.5, 2.0, 4.0])
@pytest.mark.parametrize("m", [0.5, 2.0])
def test_constant_regression_closed_form(eta, m):
    """c = k = 1: ridge regression of the constant 1 on x = mu + z, ||mu||^2 = m (ex-gm-constant)."""
    d = 400
    n = int(round(d / eta))
    M = np.zeros((d, 1))
    M[0, 0] = np.sqrt(m)
    th = lgm.mixture_theory(M, [1.0], np.ones((1, 1)), n, 1e-10)
    if eta < 1:
        test, train = 1 / ((1 + m) * (1 - eta)), (1 - eta) / (1 + m)
    else:
        test, train = eta**2 / (eta + m) ** 2 + eta / ((eta + m) * (eta - 1)), 0.0
    assert th.test_error == pytest.approx(test, rel=1e-6)
    assert th.train_error == pytest.approx(train, abs=1e-6)


def test_ridgeless_underparametrised_is_population_least_squares(mixture6):
    """eta < 1: W^T M -> W_*^T M and ||W||^2 -> ||W_*||^2 + eta / (1 - eta) * (population residual)."""
    G, pi, P = mixture6
    d, n = 50, 200
    M = _means(G, d)
    Sigma = np.eye(d) + M @ np.diag(pi) @ M.T  # E x x^T
    W_star = np.linalg.solve(Sigma, M @ np.diag(pi) @ P.T)
    resid = 1.0 - float(np.sum(W_star * (M @ np.diag(pi) @ P.T)))  # E ||y - W_*^T x||^2
    th = lgm.mixture_theory(M, pi, P, n, 1e-10)
    np.testing.assert_allclose(th.P_hat, W_star.T @ M, rtol=1e-7, atol=1e-9)
    assert th.w_norm2 == pytest.approx(np.sum(W_star**2) + d / n / (1 - d / n) * resid, rel=1e-7)
    assert th.train_error == pytest.approx((1 - d / n) * resid, rel=1e-7)


def test_critical_ratio_diverges(mixture6):
    G, pi, P = mixture6
    M = _means(G, 300)
    errs = [lgm.mixture_theory(M, pi, P, 300, g).test_error for g in (1e-2, 1e-4, 1e-6)]
    assert errs[0] < errs[1] < errs[2] and errs[2] > 100 * errs[0]  # like gamma^(-1/2) at eta = 1


# ---------------------------------------------------------------- the talk's printed formula
def _talk_test_error(M, P, n, gamma):
    """Seddik's E_test for pi = 1/c, verbatim with d x d matrices, read with P^T P."""
    d, c = M.shape
    delta, zeta, tau, kappa = rmt.ridge_equivalent(d / n, gamma)
    Qbar = np.eye(d) / zeta - M @ np.linalg.inv((1 + delta) * c * np.eye(c) + M.T @ M / zeta) @ M.T / zeta**2
    R = (Qbar @ Qbar + kappa * Qbar @ M @ M.T @ Qbar / ((1 + delta) ** 2 * c)) / (1 - kappa / (1 + delta) ** 2)
    first = np.trace(P.T @ P @ (np.eye(c) - 2 * M.T @ Qbar @ M / ((1 + delta) * c))) / c
    Ca = 0.0
    for a in range(c):
        mu = M[:, a:a + 1]
        inner = (Qbar @ mu @ mu.T @ Qbar + R) / ((1 + delta) ** 2 * c**2) - 2 * tau * Qbar / ((1 + delta) ** 3 * c**2)
        Ca += tau * np.sum(P) / ((1 + delta) ** 2 * c) + np.trace(P @ M.T @ inner @ M @ P.T)
    return first + Ca / c


@pytest.mark.parametrize("c,d,n,gamma,scale", [(9, 400, 800, 0.1, 0.5), (9, 400, 800, 3.0, 0.5),
                                                (81, 81, 5000, 1.0, 1.0), (5, 300, 200, 0.01, 0.5)])
def test_talk_formula_equals_book_formula(c, d, n, gamma, scale):
    rng = np.random.default_rng(c + d)
    P = lgm.softmax_distributions(K, c, 0.9, rng)
    M = scale * rng.standard_normal((d, c))
    book = lgm.mixture_theory(M, np.full(c, 1 / c), P, n, gamma).test_error
    assert _talk_test_error(M, P, n, gamma) == pytest.approx(book, rel=1e-10)


def test_talk_typo_delta_differs_away_from_eta_one():
    rng = np.random.default_rng(3)
    P = lgm.softmax_distributions(K, 4, 0.9, rng)
    M = 0.5 * rng.standard_normal((200, 4))
    th = lgm.mixture_theory(M, np.full(4, 0.25), P, 800, 0.1)
    assert rmt.ridge_delta(0.25, 0.1, variant="talk") / th.delta > 1.5


# ---------------------------------------------------------------- Monte Carlo
@pytest.mark.parametrize("d", [100, 200])
def test_mixture_monte_carlo_A15(mixture6, d):
    G, pi, P = mixture6
    M = _means(G, d, 3)
    rng = np.random.default_rng(15)
    runs = np.array([_trial(rng, M, pi, P, 2 * d, [0.1, 1.0]) for _ in range(40)])  # (40, g, 3)
    mean, se = runs.mean(axis=0), runs.std(axis=0, ddof=1) / np.sqrt(40)
    for i, gamma in enumerate((0.1, 1.0)):
        th = lgm.mixture_theory(M, pi, P, 2 * d, gamma)
        for j, want in enumerate((th.test_error, th.train_error, th.w_norm2)):
            # spec A15: deviations 0.3-0.6%, comparable with the noise; 1% allows the O(1/d) bias
            assert abs(mean[i, j] - want) < 4 * se[i, j] + 0.01 * want


def test_mixture_talk_like_A16():
    rng = np.random.default_rng(16)
    c = d = 81
    n = 5000
    P = lgm.softmax_distributions(K, c, 0.9, rng)
    M = rng.standard_normal((d, c))
    pi = np.full(c, 1 / c)
    runs = np.array([_trial(rng, M, pi, P, n, [0.1, 1.0]) for _ in range(10)])
    for i, (gamma, delta, typo) in enumerate(((0.1, 0.01493, 0.85520), (1.0, 0.00813, 0.41660))):
        th = lgm.mixture_theory(M, pi, P, n, gamma)
        assert th.delta == pytest.approx(delta, abs=1e-5)
        assert rmt.ridge_delta(d / n, gamma, variant="talk") == pytest.approx(typo, abs=1e-5)
        # ||mu_a||^2 ~ d violates the O(1) regime; spec A16 measures 0.15-0.7%
        assert abs(runs[:, i, 0].mean() - th.test_error) < 0.01 * th.test_error


# ---------------------------------------------------------------- the optimal ridge
def test_optimal_ridge_constant_model_and_grid(mixture6):
    M = np.zeros((400, 1))
    M[0, 0] = 1.0
    g, e = lgm.mixture_optimal_ridge(M, [1.0], np.ones((1, 1)), 800)
    assert g == pytest.approx(0.7911, abs=2e-3)
    assert e == pytest.approx(0.63478, abs=1e-4)
    G, pi, P = mixture6
    M = _means(G, 200)
    g, e = lgm.mixture_optimal_ridge(M, pi, P, 400)
    grid = np.logspace(-4, 3, 400)
    errs = [lgm.mixture_theory(M, pi, P, 400, x).test_error for x in grid]
    assert e <= min(errs) + 1e-9
    assert abs(np.log(g / grid[int(np.argmin(errs))])) < 0.1
    with pytest.raises(ValueError, match="bounds"):
        lgm.mixture_optimal_ridge(M, pi, P, 400, bounds=(1.0, 0.5))


def test_bad_input_raises_value_error_naming_argument(mixture6):
    G, pi, P = mixture6
    M = _means(G, 50)
    cases = [
        (lambda: lgm.mixture_theory(np.ones(5), pi, P, 100, 0.1), "M"),
        (lambda: lgm.mixture_theory(M, pi * 2, P, 100, 0.1), "pi"),
        (lambda: lgm.mixture_theory(M, pi, P[:, :-1], 100, 0.1), "P"),
        (lambda: lgm.mixture_theory(M, pi, -P, 100, 0.1), "P"),
        (lambda: lgm.mixture_theory(M, pi, P, 0, 0.1), "n"),
        (lambda: lgm.mixture_theory(M, pi, P, 10.5, 0.1), "n"),
        (lambda: lgm.mixture_theory(M, pi, P, 100, -1.0), "gamma"),
        (lambda: lgm.mixture_optimal_ridge(M, pi, P, 100, bounds=1.0), "bounds"),
    ]
    for call, name in cases:
        with pytest.raises(ValueError, match=name):
            call()
