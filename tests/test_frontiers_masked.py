"""Tests of :mod:`seqrmt.frontiers.masked` (Chapter 5.1): closed forms, invariants and the
[V] checkpoints of the Part 5 specification (section 1.5), with its tolerances."""

import numpy as np
import pytest

from seqrmt.frontiers import masked as M

D = 200


def _draw(Sigma, n, seed):
    L = np.linalg.cholesky(Sigma)
    return np.random.default_rng(seed).standard_normal((n, Sigma.shape[0])) @ L.T


def test_closed_form_equals_columnwise_ridge():
    """Lemma: I - R Diag(R)^-1 equals d separate constrained ridge fits (max diff 1e-10)."""
    n, d, lam = 40, 12, 0.3
    X = _draw(M.ar1_covariance(d, 0.5), n, 3)
    A = M.masked_ridge(X, lam)
    direct = np.zeros((d, d))
    for k in range(d):
        rest = np.delete(np.arange(d), k)
        Xr = X[:, rest]
        direct[rest, k] = np.linalg.solve(Xr.T @ Xr / n + lam * np.eye(d - 1), Xr.T @ X[:, k] / n)
    assert np.max(np.abs(A - direct)) < 1e-10
    assert np.all(np.diag(A) == 0)


def test_errors_against_direct_computation():
    n, d, lam = 60, 15, 0.7
    Sig = M.ar1_covariance(d, 0.4)
    X = _draw(Sig, n, 4)
    A = M.masked_ridge(X, lam)
    err = M.masked_ridge_errors(X, [lam, 2 * lam], Sig)
    resid = np.eye(d) - A  # column k: residual coefficients of coordinate k
    assert err.train_error[0] == pytest.approx(np.sum((X @ resid) ** 2) / (n * d), rel=1e-10)
    assert err.test_error[0] == pytest.approx(np.trace(resid.T @ Sig @ resid) / d, rel=1e-10)
    assert err.test_error[1] == pytest.approx(M.masked_ridge_errors(X, 2 * lam, Sig).test_error)


# (Sigma, n, lam) -> E_gen, E_train theory of the spec's table 1.5
THEORY = [
    ("I", 400, 0.1, 1.5690, 0.5173), ("I", 400, 1.0, 1.1063, 0.6744),
    ("I", 150, 0.1, 2.0870, 0.0580), ("ar1", 400, 0.1, 0.6858, 0.2618),
    ("ar1", 400, 1.0, 0.6285, 0.4219), ("ar1", 150, 0.1, 0.9858, 0.0530),
]


def _sigma(name):
    return np.eye(D) if name == "I" else M.ar1_covariance(D, 0.6)


@pytest.mark.parametrize("name, n, lam, gen, train", THEORY)
def test_theory_checkpoints(name, n, lam, gen, train):
    th = M.masked_ridge_theory(_sigma(name), n, lam)
    assert th.test_error == pytest.approx(gen, abs=6e-5)
    assert th.train_error == pytest.approx(train, abs=6e-5)
    if name == "I":  # the isotropic closed forms reproduce the general equivalent exactly
        iso = M.isotropic_masked_errors(D / n, lam)
        assert iso[0] == pytest.approx(th.test_error, rel=1e-9)
        assert iso[1] == pytest.approx(th.train_error, rel=1e-9)


@pytest.mark.parametrize("name, n, lam, gen, train", THEORY)
def test_monte_carlo_checkpoints(name, n, lam, gen, train):
    """10 seeds at d = 200: |E_gen MC - th| <= 0.01 and |E_train MC - th| <= 0.005 (spec 1.5)."""
    Sig = _sigma(name)
    th = M.masked_ridge_theory(Sig, n, lam)
    errs = [M.masked_ridge_errors(_draw(Sig, n, s), lam, Sig) for s in range(10)]
    assert np.mean([e.test_error for e in errs]) == pytest.approx(th.test_error, abs=0.01)
    assert np.mean([e.train_error for e in errs]) == pytest.approx(th.train_error, abs=0.005)


