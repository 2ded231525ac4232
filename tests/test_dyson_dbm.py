"""Tests of seqrmt.dyson.dbm: exact OU transitions, Ito drift of the eigenvalues, Coulomb-gas stationary law."""

import numpy as np
import pytest

from seqrmt import rmt
from seqrmt.dyson import dbm as D
from seqrmt.dyson import universality as U
from seqrmt.runtime import single_threaded_blas


@pytest.fixture(autouse=True)
def _one_blas_thread():
    with single_threaded_blas():
        yield


def test_paths_shape_sorted_and_start():
    h0 = np.diag([0.0, 0.1, 0.2, 3.0])
    t, e = D.dyson_brownian_motion(h0, 2.0, 50, rng=0, theta=0.5, s=0.3)
    assert t.shape == (51,) and e.shape == (51, 4)
    assert t[-1] == pytest.approx(2.0)
    np.testing.assert_allclose(e[0], np.diag(h0))
    assert np.all(np.diff(e, axis=1) > 0)
    tb, eb = D.dyson_brownian_motion(np.stack([h0, h0]), 1.0, 5, rng=0)
    assert eb.shape == (6, 2, 4)


def test_brownian_case_entry_variances():
    """theta = 0: after time t the entries have variance s^2 t (off-diagonal) and 2 s^2 t (diagonal)."""
    rng = np.random.default_rng(1)
    m, n, s, T = 20_000, 2, 0.7, 1.5
    # trace is a sum of the diagonal entries: Var tr H_T = n * 2 s^2 T ; sum of eigenvalues = trace
    _, e = D.dyson_brownian_motion(np.zeros((m, n, n)), T, 3, rng, theta=0.0, s=s)
    tr = e[-1].sum(axis=1)
    var = 2 * n * s**2 * T
    assert tr.var() == pytest.approx(var, rel=5 * np.sqrt(2 / m))
    # the 2x2 spectrum is a two-mode law of width sigma^2 = 2 s^2 T
    assert U.binder_cumulant(e[-1]) == pytest.approx(-4 / 27, abs=0.03)
    assert e[-1].var() == pytest.approx(1.5 * 2 * s**2 * T, rel=0.05)


def test_ou_stationary_state_is_the_coulomb_gas():
    """Stationary spacing law and density of n x n DBM with theta > 0 against the GOE / semicircle."""
    rng = np.random.default_rng(2)
    n, theta, s = 30, 2.0, 0.5
    _, e = D.dyson_brownian_motion(np.zeros((400, n, n)), 4.0, 4, rng, theta=theta, s=s)  # relaxed: e^{-8}
    v = D.stationary_entry_variance(theta, s)
    # one-point density: mean of lambda^2 = (n+1) v exactly for the GOE
    assert np.mean(e[-1] ** 2) == pytest.approx((n + 1) * v, rel=0.02)
    R2 = n * v
    ks = rmt.ks_distance(e[-1], lambda x: rmt.semicircle_cdf(x, R2))
    assert ks < 0.02  # finite-n edge effects ~ n^{-2/3}/n
    sp = U.unfolded_spacings(e[-1], lambda x: rmt.semicircle_cdf(x, R2), drop_edges=4)
    assert rmt.ks_distance(sp, U.wigner_surmise_cdf) < 0.03


def test_ito_drift_of_eigenvalues():
    """Mean eigenvalue increment over a short step divided by dt is the Dyson drift (repulsion included)."""
    rng = np.random.default_rng(3)
    lam = np.array([-1.0, 0.2, 0.5, 2.0])
    m, dt, theta, s = 200_000, 2e-3, 1.0, 1.0
    _, e = D.dyson_brownian_motion(np.broadcast_to(np.diag(lam), (m, 4, 4)), dt, 1, rng, theta, s)
    inc = (e[1] - e[0]) / dt
    se = inc.std(axis=0) / np.sqrt(m)
    drift = D.dyson_drift(lam, theta, s)
    # bias O(dt * s^4 / gap^3) ~ 2e-3 * 37 ~ 0.07 for the closest pair; allow 5 SE + 0.1
    assert np.all(np.abs(inc.mean(axis=0) - drift) < 5 * se + 0.1)
    # the repulsion matters: without it the middle pair would drift by -theta*lambda only
    assert np.abs(inc.mean(axis=0)[1] - (-theta * lam[1])) > 2.0


