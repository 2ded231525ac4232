"""Matrices under SGD-like noise (seqrmt.dyson): Dyson Brownian motion and the 2x2 teacher-student laws.

The sampler of Dyson Brownian motion is checked against its exact entry variances, the Ito drift
of the eigenvalues and the stationary Coulomb gas; the teacher-student ensemble against an
independent per-sample implementation (checkpoint D-1 of the Part 4 spec); its width and Binder
cumulant laws against their limits, their leading order and Monte Carlo.
"""

import numpy as np
import pytest
from scipy import stats

from seqrmt import dyson, rmt
from seqrmt.runtime import single_threaded_blas


@pytest.fixture(autouse=True)
def _one_blas_thread():
    with single_threaded_blas():
        yield


# ---------------------------------------------------------------- Dyson Brownian motion
def test_paths_shape_sorted_start_and_streams():
    h0 = np.diag([0.0, 0.1, 0.2, 3.0])
    t, e = dyson.dyson_brownian_motion(h0, 2.0, 50, rng=0, theta=0.5, s=0.3)
    assert t.shape == (51,) and e.shape == (51, 4) and t[-1] == pytest.approx(2.0)
    np.testing.assert_allclose(e[0], np.diag(h0))
    assert np.all(np.diff(e, axis=1) > 0)
    # matrix i draws from the i-th child: its path does not depend on the batch
    _, eb = dyson.dyson_brownian_motion(np.stack([h0, 2 * h0, h0]), 2.0, 50, rng=0, theta=0.5, s=0.3)
    np.testing.assert_array_equal(eb[:, 0], e)
    with pytest.raises(ValueError, match="symmetric"):
        dyson.dyson_brownian_motion(np.triu(np.ones((3, 3))), 1.0, 2)


def test_brownian_entries_and_2x2_two_mode_law():
    s, T, m = 0.7, 1.5, 20_000
    _, e = dyson.dyson_brownian_motion(np.zeros((m, 2, 2)), T, 3, 1, theta=0.0, s=s)
    # the trace is the sum of the diagonal entries, each of variance 2 s^2 T
    assert e[-1].sum(axis=1).var() == pytest.approx(4 * s**2 * T, rel=5 * np.sqrt(2 / m))
    assert dyson.binder_cumulant(e[-1]) == pytest.approx(-4 / 27, abs=0.03)
    assert e[-1].var() == pytest.approx(1.5 * 2 * s**2 * T, rel=0.05)  # two-mode variance 3/2 sigma^2


def test_ito_drift_of_the_eigenvalues_is_dysons():
    lam, theta, s, dt, m = np.array([-1.0, 0.2, 0.5, 2.0]), 1.0, 1.0, 2e-3, 200_000
    _, e = dyson.dyson_brownian_motion(np.broadcast_to(np.diag(lam), (m, 4, 4)), dt, 1, 3, theta, s)
    inc = (e[1] - e[0]) / dt
    gaps = lam[:, None] - lam[None, :]
    drift = -theta * lam + s**2 * np.sum(np.where(gaps != 0, 1 / np.where(gaps != 0, gaps, 1), 0), axis=1)
    se = inc.std(axis=0) / np.sqrt(m)
    assert np.all(np.abs(inc.mean(axis=0) - drift) < 5 * se + 0.1)  # step bias about 0.07 at the closest pair
    assert abs(inc.mean(axis=0)[1] + theta * lam[1]) > 2.0  # can fail: without the repulsion


def test_stationary_state_is_the_coulomb_gas():
    n, theta, s = 30, 2.0, 0.5
    _, e = dyson.dyson_brownian_motion(np.zeros((400, n, n)), 4.0, 4, 2, theta=theta, s=s)  # e^{-8} relaxed
    v = s**2 / (2 * theta)  # GOE of off-diagonal variance s^2 / 2 theta
    assert np.mean(e[-1] ** 2) == pytest.approx((n + 1) * v, rel=0.02)
    assert rmt.ks_distance(e[-1], lambda x: rmt.semicircle_cdf(x, n * v)) < 0.02


# ---------------------------------------------------------------- the teacher-student ensemble
def test_checkpoint_D1():
    f = dyson.teacher_student_ensemble(0.1, 16, 0.1, n_seeds=2000, rng=2024, n_steps=400)
    assert f.shape == (2000, 2) and np.all(f[:, 0] >= f[:, 1])
    x0, sigma = dyson.fit_two_mode(f)
    S = f[:, 0] - f[:, 1]
    assert sigma == pytest.approx(0.00795, rel=0.03) and x0 == pytest.approx(2.000, abs=5e-4)
    assert S.mean() == pytest.approx(np.sqrt(np.pi) * sigma, rel=0.03)
    assert stats.kstest(S / S.mean(), lambda s: 1 - np.exp(-np.pi * s**2 / 4)).pvalue > 0.01


