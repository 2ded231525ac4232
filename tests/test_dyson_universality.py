"""Tests of seqrmt.dyson.universality: checkpoints D-2, D-2b (closed forms by quadrature) and D-6c-style spacings."""


import numpy as np
import pytest
from scipy import integrate

from seqrmt import rmt
from seqrmt.dyson import universality as U
from seqrmt.runtime import single_threaded_blas


@pytest.fixture(autouse=True)
def _one_blas_thread():
    with single_threaded_blas():
        yield


def _grid_moments(x0, sigma):
    x = np.linspace(x0 - 14 * sigma, x0 + 14 * sigma, 200_001)
    f = U.two_mode_density(x, x0, sigma)
    mass = np.trapezoid(f, x)
    mean = np.trapezoid(x * f, x)
    u = x - mean
    return x, f, mass, mean, np.trapezoid(u**2 * f, x), np.trapezoid(u**4 * f, x)


# ---------------------------------------------------------------- D-2: two-mode density
def test_two_mode_density_checkpoint_D2():
    x, f, mass, mean, m2, m4 = _grid_moments(2.0, 0.3)
    assert mass == pytest.approx(1.0, abs=1e-9)
    assert mean == pytest.approx(2.0, abs=1e-9)
    assert m2 == pytest.approx(0.135, abs=1e-9)  # 3/2 sigma^2
    assert m4 == pytest.approx(0.046575, abs=1e-9)  # 23/4 sigma^4
    assert m4 / (3 * m2**2) - 1 == pytest.approx(-4 / 27, abs=1e-9)
    assert U.binder_cumulant_density(x, f) == pytest.approx(-4 / 27, abs=1e-9)
    assert float(U.two_mode_density(2.0, 2.0, 0.3)) == pytest.approx(0.9403160, abs=1e-7)
    assert float(U.two_mode_density(2.0, 2.0, 0.3)) == pytest.approx(1 / (2 * np.sqrt(np.pi) * 0.3), abs=1e-12)


@pytest.mark.parametrize("x0,sigma", [(0.0, 1.0), (-3.0, 0.05)])
def test_two_mode_density_is_marginal_of_pair_law(x0, sigma):
    """Independent computation: integrate |l1-l2| exp(-...) over l2 numerically and normalise."""
    def joint(l1, l2):
        return abs(l1 - l2) * np.exp(-((l1 - x0) ** 2 + (l2 - x0) ** 2) / (2 * sigma**2))
    z = integrate.dblquad(lambda l2, l1: joint(l1, l2), x0 - 12 * sigma, x0 + 12 * sigma,
                          x0 - 12 * sigma, x0 + 12 * sigma, epsabs=1e-13)[0]
    for u in [-1.7, -0.4, 0.0, 0.9, 2.5]:
        xi = x0 + u * sigma
        marg = integrate.quad(lambda l2: joint(xi, l2), x0 - 12 * sigma, x0 + 12 * sigma,
                              points=[xi], epsabs=1e-14)[0]
        assert float(U.two_mode_density(xi, x0, sigma)) == pytest.approx(marg / z, rel=1e-7)


def test_two_mode_density_matches_2x2_goe_histogram():
    """Monte Carlo: KS distance of 2x2 GOE eigenvalues (scale v, sigma^2 = 2v) to the density's CDF."""
    rng = np.random.default_rng(7)
    sigma = 0.3
    eigs = U.goe_eigs(2, 20_000, rng, scale=sigma**2 / 2) + 2.0
    grid = np.linspace(2 - 10 * sigma, 2 + 10 * sigma, 40_001)
    cdf = integrate.cumulative_trapezoid(U.two_mode_density(grid, 2.0, sigma), grid, initial=0)
    ks = rmt.ks_distance(eigs[:, 0], lambda t: np.interp(t, grid, cdf))  # lower eigenvalue alone is not rho
    pooled = rmt.ks_distance(eigs, lambda t: np.interp(t, grid, cdf))
    assert pooled < 1.63 / np.sqrt(20_000) * 1.5  # pairs are dependent; 1% KS level, widened
    assert ks > 0.1  # the test can fail: one eigenvalue alone does not follow rho
    U4 = U.binder_cumulant(eigs)
    assert U4 == pytest.approx(-4 / 27, abs=0.02)


