"""Tests of seqrmt.rmt: closed forms, invariants, checkpoints A1-A4 of the Part 1 spec."""

import numpy as np
import pytest
from scipy import integrate, stats

from seqrmt import rmt
from seqrmt import ConvergenceError
from seqrmt.runtime import single_threaded_blas


@pytest.fixture(autouse=True)
def _one_blas_thread():
    """Monte Carlo loops over small matrices run faster and steadier on one BLAS thread."""
    with single_threaded_blas():
        yield


# ---------------------------------------------------------------- Marchenko-Pastur
@pytest.mark.parametrize("ratio,var", [(0.1, 1.0), (0.5, 2.0), (1.0, 1.0), (2.0, 0.5), (4.0, 1.0)])
def test_mp_density_mass_and_moments(ratio, var):
    lo, hi = rmt.mp_edges(ratio, var)
    f = lambda x: rmt.mp_density(np.array([x]), ratio, var)[0]
    mass = integrate.quad(f, lo, hi, limit=200)[0]
    mean = integrate.quad(lambda x: x * f(x), lo, hi, limit=200)[0]
    second = integrate.quad(lambda x: x * x * f(x), lo, hi, limit=200)[0]
    assert mass + max(0.0, 1 - 1 / ratio) == pytest.approx(1.0, abs=1e-7)  # the atom at 0
    assert mean == pytest.approx(var, rel=1e-7)  # the atom sits at 0
    assert second == pytest.approx(var**2 * (1 + ratio), rel=1e-7)


def test_mp_edges_and_atom():
    assert rmt.mp_edges(0.25, 4.0) == pytest.approx((4 * 0.25, 4 * 2.25))
    assert float(rmt.mp_cdf(0.0, 0.5)) == 0.0  # no atom for ratio < 1
    assert float(rmt.mp_cdf(0.0, 4.0)) == pytest.approx(0.75)  # atom 1 - 1/ratio at 0
    assert float(rmt.mp_cdf(-1e-12, 4.0)) == 0.0


@pytest.mark.parametrize("ratio,var", [(0.3, 1.0), (1.0, 2.0), (2.5, 1.0)])
def test_mp_cdf_matches_quadrature_of_density(ratio, var):
    lo, hi = rmt.mp_edges(ratio, var)
    xs = np.linspace(lo - 0.2, hi + 0.2, 23)
    f = lambda x: rmt.mp_density(np.array([x]), ratio, var)[0]
    ref = [max(0.0, 1 - 1 / ratio) * (x >= 0) + integrate.quad(f, lo, min(max(x, lo), hi), limit=200)[0] for x in xs]
    np.testing.assert_allclose(rmt.mp_cdf(xs, ratio, var), ref, atol=1e-9)


@pytest.mark.parametrize("ratio,var", [(0.5, 1.0), (2.0, 1.0), (1.5, 3.0)])
def test_mp_stieltjes_solves_quadratic_and_branch(ratio, var):
    rng = np.random.default_rng(0)
    z = rng.normal(size=50) * 3 + 1j * rng.uniform(0.01, 3, size=50)
    g = rmt.mp_stieltjes(z, ratio, var)
    u, gg = z / var, g * var  # reduce to unit variance
    np.testing.assert_allclose(ratio * u * gg**2 - (1 - ratio - u) * gg + 1, 0, atol=1e-10)
    assert np.all(g.imag > 0)
    big = 1e6 + 1j
    assert rmt.mp_stieltjes(big, ratio, var) * big == pytest.approx(-1.0, rel=1e-4)


def test_mp_stieltjes_inversion_recovers_density_and_atom():
    x = np.linspace(0.05, 3.0, 200)
    f = rmt.mp_stieltjes(x + 1e-10j, 0.5).imag / np.pi  # the inversion formula
    np.testing.assert_allclose(f, rmt.mp_density(x, 0.5), atol=1e-4)
    eps = 1e-8  # the atom is the residue at 0: -z g(z) -> 1 - 1/ratio as z -> 0
    assert (-1j * eps * rmt.mp_stieltjes(1j * eps, 2.0)).real == pytest.approx(0.5, abs=1e-3)


def test_mp_law_against_simulation_ks():
    rng = np.random.default_rng(1)
    for d, n in [(400, 800), (800, 400)]:
        eigs = rmt.sample_covariance_eigs(d, n, rng)
        ks = rmt.ks_distance(eigs, lambda x: rmt.mp_cdf(x, d / n))
        assert ks < 10 / d  # bulk fluctuations are O(1/d); a wrong law gives O(1)
    # a wrong ratio is detected
    assert rmt.ks_distance(eigs, lambda x: rmt.mp_cdf(x, 1.5)) > 0.05


