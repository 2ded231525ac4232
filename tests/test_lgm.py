"""Tests of seqrmt.lgm, Model 1 and the sampler: checkpoints A5-A11 of the Part 1 spec.

The Monte Carlo here is written from scratch (the sampler, then a ridge fit on the counts or on
the full data matrix), so that the laws are tested against an independent computation.
"""

import numpy as np
import pytest

from seqrmt import ConvergenceError, lgm, rmt
from seqrmt.runtime import single_threaded_blas

C81 = 81



@pytest.fixture(autouse=True)
def _one_blas_thread():
    """Monte Carlo loops over small matrices run faster and steadier on one BLAS thread."""
    with single_threaded_blas():
        yield

@pytest.fixture(scope="module")
def P81():
    """Next-token distributions of the talk's setting (k=3, c=81, rho=0.9), one draw."""
    return lgm.softmax_distributions(3, C81, 0.9, rng=2023)


def _fit(Z, N, gammas):
    """Ridge predictions p_hat_a (columns, one slice per ridge) and (1/c) Tr Q, from the counts
    form (1/n) X X^T = Z diag(n_a / n) Z^T, X Y^T = Z N, with one eigendecomposition."""
    n = N.sum()
    lam, U = np.linalg.eigh((Z * (N.sum(axis=1) / n)) @ Z.T)
    B = U.T @ Z
    P_hat = np.array([((B @ N / n) / (lam + g)[:, None]).T @ B for g in gammas])
    return P_hat, np.array([np.sum(1 / (lam + g)) / Z.shape[1] for g in gammas])


def _monte_carlo(P, w, d, n, gammas, trials, seed, counts="fixed"):
    """Per-trial predictions (trials, g, k, c) and (1/c) Tr Q (trials, g)."""
    rng = np.random.default_rng(seed)
    out = [_fit(*lgm.simulate_context_model(P, w, d, n, rng, counts=counts), gammas)
           for _ in range(trials)]
    return np.array([o[0] for o in out]), np.array([o[1] for o in out])


def _uniform_train_error(s, d, c, n, gamma):
    """The training error for uniform weights, a function of s = (1/c) sum_a ||p_a||^2 only."""
    delta = rmt.ridge_delta(d / c, gamma)
    D, beta = delta / (1 + delta), (1 + delta) ** -2
    kb = (d / c) / (1 / (1 + delta) + gamma) ** 2 * beta
    return (1 - 2 * D) * s + (D**2 + kb / ((1 - kb) * (1 + delta) ** 2)) * (c / n + (1 - c / n) * s)


# ---------------------------------------------------------------- Model 1, theory
@pytest.mark.parametrize(
    "gamma,delta,alpha,beta,kappa,D",
    [
        (0.01, 9.512492, None, None, None, 0.904875),
        (0.1, 2.701562, 0.270156, 0.072984, 7.298438, 0.729844),
        (1.0, 0.618034, 0.618034, 0.381966, 0.381966, 0.381966),
        (10.0, 0.091608, None, None, None, 0.083920),
    ],
)
def test_context_theory_checkpoint_A5(P81, gamma, delta, alpha, beta, kappa, D):
    th = lgm.context_theory(P81, np.ones(C81), d=81, n=5000, gamma=gamma)
    assert th.delta == pytest.approx(delta, abs=1e-6)
    assert th.delta == pytest.approx(rmt.ridge_delta(1.0, gamma), rel=1e-10)  # closed form, eta = d/c
    for got, want in ((th.alpha, alpha), (th.beta, beta), (th.kappa, kappa)):
        if want is not None:
            assert got == pytest.approx(want, abs=1e-6)
    np.testing.assert_allclose(th.D, D, atol=1e-6)


