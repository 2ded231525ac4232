"""Tests of seqrmt.bsr.algorithms: GAMP-RIE, minimal nuclear norm, gradient descent.

Reference values are the checkpoints B5 and B9 of the Part 2 specification (Bayes-optimal MMSE
computed independently of this module). Sizes are smaller than the spec's (d = 60 instead of 100
for GAMP-RIE, d = L = 20 for GD) to keep the file fast; the tolerances are those the spec gives for
single runs, which are about three run-to-run standard deviations at d = 60.
"""

import numpy as np
import pytest
import torch

from seqrmt.bsr import sample_bsr
from seqrmt.ensemble import spawn_generators
from seqrmt.bsr.algorithms import (
    GDResult,
    average_of_first_k_error,
    design_matrix,
    gamp_rie,
    gamp_state_evolution,
    gd_factorized,
    gd_on_independent_data,
    gd_recovery_summary,
    interpolator_comparison,
    min_nuclear_norm,
)
from seqrmt.bsr.model import bilinear_readout
from seqrmt import ConvergenceError
from seqrmt.runtime import single_threaded_blas

# Bayes-optimal MMSE_S from checkpoint B5: (alpha, beta, rho, delta) -> MMSE_S
BO_MMSE = {
    (0.5, 1.0, 0.5, 0.0): 0.351469,
    (0.25, 1.0, 0.2, 0.0): 0.517532,
    (0.3, 2.0, 0.2, 0.1): 0.349061,
    (0.3, 1.0, 0.2, 0.0): 0.347439,
}


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    with single_threaded_blas():
        torch.set_num_threads(1)
        yield


def _data(alpha, beta, rho, delta, d, seed):
    L = int(round(beta * d))
    return sample_bsr(int(round(alpha * d * L)), d, L, int(round(rho * d)), delta, rng=seed)


def _err(S, S_true):
    return float(np.mean((S - S_true) ** 2))


# --------------------------------------------------------------------------- design matrix


def test_design_matrix_matches_readout():
    data = sample_bsr(40, 6, 9, 2, 0.0, rng=0)
    S = np.random.default_rng(1).standard_normal((6, 9))
    assert np.allclose(design_matrix(data.X) @ S.ravel(), bilinear_readout(data.X, S))


# --------------------------------------------------------------------------- state evolution


@pytest.mark.parametrize("key", list(BO_MMSE))
def test_state_evolution_reaches_bayes_optimal(key):
    """B5 through state evolution: V^t -> MMSE_S (largest fixed point), to 1e-4."""
    v = gamp_state_evolution(*key, n_iter=120)
    assert abs(v[-1] - BO_MMSE[key]) < 1e-4
    assert np.all(np.diff(v) <= 1e-12)  # monotone decrease from V^0 = 1


def test_state_evolution_perfect_recovery_threshold():
    """B1/B11: noiseless SE collapses to 0 above alpha_PR = 0.36 (beta=1, rho=0.2), not below.
    Near V = 0, V^{t+1} ~ (alpha_PR / alpha) V^t, so the collapse is geometric with that ratio."""
    v = gamp_state_evolution(0.5, 1.0, 0.2, 0.0, 80)
    assert v[-1] < 1e-6
    assert v[40] / v[39] == pytest.approx(0.36 / 0.5, abs=0.01)
    assert gamp_state_evolution(0.33, 1.0, 0.2, 0.0, 60)[-1] > 0.1


def test_state_evolution_transposition():
    v1 = gamp_state_evolution(0.3, 2.0, 0.2, 0.1, 10)
    v2 = gamp_state_evolution(0.3, 0.5, 0.1, 0.1, 10)  # transposed: (1/beta, rho/beta)
    assert np.allclose(v1, v2, atol=1e-5)


# --------------------------------------------------------------------------- GAMP-RIE