def test_sample_covariance_eigs_population():
    rng = np.random.default_rng(2)
    s = np.r_[np.ones(100), 4 * np.ones(100)]
    eigs = rmt.sample_covariance_eigs(200, 20000, rng, population_eigs=s)
    assert np.mean(eigs) == pytest.approx(2.5, rel=0.02)
    assert eigs.shape == (200,)


# ---------------------------------------------------------------- semicircle
def test_semicircle_density_and_stieltjes():
    for var in (1.0, 2.5):
        lo, hi = -2 * np.sqrt(var), 2 * np.sqrt(var)
        f = lambda x: rmt.semicircle_density(np.array([x]), var)[0]
        assert rmt.semicircle_density(np.array([lo - 1e-9, hi + 1e-9]), var).tolist() == [0.0, 0.0]
        assert integrate.quad(f, lo, hi)[0] == pytest.approx(1.0, abs=1e-9)
        assert integrate.quad(lambda x: x * x * f(x), lo, hi)[0] == pytest.approx(var, rel=1e-8)
        z = np.array([0.3 + 0.2j, -1 + 1j, 5 + 0.01j])
        g = rmt.semicircle_stieltjes(z, var)
        np.testing.assert_allclose(var * g**2 + z * g + 1, 0, atol=1e-12)
        assert np.all(g.imag > 0)


def test_semicircle_against_wigner_matrix():
    rng = np.random.default_rng(3)
    n = 600
    A = rng.standard_normal((n, n))
    eigs = np.linalg.eigvalsh((A + A.T) / np.sqrt(2 * n))
    assert rmt.ks_distance(eigs, rmt.semicircle_cdf) < 10 / n


def test_semicircle_cdf_matches_quadrature():
    for var in (1.0, 3.0):
        xs = np.linspace(-4, 4, 17)
        f = lambda t: rmt.semicircle_density(np.array([t]), var)[0]
        lo, hi = -2 * np.sqrt(var), 2 * np.sqrt(var)
        ref = [integrate.quad(f, lo, min(max(v, lo), hi))[0] for v in xs]
        np.testing.assert_allclose(rmt.semicircle_cdf(xs, var), ref, atol=1e-10)


# ---------------------------------------------------------------- Stieltjes tools
def test_empirical_stieltjes_and_ks_distance():
    eigs = np.array([0.0, 1.0, 3.0])
    z = np.array([1j, 2 + 0.5j])
    expected = np.mean(1 / (eigs[:, None] - z[None, :]), axis=0)
    np.testing.assert_allclose(rmt.empirical_stieltjes(eigs, z), expected)
    rng = np.random.default_rng(4)
    u = rng.uniform(size=300)
    assert rmt.ks_distance(u, stats.uniform.cdf) == pytest.approx(stats.kstest(u, "uniform").statistic, abs=1e-12)
    # atoms: a sample of exact zeros against a point mass at zero
    assert rmt.ks_distance(np.zeros(5), lambda x: (x >= 0).astype(float)) == 0.0


# ---------------------------------------------------------------- deterministic equivalents
def test_solve_delta_checkpoint_A1():
    s = np.r_[np.ones(200), 3 * np.ones(200)]
    delta = rmt.solve_delta(s, 800, 0.5)
    assert delta == pytest.approx(0.518817, abs=1e-6)
    tr_qbar = np.mean(1 / (s / (1 + delta) + 0.5))
    assert tr_qbar == pytest.approx(0.633629, abs=1e-6)


def test_solve_delta_monte_carlo_A1():
    rng = np.random.default_rng(5)
    s = np.r_[np.ones(200), 3 * np.ones(200)]
    vals = []
    for _ in range(30):
        eigs = rmt.sample_covariance_eigs(400, 800, rng, population_eigs=s)
        vals.append(np.mean(1 / (eigs + 0.5)))
    mc, se = np.mean(vals), np.std(vals, ddof=1) / np.sqrt(len(vals))
    assert abs(mc - 0.633629) < 5 * se + 1e-4  # spec: MC 0.633924 +- 0.00017; 1e-4 allows the O(1/d) finite-size bias


def test_solve_delta_matches_closed_form_and_fixed_point():
    eta, n = 0.5, 800
    gammas = np.array([0.01, 0.1, 1.0, 10.0])
    np.testing.assert_allclose(rmt.solve_delta(np.ones(400), n, gammas), rmt.ridge_delta(eta, gammas), rtol=1e-10)
    # independent computation: plain fixed-point iteration for a non-trivial spectrum
    s = np.linspace(0.2, 5, 300)
    delta = 1.0
    for _ in range(5000):
        delta = np.sum(s / (s / (1 + delta) + 0.3)) / n
    assert rmt.solve_delta(s, n, 0.3) == pytest.approx(delta, rel=1e-10)


