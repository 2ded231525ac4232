"""Tests of seqrmt.dyson.rbm (Chapter 4: Sections 2.6, 3.3, 3.4 and checkpoint D-3 of the spec)."""

import numpy as np
import pytest

from seqrmt.dyson import rbm, universality

N_V, M2, MU2 = 10, 4.0, 9.0  # the spec's settings: kappa in [4, 8], mu = 3
K_TARGET = rbm.rbm_target_kernel(N_V, M2)
KAPPA = np.sort(rbm.rbm_target_spectrum(N_V, M2))
X_STAR = MU2 - KAPPA
# D-3 reference (spec, 200 seeds x 8000 updates): sorted <x>, descending
D3_REF = np.array([5.17, 4.72, 4.35, 3.71, 3.32, 2.43, 2.14, 1.38, 1.17, 0.83])
D3_REF_SE = 0.015  # standard error of the reference means (measured spread / sqrt(200))


# ---------------------------------------------------------------- kernels and one-mode formulas
def test_target_spectrum_matches_kernel():
    for n_v, m2 in [(10, 4.0), (7, 0.5), (16, 1.0)]:
        np.testing.assert_allclose(np.sort(rbm.rbm_target_spectrum(n_v, m2)),
                                   np.linalg.eigvalsh(rbm.rbm_target_kernel(n_v, m2)), atol=1e-12)
    # degeneracy: every mode but k = 0 and k = n_v / 2 appears twice
    assert len(np.unique(np.round(KAPPA, 10))) == N_V // 2 + 1


def test_model_spectrum_rank_deficient():
    rng = np.random.default_rng(0)
    W = rng.normal(size=(8, 3))
    spec = rbm.rbm_model_spectrum(W, 20.0, sigma_h=0.7)
    np.testing.assert_allclose(spec[3:], 20.0)  # n_v - n_h eigenvalues at mu2
    np.testing.assert_allclose(spec[:3], np.sort(20.0 - 0.49 * np.linalg.svd(W, compute_uv=False) ** 2))
    stack = rbm.rbm_model_spectrum(np.stack([W, 2 * W]), 20.0)
    assert stack.shape == (2, 8)


def test_potential_drift_curvature_symbolic():
    sp = pytest.importorskip("sympy")
    x, kap, mu2 = sp.symbols("x kappa mu2", positive=True)
    V = -x**2 / (2 * kap) - x - mu2 * sp.log(mu2 - x)
    K = x * (1 / kap - 1 / (mu2 - x))
    assert sp.simplify(sp.diff(V, x) + K) == 0
    assert sp.simplify(sp.diff(V, x, 2).subs(x, mu2 - kap) - (mu2 - kap) / kap**2) == 0
    f = sp.lambdify((x, kap, mu2), V)
    xs = np.linspace(0.1, 8.5, 7)
    np.testing.assert_allclose(rbm.rbm_potential(xs, 4.0, MU2), f(xs, 4.0, MU2))
    np.testing.assert_allclose(rbm.rbm_drift(xs, 4.0, MU2), sp.lambdify((x, kap, mu2), K)(xs, 4.0, MU2))
    np.testing.assert_allclose(rbm.rbm_curvature(KAPPA, MU2), X_STAR / KAPPA**2)
    np.testing.assert_allclose(rbm.rbm_drift(X_STAR, KAPPA, MU2), 0.0, atol=1e-12)


def test_fixed_points_and_cutoff():
    np.testing.assert_allclose(rbm.rbm_fixed_points(KAPPA, MU2), X_STAR)
    np.testing.assert_allclose(rbm.rbm_fixed_points([5.0, 6.0, 7.0], 6.0), [1.0, 0.0, 0.0])


def test_stationary_variance_formula():
    v = rbm.rbm_stationary_variance(KAPPA, MU2, 0.1, 16)
    np.testing.assert_allclose(v, 2 * 0.1 / 16 * X_STAR)
    np.testing.assert_allclose(v, 2 * 0.1 / 16 * KAPPA**2 * rbm.rbm_curvature(KAPPA, MU2))
    # same ratio, same leading-order variance; the discrete-time correction vanishes as lr -> 0
    np.testing.assert_allclose(rbm.rbm_stationary_variance(KAPPA, MU2, 0.05, 8), v)
    small = rbm.rbm_stationary_variance(KAPPA, MU2, 1e-5, 1, k=3)
    r = (X_STAR / MU2) ** 6  # lag-one correlation of the chains' second moments after k = 3 sweeps
    np.testing.assert_allclose(small, 2e-5 * X_STAR * (1 + r) / (1 - r), rtol=1e-4)