def test_population_optimum_ar1():
    d, r = D, 0.6
    Sig = M.ar1_covariance(d, r)
    expected = ((d - 2) * (1 - r**2) / (1 + r**2) + 2 * (1 - r**2)) / d
    assert M.masked_population_error(Sig) == pytest.approx(expected, rel=1e-10)
    assert M.masked_population_error(Sig) == pytest.approx(0.4723, abs=5e-5)
    # the population predictor is the two-sided interpolation filter r/(1+r^2)
    A = M.masked_predictor(Sig, 0.0)
    k = d // 2
    filt = np.zeros(d)
    filt[[k - 1, k + 1]] = r / (1 + r**2)
    np.testing.assert_allclose(A[:, k], filt, atol=1e-10)
    # the theory tends to E* as n grows and lam shrinks
    th = M.masked_ridge_theory(Sig, 10**6, 1e-4)
    assert th.test_error == pytest.approx(expected, rel=2e-3)


def test_isotropic_test_error_above_one_and_decreasing():
    lams = np.geomspace(1e-3, 1e3, 60)
    for gamma in (0.3, 1.0, 2.5):
        gen, train = M.isotropic_masked_errors(gamma, lams)
        assert np.all(gen > 1) and np.all(np.diff(gen) < 0)
        assert gen[-1] == pytest.approx(1, abs=1e-2)
        assert np.all(train < gen)


@pytest.mark.parametrize("theta, top, overlap", [(0.3, 0.6464, 0.0), (1.0, 0.6551, 1 / 3),
                                                 (2.0, 0.7160, 0.7)])
def test_spiked_checkpoints(theta, top, overlap):
    """Spec 1.5 spiked table (n = 400, lam = 0.5): theory, and MC top eigenvalue within 0.01."""
    t, o = M.spiked_masked_top(theta, D / 400, 0.5)
    assert t == pytest.approx(top, abs=6e-5) and o == pytest.approx(overlap, abs=1e-10)
    rng = np.random.default_rng(7)
    u = rng.standard_normal(D)
    u /= np.linalg.norm(u)
    Sig = np.eye(D) + theta * np.outer(u, u)
    tops, ovl = [], []
    for s in range(6):
        ev, V = M.masked_ridge_spectrum(_draw(Sig, 400, s), 0.5)
        tops.append(ev[0])
        ovl.append((V[:, 0] @ u) ** 2)
    if theta > np.sqrt(0.5):
        assert np.mean(tops) == pytest.approx(top, abs=0.01)
        assert np.mean(ovl) == pytest.approx(overlap, abs=0.06)
    else:
        assert np.mean(tops) < top + 0.01 and np.mean(ovl) < 0.05


def test_spectrum_matches_eigvals():
    X = _draw(M.ar1_covariance(30, 0.3), 50, 1)
    ev, V = M.masked_ridge_spectrum(X, 0.2)
    A = M.masked_ridge(X, 0.2)
    np.testing.assert_allclose(ev, np.sort(np.linalg.eigvals(A).real)[::-1], atol=1e-10)
    np.testing.assert_allclose(A @ V, V * ev, atol=1e-10)
    np.testing.assert_allclose(np.linalg.norm(V, axis=0), 1.0)