def test_gamp_rie_tracks_state_evolution():
    """Spec 3.6: the first iterations follow SE (within about 0.02 at d = 60; we allow 0.03)."""
    data = _data(0.5, 1.0, 0.5, 0.0, 60, seed=0)
    res = gamp_rie(data.X, data.y, 0.5, 0.0, S_true=data.S, max_iter=5, damping=0.0,
                   precision="empirical", on_failure="flag")
    assert res.mse.shape == res.se_mse.shape == (6,)
    assert np.max(np.abs(res.mse - res.se_mse)) < 0.03
    assert np.max(np.abs(res.zeta - res.se_zeta)) < 0.1 * res.se_zeta.max()


@pytest.mark.parametrize("key, seeds", [((0.5, 1.0, 0.5, 0.0), 2), ((0.25, 1.0, 0.2, 0.0), 4),
                                        ((0.3, 2.0, 0.2, 0.1), 2)])
def test_gamp_rie_near_bayes_optimal(key, seeds):
    """B9 at d = 60 (beta = 2: d = 40): the mean final MSE over a few data sets lies within 0.08 of
    the BO MMSE (the spec's single-run tolerance; the run-to-run std we measured at d = 60 is
    0.01 for the first point and 0.06 for the second, hence 4 seeds there). Convergence to
    ``tol`` is not required: at beta = 2 one data set keeps jittering at the 1e-3 level."""
    alpha, beta, rho, delta = key
    d = 60 if beta == 1 else 40
    errors = []
    for seed in range(seeds):
        data = _data(alpha, beta, rho, delta, d, seed=seed)
        res = gamp_rie(data.X, data.y, rho, delta, S_true=data.S, tol=1e-6, max_iter=100,
                       on_failure="flag")
        assert not res.diverged and abs(res.zeta[-1] - res.se_zeta[-1]) < 0.1 * res.se_zeta[-1]
        assert res.mse[-1] == pytest.approx(_err(res.S, data.S))
        errors.append(res.mse[-1])
    assert abs(np.mean(errors) - BO_MMSE[key]) < 0.08


@pytest.mark.parametrize("seed", [1, 3])
def test_gamp_rie_perfect_recovery_above_alpha_pr(seed):
    """Noiseless, alpha = 0.9 > alpha_PR = 0.36: exact recovery (SE: V -> 0), d = 20.
    (With the authors' undamped variant these two data sets stop early with errors 0.03 and
    0.11, which the test below checks, so that the default settings are shown to matter.)"""
    data = _data(0.9, 1.0, 0.2, 0.0, 20, seed=seed)
    res = gamp_rie(data.X, data.y, 0.2, 0.0, S_true=data.S)
    assert res.converged and _err(res.S, data.S) < 1e-6
    assert res.se_mse[-1] < 1e-3


def test_gamp_rie_undamped_empirical_stops_early():
    data = _data(0.9, 1.0, 0.2, 0.0, 20, seed=3)
    res = gamp_rie(data.X, data.y, 0.2, 0.0, S_true=data.S, damping=0.0, precision="empirical")
    assert res.converged and res.mse[-1] > 0.01


def test_gamp_rie_transposition_invariance():
    """A problem with L < d gives the same estimate as its transpose."""
    data = sample_bsr(180, 30, 15, 6, 0.0, rng=3)  # beta = 0.5, rho = 0.2
    res = gamp_rie(data.X, data.y, 0.2, 0.0, max_iter=8, on_failure="flag")
    Xt = data.X.transpose(0, 2, 1)  # (n, d, L): the transposed problem has d' = 15, L' = 30
    res_t = gamp_rie(Xt, data.y, 6 / 15, 0.0, max_iter=8, on_failure="flag")
    assert np.allclose(res.S, res_t.S.T, atol=1e-8)


