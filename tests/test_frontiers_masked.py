"""The laws of Chapter 5.1 (seqrmt.frontiers.masked): the deterministic equivalents of the masked ridge
errors and the BBP transition of the masked predictor, against closed forms, the spec's [V]
checkpoints (section 1.5) and an independent simulation of the predictor."""

import numpy as np
import pytest

from seqrmt import rmt
from seqrmt.frontiers import masked as M

D = 200


def _ar1(d, r):
    return r ** np.abs(np.subtract.outer(np.arange(d), np.arange(d)))


def _draw(Sigma, n, seed):
    L = np.linalg.cholesky(Sigma)
    return np.random.default_rng(seed).standard_normal((n, Sigma.shape[0])) @ L.T


def _errors(X, lam, Sigma):
    """Exact E_gen and E_train of I - R Diag(R)^-1, from the d ridge fits solved one by one."""
    n, d = X.shape
    A = np.zeros((d, d))
    for k in range(d):
        rest = np.delete(np.arange(d), k)
        Xr = X[:, rest]
        A[rest, k] = np.linalg.solve(Xr.T @ Xr / n + lam * np.eye(d - 1), Xr.T @ X[:, k] / n)
    resid = np.eye(d) - A  # column k: the residual filter of position k
    return np.trace(resid.T @ Sigma @ resid) / d, np.sum((X @ resid) ** 2) / (n * d)


def _errors_fast(X, lam, Sigma):
    """The same from the closed form (checked against _errors below)."""
    n, d = X.shape
    R = np.linalg.inv(X.T @ X / n + lam * np.eye(d))
    D_ = np.diag(R)
    return np.mean(np.diag(R @ Sigma @ R) / D_**2), np.mean((D_ - lam * np.sum(R * R, 0)) / D_**2)


def test_closed_form_errors_equal_the_columnwise_ridge():
    X = _draw(_ar1(12, 0.5), 40, 3)
    np.testing.assert_allclose(_errors_fast(X, 0.3, _ar1(12, 0.5)), _errors(X, 0.3, _ar1(12, 0.5)),
                               rtol=1e-10)


# (Sigma, n, lam) -> E_gen, E_train theory of the spec's table 1.5
THEORY = [
    ("I", 400, 0.1, 1.5690, 0.5173), ("I", 400, 1.0, 1.1063, 0.6744),
    ("I", 150, 0.1, 2.0870, 0.0580), ("ar1", 400, 0.1, 0.6858, 0.2618),
    ("ar1", 400, 1.0, 0.6285, 0.4219), ("ar1", 150, 0.1, 0.9858, 0.0530),
]


def _sigma(name):
    return np.eye(D) if name == "I" else _ar1(D, 0.6)


@pytest.mark.parametrize("name, n, lam, gen, train", THEORY)
def test_theory_checkpoints(name, n, lam, gen, train):
    th = M.masked_ridge_theory(_sigma(name), n, lam)
    assert th.test_error == pytest.approx(gen, abs=6e-5)
    assert th.train_error == pytest.approx(train, abs=6e-5)
    if name == "I":  # the isotropic corollary: m2/m^2 and (m - lam m2)/m^2
        m, m2 = rmt.mp_resolvent_moments(lam, D / n)
        assert m2 / m**2 == pytest.approx(th.test_error, rel=1e-9)
        assert (m - lam * m2) / m**2 == pytest.approx(th.train_error, rel=1e-9)


def test_arrays_of_ridges_match_scalars():
    lams = np.array([[0.1, 1.0], [3.0, 0.02]])
    th = M.masked_ridge_theory(_ar1(50, 0.4), 70, lams)
    assert th.test_error.shape == (2, 2)
    one = M.masked_ridge_theory(_ar1(50, 0.4), 70, 3.0)
    assert th.train_error[1, 0] == pytest.approx(one.train_error, rel=1e-12)
    assert th.delta[1, 0] == pytest.approx(one.delta, rel=1e-12)


