"""Tests of seqrmt.lgm: checkpoints A5-A16 of the Part 1 spec, invariants and validation."""

import numpy as np
import pytest

from seqrmt import lgm, rmt
from seqrmt import ConvergenceError

C81 = 81


@pytest.fixture(scope="module")
def P81():
    """Next-token distributions of the talk's setting (k=3, c=81, rho=0.9), one draw."""
    return lgm.softmax_distributions(3, C81, 0.9, rng=2023)


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
    fd = -(lgm.context_theory(P81, w, 60, 5000, 0.3 + h).delta - lgm.context_theory(P81, w, 60, 5000, 0.3 - h).delta) / (2 * h)
    assert th.tau == pytest.approx(fd, rel=1e-6)
    # rare contexts (small weight) are shrunk more
    assert th.D[w < 1].max() < th.D[w > 1].min()
    # second moments are symmetric PSD and dominate the outer product of the means
    assert np.allclose(th.C, np.transpose(th.C, (0, 2, 1)))
    assert np.linalg.eigvalsh(th.cov).min() > -1e-12
    # trace of Sigma_a: c/(alpha_a n) + (1 - c/(alpha_a n)) ||p_a||^2
    f = C81 / (w * 5000)
    np.testing.assert_allclose(np.trace(th.Sigma, axis1=1, axis2=2), f + (1 - f) * np.sum(P81**2, axis=0))


def test_uniform_training_error_formula(P81):
    s = float(np.mean(np.sum(P81**2, axis=0)))
    for gamma in (0.01, 0.1, 1.0, 10.0):
        th = lgm.context_theory(P81, np.ones(C81), 81, 5000, gamma)
        assert th.train_error == pytest.approx(lgm.context_train_error_uniform(s, 81, 81, 5000, gamma), rel=1e-12)


