"""The Gaussian RBM laws and trainers of seqrmt.dyson, and the Fokker-Planck spectrum of one eigenvalue.

Closed forms against independent computations (symbolic drift and curvature, the aligned matrix
update, probabilistic PCA), the PCD trainer against the stationary laws (checkpoint D-3 of the
Part 4 spec), the learned mass against joint exact-gradient training with the safe step of
notebook 4.3, and the Fokker-Planck spectrum against the Ornstein-Uhlenbeck levels.
"""

import numpy as np
import pytest

from seqrmt import dyson
from seqrmt.runtime import single_threaded_blas

N_V, M2, MU2 = 10, 4.0, 9.0  # the spec's settings: kappa in [4, 8], mu = 3


def ring(n_v, m2):
    """Kernel of a free field on a periodic lattice: the Laplacian plus a mass."""
    return (2 + m2) * np.eye(n_v) - np.roll(np.eye(n_v), 1, 0) - np.roll(np.eye(n_v), -1, 0)


K_TARGET = ring(N_V, M2)
KAPPA = np.linalg.eigvalsh(K_TARGET)
X_STAR = MU2 - KAPPA
D3_REF = np.array([5.17, 4.72, 4.35, 3.71, 3.32, 2.43, 2.14, 1.38, 1.17, 0.83])  # spec: 200 seeds, sorted <x>


@pytest.fixture(autouse=True)
def _one_blas_thread():
    with single_threaded_blas():
        yield


def model_spectrum(W, mu2):
    return np.linalg.eigvalsh(mu2 * np.eye(W.shape[-2]) - W @ np.swapaxes(W, -1, -2))


# ---------------------------------------------------------------- one-mode laws
def test_target_spectrum_closed_form():
    k = np.arange(N_V)
    np.testing.assert_allclose(np.sort(M2 + 2 - 2 * np.cos(2 * np.pi * k / N_V)), KAPPA, atol=1e-12)


def test_drift_potential_and_curvature_symbolic():
    sp = pytest.importorskip("sympy")
    x, kap, mu2 = sp.symbols("x kappa mu2", positive=True)
    V = -x**2 / (2 * kap) - x - mu2 * sp.log(mu2 - x)
    F = x * (1 / kap - 1 / (mu2 - x))
    assert sp.simplify(sp.diff(V, x) + F) == 0
    assert sp.simplify(sp.diff(V, x, 2).subs(x, mu2 - kap) - (mu2 - kap) / kap**2) == 0


def test_stationary_variance_formula():
    v = dyson.rbm_stationary_variance(KAPPA, MU2, 0.1, 16)
    np.testing.assert_allclose(v, 2 * 0.1 / 16 * X_STAR)
    np.testing.assert_allclose(dyson.rbm_stationary_variance(KAPPA, MU2, 0.05, 8), v)  # the ratio only
    small = dyson.rbm_stationary_variance(KAPPA, MU2, 1e-5, 1, k=3)
    r = (X_STAR / MU2) ** 6  # chains correlated after 3 sweeps; no discrete-time correction as lr -> 0
    np.testing.assert_allclose(small, 2e-5 * X_STAR * (1 + r) / (1 - r), rtol=1e-4)
    with pytest.raises(ValueError, match="kappa"):
        dyson.rbm_stationary_variance([4.0, 10.0], MU2, 0.1, 16)


def test_learning_bias_is_a_sum_over_modes():
    b = dyson.rbm_learning_bias(KAPPA, MU2, 0.1, 16)
    np.testing.assert_allclose(b, dyson.rbm_learning_bias(KAPPA, MU2, 0.05, 8))  # the ratio only
    x = MU2 - KAPPA  # term j of mode i, summed by hand
    terms = [[-(0.1 / 32) / x[i] * (1 + (i == j)) / KAPPA[j] * (MU2 * (x[i] + x[j]) - KAPPA[i] * x[j])
              for j in range(N_V)] for i in range(N_V)]
    np.testing.assert_allclose(b, np.sum(terms, axis=1))
    assert np.all(b < 0)


