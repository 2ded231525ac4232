"""Tests for seqrmt.ntp.linear: gradient methods on the linear NTP model (checkpoints C-3, C-3b, C-4)."""

import numpy as np
import pytest

from seqrmt import ntp
from seqrmt.ntp import linear
from seqrmt import ConvergenceError
from seqrmt.stats import loglog_fit


@pytest.fixture(scope="module")
def c3():
    """Checkpoint C-3 data with its targets W*, W^mm and the subspace F."""
    Hbar, data = ntp.linear_ntp_example(0)
    Ws = ntp.w_star(Hbar, data.P)
    Wmm = ntp.ntp_svm_frobenius(Hbar, data.S)
    F = ntp.SubspaceF(Hbar, data.S)
    return Hbar, data, Ws, Wmm, F


@pytest.fixture(scope="module")
def c3_runs(c3):
    """GD for 1e5 iterations with eta = 0.2 (C-3) and eta = 0.5 (C-3b)."""
    Hbar, data, Ws, Wmm, F = c3
    steps = np.unique(np.round(np.geomspace(10, 1e5, 21)).astype(int))
    return {eta: linear.train_linear(Hbar, data.P, data.pi, eta=eta, max_iter=100_000, record_at=steps,
                                     W_star=Ws, W_mm=Wmm, project_F=F.project)
            for eta in (0.2, 0.5)}


def tiny_problem(seed=0, V=4, m=5, d=6):
    """Small random problem built with numpy only (supports of size 2, Gaussian embeddings)."""
    rng = np.random.default_rng(seed)
    Hbar = rng.standard_normal((d, m))
    P = np.zeros((V, m))
    for j in range(m):
        P[rng.choice(V, 2, replace=False), j] = rng.dirichlet([1.0, 1.0])
    pi = rng.dirichlet(np.ones(m))
    return Hbar, P, pi


def test_c3_data_and_targets(c3):
    Hbar, data, Ws, Wmm, _ = c3
    assert data.n == 217
    assert data.entropy() == pytest.approx(1.309491, abs=1e-6)
    assert np.linalg.norm(Ws) == pytest.approx(1.0061, abs=1e-4)
    assert np.linalg.norm(Wmm) == pytest.approx(2.1576, abs=1e-4)
    assert linear.smoothness_bound(Hbar, data.pi) == pytest.approx(2.284, abs=1e-3)
    assert 0.2 <= 1 / (2 * linear.smoothness_bound(Hbar, data.pi))


@pytest.mark.parametrize("k, gap, dist, cos, cos_c", [
    (1_000, 2.45e-2, 9.81e-2, 0.9473, 0.9583),
    (10_000, 2.35e-3, 8.81e-3, 0.9782, 0.9818),
    (100_000, 2.32e-4, 8.66e-4, 0.9878, 0.9896),
])
def test_c3_gd_checkpoint(c3_runs, k, gap, dist, cos, cos_c):
    run = c3_runs[0.2]
    i = int(np.flatnonzero(run.steps == k)[0])
    assert run.ce_gap[i] == pytest.approx(gap, rel=0.02)
    assert run.dist_F[i] == pytest.approx(dist, rel=0.02)
    assert run.cos_mm[i] == pytest.approx(cos, rel=0.02)
    assert run.cos_mm_centered[i] == pytest.approx(cos_c, rel=0.02)


def test_c3b_gd_large_step(c3_runs):
    run = c3_runs[0.5]
    assert run.steps[-1] == 100_000
    assert run.cos_mm[-1] == pytest.approx(0.98992, rel=0.02)
    assert run.dist_F[-1] == pytest.approx(3.46e-4, rel=0.02)


@pytest.mark.parametrize("eta", [0.2, 0.5])
def test_rate_one_over_k(c3_runs, eta):
    """||P_F W_k - W*|| ~ 1/k and CE - H ~ 1/k (log-log slopes over 3e3 <= k <= 1e5)."""
    run = c3_runs[eta]
    late = run.steps >= 3000
    assert loglog_fit(run.steps[late], run.dist_F[late])[0] == pytest.approx(-1.0, abs=0.02)
    assert loglog_fit(run.steps[late], run.ce_gap[late])[0] == pytest.approx(-1.0, abs=0.02)


def test_excess_loss_asymptote(c3, c3_runs):
    """Derived asymptote CE(W_k) - H ~ ||W^mm||_F^2 / (eta k) (the chapter's heuristic)."""
    Wmm = c3[3]
    for eta, run in c3_runs.items():
        pred = np.sum(Wmm**2) / (eta * run.steps[-1])
        assert run.ce_gap[-1] == pytest.approx(pred, rel=0.01)