def test_expected_softmax_sq_norm_A6():
    sbar = lgm.expected_softmax_sq_norm(3, 0.9)
    assert sbar == pytest.approx(0.503610, abs=1e-6)
    assert lgm.expected_softmax_sq_norm(3, 0.9, n_nodes=60) == pytest.approx(sbar, abs=1e-9)
    # independent Monte Carlo
    rng = np.random.default_rng(0)
    G = rng.standard_normal((2_000_000, 3)) / 0.9
    p = np.exp(G - G.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    v = np.sum(p**2, axis=1)
    assert abs(v.mean() - sbar) < 4 * v.std() / np.sqrt(v.size)


def test_training_error_checkpoint_A7():
    sbar = lgm.expected_softmax_sq_norm(3, 0.9)
    got = lgm.context_train_error_uniform(sbar, 81, 81, 5000, np.array([0.01, 0.1, 1.0, 10.0]))
    np.testing.assert_allclose(got, [0.032062, 0.083603, 0.226919, 0.425733], atol=1e-5)


# ---------------------------------------------------------------- Model 1, Monte Carlo
def _noise_level(sim_m, sim_C, n_trials):
    """Relative MC noise of the mean: sqrt(sum of per-entry variances / T) / ||m||."""
    var = np.einsum("aii->ia", sim_C) - sim_m**2  # (k, c)
    return np.sqrt(var.sum() / n_trials) / np.linalg.norm(sim_m)


def test_context_model_means_A9(P81):
    T = 2000
    sim = lgm.simulate_context_model(P81, np.ones(C81), 81, 5022, [0.1, 1.0], T, rng=9, counts="fixed")
    assert sim.n_eff == 5022
    for i, gamma in enumerate((0.1, 1.0)):
        th = lgm.context_theory(P81, np.ones(C81), 81, sim.n_eff, gamma)
        rel = np.linalg.norm(sim.m[i] - th.m) / np.linalg.norm(th.m)
        noise = _noise_level(sim.m[i], sim.C[i], T)
        assert rel < 2.0 * noise  # spec A9: error equal to the MC noise level (0.9%, 1.5%)
        D_hat = np.mean(np.sum(sim.m[i] * P81, axis=0) / np.sum(P81**2, axis=0))
        assert D_hat == pytest.approx(th.D[0], abs=5 * noise * th.D[0])


def _batched_second_moment(P, w, gamma, seed, n_batches=5, trials=600):
    """MC second moments over batches; returns (theory, MC mean, relative MC noise) with realised weights."""
    rng = np.random.default_rng(seed)
    batches = [lgm.simulate_context_model(P, w, 81, 5022, [gamma], trials, rng, counts="fixed") for _ in range(n_batches)]
    n_a = np.rint(w * 5022 / 81)
    w_real = 81 * n_a / n_a.sum()  # fixed counts realise these weights exactly
    th = lgm.context_theory(P, w_real, 81, batches[0].n_eff, gamma)
    Cs = np.stack([bt.C[0] for bt in batches])
    noise = np.linalg.norm(Cs.std(axis=0, ddof=1) / np.sqrt(n_batches)) / np.linalg.norm(th.C)
    return th, w_real, Cs.mean(axis=0), noise


def _unweighted_cross_term(th, w):
    """The variant with an unweighted average of the Sigma_b (Correction 3 of the spec says it is wrong)."""
    kb = th.kappa * th.beta
    return th.D[:, None, None] ** 2 * th.Sigma + (kb / ((1 - kb) * (1 + w * th.delta) ** 2))[:, None, None] * th.Sigma.mean(axis=0)


@pytest.mark.parametrize("gamma", [0.1, 1.0])
def test_context_model_second_moment_two_level_A10(P81, gamma):
    w = np.where(np.arange(C81) % 2 == 0, 0.5, 1.5)
    th, _, C_mc, noise = _batched_second_moment(P81, w / w.mean(), gamma, seed=10)
    rel = np.linalg.norm(C_mc - th.C) / np.linalg.norm(th.C)
    assert rel < 2.0 * noise  # spec A10: 1.3%, 1.7% against MC noise 1.2%, 1.6%


def test_weighted_cross_term_beats_unweighted():
    """Correction 3: with strongly unequal weights the unweighted cross term is rejected by simulation.

    At weights {0.1, 1.9} and gamma = 1 the two forms differ by about 5% of ||C||, about 3.5 times
    the MC noise of 3000 trials (at {0.5, 1.5} they differ by only 0.5-1.9%, too little to resolve).
    """
    P = lgm.softmax_distributions(3, C81, 0.9, rng=2023)
    w = np.where(np.arange(C81) % 2 == 0, 0.1, 1.9)
    th, w_real, C_mc, noise = _batched_second_moment(P, w / w.mean(), 1.0, seed=20)
    norm = np.linalg.norm(th.C)
    assert np.linalg.norm(C_mc - th.C) / norm < 2.0 * noise
    assert np.linalg.norm(C_mc - _unweighted_cross_term(th, w_real)) / norm > 2.5 * noise


def test_context_model_training_error_A11():
    c = d = 243
    P = lgm.softmax_distributions(3, c, 0.9, rng=11)
    sim = lgm.simulate_context_model(P, np.ones(c), d, 62 * c, [0.1, 1.0], 600, rng=12, counts="fixed",
                                     keep_second_moment=False)
    for i, gamma in enumerate((0.1, 1.0)):
        th = lgm.context_theory(P, np.ones(c), d, sim.n_eff, gamma)
        gap = abs(sim.train_error_mean[i] - th.train_error)
        # O(1/c) finite-size gap (measured 0.5-0.7% at gamma=0.1, 0.1% at gamma=1 with many trials) plus MC noise
        assert gap < 4 * sim.train_error_se[i] + 0.007 * th.train_error
        assert sim.delta[i].mean() == pytest.approx(th.delta, rel=0.01)


def test_multinomial_counts_bias_upwards(P81):
    """The finite-count caveat: multinomial counts put the MC training error above the formula."""
    sim = lgm.simulate_context_model(P81, np.ones(C81), 81, 5000, [0.03], 400, rng=13, keep_second_moment=False)
    th = lgm.context_theory(P81, np.ones(C81), 81, 5000, 0.03)
    assert sim.n_eff == 5000
    assert sim.train_error_mean[0] - th.train_error > 2 * sim.train_error_se[0]


# ---------------------------------------------------------------- Model 2
@pytest.fixture(scope="module")
def mixture9():
    rng = np.random.default_rng(14)
    c = 9
    P = lgm.softmax_distributions(3, c, 0.9, rng)
    A = rng.standard_normal((c, c))
    G = A @ A.T / c + np.eye(c)
    return P, np.full(c, 1 / c), G


def test_mixture_theory_invariants(mixture9):
    P, pi, G = mixture9
    M1 = lgm.means_from_gram(G, 400, rng=1)
    M2 = lgm.means_from_gram(G, 400, rng=2)
    np.testing.assert_allclose(M1.T @ M1, G, atol=1e-10)
    t1, t2 = lgm.mixture_theory(M1, pi, P, 800, 0.3), lgm.mixture_theory(M2, pi, P, 800, 0.3)
    assert t1.test_error == pytest.approx(t2.test_error, rel=1e-10)  # depends on M only through G
    # ||W||^2 = -h'(gamma), independently by finite differences
    h = 1e-5
    fd = -(lgm.mixture_theory(M1, pi, P, 800, 0.3 + h).h - lgm.mixture_theory(M1, pi, P, 800, 0.3 - h).h) / (2 * h)
    assert t1.w_norm2 == pytest.approx(fd, rel=1e-6)
    # R = (zeta (1+delta) Pi^{-1} + G)^{-1} and Qbar = (I - M R M^T)/zeta is the inverse of zeta I + M Pi M^T / (1+delta)
    Qbar = (np.eye(400) - M1 @ t1.R @ M1.T) / t1.zeta
    np.testing.assert_allclose(Qbar @ (t1.zeta * np.eye(400) + M1 @ np.diag(pi) @ M1.T / (1 + t1.delta)), np.eye(400), atol=1e-10)
    # large ridge: W -> 0, the prediction collapses and the test error tends to sum_a pi_a ||p_a||^2
    big = lgm.mixture_theory(M1, pi, P, 800, 1e8)
    assert big.test_error == pytest.approx(float(np.sum(pi * np.sum(P**2, axis=0))), rel=1e-6)
    assert big.test_error_onehot == pytest.approx(1.0, rel=1e-6)


@pytest.mark.parametrize("d", [200, 400])
def test_mixture_monte_carlo_A15(mixture9, d):
    P, pi, G = mixture9
    M = lgm.means_from_gram(G, d, rng=3)
    sim = lgm.simulate_mixture_model(M, pi, P, 2 * d, [0.1, 1.0], 40, rng=15)
    for i, gamma in enumerate((0.1, 1.0)):
        th = lgm.mixture_theory(M, pi, P, 2 * d, gamma)
        # spec A15: deviations 0.3-0.6%, comparable with the MC noise
        assert abs(sim.test_error_mean[i] - th.test_error) < 4 * sim.test_error_se[i] + 0.002 * th.test_error
        assert abs(sim.train_error_mean[i] - th.train_error) < 4 * sim.train_error_se[i] + 0.002 * th.train_error
        assert sim.w_norm2[i].mean() == pytest.approx(th.w_norm2, rel=0.03)


def test_mixture_talk_like_A16():
    rng = np.random.default_rng(16)
    c = d = 81
    n = 5000
    P = lgm.softmax_distributions(3, c, 0.9, rng)
    M = rng.standard_normal((d, c))
    pi = np.full(c, 1 / c)
    sim = lgm.simulate_mixture_model(M, pi, P, n, [0.1, 1.0], 40, rng)
    for i, (gamma, delta, typo) in enumerate(((0.1, 0.01493, 0.85520), (1.0, 0.00813, 0.41660))):
        th = lgm.mixture_theory(M, pi, P, n, gamma)
        assert th.delta == pytest.approx(delta, abs=1e-5)
        assert rmt.ridge_delta(d / n, gamma, variant="talk") == pytest.approx(typo, abs=1e-5)
        # ||mu_a||^2 ~ d violates the O(1) regime; spec A16 measures 0.15-0.7%
        assert abs(sim.test_error_mean[i] - th.test_error) < 0.01 * th.test_error


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
        (lambda: lgm.simulate_context_model(P81, w, 81, 5000, 0.1, 0), "n_trials"),
        (lambda: lgm.simulate_context_model(P81, w, 81, 5000, 0.1, 2, counts="exact"), "counts"),
        (lambda: lgm.softmax_distributions(3, 5, 0.0), "rho"),
        (lambda: lgm.expected_softmax_sq_norm(9, 1.0), "k"),
        (lambda: lgm.context_train_error_uniform(1.5, 81, 81, 5000, 0.1), "s"),
        (lambda: lgm.means_from_gram(-np.eye(3), 5), "gram"),
        (lambda: lgm.means_from_gram(np.eye(3), 2), "d"),
        (lambda: lgm.mixture_theory(np.ones((5, 3)), np.ones(3) / 3, np.ones((2, 4)) / 2, 10, 1.0), "P"),
        (lambda: lgm.mixture_theory(np.ones((5, 3)), np.ones(3), np.ones((2, 3)) / 2, 10, 1.0), "pi"),
        (lambda: lgm.mixture_theory(np.ones((5, 3)), np.ones(3) / 3, np.ones((2, 3)) / 2, 10, -1.0), "gamma"),
        (lambda: lgm.simulate_mixture_model(np.ones(5), np.ones(3) / 3, np.ones((2, 3)) / 2, 10, 1.0, 1), "M"),
    ]
    for call, name in cases:
        with pytest.raises(ValueError, match=name):
            call()


