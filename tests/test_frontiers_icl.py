"""The ICL law of Chapter 5.3 (seqrmt.frontiers.icl.icl_error): the authors' checkpoints, its limits,
its task transform against Chapter 1's fixed point, and an independent pretraining simulation."""

import numpy as np
import pytest

from seqrmt import rmt
from seqrmt.frontiers import icl

ALPHA, RHO = 1.0, 0.1


def _power_law(d):
    s = 1.0 / np.arange(1, d + 1)
    return np.diag(s * d / s.sum())


def _spike_bottom(d):
    s = np.full(d, 0.1)
    s[-1] = d - 0.1 * (d - 1)
    return np.diag(s)


def _tests(d):
    C_tr = _power_law(d)
    return C_tr, {"aligned": C_tr, "isotropic": np.eye(d), "spike_bottom": _spike_bottom(d)}


def _e_inf(C_tr, C_te):
    """Infinite-pretraining error rho + rho_te/alpha tr(C^2 F^2)/d + nu^2 tr(C_te F^2)/d, F = (C + nu)^-1."""
    d = C_tr.shape[0]
    nu = (np.trace(C_tr) / d + RHO) / ALPHA
    F = np.linalg.inv(C_tr + nu * np.eye(d))
    rho_te = np.trace(C_te) / d + RHO
    return RHO + rho_te / ALPHA * np.trace(C_tr @ C_tr @ F @ F) / d + nu**2 * np.trace(C_te @ F @ F) / d


def _trace_formula(Gamma, C_te):
    """e(Gamma) of the notebook's lemma (the O(1/ell) terms dropped)."""
    d = C_te.shape[0]
    G, g = Gamma[:, :d], Gamma[:, d]
    rho_te = np.trace(C_te) / d + RHO
    R = np.eye(d) - G
    return RHO + np.trace(R @ C_te @ R.T) / d + rho_te / ALPHA * np.sum(G**2) / d + rho_te**2 * g @ g / d


@pytest.mark.parametrize(
    "tau, kappa, value",
    [(2, 2, 1.32101), (0.5, 2, 1.48748), (4, 0.5, 1.09574), (0.3, 4, 1.22481)],
)
def test_isotropic_matches_authors_prop_icl(tau, kappa, value):
    # spec 3.0: the general formula at C_train = C_test = I reproduces the authors' prop_icl
    I = np.eye(30)
    assert icl.icl_error(I, I, ALPHA, kappa, tau, RHO).error == pytest.approx(value, abs=1e-5)


@pytest.mark.parametrize(
    "tau, kappa, expected",
    [
        (4, 1, {"aligned": 0.7398, "isotropic": 1.0240, "spike_bottom": 1.2363}),
        (0.5, 0.25, {"aligned": 1.1949, "isotropic": 1.4552}),
        (0.5, 4, {"aligned": 1.1683, "isotropic": 1.4852}),
    ],
)
def test_theory_checkpoints_d40(tau, kappa, expected):
    C_tr, tests = _tests(40)
    for name, value in expected.items():
        e = icl.icl_error(C_tr, tests[name], ALPHA, kappa, tau, RHO).error
        assert e == pytest.approx(value, abs=6e-5), name


def test_infinite_pretraining_limit_and_the_misalignment():
    C_tr, tests = _tests(40)
    expected = {"aligned": 0.4960, "isotropic": 0.7236, "spike_bottom": 0.9365}
    nu = (np.trace(C_tr) / 40 + RHO) / ALPHA
    for name, value in expected.items():
        assert _e_inf(C_tr, tests[name]) == pytest.approx(value, abs=6e-5)
        # the finite formula tends to the infinite-pretraining one, its interaction term to A
        big = icl.icl_error(C_tr, tests[name], ALPHA, 1e7, 1e7, RHO)
        assert big.error == pytest.approx(_e_inf(C_tr, tests[name]), abs=1e-5)
        mis = nu**2 * np.mean(np.diag(tests[name]) / (np.diag(C_tr) + nu) ** 2)
        assert big.interaction == pytest.approx(mis, abs=1e-5)


def test_infinite_error_is_trace_formula_at_gamma_infinity():
    # e_inf = e(Gamma_inf) with Gamma_inf = [C (C + nu)^-1, 0], for a non-diagonal pair, and
    # Gamma_inf minimises the trace formula for C_test = C_train
    rng = np.random.default_rng(0)
    d = 12
    A, B = rng.standard_normal((2, d, d))
    C_tr, C_te = A @ A.T / d, B @ B.T / d
    nu = (np.trace(C_tr) / d + RHO) / ALPHA
    Gamma = np.hstack([C_tr @ np.linalg.inv(C_tr + nu * np.eye(d)), np.zeros((d, 1))])
    assert _trace_formula(Gamma, C_te) == pytest.approx(_e_inf(C_tr, C_te), rel=1e-12)
    e0 = _trace_formula(Gamma, C_tr)
    for _ in range(5):
        assert _trace_formula(Gamma + 1e-3 * rng.standard_normal((d, d + 1)), C_tr) > e0
    # and the finite formula approaches it for this non-diagonal pair too
    assert icl.icl_error(C_tr, C_te, ALPHA, 1e7, 1e7, RHO).error == pytest.approx(
        _e_inf(C_tr, C_te), abs=1e-5)


