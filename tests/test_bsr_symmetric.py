"""The symmetric variant in seqrmt.bsr: the Wishart-plus-GOE cubic, its RIE MMSE (with a
high-precision reference at large noise) and the Bayes-optimal error of the quadratic network."""

import mpmath as mp
import numpy as np
import pytest

from seqrmt import bsr as sym
from seqrmt import rmt


def _wide_grid(kappa, zeta, n=20001):
    s = np.sqrt(kappa)
    return np.linspace(-s * 0.0 - 2.2 * np.sqrt(zeta) - 1, s * (1 + 1 / s) ** 2 + 2.2 * np.sqrt(zeta) + 1, n)


def _wrong_sign_density(x, kappa, zeta):
    """The cubic of the former exercise, g_Y(z) = g_S(z - zeta g_Y): two conventions mixed."""
    s, eta, zp = np.sqrt(kappa), 1 / kappa, zeta / kappa
    w = x.astype(complex) / s
    roots = np.array([np.roots([-eta * zp, eta * wi - zp, -(1 - eta - wi), 1]) for wi in w])
    return np.clip(roots.imag.max(axis=1) / (np.pi * s), 0, None)


@pytest.mark.parametrize("kappa,zeta", [(0.5, 0.3), (2.0, 0.3), (1.0, 0.05), (0.2, 1.0), (3.0, 2.0)])
def test_density_has_mass_one_and_the_right_moments(kappa, zeta):
    """Mass 1, mean sqrt(kappa) (that of S*) and second moment 1 + kappa + zeta (S* and Z free)."""
    x = _wide_grid(kappa, zeta)
    rho = sym.symmetric_stieltjes(x, kappa, zeta).imag.clip(0) / np.pi
    assert np.trapezoid(rho, x) == pytest.approx(1.0, abs=2e-4)
    assert np.trapezoid(x * rho, x) == pytest.approx(np.sqrt(kappa), abs=2e-3)
    assert np.trapezoid(x**2 * rho, x) == pytest.approx(1 + kappa + zeta, abs=5e-3)


def test_wrong_sign_cubic_fails_the_mass_test():
    """The sign error of W1 is caught by the mass check above (so that check can fail)."""
    kappa, zeta = 2.0, 0.3  # S* = sqrt(2) x MP(1/2): the review's eta = 1/2, zeta = 0.3 up to scale
    x = _wide_grid(kappa, zeta, 4001)
    assert abs(np.trapezoid(_wrong_sign_density(x, kappa, zeta), x) - 1) > 0.1


@pytest.mark.parametrize("kappa,zeta", [(0.5, 0.3), (2.0, 0.1)])
def test_stieltjes_matches_subordination_iteration(kappa, zeta):
    """The cubic root equals the fixed point of g = g_S(z + zeta g) found by iteration (rmt)."""
    z = np.linspace(-1, 5, 41) + 0.1j
    s = np.sqrt(kappa)
    g_iter = rmt.semicircle_free_convolution(lambda w: rmt.mp_stieltjes(w / s, 1 / kappa) / s,
                                             zeta, z, max_iter=100_000)
    np.testing.assert_allclose(sym.symmetric_stieltjes(z, kappa, zeta), g_iter, atol=1e-7)


def test_mmse_limits():
    for kappa in (0.3, 0.5, 2.0):
        slope = sym.symmetric_mmse(kappa, 1e-5) / 1e-5
        assert slope == pytest.approx(1.0 if kappa >= 1 else 2 * kappa - kappa**2, abs=2e-3)
        assert sym.symmetric_mmse(kappa, 1e3) == pytest.approx(1.0, abs=5e-3)
    m = sym.symmetric_mmse(0.5, np.geomspace(1e-3, 10, 12))
    assert np.all(np.diff(m) > 0)


def test_mmse_matches_the_rie_on_simulated_matrices():
    """Apply xi(l) = l + 2 zeta Re g_Y(l) to Wishart + GOE draws; error within 2% of the formula."""
    rng = np.random.default_rng(5)
    d, kappa, zeta = 400, 0.5, 0.3
    m = int(kappa * d)
    errs = []
    for _ in range(3):
        W = rng.standard_normal((d, m))
        S = W @ W.T / np.sqrt(m * d)
        A = rng.standard_normal((d, d))
        lam, U = np.linalg.eigh(S + np.sqrt(zeta) * (A + A.T) / np.sqrt(2 * d))
        xi = lam + 2 * zeta * sym.symmetric_stieltjes(lam, kappa, zeta).real
        errs.append(np.sum(((U * xi) @ U.T - S) ** 2) / d)
    assert np.mean(errs) == pytest.approx(sym.symmetric_mmse(kappa, zeta), rel=0.02)


