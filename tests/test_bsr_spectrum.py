"""The spectrum of signal plus noise, the rectangular RIE and its MMSE (seqrmt.bsr, Chapter 2.2).

Checkpoints B4, B10, B11 of the Part 2 specification; independent computations: a density scan
for the support edges, scipy's adaptive quadrature, the empirical resolvent and spectra.
"""

import numpy as np
import pytest
from scipy import integrate

from seqrmt import bsr
from seqrmt.runtime import single_threaded_blas


def _signal_plus_noise(d, beta, rho, zeta, rng):
    L, r = int(round(beta * d)), int(round(rho * d))
    S = rng.standard_normal((d, r)) @ rng.standard_normal((r, L)) / np.sqrt(r)
    return S, S + np.sqrt(zeta) * rng.standard_normal((d, L))


def _support(beta, rho, zeta):
    return bsr.sv_quadrature(beta, rho, zeta).support


def _support_scan(beta, rho, zeta, n_scan=1500):
    """Edges by a density scan (threshold 1e-6), refined by bisection on the complex-pair test."""
    xmax = 1.3 * ((1 + np.sqrt(rho)) * (np.sqrt(beta) + np.sqrt(rho)) / np.sqrt(rho)
                  + np.sqrt(zeta) * (1 + np.sqrt(beta))) / beta**0.25
    x = np.linspace(0.0, xmax, n_scan + 1)[1:]
    inside = x / np.sqrt(beta) * _roots(x, beta, rho, zeta, 1e-10).imag.max(-1) / np.pi > 1e-6
    edges = [0.0] if inside[0] else []
    for k in np.flatnonzero(np.diff(inside.astype(int))):
        lo, hi = (x[k], x[k + 1]) if inside[k + 1] else (x[k + 1], x[k])  # outside, inside
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            r = _roots(np.array([mid]), beta, rho, zeta, 0.0)[0]
            lo, hi = (lo, mid) if np.any(r.imag > 1e-6 * np.abs(r)) else (mid, hi)
        edges.append(0.5 * (lo + hi))
    return np.array(edges).reshape(-1, 2)


def _roots(x, beta, rho, zeta, eps):
    """The four roots m of the quartic (written out again) at w = x^2 / sqrt(beta) + i eps."""
    c, g = 1 / beta, 1 / rho
    w = np.asarray(x, float) ** 2 / np.sqrt(beta) + 1j * eps * np.minimum(1, np.asarray(x) ** 2)
    coeffs = [g * zeta * c**2 * w**2, c * g * w * (w - 2 * zeta * (1 - c)),
              g * zeta * (1 - c) ** 2 - w * (g * (1 - 2 * c) + c * (1 + zeta)),
              (1 - c) * (1 - g + zeta) - w, -np.ones_like(w)]
    return np.array([np.roots([a[i] for a in coeffs]) for i in range(w.size)])


# ----------------------------------------------------------------------------- support (B10)
def test_support_correction3_B10():
    """Correction 3: the support of (2, 0.2, 0.3) is [0.2052, 1.0253] U [1.4797, 4.2865]."""
    np.testing.assert_allclose(_support(2.0, 0.2, 0.3), [[0.20517, 1.0253], [1.4797, 4.2865]],
                               atol=1e-4)


@pytest.mark.parametrize("beta,rho,zeta", [(2.0, 0.2, 0.3), (1.0, 0.5, 0.5), (2.0, 0.5, 0.1),
                                           (5.0, 0.2, 1.0), (1000.0, 0.2, 0.5), (1.0, 2.0, 0.3)])
def test_support_discriminant_matches_density_scan(beta, rho, zeta):
    np.testing.assert_allclose(_support(beta, rho, zeta), _support_scan(beta, rho, zeta),
                               atol=1e-6)


def test_support_small_zeta_resolves_noise_bulk():
    """At zeta = 1e-4 the noise bulk is a narrow interval near 0 that a 1500-point scan misses."""
    q = bsr.sv_quadrature(2.0, 0.5, 1e-4)
    assert q.support.shape == (2, 2) and q.support[0, 1] < 0.03
    assert abs(2 * np.sum(q.weights * q.density) - 1) < 1e-6