def test_mode_dynamics_matches_matrix_update_and_infrared_first():
    # independent computation: iterate the exact matrix update from a W aligned with the target eigenbasis
    kappa, U = np.linalg.eigh(K_TARGET)
    x0 = np.full(N_V, 0.05)
    W = U * np.sqrt(x0)
    C_t = np.linalg.inv(K_TARGET)
    for _ in range(300):
        W = W + 0.1 * (C_t - np.linalg.inv(MU2 * np.eye(N_V) - W @ W.T)) @ W
    traj = rbm.rbm_mode_dynamics(x0, kappa, MU2, 0.1, 6000)
    np.testing.assert_allclose(np.sum((U.T @ W) ** 2, axis=1), traj[300], rtol=1e-9)
    np.testing.assert_allclose(traj[-1], X_STAR, rtol=1e-3)
    # infrared modes are learned first: time to reach half of x* grows with kappa
    t_half = np.argmax(traj >= 0.5 * X_STAR, axis=0)
    assert np.all(np.diff(t_half) >= 0) and t_half[-1] > 2 * t_half[0]


# ---------------------------------------------------------------- Section 3.4: ultraviolet regulator
@pytest.mark.parametrize("n_h,mu2", [(10, 9.0), (5, 9.0), (10, 6.0), (3, 5.0)])
def test_exact_dynamics_uv_regulator(n_h, mu2):
    W = rbm.train_rbm_exact(K_TARGET, n_h, mu2, 0.1, 8000, rng=1)
    learned = KAPPA[:n_h][KAPPA[:n_h] < mu2]
    expected = np.sort(np.concatenate([learned, np.full(N_V - learned.size, mu2)]))
    np.testing.assert_allclose(rbm.rbm_model_spectrum(W, mu2), expected, atol=2e-3)


def test_data_kernel_and_exact_fit_is_pca():
    rng = np.random.default_rng(2)
    data = rng.normal(size=(4000, 6)) @ np.diag([1.0, 0.8, 0.6, 0.5, 0.4, 0.3])
    K = rbm.rbm_data_kernel(data)
    cov = np.cov(data.T, bias=True)
    np.testing.assert_allclose(K @ cov, np.eye(6), atol=1e-10)
    kappa = np.linalg.eigvalsh(K)
    for n_h in (3, 5):  # n_h = 5: the fifth mode has kappa > mu2 and stays at mu2
        W = rbm.train_rbm_exact(K, n_h, 5.0, 0.05, 8000, rng=3)
        learned = kappa[:n_h][kappa[:n_h] < 5.0]
        expected = np.sort(np.concatenate([learned, np.full(6 - learned.size, 5.0)]))
        np.testing.assert_allclose(rbm.rbm_model_spectrum(W, 5.0), expected, atol=5e-3)
    with pytest.raises(ValueError, match="ridge"):
        rbm.rbm_data_kernel(np.c_[data, np.zeros(len(data))])
    rbm.rbm_data_kernel(np.c_[data, np.zeros(len(data))], ridge=1e-3)


# ---------------------------------------------------------------- PCD: stationary variance, ratio, bias
def _group_ratio(modes, pred, n_groups=8):
    """Pooled ratio of measured to predicted variance and its standard error over seed groups."""
    n_seeds = modes.shape[1]
    groups = np.array_split(np.arange(n_seeds), n_groups)
    r = [np.mean(modes[:, g].reshape(-1, N_V).var(axis=0) / pred) for g in groups]
    return np.mean(r), np.std(r, ddof=1) / np.sqrt(n_groups)


@pytest.fixture(scope="module")
def stationary_runs():
    runs = {}
    for (lr, batch, steps, burn), seed in zip([(0.1, 16, 3000, 1500), (0.05, 8, 4500, 3000),
                                               (0.1, 8, 3000, 1500)], (11, 12, 13)):
        res = rbm.train_rbm_pcd(K_TARGET, N_V, MU2, lr, batch, steps, 40, rng=seed,
                                record_steps=np.arange(burn, steps + 1, 100), init="fixed_point")
        runs[(lr, batch)] = res
    return runs