def test_learned_spectrum_is_the_ultraviolet_regulator():
    np.testing.assert_allclose(dyson.rbm_learned_spectrum([4.0, 8.0, 5.0, 10.0], 3, 9.0), [4, 5, 8, 9])
    for n_h, mu2 in [(10, 9.0), (5, 9.0), (10, 6.0), (3, 5.0)]:
        W = dyson.train_rbm_exact(K_TARGET, n_h, mu2, 0.1, 8000, rng=1)
        np.testing.assert_allclose(model_spectrum(W, mu2), dyson.rbm_learned_spectrum(KAPPA, n_h, mu2), atol=2e-3)


def test_exact_training_matches_the_aligned_mode_map_and_learns_infrared_first():
    _, U = np.linalg.eigh(K_TARGET)
    x, W = np.full(N_V, 0.05), U * np.sqrt(0.05)
    C_t = np.linalg.inv(K_TARGET)
    for _ in range(300):  # the matrix update, aligned: x <- x (1 + lr (1/kappa - 1/(mu2 - x)))^2
        W = W + 0.1 * (C_t - np.linalg.inv(MU2 * np.eye(N_V) - W @ W.T)) @ W
        x = x * (1 + 0.1 * (1 / KAPPA - 1 / (MU2 - x))) ** 2
    np.testing.assert_allclose(np.sum((U.T @ W) ** 2, axis=1), x, rtol=1e-9)
    assert np.all(np.diff(x / X_STAR) <= 1e-12)  # the infrared modes are ahead


def test_exact_training_is_probabilistic_pca():
    data = np.random.default_rng(2).normal(size=(4000, 6)) @ np.diag([1.0, 0.8, 0.6, 0.5, 0.4, 0.3])
    K = np.linalg.inv(np.cov(data.T, bias=True))
    kappa = np.linalg.eigvalsh(K)
    for n_h in (3, 5):  # n_h = 5: the fifth mode lies above mu2 and stays there
        W = dyson.train_rbm_exact(K, n_h, 5.0, 0.05, 8000, rng=3)
        np.testing.assert_allclose(model_spectrum(W, 5.0), dyson.rbm_learned_spectrum(kappa, n_h, 5.0), atol=5e-3)
    with pytest.raises(ValueError, match="K_target"):
        dyson.train_rbm_exact(-K, 3, 5.0, 0.05, 10)


# ---------------------------------------------------------------- the learned mass
def train_with_mass(C_data, n_h, mu2, lr, steps, rng, lr_mu=None):
    """Joint exact gradient ascent in W and mu2, with notebook 4.3's safe step 2 / tr C_data^2."""
    lr_mu = 2.0 / np.sum(C_data * C_data) if lr_mu is None else lr_mu
    W = 0.01 * rng.standard_normal((len(C_data), n_h))
    path = []
    for _ in range(steps):
        C_mod = np.linalg.inv(mu2 * np.eye(len(W)) - W @ W.T)
        W = W + lr * (C_data - C_mod) @ W
        mu2 += lr_mu * 0.5 * (np.trace(C_mod) - np.trace(C_data))
        path.append(mu2)
    return W, np.array(path)


def test_learned_mass_closed_form():
    assert dyson.rbm_learned_mass([1.0, 2.0, 4.0, 4.0], 2) == pytest.approx(4.0)
    kappa = np.array([3.0, 1.0, 6.0, 2.0])  # any order: the unlearned are the largest
    assert dyson.rbm_learned_mass(kappa, 1) == pytest.approx(3 / (1 / 2 + 1 / 3 + 1 / 6))
    assert dyson.rbm_learned_mass(kappa, 4) == dyson.rbm_learned_mass(kappa, 9) == 6.0
    # a harmonic mean lies between the unlearned extremes, above every learned kappa
    assert 2.0 < dyson.rbm_learned_mass(kappa, 1) < 6.0