@pytest.mark.parametrize("name, n, lam, gen, train", THEORY)
def test_monte_carlo_checkpoints(name, n, lam, gen, train):
    """10 seeds at d = 200: |E_gen MC - th| <= 0.01 and |E_train MC - th| <= 0.005 (spec 1.5)."""
    Sig = _sigma(name)
    th = M.masked_ridge_theory(Sig, n, lam)
    errs = np.array([_errors_fast(_draw(Sig, n, s), lam, Sig) for s in range(10)])
    assert errs[:, 0].mean() == pytest.approx(th.test_error, abs=0.01)
    assert errs[:, 1].mean() == pytest.approx(th.train_error, abs=0.005)


def test_theory_tends_to_the_population_optimum():
    r = 0.6
    expected = ((D - 2) * (1 - r**2) / (1 + r**2) + 2 * (1 - r**2)) / D  # E* = mean 1/[Sigma^-1]_kk
    assert np.mean(1 / np.diag(np.linalg.inv(_ar1(D, r)))) == pytest.approx(expected, rel=1e-10)
    th = M.masked_ridge_theory(_ar1(D, r), 10**6, 1e-4)
    assert th.test_error == pytest.approx(expected, rel=2e-3)


def test_isotropic_test_error_above_one_and_decreasing():
    lams = np.geomspace(1e-3, 1e3, 60)
    for gamma in (0.3, 1.0, 2.5):
        th = M.masked_ridge_theory(np.eye(40), int(40 / gamma), lams)
        assert np.all(th.test_error > 1) and np.all(np.diff(th.test_error) < 0)
        assert th.test_error[-1] == pytest.approx(1, abs=1e-2)
        assert np.all(th.train_error < th.test_error)


def _top(X, lam):
    """Top eigenvalue and unit right eigenvector of I - R Diag(R)^-1 (via numpy's eig)."""
    n, d = X.shape
    R = np.linalg.inv(X.T @ X / n + lam * np.eye(d))
    ev, V = np.linalg.eig(np.eye(d) - R / np.diag(R))
    i = np.argmax(ev.real)
    v = V[:, i].real
    return ev[i].real, v / np.linalg.norm(v)


@pytest.mark.parametrize("theta, top, overlap", [(0.3, 0.6464, 0.0), (1.0, 0.6551, 1 / 3),
                                                 (2.0, 0.7160, 0.7)])
def test_spiked_checkpoints(theta, top, overlap):
    """Spec 1.5 spiked table (n = 400, lam = 0.5): theory, and MC top eigenvalue within 0.01."""
    t, o = M.spiked_masked_top(theta, D / 400, 0.5)
    assert t == pytest.approx(top, abs=6e-5) and o == pytest.approx(overlap, abs=1e-10)
    rng = np.random.default_rng(7)
    u = rng.standard_normal(D)
    u /= np.linalg.norm(u)
    Sig = np.eye(D) + theta * np.outer(u, u)
    tops, ovl = zip(*[(ev, (v @ u) ** 2) for ev, v in (_top(_draw(Sig, 400, s), 0.5) for s in range(6))])
    if theta > np.sqrt(0.5):
        assert np.mean(tops) == pytest.approx(top, abs=0.01)
        assert np.mean(ovl) == pytest.approx(overlap, abs=0.06)
    else:
        assert np.mean(tops) < top + 0.01 and np.mean(ovl) < 0.05


def test_spiked_top_is_continuous_at_the_threshold_and_increasing():
    gamma, lam = 0.5, 0.5
    th = np.sqrt(gamma) * np.array([1 - 1e-9, 1 + 1e-9])
    top, ov = M.spiked_masked_top(th, gamma, lam)
    assert top[1] - top[0] < 1e-8 and ov[1] < 1e-8
    grid = np.linspace(0.0, 4.0, 81)
    top, ov = M.spiked_masked_top(grid, gamma, lam)
    assert np.all(np.diff(top) >= 0) and np.all(np.diff(ov) >= 0)


@pytest.mark.parametrize("call, name", [
    (lambda: M.spiked_masked_top(-1.0, 0.5, 0.1), "theta"),
    (lambda: M.spiked_masked_top(1.0, 0.0, 0.1), "gamma"),
    (lambda: M.masked_ridge_theory(np.eye(3), 5, -0.1), "lam"),
    (lambda: M.masked_ridge_theory(np.ones((3, 2)), 5, 0.1), "Sigma"),
])
def test_validation(call, name):
    with pytest.raises(ValueError, match=name):
        call()