def test_support_vs_empirical_extreme_singular_values():
    _, Y = _signal_plus_noise(300, 2.0, 0.2, 0.3, np.random.default_rng(1))
    s = np.linalg.svd(Y / (300 * 600) ** 0.25, compute_uv=False)
    sup = _support(2.0, 0.2, 0.3)
    assert abs(s.min() - sup[0, 0]) < 0.02 and abs(s.max() - sup[-1, 1]) < 0.15
    assert not np.any((s > sup[0, 1] + 0.05) & (s < sup[1, 0] - 0.05))


# ------------------------------------------------------------------- density: mass, moments
@pytest.mark.parametrize(
    "beta,rho,zeta",
    [(1.0, 0.5, 0.5), (2.0, 0.2, 0.3), (1.0, 1.0, 1.0), (2.0, 0.5, 0.1), (5.0, 0.2, 1.0),
     (5.0, 0.2, 1.3), (2.0, 0.2, 1.3), (100.0, 0.01, 1e-4), (1.0, 2.0, 0.01), (1.01, 0.05, 3.0)],
)
def test_density_mass_and_second_moment_B10(beta, rho, zeta):
    """int mu = 1 and int x^2 mu = (1 + zeta) sqrt(beta), both to 1e-5 (spec B10)."""
    q = bsr.sv_quadrature(beta, rho, zeta)
    assert abs(2 * np.sum(q.weights * q.density) - 1) < 1e-5
    m2 = 2 * np.sum(q.weights * q.density * q.x**2)
    assert abs(m2 / ((1 + zeta) * np.sqrt(beta)) - 1) < 1e-5


def test_density_quadrature_vs_adaptive_quadrature():
    beta, rho, zeta = 2.0, 0.2, 0.3
    q = bsr.sv_quadrature(beta, rho, zeta)
    ref = sum(integrate.quad(lambda t: bsr.sv_density(t, beta, rho, zeta) ** 3, a, b, limit=200)[0]
              for a, b in q.support)
    assert abs(2 * np.sum(q.weights * q.density**3) - 2 * ref) < 1e-6


def test_density_vs_empirical_cdf():
    beta, rho, zeta, d = 1.0, 0.5, 0.5, 300
    _, Y = _signal_plus_noise(d, beta, rho, zeta, np.random.default_rng(2))
    s = np.linalg.svd(Y / d**0.5, compute_uv=False)
    for t in (0.5, 1.0, 2.0):
        cdf = 2 * integrate.quad(lambda u: bsr.sv_density(u, beta, rho, zeta), 0, t, limit=200)[0]
        assert abs(np.mean(s <= t) - cdf) < 3 * np.sqrt(cdf * (1 - cdf) / d)


def test_stieltjes_transform_vs_empirical_resolvent():
    """G(z) = int mu(t) / (z - t): from the density by quadrature, against the block matrix."""
    beta, rho, zeta, d = 2.0, 0.2, 0.3, 400
    _, Y = _signal_plus_noise(d, beta, rho, zeta, np.random.default_rng(3))
    s = np.linalg.svd(Y / (d * 2 * d) ** 0.25, compute_uv=False)
    q = bsr.sv_quadrature(beta, rho, zeta)
    for z in (1.0 + 0.5j, 3.0 + 0.2j):
        emp = np.mean(0.5 / (z - s) + 0.5 / (z + s))  # the symmetrised empirical law
        theory = np.sum(q.weights * q.density * (1 / (z - q.x) + 1 / (z + q.x)))
        assert abs(emp - theory) < 0.01


# --------------------------------------------------------------------------- Hilbert transform
@pytest.mark.parametrize("beta,rho,zeta", [(2.0, 0.2, 0.3), (1.0, 0.5, 0.5)])
def test_hilbert_vs_principal_value_quadrature(beta, rho, zeta):
    """H from the quartic root equals p.v. int mu(t)/(x-t) dt computed with a Cauchy weight."""
    sup = _support(beta, rho, zeta)
    xs = [0.3 * sup[0, 1] + 0.7 * sup[0, 0] + 1e-3, 0.5 * (sup[-1, 0] + sup[-1, 1]),
          sup[-1, 1] + 0.5, sup[-1, 1] + 0.01]
    if sup.shape[0] > 1:
        xs.append(0.5 * (sup[0, 1] + sup[1, 0]))  # in the gap
    f = lambda t: bsr.sv_density(t, beta, rho, zeta)  # noqa: E731
    for x in xs:
        ref = 0.0
        for a, b in np.vstack([sup, -sup[:, ::-1]]):
            if a < x < b:
                ref -= integrate.quad(f, a, b, weight="cauchy", wvar=x, limit=400)[0]
            else:
                ref += integrate.quad(lambda t: f(t) / (x - t), a, b, limit=400)[0]
        assert abs(bsr.sv_hilbert(x, beta, rho, zeta) - ref) < 2e-5, x


