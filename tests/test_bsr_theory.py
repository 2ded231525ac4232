"""The laws of Chapter 2 in seqrmt.bsr: thresholds, ridge, Bayes-optimal error, free entropy,
low-rank limit (Part 2 spec, checkpoints B1, B2, B5, B6)."""

import numpy as np
import pytest

from seqrmt import ConvergenceError
from seqrmt import bsr as th
from seqrmt import bsr as fp
from seqrmt.bsr import sample_bsr
from seqrmt.bsr._theory import potential
from seqrmt.runtime import single_threaded_blas


def _ridge(X, y, lam):
    """Ridge on the vectorised tokens, in the dual form (lambda = 0: min-norm interpolator)."""
    n, L, d = X.shape
    F = X.transpose(0, 2, 1).reshape(n, d * L) / np.sqrt(d * L)
    return (F.T @ np.linalg.solve(F @ F.T + lam * np.eye(n), y)).reshape(d, L)


def _F(zeta, alpha, beta, rho, delta):
    return alpha * np.asarray(zeta) - delta - np.array(
        [fp.denoising_mmse(beta, rho, z) for z in np.atleast_1d(zeta)])


# ------------------------------------------------------------------------ thresholds (B1, B2)
@pytest.mark.parametrize(
    "beta,rho,expected",
    [(1, 0.2, 0.36), (1, 0.5, 0.75), (2, 0.2, 0.28), (2, 0.5, 0.625), (5, 0.2, 0.232),
     (0.5, 0.4, 0.88), (1, 2, 1.0)],
)
def test_alpha_pr_B1(beta, rho, expected):
    assert th.alpha_pr(beta, rho) == pytest.approx(expected, abs=1e-14)


def test_alpha_pr_is_the_count_of_degrees_of_freedom():
    # alpha_PR = r(d + L - r)/(dL) for rho = r/d, beta = L/d
    assert th.alpha_pr(9 / 6, 2 / 6) == pytest.approx(2 * 13 / 54)


def test_alpha_pr_limits():
    assert th.alpha_pr(np.inf, 0.3) == 0.3 and th.alpha_pr(np.inf, 3.0) == 1.0
    assert th.alpha_pr(1e8, 0.3) == pytest.approx(0.3, abs=1e-7)


@pytest.mark.parametrize(
    "beta,rho,expected",
    [(1, 0.2, 0.5716899), (1, 0.5, 0.9054173), (2, 0.5, 0.8284921), (2, 0.2, 0.4752778)],
)
def test_alpha_mnne_B2(beta, rho, expected):
    """Spec B2 to 1e-6 (here to the 7 digits given, i.e. 5e-8)."""
    assert abs(th.alpha_mnne(beta, rho) - expected) < 5e-8


def test_alpha_mnne_low_rank_limit():
    """Spec 2.5: alpha_bar_MNNE = 2.906 at rho = 1e-4, beta = 1 (slowly -> 3)."""
    abar = th.alpha_bar(th.alpha_mnne(1.0, 1e-4), 1.0, 1e-4)
    assert abs(abar - 2.906) < 1e-3


def test_alpha_mnne_above_alpha_pr_and_transposition():
    for beta, rho in [(1, 0.1), (2, 0.3), (5, 0.5)]:
        assert th.alpha_pr(beta, rho) < th.alpha_mnne(beta, rho) < 1
    assert th.alpha_mnne(0.5, 0.1) == pytest.approx(th.alpha_mnne(2.0, 0.2), abs=1e-12)


# --------------------------------------------------------------------------------- ridge (B6)
@pytest.mark.parametrize(
    "alpha,delta,expected",
    [(0.5, 0.1, 0.574166), (1, 0.1, 0.270156), (0.3, 0.1, 0.735890), (0.2, 0.1, 0.821699),
     (0.3, 0.5, 0.814143)],
)
def test_ridge_error_B6(alpha, delta, expected):
    assert abs(th.ridge_error(alpha, delta) - expected) < 5e-7
    # the general-lambda formula at lambda = Delta reduces to the optimal one
    assert abs(th.ridge_error(alpha, delta, lam=delta) - expected) < 5e-7


def test_ridge_noiseless():
    a = np.array([0.1, 0.5, 0.9, 1.5])
    np.testing.assert_allclose(th.ridge_error(a, 0.0), np.maximum(0, 1 - a), atol=1e-12)
    np.testing.assert_allclose(th.ridge_error(a, 0.0, lam=0.0), np.maximum(0, 1 - a), atol=1e-12)


def test_ridge_lambda_is_optimal_at_delta():
    lams = np.linspace(0.0, 1.0, 41)
    errs = [th.ridge_error(0.6, 0.2, lam=lam) for lam in lams]
    assert abs(lams[int(np.argmin(errs))] - 0.2) < 0.03