def test_pcd_stationary_variance(stationary_runs):
    # Var X_ii = 2 (lr/B)(mu2 - kappa_i), with the discrete-time and chain-correlation corrections (k = 3)
    for (lr, batch), res in stationary_runs.items():
        modes = res.modes
        pred = rbm.rbm_stationary_variance(KAPPA, MU2, lr, batch, k=3)
        ratio, se = _group_ratio(modes, pred)
        # next-order (nonlinear) corrections are O(lr/batch) in relative size, like the learning bias:
        # measured ratios 0.97 (0.1, 16), 0.95 (0.05, 8), 0.88 (0.1, 8); allow 10 lr/batch on top of 4 SE
        assert abs(ratio - 1) < 4 * se + 10 * lr / batch, (lr, batch, ratio, se)


def test_pcd_variance_depends_on_ratio_only(stationary_runs):
    lead = rbm.rbm_stationary_variance(KAPPA, MU2, 0.1, 16)  # leading order, same for (0.05, 8)
    ra, sa = _group_ratio(stationary_runs[(0.1, 16)].modes, lead)
    rb, sb = _group_ratio(stationary_runs[(0.05, 8)].modes, lead)
    rc, sc = _group_ratio(stationary_runs[(0.1, 8)].modes, lead)
    assert abs(ra - rb) < 4 * np.hypot(sa, sb)  # same ratio: same variance
    assert abs(rc / ra - 2) < 4 * 2 * np.hypot(sa / ra, sc / rc)  # doubled ratio: doubled variance


def test_pcd_learning_bias(stationary_runs):
    pred = rbm.rbm_learning_bias(KAPPA, MU2, 0.1, 16)
    np.testing.assert_allclose(pred, rbm.rbm_learning_bias(KAPPA, MU2, 0.05, 8))
    for (lr, batch), res in stationary_runs.items():
        per_seed = (res.modes.mean(axis=0) - X_STAR).sum(axis=1)  # bias of the trace of X, per seed
        se = per_seed.std(ddof=1) / np.sqrt(per_seed.size)
        expected = rbm.rbm_learning_bias(KAPPA, MU2, lr, batch).sum()
        assert expected < 0 and abs(per_seed.mean() - expected) < 4 * se, (lr, batch, per_seed.mean(), se)


def test_pcd_gram_diagonal_is_modes(stationary_runs):
    res = stationary_runs[(0.1, 16)]
    np.testing.assert_allclose(np.diagonal(res.gram, axis1=-2, axis2=-1), res.modes)
    # U^T X U has the eigenvalues of X = W W^T (here N_h = N_V: those of W^T W)
    np.testing.assert_allclose(np.linalg.eigvalsh(res.gram[-1]), res.eigs[-1], atol=1e-9)


def test_pair_eigenvalues_blocks_and_basis_invariance():
    rng = np.random.default_rng(5)
    kappa = np.array([1.0, 2.0, 2.0, 3.0, 4.0, 4.0])
    A = rng.normal(size=(3, 6, 6))
    G = A @ A.transpose(0, 2, 1)
    levels, pairs = rbm.rbm_pair_eigenvalues(G, kappa)
    np.testing.assert_allclose(levels, [2.0, 4.0])
    assert pairs.shape == (3, 2, 2)
    np.testing.assert_allclose(pairs[:, 0], np.linalg.eigvalsh(G[:, 1:3, 1:3]))
    np.testing.assert_allclose(pairs[:, 1], np.linalg.eigvalsh(G[:, 4:6, 4:6]))
    # another orthonormal basis of each degenerate level gives the same eigenvalues
    c, s_ = np.cos(0.7), np.sin(0.7)
    R = np.eye(6)
    R[1:3, 1:3] = [[c, -s_], [s_, c]]
    R[4:6, 4:6] = [[c, s_], [-s_, c]]
    _, rotated = rbm.rbm_pair_eigenvalues(R.T @ G @ R, kappa)
    np.testing.assert_allclose(rotated, pairs, atol=1e-10)
    # the lattice target: four pairs (k and N_V - k), the modes k = 0 and N_V / 2 skipped
    levels, pairs = rbm.rbm_pair_eigenvalues(np.diag(X_STAR), KAPPA)
    np.testing.assert_allclose(levels, np.unique(np.round(KAPPA, 12))[1:-1])
    np.testing.assert_allclose(pairs, np.repeat(MU2 - levels[:, None], 2, axis=1))


