"""Tests of the Model-2 additions to seqrmt.lgm (small- and large-ridge limits)."""

import numpy as np
import pytest

from seqrmt import lgm

C, K = 6, 3


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
    return lgm.means_from_gram(G, d, rng=seed)


@pytest.mark.parametrize("d,n", [(100, 400), (200, 400), (600, 300), (400, 100)])
def test_ridgeless_limit_matches_theory(mixture6, d, n):
    G, pi, P = mixture6
    M = _means(G, d)
    lim = lgm.mixture_limits(M, pi, P, n)
    th = lgm.mixture_theory(M, pi, P, n, 1e-10)
    # the theory is smooth in gamma at 0 for eta != 1, so the gap is O(gamma) = O(1e-10)
    # times constants below 1e3 here: rtol 1e-6 leaves a wide margin
    for got, want in [
        (lim.ridgeless_test_error, th.test_error),
        (lim.ridgeless_train_error, th.train_error),
        (lim.ridgeless_w_norm2, th.w_norm2),
    ]:
        assert got == pytest.approx(want, rel=1e-6, abs=1e-8)
    np.testing.assert_allclose(lim.ridgeless_P_hat, th.P_hat, rtol=1e-6, atol=1e-8)
    if d >= n:
        assert lim.ridgeless_train_error == 0.0


@pytest.mark.parametrize("d,n", [(100, 400), (600, 300)])
def test_large_gamma_expansion(mixture6, d, n):
    G, pi, P = mixture6
    M = _means(G, d)
    lim = lgm.mixture_limits(M, pi, P, n)
    assert lim.null_test_error == pytest.approx(float(np.sum(pi * np.sum(P**2, axis=0))), rel=1e-14)
    assert lim.null_train_error == 1.0
    # if the slopes are right, the remainder is O(gamma^-2): gamma^2 * remainder converges
    rem = {}
    for g in (1e3, 1e4):
        th = lgm.mixture_theory(M, pi, P, n, g)
        rem[g] = (
            g**2 * (th.test_error - lim.null_test_error + lim.large_gamma_test_slope / g),
            g**2 * (th.train_error - lim.null_train_error + lim.large_gamma_train_slope / g),
        )
    for r3, r4 in zip(rem[1e3], rem[1e4]):
        assert abs(r3 - r4) <= 1e-2 * abs(r4)  # next correction is O(1/gamma) relative


@pytest.mark.parametrize("eta", [0.25, 0.5, 2.0, 4.0])
@pytest.mark.parametrize("m", [0.5, 2.0])
def test_constant_regression_closed_form(eta, m):
    """c = k = 1: ridge regression of the constant 1 on x = mu + z, ||mu||^2 = m."""
    d = 400
    n = int(round(d / eta))
    M = np.zeros((d, 1))
    M[0, 0] = np.sqrt(m)
    lim = lgm.mixture_limits(M, [1.0], np.ones((1, 1)), n)
    if eta < 1:
        test = 1.0 / ((1.0 + m) * (1.0 - eta))
        train = (1.0 - eta) / (1.0 + m)
    else:
        test = eta**2 / (eta + m) ** 2 + eta / ((eta + m) * (eta - 1.0))
        train = 0.0
    assert lim.ridgeless_test_error == pytest.approx(test, rel=1e-12)
    assert lim.ridgeless_train_error == pytest.approx(train, rel=1e-12, abs=1e-15)


def test_ridgeless_underparametrised_is_population_least_squares(mixture6):
    """eta < 1: the limit mean is the population least-squares predictor W_*, and
    ||W||^2 = ||W_*||^2 + eta / (1 - eta) * (population residual)."""
    G, pi, P = mixture6
    d, n = 50, 200
    M = _means(G, d)
    Sigma = np.eye(d) + M @ np.diag(pi) @ M.T  # E[x x^T]
    W_star = np.linalg.solve(Sigma, M @ np.diag(pi) @ P.T)  # (d, k)
    resid = 1.0 - float(np.sum(W_star * (M @ np.diag(pi) @ P.T)))  # E||y - W_*^T x||^2
    lim = lgm.mixture_limits(M, pi, P, n)
    eta = d / n
    np.testing.assert_allclose(lim.ridgeless_P_hat, W_star.T @ M, rtol=1e-10, atol=1e-12)
    assert lim.ridgeless_w_norm2 == pytest.approx(
        np.sum(W_star**2) + eta / (1 - eta) * resid, rel=1e-10
    )
    assert lim.ridgeless_train_error == pytest.approx((1 - eta) * resid, rel=1e-10)