def test_learned_mass_is_reached_by_joint_training_with_the_safe_step():
    """The review's case: ring N_v = 12, m^2 = 0.8, N_h = 5, from mu2 = 6 (the unit step oscillates)."""
    C = np.linalg.inv(ring(12, 0.8))
    kappa = np.linalg.eigvalsh(ring(12, 0.8))
    target = dyson.rbm_learned_mass(kappa, 5)
    assert target == pytest.approx(3.7032, abs=1e-4)
    W, path = train_with_mass(C, 5, 6.0, 0.05, 8000, np.random.default_rng(1))
    assert path[-1] == pytest.approx(target, abs=1e-6)
    K = path[-1] * np.eye(12) - W @ W.T
    assert np.trace(np.linalg.inv(K)) == pytest.approx(np.trace(C), rel=1e-6)  # the data's total variance
    _, path = train_with_mass(C, 5, 6.0, 0.05, 8000, np.random.default_rng(1), lr_mu=1.0)
    assert np.ptp(path[-100:]) > 0.5  # can fail: the unit step never settles (4.2187 <-> 3.2425)


def test_full_rank_mass_approaches_the_largest_kappa_from_below():
    kappa = np.linalg.eigvalsh(ring(6, 1.0))  # 1, 2, 2, 4, 4, 5
    _, path = train_with_mass(np.linalg.inv(ring(6, 1.0)), 6, 3.0, 0.05, 30_000, np.random.default_rng(2))
    assert dyson.rbm_learned_mass(kappa, 6) == kappa[-1]
    assert path[-1] == pytest.approx(kappa[-1], abs=1e-5)
    late = path[path > kappa[-2]]  # once above the second largest kappa: monotone, never past the largest
    assert late.size > 1000 and np.all(np.diff(late) > -1e-12) and np.all(path <= kappa[-1] + 1e-9)


# ---------------------------------------------------------------- PCD
@pytest.fixture(scope="module")
def stationary_runs():
    return {(lr, batch): dyson.train_rbm_pcd(K_TARGET, N_V, MU2, lr, batch, steps, 40, rng=seed,
                                             record_steps=np.arange(burn, steps + 1, 100), init="fixed_point")
            for (lr, batch, steps, burn), seed in zip([(0.1, 16, 3000, 1500), (0.1, 8, 3000, 1500)], (11, 13))}


def _group_ratio(modes, pred, n_groups=8):
    """Pooled ratio of measured to predicted variance, with a standard error over groups of trainings."""
    r = [np.mean(modes[:, g].reshape(-1, N_V).var(axis=0) / pred)
         for g in np.array_split(np.arange(modes.shape[1]), n_groups)]
    return np.mean(r), np.std(r, ddof=1) / np.sqrt(n_groups)


def test_pcd_stationary_variance_and_its_scaling(stationary_runs):
    ratios = {}
    for (lr, batch), run in stationary_runs.items():
        ratios[lr / batch] = _group_ratio(run.modes, dyson.rbm_stationary_variance(KAPPA, MU2, lr, batch, k=3))
        r, se = ratios[lr / batch]
        assert abs(r - 1) < 4 * se + 10 * lr / batch  # next order is O(lr / batch)
    np.testing.assert_allclose(np.diagonal(run.gram, axis1=-2, axis2=-1), run.modes)
    np.testing.assert_allclose(np.linalg.eigvalsh(run.gram[-1]), run.eigs[-1], atol=1e-9)


def test_pcd_learning_bias(stationary_runs):
    for (lr, batch), run in stationary_runs.items():
        per_seed = (run.modes.mean(axis=0) - X_STAR).sum(axis=1)  # the trace of X, per training
        se = per_seed.std(ddof=1) / np.sqrt(per_seed.size)
        expected = dyson.rbm_learning_bias(KAPPA, MU2, lr, batch).sum()
        assert abs(per_seed.mean() - expected) < 4 * se and abs(per_seed.mean()) > 4 * se