def test_pcd_degenerate_pairs_two_mode(stationary_runs):
    """Eigenvalues of each degenerate pair: two-mode law of width sigma^2 = 2 (lr/B) x*; X_ii stays Gaussian."""
    for (lr, batch), res in stationary_runs.items():
        levels, pairs = rbm.rbm_pair_eigenvalues(res.gram, res.kappa)  # (records, seeds, 4, 2)
        for p, kap in enumerate(levels):
            e = np.moveaxis(pairs[..., p, :], 1, 0).reshape(pairs.shape[1], -1)  # (seeds, records * 2)
            sigma, se = universality.two_mode_width(e)
            pred = np.sqrt(2 * lr / batch * (MU2 - kap))
            # relative corrections O(lr/batch) as for the variances (half of them for a width)
            assert abs(sigma / pred - 1) < 4 * se / pred + 5 * lr / batch, (lr, batch, kap, sigma / pred)
        # pooled over pairs and seeds: spacings follow the surmise, <s^2> = 4/pi; Binder cumulant -4/27
        S = pairs[..., 1] - pairs[..., 0]  # (records, seeds, 4)
        s = np.moveaxis(S / S.mean(axis=(0, 1)), 1, 0).reshape(S.shape[1], -1)
        s2, s2_se = universality.batch_statistic(s, lambda b: np.mean(b**2), n_batches=8)
        assert abs(s2 - 4 / np.pi) < 4 * s2_se + 0.02, (s2, s2_se)
        u = pairs - pairs.mean(axis=(0, 1, 3), keepdims=True)
        u = np.moveaxis(u / u.std(axis=(0, 1, 3), keepdims=True), 1, 0).reshape(u.shape[1], -1)
        u4, u4_se = universality.batch_statistic(u, universality.binder_cumulant, n_batches=8)
        assert abs(u4 + 4 / 27) < 4 * u4_se + 0.02, (u4, u4_se)
        # the diagonal elements of the same pairs have no repulsion: Gaussian, U4 = 0
        paired = np.isin(np.round(res.kappa, 8), np.round(levels, 8))
        d = res.modes[..., paired] - res.modes[..., paired].mean(axis=(0, 1))
        d = np.moveaxis(d / d.std(axis=(0, 1)), 1, 0).reshape(d.shape[1], -1)
        d4, d4_se = universality.batch_statistic(d, universality.binder_cumulant, n_batches=8)
        assert abs(d4) < 4 * d4_se + 0.02 and d4 - u4 > 0.08, (d4, d4_se, u4)


# ---------------------------------------------------------------- checkpoint D-3
def _check_d3(res):
    sorted_means = res.eigs[:, :, ::-1].mean(axis=0)  # time-average per seed, descending
    mean = sorted_means.mean(axis=0)
    se = sorted_means.std(axis=0, ddof=1) / np.sqrt(sorted_means.shape[0])
    tol = np.maximum(0.05, 4 * np.hypot(se, D3_REF_SE))
    assert np.all(np.abs(mean - D3_REF) < tol), (np.round(mean, 3), np.round(tol, 3))
    trace = sorted_means.sum(axis=1)
    assert abs(trace.mean() - 29.2) < max(0.1, 4 * trace.std(ddof=1) / np.sqrt(trace.size))
    # repulsion: within each degenerate pair (2x2 block of X in the target eigenbasis, final weights),
    # the mean spacing is sqrt(pi) sigma = 1.77 sigma (two-mode density), far above the
    # 2 sigma / sqrt(pi) = 1.13 sigma of two independent Gaussian levels
    _, U = np.linalg.eigh(K_TARGET)
    ratios = []
    for p in range(1, N_V - 1, 2):
        B = U[:, p:p + 2].T @ res.W
        lam = np.linalg.eigvalsh(B @ B.transpose(0, 2, 1))
        sigma = np.sqrt(rbm.rbm_stationary_variance(KAPPA[p], MU2, 0.1, 16))
        ratios.append((lam[:, 1] - lam[:, 0]) / sigma)
    ratios = np.concatenate(ratios)
    se = ratios.std(ddof=1) / np.sqrt(ratios.size)
    assert abs(ratios.mean() - np.sqrt(np.pi)) < 4 * se + 0.05, (ratios.mean(), se)


