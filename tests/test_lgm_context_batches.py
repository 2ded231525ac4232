"""Tests of the Model-1 batch drivers, summaries and figures of seqrmt.lgm.

Each driver is compared with the inline computation it replaced in the notebook
"A linear generative model of next tokens" (the same spawned generators, see
seqrmt.ensemble), or with a closed form.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from seqrmt import lgm  # noqa: E402
from seqrmt.ensemble import spawn_generators  # noqa: E402

C, K, D_EMB = 9, 3, 9


@pytest.fixture(scope="module")
def P():
    return lgm.softmax_distributions(K, C, 0.9, rng=5)


@pytest.fixture(scope="module")
def W2():
    """Two-level weights with mean one."""
    w = np.where(np.arange(C) % 2 == 0, 0.5, 1.5)
    return w / w.mean()


@pytest.fixture(scope="module")
def batches(P, W2):
    return lgm.simulate_context_batches(P, W2, D_EMB, 180, [0.1, 1.0], 12, rng=3,
                                        n_batches=4, counts="fixed")


def test_batches_equal_the_inline_loop(P):
    got = lgm.simulate_context_batches(P, np.ones(C), D_EMB, 90, [0.1, 1.0], 9, rng=7,
                                       n_batches=3)
    want = [lgm.simulate_context_model(P, np.ones(C), D_EMB, 90, [0.1, 1.0], 3, g)
            for g in spawn_generators(7, 3)]  # batch b: the b-th child as its root
    assert len(got) == 3
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.m, w.m)
        np.testing.assert_array_equal(g.C, w.C)
        np.testing.assert_array_equal(g.train_error, w.train_error)


def test_batches_validation(P):
    with pytest.raises(ValueError, match="n_trials"):
        lgm.simulate_context_batches(P, np.ones(C), D_EMB, 90, 0.1, 5, rng=0, n_batches=3)
    with pytest.raises(ValueError, match="n_batches"):
        lgm.simulate_context_batches(P, np.ones(C), D_EMB, 90, 0.1, 8, rng=0, n_batches=1)


def test_batch_shrinkage_matches_inline(P, W2, batches):
    got = lgm.context_batch_shrinkage(batches, P)
    want = [lgm.shrinkage_estimate(b.m, P).mean(axis=1) for b in batches]
    np.testing.assert_allclose(got, want, rtol=1e-13)
    groups = (W2 < 1, W2 > 1)
    got_g = lgm.context_batch_shrinkage(batches, P, groups)
    assert got_g.shape == (4, 2, 2)
    for bi, b in enumerate(batches):
        for i in range(2):
            D = lgm.shrinkage_estimate(b.m[i], P)
            np.testing.assert_allclose(got_g[bi, i], [D[gr].mean() for gr in groups],
                                       rtol=1e-13)
    # a single group of all contexts is the plain average
    np.testing.assert_allclose(lgm.context_batch_shrinkage(batches, P, [np.ones(C, bool)])[..., 0],
                               got, rtol=1e-13)
    with pytest.raises(ValueError, match="groups"):
        lgm.context_batch_shrinkage(batches, P, [np.zeros(C, bool)])
    with pytest.raises(ValueError, match="batches"):
        lgm.context_batch_shrinkage([], P)


def test_batch_variance_is_unbiased_pair_variance(P):
    """With two trials per batch, the unbiased trace is |x1 - x2|^2 / 2 (independent replay:
    trial t of batch b draws from the t-th child of the b-th child of the seed)."""
    b = lgm.simulate_context_batches(P, np.ones(C), D_EMB, 90, [0.3], 4, rng=11, n_batches=2)
    got = lgm.context_batch_variance(b)  # (2, 1, C)
    trials = []  # (k, c) each: the four trials in order
    for root in spawn_generators(11, 2):
        for g in spawn_generators(root, 2):
            Z = g.standard_normal((D_EMB, C))
            N = g.multinomial(g.multinomial(90, np.full(C, 1 / C)), P.T)
            trials.append(lgm.context_predictions(Z, N, 0.3)[0][0])
    for bi in range(2):
        x1, x2 = trials[2 * bi], trials[2 * bi + 1]
        np.testing.assert_allclose(got[bi, 0], np.sum((x1 - x2) ** 2, axis=0) / 2, rtol=1e-9)
    no_C = lgm.simulate_context_batches(P, np.ones(C), D_EMB, 90, [0.3], 4, rng=0, n_batches=2,
                                        keep_second_moment=False)
    with pytest.raises(ValueError, match="batches"):
        lgm.context_batch_variance(no_C)


def test_variance_curve_closed_forms(P, W2):
    n = [90, 900, 9000]
    v = lgm.context_variance_curve(P, W2, D_EMB, n, 0.1)
    for row, m in zip(v, n):
        th = lgm.context_theory(P, W2, D_EMB, m, 0.1)
        total = np.mean(np.trace(th.cov, axis1=1, axis2=2))
        token = np.mean(th.D**2 * C / (W2 * m) * (1 - np.sum(P**2, axis=0)))
        np.testing.assert_allclose(row, [token, total - token], rtol=1e-10)
    with pytest.raises(ValueError, match="n"):
        lgm.context_variance_curve(P, W2, D_EMB, [0.5], 0.1)


def test_variance_vs_samples_matches_inline(P):
    got = lgm.context_variance_vs_samples(P, np.ones(C), D_EMB, [2, 10], 0.2, 6, rng=4,
                                          n_batches=3)
    cols = []
    for m, root in zip((2, 10), spawn_generators(4, 2)):
        bs = [lgm.simulate_context_model(P, np.ones(C), D_EMB, C * m, [0.2], 2, g,
                                         counts="fixed") for g in spawn_generators(root, 3)]
        cols.append([np.trace(b.cov[0], axis1=1, axis2=2).mean() * 2 for b in bs])
    np.testing.assert_allclose(got, np.array(cols).T, rtol=1e-12)
    with pytest.raises(ValueError, match="gamma"):
        lgm.context_variance_vs_samples(P, np.ones(C), D_EMB, [2], -1.0, 6, rng=0, n_batches=3)


def test_context_gaps(P):
    sim = lgm.simulate_context_model(P, np.ones(C), D_EMB, 90, [0.1, 1.0], 10, rng=2)
    err, dl = sim.train_error_mean, sim.delta.mean(axis=1)
    ref = np.stack([err / 1.1, dl / 0.9], axis=1)  # theory 10% below, 10% above
    gaps = lgm.context_gaps(sim, ref)
    np.testing.assert_allclose(gaps[:, 0], 10.0, rtol=1e-12)
    np.testing.assert_allclose(gaps[:, 2], -10.0, rtol=1e-12)
    np.testing.assert_allclose(gaps[:, 1], 100 * sim.train_error_se / ref[:, 0], rtol=1e-12)
    # nearest-ridge matching and ContextTheory references
    th = [lgm.context_theory(P, np.ones(C), D_EMB, 90, 1.0)]
    one = lgm.context_gaps(sim, th, gamma=[0.9])
    want = 100 * (err[1] / th[0].train_error - 1)
    assert one.shape == (1, 4) and one[0, 0] == pytest.approx(want, rel=1e-12)
    with pytest.raises(ValueError, match="reference"):
        lgm.context_gaps(sim, ref[:1])
    with pytest.raises(ValueError, match="sim"):
        lgm.context_gaps([sim], ref)


def test_group_moments_match_inline(P, W2, batches):
    th = [lgm.context_theory(P, W2, D_EMB, batches[0].n_eff, g) for g in (0.1, 1.0)]
    groups = (W2 < 1, W2 > 1)
    for spread, power in (("variance", 1.0), ("sd", 0.5)):
        out = lgm.context_group_moments(batches, th, P, groups, spread=spread)
        for i, t in enumerate(th):
            v_th = np.trace(t.cov, axis1=1, axis2=2) ** power
            gaps = []
            for b in batches:
                t_b = b.train_error.shape[1]
                v = (np.trace(b.cov[i], axis1=1, axis2=2) * t_b / (t_b - 1)) ** power
                gaps.append([100 * (v[gr].mean() / v_th[gr].mean() - 1) for gr in groups])
            gaps = np.array(gaps)
            np.testing.assert_allclose(out["spread_gap"][i], gaps.mean(axis=0), rtol=1e-10)
            np.testing.assert_allclose(out["spread_gap_se"][i],
                                       gaps.std(axis=0, ddof=1) / 2, rtol=1e-10)
            np.testing.assert_allclose(out["D_theory"][i], [t.D[gr][0] for gr in groups],
                                       rtol=1e-12)
    with pytest.raises(ValueError, match="spread"):
        lgm.context_group_moments(batches, th, P, groups, spread="range")
    with pytest.raises(ValueError, match="theories"):
        lgm.context_group_moments(batches, th[:1], P, groups)


def test_second_moment_gap_matches_inline(P, W2, batches):
    th = [lgm.context_theory(P, W2, D_EMB, batches[0].n_eff, g) for g in (0.1, 1.0)]
    got = lgm.context_second_moment_gap(batches, th)
    C_b = np.array([b.C for b in batches])
    for i, t in enumerate(th):
        noise = np.sqrt(np.sum(C_b[:, i].var(axis=0, ddof=1)) / 4)
        assert got[i] == pytest.approx(np.linalg.norm(C_b[:, i].mean(axis=0) - t.C) / noise,
                                       rel=1e-12)
    with pytest.raises(ValueError, match="theories"):
        lgm.context_second_moment_gap(batches, th[0])


def test_figures_draw_and_validate(P, batches):
    sim = lgm.pool_context_simulations(batches)
    w = np.where(np.arange(C) % 2 == 0, 0.5, 1.5)
    w = w / w.mean()
    th = lgm.context_theory(P, w, D_EMB, sim.n_eff, 0.1)
    fig, axes = plt.subplots(1, 2)
    ax = lgm.plot_context_mean_spread(axes[0], P, 3, th, sim, 0)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["token 1", "token 2", "token 3"]
    with pytest.raises(ValueError, match="context"):
        lgm.plot_context_mean_spread(axes[0], P, C, th, sim, 0)
    with pytest.raises(ValueError, match="index"):
        lgm.plot_context_mean_spread(axes[0], P, 0, th, sim, 2)
    x = np.array([1.0, 10.0, 100.0])
    split = np.array([[1.0, 0.2], [0.1, 0.2], [0.01, 0.2]])
    lgm.plot_variance_vs_samples(axes[1], x, split, x[:2], [1.2, 0.3], [0.1, 0.1])
    np.testing.assert_allclose(axes[1].get_lines()[0].get_ydata(), split.sum(axis=1))
    with pytest.raises(ValueError, match="split"):
        lgm.plot_variance_vs_samples(axes[1], x, split[:2], x, x, x)
    plt.close(fig)
    fig, axes = plt.subplots(1, 2)
    D_mc = lgm.context_batch_shrinkage(batches, P).mean(axis=0)
    grid = np.array([0.1, 0.5, 1.0])
    lgm.plot_context_ridge_path(axes, P, w, D_EMB, sim.n_eff, grid, sim, D_mc)
    curve = axes[1].get_lines()[0].get_ydata()
    want = [lgm.context_theory(P, w, D_EMB, sim.n_eff, g).train_error for g in grid]
    np.testing.assert_allclose(curve, want, rtol=1e-12)
    with pytest.raises(ValueError, match="shrinkage"):
        lgm.plot_context_ridge_path(axes, P, w, D_EMB, sim.n_eff, grid, sim, D_mc[:1])
    plt.close(fig)


# ---------------------------------------------------------------- Model 2 helpers
@pytest.fixture(scope="module")
def mixture():
    P = lgm.softmax_distributions(3, 4, 0.9, rng=8)
    pi = np.array([0.1, 0.2, 0.3, 0.4])
    G = np.eye(4) + 0.5
    return G, pi, P


def test_mixture_error_curves_match_theory(mixture):
    G, pi, P = mixture
    M = lgm.means_from_gram(G, 30, rng=0)
    g = np.array([0.01, 0.3, 10.0])
    te, tr = lgm.mixture_error_curves(M, pi, P, 60, g)
    for j, gj in enumerate(g):
        th = lgm.mixture_theory(M, pi, P, 60, gj)
        assert (te[j], tr[j]) == (th.test_error, th.train_error)
    with pytest.raises(ValueError, match="gamma"):
        lgm.mixture_error_curves(M, pi, P, 60, [-1.0])


def test_mixture_deviations_match_inline(mixture):
    G, pi, P = mixture
    got = lgm.mixture_test_error_deviations(G, pi, P, [20, 40], 0.1, 3, rng=6)
    want = []
    for n, g in zip((20, 40), spawn_generators(6, 2)):
        M = lgm.means_from_gram(G, n // 2, g)
        sim = lgm.simulate_mixture_model(M, pi, P, n, 0.1, 3, g)
        want.append(sim.test_error[0] - lgm.mixture_theory(M, pi, P, n, 0.1).test_error)
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="G"):
        lgm.mixture_test_error_deviations(-G, pi, P, [20], 0.1, 3, rng=0)


def test_mixture_ridge_path_figure(mixture):
    G, pi, P = mixture
    M = lgm.means_from_gram(G, 30, rng=0)
    g = np.logspace(-2, 1, 5)
    sim = lgm.simulate_mixture_model(M, pi, P, 60, g, 3, rng=1)
    curves = lgm.mixture_error_curves(M, pi, P, 60, g)
    lim, opt = lgm.mixture_limits(M, pi, P, 60), lgm.mixture_optimal_ridge(M, pi, P, 60)
    fig, axes = plt.subplots(1, 2)
    lgm.plot_mixture_ridge_path(axes, g, curves, sim, lim, opt, color="C0", label="x")
    np.testing.assert_allclose(axes[0].get_lines()[0].get_ydata(), curves[0])
    np.testing.assert_allclose(axes[1].get_lines()[0].get_ydata(), curves[1])
    star = axes[0].get_lines()[-1]
    assert star.get_xdata()[0] == opt[0] and star.get_ydata()[0] == opt[1]
    with pytest.raises(ValueError, match="curves"):
        lgm.plot_mixture_ridge_path(axes, g, (curves[0][:2], curves[1]), sim, lim, opt)
    with pytest.raises(ValueError, match="limits"):
        lgm.plot_mixture_ridge_path(axes, g, curves, sim, opt, opt)
    plt.close(fig)