def test_context_theory_invariants(P81):
    w = np.where(np.arange(C81) % 2 == 0, 0.5, 1.5)
    w = w / w.mean()
    th = lgm.context_theory(P81, w, d=60, n=5000, gamma=0.3)
    np.testing.assert_allclose(th.m, P81 * th.D)  # E p_hat_a = D_a p_a
    # tau = kappa / (1 - kappa beta) = -d delta / d gamma (independent: finite differences)
    h = 1e-6
    fd = -(lgm.context_theory(P81, w, 60, 5000, 0.3 + h).delta
           - lgm.context_theory(P81, w, 60, 5000, 0.3 - h).delta) / (2 * h)
    assert th.tau == pytest.approx(fd, rel=1e-6)
    assert th.D[w < 1].max() < th.D[w > 1].min()  # rare contexts are shrunk more
    # second moments are symmetric PSD and dominate the outer product of the means
    assert np.allclose(th.C, np.transpose(th.C, (0, 2, 1)))
    assert np.linalg.eigvalsh(th.cov).min() > -1e-12
    # trace of Sigma_a: c/(alpha_a n) + (1 - c/(alpha_a n)) ||p_a||^2
    f = C81 / (w * 5000)
    np.testing.assert_allclose(np.trace(th.Sigma, axis1=1, axis2=2), f + (1 - f) * np.sum(P81**2, axis=0))


def test_uniform_training_error_depends_on_s_only(P81):
    s = float(np.mean(np.sum(P81**2, axis=0)))
    for gamma in (0.01, 0.1, 1.0, 10.0):
        th = lgm.context_theory(P81, np.ones(C81), 81, 5000, gamma)
        assert th.train_error == pytest.approx(_uniform_train_error(s, 81, 81, 5000, gamma), rel=1e-12)
    # another P with the same s gives the same error
    Q = P81[:, ::-1].copy()
    assert lgm.context_theory(Q, np.ones(C81), 81, 5000, 0.1).train_error == pytest.approx(
        lgm.context_theory(P81, np.ones(C81), 81, 5000, 0.1).train_error, rel=1e-12)


def test_variance_split_token_noise_and_leakage():
    """Uniform weights: Tr Cov p_hat_a = D^2 (c/n)(1 - ||p_a||^2) + L (c/n + (1 - c/n)||p||^2)-terms;
    the token noise vanishes as n -> infinity, the leakage tends to L s > 0."""
    c = d = 27
    P = lgm.softmax_distributions(3, c, 0.9, rng=11)
    s = np.mean(np.sum(P**2, axis=0))
    for n in (270, 2700, 10**7):
        th = lgm.context_theory(P, np.ones(c), d, n, 0.1)
        tr_sigma = np.trace(th.Sigma, axis1=1, axis2=2)
        token = np.mean(th.D**2 * (tr_sigma - np.sum(P**2, axis=0)))
        leak = np.mean(np.trace(th.C, axis1=1, axis2=2) - th.D**2 * tr_sigma)
        L = th.kappa * th.beta / ((1 - th.kappa * th.beta) * (1 + th.delta) ** 2)
        assert token == pytest.approx(th.D[0] ** 2 * c / n * (1 - s), rel=1e-10)
        assert leak == pytest.approx(L * (c / n + (1 - c / n) * s), rel=1e-10)
        assert token + leak == pytest.approx(np.mean(np.trace(th.cov, axis1=1, axis2=2)), rel=1e-10)
    assert token < 1e-5 < 0.01 < leak  # n = 10^7: the leakage stays


def test_expected_softmax_sq_norm_A6():
    sbar = lgm.expected_softmax_sq_norm(3, 0.9)
    assert sbar == pytest.approx(0.503610, abs=1e-6)
    assert lgm.expected_softmax_sq_norm(3, 0.9, n_nodes=60) == pytest.approx(sbar, abs=1e-9)
    v = np.sum(lgm.softmax_distributions(3, 2_000_000, 0.9, rng=0) ** 2, axis=0)  # Monte Carlo
    assert abs(v.mean() - sbar) < 4 * v.std() / np.sqrt(v.size)
    assert lgm.expected_softmax_sq_norm(2, 1e3) == pytest.approx(0.5, abs=1e-5)  # hot: uniform p


def test_training_error_checkpoint_A7():
    sbar = lgm.expected_softmax_sq_norm(3, 0.9)
    got = _uniform_train_error(sbar, 81, 81, 5000, np.array([0.01, 0.1, 1.0, 10.0]))
    np.testing.assert_allclose(got, [0.032062, 0.083603, 0.226919, 0.425733], atol=1e-5)