def test_ensemble_equals_a_per_sample_implementation_in_law():
    """Explicit inputs and noise matrices, quenched batches; the library draws batch statistics."""
    rng = np.random.default_rng(11)
    n, nb, B, lr, eps = 3000, 50, 4, 0.2, 0.1
    x = rng.normal(size=(n, nb, B, 2))
    m = rng.normal(scale=eps, size=(n, nb, B, 2, 2))
    a = np.tril(m) + np.swapaxes(np.tril(m, -1), -1, -2)
    a[..., [0, 1], [0, 1]] *= np.sqrt(2)  # GOE: diagonal variance 2 eps^2
    C, abar = np.einsum("snbi,snbj->snij", x, x) / B, a.mean(axis=2)
    W = rng.normal(scale=0.1, size=(n, 2, 2))
    for step in range(200):  # four epochs over the same 50 batches
        W = W + lr * ((2 * np.eye(2) - W) @ C[:, step % nb] + abar[:, step % nb])
    ref = np.linalg.svd(W, compute_uv=False)
    lib = dyson.teacher_student_ensemble(lr, B, eps, n_seeds=n, rng=12, n_steps=200, n_batches=nb)
    s_ref, s_lib = np.sqrt(2 * ref.var() / 3), np.sqrt(2 * lib.var() / 3)
    assert s_lib == pytest.approx(s_ref, abs=4 * 1.6 / np.sqrt(n) * s_ref)
    assert lib.mean() == pytest.approx(ref.mean(), abs=4 * s_ref / np.sqrt(n))
    # the same seed gives the same students; a student does not depend on the ensemble's size
    np.testing.assert_array_equal(lib[:5], dyson.teacher_student_ensemble(lr, B, eps, 5, 12, 200, nb))


@pytest.mark.parametrize("lr,batch,eps", [(0.4, 16, 0.1), (0.2, 4, 0.05)])
def test_exact_width_against_monte_carlo(lr, batch, eps):
    n = 8000
    f = dyson.teacher_student_ensemble(lr, batch, eps, n_seeds=n, rng=int(1000 * lr + batch), n_steps=200)
    sigma, exact = np.sqrt(2 * f.var() / 3), dyson.teacher_student_width(lr, batch, eps)
    assert sigma == pytest.approx(exact, abs=4 * 1.1 / np.sqrt(n) * sigma)
    assert abs(sigma - dyson.teacher_student_width(lr, batch, eps, "leading")) > 4 * 1.1 / np.sqrt(n) * sigma


def test_width_limits():
    big = 10**7  # batch -> infinity at fixed lr eps^2 / batch: no Wishart fluctuations, exact -> AR(1)
    eps = 0.1 * np.sqrt(big / 16)
    assert dyson.teacher_student_width(0.3, big, eps) == pytest.approx(dyson.teacher_student_width(0.3, big, eps, "ar1"),
                                                                       rel=1e-5)
    assert dyson.teacher_student_width(0.1, 16, 0.1, "leading") == dyson.teacher_student_width(0.2, 32, 0.1, "leading")
    assert dyson.teacher_student_width(1e-4, 16, 0.1, "ar1") == pytest.approx(
        dyson.teacher_student_width(1e-4, 16, 0.1, "leading"), rel=1e-4)
    with pytest.raises(ValueError, match="lr"):
        dyson.teacher_student_width(2.0, 16, 0.1)


def test_binder_cumulant_limits_and_leading_order():
    # without multiplicative noise (large batch at fixed lr / batch, or lr -> 0) the two-mode value
    assert dyson.teacher_student_binder(0.1, 10**6) == pytest.approx(-4 / 27, abs=1e-5)
    assert dyson.teacher_student_binder(1e-4, 16) == pytest.approx(-4 / 27, abs=1e-4)
    # leading order -4/27 + (46/27) lr / batch, from the Gaussian scale mixture of the recursion
    for lr, batch in [(0.01, 16), (0.02, 64), (0.01, 4)]:
        shift = dyson.teacher_student_binder(lr, batch) + 4 / 27
        assert shift == pytest.approx(46 / 27 * lr / batch, rel=0.05)


def test_binder_cumulant_against_monte_carlo():
    """At (0.2, 4) the law lies 0.07 above -4/27: 50,000 students resolve both facts."""
    f = np.concatenate([dyson.teacher_student_ensemble(0.2, 4, 0.1, n_seeds=10_000, rng=k, n_steps=200)
                        for k in range(5)])
    u4 = [dyson.binder_cumulant(b) for b in np.array_split(f, 25)]
    m, se = np.mean(u4), np.std(u4, ddof=1) / 5
    assert m == pytest.approx(dyson.teacher_student_binder(0.2, 4), abs=4 * se)
    assert m + 4 / 27 > 6 * se  # can fail: the two-mode value is rejected