def test_context_theory_raises_on_nonconvergence(P81):
    with pytest.raises(ConvergenceError):
        lgm.context_theory(P81, np.ones(C81), 81, 5000, 0.01, tol=1e-15, max_iter=1)


# ---------------------------------------------------------------- Model 1 building blocks
def test_counts_form_equals_ridge_on_the_data_matrix(P81):
    Z, a, tokens = lgm.sample_context_data(P81, np.ones(C81), 40, 3000, rng=21)
    assert Z.shape == (40, C81) and a.shape == tokens.shape == (3000,)
    X, Y = Z[:, a], np.eye(3)[tokens].T
    N = np.zeros((C81, 3))
    np.add.at(N, (a, tokens), 1)
    P_hat, delta_hat = lgm.context_predictions(Z, N, [0.1, 1.0])
    for i, gamma in enumerate((0.1, 1.0)):
        Q = np.linalg.inv(X @ X.T / 3000 + gamma * np.eye(40))
        np.testing.assert_allclose(P_hat[i], (Q @ X @ Y.T / 3000).T @ Z, atol=1e-12)
        assert delta_hat[i] == pytest.approx(np.trace(Q) / C81, rel=1e-12)
    # token frequencies follow P: chi-square-free check on the pooled marginal
    pooled = np.bincount(tokens, minlength=3) / 3000
    expected = P81[:, a].mean(axis=1)
    assert np.max(np.abs(pooled - expected)) < 4 * np.sqrt(0.25 / 3000)