def test_ridge_monte_carlo():
    """Ridge on vectorised BSR data (d = L = 30, n = 450, lambda = 0.5) against the formula."""
    rng = np.random.default_rng(7)
    d, L, r, n, delta, lam = 30, 30, 6, 450, 0.1, 0.5
    errs = []
    with single_threaded_blas():
        for _ in range(4):
            data = sample_bsr(n, d, L, r, delta, rng)
            errs.append(np.mean((_ridge(data.X, data.y, lam) - data.S) ** 2))
    se = np.std(errs, ddof=1) / 2
    assert abs(np.mean(errs) - th.ridge_error(n / (d * L), delta, lam=lam)) < 4 * se + 0.01


# ------------------------------------------------------------------------ Bayes-optimal (B5)
@pytest.mark.parametrize(
    "alpha,beta,rho,delta,zeta,mmse",
    [(0.5, 1, 0.5, 0, 0.702937, 0.351469), (0.25, 1, 0.2, 0, 2.070129, 0.517532),
     (0.3, 2, 0.2, 0.1, 1.496869, 0.349061), (0.1, 5, 0.2, 0, 7.774259, 0.777426),
     (0.5, 1, 1, 0, 0.911347, 0.455674), (0.3, 1, 0.2, 0, 1.158131, 0.347439),
     (0.2, 1, 0.2, 0, 3.300452, 0.660090)],
)
def test_bayes_optimal_B5(alpha, beta, rho, delta, zeta, mmse):
    """Spec B5: MMSE and test error to +-1e-4; zeta = (Delta + MMSE)/alpha to 1e-4/alpha.

    (At beta = 1 our quadrature differs from the spec's by up to 4e-5 in MMSE: the spec's absolute
    epsilon = 1e-10 biases the density for x^2 < 1e-10; ours has mass error < 1e-10.)
    """
    res = th.bayes_optimal(alpha, beta, rho, delta)
    assert abs(res.zeta - zeta) < 1e-4 / alpha
    assert abs(res.mmse - mmse) < 1e-4
    assert abs(res.test_error - (delta + mmse)) < 1e-4


def test_bayes_optimal_is_fixed_point_of_state_evolution():
    """Independent computation: V <- mmse((Delta + V)/alpha) from V = 1 converges to MMSE_S."""
    for alpha, beta, rho, delta in [(0.3, 2, 0.2, 0.1), (0.25, 1, 0.2, 0.0)]:
        V = 1.0
        for _ in range(400):
            V = fp.denoising_mmse(beta, rho, (delta + V) / alpha)
        assert abs(V - th.bayes_optimal(alpha, beta, rho, delta).mmse) < 1e-6


def test_bayes_optimal_perfect_recovery_and_continuity():
    a_pr = th.alpha_pr(1.0, 0.2)
    assert th.bayes_optimal(a_pr, 1.0, 0.2).zeta == 0.0
    below = th.bayes_optimal(a_pr - 0.01, 1.0, 0.2).mmse
    assert 0 < below < 0.1
    assert th.bayes_optimal(a_pr + 0.1, 1.0, 0.2, delta=0.1).mmse > 0


def test_bayes_optimal_transposition_and_beta_inf():
    r1 = th.bayes_optimal(0.3, 0.5, 0.1, 0.1)
    r2 = th.bayes_optimal(0.3, 2.0, 0.2, 0.1)
    assert r1.zeta == r2.zeta and r1.beta == 0.5
    gaps = [abs(th.bayes_optimal(0.15, b, 0.2).mmse - th.bayes_optimal(0.15, np.inf, 0.2).mmse)
            for b in (100.0, 1000.0)]
    assert gaps[1] < gaps[0] < 0.02
    assert th.bayes_optimal(0.2, np.inf, 0.2).mmse == 0.0  # alpha_PR -> rho


def test_bayes_optimal_curve_matches_pointwise():
    alphas = np.array([0.2, 0.33, 0.9])
    for beta, rho, delta in [(1.0, 0.2, 0.0), (np.inf, 0.2, 0.1)]:
        curve = th.bayes_optimal_curve(alphas, beta, rho, delta)
        pts = [th.bayes_optimal(a, beta, rho, delta).mmse for a in alphas]
        np.testing.assert_allclose(curve.mmse, pts, atol=1e-8)
        assert np.all(np.diff(curve.mmse) <= 1e-12)  # more data, lower error


def test_single_sign_change_of_F():
    """Spec 2.3: F(zeta) = alpha zeta - Delta - mmse(zeta) changes sign once (sampled cases)."""
    zs = np.geomspace(1e-4, 30, 40)
    for alpha, beta, rho, delta in [(0.3, 1, 0.2, 0), (0.5, 2, 0.5, 0.1), (0.1, 5, 1.0, 0.1)]:
        F = _F(zs, alpha, beta, rho, delta)
        assert np.count_nonzero(np.diff(np.sign(F)) != 0) == 1