def test_two_mode_spacing_law_and_mean():
    sigma = 0.37
    m0 = integrate.quad(lambda S: U.two_mode_spacing_density(S, sigma), 0, np.inf)[0]
    m1 = integrate.quad(lambda S: S * U.two_mode_spacing_density(S, sigma), 0, np.inf)[0]
    assert m0 == pytest.approx(1.0, abs=1e-9)
    assert m1 == pytest.approx(np.sqrt(np.pi) * sigma, abs=1e-9)  # D-2b: <S> = sqrt(pi) sigma
    # S / <S> follows the surmise exactly
    s = np.linspace(0.01, 4, 50)
    np.testing.assert_allclose(m1 * U.two_mode_spacing_density(m1 * s, sigma), U.wigner_surmise(s), rtol=1e-12)


def test_fit_two_mode_recovers_parameters():
    rng = np.random.default_rng(3)
    sigma = 0.02
    eigs = U.goe_eigs(2, 4000, rng, scale=sigma**2 / 2) + 2.0
    x0_fit, s_fit = U.fit_two_mode(eigs)
    # relative SE of a width from 8000 correlated samples is about 1.2%; 5 SE
    assert s_fit == pytest.approx(sigma, rel=0.06)
    assert x0_fit == pytest.approx(2.0, abs=5 * sigma / np.sqrt(4000))


def test_two_mode_width_estimate_and_error():
    """The reported SE is the spread of the estimate over independent ensembles (brute force)."""
    rng = np.random.default_rng(4)
    sig = 0.3
    est = np.array([U.two_mode_width(U.goe_eigs(2, 500, rng, scale=sig**2 / 2)) for _ in range(300)])
    assert est[:, 0].mean() == pytest.approx(sig, abs=4 * est[:, 0].std() / np.sqrt(300))
    assert est[:, 1].mean() == pytest.approx(est[:, 0].std(), rel=0.15)  # SE of the std over 300 runs ~4%


# ---------------------------------------------------------------- D-2b: surmise and semicircle
def test_wigner_surmise_checkpoint_D2b():
    mass = integrate.quad(U.wigner_surmise, 0, np.inf, epsabs=1e-13)[0]
    mean = integrate.quad(lambda s: s * U.wigner_surmise(s), 0, np.inf, epsabs=1e-13)[0]
    m2 = integrate.quad(lambda s: s * s * U.wigner_surmise(s), 0, np.inf, epsabs=1e-13)[0]
    assert mass == pytest.approx(1.0, abs=1e-9)
    assert mean == pytest.approx(1.0, abs=1e-9)
    assert m2 == pytest.approx(4 / np.pi, abs=1e-9)
    assert 4 / np.pi == pytest.approx(1.2732395, abs=1e-7)
    s = np.linspace(0, 3, 31)
    ref = [integrate.quad(U.wigner_surmise, 0, v)[0] for v in s]
    np.testing.assert_allclose(U.wigner_surmise_cdf(s), ref, atol=1e-12)


def test_binder_semicircle_and_gaussian_checkpoint_D2b():
    x = np.linspace(-2, 2, 400_001)
    assert U.binder_cumulant_density(x, rmt.semicircle_density(x)) == pytest.approx(-1 / 3, abs=1e-6)
    # exact quadrature of the semicircle moments (the square-root edge limits the trapezoid rule above)
    m2 = integrate.quad(lambda t: t**2 * rmt.semicircle_density(np.array([t]))[0], -2, 2, epsabs=1e-14)[0]
    m4 = integrate.quad(lambda t: t**4 * rmt.semicircle_density(np.array([t]))[0], -2, 2, epsabs=1e-14)[0]
    assert m4 / (3 * m2**2) - 1 == pytest.approx(-1 / 3, abs=1e-9)
    g = np.linspace(-12, 12, 200_001)
    assert U.binder_cumulant_density(g, np.exp(-g**2 / 2)) == pytest.approx(0.0, abs=1e-9)