def test_solve_delta_gives_the_equivalent_of_traces():
    """(1/d) Tr A Q against (1/d) Tr A Qbar, Qbar = (Sigma / (1 + delta) + z I)^-1 from solve_delta."""
    rng = np.random.default_rng(9)
    s = np.r_[np.ones(150), 3 * np.ones(150)]
    delta = rmt.solve_delta(s, 600, 0.5)
    qbar = 1 / (s / (1 + delta) + 0.5)
    assert delta == pytest.approx(np.sum(s * qbar) / 600, rel=1e-10)  # delta = (1/n) Tr Sigma Qbar
    A = 0.5 ** np.abs(np.subtract.outer(np.arange(300), np.arange(300)))  # Toeplitz, ||A|| <= 3
    vals = []
    for _ in range(20):
        X = np.sqrt(s)[:, None] * rng.standard_normal((300, 600))
        vals.append(np.trace(A @ np.linalg.inv(X @ X.T / 600 + 0.5 * np.eye(300))) / 300)
    th = np.mean(np.diag(A) * qbar)
    assert abs(np.mean(vals) - th) < 5 * np.std(vals, ddof=1) / np.sqrt(20) + 2e-3 * th
    # the two-level Sigma is not Sigma = I: a wrong delta (the white one) is rejected
    assert abs(np.mean(1 / (s / (1 + rmt.ridge_delta(0.5, 0.5)) + 0.5)) - np.mean(qbar)) > 0.01


def test_solve_delta_raises_on_nonconvergence():
    with pytest.raises(ConvergenceError):
        rmt.solve_delta(np.linspace(0.5, 3, 100), 50, 0.01, tol=1e-15, max_iter=1)


def test_deterministic_equivalent_stieltjes_identity_and_two_level():
    w = np.linspace(-0.5, 3.5, 50) + 1e-3j
    g = rmt.deterministic_equivalent_stieltjes(np.ones(400), 800, w)
    np.testing.assert_allclose(g, rmt.mp_stieltjes(w, 0.5), atol=1e-8)
    # two-level population against one large matrix, away from the axis
    rng = np.random.default_rng(6)
    s = np.r_[np.ones(400), 3 * np.ones(400)]
    eigs = rmt.sample_covariance_eigs(800, 1600, rng, population_eigs=s)
    w = np.linspace(0, 9, 30) + 0.3j
    g = rmt.deterministic_equivalent_stieltjes(s, 1600, w)
    assert np.max(np.abs(g - rmt.empirical_stieltjes(eigs, w))) < 0.01
    # density integrates to one
    x = np.linspace(0.0, 12, 6001)
    dens = rmt.deterministic_equivalent_stieltjes(s, 1600, x + 1e-6j).imag / np.pi
    assert np.trapezoid(dens, x) == pytest.approx(1.0, abs=2e-3)


@pytest.mark.parametrize(
    "eta,gamma,delta,tau,typo",
    [(0.5, 0.1, 0.74166, 1.72612, 1.35890), (0.5, 1.0, 0.28078, 0.17444, 0.5), (1.5, 0.5, 1.73205, 2.73205, 1.41421)],
)
def test_ridge_closed_form_checkpoints_A2_A4(eta, gamma, delta, tau, typo):
    assert rmt.ridge_delta(eta, gamma) == pytest.approx(delta, abs=1e-5)
    assert rmt.ridge_tau(eta, gamma) == pytest.approx(tau, abs=1e-5)
    assert rmt.ridge_delta(eta, gamma, variant="talk") == pytest.approx(typo, abs=1e-5)
    eq = rmt.ridge_equivalent(eta, gamma)
    assert eq.delta == pytest.approx(eta / eq.zeta, rel=1e-12)  # delta = eta / zeta


def test_ridge_tau_is_minus_derivative_and_typo_only_at_eta_one():
    for eta in (0.3, 1.0, 2.0):
        for gamma in (0.05, 1.0):
            h = 1e-6 * gamma
            fd = -(rmt.ridge_delta(eta, gamma + h) - rmt.ridge_delta(eta, gamma - h)) / (2 * h)
            assert rmt.ridge_tau(eta, gamma) == pytest.approx(fd, rel=1e-6)
    assert rmt.ridge_delta(1.0, 0.3, variant="talk") == pytest.approx(rmt.ridge_delta(1.0, 0.3), rel=1e-12)
    assert abs(rmt.ridge_delta(0.5, 0.3, variant="talk") - rmt.ridge_delta(0.5, 0.3)) > 0.1


def test_ridge_delta_stable_for_tiny_gamma():
    # eta < 1: delta -> eta / (1 - eta) as gamma -> 0 (no cancellation)
    assert rmt.ridge_delta(0.5, 1e-12) == pytest.approx(1.0, rel=1e-9)


