"""Universality laws of seqrmt.dyson: surmise, two-mode density, Binder cumulants, GOE samplers, spacings.

Closed forms are checked by quadrature (checkpoints D-2, D-2b of the Part 4 spec), samplers against
exact moments, and every statistical test is shown able to fail on a slightly wrong input.
"""

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.linalg import eigvalsh_tridiagonal

from seqrmt import dyson, rmt
from seqrmt.runtime import single_threaded_blas


@pytest.fixture(autouse=True)
def _one_blas_thread():
    with single_threaded_blas():
        yield


def surmise_cdf(s):
    return 1 - np.exp(-np.pi * np.clip(s, 0, None) ** 2 / 4)


# ---------------------------------------------------------------- D-2: the two-mode density
def test_two_mode_density_checkpoint_D2():
    x = np.linspace(2.0 - 14 * 0.3, 2.0 + 14 * 0.3, 200_001)
    f = dyson.two_mode_density(x, 2.0, 0.3)
    mass, mean = np.trapezoid(f, x), np.trapezoid(x * f, x)
    m2, m4 = np.trapezoid((x - mean) ** 2 * f, x), np.trapezoid((x - mean) ** 4 * f, x)
    assert mass == pytest.approx(1.0, abs=1e-9) and mean == pytest.approx(2.0, abs=1e-9)
    assert m2 == pytest.approx(0.135, abs=1e-9)  # 3/2 sigma^2
    assert m4 == pytest.approx(0.046575, abs=1e-9)  # 23/4 sigma^4
    assert m4 / (3 * m2**2) - 1 == pytest.approx(-4 / 27, abs=1e-9)
    assert float(dyson.two_mode_density(2.0, 2.0, 0.3)) == pytest.approx(1 / (2 * np.sqrt(np.pi) * 0.3), abs=1e-12)


@pytest.mark.parametrize("x0,sigma", [(0.0, 1.0), (-3.0, 0.05)])
def test_two_mode_density_is_the_marginal_of_the_pair_law(x0, sigma):
    """Independent computation: integrate |l1 - l2| exp(...) over l2 and normalise."""
    def joint(l1, l2):
        return abs(l1 - l2) * np.exp(-((l1 - x0) ** 2 + (l2 - x0) ** 2) / (2 * sigma**2))
    lo, hi = x0 - 12 * sigma, x0 + 12 * sigma
    z = integrate.dblquad(lambda l2, l1: joint(l1, l2), lo, hi, lo, hi, epsabs=1e-13)[0]
    for u in [-1.7, -0.4, 0.0, 0.9, 2.5]:
        xi = x0 + u * sigma
        marg = integrate.quad(lambda l2: joint(xi, l2), lo, hi, points=[xi], epsabs=1e-14)[0]
        assert float(dyson.two_mode_density(xi, x0, sigma)) == pytest.approx(marg / z, rel=1e-7)


def test_two_mode_density_is_the_law_of_2x2_goe_eigenvalues():
    sigma = 0.3
    eigs = dyson.goe_eigs(2, 20_000, 7, scale=sigma**2 / 2) + 2.0  # sigma^2 = 2 v
    grid = np.linspace(2 - 10 * sigma, 2 + 10 * sigma, 40_001)
    cdf = integrate.cumulative_trapezoid(dyson.two_mode_density(grid, 2.0, sigma), grid, initial=0)
    law = lambda t: np.interp(t, grid, cdf)  # noqa: E731
    assert rmt.ks_distance(eigs, law) < 1.63 / np.sqrt(20_000) * 1.5  # pairs are dependent: widened
    assert rmt.ks_distance(eigs[:, 0], law) > 0.1  # can fail: one eigenvalue alone is not rho
    assert rmt.ks_distance(1.1 * (eigs - 2) + 2, law) > 0.02  # and a 10 % wrong width is seen


def test_fit_two_mode_recovers_the_parameters():
    eigs = dyson.goe_eigs(2, 4000, 3, scale=0.02**2 / 2) + 2.0
    x0, s = dyson.fit_two_mode(eigs)
    assert s == pytest.approx(0.02, rel=0.06)  # relative SE about 1.2 %
    assert x0 == pytest.approx(2.0, abs=5 * 0.02 / np.sqrt(4000))
    assert dyson.fit_two_mode(1.2 * (eigs - 2) + 2)[1] == pytest.approx(1.2 * s, rel=1e-6)  # equivariant