def test_cosines_increase_monotonically_and_norm_grows_like_log(c3, c3_runs):
    Wmm = c3[3]
    run = c3_runs[0.2]
    late = run.steps >= 30
    assert np.all(np.diff(run.cos_mm[late]) > 0)
    assert np.all(np.diff(run.cos_mm_centered[late]) > 0)
    assert np.all(run.cos_mm_centered[late] > run.cos_mm[late])
    # ||W_k|| grows by ||W^mm|| ln 10 per decade
    i4, i5 = (int(np.flatnonzero(run.steps == k)[0]) for k in (10_000, 100_000))
    assert run.norm[i5] - run.norm[i4] == pytest.approx(np.linalg.norm(Wmm) * np.log(10), rel=0.02)


def test_c4_ray(c3):
    """C-4: CE(W* + R W^mm) - H for R = 0, 5, 10, 20."""
    Hbar, data, Ws, Wmm, _ = c3
    expected = [0.6465, 4.97e-3, 3.28e-5, 1.47e-9]
    for R, want in zip([0, 5, 10, 20], expected):
        gap, _ = linear.ntp_loss_and_gradient(Ws + R * Wmm, Hbar, data.P, data.pi)
        assert gap == pytest.approx(want, rel=0.02)


def test_loss_matches_core_and_gradient_matches_finite_differences():
    Hbar, P, pi = tiny_problem(1)
    rng = np.random.default_rng(2)
    W = rng.standard_normal((P.shape[0], Hbar.shape[0]))
    gap, grad = linear.ntp_loss_and_gradient(W, Hbar, P, pi)
    assert gap == pytest.approx(ntp.ntp_cross_entropy(W @ Hbar, P, pi) - ntp.ntp_entropy(P, pi), abs=1e-12)
    h = 1e-6
    fd = np.zeros_like(W)
    for idx in np.ndindex(*W.shape):
        E = np.zeros_like(W)
        E[idx] = h
        fd[idx] = (linear.ntp_loss_and_gradient(W + E, Hbar, P, pi)[0]
                   - linear.ntp_loss_and_gradient(W - E, Hbar, P, pi)[0]) / (2 * h)
    np.testing.assert_allclose(grad, fd, atol=1e-8)


def test_smoothness_bound_dominates_hessian():
    """Largest Hessian eigenvalue at random points never exceeds the bound (and the bound is not loose by > 4x)."""
    Hbar, P, pi = tiny_problem(3)
    V = P.shape[0]
    bound = linear.smoothness_bound(Hbar, pi)
    rng = np.random.default_rng(4)
    top = 0.0
    for scale in (0.0, 0.5, 2.0):
        W = scale * rng.standard_normal((V, Hbar.shape[0]))
        L = W @ Hbar
        Q = np.exp(L - L.max(0))
        Q /= Q.sum(0)
        Hess = sum(pi[j] * np.kron(np.diag(Q[:, j]) - np.outer(Q[:, j], Q[:, j]), np.outer(Hbar[:, j], Hbar[:, j]))
                   for j in range(P.shape[1]))
        top = max(top, np.linalg.eigvalsh(Hess)[-1])
    assert top <= bound
    assert top > bound / 4


def test_default_step_is_half_inverse_smoothness():
    Hbar, P, pi = tiny_problem(5)
    run = linear.train_linear(Hbar, P, pi, max_iter=10)
    assert run.eta == pytest.approx(1 / (2 * linear.smoothness_bound(Hbar, pi)))
    assert run.steps[-1] == 10 and run.n_iter == 10
    assert np.all(np.isnan(run.dist_F)) and np.all(np.isnan(run.cos_mm))


def test_gd_descends_and_matches_manual_iteration():
    Hbar, P, pi = tiny_problem(6)
    W = np.zeros((P.shape[0], Hbar.shape[0]))
    for _ in range(25):
        W -= 0.1 * linear.ntp_loss_and_gradient(W, Hbar, P, pi)[1]
    run = linear.train_linear(Hbar, P, pi, eta=0.1, max_iter=25, record_at=np.arange(1, 26), store=True)
    np.testing.assert_allclose(run.W, W, atol=1e-13)
    assert len(run.snapshots) == 25 and np.array_equal(run.snapshots[-1], run.W)
    assert np.all(np.diff(run.ce_gap) < 0)