def test_hilbert_is_odd_and_decays_like_one_over_x():
    h = bsr.sv_hilbert([-7.0, 7.0, 1e4], 2.0, 0.2, 0.3)
    assert h[0] == -h[1] and abs(h[2] * 1e4 - 1) < 1e-6


def test_hilbert_identities_behind_the_mmse_formula():
    """int x H mu = 1/2 and int H^2 mu = (pi^2 / 3) int mu^3 (Chapter 2.2, thm-p2-mmse)."""
    for key in [(2.0, 0.2, 0.3), (5.0, 0.2, 1.0), (1.0, 0.5, 0.5)]:
        q = bsr.sv_quadrature(*key)
        H = bsr.sv_hilbert(q.x, *key)
        integral = lambda f: 2 * np.sum(q.weights * q.density * f)  # noqa: E731
        assert abs(integral(q.x * H) - 0.5) < 1e-8
        assert abs(integral(H**2) - np.pi**2 / 3 * integral(q.density**2)) < 1e-8


# ------------------------------------------------------------------------------ MMSE (B4, B11)
@pytest.mark.parametrize(
    "beta,rho,zeta,expected",
    [(1.0, 0.5, 0.5, 0.276740), (2.0, 0.2, 0.3, 0.08094), (1.0, 1.0, 1.0, 0.479251),
     (2.0, 0.5, 0.1, 0.05960), (5.0, 0.2, 1.0, 0.199147)],
)
def test_denoising_mmse_checkpoint_B4(beta, rho, zeta, expected):
    assert abs(bsr.denoising_mmse(beta, rho, zeta) - expected) < 2e-5


@pytest.mark.parametrize("beta,rho,zeta", [(1.0, 0.5, 0.5), (2.0, 0.2, 0.3), (0.5, 0.4, 0.3)])
def test_rie_monte_carlo_B4(beta, rho, zeta):
    """Empirical RIE error at d = 200 (5 trials) against mmse: 4 SE plus 0.004 of O(1/d) bias."""
    rng = np.random.default_rng(4)
    with single_threaded_blas():
        errs = []
        for _ in range(5):
            S, Y = _signal_plus_noise(200, beta, rho, zeta, rng)
            errs.append(np.mean((bsr.rie_denoise(Y, zeta, rho) - S) ** 2))
    se = np.std(errs, ddof=1) / np.sqrt(len(errs))
    assert abs(np.mean(errs) - bsr.denoising_mmse(beta, rho, zeta)) < 4 * se + 0.004


def test_mmse_equals_pythagorean_form():
    """mmse = 1 - int s_hat^2 mu / sqrt(beta) (the proof's first step), also at large zeta."""
    for beta, rho, zeta in [(2.0, 0.2, 0.3), (1.0, 0.5, 10.0), (2.0, 0.2, 1000.0)]:
        q = bsr.sv_quadrature(beta, rho, zeta)
        H = bsr.sv_hilbert(q.x, beta, rho, zeta)
        s_hat = q.x - 2 * zeta / np.sqrt(beta) * ((beta - 1) / (2 * q.x) + H)
        pyth = 1 - 2 * np.sum(q.weights * q.density * s_hat**2) / np.sqrt(beta)
        assert abs(pyth - bsr.denoising_mmse(beta, rho, zeta)) < 1e-8


def test_full_rank_limit_is_linear_shrinkage():
    """rho -> infinity: iid Gaussian S, posterior mean Y / (1 + zeta), error zeta / (1 + zeta)."""
    for z in (0.3, 1.0):
        assert abs(bsr.denoising_mmse(1.0, 200.0, z) - z / (1 + z)) < 1e-5


def test_rie_beats_trivial_estimators():
    S, Y = _signal_plus_noise(100, 1.0, 0.2, 1.0, np.random.default_rng(5))
    err = np.mean((bsr.rie_denoise(Y, 1.0, 0.2) - S) ** 2)
    assert err < 0.7 * min(1.0, np.mean((Y - S) ** 2))