def test_quadratic_network_fixed_point_and_threshold():
    kappa = 0.5
    alphas = np.array([0.05, 0.2, 0.36, 0.4])
    for delta in (0.0, 0.1):
        res = sym.quadratic_network_bayes_optimal(alphas, kappa, delta)
        ok = res.zeta > 0
        np.testing.assert_allclose(4 * alphas[ok] * res.zeta[ok],
                                   delta + 2 * sym.symmetric_mmse(kappa, res.zeta[ok]), rtol=1e-8)
        assert np.all(np.diff(res.mmse) < 0)
        np.testing.assert_allclose(res.test_error, delta + 2 * res.mmse)
    noiseless = sym.quadratic_network_bayes_optimal(alphas, kappa)
    assert noiseless.mmse[-1] == 0.0 and noiseless.mmse[-2] > 0  # alpha_PR = 0.375
    assert sym.quadratic_network_alpha_pr(0.5) == 0.375


@pytest.mark.parametrize("bad", [dict(kappa=0.0), dict(zeta=-1.0), dict(kappa=np.nan)])
def test_bad_input_names_the_argument(bad):
    args = dict(z=np.array([1.0 + 1j]), kappa=0.5, zeta=0.3) | bad
    name = next(iter(bad))
    with pytest.raises(ValueError, match=name):
        sym.symmetric_stieltjes(**args)


def test_real_points_outside_the_support_pick_the_physical_root():
    """Outside the support g_Y is real, negative above it and increasing (g' = int mu/(l-x)^2)."""
    x = np.linspace(4.4, 6.0, 50)  # above the support of kappa = 0.5, zeta = 0.3 (edge ~4.25)
    g = sym.symmetric_stieltjes(x, 0.5, 0.3)
    assert np.all(g.real < 0) and np.all(np.diff(g.real) > 0)
    np.testing.assert_allclose(g, sym.symmetric_stieltjes(x + 1e-3j, 0.5, 0.3), atol=2e-3)


def _mmse_high_precision(kappa, zeta, dps=20):
    """zeta - (4 pi^2 / 3) zeta^2 int mu^3 at 20 digits: the cubic's roots by mpmath, the support
    from the roots of its discriminant, tanh-sinh quadrature. The cancellation of the two terms
    at large zeta costs nothing at this precision."""
    with mp.workdps(dps):
        kappa, zeta = mp.mpf(kappa), mp.mpf(zeta)
        eta, zp, s = 1 / kappa, zeta / kappa, mp.sqrt(kappa)

        def disc(w):  # discriminant of a g^3 + b g^2 + c g + 1
            a, b, c = eta * zp, zp + eta * w, eta - 1 + w
            return 18 * a * b * c - 4 * b**3 + b**2 * c**2 - 4 * a * c**3 - 27 * a**2

        # the discriminant is a quartic in w: its coefficients from five values
        V = mp.matrix([[mp.mpf(k) ** j for j in range(5)] for k in range(5)])
        coef = V**-1 * mp.matrix([disc(mp.mpf(k)) for k in range(5)])
        roots = mp.polyroots([coef[4 - j] for j in range(5)], maxsteps=200, extraprec=200)
        w = sorted(mp.re(r) for r in roots if abs(mp.im(r)) < mp.mpf(10) ** (-dps // 2))
        ivs = [(w[k], w[k + 1]) for k in range(len(w) - 1) if disc((w[k] + w[k + 1]) / 2) < 0]

        def mu(x):
            r = mp.polyroots([eta * zp, eta * x / s + zp, x / s + eta - 1, 1], extraprec=50)
            return max(mp.im(ri) for ri in r) / (s * mp.pi)

        i3 = sum(mp.quad(lambda x: mu(x) ** 3, [s * a, s * b]) for a, b in ivs)
        return float(zeta - 4 * mp.pi**2 / 3 * zeta**2 * i3)


@pytest.mark.parametrize("kappa,zeta", [(0.5, 11.0), (0.5, 1000.0), (2.0, 1000.0)])
def test_mmse_at_large_noise_against_high_precision(kappa, zeta):
    """Relative error below 1e-8 at large zeta (the former trapezoid formula: 1e-6 at zeta = 11,
    1e-5 at zeta = 1000, from subtracting two terms of order zeta)."""
    ref = _mmse_high_precision(kappa, zeta)
    assert abs(sym.symmetric_mmse(kappa, zeta) / ref - 1) < 1e-8


def test_mmse_forms_agree_where_they_switch():
    """zeta - (4 pi^2/3) zeta^2 int mu^3 (zeta <= 1) and (kappa + 1) - int xi^2 mu (above)."""
    for kappa in (0.5, 2.0):
        below, above = sym.symmetric_mmse(kappa, [1.0, 1.0 + 1e-9])
        assert abs(above - below) < 5e-9  # both to about 2e-9 (against mpmath at zeta = 0.3)
