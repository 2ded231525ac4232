"""The max-margin classifier of a two-class Gaussian mixture (``seqrmt.ntp.mixture_svm_asymptotics``),
against the max-min formula solved another way, Gardner's capacity, and large cvxpy SVMs."""

import numpy as np
import pytest
from scipy import optimize, stats

from seqrmt import ConvergenceError
from seqrmt.ntp import mixture_svm_asymptotics


def max_over_rho(r, delta):
    """kappa* = max_rho [r rho + t(rho)] with delta E(t - H)_+^2 = 1 - rho^2 (prop-p3-svm-cgmt as stated),
    by quadrature for the moment, a root in t and a bounded search in rho: the notebook's route."""
    def m2(t):
        return stats.norm.expect(lambda h: (t - h) ** 2, ub=t)

    def t_of(rho):
        return optimize.brentq(lambda t: m2(t) - (1 - rho**2) / delta, -30, 30, xtol=1e-13)

    res = optimize.minimize_scalar(lambda rho: -(r * rho + t_of(rho)), bounds=(-0.9999, 0.9999),
                                   method="bounded", options={"xatol": 1e-9})
    return -res.fun, res.x


@pytest.mark.parametrize("r, delta", [(2.0, 0.25), (2.0, 1.0), (1.0, 0.5), (0.5, 3.0), (3.0, 4.0)])
def test_root_equals_the_max_min_formula(r, delta):
    kappa, rho, err = mixture_svm_asymptotics(r, delta)
    kappa2, rho2 = max_over_rho(r, delta)
    assert kappa == pytest.approx(kappa2, abs=1e-8)
    assert rho == pytest.approx(rho2, abs=1e-4)  # a flat maximum: rho is known less well than kappa
    assert err == pytest.approx(stats.norm.cdf(-r * rho), rel=1e-12)


def test_book_values():
    """The values that Chapter 3.2 prints for r = 2 (review: 2.468, 1.885, 1.418, 1.024; errors 0.1035 ... 0.0616)."""
    out = np.array([mixture_svm_asymptotics(2.0, d) for d in (0.25, 0.5, 1.0, 2.0)])
    np.testing.assert_allclose(out[:, 0], [2.4680, 1.8854, 1.4180, 1.0244], atol=5e-5)
    np.testing.assert_allclose(out[:, 2], [0.1035, 0.0823, 0.0697, 0.0616], atol=5e-5)


def test_gardner_capacity_without_signal():
    """r = 0: the perceptron capacity, margin zero at delta = 2 and delta E(kappa - H)_+^2 = 1 elsewhere."""
    assert abs(mixture_svm_asymptotics(0.0, 2.0)[0]) < 1e-12
    for delta in (0.5, 1.0, 4.0):
        kappa, rho, err = mixture_svm_asymptotics(0.0, delta)
        assert rho == 0.0 and err == 0.5
        assert delta * stats.norm.expect(lambda h: (kappa - h) ** 2, ub=kappa) == pytest.approx(1.0, abs=1e-10)
        assert (kappa > 0) == (delta < 2)


def test_monotone_and_limits():
    deltas = np.geomspace(0.05, 5, 12)
    out = np.array([mixture_svm_asymptotics(1.5, d) for d in deltas])
    assert np.all(np.diff(out[:, 0]) < 0)  # more samples, smaller margin
    assert np.all(np.diff(out[:, 1]) > 0) and np.all(out[:, 1] < 1)  # and better alignment with mu
    assert np.all(np.diff(out[:, 2]) < 0) and np.all(out[:, 2] > stats.norm.cdf(-1.5))  # above Bayes
    # very negative roots (huge delta) stay accurate: the Mills-ratio branch
    kappa, rho, _ = mixture_svm_asymptotics(0.0, 1e6)
    assert 1e6 * stats.norm.expect(lambda h: (kappa - h) ** 2, ub=kappa) == pytest.approx(1.0, rel=1e-6)


def test_large_svms_agree():
    """Hard-margin SVMs solved by cvxpy at d = 400: margin and overlap within 4 SE plus the finite-d bias.

    The simulated margins lie about 1 % above the limit at d = 200 (review U3); at d = 400 the
    allowance below is 1 %.
    """
    cp = pytest.importorskip("cvxpy")
    r, delta, d, reps = 2.0, 1.0, 400, 6
    rng = np.random.default_rng(0)
    kap, rho = [], []
    for _ in range(reps):
        n = int(delta * d)
        y = rng.choice([-1.0, 1.0], n)
        X = rng.standard_normal((n, d))
        X[:, 0] += r * y
        w = cp.Variable(d)
        cp.Problem(cp.Minimize(cp.sum_squares(w)), [cp.multiply(y, X @ w) >= 1]).solve(solver="CLARABEL")
        kap.append(1 / np.linalg.norm(w.value))
        rho.append(w.value[0] / np.linalg.norm(w.value))
    k_th, r_th, _ = mixture_svm_asymptotics(r, delta)
    for sim, th in ((kap, k_th), (rho, r_th)):
        se = np.std(sim, ddof=1) / np.sqrt(reps)
        assert abs(np.mean(sim) - th) < 4 * se + 0.01 * th


def test_errors():
    with pytest.raises(ValueError, match="delta"):
        mixture_svm_asymptotics(1.0, 0.0)
    with pytest.raises(ValueError, match="r"):
        mixture_svm_asymptotics(-1.0, 1.0)
    with pytest.raises(ValueError, match="max_iter"):
        mixture_svm_asymptotics(1.0, 1.0, max_iter=0)
    with pytest.raises(ConvergenceError):
        mixture_svm_asymptotics(1.0, 1.0, max_iter=2)