@pytest.mark.parametrize("d,n,gamma", [(400, 800, 0.1), (600, 400, 0.5)])
def test_ridge_closed_form_monte_carlo(d, n, gamma):
    rng = np.random.default_rng(7)
    tq, tq2 = [], []
    for _ in range(20):
        eigs = rmt.sample_covariance_eigs(d, n, rng)
        tq.append(np.sum(1 / (eigs + gamma)) / n)
        tq2.append(np.sum(1 / (eigs + gamma) ** 2) / n)
    eq = rmt.ridge_equivalent(d / n, gamma)
    for vals, th in ((tq, eq.delta), (tq2, eq.tau)):
        mc, se = np.mean(vals), np.std(vals, ddof=1) / np.sqrt(len(vals))
        assert abs(mc - th) < 5 * se + 2e-3 * th  # spec A2/A4: O(1/d) finite-size bias below 0.1%


# ---------------------------------------------------------------- input validation
@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: rmt.mp_density(1.0, 0.0), "ratio"),
        (lambda: rmt.mp_density(1.0, -1.0), "ratio"),
        (lambda: rmt.mp_density(1.0, 0.5, var=0.0), "var"),
        (lambda: rmt.mp_density(np.nan, 0.5), "x"),
        (lambda: rmt.mp_edges(float("nan")), "ratio"),
        (lambda: rmt.mp_stieltjes(np.inf, 0.5), "z"),
        (lambda: rmt.mp_cdf([1.0], float("inf")), "ratio"),
        (lambda: rmt.semicircle_density(0.0, var=-1), "var"),
        (lambda: rmt.solve_delta([1.0, -1.0], 10, 0.1), "population_eigs"),
        (lambda: rmt.solve_delta([1.0], 0, 0.1), "n"),
        (lambda: rmt.solve_delta([1.0], 10, 0.0), "z"),
        (lambda: rmt.solve_delta([[1.0]], 10, 0.1), "population_eigs"),
        (lambda: rmt.ridge_delta(0.5, 0.0), "gamma"),
        (lambda: rmt.ridge_delta(-0.5, 1.0), "eta"),
        (lambda: rmt.ridge_delta(0.5, 1.0, variant="typo"), "variant"),
        (lambda: rmt.sample_covariance_eigs(0, 10), "d"),
        (lambda: rmt.sample_covariance_eigs(10, 5, population_eigs=np.ones(3)), "population_eigs"),
        (lambda: rmt.sample_covariance_eigs(3, 5, population_eigs=-np.ones(3)), "population_eigs"),
        (lambda: rmt.deterministic_equivalent_stieltjes([1.0], 10, [1.0 - 1j]), "w"),
    ],
)
def test_bad_input_raises_value_error_naming_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# ---------------------------------------------------------------- universality
def test_entry_laws_have_unit_variance_and_their_fourth_moments():
    """d = 1: the eigenvalue is (1/n) sum_i w_i^2, of mean 1 and variance (E w^4 - 1) / n, with
    E w^4 = 3 (Gaussian), 1 (signs: no fluctuation at all) and 9 (t_5 scaled to variance 1)."""
    rng = np.random.default_rng(5)
    n, draws = 50, 4000
    for entries, m4, tol in [("gaussian", 3.0, 0.15), ("rademacher", 1.0, 1e-12), ("student", 9.0, 0.5)]:
        lam = np.array([rmt.sample_covariance_eigs(1, n, rng, entries=entries)[0] for _ in range(draws)])
        assert abs(lam.mean() - 1.0) < 4 * np.sqrt(max(m4 - 1, 1e-12) / n / draws) + 1e-12
        assert n * lam.var() + 1 == pytest.approx(m4, rel=tol, abs=1e-9)


@pytest.mark.parametrize("entries", ["rademacher", "student"])
def test_mp_law_is_universal_ks(entries):
    """Non-Gaussian entries follow the same Marchenko-Pastur law: KS distance O(1/d)."""
    rng = np.random.default_rng(6)
    for d, n in [(400, 800), (600, 300)]:
        eigs = rmt.sample_covariance_eigs(d, n, rng, entries=entries)
        assert rmt.ks_distance(eigs, lambda x: rmt.mp_cdf(x, d / n)) < 10 / d
    # unit variance matters: a wrong variance is detected
    assert rmt.ks_distance(eigs, lambda x: rmt.mp_cdf(x, 2.0, var=1.2)) > 0.03


def test_sample_covariance_eigs_rejects_unknown_law():
    with pytest.raises(ValueError, match="entries"):
        rmt.sample_covariance_eigs(4, 8, 0, entries="cauchy")