# ------------------------------------------------------------------------ free entropy
def test_free_entropy_gaussian_prior_closed_form():
    # Gaussian prior: mmse(z) = z/(1+z) and psi(q) = (q - log(1+q))/2 (I-MMSE, exact)
    z = np.geomspace(1e-3, 50, 40)
    mm = lambda s: s / (1 + s)  # noqa: E731
    for alpha, delta in [(0.5, 0.0), (0.3, 0.1)]:
        f = potential(z, alpha, delta, mm, 300)
        exact = (0.5 * (1 / z - np.log1p(1 / z)) - (1 - mm(z)) / (2 * z)
                 - 0.5 * alpha * np.log(delta + mm(z)))
        assert np.max(np.abs(f - exact) / np.maximum(1, np.abs(exact))) < 1e-6


def test_free_entropy_derivative_matches_stationarity_formula():
    # f'(z) = -mmse'(z) F(z) / (2 z (Delta + mmse(z))), checked by central differences
    alpha, beta, rho, delta = 0.3, 2.0, 0.2, 0.1
    for z in (0.3, 1.0, 3.0):
        h = 1e-3 * z
        num = (th.bo_free_entropy(z + h, alpha, beta, rho, delta, n_grid=600)
               - th.bo_free_entropy(z - h, alpha, beta, rho, delta, n_grid=600)) / (2 * h)
        dm = (fp.denoising_mmse(beta, rho, z + h) - fp.denoising_mmse(beta, rho, z - h)) / (2 * h)
        m = fp.denoising_mmse(beta, rho, z)
        pred = -dm * _F(z, alpha, beta, rho, delta)[0] / (2 * z * (delta + m))
        assert num == pytest.approx(pred, rel=0.02, abs=1e-4)


@pytest.mark.parametrize("alpha,beta,rho,delta", [(0.3, 2.0, 0.2, 0.1), (0.2, 1.0, 0.2, 0.0),
                                                  (0.1, np.inf, 0.2, 0.0)])
def test_free_entropy_single_maximum_at_bayes_optimal_zeta(alpha, beta, rho, delta):
    z_star = th.bayes_optimal(alpha, beta, rho, delta).zeta
    z = np.geomspace(1e-3, 30, 120)
    f = th.bo_free_entropy(z, alpha, beta, rho, delta)
    k = int(np.argmax(f))
    assert 0 < k < z.size - 1
    assert z[k - 1] < z_star < z[k + 1]
    df = np.diff(f)
    assert np.all(df[:k - 1] > 0) and np.all(df[k + 1:] < 0)  # unimodal


def test_free_entropy_validation():
    with pytest.raises(ValueError, match="zeta"):
        th.bo_free_entropy(0.0, 0.5, 1.0, 0.5)
    with pytest.raises(ValueError, match="n_grid"):
        th.bo_free_entropy(0.5, 0.5, 1.0, 0.5, n_grid=5)


# ------------------------------------------------------------------------ soft-thresholding risk
@pytest.mark.parametrize("beta,rho", [(1.0, 0.2), (4.0, 0.5), (0.5, 0.1)])
def test_svt_risk_no_threshold_is_full_noise(beta, rho):
    # Lambda = 0: eta(Y) = Y, error = ||sqrt(zeta) Z||^2/(zeta dL) = 1 exactly
    assert th.svt_risk(0.0, beta, rho) == pytest.approx(1.0, abs=1e-8)


@pytest.mark.parametrize("beta,rho", [(1.0, 0.2), (1.0, 0.5), (4.0, 0.3)])
def test_svt_risk_minimum_is_alpha_mnne(beta, rho):
    lam = np.linspace(0.0, 2.5, 501)
    risk = th.svt_risk(lam, beta, rho)
    a = th.alpha_mnne(beta, rho)
    assert risk.min() >= a - 1e-9
    assert risk.min() == pytest.approx(a, abs=1e-4)


def test_svt_risk_monte_carlo_matches_theory():
    """Soft thresholding of S + sqrt(zeta) Z at a large signal, d = L = 120, r = 24."""
    rng = np.random.default_rng(3)
    lam, d, r, zeta = np.array([0.0, 0.5, 0.9, 1.5]), 120, 24, 1e-2
    risks = []
    for _ in range(6):
        S = 1e3 * rng.standard_normal((d, r)) @ rng.standard_normal((r, d)) / np.sqrt(r)
        u, s, vt = np.linalg.svd(S + np.sqrt(zeta) * rng.standard_normal((d, d)))
        tau = lam * np.sqrt(zeta * (d - r))
        risks.append([np.sum(((u * np.maximum(s - t, 0)) @ vt - S) ** 2) / (zeta * d * d)
                      for t in tau])
    # one trial has SD ~ 0.01 here; 0.02 is > 5 SE, while dropping e.g. the shift term
    # rho Lambda^2 (1 - rho b) would move the value at Lambda = 0.9 by 0.13
    assert np.all(np.abs(np.mean(risks, axis=0) - th.svt_risk(lam, 1.0, 0.2)) < 0.02)