def test_normalized_gd_and_adam(c3):
    Hbar, data, Ws, Wmm, F = c3
    ngd = linear.train_linear(Hbar, data.P, data.pi, method="ngd", eta=0.01, max_iter=2000,
                              record_at=[1, 2000], W_mm=Wmm)
    assert ngd.norm[0] == pytest.approx(0.01)  # one step of length eta from zero
    assert ngd.norm[-1] <= 0.01 * 2000
    assert ngd.ce_gap[-1] < 0.02
    adam = linear.train_linear(Hbar, data.P, data.pi, method="adam", eta=0.01, max_iter=2000,
                               record_at=[1, 2000], W_mm=Wmm)
    # first Adam step moves every entry by eta (bias-corrected sign step)
    assert adam.norm[0] == pytest.approx(0.01 * np.sqrt(Wmm.size), rel=1e-3)
    assert adam.ce_gap[-1] < 1e-3


def test_ridge_path_stationary_and_approaches_targets(c3):
    Hbar, data, Ws, Wmm, F = c3
    lams = np.array([1e-1, 1e-3, 1e-5])
    Ws_path = linear.ridge_path(Hbar, data.P, data.pi, lams)
    cosines, dists = [], []
    for lam, W in zip(lams, Ws_path):
        _, grad = linear.ntp_loss_and_gradient(W, Hbar, data.P, data.pi)
        np.testing.assert_allclose(grad, -lam * W, atol=1e-8)
        cosines.append(linear.frobenius_cosine(W, Wmm))
        dists.append(np.linalg.norm(F.project(W) - Ws))
    assert np.all(np.diff(cosines) > 0) and cosines[-1] > 0.97
    assert np.all(np.diff(dists) < 0) and dists[-1] < 2e-3


def test_divergence_and_convergence_errors():
    Hbar, P, pi = tiny_problem(7)
    with np.errstate(all="ignore"), pytest.raises(FloatingPointError, match="eta"):
        linear.train_linear(Hbar, P, pi, eta=1e308, max_iter=300)
    with pytest.raises(ConvergenceError):
        linear.train_linear(Hbar, P, pi, max_iter=20, tol=1e-12)
    run = linear.train_linear(Hbar, P, pi, max_iter=10_000, tol=0.5, record_at=np.arange(1, 10_001))
    assert run.n_iter < 10_000


def test_value_errors():
    Hbar, P, pi = tiny_problem(8)
    V, m = P.shape
    d = Hbar.shape[0]
    W = np.zeros((V, d))
    with pytest.raises(ValueError, match="Hbar"):
        linear.train_linear(Hbar[:, :-1], P, pi)
    with pytest.raises(ValueError, match="P"):
        linear.train_linear(Hbar, P * 2, pi)
    with pytest.raises(ValueError, match="pi"):
        linear.train_linear(Hbar, P, pi * 2)
    bad = Hbar.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="Hbar"):
        linear.train_linear(bad, P, pi)
    with pytest.raises(ValueError, match="eta"):
        linear.train_linear(Hbar, P, pi, eta=0.0)
    with pytest.raises(ValueError, match="method"):
        linear.train_linear(Hbar, P, pi, method="sgd")
    with pytest.raises(ValueError, match="max_iter"):
        linear.train_linear(Hbar, P, pi, max_iter=0)
    with pytest.raises(ValueError, match="record_at"):
        linear.train_linear(Hbar, P, pi, max_iter=10, record_at=[5, 11])
    with pytest.raises(ValueError, match="W_mm"):
        linear.train_linear(Hbar, P, pi, W_mm=np.ones((V + 1, d)))
    with pytest.raises(ValueError, match="project_F"):
        linear.train_linear(Hbar, P, pi, project_F=np.eye(2))
    with pytest.raises(ValueError, match="betas"):
        linear.train_linear(Hbar, P, pi, method="adam", betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="pi"):
        linear.smoothness_bound(Hbar, pi[:-1])
    with pytest.raises(ValueError, match="W"):
        linear.ntp_loss_and_gradient(W[:, :-1], Hbar, P, pi)
    with pytest.raises(ValueError, match="B"):
        linear.frobenius_cosine(W + 1, W)
    with pytest.raises(ValueError, match="B"):
        linear.frobenius_cosine(W + 1, np.ones((V, d + 1)))
    with pytest.raises(ValueError, match="lams"):
        linear.ridge_path(Hbar, P, pi, [1e-2, -1.0])
    with pytest.raises(ConvergenceError):
        linear.ridge_path(Hbar, P, pi, [1e-3], max_iter=1)
    with pytest.raises(ValueError, match="num"):
        linear.log_spaced_steps(100, num=0)