def test_independent_walkers_cross_but_dbm_does_not_touch():
    rng = np.random.default_rng(4)
    x0 = np.array([-0.05, 0.0, 0.05])
    _, x = D.independent_brownian_motion(x0, 1.0, 2000, rng, theta=0.0, s=0.3)
    assert np.any(np.diff(x, axis=1) < 0)  # labels cross
    g_ind = np.min(np.diff(np.sort(x, axis=1), axis=1)[1:])
    _, e = D.dyson_brownian_motion(np.diag(x0), 1.0, 2000, rng, theta=0.0, s=0.3)
    g_dbm = np.min(np.diff(e, axis=1)[1:])
    assert g_dbm > 0 and g_dbm > 5 * g_ind
    # independent walkers: variance 2 s^2 t per walker
    _, xm = D.independent_brownian_motion(np.zeros(20_000), 1.0, 4, rng, theta=0.0, s=0.3)
    assert xm[-1].var() == pytest.approx(2 * 0.09, rel=5 * np.sqrt(2 / 20_000))
    # OU stationary variance s^2 / theta for the walkers (2 s^2 / (2 theta))
    _, xo = D.independent_brownian_motion(np.zeros(20_000), 10.0, 2, rng, theta=2.0, s=0.3)
    assert xo[-1].var() == pytest.approx(0.09 / 2.0, rel=5 * np.sqrt(2 / 20_000))


def test_dyson_drift_closed_form_and_force_balance():
    lam = np.array([-1.0, 0.5, 3.0])
    ref = [-2 * (-1) + 0.25 * (1 / -1.5 + 1 / -4), -2 * 0.5 + 0.25 * (1 / 1.5 + 1 / -2.5),
           -2 * 3 + 0.25 * (1 / 4 + 1 / 2.5)]
    np.testing.assert_allclose(D.dyson_drift(lam, 2.0, 0.5), ref)
    # the drift is the gradient of (s^2 times) the Coulomb-gas log weight: finite differences
    h = 1e-6
    grad = [(D.coulomb_gas_log_weight(lam + h * np.eye(3)[i], 2.0, 0.5)
             - D.coulomb_gas_log_weight(lam - h * np.eye(3)[i], 2.0, 0.5)) / (2 * h) for i in range(3)]
    np.testing.assert_allclose(0.25 * np.array(grad), D.dyson_drift(lam, 2.0, 0.5), rtol=1e-7)
    assert D.dyson_drift(np.stack([lam, lam])).shape == (2, 3)


def test_stationary_density_is_semicircle():
    x = np.linspace(-3, 3, 13)
    np.testing.assert_allclose(D.stationary_density(x, 10, 2.0, 0.5), rmt.semicircle_density(x, 10 * 0.0625))
    assert D.stationary_entry_variance(2.0, 0.5) == pytest.approx(0.0625)


def test_wishart_drift_closed_form_and_trace():
    # two eigenvalues: s^2 [m +- (x1 + x2)/(x1 - x2)]
    np.testing.assert_allclose(D.wishart_drift([1.0, 3.0], m=5, s=0.5), 0.25 * np.array([5 - 2.0, 5 + 2.0]))
    # the interaction is antisymmetric: the drifts sum to m n s^2 (growth of E Tr X)
    x = np.array([[0.3, 1.0, 2.0, 4.5], [0.1, 0.2, 0.3, 9.0]])
    np.testing.assert_allclose(D.wishart_drift(x, m=7, s=2.0).sum(axis=1), 7 * 4 * 4.0)
    # one eigenvalue: squared norm of an m-vector Brownian motion, drift m s^2 (Bessel-squared)
    np.testing.assert_allclose(D.wishart_drift([2.0], m=3), 3.0)