def test_d3_pcd_reduced():
    """D-3 with 24 seeds, spectra averaged over updates 5000, 5500 and 6000 (tolerance from the measured SE)."""
    res = rbm.train_rbm_pcd(K_TARGET, N_V, MU2, 0.1, 16, 6000, 24, rng=2024,
                            record_steps=[5000, 5500, 6000])
    _check_d3(res)


@pytest.mark.slow
def test_d3_pcd_full():
    """D-3 at the spec's size: 200 seeds x 8000 updates, random init (about 45 s)."""
    res = rbm.train_rbm_pcd(K_TARGET, N_V, MU2, 0.1, 16, 8000, 200, rng=403)
    _check_d3(res)


# ---------------------------------------------------------------- validation
def test_value_errors():
    W = np.ones((4, 2))
    with pytest.raises(ValueError, match="n_v"):
        rbm.rbm_target_spectrum(2, 1.0)
    with pytest.raises(ValueError, match="m2"):
        rbm.rbm_target_kernel(5, 0.0)
    with pytest.raises(ValueError, match="mu2"):
        rbm.rbm_model_spectrum(W, -1.0)
    with pytest.raises(ValueError, match="sigma_h"):
        rbm.rbm_model_spectrum(W, 9.0, sigma_h=0.0)
    with pytest.raises(ValueError, match="W"):
        rbm.rbm_model_spectrum(np.array([1.0, np.nan]), 9.0)
    with pytest.raises(ValueError, match="data"):
        rbm.rbm_data_kernel(np.ones((1, 3)))
    with pytest.raises(ValueError, match="kappa"):
        rbm.rbm_fixed_points([-1.0], 9.0)
    with pytest.raises(ValueError, match="x"):
        rbm.rbm_drift([10.0], 4.0, 9.0)
    with pytest.raises(ValueError, match="x"):
        rbm.rbm_potential([np.nan], 4.0, 9.0)
    with pytest.raises(ValueError, match="mu2"):
        rbm.rbm_curvature([10.0], 9.0)
    with pytest.raises(ValueError, match="lr"):
        rbm.rbm_stationary_variance(KAPPA, MU2, 0.0, 16)
    with pytest.raises(ValueError, match="batch"):
        rbm.rbm_stationary_variance(KAPPA, MU2, 0.1, 0)
    with pytest.raises(ValueError, match="mu2"):
        rbm.rbm_learning_bias(KAPPA, 7.0, 0.1, 16)
    with pytest.raises(ValueError, match="steps"):
        rbm.rbm_mode_dynamics([0.1], [4.0], 9.0, 0.1, 0)
    with pytest.raises(ValueError, match="lr"):
        rbm.train_rbm_exact(K_TARGET, 4, MU2, -0.1, 10, rng=0)
    with pytest.raises(ValueError, match="mu2"):
        rbm.train_rbm_exact(K_TARGET, 4, 3.0, 0.1, 10, rng=0)  # below the smallest kappa = 4
    with pytest.raises(ValueError, match="K_target"):
        rbm.train_rbm_exact(np.ones((3, 4)), 2, MU2, 0.1, 10, rng=0)
    with pytest.raises(ValueError, match="K_target"):
        rbm.train_rbm_pcd(np.array([[1.0, 0.5], [0.0, 1.0]]), 2, MU2, 0.1, 4, 10, 2, rng=0)
    with pytest.raises(ValueError, match="n_h"):
        rbm.train_rbm_pcd(K_TARGET, 0, MU2, 0.1, 4, 10, 2, rng=0)
    with pytest.raises(ValueError, match="batch"):
        rbm.train_rbm_pcd(K_TARGET, 4, MU2, 0.1, 0, 10, 2, rng=0)
    with pytest.raises(ValueError, match="n_seeds"):
        rbm.train_rbm_pcd(K_TARGET, 4, MU2, 0.1, 4, 10, 0, rng=0)
    with pytest.raises(ValueError, match="record_steps"):
        rbm.train_rbm_pcd(K_TARGET, 4, MU2, 0.1, 4, 10, 2, rng=0, record_steps=[20])
    with pytest.raises(ValueError, match="init"):
        rbm.train_rbm_pcd(K_TARGET, 4, MU2, 0.1, 4, 10, 2, rng=0, init="zeros")
    with pytest.raises(ValueError, match="init"):
        rbm.train_rbm_pcd(K_TARGET, 4, MU2, 0.1, 4, 10, 2, rng=0, init=np.ones((3, 3)))
    with pytest.raises(ValueError, match="init"):
        rbm.train_rbm_pcd(K_TARGET, 4, MU2, 0.1, 4, 10, 2, rng=0, init=np.full((N_V, 4), 5.0))