# ---------------------------------------------------------------- D-2b: surmise and Binder cumulants
def test_wigner_surmise_checkpoint_D2b():
    f = dyson.wigner_surmise
    moments = [integrate.quad(lambda s: s**k * f(s), 0, np.inf, epsabs=1e-13)[0] for k in (0, 1, 2)]
    np.testing.assert_allclose(moments, [1.0, 1.0, 4 / np.pi], atol=1e-9)
    s = np.linspace(0, 3, 31)
    np.testing.assert_allclose(surmise_cdf(s), [integrate.quad(f, 0, v)[0] for v in s], atol=1e-12)
    assert float(f(-1.0)) == 0.0


def test_binder_cumulant_of_samples():
    rng = np.random.default_rng(1)
    n = 200_000
    assert dyson.binder_cumulant(rng.normal(size=n)) == pytest.approx(0.0, abs=4 * np.sqrt(24 / n) / 3)
    assert dyson.binder_cumulant(rng.uniform(size=n)) == pytest.approx(-0.4, abs=0.01)
    assert dyson.binder_cumulant([1.0, -1.0]) == pytest.approx(-2 / 3)  # the lower bound: two atoms
    assert dyson.binder_cumulant(3.0 * rng.normal(size=10) + 5) == pytest.approx(
        dyson.binder_cumulant(rng.normal(size=10)), abs=2)  # finite, any location and scale
    with pytest.raises(ValueError, match="samples"):
        dyson.binder_cumulant([1.0, 1.0])


def test_semicircle_binder_cumulant_is_minus_one_third():
    m = [integrate.quad(lambda t: t**k * np.sqrt(4 - t * t) / (2 * np.pi), -2, 2, epsabs=1e-14)[0] for k in (2, 4)]
    assert m[1] / (3 * m[0] ** 2) - 1 == pytest.approx(-1 / 3, abs=1e-9)
    assert dyson.goe_binder_cumulant(10**6) == pytest.approx(-1 / 3, abs=1e-5)  # the many-mode limit