def test_shrinkage_estimate_and_simulation_fields(P81):
    D = np.linspace(0.2, 0.9, C81)
    np.testing.assert_allclose(lgm.shrinkage_estimate(P81 * D, P81), D)
    sim = lgm.simulate_context_model(P81, np.ones(C81), 81, 5022, [0.1, 1.0], 30, rng=22, counts="fixed")
    np.testing.assert_allclose(sim.realised_weights, 1.0)
    assert sim.cov.shape == (2, C81, 3, 3)
    assert np.linalg.eigvalsh(sim.cov).min() > -1e-12  # covariances are PSD
    sim = lgm.simulate_context_model(P81, np.ones(C81), 81, 5000, 0.1, 30, rng=23, keep_second_moment=False)
    np.testing.assert_allclose(sim.realised_weights.mean(axis=1), 1.0)
    assert np.std(sim.realised_weights) > 0.05  # multinomial counts vary
    with pytest.raises(ValueError, match="keep_second_moment"):
        sim.cov


def test_model1_building_blocks_validate_input(P81):
    Z = np.ones((4, C81))
    with pytest.raises(ValueError, match="counts"):
        lgm.context_predictions(Z, np.ones((C81 - 1, 3)), 0.1)
    with pytest.raises(ValueError, match="counts"):
        lgm.context_predictions(Z, -np.ones((C81, 3)), 0.1)
    with pytest.raises(ValueError, match="gamma"):
        lgm.context_predictions(Z, np.ones((C81, 3)), 0.0)
    with pytest.raises(ValueError, match="m"):
        lgm.shrinkage_estimate(np.ones((2, 3)), P81)
    with pytest.raises(ValueError, match="weights"):
        lgm.sample_context_data(P81, np.ones(3), 4, 10)