def test_critical_ratio_diverges(mixture6):
    G, pi, P = mixture6
    lim = lgm.mixture_limits(_means(G, 300), pi, P, 300)
    assert np.isinf(lim.ridgeless_test_error) and np.isinf(lim.ridgeless_w_norm2)
    assert lim.ridgeless_train_error == 0.0


def test_limits_depend_on_means_only_through_gram(mixture6):
    G, pi, P = mixture6
    a = lgm.mixture_limits(_means(G, 200, seed=1), pi, P, 400)
    M2 = np.zeros((200, C))
    M2[:C] = np.linalg.cholesky(G).T  # axis-aligned means, same Gram matrix
    b = lgm.mixture_limits(M2, pi, P, 400)
    for f in ("ridgeless_test_error", "ridgeless_train_error", "ridgeless_w_norm2",
              "large_gamma_test_slope", "large_gamma_train_slope"):
        assert getattr(a, f) == pytest.approx(getattr(b, f), rel=1e-10)


def test_interpolation_monte_carlo():
    """eta > 1 and gamma -> 0: the ridge interpolates, the training error vanishes (exact)."""
    rng = np.random.default_rng(104)
    P = lgm.softmax_distributions(K, C, 0.9, rng)
    M = lgm.means_from_gram(np.eye(C), 120, rng)
    sim = lgm.simulate_mixture_model(M, np.full(C, 1 / C), P, 60, [1e-9], 5, rng)
    assert np.max(sim.train_error) < 1e-6  # O(gamma) residual
    assert lgm.mixture_limits(M, np.full(C, 1 / C), P, 60).ridgeless_train_error == 0.0


def test_bad_input_raises_value_error_naming_argument(mixture6):
    G, pi, P = mixture6
    M = _means(G, 50)
    with pytest.raises(ValueError, match="M"):
        lgm.mixture_limits(np.ones(5), pi, P, 100)
    with pytest.raises(ValueError, match="pi"):
        lgm.mixture_limits(M, pi * 2, P, 100)
    with pytest.raises(ValueError, match="P"):
        lgm.mixture_limits(M, pi, P[:, :-1], 100)
    with pytest.raises(ValueError, match="P"):
        lgm.mixture_limits(M, pi, -P, 100)
    with pytest.raises(ValueError, match="n"):
        lgm.mixture_limits(M, pi, P, 0)
    with pytest.raises(ValueError, match="n"):
        lgm.mixture_limits(M, pi, P, 10.5)


# ------------------------------------------------- the talk's printed formula
@pytest.mark.parametrize("c,d,n,gamma,scale", [(9, 400, 800, 0.1, 0.5), (9, 400, 800, 3.0, 0.5),
                                                (81, 81, 5000, 1.0, 1.0), (5, 300, 200, 0.01, 0.5)])
def test_talk_formula_equals_book_formula(c, d, n, gamma, scale):
    """Seddik's printed E_test (read with P^T P) is the book's boxed formula at pi = 1/c."""
    rng = np.random.default_rng(c + d)
    P = lgm.softmax_distributions(K, c, 0.9, rng)
    M = scale * rng.standard_normal((d, c))
    talk = lgm.mixture_test_error_talk(M, P, n, gamma)
    book = lgm.mixture_theory(M, np.full(c, 1 / c), P, n, gamma).test_error
    assert talk == pytest.approx(book, rel=1e-10)


def test_talk_formula_differs_with_the_typo_delta():
    """With the talk's discriminant 4 gamma the value changes at eta != 1 (so the test can fail)."""
    from seqrmt import rmt
    rng = np.random.default_rng(3)
    P = lgm.softmax_distributions(K, 4, 0.9, rng)
    M = 0.5 * rng.standard_normal((200, 4))
    th = lgm.mixture_theory(M, np.full(4, 0.25), P, 800, 0.1)
    assert rmt.ridge_delta(0.25, 0.1, variant="talk") / th.delta > 1.5


def test_optimal_ridge_constant_model_and_grid(mixture6):
    """gamma* of the c = k = 1 model (exercise ex-gm-constant) and a brute-force grid check."""
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