def test_binder_cumulant_samples():
    rng = np.random.default_rng(1)
    n = 200_000
    # SE of U4 for a Gaussian sample is sqrt(24/n)/3 ~ 0.0037
    assert U.binder_cumulant(rng.normal(size=n)) == pytest.approx(0.0, abs=4 * np.sqrt(24 / n) / 3)
    assert U.binder_cumulant(rng.uniform(size=n)) == pytest.approx(1.8 / 3 - 1, abs=0.01)  # uniform: -2/5
    assert U.binder_cumulant([1.0, -1.0]) == pytest.approx(-2 / 3)


@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_goe_binder_cumulant_closed_form(n):
    assert U.goe_binder_cumulant(n) == pytest.approx(-(n - 1) * (n + 2) / (3 * (n + 1) ** 2))
    rng = np.random.default_rng(10 + n)
    e = U.goe_eigs(n, 120_000 // n, rng)
    assert U.binder_cumulant(e) == pytest.approx(U.goe_binder_cumulant(n), abs=0.012)  # SE <= 0.004
    # the moments behind it: E tr H^2 = n(n+1), E tr H^4 = 2n^3 + 5n^2 + 5n (v = 1)
    assert np.mean(np.sum(e**4, axis=1)) == pytest.approx(2 * n**3 + 5 * n**2 + 5 * n, rel=0.03)
    assert U.goe_binder_cumulant(2) == pytest.approx(-4 / 27, abs=1e-15)
    np.testing.assert_allclose(U.goe_binder_cumulant(np.array([1, 2])), [0.0, -4 / 27])


# ---------------------------------------------------------------- spacings
def test_unfolded_spacings_shapes_and_mean():
    e = np.array([[0.0, 1.0, 3.0, 6.0, 10.0], [4.0, 3.0, 2.0, 1.0, 0.0]])
    s = U.unfolded_spacings(e, lambda x: x / 10, drop_edges=1)
    # u = N F(x) with N = 5: row 0 -> spacings 0.5, 1, 1.5, 2; row 1 (sorted) -> 0.5 each; drop one per end
    np.testing.assert_allclose(s, np.array([1.0, 1.5, 0.5, 0.5]) / 0.875)
    assert s.mean() == pytest.approx(1.0)
    assert U.unfolded_spacings(e[0], lambda x: x, drop_edges=0).size == 4


def test_unfolded_goe_spacings_follow_surmise():
    rng = np.random.default_rng(5)
    n = 60
    e = U.goe_eigs(n, 300, rng, scale=1.0 / n)  # semicircle of variance 1
    s = U.unfolded_spacings(e, rmt.semicircle_cdf, drop_edges=5)
    ks = rmt.ks_distance(s, U.wigner_surmise_cdf)
    assert ks < 0.02  # large-n GOE differs from the 2x2 surmise by ~0.005 in KS distance
    assert np.mean(s**2) == pytest.approx(1.28, abs=0.03)
    # the test can fail: independent (Poisson) levels give exponential spacings
    poisson = np.sort(rng.uniform(size=(300, n)), axis=1)
    assert rmt.ks_distance(U.unfolded_spacings(poisson, lambda x: x, 5), U.wigner_surmise_cdf) > 0.2


def test_spacing_ratios_goe_and_poisson():
    rng = np.random.default_rng(6)
    e = U.goe_eigs(40, 500, rng)
    r = U.spacing_ratios(e)
    assert r.shape == (500 * 38,)
    assert np.all((r >= 0) & (r <= 1))
    # SE of the mean ratio ~ 0.22 / sqrt(19000) ~ 0.0016
    assert r.mean() == pytest.approx(U.GOE_MEAN_SPACING_RATIO, abs=0.008)
    p = U.spacing_ratios(rng.uniform(size=(500, 40)))
    assert p.mean() == pytest.approx(U.POISSON_MEAN_SPACING_RATIO, abs=0.01)


@pytest.mark.parametrize("ensemble,mean", [("goe", 4 - 2 * np.sqrt(3)), ("poisson", 2 * np.log(2) - 1)])
def test_spacing_ratio_density_normalised_with_known_mean(ensemble, mean):
    f = lambda r: U.spacing_ratio_density(r, ensemble)
    assert integrate.quad(f, 0, 1)[0] == pytest.approx(1.0, abs=1e-10)
    assert integrate.quad(lambda r: r * f(r), 0, 1)[0] == pytest.approx(mean, abs=1e-10)
    assert float(f(1.5)) == 0.0


def test_spacing_ratio_of_3x3_goe_matches_surmise():
    """For 3x3 GOE matrices the ratio law is exact (Atas et al.): KS test against its CDF."""
    r = U.spacing_ratios(U.goe_eigs(3, 40_000, 21))
    grid = np.linspace(0, 1, 20_001)
    cdf = integrate.cumulative_trapezoid(U.spacing_ratio_density(grid), grid, initial=0)
    assert rmt.ks_distance(r, lambda t: np.interp(t, grid, cdf)) < 1.63 / np.sqrt(r.size)  # 1% level
    assert r.mean() == pytest.approx(4 - 2 * np.sqrt(3), abs=4 * 0.22 / np.sqrt(r.size))


def test_spacings_of_loe_64x16_checkpoint_D6c():
    """D-6c: 64x16 Gaussian W, eigenvalues of W^T W, unfolded with the MP CDF, edges dropped."""
    rng = np.random.default_rng(8)
    W = rng.normal(size=(4000, 64, 16)) / np.sqrt(64)
    eigs = np.linalg.eigvalsh(np.swapaxes(W, 1, 2) @ W)
    s = U.unfolded_spacings(eigs, lambda x: rmt.mp_cdf(x, 0.25), drop_edges=1)
    assert np.mean(s**2) == pytest.approx(1.284, abs=0.02)
    assert rmt.ks_distance(s, U.wigner_surmise_cdf) == pytest.approx(0.008, abs=0.01)
    assert U.spacing_ratios(eigs).mean() == pytest.approx(0.531, abs=0.01)


# ---------------------------------------------------------------- validation
def test_validation_errors_name_the_argument():
    with pytest.raises(ValueError, match="s"):
        U.wigner_surmise([np.nan])
    with pytest.raises(ValueError, match="s"):
        U.wigner_surmise_cdf([np.inf])
    with pytest.raises(ValueError, match="sigma"):
        U.two_mode_density(1.0, 0.0, -0.1)
    with pytest.raises(ValueError, match="x0"):
        U.two_mode_density(1.0, np.nan, 0.1)
    with pytest.raises(ValueError, match="sigma"):
        U.two_mode_spacing_density(1.0, 0.0)
    with pytest.raises(ValueError, match="samples"):
        U.fit_two_mode([1.0, 2.0])
    with pytest.raises(ValueError, match="eigs"):
        U.two_mode_width([1.0, 2.0])
    with pytest.raises(ValueError, match="eigs"):
        U.two_mode_width([[1.0, 2.0]])
    with pytest.raises(ValueError, match="samples"):
        U.binder_cumulant([1.0, np.nan])
    with pytest.raises(ValueError, match="samples"):
        U.binder_cumulant([1.0, 1.0])
    with pytest.raises(ValueError, match="density"):
        U.binder_cumulant_density([0.0, 1.0, 2.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="x"):
        U.binder_cumulant_density([0.0, 2.0, 1.0], [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="n"):
        U.goe_binder_cumulant(0)
    with pytest.raises(ValueError, match="n_matrices"):
        U.goe_eigs(3, 0)
    with pytest.raises(ValueError, match="scale"):
        U.goe_eigs(3, 2, scale=-1.0)
    with pytest.raises(ValueError, match="cdf"):
        U.unfolded_spacings([1.0, 2.0, 3.0], None)
    with pytest.raises(ValueError, match="drop_edges"):
        U.unfolded_spacings([1.0, 2.0, 3.0], lambda x: x, drop_edges=1)
    with pytest.raises(ValueError, match="drop_edges"):
        U.unfolded_spacings([1.0, 2.0, 3.0], lambda x: x, drop_edges=-1)
    with pytest.raises(ValueError, match="eigs"):
        U.unfolded_spacings(np.zeros((2, 2, 2)), lambda x: x)
    with pytest.raises(ValueError, match="eigs"):
        U.spacing_ratios([1.0, 2.0])
    with pytest.raises(ValueError, match="eigs"):
        U.spacing_ratios([1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="ensemble"):
        U.spacing_ratio_density(0.5, "gue")
    with pytest.raises(ValueError, match="r"):
        U.spacing_ratio_density([np.nan])


def test_batch_statistic_se_covers_spread_between_realisations():
    """The batch-means standard error matches the spread of independent estimates."""
    est = [U.batch_statistic(U.goe_eigs(2, 4000, seed), U.binder_cumulant) for seed in range(40)]
    values, ses = np.array(est).T
    assert abs(values.mean() + 4 / 27) < 4 * values.std(ddof=1) / np.sqrt(40)
    assert 0.6 < np.median(ses) / values.std(ddof=1) < 1.5
    mean, se = U.batch_statistic(np.arange(40.0), np.mean, n_batches=4)
    assert mean == 19.5 and se > 0


def test_batch_statistic_validation():
    with pytest.raises(ValueError, match="n_batches"):
        U.batch_statistic(np.zeros(10), np.mean, n_batches=1)
    with pytest.raises(ValueError, match="n_batches"):
        U.batch_statistic(np.zeros(10), np.mean, n_batches=20)
    with pytest.raises(ValueError, match="statistic"):
        U.batch_statistic(np.zeros(10), "mean")
    with pytest.raises(ValueError, match="samples"):
        U.batch_statistic(np.float64(1.0), np.mean)


def test_jackknife_of_the_mean_equals_the_standard_error():
    """For the mean, the delete-one jackknife reproduces the usual standard error."""
    x = np.random.default_rng(1).normal(size=50)
    mean, se = U.jackknife(x, np.mean)
    assert np.isclose(mean, x.mean())
    assert np.isclose(se, x.std(ddof=1) / np.sqrt(50))
    _, se_groups = U.jackknife(x, np.mean, n_groups=10)
    assert 0.5 < se_groups / se < 1.5


def test_jackknife_validation():
    with pytest.raises(ValueError, match="n_groups"):
        U.jackknife(np.zeros(10), np.mean, n_groups=1)
    with pytest.raises(ValueError, match="n_groups"):
        U.jackknife(np.zeros(3), np.mean, n_groups=4)
    with pytest.raises(ValueError, match="statistic"):
        U.jackknife(np.zeros(10), None)


# ---------------------------------------------------------------- drivers added for short notebook cells
def test_fit_two_mode_errors_equal_batch_statistic():
    e = U.goe_eigs(2, 2000, 4, scale=0.5 * 0.01**2) + 2.0
    (x0, x0_se), (sig, sig_se) = U.fit_two_mode_errors(e, n_batches=20)
    assert (x0, sig) == U.fit_two_mode(e)
    for k, se in [(0, x0_se), (1, sig_se)]:
        ref = U.batch_statistic(e, lambda b: U.fit_two_mode(b)[k], n_batches=20)[1]
        assert se == pytest.approx(ref, rel=1e-12)
    assert abs(sig - 0.01) < 5 * sig_se and abs(x0 - 2.0) < 5 * x0_se
    with pytest.raises(ValueError, match="n_batches"):
        U.fit_two_mode_errors(e, n_batches=1)


def test_plot_two_mode_collapse_rescales():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    e = [U.goe_eigs(2, 4000, k, scale=0.5 * s**2) + 2.0 for k, s in enumerate([0.5, 2.0])]
    fig, ax = plt.subplots()
    U.plot_two_mode_collapse(ax, e, 2.0, [0.5, 2.0], ["a", "b"])
    assert len(ax.patches) == 2 and len(ax.lines) == 1  # one step histogram per ensemble
    u = np.linspace(-4, 4, 300)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), U.two_mode_density(u, 0.0, 1.0))
    with pytest.raises(ValueError, match="labels"):
        U.plot_two_mode_collapse(ax, e, 2.0, 1.0, ["a"])
    plt.close(fig)


def test_mean_spacing_ratio_goe_and_poisson():
    rng = np.random.default_rng(8)
    r, se = U.mean_spacing_ratio(U.goe_eigs(40, 400, rng), n_batches=20)
    assert abs(r - U.GOE_MEAN_SPACING_RATIO) < 5 * se + 0.005  # finite-n correction
    r, se = U.mean_spacing_ratio(np.sort(rng.uniform(size=(400, 40)), axis=1), n_batches=20)
    assert abs(r - U.POISSON_MEAN_SPACING_RATIO) < 5 * se + 0.005