# ---------------------------------------------------------------- ensemble analysis (notebook 03 drivers)
def test_learned_spectrum_equals_filter_form():
    """min(kappa, mu2) on the n_h infrared modes = the learned-below-mu2 modes padded with mu2."""
    rng = np.random.default_rng(3)
    for n_h, mu2 in [(10, 9.0), (5, 9.0), (10, 6.0), (3, 50.0)]:
        kap = np.sort(rng.uniform(1.0, 12.0, 10))
        learned = kap[:n_h][kap[:n_h] < mu2]
        old = np.sort(np.r_[learned, np.full(10 - learned.size, mu2)])
        np.testing.assert_array_equal(rbm.rbm_learned_spectrum(kap, n_h, mu2), old)
    # more hidden units than modes: every mode below mu2 is learned
    np.testing.assert_array_equal(rbm.rbm_learned_spectrum([8.0, 4.0], 5, 6.0), [4.0, 6.0])
    # it is the spectrum of the exact-gradient fixed point
    W = rbm.train_rbm_exact(K_TARGET, 5, MU2, lr=0.1, steps=8000, rng=0)
    np.testing.assert_allclose(rbm.rbm_model_spectrum(W, MU2), rbm.rbm_learned_spectrum(KAPPA, 5, MU2),
                               atol=1e-4)


def test_variance_ratio_equals_inline_loop_and_is_one_for_known_variance():
    rng = np.random.default_rng(4)
    modes = rng.normal(3.0, 0.2, size=(16, 32, 4)) * np.array([1.0, 2.0, 0.5, 1.5])
    pred = (0.2 * np.array([1.0, 2.0, 0.5, 1.5])) ** 2
    dev2 = (modes - modes.mean(axis=(0, 1))) ** 2
    r = [np.mean(dev2[:, g].mean(axis=(0, 1)) / pred) for g in np.array_split(np.arange(32), 8)]
    value, se = rbm.rbm_variance_ratio(modes, pred, n_groups=8)
    assert value == pytest.approx(np.mean(r), rel=1e-12)
    assert se == pytest.approx(np.std(r, ddof=1) / np.sqrt(8), rel=1e-12)
    assert abs(value - 1.0) < 4 * se
    # doubling the prediction halves the ratio
    assert rbm.rbm_variance_ratio(modes, 2 * pred, n_groups=8)[0] == pytest.approx(value / 2)
    with pytest.raises(ValueError, match="n_groups"):
        rbm.rbm_variance_ratio(modes, pred, n_groups=33)


def test_pair_widths_recover_goe_width():
    """2x2 GOE blocks of scale v have two-mode width sigma = sqrt(2 v); the jackknife SE covers it."""
    e = universality.goe_eigs(2, 6400, 1, scale=0.08)  # sigma = 0.4
    pairs = np.stack([e, e * 2.5], axis=1).reshape(20, 320, 2, 2) + 4.0  # second pair: sigma = 1.0
    sig = rbm.rbm_pair_widths(pairs, n_groups=16)
    assert sig.shape == (2, 2)
    assert abs(sig[0, 0] - 0.4) < 5 * sig[0, 1] and abs(sig[1, 0] - 1.0) < 5 * sig[1, 1]
    assert sig[1, 0] == pytest.approx(2.5 * sig[0, 0], rel=1e-6)  # the fit is scale-equivariant
    rows = np.moveaxis(pairs[..., 0, :], 1, 0).reshape(320, -1)
    assert sig[0, 0] == pytest.approx(universality.fit_two_mode(rows)[1], rel=1e-12)