def test_gamp_rie_divergence_detected():
    """A deliberately bad setting: no damping with A = alpha / (Delta + V) far above alpha_PR
    (the instability the spec reports). Raise, or flag with finite numbers."""
    data = _data(0.9, 1.0, 0.2, 0.0, 20, seed=3)
    with pytest.raises(ConvergenceError, match="diverged"):
        gamp_rie(data.X, data.y, 0.2, 0.0, damping=0.0, precision="theory")
    with pytest.warns(RuntimeWarning, match="diverged"):
        res = gamp_rie(data.X, data.y, 0.2, 0.0, damping=0.0, on_failure="warn")
    assert res.diverged and not res.converged and np.all(np.isfinite(res.S))
    assert np.all(np.isfinite(res.zeta))


def test_gamp_rie_noiseless_alpha_015_blowup_caught_and_retried():
    """Noiseless data at alpha = 0.15, rho = 0.2, d = 40: with the default damping 0.2 this data
    set (one in sixty seeds) oscillates with a growing amplitude (errors 1, 2, 5, 70, 3e3, 2e5
    before the old 1e6 bound stopped it). The prior-scaled bound stops it while the estimate is
    finite and moderate; a retry with damping 0.4 converges near state evolution."""
    data = sample_bsr(240, 40, 40, 8, 0.0, rng=24)
    with pytest.raises(ConvergenceError, match="norm_bound"):
        gamp_rie(data.X, data.y, 0.2, 0.0, S_true=data.S, max_iter=80, tol=1e-7)
    res = gamp_rie(data.X, data.y, 0.2, 0.0, S_true=data.S, max_iter=80, tol=1e-7,
                   on_failure="flag")
    assert res.diverged and not res.converged and res.damping == 0.2
    assert np.all(np.isfinite(res.S)) and np.all(np.isfinite(res.mse))
    assert np.sum(res.S**2) / 1600 <= 10 and res.mse[-1] < 20  # |S| within the bound
    ok = gamp_rie(data.X, data.y, 0.2, 0.0, S_true=data.S, max_iter=80, tol=1e-7,
                  on_failure="flag", retry_damping=(0.4, 0.6))
    assert ok.converged and not ok.diverged and ok.damping == 0.4
    assert abs(ok.mse[-1] - ok.se_mse[-1]) < 0.1  # 0.77 against V = 0.78
    with pytest.raises(ValueError, match="retry_damping"):
        gamp_rie(data.X, data.y, 0.2, 0.0, retry_damping=(1.0,))
    with pytest.raises(ValueError, match="retry_damping"):
        gamp_rie(data.X, data.y, 0.2, 0.0, retry_damping=0.4)
    with pytest.raises(ValueError, match="norm_bound"):
        gamp_rie(data.X, data.y, 0.2, 0.0, norm_bound=0.0)


def test_gamp_rie_max_iter():
    data = _data(0.5, 1.0, 0.5, 0.0, 20, seed=0)
    with pytest.raises(ConvergenceError, match="max_iter"):
        gamp_rie(data.X, data.y, 0.5, 0.0, max_iter=2, tol=1e-12)


def test_gamp_rie_validation():
    data = _data(0.5, 1.0, 0.5, 0.0, 10, seed=0)
    X, y = data.X, data.y
    with pytest.raises(ValueError, match="y"):
        gamp_rie(X, y[:-1], 0.5, 0.0)
    with pytest.raises(ValueError, match="X"):
        gamp_rie(X[0], y, 0.5, 0.0)
    with pytest.raises(ValueError, match="rho"):
        gamp_rie(X, y, 0.55, 0.0)  # rho * d not an integer
    with pytest.raises(ValueError, match="rho"):
        gamp_rie(X, y, -0.5, 0.0)
    with pytest.raises(ValueError, match="delta"):
        gamp_rie(X, y, 0.5, -1.0)
    with pytest.raises(ValueError, match="y"):
        gamp_rie(X, np.where(np.arange(y.size) == 0, np.nan, y), 0.5, 0.0)
    with pytest.raises(ValueError, match="damping"):
        gamp_rie(X, y, 0.5, 0.0, damping=1.0)
    with pytest.raises(ValueError, match="S_true"):
        gamp_rie(X, y, 0.5, 0.0, S_true=np.zeros((3, 3)))
    with pytest.raises(ValueError, match="max_iter"):
        gamp_rie(X, y, 0.5, 0.0, max_iter=0)
    with pytest.raises(ValueError, match="precision"):
        gamp_rie(X, y, 0.5, 0.0, precision="exact")
    with pytest.raises(ValueError, match="on_failure"):
        gamp_rie(X, y, 0.5, 0.0, on_failure="ignore")
    with pytest.raises(ValueError, match="n_iter"):
        gamp_state_evolution(0.5, 1.0, 0.5, 0.0, 0)
    with pytest.raises(ValueError, match="alpha"):
        gamp_state_evolution(0.0, 1.0, 0.5, 0.0, 3)


