"""Tests of seqrmt.frontiers.icl against the Part 5 spec's [V] checkpoints (section 3) and invariants."""

import numpy as np
import pytest

from seqrmt import rmt
from seqrmt.frontiers import icl

ALPHA, RHO = 1.0, 0.1


def _spike_bottom(d):
    s = np.full(d, 0.1)
    s[-1] = d - 0.1 * (d - 1)
    return np.diag(s)


def _tests(d):
    C_tr = icl.power_law_covariance(d)
    return C_tr, {"aligned": C_tr, "isotropic": np.eye(d), "spike_bottom": _spike_bottom(d)}


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


def test_infinite_pretraining_checkpoints_and_limit():
    C_tr, tests = _tests(40)
    expected = {"aligned": 0.4960, "isotropic": 0.7236, "spike_bottom": 0.9365}
    for name, value in expected.items():
        e_inf = icl.icl_error_infinite(C_tr, tests[name], ALPHA, RHO)
        assert e_inf == pytest.approx(value, abs=6e-5)
        # the finite formula tends to the infinite-pretraining one as tau, kappa -> infinity
        e_big = icl.icl_error(C_tr, tests[name], ALPHA, 1e7, 1e7, RHO).error
        assert e_big == pytest.approx(e_inf, abs=1e-5)


def test_infinite_error_is_trace_formula_at_gamma_infinity():
    # e_inf = e(Gamma_inf) with Gamma_inf = [C (C + nu)^-1, 0], for a non-diagonal pair
    rng = np.random.default_rng(0)
    d = 12
    A = rng.standard_normal((d, d))
    C_tr = A @ A.T / d
    B = rng.standard_normal((d, d))
    C_te = B @ B.T / d
    nu = (np.trace(C_tr) / d + RHO) / ALPHA
    G = C_tr @ np.linalg.inv(C_tr + nu * np.eye(d))
    Gamma = np.hstack([G, np.zeros((d, 1))])
    e_inf = icl.icl_error_infinite(C_tr, C_te, ALPHA, RHO)
    assert icl.icl_test_error(Gamma, C_te, ALPHA, RHO) == pytest.approx(e_inf, rel=1e-12)
    # Gamma_inf minimises the trace formula for C_test = C_train: perturbations increase it
    e0 = icl.icl_test_error(Gamma, C_tr, ALPHA, RHO)
    for _ in range(5):
        P = 1e-3 * rng.standard_normal((d, d + 1))
        assert icl.icl_test_error(Gamma + P, C_tr, ALPHA, RHO) > e0
    # the alignment term is e_inf minus a part that depends on C_test only through its trace
    C_te2 = np.diag(np.full(d, np.trace(C_te) / d))
    diff = icl.icl_error_infinite(C_tr, C_te, ALPHA, RHO) - icl.icl_error_infinite(
        C_tr, C_te2, ALPHA, RHO
    )
    align = icl.alignment(C_tr, C_te, ALPHA, RHO) - icl.alignment(C_tr, C_te2, ALPHA, RHO)
    assert diff == pytest.approx(align, rel=1e-10)


def test_rotation_invariance_of_theory():
    rng = np.random.default_rng(1)
    d = 15
    C_tr = icl.power_law_covariance(d)
    C_te = _spike_bottom(d)
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    e = icl.icl_error(C_tr, C_te, ALPHA, 2.0, 0.5, RHO).error
    e_rot = icl.icl_error(Q @ C_tr @ Q.T, Q @ C_te @ Q.T, ALPHA, 2.0, 0.5, RHO).error
    assert e_rot == pytest.approx(e, rel=1e-9)


def test_task_resolvent_trace_matches_rmt_and_derivative():
    s = np.r_[np.ones(10), 3 * np.ones(10)]
    # kappa d = 40 tasks: the same fixed point as seqrmt.rmt.solve_delta with n = 40
    M, dM = icl.task_resolvent_trace(s, 2.0, 0.7)
    delta = rmt.solve_delta(s, 40, 0.7)
    assert M == pytest.approx(np.mean(1 / (s / (1 + delta) + 0.7)), rel=1e-10)  # (1/d) Tr Qbar
    h = 1e-5
    num = (icl.task_resolvent_trace(s, 2.0, 0.7 + h)[0] - icl.task_resolvent_trace(s, 2.0, 0.7 - h)[0]) / (
        2 * h
    )
    assert dM == pytest.approx(num, rel=1e-6)


def test_task_resolvent_trace_matches_sample_covariance():
    # M_kappa is the normalised trace of the resolvent of the k-task sample covariance
    rng = np.random.default_rng(2)
    d, k, nu = 300, 150, 0.4
    s = np.linspace(0.2, 2.0, d)
    W = rng.standard_normal((k, d)) * np.sqrt(s)
    ev = np.linalg.eigvalsh(W.T @ W / k)
    assert np.mean(1 / (ev + nu)) == pytest.approx(icl.task_resolvent_trace(s, k / d, nu)[0], rel=0.01)


def test_diversity_helps_aligned_hurts_isotropic():
    # spec 3.5 diversity trend (theory): e decreases in kappa for the aligned test, increases
    # for the isotropic one, at tau = 0.5
    C_tr, tests = _tests(40)
    kap = [0.25, 1, 4, 16]
    al = [icl.icl_error(C_tr, tests["aligned"], ALPHA, k, 0.5, RHO).error for k in kap]
    iso = [icl.icl_error(C_tr, tests["isotropic"], ALPHA, k, 0.5, RHO).error for k in kap]
    assert np.all(np.diff(al) < 0)
    assert np.all(np.diff(iso) > 0)


def test_pretrain_recovers_population_optimum_with_many_contexts():
    # tau, kappa large (noise-free labels): Gamma* -> Gamma_inf = [C (C + nu)^-1, 0]
    d = 6
    C = np.diag(np.linspace(0.5, 1.5, d))
    G = icl.pretrain_linear_attention(C, ell=60, k=4000, n=40000, rho=0.0, rng=3)
    alpha = 60 / d
    nu = (np.trace(C) / d) / alpha
    G_inf = C @ np.linalg.inv(C + nu * np.eye(d))
    assert np.abs(G[:, :d] - G_inf).max() < 0.08
    assert np.abs(G[:, d]).max() < 0.05


def test_common_random_numbers_share_contexts():
    # equal generator states give identical results
    d = 4
    G1 = icl.pretrain_linear_attention(np.eye(d), 4, 5, 30, 0.1, np.random.default_rng(7))
    G2 = icl.pretrain_linear_attention(np.eye(d), 4, 5, 30, 0.1, np.random.default_rng(7))
    np.testing.assert_array_equal(G1, G2)


def test_simulation_checkpoint_tau_half_d40():
    # spec 3.5 tolerance: 0 <= (MC - theory) / theory <= 0.12 at d = 40, tau = 0.5, kappa >= 1
    d, tau, kappa = 40, 0.5, 4
    C_tr, tests = _tests(d)
    seeds = np.random.default_rng(12).integers(2**32, size=6)
    for name in ("aligned", "isotropic"):
        th = icl.icl_error(C_tr, tests[name], ALPHA, kappa, tau, RHO).error
        mc = np.mean(
            [
                icl.icl_test_error(
                    icl.pretrain_linear_attention(C_tr, d, kappa * d, int(tau * d * d), RHO, int(sd)),
                    tests[name], ALPHA, RHO,
                )
                for sd in seeds
            ]
        )
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
        icl.icl_error_infinite(-I, I, 1.0, 0.1)
    with pytest.raises(ValueError, match="Gamma"):
        icl.icl_test_error(np.zeros((3, 3)), I, 1.0, 0.1)