def test_rotation_invariance_of_theory():
    rng = np.random.default_rng(1)
    d = 15
    C_tr, C_te = _power_law(d), _spike_bottom(d)
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    e = icl.icl_error(C_tr, C_te, ALPHA, 2.0, 0.5, RHO).error
    e_rot = icl.icl_error(Q @ C_tr @ Q.T, Q @ C_te @ Q.T, ALPHA, 2.0, 0.5, RHO).error
    assert e_rot == pytest.approx(e, rel=1e-9)


def test_task_transform_is_chapter_one_fixed_point_and_its_derivative():
    # at tau > 1, xi = 0 and nu = rho_tr / alpha: M is the deterministic equivalent with kappa d tasks
    s = np.r_[np.ones(10), 3 * np.ones(10)]
    C = np.diag(s)
    r = icl.icl_error(C, C, ALPHA, 2.0, 3.0, RHO)
    assert r.xi == 0 and r.nu == pytest.approx(s.mean() + RHO)
    delta = rmt.solve_delta(s, 40, r.nu)
    assert r.M == pytest.approx(np.mean(1 / (s / (1 + delta) + r.nu)), rel=1e-10)  # (1/d) Tr Qbar
    h = 1e-5  # nu moves with rho one for one
    up, down = (icl.icl_error(C, C, ALPHA, 2.0, 3.0, RHO + e).M for e in (h, -h))
    assert r.dM == pytest.approx((up - down) / (2 * h), rel=1e-6)
    # for C = I it is the Marchenko-Pastur transform of ratio 1/kappa
    I = np.eye(20)
    r = icl.icl_error(I, I, ALPHA, 0.5, 3.0, RHO)
    assert r.M == pytest.approx(rmt.mp_stieltjes(-r.nu, 2.0).real, rel=1e-10)


def test_diversity_helps_aligned_hurts_isotropic():
    # spec 3.5 diversity trend (theory) at tau = 0.5
    C_tr, tests = _tests(40)
    kap = [0.25, 1, 4, 16]
    al = [icl.icl_error(C_tr, tests["aligned"], ALPHA, k, 0.5, RHO).error for k in kap]
    iso = [icl.icl_error(C_tr, tests["isotropic"], ALPHA, k, 0.5, RHO).error for k in kap]
    assert np.all(np.diff(al) < 0)
    assert np.all(np.diff(iso) > 0)


def _pretrain(C, d, k, n, rng):
    """Ridgeless linear attention on n contexts of ell = d examples, tasks from k draws of N(0, C)."""
    tasks = rng.standard_normal((k, d)) @ np.linalg.cholesky(C).T
    X = rng.standard_normal((n, d + 1, d)) / np.sqrt(d)
    w = tasks[rng.integers(k, size=n)]
    y = np.einsum("nld,nd->nl", X, w) + np.sqrt(RHO) * rng.standard_normal((n, d + 1))
    h = np.concatenate([np.einsum("nl,nld->nd", y[:, :d], X[:, :d]),
                        np.mean(y[:, :d] ** 2, axis=1, keepdims=True)], axis=1)
    x = X[:, d]
    K = (x @ x.T) * (h @ h.T) + n / d * 1e-6 * np.eye(n)  # the dual of the ridge on x (x) h
    return (x * np.linalg.solve(K, y[:, d])[:, None]).T @ h


def test_simulation_checkpoint_tau_half_d40():
    # spec 3.5: 0 <= (MC - theory) / theory <= 0.12 at d = 40, tau = 0.5, kappa = 4
    d, tau, kappa = 40, 0.5, 4
    C_tr, tests = _tests(d)
    gammas = [_pretrain(C_tr, d, kappa * d, int(tau * d * d), np.random.default_rng(s)) for s in range(6)]
    for name in ("aligned", "isotropic"):
        th = icl.icl_error(C_tr, tests[name], ALPHA, kappa, tau, RHO).error
        mc = np.mean([_trace_formula(G, tests[name]) for G in gammas])
        assert 0 <= (mc - th) / th <= 0.12, (name, mc, th)


def test_validation():
    I = np.eye(3)
    with pytest.raises(ValueError, match="tau"):
        icl.icl_error(I, I, 1.0, 1.0, 1.0, 0.1)
    with pytest.raises(ValueError, match="C_test"):
        icl.icl_error(I, np.eye(4), 1.0, 1.0, 2.0, 0.1)
    with pytest.raises(ValueError, match="C_train"):
        icl.icl_error(np.ones((3, 2)), I, 1.0, 1.0, 2.0, 0.1)
    with pytest.raises(ValueError, match="C_train"):
        icl.icl_error(-I, I, 1.0, 1.0, 2.0, 0.1)
