r"""Singular values of signal plus noise, the rectangular RIE and its MMSE.

Setting: :math:`Y_\zeta=S^*+\sqrt\zeta\,Z` with :math:`S^*=U^*V^{*\top}/\sqrt r` (:math:`d\times L`,
entries of variance one), :math:`Z` iid :math:`N(0,1)`, :math:`\beta=L/d`, :math:`\rho=r/d`.
:math:`\mu_\zeta` is the **symmetrised** density of the singular values of :math:`Y_\zeta/(dL)^{1/4}`
(each singular value :math:`s` contributes :math:`\pm s`; total mass one).

Every function accepts :math:`\beta<1`: the problem is then transposed,
:math:`(\beta,\rho)\to(1/\beta,\rho/\beta)`, and the density is that of the :math:`\min(d,L)`
singular values. Internally :math:`\beta\ge1` and :math:`W=Y_\zeta Y_\zeta^\top/L` is a sample
covariance whose Stieltjes transform :math:`m(w)` solves a quartic (Silverstein's equation); the
singular values are :math:`s^2=\sqrt\beta\,w`. The quartic is solved for many points at once as the
eigenvalues of a batch of :math:`4\times4` companion matrices.

Conventions: :math:`\mathcal H_\zeta(x)=\mathrm{p.v.}\int\mu_\zeta(t)\,dt/(x-t)`; integrals over
:math:`\mu_\zeta` use a Gauss-Legendre rule in the angle :math:`\theta` of
:math:`x=a+\frac{b-a}2(1-\cos\theta)` on each support interval :math:`[a,b]`.

Used in: Chapter 2.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .._validation import check_array, check_nonnegative, check_positive, check_size
from .._validation import check_seed
from ..ensemble import run_ensemble
from .._validation import as_generator
from .model import _planted

__all__ = [
    "canonical_beta_rho",
    "sample_signal_plus_noise",
    "signal_plus_noise_singular_values",
    "sv_cdf",
    "rie_error_monte_carlo",
    "sv_stieltjes",
    "sv_density",
    "sv_support",
    "sv_quadrature",
    "SVQuadrature",
    "sv_hilbert",
    "rie_shrinkage",
    "rie_denoise",
    "denoising_mmse",
    "denoising_mmse_large_beta",
]

_EPS = 1e-10  # imaginary part of the spectral argument w (Section 3.1 of the spec)
_INSIDE = 1e-6  # density threshold of the support scan
_N_SCAN = 1500
_N_NODES = 120  # per panel; 100 nodes already agree with 800 to 3e-10 (cusp-split panels)
_X_MIN = 1e-7  # smallest x at which the quartic is solved


def canonical_beta_rho(beta, rho):
    r"""Map :math:`(\beta,\rho)` to the transposed problem when :math:`\beta<1`.

    Transposing :math:`(d,L,r)\to(L,d,r)` sends :math:`(\beta,\rho)\to(1/\beta,\rho/\beta)` and leaves
    :math:`\alpha`, the singular values of :math:`Y/(dL)^{1/4}` and every error unchanged.

    Parameters
    ----------
    beta : float
        Aspect ratio :math:`L/d>0`.
    rho : float
        Rank ratio :math:`r/d>0`.

    Returns
    -------
    tuple of float
        :math:`(\beta',\rho')` with :math:`\beta'\ge1`.

    Examples
    --------
    >>> canonical_beta_rho(0.5, 0.4)
    (2.0, 0.8)
    """
    beta = check_positive(beta, "beta")
    rho = check_positive(rho, "rho")
    if beta < 1:
        return 1.0 / beta, rho / beta
    return beta, rho


def sample_signal_plus_noise(d, L, r, zeta, rng=None):
    r"""Draw :math:`S^*=U^*V^{*\top}/\sqrt r` and :math:`Y=S^*+\sqrt\zeta Z` (:math:`d\times L`).

    Parameters
    ----------
    d, L, r : int
        Rows, columns and rank.
    zeta : float
        Noise variance :math:`\zeta\ge0`.
    rng : numpy.random.Generator or int, optional
        Source of randomness. Draw order: ``U`` (d, r), ``V`` (L, r), ``Z`` (d, L).

    Returns
    -------
    S, Y : ndarray, shape (d, L)

    Examples
    --------
    >>> S, Y = sample_signal_plus_noise(50, 100, 10, 0.5, rng=0)
    >>> S.shape, round(float(np.mean(S**2)), 1)
    ((50, 100), 1.0)
    """
    d = check_size(d, "d")
    L = check_size(L, "L")
    r = check_size(r, "r")
    zeta = check_nonnegative(zeta, "zeta")
    rng = as_generator(rng)
    _, _, S = _planted(d, L, r, rng)
    return S, S + np.sqrt(zeta) * rng.standard_normal((d, L))


def _sizes(d, beta, rho):
    d = check_size(d, "d")
    beta = check_positive(beta, "beta")
    rho = check_positive(rho, "rho")
    return d, max(1, int(round(beta * d))), max(1, int(round(rho * d)))


def signal_plus_noise_singular_values(d, beta, rho, zeta, n_draws, rng=None, oracle=False,
                                      jobs=None):
    r"""Singular values :math:`s_i` of :math:`Y_\zeta/(dL)^{1/4}` on independent draws; the oracle.

    The oracle :math:`u_i^\top S^*v_i/(dL)^{1/4}` (with :math:`u_i,v_i` the singular vectors of
    :math:`Y_\zeta`) is the best estimator built on those vectors,
    :math:`\arg\min_{\hat s}\|\sum_i\hat s_iu_iv_i^\top-S^*/(dL)^{1/4}\|_F`, which the RIE
    :func:`rie_shrinkage` approximates from :math:`s_i` alone.

    Parameters
    ----------
    d, n_draws : int
        Number of rows of each matrix, and number of independent matrices.
    beta, rho, zeta : float
        Aspect ratio and rank ratio (:math:`L=\mathrm{round}(\beta d)`,
        :math:`r=\mathrm{round}(\rho d)`), noise variance :math:`\zeta\ge0`.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None
        Root of the draws' generators: draw ``k`` is one :func:`sample_signal_plus_noise` call
        with the ``k``-th child (:func:`seqrmt.ensemble.spawn_generators`).
    oracle : bool
        Also return the oracle values.
    jobs : int or None
        Workers (see :func:`seqrmt.ensemble.n_jobs`); the result does not depend on them.

    Returns
    -------
    s : ndarray, shape (n_draws, min(d, L))
        Row ``k``: the singular values of draw ``k`` in decreasing order, divided by
        :math:`(dL)^{1/4}` (the scale of :func:`sv_density`).
    oracle : ndarray, shape (n_draws, min(d, L))
        Only if ``oracle``: :math:`u_i^\top S^*v_i/(dL)^{1/4}`, in the same order.

    Examples
    --------
    >>> s = signal_plus_noise_singular_values(100, 2.0, 0.2, 0.3, 4, rng=0)
    >>> s.shape
    (4, 100)
    >>> bool(abs(np.mean(s**2) / (1.3 * np.sqrt(2.0)) - 1) < 0.05)  # second moment, 3 sd
    True
    >>> s, orc = signal_plus_noise_singular_values(60, 2.0, 0.2, 0.3, 2, rng=0, oracle=True)
    >>> rms = lambda a: float(np.sqrt(np.mean(a**2)))
    >>> rms(orc - rie_shrinkage(s, 2.0, 0.2, 0.3)) < rms(orc - s)
    True
    """
    d, L, r = _sizes(d, beta, rho)
    zeta = check_nonnegative(zeta, "zeta")
    n_draws = check_size(n_draws, "n_draws")
    if not isinstance(oracle, (bool, np.bool_)):
        raise ValueError(f"oracle must be a bool, got {oracle!r}")
    draws = run_ensemble(_singular_values_draw, n_draws, check_seed(rng), args=(d, L, r, zeta, oracle),
                         jobs=jobs, desc="draws")
    s = np.array([sk for sk, _ in draws])
    return (s, np.array([ok for _, ok in draws])) if oracle else s


def _singular_values_draw(rng, d, L, r, zeta, oracle):
    """One draw of :func:`signal_plus_noise_singular_values`: s_i and the oracle (or None)."""
    scale = (d * L) ** 0.25
    S, Y = sample_signal_plus_noise(d, L, r, zeta, rng)
    if not oracle:
        return np.linalg.svd(Y, compute_uv=False) / scale, None
    u, s, vt = np.linalg.svd(Y / scale, full_matrices=False)
    return s, np.einsum("ij,ik,kj->j", u, S / scale, vt.T)


def _check_brz(beta, rho, zeta, zeta_positive=True):
    beta, rho = canonical_beta_rho(beta, rho)
    zeta = check_positive(zeta, "zeta") if zeta_positive else check_nonnegative(zeta, "zeta")
    return beta, rho, zeta


def _quartic_roots(w, beta, rho, zeta):
    """All four roots m of the quartic at each w (beta >= 1); shape (..., 4)."""
    c, g = 1.0 / beta, 1.0 / rho
    w = np.asarray(w)
    a4 = g * zeta * c**2 * w**2
    a3 = c * g * w * (w - 2 * zeta * (1 - c))
    a2 = g * zeta * (1 - c) ** 2 - w * (g * (1 - 2 * c) + c * (1 + zeta))
    a1 = (1 - c) * (1 - g + zeta) - w
    comp = np.zeros(w.shape + (4, 4), dtype=w.dtype)
    comp[..., 0, 0] = -a3 / a4
    comp[..., 0, 1] = -a2 / a4
    comp[..., 0, 2] = -a1 / a4
    comp[..., 0, 3] = 1.0 / a4
    comp[..., 1, 0] = comp[..., 2, 1] = comp[..., 3, 2] = 1.0
    return np.linalg.eigvals(comp)


def _quartic_roots_ferrari(w, beta, rho, zeta):
    """Same as _quartic_roots via Ferrari's formulas (vectorised, ~20x faster), polished by two
    Newton steps; points whose polished residual is not small fall back to the companion matrix."""
    c, g = 1.0 / beta, 1.0 / rho
    w = np.asarray(w, dtype=complex)
    shape = w.shape
    w = w.reshape(-1)
    a4 = g * zeta * c**2 * w**2
    a3 = c * g * w * (w - 2 * zeta * (1 - c))
    a2 = g * zeta * (1 - c) ** 2 - w * (g * (1 - 2 * c) + c * (1 + zeta))
    a1 = (1 - c) * (1 - g + zeta) - w
    A, B, C, D = a3 / a4, a2 / a4, a1 / a4, -1.0 / a4
    p = B - 3 * A**2 / 8
    q = C - A * B / 2 + A**3 / 8
    r = D - A * C / 4 + A**2 * B / 16 - 3 * A**4 / 256
    # resolvent cubic m^3 + p m^2 + (p^2/4 - r) m - q^2/8 = 0, by Cardano
    ca, cb, cc = p, p**2 / 4 - r, -(q**2) / 8
    P = cb - ca**2 / 3
    Q = 2 * ca**3 / 27 - ca * cb / 3 + cc
    sq = np.sqrt((Q / 2) ** 2 + (P / 3) ** 3)
    U1 = (-Q / 2 + sq) ** (1 / 3)
    U2 = (-Q / 2 - sq) ** (1 / 3)
    U = np.where(np.abs(U1) >= np.abs(U2), U1, U2)
    U = np.where(U == 0, 1e-300, U)
    omega = np.exp(2j * np.pi / 3)
    ms = np.stack([U * omega**k - P / (3 * U * omega**k) - ca / 3 for k in range(3)], axis=-1)
    m = np.take_along_axis(ms, np.argmax(np.abs(ms), axis=-1)[..., None], axis=-1)[..., 0]
    s2m = np.sqrt(2 * m)
    s2m = np.where(s2m == 0, 1e-300, s2m)
    roots = []
    for sgn in (1, -1):
        inner = np.sqrt(-(2 * p + 2 * m + sgn * 2 * q / s2m))
        roots += [(sgn * s2m + inner) / 2 - A / 4, (sgn * s2m - inner) / 2 - A / 4]
    x = np.stack(roots, axis=-1)
    coeffs = [a4[..., None], a3[..., None], a2[..., None], a1[..., None], -1.0]
    for _ in range(2):
        f = (((coeffs[0] * x + coeffs[1]) * x + coeffs[2]) * x + coeffs[3]) * x + coeffs[4]
        df = ((4 * coeffs[0] * x + 3 * coeffs[1]) * x + 2 * coeffs[2]) * x + coeffs[3]
        step = np.where(df != 0, f / np.where(df != 0, df, 1.0), 0.0)
        x = x - step
    f = (((coeffs[0] * x + coeffs[1]) * x + coeffs[2]) * x + coeffs[3]) * x + coeffs[4]
    scale = (np.abs(coeffs[0]) * np.abs(x) ** 4 + np.abs(coeffs[1]) * np.abs(x) ** 3
             + np.abs(coeffs[2]) * np.abs(x) ** 2 + np.abs(coeffs[3]) * np.abs(x) + 1.0)
    bad = ~np.all(np.isfinite(x), axis=-1) | np.any(np.abs(f) > 1e-10 * scale, axis=-1)
    # distinct roots: two roots collapsing onto one another would hide the physical branch
    if np.any(~bad):
        xs = np.sort_complex(x[~bad])
        gaps = np.abs(np.diff(xs, axis=-1)).min(axis=-1)
        tiny = gaps < 1e-9 * (1 + np.abs(xs).max(axis=-1))
        idx = np.flatnonzero(~bad)
        bad[idx[tiny]] = True
    if np.any(bad):
        x[bad] = _quartic_roots(w[bad], beta, rho, zeta)
    return x.reshape(shape + (4,))


def _m_physical(x, beta, rho, zeta, eps=_EPS):
    """Root with the largest imaginary part at w = x^2/sqrt(beta) + i eps (x > 0)."""
    w = np.asarray(x, dtype=float) ** 2 / np.sqrt(beta)
    w = w + 1j * eps * np.minimum(1.0, w)  # relative for small w (beta = 1: support reaches 0)
    roots = _quartic_roots_ferrari(w, beta, rho, zeta)
    idx = np.argmax(roots.imag, axis=-1)
    return np.take_along_axis(roots, idx[..., None], axis=-1)[..., 0]


def _density_pos(x, beta, rho, zeta):
    m = _m_physical(x, beta, rho, zeta)
    return np.maximum(0.0, x / np.sqrt(beta) * m.imag / np.pi)


def _inside(x, beta, rho, zeta):
    """Complex-pair test at eps = 0: True where the real quartic has a non-real root pair."""
    w = np.asarray(x, dtype=float) ** 2 / np.sqrt(beta)
    roots = _quartic_roots(w, beta, rho, zeta)
    # a root whose imaginary part is a sizeable fraction of its modulus (round-off splits a
    # near-double real root by only ~1e-8 relative)
    return np.any(roots.imag > 1e-6 * np.abs(roots), axis=-1)


def sv_stieltjes(w, beta, rho, zeta):
    r"""Stieltjes transform :math:`m(w)=\int\phi_W(t)\,dt/(t-w)` of :math:`W=Y_\zeta Y_\zeta^\top/L`.

    The root of the quartic of the spec (Section 2.1) with the largest imaginary part; reliable for
    :math:`\Im w>0` and inside the support (see :func:`sv_hilbert` for real arguments outside it).

    Parameters
    ----------
    w : array_like of complex
        Spectral arguments with :math:`\Im w>0` (after transposition, :math:`\beta\ge1`).
    beta, rho : float
        Aspect and rank ratios (:math:`\beta<1` is transposed).
    zeta : float
        Noise variance :math:`\zeta>0`.

    Returns
    -------
    ndarray of complex
        :math:`m(w)`, same shape as ``w``.

    Examples
    --------
    >>> m = sv_stieltjes(1.0 + 1.0j, 1.0, 0.5, 0.5)
    >>> bool(m.imag > 0)
    True
    """
    beta, rho, zeta = _check_brz(beta, rho, zeta)
    w = check_array(w, "w", allow_complex=True).astype(complex)
    if np.any(w.imag <= 0):
        raise ValueError("w must have a positive imaginary part")
    roots = _quartic_roots(w, beta, rho, zeta)
    idx = np.argmax(roots.imag, axis=-1)
    return np.take_along_axis(roots, idx[..., None], axis=-1)[..., 0]


def _x_max(beta, rho, zeta):
    return 1.3 * ((1 + np.sqrt(rho)) * (np.sqrt(beta) + np.sqrt(rho)) / np.sqrt(rho)
                  + np.sqrt(zeta) * (1 + np.sqrt(beta))) / beta**0.25


def _coeff_polys(beta, rho, zeta):
    """Quartic coefficients a4..a0 as polynomials in w (increasing powers)."""
    c, g = 1.0 / beta, 1.0 / rho
    a4 = [0.0, 0.0, g * zeta * c**2]
    a3 = [0.0, -2 * c * g * zeta * (1 - c), c * g]
    a2 = [g * zeta * (1 - c) ** 2, -(g * (1 - 2 * c) + c * (1 + zeta))]
    a1 = [(1 - c) * (1 - g + zeta), -1.0]
    a0 = [-1.0]
    return [np.array(a) for a in (a4, a3, a2, a1, a0)]


def _discriminant_poly(beta, rho, zeta):
    """Discriminant of the quartic as a polynomial in w (increasing powers)."""
    a, b, c, d, e = _coeff_polys(beta, rho, zeta)

    def mul(*fs):
        out = fs[0]
        for f in fs[1:]:
            out = np.convolve(out, f)
        return out

    terms = [
        (256, (a, a, a, e, e, e)), (-192, (a, a, b, d, e, e)), (-128, (a, a, c, c, e, e)),
        (144, (a, a, c, d, d, e)), (-27, (a, a, d, d, d, d)), (144, (a, b, b, c, e, e)),
        (-6, (a, b, b, d, d, e)), (-80, (a, b, c, c, d, e)), (18, (a, b, c, d, d, d)),
        (16, (a, c, c, c, c, e)), (-4, (a, c, c, c, d, d)), (-27, (b, b, b, b, e, e)),
        (18, (b, b, b, c, d, e)), (-4, (b, b, b, d, d, d)), (-4, (b, b, c, c, c, e)),
        (1, (b, b, c, c, d, d)),
    ]
    out = np.zeros(13)
    for k, fs in terms:
        prod = mul(*fs)
        out[:prod.size] += k * prod
    return out


@functools.lru_cache(maxsize=4096)
def _trimmed_discriminant(beta, rho, zeta):
    """Discriminant divided by its w^k factor.

    Symbolically (sympy), the coefficients of w^0..w^3 vanish identically for beta > 1 and those
    of w^0..w^5 for beta = 1; numerically they are cancellation noise that would create spurious
    roots near w = 0, so they are dropped exactly.
    """
    disc = _discriminant_poly(beta, rho, zeta)
    k = 6 if beta == 1.0 else 4
    return np.trim_zeros(disc[k:], "b")


def _refine_edges(lo, hi, beta, rho, zeta, steps=60):
    """Vectorised bisection between outside points ``lo`` and inside points ``hi``."""
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        ok = _inside(mid, beta, rho, zeta)
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
    return 0.5 * (lo + hi)


@functools.lru_cache(maxsize=4096)
def _support(beta, rho, zeta):
    """Support intervals (x > 0): candidate edges from the discriminant, classified by midpoints."""
    disc = _trimmed_discriminant(beta, rho, zeta)
    roots = np.polynomial.polynomial.polyroots(disc) if disc.size > 1 else np.array([])
    xmax = 2 * _x_max(beta, rho, zeta)
    w_c = roots.real[(np.abs(roots.imag) <= 1e-8 * (1 + np.abs(roots))) & (roots.real > 0)]
    x_c = np.sqrt(np.sqrt(beta) * w_c)
    cand = np.unique(np.concatenate([[0.0], x_c[x_c < xmax], [xmax]]))
    mids = 0.5 * (cand[1:] + cand[:-1])
    inside = _inside(mids, beta, rho, zeta)
    # [0, first candidate]: inside iff beta = 1 (for beta > 1 the smallest singular value stays
    # away from 0; near w = 0 the companion matrix is ill-conditioned, so do not test there)
    inside[0] = beta == 1.0
    intervals = []
    for k in np.flatnonzero(inside):
        a, b = cand[k], cand[k + 1]
        if intervals and intervals[-1][1] == a:
            intervals[-1][1] = b
        else:
            intervals.append([a, b])
    if not intervals:
        raise RuntimeError("no support found")  # pragma: no cover
    # polish the edges with a few Newton steps on the discriminant (in w)
    ivs = np.array(intervals)
    dpoly = np.polynomial.polynomial.polyder(disc)
    w_e = ivs**2 / np.sqrt(beta)
    for _ in range(3):
        f = np.polynomial.polynomial.polyval(w_e, disc)
        fp_ = np.polynomial.polynomial.polyval(w_e, dpoly)
        step = np.where((fp_ != 0) & (ivs > 0), f / np.where(fp_ != 0, fp_, 1.0), 0.0)
        ok = np.abs(step) < 1e-6 * (1 + w_e)  # only polish, never jump
        w_e = np.where(ok, w_e - step, w_e)
    ivs = np.sqrt(np.sqrt(beta) * w_e)
    return tuple(map(tuple, ivs))


@functools.lru_cache(maxsize=4096)
def _cusps(beta, rho, zeta):
    """x-positions of non-real discriminant roots close to the real axis (near-gaps or cusps).

    Quadrature panels are split there so that a narrow dip of the density sits at a panel end,
    where the cosine map clusters the nodes.
    """
    disc = _trimmed_discriminant(beta, rho, zeta)
    if disc.size < 2:
        return ()
    roots = np.polynomial.polynomial.polyroots(disc)
    near = (roots.real > 0) & (np.abs(roots.imag) > 1e-8 * np.abs(roots)) & (
        np.abs(roots.imag) < 0.2 * np.abs(roots))
    return tuple(np.sqrt(np.sqrt(beta) * roots.real[near]))


def _support_scan(beta, rho, zeta, n_scan=_N_SCAN):
    """Independent support detection by a density scan (Section 3.2 of the spec); for tests."""
    xmax = _x_max(beta, rho, zeta)
    x = np.linspace(0.0, xmax, n_scan + 1)[1:]
    inside = _density_pos(x, beta, rho, zeta) > _INSIDE
    flips = np.flatnonzero(np.diff(inside.astype(int)))
    lo = np.where(inside[flips + 1], x[flips], x[flips + 1])
    hi = np.where(inside[flips + 1], x[flips + 1], x[flips])
    edges = list(_refine_edges(lo, hi, beta, rho, zeta)) if flips.size else []
    if inside[0]:
        edges = [0.0] + edges
    return np.array(edges).reshape(-1, 2)


def sv_support(beta, rho, zeta):
    r"""Support of :math:`\mu_\zeta` on the positive axis, as a list of intervals.

    Scan for :math:`\mu_\zeta>10^{-6}`, then refine each edge by 60 bisection steps on the test
    "the quartic at real :math:`w` has a non-real root pair". For :math:`\beta=1` the first interval
    starts at 0.

    Parameters
    ----------
    beta, rho : float
        Aspect and rank ratios (:math:`\beta<1` is transposed).
    zeta : float
        Noise variance :math:`\zeta>0`.

    Returns
    -------
    ndarray, shape (k, 2)
        Intervals :math:`[a_j,b_j]` with :math:`0\le a_1<b_1<a_2<\dots`; the support is their
        union and its mirror image.

    Examples
    --------
    >>> np.round(sv_support(2.0, 0.2, 0.3), 4)
    array([[0.2052, 1.0253],
           [1.4797, 4.2865]])
    """
    beta, rho, zeta = _check_brz(beta, rho, zeta)
    return np.array(_support(beta, rho, zeta), dtype=float).reshape(-1, 2)


@dataclass(frozen=True)
class SVQuadrature:
    """Quadrature rule on the positive half of the support of :math:`\\mu_\\zeta`.

    Attributes
    ----------
    x : ndarray
        Nodes (positive).
    weights : ndarray
        Weights, so that ``2 * sum(weights * f(x) * density)`` approximates
        :math:`\\int_{\\mathbb R} f\\,\\mu_\\zeta` for even ``f``.
    density : ndarray
        :math:`\\mu_\\zeta` at the nodes.
    support : ndarray, shape (k, 2)
        The support intervals.
    """

    x: np.ndarray
    weights: np.ndarray
    density: np.ndarray
    support: np.ndarray


def _panels(beta, rho, zeta):
    """Support intervals split at the near-cusps of the density."""
    panels = []
    for a, b in _support(beta, rho, zeta):
        cuts = sorted(c for c in _cusps(beta, rho, zeta) if a + 1e-9 < c < b - 1e-9)
        ends = [a, *cuts, b]
        panels.extend(zip(ends[:-1], ends[1:]))
    return panels


@functools.lru_cache(maxsize=8)
def _leggauss(n):
    return np.polynomial.legendre.leggauss(n)


@functools.lru_cache(maxsize=4096)
def _quadrature(beta, rho, zeta, n_nodes=_N_NODES):
    t, wt = _leggauss(n_nodes)
    theta = 0.5 * np.pi * (t + 1)
    wtheta = 0.5 * np.pi * wt
    support = np.array(_support(beta, rho, zeta)).reshape(-1, 2)
    xs, ws = [], []
    for a, b in _panels(beta, rho, zeta):
        xs.append(a + 0.5 * (b - a) * (1 - np.cos(theta)))
        ws.append(wtheta * 0.5 * (b - a) * np.sin(theta))
    x = np.concatenate(xs)
    w = np.concatenate(ws)
    dens = _density_pos(x, beta, rho, zeta)
    for arr in (x, w, dens):
        arr.setflags(write=False)
    return SVQuadrature(x=x, weights=w, density=dens, support=support)


def sv_quadrature(beta, rho, zeta, n_nodes=_N_NODES):
    r"""Quadrature nodes, weights and density values over the support of :math:`\mu_\zeta`.

    On each support interval :math:`[a,b]`, :math:`x=a+\frac{b-a}2(1-\cos\theta)` with an
    ``n_nodes``-point Gauss-Legendre rule in :math:`\theta\in[0,\pi]` (nodes cluster at the square-root
    edges). Results are cached per ``(beta, rho, zeta, n_nodes)``.

    Parameters
    ----------
    beta, rho : float
        Aspect and rank ratios (:math:`\beta<1` is transposed).
    zeta : float
        Noise variance :math:`\zeta>0`.
    n_nodes : int
        Nodes per support interval.

    Returns
    -------
    SVQuadrature
        Fields ``x``, ``weights``, ``density``, ``support``; for an even function ``f``,
        :math:`\int_{\mathbb R}f\mu_\zeta\approx2\sum_j w_jf(x_j)\mu_\zeta(x_j)`.

    Examples
    --------
    >>> q = sv_quadrature(2.0, 0.2, 0.3)
    >>> round(float(2 * np.sum(q.weights * q.density)), 6)       # mass
    1.0
    >>> round(float(2 * np.sum(q.weights * q.density * q.x**2) / np.sqrt(2.0)), 6)  # 1 + zeta
    1.3
    """
    beta, rho, zeta = _check_brz(beta, rho, zeta)
    return _quadrature(beta, rho, zeta, check_size(n_nodes, "n_nodes", minimum=2))


def sv_density(x, beta, rho, zeta):
    r"""Density :math:`\mu_\zeta(x)` of the symmetrised singular values of :math:`Y_\zeta/(dL)^{1/4}`.

    :math:`\mu_\zeta(x)=\frac{|x|}{\sqrt\beta}\frac1\pi\Im m(x^2/\sqrt\beta+i0)`, with the quartic root
    of largest imaginary part; set to zero outside the support (where that rule returns
    :math:`O(\varepsilon)` noise).

    Parameters
    ----------
    x : array_like
        Real points (any sign).
    beta, rho : float
        Aspect and rank ratios (:math:`\beta<1` is transposed).
    zeta : float
        Noise variance :math:`\zeta>0`.

    Returns
    -------
    ndarray
        :math:`\mu_\zeta(x)`, same shape as ``x``.

    Examples
    --------
    >>> np.round(sv_density([-1.0, 0.5, 3.0, 10.0], 2.0, 0.2, 0.3), 4)
    array([0.1679, 0.6179, 0.0398, 0.    ])
    """
    beta, rho, zeta = _check_brz(beta, rho, zeta)
    x = np.abs(check_array(x, "x"))
    support = np.array(_support(beta, rho, zeta)).reshape(-1, 2)
    inside = np.zeros(x.shape, dtype=bool)
    for a, b in support:
        inside |= (x >= a) & (x <= b)
    out = np.zeros(x.shape)
    # beta = 1: the density is flat at 0 (to 1e-8 below x = 1e-7) and the quartic degenerates at
    # w = 0, so evaluate at max(x, 1e-7)
    xin = np.maximum(x, _X_MIN)[inside]
    if xin.size:
        out[inside] = _density_pos(xin, beta, rho, zeta)
    return out


@functools.lru_cache(maxsize=256)
def _cdf_table(beta, rho, zeta, n_theta=2001):
    theta = np.linspace(0.0, np.pi, n_theta)
    xs, cs, total = [], [], 0.0
    for a, b in _panels(beta, rho, zeta):
        x = a + 0.5 * (b - a) * (1 - np.cos(theta))
        f = _density_pos(np.maximum(x, _X_MIN), beta, rho, zeta) * 0.5 * (b - a) * np.sin(theta)
        cum = np.concatenate([[0.0], np.cumsum(0.5 * (f[1:] + f[:-1]) * np.diff(theta))])
        xs.append(x)
        cs.append(total + cum)
        total += cum[-1]
    x, c = np.concatenate(xs), np.concatenate(cs)
    return x, c / (2 * total)  # normalised: total mass of the positive half is 1/2


def sv_cdf(x, beta, rho, zeta):
    r"""Distribution function of :math:`\mu_\zeta` (symmetric, so :math:`F(0)=1/2`).

    Cumulative trapezoid rule in the angle variable of each support panel (2001 points, error
    below :math:`10^{-6}`), interpolated. For the law of the singular values themselves (positive),
    use :math:`2F(x)-1`.

    Parameters
    ----------
    x, beta, rho, zeta
        As in :func:`sv_density`.

    Returns
    -------
    ndarray
        :math:`F(x)=\int_{-\infty}^x\mu_\zeta`.

    Examples
    --------
    >>> np.round(sv_cdf([-10.0, 0.0, 1.2, 10.0], 2.0, 0.2, 0.3), 4)
    array([0. , 0.5, 0.9, 1. ])
    """
    beta, rho, zeta = _check_brz(beta, rho, zeta)
    x = check_array(x, "x")
    xt, ct = _cdf_table(beta, rho, zeta)
    half = np.interp(np.abs(x), xt, ct, left=0.0, right=0.5)
    return 0.5 + np.sign(x) * half


def _hilbert_quadrature(s, beta, rho, zeta):
    q = _quadrature(beta, rho, zeta, _N_NODES)
    s = np.asarray(s, dtype=float)[..., None]
    return np.sum(q.weights * q.density * 2 * s / (s**2 - q.x**2), axis=-1)


def _hilbert_pos(s, beta, rho, zeta):
    """H at s >= 0 (beta >= 1): root inside the support, polished quadrature outside."""
    s_in = np.asarray(s, dtype=float)
    s = np.maximum(s_in, _X_MIN)  # H is odd and smooth at 0 (beta = 1): extrapolated linearly
    out = np.empty(s.shape)
    m = _m_physical(s, beta, rho, zeta)
    dens = s / np.sqrt(beta) * m.imag / np.pi
    in_support = np.zeros(s.shape, dtype=bool)
    for a, b in _support(beta, rho, zeta):
        in_support |= (s >= a) & (s <= b)
    inside = in_support & (dens > 1e-8)
    out[inside] = -s[inside] / np.sqrt(beta) * m.real[inside]
    outside = ~inside
    if np.any(outside):
        so = s[outside]
        hq = _hilbert_quadrature(so, beta, rho, zeta)
        # polish: the physical branch is real outside the support; take the real root closest to
        # the quadrature value (quadrature accuracy degrades very close to an edge).
        roots = _quartic_roots(so**2 / np.sqrt(beta) + 0j, beta, rho, zeta)
        cand = -so[:, None] / np.sqrt(beta) * roots.real
        cand = np.where(np.abs(roots.imag) < 1e-9 * (1 + np.abs(roots)), cand, np.inf)
        k = np.argmin(np.abs(cand - hq[:, None]), axis=1)
        best = cand[np.arange(so.size), k]
        ok = np.abs(best - hq) < 1e-2 * (1 + np.abs(hq))
        out[outside] = np.where(ok, best, hq)
    return out * s_in / s


def sv_hilbert(x, beta, rho, zeta):
    r"""Hilbert transform :math:`\mathcal H_\zeta(x)=\mathrm{p.v.}\int\mu_\zeta(t)\,dt/(x-t)`.

    Inside the support: :math:`-\frac{x}{\sqrt\beta}\Re m(x^2/\sqrt\beta+i0)`. Outside: the quadrature
    :math:`\int_0^\infty\mu_\zeta(t)\frac{2x}{x^2-t^2}dt`, polished by snapping to the nearest real
    root of the quartic (the physical branch is real there). Odd in ``x``.

    Parameters
    ----------
    x, beta, rho, zeta
        As in :func:`sv_density`.

    Returns
    -------
    ndarray
        :math:`\mathcal H_\zeta(x)`, same shape as ``x``.

    Examples
    --------
    >>> np.round(sv_hilbert([0.5, 1.2, 6.0], 2.0, 0.2, 0.3), 4)
    array([0.1694, 0.9121, 0.1781])
    """
    beta, rho, zeta = _check_brz(beta, rho, zeta)
    x = check_array(x, "x")
    return np.sign(x) * _hilbert_pos(np.abs(x), beta, rho, zeta)


def _shrink(s, beta, rho, zeta):
    h = _hilbert_pos(s, beta, rho, zeta)
    return s - 2 * zeta / np.sqrt(beta) * ((beta - 1) / (2 * s) + h)


def rie_shrinkage(s, beta, rho, zeta):
    r"""Rectangular RIE applied to singular values :math:`s` of :math:`Y/(dL)^{1/4}`.

    .. math::
        \hat s=s-\frac{2\zeta}{\sqrt\beta}\Big[\frac{\beta-1}{2s}+\mathcal H_\zeta(s)\Big]

    (after transposition, :math:`\beta\ge1`).

    Parameters
    ----------
    s : array_like
        Positive singular values of :math:`Y/(dL)^{1/4}`.
    beta, rho : float
        Aspect and rank ratios (:math:`\beta<1` is transposed).
    zeta : float
        Noise variance :math:`\zeta\ge0` (``zeta = 0`` returns ``s``).

    Returns
    -------
    ndarray
        Denoised singular values :math:`\hat s`.

    Examples
    --------
    >>> np.round(rie_shrinkage([0.5, 3.0], 2.0, 0.2, 0.3), 4)
    array([0.0039, 2.7839])
    """
    beta, rho, zeta = _check_brz(beta, rho, zeta, zeta_positive=False)
    s = check_array(s, "s", positive=True)
    if zeta == 0:
        return s.copy()
    return _shrink(s, beta, rho, zeta)


def rie_denoise(Y, zeta, rho):
    r"""Rectangular rotationally-invariant estimator of :math:`S^*` from :math:`Y=S^*+\sqrt\zeta Z`.

    With the SVD :math:`Y/(dL)^{1/4}=\sum_is_iu_iv_i^\top`, returns
    :math:`\hat S=(dL)^{1/4}\sum_i\hat s_iu_iv_i^\top` with :math:`\hat s_i` from :func:`rie_shrinkage`
    (:math:`\beta=L/d`; a matrix with :math:`L<d` is handled by transposition). The Hilbert transform
    uses the root of the quartic where :math:`\mu_\zeta(s_i)>10^{-8}` and the quadrature fallback
    (polished on the real root) for singular values outside the support.

    Parameters
    ----------
    Y : array_like, shape (d, L)
        Observation :math:`S^*+\sqrt\zeta Z`, :math:`S^*` of rank :math:`r=\rho d` with entries of
        variance one.
    zeta : float
        Noise variance :math:`\zeta\ge0` (``zeta = 0`` returns a copy of ``Y``).
    rho : float
        Rank ratio :math:`r/d` (``d`` = number of rows of ``Y``).

    Returns
    -------
    ndarray, shape (d, L)
        :math:`\hat S`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> d, L, r, zeta = 100, 200, 20, 0.3
    >>> S = rng.standard_normal((d, r)) @ rng.standard_normal((r, L)) / np.sqrt(r)
    >>> Y = S + np.sqrt(zeta) * rng.standard_normal((d, L))
    >>> err = np.mean((rie_denoise(Y, zeta, r / d) - S) ** 2)
    >>> bool(abs(err - denoising_mmse(2.0, 0.2, 0.3)) < 0.01)
    True
    """
    Y = check_array(Y, "Y", ndim=2)
    zeta = check_nonnegative(zeta, "zeta")
    rho = check_positive(rho, "rho")
    d, L = Y.shape
    if zeta == 0:
        return Y.copy()
    beta, rho_c = canonical_beta_rho(L / d, rho)
    transposed = L < d
    A = Y.T if transposed else Y
    scale = (d * L) ** 0.25
    u, s, vt = np.linalg.svd(A / scale, full_matrices=False)
    s_hat = _shrink(np.maximum(s, 1e-300), beta, rho_c, zeta)  # s = 0 only if Y is singular
    S_hat = scale * (u * s_hat) @ vt
    return S_hat.T if transposed else S_hat


def rie_error_monte_carlo(d, beta, rho, zeta, n_trials, rng=None, jobs=None):
    r"""Empirical RIE errors :math:`\frac1{dL}\|\hat S-S^*\|_F^2` on fresh draws.

    Parameters
    ----------
    d : int
        Number of rows; :math:`L=\mathrm{round}(\beta d)`, :math:`r=\mathrm{round}(\rho d)`.
    beta, rho : float
        Aspect and rank ratios.
    zeta : float
        Noise variance :math:`\zeta\ge0`.
    n_trials : int
        Number of independent draws.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None
        Root of the trials' generators: trial ``k`` draws :func:`sample_signal_plus_noise` with
        the ``k``-th child (:func:`seqrmt.ensemble.spawn_generators`).
    jobs : int or None
        Workers (see :func:`seqrmt.ensemble.n_jobs`); the result does not depend on them.

    Returns
    -------
    ndarray, shape (n_trials,)

    Examples
    --------
    >>> errs = rie_error_monte_carlo(60, 1.0, 0.5, 0.5, 2, rng=0)
    >>> bool(abs(errs.mean() - denoising_mmse(1.0, 0.5, 0.5)) < 0.03)
    True
    """
    d, L, r = _sizes(d, beta, rho)
    zeta = check_nonnegative(zeta, "zeta")
    n_trials = check_size(n_trials, "n_trials")
    return np.array(run_ensemble(_rie_error_draw, n_trials, check_seed(rng), args=(d, L, r, zeta),
                                 jobs=jobs, desc="trials"))


def _rie_error_draw(rng, d, L, r, zeta):
    """One trial of :func:`rie_error_monte_carlo`."""
    S, Y = sample_signal_plus_noise(d, L, r, zeta, rng)
    return float(np.mean((rie_denoise(Y, zeta, r / d) - S) ** 2))


def denoising_mmse_large_beta(rho, zeta):
    r"""Denoising MMSE in the limit :math:`\beta\to\infty` (closed form).

    .. math::
        \mathrm{mmse}_\infty(\zeta)=\zeta-\frac\zeta2\Big[\sqrt{1+\rho\big((\zeta+2)\rho\zeta+2\zeta
        +\rho-2\big)}-(\rho-1)-\zeta\rho\Big]

    Parameters
    ----------
    rho : float
        Rank ratio :math:`r/\min(d,L)>0`.
    zeta : float or array_like
        Noise variance(s) :math:`\zeta\ge0`.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> round(float(denoising_mmse_large_beta(0.2, 1.0)), 6)
    0.161484
    """
    rho = check_positive(rho, "rho")
    z = check_array(zeta, "zeta")
    if np.any(z < 0):
        raise ValueError("zeta must be non-negative")
    root = np.sqrt(1 + rho * ((z + 2) * rho * z + 2 * z + rho - 2))
    out = z - 0.5 * z * (root - (rho - 1) - z * rho)
    return float(out) if out.ndim == 0 else out


@functools.lru_cache(maxsize=65536)
def _mmse(beta, rho, zeta):
    q = _quadrature(beta, rho, zeta, _N_NODES)
    i3 = 2 * np.sum(q.weights * q.density**3)
    bracket = 4 * np.pi**2 / (3 * beta) * i3
    if beta > 1:
        i1 = 2 * np.sum(q.weights * q.density / q.x**2)
        bracket += (beta - 1) ** 2 / beta * i1
    return zeta - zeta**2 / np.sqrt(beta) * bracket


def denoising_mmse(beta, rho, zeta):
    r"""MMSE per entry of the rectangular RIE, :math:`\lim\frac1{dL}\mathbb E\|\hat S-S^*\|_F^2`.

    .. math::
        \mathrm{mmse}_{\beta,\rho}(\zeta)=\zeta-\frac{\zeta^2}{\sqrt\beta}\Big[\frac{(\beta-1)^2}{\beta}
        \int\frac{\mu_\zeta(x)}{x^2}dx+\frac{4\pi^2}{3\beta}\int\mu_\zeta(x)^3dx\Big]

    (quadrature of :func:`sv_quadrature`, about :math:`10^{-5}` absolute accuracy; cached).

    Parameters
    ----------
    beta : float
        Aspect ratio :math:`L/d>0`; ``np.inf`` gives :func:`denoising_mmse_large_beta`
        (then ``rho`` is :math:`r/\min(d,L)`).
    rho : float
        Rank ratio :math:`r/d>0`.
    zeta : float
        Noise variance :math:`\zeta\ge0`.

    Returns
    -------
    float

    Examples
    --------
    >>> round(denoising_mmse(1.0, 0.5, 0.5), 5)
    0.27674
    >>> round(denoising_mmse(0.5, 0.1, 0.3), 5) == round(denoising_mmse(2.0, 0.2, 0.3), 5)
    True
    """
    if isinstance(beta, (float, np.floating)) and np.isposinf(beta):
        return denoising_mmse_large_beta(rho, check_nonnegative(zeta, "zeta"))
    beta, rho, zeta = _check_brz(beta, rho, zeta, zeta_positive=False)
    if zeta == 0:
        return 0.0
    return float(_mmse(beta, rho, zeta))