def test_d3_pcd_reduced():
    """D-3 with 24 trainings, averaged over updates 5000, 5500 and 6000, from the random start."""
    run = dyson.train_rbm_pcd(K_TARGET, N_V, MU2, 0.1, 16, 6000, 24, rng=2024, record_steps=[5000, 5500, 6000])
    means = run.eigs[:, :, ::-1].mean(axis=0)  # per training, descending
    se = means.std(axis=0, ddof=1) / np.sqrt(len(means))
    assert np.all(np.abs(means.mean(axis=0) - D3_REF) < np.maximum(0.05, 4 * np.hypot(se, 0.015)))
    trace = means.sum(axis=1)  # the learning bias of the trace: below 30
    assert abs(trace.mean() - 29.2) < max(0.1, 4 * trace.std(ddof=1) / np.sqrt(trace.size))


def test_pcd_streams_and_start():
    a = dyson.train_rbm_pcd(K_TARGET, N_V, MU2, 0.1, 4, 20, 3, rng=5, record_steps=[0, 20])
    b = dyson.train_rbm_pcd(K_TARGET, N_V, MU2, 0.1, 4, 20, 5, rng=5, record_steps=[0, 20])
    np.testing.assert_array_equal(a.W, b.W[:3])  # training i draws from the i-th child only
    fp = dyson.train_rbm_pcd(K_TARGET, N_V, MU2, 0.1, 4, 1, 2, rng=0, record_steps=[0], init="fixed_point")
    np.testing.assert_allclose(np.sort(fp.modes[0, 0]), np.sort(X_STAR), atol=1e-12)
    with pytest.raises(ValueError, match="record_steps"):
        dyson.train_rbm_pcd(K_TARGET, N_V, MU2, 0.1, 4, 20, 3, rng=5, record_steps=[30])


# ---------------------------------------------------------------- Fokker-Planck
@pytest.mark.parametrize("omega,g2", [(1.0, 0.5), (0.3125, 0.01), (2.0, 0.1)])
def test_ornstein_uhlenbeck_levels_and_ground_state(omega, g2):
    width = np.sqrt(g2 / omega)  # V = omega x^2 / 2: E_n = n omega / 2, P_s Gaussian of variance g^2 / omega
    x = np.linspace(-12 * width, 12 * width, 3001)
    E, psi = dyson.fokker_planck_spectrum(lambda y: 0.5 * omega * y**2, g2, x, 6)
    np.testing.assert_allclose(E, 0.5 * omega * np.arange(6), atol=2e-4 * omega)
    h = x[1] - x[0]
    np.testing.assert_allclose(psi.T @ psi * h, np.eye(6), atol=1e-10)
    assert np.sum(x**2 * psi[:, 0] ** 2) * h == pytest.approx(g2 / omega, rel=1e-5)


def test_rbm_levels_converge_at_second_order_and_are_harmonic():
    V = lambda x: -x**2 / 8 - x - MU2 * np.log(MU2 - x)  # noqa: E731  (kappa = 4)
    errs = [abs(dyson.fokker_planck_spectrum(V, 0.01, np.linspace(0, MU2, n)[1:-1], 1)[0][0]) for n in (1001, 2001, 4001)]
    ratios = np.array(errs[:-1]) / np.array(errs[1:])
    assert np.all((ratios > 3.0) & (ratios < 5.0))  # E_0 = 0 up to an O(h^2) error
    x = np.linspace(0, MU2, 8001)[1:-1]
    E, psi = dyson.fokker_planck_spectrum(V, 1e-4, x, 5)
    well = np.sum(x[:, None] * psi**2, axis=0) * (x[1] - x[0]) > 2.0
    np.testing.assert_allclose(E[well][:3], 5 / 32 * np.arange(3), atol=1e-3)  # n Omega / 2, Omega = 5 / 16
    with pytest.raises(ValueError, match="x_grid"):
        dyson.fokker_planck_spectrum(V, 0.01, np.array([1.0, 2.0, 4.0]), 1)