@pytest.mark.parametrize("call, name", [
    (lambda: M.masked_ridge(np.ones((5, 3)), 0.0), "lam"),
    (lambda: M.masked_ridge(np.ones((5, 1)), 0.1), "X"),
    (lambda: M.masked_predictor(np.zeros((3, 3)), 0.0), "lam"),
    (lambda: M.ar1_covariance(4, 1.0), "r"),
    (lambda: M.masked_ridge_errors(np.ones((5, 3)), 0.1, np.eye(4)), "Sigma"),
    (lambda: M.masked_population_error(np.zeros((3, 3))), "Sigma"),
    (lambda: M.spiked_masked_top(-1.0, 0.5, 0.1), "theta"),
    (lambda: M.masked_ridge_theory(np.eye(3), 5, -0.1), "lam"),
])
def test_validation(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# ------------------------------------------------------------------ notebook drivers, tables, figures


def test_masked_ridge_experiment_equals_the_loop():
    Sigma, lams = M.ar1_covariance(6, 0.5), np.array([0.1, 1.0])
    e = M.masked_ridge_experiment(Sigma, 10, lams, 3, np.random.default_rng(2))
    gens, L = np.random.default_rng(2).spawn(3), np.linalg.cholesky(Sigma)  # one per set
    for k in range(3):
        run = M.masked_ridge_errors(gens[k].standard_normal((10, 6)) @ L.T, lams, Sigma)
        np.testing.assert_array_equal(e[k], [run.test_error, run.train_error])
    with pytest.raises(ValueError, match="Sigma"):
        M.masked_ridge_experiment(np.diag([1.0, 0.0]), 10, lams, 2, 0)


def test_finite_size_gaps_are_scaled_differences_to_theory():
    Sigma, lams = M.ar1_covariance(8, 0.5), np.array([0.1, 1.0])
    g = M.finite_size_gaps(Sigma, 6, lams, 2, np.random.default_rng(1))
    e = M.masked_ridge_experiment(Sigma, 6, lams, 2, np.random.default_rng(1))
    th = M.masked_ridge_theory(Sigma, 6, lams)
    np.testing.assert_allclose(g[:, 0], 8 * (e[:, 0] - th.test_error), rtol=1e-12)
    np.testing.assert_allclose(g[:, 1], 8 * (e[:, 1] - th.train_error), rtol=1e-12)


def test_spiked_experiment_equals_the_loop_and_table_matches():
    d, u = 8, np.eye(8)[2]
    thetas = np.array([0.5, 4.0])
    top, ov, ov_pca = M.spiked_experiment(u, thetas, 40, 0.5, 3, np.random.default_rng(9))
    rng = np.random.default_rng(9)
    for i, th in enumerate(thetas):
        L = np.linalg.cholesky(np.eye(d) + th * np.outer(u, u))
        gens = rng.spawn(3)  # one child generator per data set
        for s in range(3):
            X = gens[s].standard_normal((40, d)) @ L.T
            ev, V = M.masked_ridge_spectrum(X, 0.5)
            assert top[i, s] == ev[0] and ov[i, s] == pytest.approx((V[:, 0] @ u) ** 2)
            pca = np.linalg.svd(X, full_matrices=False)[2][0]  # independent: SVD of X
            assert ov_pca[i, s] == pytest.approx((pca @ u) ** 2, rel=1e-8)
    lines = M.spiked_table(thetas, top, ov, ov_pca, 0.2, 0.5, strong=4.0).splitlines()
    top_th, ov_th = M.spiked_masked_top(thetas, 0.2, 0.5)
    se = top[1].std(ddof=1) / np.sqrt(3)
    assert lines[2].startswith(f" 4.0   {top_th[1]:11.4f}  {top[1].mean():.4f}±{se:.4f}")
    gap = abs(top[1].mean() - top_th[1]) / se
    assert lines[3].endswith(f"{gap:.1f} SE")
    with pytest.raises(ValueError, match="strong"):
        M.spiked_table(thetas, top, ov, ov_pca, 0.2, 0.5, strong=5.0)
    with pytest.raises(ValueError, match="u"):
        M.spiked_experiment(2 * u, thetas, 40, 0.5, 3, 0)


def test_plot_helpers_draw_the_theory():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, bx, cx) = plt.subplots(1, 3)
    lams = np.geomspace(0.1, 1.0, 5)
    th = M.masked_ridge_theory(np.eye(4), 8, lams)
    M.plot_errors_vs_ridge(ax, lams, th, lams[:2], np.ones((2, 2)), np.ones((2, 2)), 0.5)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), th.test_error)
    with pytest.raises(ValueError, match="mean"):
        M.plot_errors_vs_ridge(ax, lams, th, lams[:2], np.ones((2, 3)), np.ones((2, 2)))
    top = np.array([[0.70, 0.72], [0.76, 0.77]])
    M.plot_spiked((bx, cx), [2.0, 3.0], top, top, top, 0.5, 0.5)
    grid = bx.lines[0].get_xdata()
    assert grid[0] == 0.05 and grid[-1] == pytest.approx(3.2)
    np.testing.assert_allclose(bx.lines[0].get_ydata(), M.spiked_masked_top(grid, 0.5, 0.5)[0])
    plt.close(fig)


def test_spiked_experiment_with_heteroscedastic_noise():
    d = 6
    u = np.ones(d) / np.sqrt(d)
    sig2 = np.where(np.arange(d) % 2 == 0, 0.5, 3.0)
    top, ov, _ = M.spiked_experiment(u, [2.0], 30, 0.5, 2, np.random.default_rng(3),
                                     noise_variances=sig2)
    gens = np.random.default_rng(3).spawn(2)
    L = np.linalg.cholesky(np.diag(sig2) + 2.0 * np.outer(u, u))
    for s in range(2):
        ev, V = M.masked_ridge_spectrum(gens[s].standard_normal((30, d)) @ L.T, 0.5)
        assert top[0, s] == ev[0] and ov[0, s] == pytest.approx((V[:, 0] @ u) ** 2)
    with pytest.raises(ValueError, match="noise_variances"):
        M.spiked_experiment(u, [2.0], 30, 0.5, 2, 0, noise_variances=-sig2)