def test_svt_risk_validation():
    with pytest.raises(ValueError, match="rho"):
        th.svt_risk(0.5, 1.0, 1.0)
    with pytest.raises(ValueError, match="lam"):
        th.svt_risk(-0.1, 1.0, 0.2)


def test_convergence_error():
    with pytest.raises(ConvergenceError):
        th.bayes_optimal(0.3, 1.0, 0.2, max_iter=1)


# ------------------------------------------------------------------------------- low rank
def test_low_rank_closed_form_beta1():
    """beta = 1, Delta = 0: MMSE = 1 - (2 abar - 1)^2 on [1/2, 1], 1 below, 0 above."""
    for abar in (0.3, 0.5, 0.6, 0.75, 0.9, 1.0, 1.2):
        expected = 1.0 if abar < 0.5 else max(0.0, 1 - (2 * abar - 1) ** 2)
        assert abs(th.low_rank_bayes_optimal(abar, 1.0)[1] - expected) < 1e-9


def test_low_rank_transposition_symmetry():
    """g_a and g_b swap under beta -> 1/beta, so q is invariant (as is alpha_bar)."""
    q1, q2 = th.low_rank_bayes_optimal(0.8, 0.5, 0.1)[0], th.low_rank_bayes_optimal(0.8, 2.0, 0.1)[0]
    assert q1 == pytest.approx(q2, abs=1e-12) and q1 > 0


def test_low_rank_weak_recovery_threshold():
    for beta, delta in [(2.0, 0.0), (5.0, 0.1)]:
        aw = (1 + delta) * np.sqrt(beta) / (1 + beta)  # the outlier (BBP) condition at q = 0
        assert th.low_rank_bayes_optimal(0.98 * aw, beta, delta)[0] == 0.0
        assert th.low_rank_bayes_optimal(1.05 * aw, beta, delta)[0] > 0.0


def test_low_rank_limit_of_finite_rho():
    """At fixed abar the finite-rho MMSE moves monotonically towards the low-rank value."""
    lim = th.low_rank_bayes_optimal(0.8, 1.0)[1]
    gaps = [abs(th.bayes_optimal(0.8 / th.alpha_bar(1.0, 1.0, rho), 1.0, rho).mmse - lim)
            for rho in (0.05, 0.02, 0.01)]
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 0.03


def test_alpha_bar():
    a = th.alpha_bar(0.3, 2.0, 0.2)
    assert a == pytest.approx(0.3 * 2 / (0.2 * 3))
    assert th.alpha_bar(0.3, 0.5, 0.1) == pytest.approx(a)  # transposition invariant
    assert th.alpha_bar(0.3, np.inf, 0.2) == pytest.approx(1.5)


# ------------------------------------------------------------------------------ validation
@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: th.bayes_optimal(0.0, 1, 0.2), "alpha"),
        (lambda: th.bayes_optimal(-1.0, 1, 0.2), "alpha"),
        (lambda: th.bayes_optimal(0.3, 0, 0.2), "beta"),
        (lambda: th.bayes_optimal(0.3, 1, 0.0), "rho"),
        (lambda: th.bayes_optimal(0.3, 1, 0.2, -0.1), "delta"),
        (lambda: th.bayes_optimal(np.nan, 1, 0.2), "alpha"),
        (lambda: th.bayes_optimal_curve([0.1, np.nan], 1, 0.2), "alphas"),
        (lambda: th.bayes_optimal_curve(np.ones((2, 2)), 1, 0.2), "alphas"),
        (lambda: th.alpha_pr(-1, 0.2), "beta"),
        (lambda: th.alpha_pr(1, np.nan), "rho"),
        (lambda: th.alpha_mnne(1, 0.0), "rho"),
        (lambda: th.alpha_mnne(0.0, 0.2), "beta"),
        (lambda: th.ridge_error(0.0, 0.1), "alpha"),
        (lambda: th.ridge_error(0.5, -0.1), "delta"),
        (lambda: th.ridge_error(0.5, 0.1, lam=-1.0), "lam"),
        (lambda: th.low_rank_bayes_optimal(0.0, 1.0), "abar"),
        (lambda: th.low_rank_bayes_optimal(0.5, -1.0), "beta"),
        (lambda: th.alpha_bar(0.3, 1.0, 0.0), "rho"),
        (lambda: th.alpha_bar(-0.3, 1.0, 0.2), "alpha"),
        (lambda: th.low_rank_bayes_optimal(0.5, 1.0, -0.1), "delta"),
    ],
)
def test_value_errors_name_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()