def test_wishart_ito_drift_and_diffusion():
    """One short step of dW = s dB from W with singular values sqrt(x): mean and variance of the increments."""
    rng = np.random.default_rng(8)
    m, x, s, dt, reps = 5, np.array([0.5, 1.5, 3.0]), 0.7, 2e-3, 100_000
    w0 = np.zeros((m, 3))
    w0[:3] = np.diag(np.sqrt(x))
    rot = np.linalg.qr(rng.normal(size=(m, m)))[0]  # any left rotation: same eigenvalues
    _, e = D.wishart_process(np.broadcast_to(rot @ w0, (reps, m, 3)), dt, 1, rng, s=s)
    np.testing.assert_allclose(e[0, 0], x, atol=1e-12)
    inc = (e[1] - e[0]) / dt
    se = inc.std(axis=0) / np.sqrt(reps)
    drift = D.wishart_drift(x, m, s)
    # the step bias is O(dt s^4 x / gap^2) < 0.02 here
    assert np.all(np.abs(inc.mean(axis=0) - drift) < 5 * se + 0.05), (inc.mean(axis=0), drift, se)
    var = ((e[1] - e[0]) ** 2).mean(axis=0) / dt  # 4 s^2 x_i + O(dt)
    np.testing.assert_allclose(var, 4 * s**2 * x, rtol=0.03)
    # without the interaction the top eigenvalue would drift by m s^2 = 2.45 instead of 4.61 (12 SE away)
    assert inc.mean(axis=0)[2] - m * s**2 > 6 * se[2]


def test_wishart_free_evolution_is_marchenko_pastur():
    m, n, s, t = 200, 100, 0.5, 2.0
    _, e = D.wishart_process(np.zeros((4, m, n)), t, 2, rng=3, s=s)
    assert np.all(e[0] == 0)
    x = e[-1] / (m * s**2 * t)  # white Wishart of ratio n / m
    assert x.mean() == pytest.approx(1.0, abs=0.02)
    assert rmt.ks_distance(x.ravel(), lambda y: rmt.mp_cdf(y, n / m)) < 0.03


def test_validation_errors_name_the_argument():
    with pytest.raises(ValueError, match="h0"):
        D.dyson_brownian_motion(np.zeros((2, 3)), 1.0, 2)
    with pytest.raises(ValueError, match="h0"):
        D.dyson_brownian_motion(np.array([[0.0, 1.0], [0.0, 0.0]]), 1.0, 2)
    with pytest.raises(ValueError, match="h0"):
        D.dyson_brownian_motion(np.full((2, 2), np.nan), 1.0, 2)
    with pytest.raises(ValueError, match="t_max"):
        D.dyson_brownian_motion(np.zeros((2, 2)), 0.0, 2)
    with pytest.raises(ValueError, match="n_steps"):
        D.dyson_brownian_motion(np.zeros((2, 2)), 1.0, 0)
    with pytest.raises(ValueError, match="theta"):
        D.dyson_brownian_motion(np.zeros((2, 2)), 1.0, 2, theta=-1.0)
    with pytest.raises(ValueError, match="s"):
        D.dyson_brownian_motion(np.zeros((2, 2)), 1.0, 2, s=0.0)
    with pytest.raises(ValueError, match="x0"):
        D.independent_brownian_motion(np.zeros((2, 2, 2)), 1.0, 2)
    with pytest.raises(ValueError, match="lam"):
        D.dyson_drift([1.0, 1.0])
    with pytest.raises(ValueError, match="x"):
        D.wishart_drift([1.0, 1.0], m=3)
    with pytest.raises(ValueError, match="x"):
        D.wishart_drift([0.0, 1.0], m=3)
    with pytest.raises(ValueError, match="m"):
        D.wishart_drift([1.0, 2.0, 3.0], m=2)
    with pytest.raises(ValueError, match="w0"):
        D.wishart_process(np.zeros(3), 1.0, 2)
    with pytest.raises(ValueError, match="t_max"):
        D.wishart_process(np.zeros((3, 2)), -1.0, 2)
    with pytest.raises(ValueError, match="theta"):
        D.coulomb_gas_log_weight([1.0, 2.0], theta=0.0)
    with pytest.raises(ValueError, match="s"):
        D.stationary_entry_variance(1.0, -1.0)
    with pytest.raises(ValueError, match="n"):
        D.stationary_density(0.0, 0)