# ---------------------------------------------------------------- the sampler
def test_sampler_counts_form_equals_ridge_on_the_data_matrix(P81):
    Z, N = lgm.simulate_context_model(P81, np.ones(C81), 40, 3000, rng=21)
    assert Z.shape == (40, C81) and N.shape == (C81, 3) and N.sum() == 3000
    a = np.repeat(np.arange(C81), N.sum(axis=1))  # the contexts of the samples
    tokens = np.repeat(np.tile(np.arange(3), C81), N.ravel())
    X, Y = Z[:, a], np.eye(3)[tokens].T
    P_hat, delta = _fit(Z, N, [0.1, 1.0])
    for i, gamma in enumerate((0.1, 1.0)):
        W = np.linalg.solve(X @ X.T / 3000 + gamma * np.eye(40), X @ Y.T / 3000)
        np.testing.assert_allclose(P_hat[i], W.T @ Z, atol=1e-12)
        assert delta[i] == pytest.approx(np.trace(np.linalg.inv(X @ X.T / 3000 + gamma * np.eye(40))) / C81)


def test_sampler_laws(P81):
    w = np.where(np.arange(C81) % 2 == 0, 0.5, 1.5)
    w = w / w.mean()
    Z, N = lgm.simulate_context_model(P81, w, 5, 5000, rng=1, counts="fixed")
    np.testing.assert_array_equal(N.sum(axis=1), np.rint(w * 5000 / C81))
    draws = [lgm.simulate_context_model(P81, w, 5, 20000, rng=s)[1] for s in range(20)]
    n_a = np.array([N.sum(axis=1) for N in draws])
    assert np.all(n_a.sum(axis=1) == 20000)
    rare, frequent = n_a[:, w < 1].mean(), n_a[:, w > 1].mean()
    assert frequent / rare == pytest.approx(3.0, rel=0.02)  # weights 1.5 / 0.5
    freq = np.sum(draws, axis=0) / np.sum(n_a, axis=0)[:, None]  # pooled next-token frequencies
    assert np.max(np.abs(freq - P81.T)) < 4 * np.sqrt(0.25 / (20 * 20000 / C81 / 2))
    a, b = (lgm.simulate_context_model(P81, w, 5, 500, rng=7) for _ in range(2))
    np.testing.assert_array_equal(a[1], b[1])  # a seed gives one training set
    assert np.std(Z) == pytest.approx(1.0, rel=0.1)


# ---------------------------------------------------------------- Model 1, Monte Carlo
def test_context_model_means_A9(P81):
    """Spec A9: the Monte Carlo mean of p_hat_a is D_a p_a within its noise (fixed counts 62)."""
    T = 600
    P_hats, _ = _monte_carlo(P81, np.ones(C81), 81, 5022, [0.1, 1.0], T, seed=9)
    for i, gamma in enumerate((0.1, 1.0)):
        P_hat = P_hats[:, i]
        th = lgm.context_theory(P81, np.ones(C81), 81, 5022, gamma)
        noise = np.sqrt(P_hat.var(axis=0).sum() / T)
        assert np.linalg.norm(P_hat.mean(axis=0) - th.m) < 2.0 * noise
        D_t = np.sum(P_hat * P81, axis=1) / np.sum(P81**2, axis=0)  # (T, c) per-trial shrinkage
        D_mc, D_se = D_t.mean(), D_t.mean(axis=1).std(ddof=1) / np.sqrt(T)
        assert abs(D_mc - th.D[0]) < 4 * D_se + 0.005  # a finite-c bias of a few thousandths


def _second_moment(P, w, gammas, seed, trials=1500):
    """Monte Carlo C_a (fixed counts, n = 5022) with its relative noise, and the theory at the
    weights the fixed counts realise, per ridge."""
    n_a = np.rint(w * 5022 / C81)
    w_real = C81 * n_a / n_a.sum()
    P_hats, _ = _monte_carlo(P, w, 81, 5022, gammas, trials, seed)
    out = []
    for i, gamma in enumerate(gammas):
        outer = np.einsum("tia,tja->taij", P_hats[:, i], P_hats[:, i])
        th = lgm.context_theory(P, w_real, 81, int(n_a.sum()), gamma)
        noise = np.sqrt(outer.var(axis=0).sum() / trials) / np.linalg.norm(th.C)
        out.append((th, w_real, outer.mean(axis=0), noise))
    return out


def test_context_model_second_moment_two_level_A10(P81):
    w = np.where(np.arange(C81) % 2 == 0, 0.5, 1.5)
    for th, _, C_mc, noise in _second_moment(P81, w / w.mean(), [0.1, 1.0], seed=10):
        assert np.linalg.norm(C_mc - th.C) / np.linalg.norm(th.C) < 2.0 * noise  # spec A10