def test_pair_scaled_equals_inline_computation():
    rng = np.random.default_rng(5)
    diag = rng.normal(3.0, 0.3, size=(6, 10, 4))
    pairs = np.sort(rng.normal(3.0, 0.3, size=(6, 10, 2, 2)), axis=-1)
    sd = np.array([0.3, 0.6])
    z_diag, z_eig, s_norm = rbm.rbm_pair_scaled(diag, pairs, sd)
    by_training = lambda a: np.moveaxis(a, 1, 0).reshape(a.shape[1], -1)  # noqa: E731
    np.testing.assert_allclose(z_diag, by_training((diag - diag.mean(axis=(0, 1))) / np.repeat(sd, 2)))
    c = pairs.mean(axis=(0, 1, 3))[:, None]
    np.testing.assert_allclose(z_eig, by_training((pairs - c) / sd[:, None]))
    S = pairs[..., 1] - pairs[..., 0]
    np.testing.assert_allclose(s_norm, by_training(S / S.mean(axis=(0, 1))))
    # invariants: centred, spacings of mean one, one row per training
    assert z_diag.shape == (10, 24) and z_eig.shape == (10, 24) and s_norm.shape == (10, 12)
    assert abs(z_eig.mean()) < 1e-12 and s_norm.mean() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="pairs"):
        rbm.rbm_pair_scaled(diag, np.ones_like(pairs), sd)


def test_pair_statistics_of_goe_pairs():
    """GOE pairs: eigenvalue/diagonal variance 3/2, U4 = -4/27 (eigenvalues) and 0 (diagonal), <s^2> = 4/pi."""
    rng = np.random.default_rng(6)
    n = 40000
    a, b = rng.normal(size=n), rng.normal(size=n)
    c = rng.normal(size=n) / np.sqrt(2)
    # [[a, c], [c, b]]: diagonal variance 1, off-diagonal 1/2 -> two-mode width sigma = 1
    mean, half = (a + b) / 2, np.sqrt(((a - b) / 2) ** 2 + c**2)
    eig = np.stack([mean - half, mean + half], axis=1)
    S = eig[:, 1] - eig[:, 0]
    st = rbm.rbm_pair_statistics(np.stack([a, b], 1).reshape(400, -1), eig.reshape(400, -1),
                                 (S / S.mean()).reshape(400, -1), n_groups=16)
    expected = [1.5, 0.0, -4 / 27, 4 / np.pi]
    for (value, se), ref in zip(st.values(), expected):
        assert abs(value - ref) < 5 * se, (value, se, ref)
    with pytest.raises(ValueError, match="z_eig"):
        rbm.rbm_pair_statistics(a.reshape(400, -1), np.zeros((400, 100)), S.reshape(400, -1))


def test_figure_helpers_draw_and_validate():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run = rbm.train_rbm_pcd(K_TARGET, N_V, MU2, 0.1, 8, 30, 3, rng=0, record_steps=[0, 10, 30])
    det = rbm.rbm_mode_dynamics(np.full(N_V, 0.05), KAPPA, MU2, 0.1, 30)
    fig, axes = plt.subplots(2, 3)
    ax = rbm.plot_mode_learning(axes[0, 0], run, det)
    assert len(ax.lines) == 2 * (N_V // 2 + 1)  # points and curve per distinct level
    np.testing.assert_allclose(ax.lines[1].get_ydata(), det[1:, 0])
    with pytest.raises(ValueError, match="det"):
        rbm.plot_mode_learning(axes[0, 0], run, det[:10])
    with pytest.raises(ValueError, match="run"):
        rbm.plot_mode_learning(axes[0, 0], run.modes, det)
    ax = rbm.plot_stationary_eigenvalues(axes[0, 1], run.eigs, X_STAR)
    assert len(ax.patches) == N_V * 30
    z = np.random.default_rng(0).normal(size=(10, 20))
    rbm.plot_pair_histograms(axes[1], z, z, np.abs(z))
    assert all(a.get_legend() is not None for a in axes[1])
    with pytest.raises(ValueError, match="axes"):
        rbm.plot_pair_histograms(axes[1, :2], z, z, z)
    plt.close(fig)