# --------------------------------------------------------------------------- nuclear norm


def test_mnne_exact_recovery_well_above_threshold():
    """alpha = 0.8 > alpha_MNNE(1, 0.2) = 0.5717 (B2): exact recovery at d = L = 20."""
    data = _data(0.8, 1.0, 0.2, 0.0, 20, seed=0)
    assert _err(min_nuclear_norm(data.X, data.y), data.S) < 1e-6


def test_mnne_fails_well_below_threshold_and_is_optimal():
    """alpha = 0.3 < alpha_PR = 0.36 < alpha_MNNE: no recovery, but the output is feasible and
    has a nuclear norm no larger than that of the (feasible) planted matrix."""
    data = _data(0.3, 1.0, 0.2, 0.0, 20, seed=1)
    S = min_nuclear_norm(data.X, data.y)
    assert _err(S, data.S) > 0.1
    assert np.max(np.abs(bilinear_readout(data.X, S) - data.y)) < 1e-4
    nuc = np.linalg.norm(S, "nuc")
    assert nuc <= np.linalg.norm(data.S, "nuc") * (1 + 1e-5)


def test_mnne_solvers_agree():
    """Independent solver (interior point, Clarabel) against SCS: same minimiser."""
    data = _data(0.4, 1.0, 0.25, 0.0, 12, seed=4)
    S_scs = min_nuclear_norm(data.X, data.y, solver="SCS", eps=1e-9)
    S_cla = min_nuclear_norm(data.X, data.y, solver="CLARABEL")
    assert _err(S_scs, S_cla) < 1e-6


def test_mnne_infeasible_raises_with_status():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 5, 5))  # n = 40 > dL = 25: random targets are inconsistent
    with pytest.raises(RuntimeError, match="infeasible"):
        min_nuclear_norm(X, rng.standard_normal(40))


def test_mnne_validation():
    X = np.ones((4, 3, 3))
    with pytest.raises(ValueError, match="y"):
        min_nuclear_norm(X, np.ones(5))
    with pytest.raises(ValueError, match="X"):
        min_nuclear_norm(np.ones((4, 3)), np.ones(4))
    with pytest.raises(ValueError, match="y"):
        min_nuclear_norm(X, np.array([1.0, np.nan, 0.0, 0.0]))
    with pytest.raises(ValueError, match="solver"):
        min_nuclear_norm(X, np.ones(4), solver="MOSEK")


# --------------------------------------------------------------------------- gradient descent


def test_gd_step_matches_autograd():
    """One explicit-gradient step equals a step on torch's autograd gradient of the sum loss."""
    data = sample_bsr(30, 6, 5, 2, 0.1, rng=0)
    res = gd_factorized(data.X, data.y, 2, n_students=3, init="prior", lr=0.01, max_steps=1,
                        record_every=1, rng=7)
    g = np.random.default_rng(7)
    U = torch.tensor(g.standard_normal((3, 6, 2)), requires_grad=True)
    V = torch.tensor(g.standard_normal((3, 5, 2)), requires_grad=True)
    X = torch.tensor(data.X)
    S = U @ V.transpose(1, 2) / np.sqrt(2)
    yhat = torch.einsum("nld,kdl->kn", X, S) / np.sqrt(30)
    loss = 0.25 * ((yhat - torch.tensor(data.y)) ** 2).sum()
    loss.backward()
    with torch.no_grad():
        S1 = (U - 0.01 * U.grad) @ (V - 0.01 * V.grad).transpose(1, 2) / np.sqrt(2)
    assert np.allclose(res.S, S1.numpy(), atol=1e-12)
    assert res.steps.tolist() == [0, 1]