def test_weighted_cross_term_beats_unweighted(P81):
    """Correction 3 of the spec: the unweighted cross term beta Sigma_bar is rejected by simulation.

    At weights {0.1, 1.9} and gamma = 1 the two forms differ by about 5% of ||C||, several times
    the Monte Carlo noise."""
    w = np.where(np.arange(C81) % 2 == 0, 0.1, 1.9)
    (th, w_real, C_mc, noise), = _second_moment(P81, w / w.mean(), [1.0], seed=20)
    kb = th.kappa * th.beta
    cross = kb / ((1 - kb) * (1 + w_real * th.delta) ** 2)
    unweighted = th.D[:, None, None] ** 2 * th.Sigma + cross[:, None, None] * th.Sigma.mean(axis=0)
    norm = np.linalg.norm(th.C)
    assert np.linalg.norm(C_mc - th.C) / norm < 2.0 * noise
    assert np.linalg.norm(C_mc - unweighted) / norm > 2.5 * noise


def test_context_model_training_error_A11():
    """Spec A11: at c = d = 243 the training error and (1/c) Tr Q agree with theory to 0.7% and 1%."""
    c = 243
    P = lgm.softmax_distributions(3, c, 0.9, rng=11)
    P_hat, delta = _monte_carlo(P, np.ones(c), c, 62 * c, [0.1, 1.0], 300, seed=12)
    for i, gamma in enumerate((0.1, 1.0)):
        th = lgm.context_theory(P, np.ones(c), c, 62 * c, gamma)
        err = np.sum((P_hat[:, i] - P) ** 2, axis=(1, 2)) / c
        assert abs(err.mean() - th.train_error) < 4 * err.std(ddof=1) / np.sqrt(err.size) + 0.007 * th.train_error
        assert delta[:, i].mean() == pytest.approx(th.delta, rel=0.01)


def test_multinomial_counts_bias_upwards(P81):
    """The finite-count caveat: multinomial counts put the Monte Carlo training error above the formula."""
    P_hat, _ = _monte_carlo(P81, np.ones(C81), 81, 5000, [0.03], 400, seed=13, counts="multinomial")
    th = lgm.context_theory(P81, np.ones(C81), 81, 5000, 0.03)
    err = np.sum((P_hat[:, 0] - P81) ** 2, axis=(1, 2)) / C81
    assert err.mean() - th.train_error > 2 * err.std(ddof=1) / np.sqrt(err.size)


# ---------------------------------------------------------------- validation
def test_bad_input_raises_value_error_naming_argument(P81):
    w = np.ones(C81)
    cases = [
        (lambda: lgm.context_theory(P81, w, 81, 5000, 0.0), "gamma"),
        (lambda: lgm.context_theory(P81, w, 0, 5000, 0.1), "d"),
        (lambda: lgm.context_theory(P81, w, 81, -5, 0.1), "n"),
        (lambda: lgm.context_theory(P81, -w, 81, 5000, 0.1), "weights"),
        (lambda: lgm.context_theory(P81, 2 * w, 81, 5000, 0.1), "weights"),
        (lambda: lgm.context_theory(P81, w[:-1], 81, 5000, 0.1), "weights"),
        (lambda: lgm.context_theory(P81 * 1.1, w, 81, 5000, 0.1), "P"),
        (lambda: lgm.context_theory(np.where(P81 > 0.5, np.nan, P81), w, 81, 5000, 0.1), "P"),
        (lambda: lgm.context_theory(P81, w, 81, 5000, float("inf")), "gamma"),
        (lambda: lgm.simulate_context_model(P81, w, 81, 0), "n"),
        (lambda: lgm.simulate_context_model(P81, w, 81, 5000, counts="exact"), "counts"),
        (lambda: lgm.simulate_context_model(P81, w, 81, 40, counts="fixed"), "n"),
        (lambda: lgm.softmax_distributions(3, 5, 0.0), "rho"),
        (lambda: lgm.expected_softmax_sq_norm(9, 1.0), "k"),
    ]
    for call, name in cases:
        with pytest.raises(ValueError, match=name):
            call()


def test_context_theory_raises_on_nonconvergence(P81):
    with pytest.raises(ConvergenceError):
        lgm.context_theory(P81, np.ones(C81), 81, 5000, 0.01, tol=1e-15, max_iter=1)