@pytest.mark.parametrize("beta,rho,expected", [(1.0, 0.2, 0.3607), (2.0, 0.5, 0.6233),
                                               (1.0, 0.5, 0.7502)])
def test_small_zeta_slope_B11(beta, rho, expected):
    assert abs(bsr.denoising_mmse(beta, rho, 1e-4) / 1e-4 - expected) < 0.003


def test_mmse_is_increasing_and_bounded():
    zs = np.geomspace(1e-3, 1e3, 25)
    m = np.array([bsr.denoising_mmse(2.0, 0.3, z) for z in zs])
    assert np.all(np.diff(m) > 0) and np.all(m <= np.minimum(zs, 1.0) + 1e-9)
    assert 1 - m[-1] < 5e-3


def test_large_beta_limit():
    rho, zeta = 0.2, 0.5
    lim = bsr.denoising_mmse_large_beta(rho, zeta)
    gaps = [abs(bsr.denoising_mmse(b, rho, zeta) - lim) for b in (10.0, 100.0, 1000.0)]
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 2e-3
    assert bsr.denoising_mmse(np.inf, rho, zeta) == lim
    assert abs(bsr.denoising_mmse_large_beta(rho, 1e-6) / 1e-6 - rho) < 1e-4


def test_large_beta_closed_form_is_marchenko_pastur_transform():
    """zeta (1 - zeta g_{1/rho}(-zeta)) with the MP transform of seqrmt.rmt (Chapter 2.3)."""
    from seqrmt import rmt
    zs = np.geomspace(1e-3, 20, 25)
    for rho in (0.1, 0.2, 0.5):
        lhs = zs * (1 - zs * rmt.mp_stieltjes(-zs + 0j, 1 / rho).real)
        np.testing.assert_allclose(lhs, bsr.denoising_mmse_large_beta(rho, zs), atol=1e-10)


# --------------------------------------------------------------------------- transposition
def test_transposition_symmetry():
    assert bsr.denoising_mmse(0.5, 0.1, 0.3) == bsr.denoising_mmse(2.0, 0.2, 0.3)
    np.testing.assert_allclose(_support(0.5, 0.1, 0.3), _support(2.0, 0.2, 0.3))
    S, Y = _signal_plus_noise(40, 2.0, 0.2, 0.3, np.random.default_rng(6))  # 40 x 80, rank 8
    np.testing.assert_allclose(bsr.rie_denoise(Y.T, 0.3, 0.1), bsr.rie_denoise(Y, 0.3, 0.2).T,
                               atol=1e-10)


def test_rie_zero_noise_returns_input():
    Y = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(bsr.rie_denoise(Y, 0.0, 0.5), Y)
    assert bsr.denoising_mmse(1.0, 0.5, 0.0) == 0.0


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: bsr.denoising_mmse(0.0, 0.5, 0.5), "beta"),
        (lambda: bsr.denoising_mmse(1.0, -0.5, 0.5), "rho"),
        (lambda: bsr.denoising_mmse(1.0, 0.5, -0.1), "zeta"),
        (lambda: bsr.denoising_mmse(np.nan, 0.5, 0.1), "beta"),
        (lambda: bsr.sv_density([0.1, np.nan], 1.0, 0.5, 0.5), "x"),
        (lambda: bsr.sv_density([0.1], 1.0, 0.5, 0.0), "zeta"),
        (lambda: bsr.sv_hilbert([0.1], 1.0, 0.0, 0.5), "rho"),
        (lambda: bsr.sv_quadrature(-1.0, 0.5, 0.5), "beta"),
        (lambda: bsr.sv_quadrature(1.0, 0.5, 0.5, n_nodes=1), "n_nodes"),
        (lambda: bsr.rie_denoise(np.ones(3), 0.5, 0.5), "Y"),
        (lambda: bsr.rie_denoise(np.full((2, 2), np.nan), 0.5, 0.5), "Y"),
        (lambda: bsr.rie_denoise(np.ones((2, 2)), -0.5, 0.5), "zeta"),
        (lambda: bsr.rie_denoise(np.ones((2, 2)), 0.5, 0.0), "rho"),
        (lambda: bsr.denoising_mmse_large_beta(0.2, -1.0), "zeta"),
    ],
)
def test_value_errors_name_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()