def test_gd_small_init_recovers_between_pr_and_mnne():
    """Section 4: small-init GD recovers at alpha = 0.5, above alpha_PR = 0.36 and below
    alpha_MNNE = 0.572 (d = L = 20, rho = 0.2)."""
    data = _data(0.5, 1.0, 0.2, 0.0, 20, seed=1)
    res = gd_factorized(data.X, data.y, 4, n_students=3, init="small", max_steps=8000,
                        S_true=data.S, rng=0)
    assert res.converged
    assert np.max(res.error) < 1e-4 and res.error_avg < 1e-4
    assert res.error_avg == pytest.approx(_err(res.S.mean(axis=0), data.S), abs=1e-12)


def test_gd_small_init_fails_below_alpha_pr():
    data = _data(0.25, 1.0, 0.2, 0.0, 20, seed=1)
    res = gd_factorized(data.X, data.y, 4, n_students=2, init="small", max_steps=2000,
                        S_true=data.S, rng=0)
    assert np.min(res.error) > 0.2


def test_gd_divergence_detected():
    data = _data(0.5, 1.0, 0.2, 0.0, 10, seed=0)
    with pytest.raises(ConvergenceError, match="lr"):
        gd_factorized(data.X, data.y, 2, init="prior", lr=50.0, max_steps=200, rng=5)


def test_gd_validation():
    data = _data(0.5, 1.0, 0.2, 0.0, 10, seed=0)
    X, y = data.X, data.y
    with pytest.raises(ValueError, match="y"):
        gd_factorized(X, y[:3], 2)
    with pytest.raises(ValueError, match="r"):
        gd_factorized(X, y, 0)
    with pytest.raises(ValueError, match="init"):
        gd_factorized(X, y, 2, init="zero")
    with pytest.raises(ValueError, match="lr"):
        gd_factorized(X, y, 2, lr=-0.1)
    with pytest.raises(ValueError, match="n_students"):
        gd_factorized(X, y, 2, n_students=0)
    with pytest.raises(ValueError, match="S_true"):
        gd_factorized(X, y, 2, S_true=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="device"):
        gd_factorized(X, y, 2, device="no-such-device")
    with pytest.raises(ValueError, match="dtype"):
        gd_factorized(X, y, 2, dtype="float16")


# --------------------------------------------------------------------------- experiment drivers


def test_gd_on_independent_data_matches_inline_loop():
    """Data set i: the data, then the students, from the i-th spawned generator."""
    opts = dict(n_students=2, init="small", max_steps=50, record_every=10)
    runs = gd_on_independent_data(2, 60, 6, 5, 1, delta=0.1, student_rank=2, return_data=True,
                                  rng=3, **opts)
    for (data, res), g in zip(runs, spawn_generators(3, 2)):
        ref_data = sample_bsr(60, 6, 5, 1, 0.1, g)
        ref = gd_factorized(ref_data.X, ref_data.y, 2, S_true=ref_data.S, rng=g, **opts)
        assert np.array_equal(data.X, ref_data.X) and np.array_equal(res.S, ref.S)
        assert res.S.shape == (2, 6, 5) and np.array_equal(res.error, ref.error)
    plain = gd_on_independent_data(2, 60, 6, 5, 1, delta=0.1, student_rank=2, rng=3, **opts)
    assert all(np.array_equal(a.S, b.S) for a, (_, b) in zip(plain, runs))