@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_goe_binder_cumulant_closed_form_and_monte_carlo(n):
    assert dyson.goe_binder_cumulant(n) == pytest.approx(-(n - 1) * (n + 2) / (3 * (n + 1) ** 2), abs=1e-15)
    e = dyson.goe_eigs(n, 120_000 // n, 10 + n)
    assert dyson.binder_cumulant(e) == pytest.approx(dyson.goe_binder_cumulant(n), abs=0.012)  # SE <= 0.004
    # the moments behind it: E tr H^2 = n (n + 1), E tr H^4 = 2 n^3 + 5 n^2 + 5 n (v = 1)
    assert np.mean(np.sum(e**4, axis=1)) == pytest.approx(2 * n**3 + 5 * n**2 + 5 * n, rel=0.03)
    np.testing.assert_allclose(dyson.goe_binder_cumulant(np.array([1, 2])), [0.0, -4 / 27])


# ---------------------------------------------------------------- the GOE samplers
def _trace_moment_z(eigs, v=1.0):
    n = eigs.shape[1]
    exact = {2: n * (n + 1) * v, 4: (2 * n**3 + 5 * n**2 + 5 * n) * v**2}
    return np.array([(np.sum(eigs**k, 1).mean() - val) / (np.sum(eigs**k, 1).std(ddof=1) / np.sqrt(len(eigs)))
                     for k, val in exact.items()])


@pytest.mark.parametrize("n, m", [(5, 20_000), (20, 5000), (100, 1000)])
def test_tridiagonal_model_has_the_exact_trace_moments(n, m):
    eigs = dyson.goe_eigs(n, m, rng=n, method="tridiagonal")
    assert eigs.shape == (m, n) and np.all(np.diff(eigs, axis=1) >= 0)
    assert np.all(np.abs(_trace_moment_z(eigs)) < 4)
    # the test rejects a tridiagonal model with one chi degree of freedom too many
    rng = np.random.default_rng(n)
    a, b = np.sqrt(2.0) * rng.normal(size=(m, n)), np.sqrt(rng.chisquare(np.arange(n, 1, -1), size=(m, n - 1)))
    wrong = np.array([eigvalsh_tridiagonal(a[i], b[i]) for i in range(m)])
    assert np.max(np.abs(_trace_moment_z(wrong))) > 4


@pytest.mark.parametrize("n, m", [(5, 4000), (20, 1000)])
def test_tridiagonal_and_dense_samplers_agree(n, m):
    tri = dyson.goe_eigs(n, m, rng=1, method="tridiagonal").ravel()
    dense = dyson.goe_eigs(n, m, rng=2, method="dense").ravel()
    assert stats.ks_2samp(tri, dense).pvalue > 1e-3
    assert stats.ks_2samp(dyson.goe_eigs(n, m, 1, scale=1.25, method="tridiagonal").ravel(), dense).pvalue < 1e-3


def test_goe_eigs_auto_method_size_one_and_streams():
    for n in (2, 5):
        np.testing.assert_array_equal(dyson.goe_eigs(n, 7, 0), dyson.goe_eigs(n, 7, 0, method="dense"))
    np.testing.assert_array_equal(dyson.goe_eigs(8, 7, 0), dyson.goe_eigs(8, 7, 0, method="tridiagonal"))
    e = dyson.goe_eigs(1, 50_000, 0, scale=0.3)
    assert np.var(e) == pytest.approx(0.6, rel=0.03)  # diagonal variance 2 v
    # matrix i draws from the i-th child: the first k matrices do not depend on the count
    np.testing.assert_array_equal(dyson.goe_eigs(10, 3, 5), dyson.goe_eigs(10, 8, 5)[:3])
    big = dyson.goe_eigs(3000, 1, 0)  # O(n) memory
    assert np.sum(big**2) / (3000 * 3001) == pytest.approx(1.0, abs=0.01)
    with pytest.raises(ValueError, match="method"):
        dyson.goe_eigs(3, 2, 0, method="qr")


# ---------------------------------------------------------------- spacings
def test_unfolded_spacings_by_hand():
    e = np.array([[0.0, 1.0, 3.0, 6.0, 10.0], [4.0, 3.0, 2.0, 1.0, 0.0]])
    s = dyson.unfolded_spacings(e, lambda x: x / 10, drop_edges=1)
    np.testing.assert_allclose(s, np.array([1.0, 1.5, 0.5, 0.5]) / 0.875)  # u = 5 x / 10, one dropped per end
    with pytest.raises(ValueError, match="drop_edges"):
        dyson.unfolded_spacings(e, lambda x: x, drop_edges=2)
    with pytest.raises(ValueError, match="cdf"):
        dyson.unfolded_spacings(e, lambda x: np.full(x.shape, np.nan))


def test_unfolded_goe_spacings_follow_the_surmise_and_poisson_levels_do_not():
    n = 60
    e = dyson.goe_eigs(n, 300, 5, scale=1.0 / n)  # semicircle of variance 1
    s = dyson.unfolded_spacings(e, rmt.semicircle_cdf, drop_edges=5)
    assert rmt.ks_distance(s, surmise_cdf) < 0.02  # Gaudin vs the 2 x 2 surmise: about 0.005
    assert np.mean(s**2) == pytest.approx(1.28, abs=0.03)
    poisson = np.sort(np.random.default_rng(5).uniform(size=(300, n)), axis=1)
    assert rmt.ks_distance(dyson.unfolded_spacings(poisson, lambda x: x, 5), surmise_cdf) > 0.2


def test_spacing_ratios_of_goe_3x3_poisson_and_loe_matrices():
    np.testing.assert_allclose(dyson.spacing_ratios([0.0, 1.0, 3.0, 3.5]), [0.5, 0.25])
    r3 = dyson.spacing_ratios(dyson.goe_eigs(3, 40_000, 21))  # 3 x 3: the surmise mean 4 - 2 sqrt 3 is exact
    assert r3.mean() == pytest.approx(4 - 2 * np.sqrt(3), abs=4 * 0.22 / np.sqrt(r3.size))
    p = dyson.spacing_ratios(np.random.default_rng(6).uniform(size=(2000, 40)))
    assert p.mean() == pytest.approx(2 * np.log(2) - 1, abs=4 * 0.25 / np.sqrt(p.size))
    # D-6c: Gram matrices of 64 x 16 Gaussian matrices (LOE), unfolded with the MP law
    W = np.random.default_rng(8).normal(size=(4000, 64, 16)) / 8
    eigs = np.linalg.eigvalsh(np.swapaxes(W, 1, 2) @ W)
    s = dyson.unfolded_spacings(eigs, lambda x: rmt.mp_cdf(x, 0.25), drop_edges=1)
    assert np.mean(s**2) == pytest.approx(1.284, abs=0.02)
    assert rmt.ks_distance(s, surmise_cdf) == pytest.approx(0.008, abs=0.01)
    assert dyson.spacing_ratios(eigs).mean() == pytest.approx(0.531, abs=0.01)
