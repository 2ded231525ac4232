"""Tests of :func:`seqrmt.rmt.ridge_resolvent_de` (diagonal of the ridge deterministic equivalent)."""

import numpy as np
import pytest

from seqrmt import rmt


def _ar1(d, r):
    return r ** np.abs(np.subtract.outer(np.arange(d), np.arange(d)))


def test_isotropic_matches_closed_forms():
    d, n, lam = 300, 600, 0.2
    de = rmt.ridge_resolvent_de(np.eye(d), n, lam)
    eq = rmt.ridge_equivalent(d / n, lam)
    assert de.delta == pytest.approx(eq.delta, rel=1e-10)
    np.testing.assert_allclose(de.diag, 1 / eq.zeta, rtol=1e-10)
    # -d delta / d lambda = (1/n) Tr E Q^2 = tau
    assert -de.delta_prime == pytest.approx(eq.tau, rel=1e-9)


def test_diagonal_sigma_matches_solve_delta():
    s = np.linspace(0.5, 3.0, 50)
    de = rmt.ridge_resolvent_de(np.diag(s), 80, 0.3)
    delta = rmt.solve_delta(s, 80, 0.3)
    qbar = 1 / (s / (1 + delta) + 0.3)  # the diagonal of Qbar = (Sigma / (1 + delta) + lam I)^-1
    assert de.delta == pytest.approx(delta, rel=1e-10)
    np.testing.assert_allclose(de.diag, qbar, rtol=1e-10)
    np.testing.assert_allclose(de.diag_sigma, qbar**2 * s, rtol=1e-10)


def test_derivative_against_central_difference():
    Sig = _ar1(60, 0.7)
    lam, h = 0.4, 1e-6
    de = rmt.ridge_resolvent_de(Sig, 45, lam)
    up, dn = (rmt.ridge_resolvent_de(Sig, 45, lam * (1 + s * h)) for s in (1, -1))
    np.testing.assert_allclose(de.diag_prime, (up.diag - dn.diag) / (2 * lam * h), rtol=1e-6)
    assert de.delta_prime == pytest.approx((up.delta - dn.delta) / (2 * lam * h), rel=1e-6)
    # freezing delta (the pitfall) gives a different derivative
    assert not np.allclose(de.diag_prime, -(de.diag**2), rtol=1e-3)


def test_vectorised_over_lambda():
    Sig = _ar1(20, 0.5)
    lams = np.array([0.1, 1.0, 3.0])
    de = rmt.ridge_resolvent_de(Sig, 30, lams)
    assert de.diag.shape == (3, 20) and de.zeta.shape == (3,)
    for i, lam in enumerate(lams):
        one = rmt.ridge_resolvent_de(Sig, 30, lam)
        np.testing.assert_allclose(de.diag[i], one.diag, rtol=1e-12)
        assert one.zeta == pytest.approx(de.zeta[i], rel=1e-12)
        assert 0 < one.zeta < 1


def test_monte_carlo_quadratic_forms():
    """R_kk and [R Sigma R]_kk against diag(Rbar) and diag(Rbar Sigma Rbar)/(1 - zeta)."""
    d, n, lam = 200, 300, 0.5
    Sig = _ar1(d, 0.6)
    L = np.linalg.cholesky(Sig)
    de = rmt.ridge_resolvent_de(Sig, n, lam)
    rng = np.random.default_rng(0)
    diag_r, diag_rsr = [], []
    for _ in range(5):
        X = rng.standard_normal((n, d)) @ L.T
        R = np.linalg.inv(X.T @ X / n + lam * np.eye(d))
        diag_r.append(np.diag(R).mean())
        diag_rsr.append(np.diag(R @ Sig @ R).mean())
    assert np.mean(diag_r) == pytest.approx(de.diag.mean(), rel=5e-3)
    assert np.mean(diag_rsr) == pytest.approx(de.diag_sigma.mean() / (1 - de.zeta), rel=1e-2)


@pytest.mark.parametrize("bad, name", [
    (dict(Sigma=np.ones((2, 3))), "Sigma"),
    (dict(Sigma=np.array([[1.0, 0.5], [0.0, 1.0]])), "Sigma"),
    (dict(Sigma=-np.eye(3)), "Sigma"),
    (dict(lam=0.0), "lam"),
    (dict(n=0), "n"),
])
def test_validation(bad, name):
    kw = dict(Sigma=np.eye(3), n=5, lam=0.1) | bad
    with pytest.raises(ValueError, match=name):
        rmt.ridge_resolvent_de(**kw)