# ---------------------------------------------------------------- pooling Monte Carlo batches
def test_pool_context_simulations_matches_one_run():
    """Pooling batches gives trial-weighted means and concatenated per-trial arrays."""
    P = lgm.softmax_distributions(3, 9, 0.9, rng=0)
    runs = [lgm.simulate_context_model(P, np.ones(9), 9, 90, [0.1, 1.0], t, rng=s)
            for s, t in ((1, 3), (2, 5))]
    pooled = lgm.pool_context_simulations(runs)
    assert pooled.train_error.shape == (2, 8) and pooled.realised_weights.shape == (8, 9)
    np.testing.assert_allclose(pooled.m, (3 * runs[0].m + 5 * runs[1].m) / 8)
    np.testing.assert_allclose(pooled.C, (3 * runs[0].C + 5 * runs[1].C) / 8)
    np.testing.assert_allclose(pooled.train_error_mean,
                               np.concatenate([r.train_error for r in runs], axis=1).mean(axis=1))
    no_C = lgm.simulate_context_model(P, np.ones(9), 9, 90, [0.1, 1.0], 2, rng=3, keep_second_moment=False)
    assert lgm.pool_context_simulations([runs[0], no_C]).C is None


def test_pool_context_simulations_validation():
    P = lgm.softmax_distributions(3, 9, 0.9, rng=0)
    a = lgm.simulate_context_model(P, np.ones(9), 9, 90, [0.1], 2, rng=1)
    b = lgm.simulate_context_model(P, np.ones(9), 9, 90, [0.2], 2, rng=1)
    with pytest.raises(ValueError, match="sims"):
        lgm.pool_context_simulations([])
    with pytest.raises(ValueError, match="sims"):
        lgm.pool_context_simulations([a, "x"])
    with pytest.raises(ValueError, match="sims"):
        lgm.pool_context_simulations([a, b])


# ------------------------------------------------ variance: token noise vs leakage
def test_context_variance_split_limits_and_closed_form():
    """Token noise = D^2 (c/n)(1 - s) and leakage = L (c/n + (1 - c/n) s) for uniform weights,
    with L = kappa beta / ((1 - kappa beta)(1 + delta)^2); as n -> infinity the token noise
    vanishes and the leakage tends to L s > 0."""
    rng = np.random.default_rng(11)
    c, d = 27, 27
    P = lgm.softmax_distributions(3, c, 0.9, rng)
    s = np.mean(np.sum(P**2, axis=0))
    for n in (270, 2700, 10**7):
        th = lgm.context_theory(P, np.ones(c), d, n, 0.1)
        tok, leak = lgm.context_variance_split(th)
        D = th.D[0]
        L = th.kappa * th.beta / ((1 - th.kappa * th.beta) * (1 + th.delta) ** 2)
        assert tok == pytest.approx(D**2 * c / n * (1 - s), rel=1e-10)
        assert leak == pytest.approx(L * (c / n + (1 - c / n) * s), rel=1e-10)
    assert tok < 1e-5 < 0.01 < leak  # n = 10^7: leakage stays


def test_context_variance_split_monte_carlo():
    """Both parts against a fixed-count simulation at two sample sizes (total variance within 6 se)."""
    rng = np.random.default_rng(12)
    c = d = 27
    P = lgm.softmax_distributions(3, c, 0.9, rng)
    for n in (5 * c, 200 * c):
        th = lgm.context_theory(P, np.ones(c), d, n, 0.1)
        batches = [lgm.simulate_context_model(P, np.ones(c), d, n, [0.1], 100, rng, counts="fixed")
                   for _ in range(8)]
        v = [np.mean(np.trace(b.cov[0], axis1=1, axis2=2)) * 100 / 99 for b in batches]
        se = np.std(v, ddof=1) / np.sqrt(len(v))
        assert abs(np.mean(v) - sum(lgm.context_variance_split(th))) < 6 * se + 0.05 * np.mean(v)
    with pytest.raises(ValueError, match="theory"):
        lgm.context_variance_split("not a theory")