def _fake_result(errors, train):
    K = len(errors)
    return GDResult(S=np.zeros((K, 1, 1)), S_avg=np.zeros((1, 1)), error=np.array(errors),
                    error_avg=0.0, train_mse=np.array(train), steps=np.array([0]),
                    error_history=np.zeros((1, K)), error_avg_history=np.zeros(1),
                    train_history=np.zeros((1, K)), n_steps=0, converged=True)


def test_gd_recovery_summary_counts_and_standard_error():
    runs = [_fake_result([1e-6, 0.5], [1e-8, 1e-8]),  # found S*, interpolates elsewhere
            _fake_result([0.2, 1e-4], [1e-3, 1e-9])]  # not fitting, found S*
    s = gd_recovery_summary(runs, fit_tol=1e-5, exact_tol=1e-3)
    assert (s["exact"], s["fit_not_exact"], s["not_fit"], s["n_students"]) == (2, 1, 1, 4)
    per_set = np.array([(1e-6 + 0.5) / 2, (0.2 + 1e-4) / 2])
    assert s["error"] == pytest.approx(per_set.mean(), rel=1e-14)
    assert s["se"] == pytest.approx(abs(per_set[0] - per_set[1]) / 2, rel=1e-12)
    assert np.isnan(gd_recovery_summary(runs[:1])["se"])
    with pytest.raises(ValueError, match="results"):
        gd_recovery_summary([])
    with pytest.raises(ValueError, match="results"):
        gd_recovery_summary([runs[0], _fake_result([0.1], [0.1])])
    with pytest.raises(ValueError, match="fit_tol"):
        gd_recovery_summary(runs, fit_tol=0.0)


def test_average_of_first_k_error_endpoints_and_loop():
    data = sample_bsr(60, 5, 4, 1, 0.0, rng=0)
    res = gd_factorized(data.X, data.y, 1, n_students=4, max_steps=20, S_true=data.S, rng=1)
    e = average_of_first_k_error(res.S, data.S)
    want = [_err(res.S[:k].mean(axis=0), data.S) for k in range(1, 5)]
    np.testing.assert_allclose(e, want, rtol=1e-12)
    assert e[0] == pytest.approx(res.error[0], rel=1e-10)
    assert e[-1] == pytest.approx(res.error_avg, rel=1e-10)
    with pytest.raises(ValueError, match="S_true"):
        average_of_first_k_error(res.S, np.zeros((4, 5)))


def test_interpolator_comparison_matches_inline_loop():
    """The driver equals the notebook loop it replaces (MNNE, then one student per rank), data
    set i drawing from the i-th spawned generator."""
    opts = dict(init="small", max_steps=300, tol=1e-10)
    out = interpolator_comparison(2, 30, 5, 5, 1, [1, 5], rng=4, **opts)
    nuc = lambda S: np.linalg.norm(S, "nuc")  # noqa: E731
    for i, g in enumerate(spawn_generators(4, 2)):
        data = sample_bsr(30, 5, 5, 1, 0.0, g)
        fits = [min_nuclear_norm(data.X, data.y)]
        fits += [gd_factorized(data.X, data.y, rs, rng=g, **opts).S[0] for rs in (1, 5)]
        for key, S in zip(["MNNE", "GD, rank 1", "GD, rank 5"], fits):
            res = bilinear_readout(data.X, S) - data.y
            want = [_err(S, data.S), np.mean(res**2), nuc(S) / nuc(data.S)]
            np.testing.assert_allclose(out[key][i], want, rtol=1e-9, atol=1e-12)
    assert out["MNNE"][:, 2].max() <= 1 + 1e-3  # MNNE has the smallest nuclear norm
    with pytest.raises(ValueError, match="student_ranks"):
        interpolator_comparison(1, 30, 5, 5, 1, [0])
    with pytest.raises(ValueError, match="gd_options"):
        interpolator_comparison(1, 30, 5, 5, 1, [1], n_students=2)
