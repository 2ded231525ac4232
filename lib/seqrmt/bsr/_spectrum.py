r"""Singular values of signal plus noise, the rectangular RIE and its MMSE.

Setting: :math:`Y_\zeta=S^*+\sqrt\zeta\,Z` with :math:`S^*=U^*V^{*\top}/\sqrt r` (:math:`d\times L`,
entries of variance one), :math:`Z` iid :math:`N(0,1)`, :math:`\beta=L/d`, :math:`\rho=r/d`.
:math:`\mu_\zeta` is the **symmetrised** density of the singular values of :math:`Y_\zeta/(dL)^{1/4}`.

Every function accepts :math:`\beta<1` and transposes, :math:`(\beta,\rho)\to(1/\beta,\rho/\beta)`.
For :math:`\beta\ge1`, :math:`W=Y_\zeta Y_\zeta^\top/L` is a sample covariance with population
:math:`\frac1rU^*U^{*\top}+\zeta I`, whose Stieltjes transform :math:`m(w)` solves the quartic of
Silverstein's equation (Chapter 2.2); singular values and eigenvalues are related by
:math:`s^2=\sqrt\beta\,w`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .._validation import check_array, check_nonnegative, check_positive, check_size

_EPS = 1e-10  # imaginary part of w: m(w + i eps) is the boundary value m(w + i0) to ~1e-10
_N_NODES = 120  # Gauss-Legendre nodes per panel; 100 already agree with 800 to 3e-10
_X_MIN = 1e-7  # smallest x at which the quartic is solved (it degenerates at w = 0)


def canonical(beta, rho):
    """Validated (beta, rho) of the transposed problem when beta < 1 (then beta >= 1)."""
    beta = check_positive(beta, "beta")
    rho = check_positive(rho, "rho")
    # transposing (d, L, r) -> (L, d, r) maps L/d -> d/L and r/d -> r/L
    return (1.0 / beta, rho / beta) if beta < 1 else (beta, rho)


def _check(beta, rho, zeta, zeta_positive=True):
    """Canonical (beta, rho) and a checked zeta."""
    beta, rho = canonical(beta, rho)
    zeta = check_positive(zeta, "zeta") if zeta_positive else check_nonnegative(zeta, "zeta")
    return beta, rho, zeta


def _coefficients(w, beta, rho, zeta):
    """Coefficients a4..a0 of the quartic in m at the points w (beta >= 1)."""
    c, g = 1.0 / beta, 1.0 / rho
    # g zeta Xi^2 m^2 - g w Xi m^2 + (1 - g + zeta) Xi m - w m - 1 = 0 with Xi = 1 - c - c w m
    a4 = g * zeta * c**2 * w**2
    a3 = c * g * w * (w - 2 * zeta * (1 - c))
    a2 = g * zeta * (1 - c) ** 2 - w * (g * (1 - 2 * c) + c * (1 + zeta))
    a1 = (1 - c) * (1 - g + zeta) - w
    return a4, a3, a2, a1, -np.ones_like(a1)


def _quartic_roots(w, beta, rho, zeta):
    """All four roots m at each w, as eigenvalues of a batch of companion matrices; (..., 4)."""
    w = np.asarray(w)
    a4, a3, a2, a1, a0 = _coefficients(w, beta, rho, zeta)
    # companion matrix of the monic quartic: its eigenvalues are the roots
    comp = np.zeros(w.shape + (4, 4), dtype=w.dtype)
    comp[..., 0, :] = np.stack([-a3, -a2, -a1, -a0], axis=-1) / a4[..., None]
    comp[..., 1, 0] = comp[..., 2, 1] = comp[..., 3, 2] = 1.0
    return np.linalg.eigvals(comp)


def _quartic_roots_fast(w, beta, rho, zeta):
    """The roots by Ferrari's formulas (about 20x faster), polished by two Newton steps.

    Points where the polished residual is not small, or two roots nearly coincide (the physical
    branch would be ambiguous), fall back to the companion matrix.
    """
    w = np.asarray(w, dtype=complex)
    shape, w = w.shape, w.reshape(-1)
    coeffs = _coefficients(w, beta, rho, zeta)
    A, B, C, D = (a / coeffs[0] for a in coeffs[1:])
    # depressed quartic x^4 + p x^2 + q x + r for m = x - A/4
    p = B - 3 * A**2 / 8
    q = C - A * B / 2 + A**3 / 8
    r = D - A * C / 4 + A**2 * B / 16 - 3 * A**4 / 256
    # resolvent cubic t^3 + p t^2 + (p^2/4 - r) t - q^2/8 = 0, by Cardano
    ca, cb, cc = p, p**2 / 4 - r, -(q**2) / 8
    P = cb - ca**2 / 3
    Q = 2 * ca**3 / 27 - ca * cb / 3 + cc
    sq = np.sqrt((Q / 2) ** 2 + (P / 3) ** 3)
    U1, U2 = (-Q / 2 + sq) ** (1 / 3), (-Q / 2 - sq) ** (1 / 3)
    U = np.where(np.abs(U1) >= np.abs(U2), U1, U2)  # the larger cube root: no 0/0 below
    U = np.where(U == 0, 1e-300, U)
    om = np.exp(2j * np.pi / 3)
    ts = np.stack([U * om**k - P / (3 * U * om**k) - ca / 3 for k in range(3)], axis=-1)
    # any root t of the resolvent works; the largest keeps sqrt(2 t) away from zero
    t = np.take_along_axis(ts, np.argmax(np.abs(ts), axis=-1)[..., None], axis=-1)[..., 0]
    s2t = np.sqrt(2 * t)
    s2t = np.where(s2t == 0, 1e-300, s2t)
    x = []
    for sgn in (1, -1):  # x^4 + p x^2 + q x + r = (x^2 + sgn s2t x + ...)(x^2 - sgn s2t x + ...)
        inner = np.sqrt(-(2 * p + 2 * t + sgn * 2 * q / s2t))
        x += [(sgn * s2t + inner) / 2 - A / 4, (sgn * s2t - inner) / 2 - A / 4]
    x = np.stack(x, axis=-1)
    c = [a[:, None] for a in coeffs]

    def poly(x):
        return (((c[0] * x + c[1]) * x + c[2]) * x + c[3]) * x + c[4]

    for _ in range(2):  # Newton polish
        df = ((4 * c[0] * x + 3 * c[1]) * x + 2 * c[2]) * x + c[3]
        x = x - np.where(df != 0, poly(x) / np.where(df != 0, df, 1.0), 0.0)
    ax = np.abs(x)
    # a root is accepted when its residual is small against the size of the polynomial's terms
    scale = sum(np.abs(c[k]) * ax ** (4 - k) for k in range(5))
    bad = ~np.all(np.isfinite(x), axis=-1) | np.any(np.abs(poly(x)) > 1e-10 * scale, axis=-1)
    xs = np.sort_complex(np.where(np.isfinite(x), x, 0))
    bad |= np.abs(np.diff(xs, axis=-1)).min(axis=-1) < 1e-9 * (1 + ax.max(axis=-1))
    if np.any(bad):
        x[bad] = _quartic_roots(w[bad], beta, rho, zeta)
    return x.reshape(shape + (4,))


def _m_physical(x, beta, rho, zeta):
    """m(x^2/sqrt(beta) + i0): the root with the largest imaginary part (x > 0)."""
    w = np.asarray(x, dtype=float) ** 2 / np.sqrt(beta)
    w = w + 1j * _EPS * np.minimum(1.0, w)  # relative for small w (beta = 1: support reaches 0)
    roots = _quartic_roots_fast(w, beta, rho, zeta)
    # Im m > 0 on the upper half-plane picks the Stieltjes transform among the four branches
    return np.take_along_axis(roots, np.argmax(roots.imag, axis=-1)[..., None], axis=-1)[..., 0]


def _density_pos(x, beta, rho, zeta):
    """mu_zeta(x) = x / sqrt(beta) Im m(x^2 / sqrt(beta) + i0) / pi at x > 0 (change of variables)."""
    m = _m_physical(x, beta, rho, zeta)
    return np.maximum(0.0, x / np.sqrt(beta) * m.imag / np.pi)


def _inside(x, beta, rho, zeta):
    """True where the real quartic (eps = 0) has a non-real root pair: x is in the support."""
    roots = _quartic_roots(np.asarray(x, dtype=float) ** 2 / np.sqrt(beta), beta, rho, zeta)
    # round-off splits a double real root by ~1e-8 relative; a genuine pair is far larger
    return np.any(roots.imag > 1e-6 * np.abs(roots), axis=-1)


def _x_max(beta, rho, zeta):
    """A bound on the largest singular value (signal edge plus noise edge, with 30% margin)."""
    return 1.3 * ((1 + np.sqrt(rho)) * (np.sqrt(beta) + np.sqrt(rho)) / np.sqrt(rho)
                  + np.sqrt(zeta) * (1 + np.sqrt(beta))) / beta**0.25


@functools.lru_cache(maxsize=4096)
def _discriminant(beta, rho, zeta):
    """Discriminant of the quartic as a polynomial in w (increasing powers), w^k factor removed,
    and its roots."""
    c, g = 1.0 / beta, 1.0 / rho
    # the coefficients a4..a0 of the quartic as polynomials in w (increasing powers)
    base = dict(a=[0.0, 0.0, g * zeta * c**2], b=[0.0, -2 * c * g * zeta * (1 - c), c * g],
                c=[g * zeta * (1 - c) ** 2, -(g * (1 - 2 * c) + c * (1 + zeta))],
                d=[(1 - c) * (1 - g + zeta), -1.0], e=[-1.0])
    powers = {(k, 0): np.ones(1) for k in base}
    for k, v in base.items():
        for n in range(1, 5):
            powers[k, n] = np.convolve(powers[k, n - 1], v)
    # the 16 monomials of the discriminant of a m^4 + b m^3 + c m^2 + d m + e
    terms = [(256, "aaaeee"), (-192, "aabdee"), (-128, "aaccee"), (144, "aacdde"),
             (-27, "aadddd"), (144, "abbcee"), (-6, "abbdde"), (-80, "abccde"), (18, "abcddd"),
             (16, "acccce"), (-4, "acccdd"), (-27, "bbbbee"), (18, "bbbcde"), (-4, "bbbddd"),
             (-4, "bbccce"), (1, "bbccdd")]
    out = np.zeros(13)
    for k, word in terms:  # a product of powers of at most four coefficients
        prod = functools.reduce(np.convolve, (powers[ch, word.count(ch)] for ch in set(word)))
        out[:prod.size] += k * prod
    # symbolically (sympy) the coefficients of w^0..w^3 vanish for beta > 1 and those of
    # w^0..w^5 for beta = 1; numerically they are round-off that would fake roots near w = 0
    disc = np.trim_zeros(out[6 if beta == 1.0 else 4:], "b")
    return disc, (np.polynomial.polynomial.polyroots(disc) if disc.size > 1 else np.array([]))


@functools.lru_cache(maxsize=4096)
def _support(beta, rho, zeta):
    """Support intervals (x > 0): candidate edges from the discriminant, classified by midpoints."""
    disc, roots = _discriminant(beta, rho, zeta)
    xmax = 2 * _x_max(beta, rho, zeta)
    # an edge is where two real roots of the quartic collide: a positive real root of the disc.
    w_c = roots.real[(np.abs(roots.imag) <= 1e-8 * (1 + np.abs(roots))) & (roots.real > 0)]
    x_c = np.sqrt(np.sqrt(beta) * w_c)
    cand = np.unique(np.concatenate([[0.0], x_c[x_c < xmax], [xmax]]))
    inside = _inside(0.5 * (cand[1:] + cand[:-1]), beta, rho, zeta)
    # [0, first candidate] is inside iff beta = 1 (for beta > 1 the smallest singular value stays
    # away from 0; near w = 0 the companion matrix is ill-conditioned, so do not test there)
    inside[0] = beta == 1.0
    intervals = []
    # a discriminant root between two inside intervals is a cusp, not an edge: merge them
    for k in np.flatnonzero(inside):
        if intervals and intervals[-1][1] == cand[k]:
            intervals[-1][1] = cand[k + 1]  # merge across a candidate that is not an edge
        else:
            intervals.append([cand[k], cand[k + 1]])
    ivs = np.array(intervals)
    # polish the edges by Newton steps on the discriminant (in w); a step is only a polish
    dpoly = np.polynomial.polynomial.polyder(disc)
    w_e = ivs**2 / np.sqrt(beta)
    for _ in range(3):
        f = np.polynomial.polynomial.polyval(w_e, disc)
        fp = np.polynomial.polynomial.polyval(w_e, dpoly)
        step = np.where((fp != 0) & (ivs > 0), f / np.where(fp != 0, fp, 1.0), 0.0)
        w_e = np.where(np.abs(step) < 1e-6 * (1 + w_e), w_e - step, w_e)
    return tuple(map(tuple, np.sqrt(np.sqrt(beta) * w_e)))


@functools.lru_cache(maxsize=4096)
def _panels(beta, rho, zeta):
    """Support intervals split where a complex root pair of the disc nears the axis (a cusp)."""
    _, roots = _discriminant(beta, rho, zeta)
    near = (roots.real > 0) & (np.abs(roots.imag) > 1e-8 * np.abs(roots)) & (
        np.abs(roots.imag) < 0.2 * np.abs(roots))
    cusps = np.sqrt(np.sqrt(beta) * roots.real[near])
    panels = []
    for a, b in _support(beta, rho, zeta):
        # a narrow dip of the density then sits at a panel end, where the nodes cluster
        ends = [a, *sorted(c for c in cusps if a + 1e-9 < c < b - 1e-9), b]
        panels.extend(zip(ends[:-1], ends[1:]))
    return tuple(panels)


@dataclass(frozen=True)
class SVQuadrature:
    """Quadrature rule on the positive half of the support of :math:`\\mu_\\zeta`.

    ``2 * sum(weights * f(x) * density)`` approximates :math:`\\int_{\\mathbb R}f\\mu_\\zeta` for
    an even ``f``; ``support`` holds the intervals :math:`[a_j,b_j]` (shape (k, 2)).
    """

    x: np.ndarray
    weights: np.ndarray
    density: np.ndarray
    support: np.ndarray


@functools.lru_cache(maxsize=16)
def _angle_rule(n_nodes):
    """Gauss-Legendre nodes and weights on [0, pi], with cos and sin of the nodes."""
    t, wt = np.polynomial.legendre.leggauss(n_nodes)
    theta = 0.5 * np.pi * (t + 1)
    return 0.5 * (1 - np.cos(theta)), 0.5 * np.pi * wt * 0.5 * np.sin(theta)


def interval_rule(intervals, n_nodes):
    """Nodes and weights on a union of intervals [a, b], clustered at the ends.

    x = a + (b - a)(1 - cos theta)/2 with Gauss-Legendre in theta: a density with square-root
    edges becomes smooth in theta, so the rule converges spectrally.
    """
    u, v = _angle_rule(n_nodes)
    x = np.concatenate([a + (b - a) * u for a, b in intervals])
    w = np.concatenate([(b - a) * v for a, b in intervals])
    return x, w


@functools.lru_cache(maxsize=4096)
def quadrature(beta, rho, zeta, n_nodes=_N_NODES):
    """The cached quadrature rule of :func:`sv_quadrature` for canonical (beta, rho), zeta > 0."""
    x, w = interval_rule(_panels(beta, rho, zeta), n_nodes)
    # the density is evaluated once at the nodes: every integral over mu_zeta reuses it
    out = SVQuadrature(x=x, weights=w, density=_density_pos(x, beta, rho, zeta),
                       support=np.array(_support(beta, rho, zeta)).reshape(-1, 2))
    for arr in (out.x, out.weights, out.density, out.support):
        arr.setflags(write=False)  # shared by the cache
    return out


def sv_quadrature(beta, rho, zeta, n_nodes=_N_NODES):
    r"""Quadrature nodes, weights and density values over the support of :math:`\mu_\zeta`.

    The support (positive half) is found without thresholds: its edges are the points where two
    real roots of the quartic collide, i.e. positive real roots of its discriminant, and each
    interval between candidates is classified by one test point. On each interval :math:`[a,b]`,
    :math:`x=a+\frac{b-a}2(1-\cos\theta)` with an ``n_nodes``-point Gauss-Legendre rule in
    :math:`\theta\in[0,\pi]` (the nodes cluster at the square-root edges). Cached.

    Parameters
    ----------
    beta, rho : float
        Aspect ratio :math:`L/d` and rank ratio :math:`r/d` (:math:`\beta<1` is transposed).
    zeta : float
        Noise variance :math:`\zeta>0`.
    n_nodes : int
        Nodes per support interval (intervals are also split at near-cusps of the density).

    Returns
    -------
    SVQuadrature
        Fields ``x``, ``weights``, ``density`` and ``support`` (the intervals, shape (k, 2));
        :math:`\int_{\mathbb R}f\mu_\zeta\approx2\sum_jw_jf(x_j)\mu_\zeta(x_j)` for even ``f``.

    Examples
    --------
    >>> q = sv_quadrature(2.0, 0.2, 0.3)
    >>> np.round(q.support, 4)            # two bulks: d - r noise, r signal singular values
    array([[0.2052, 1.0253],
           [1.4797, 4.2865]])
    >>> round(float(2 * np.sum(q.weights * q.density)), 8)                            # mass
    1.0
    >>> round(float(2 * np.sum(q.weights * q.density * q.x**2) / np.sqrt(2.0)), 8)   # 1 + zeta
    1.3
    """
    beta, rho, zeta = _check(beta, rho, zeta)
    return quadrature(beta, rho, zeta, check_size(n_nodes, "n_nodes", minimum=2))


def sv_density(x, beta, rho, zeta):
    r"""Density :math:`\mu_\zeta(x)` of the symmetrised singular values of :math:`Y_\zeta/(dL)^{1/4}`.

    :math:`\mu_\zeta(x)=\frac{|x|}{\sqrt\beta}\frac1\pi\Im m(x^2/\sqrt\beta+i0)`, with the root of the
    quartic of largest imaginary part (Chapter 2.2); zero outside the support of
    :func:`sv_quadrature`, where that rule would return :math:`O(10^{-10})` noise.

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
        :math:`\mu_\zeta(x)`, the shape of ``x``.

    Examples
    --------
    >>> np.round(sv_density([-1.0, 0.5, 3.0, 10.0], 2.0, 0.2, 0.3), 4)
    array([0.1679, 0.6179, 0.0398, 0.    ])
    """
    beta, rho, zeta = _check(beta, rho, zeta)
    x = np.abs(check_array(x, "x"))
    inside = np.zeros(x.shape, dtype=bool)
    for a, b in _support(beta, rho, zeta):
        inside |= (x >= a) & (x <= b)
    out = np.zeros(x.shape)
    if inside.any():
        # beta = 1: the density is flat at 0 and the quartic degenerates at w = 0
        out[inside] = _density_pos(np.maximum(x, _X_MIN)[inside], beta, rho, zeta)
    return out


def _hilbert_pos(s, beta, rho, zeta):
    """H at s >= 0 (beta >= 1): from the root inside the support, polished quadrature outside."""
    s_in = np.asarray(s, dtype=float)
    s = np.maximum(s_in, _X_MIN)  # H is odd and smooth at 0 (beta = 1): linear there
    out = np.empty(s.shape)
    m = _m_physical(s, beta, rho, zeta)
    in_support = np.zeros(s.shape, dtype=bool)
    for a, b in _support(beta, rho, zeta):
        in_support |= (s >= a) & (s <= b)
    inside = in_support & (s / np.sqrt(beta) * m.imag / np.pi > 1e-8)
    # G(z) = int mu(t) / (z - t) dt = -z m(z^2 / sqrt(beta)) / sqrt(beta), and H = Re G(x + i0)
    out[inside] = -s[inside] / np.sqrt(beta) * m.real[inside]
    if not inside.all():
        so = s[~inside]
        q = quadrature(beta, rho, zeta)
        # p.v. integral over the symmetric density: 1/(s - t) + 1/(s + t) = 2 s / (s^2 - t^2)
        hq = np.sum(q.weights * q.density * 2 * so[:, None] / (so[:, None] ** 2 - q.x**2), axis=1)
        # outside the support m is real: snap to the real root nearest the quadrature value
        # (whose accuracy degrades very close to an edge)
        roots = _quartic_roots(so**2 / np.sqrt(beta) + 0j, beta, rho, zeta)
        cand = -so[:, None] / np.sqrt(beta) * roots.real
        cand = np.where(np.abs(roots.imag) < 1e-9 * (1 + np.abs(roots)), cand, np.inf)
        best = cand[np.arange(so.size), np.argmin(np.abs(cand - hq[:, None]), axis=1)]
        out[~inside] = np.where(np.abs(best - hq) < 1e-2 * (1 + np.abs(hq)), best, hq)
    return out * s_in / s


def sv_hilbert(x, beta, rho, zeta):
    r"""Hilbert transform :math:`\mathcal H_\zeta(x)=\mathrm{p.v.}\int\mu_\zeta(t)\,dt/(x-t)`.

    Inside the support :math:`\mathcal H_\zeta(x)=-\frac{x}{\sqrt\beta}\Re m(x^2/\sqrt\beta+i0)`;
    outside (a finite-size singular value beyond an edge), the quadrature
    :math:`\int_0^\infty\mu_\zeta(t)\frac{2x}{x^2-t^2}dt`, polished on the nearest real root of the
    quartic. Odd in ``x``.

    Parameters
    ----------
    x, beta, rho, zeta
        As in :func:`sv_density`.

    Returns
    -------
    ndarray
        :math:`\mathcal H_\zeta(x)`, the shape of ``x``.

    Examples
    --------
    >>> np.round(sv_hilbert([0.5, 1.2, 6.0], 2.0, 0.2, 0.3), 4)
    array([0.1694, 0.9121, 0.1781])
    >>> q = sv_quadrature(2.0, 0.2, 0.3)       # int x H(x) mu(x) dx = 1/2 for any density
    >>> round(float(2 * np.sum(q.weights * q.density * q.x * sv_hilbert(q.x, 2.0, 0.2, 0.3))), 8)
    0.5
    """
    beta, rho, zeta = _check(beta, rho, zeta)
    x = check_array(x, "x")
    return np.sign(x) * _hilbert_pos(np.abs(x), beta, rho, zeta)


def shrink(s, beta, rho, zeta):
    """RIE shrinkage s - (2 zeta / sqrt(beta)) [(beta - 1) / (2 s) + H(s)] (canonical beta)."""
    # the (beta - 1)/(2 s) term comes from the L - d zero eigenvalues of the block matrix
    return s - 2 * zeta / np.sqrt(beta) * ((beta - 1) / (2 * s) + _hilbert_pos(s, beta, rho, zeta))


def rie_denoise(Y, zeta, rho):
    r"""Rectangular rotationally-invariant estimator (RIE) of :math:`S^*` from :math:`Y=S^*+\sqrt\zeta Z`.

    With the SVD :math:`Y/(dL)^{1/4}=\sum_is_iu_iv_i^\top` and :math:`\beta=L/d\ge1`,

    .. math::

        \hat S=(dL)^{1/4}\sum_i\hat s(s_i)\,u_iv_i^\top,\qquad
        \hat s(s)=s-\frac{2\zeta}{\sqrt\beta}\Big[\frac{\beta-1}{2s}+\mathcal H_\zeta(s)\Big],

    with :math:`\mathcal H_\zeta` of :func:`sv_hilbert` (a matrix with :math:`L<d` is transposed).
    Its error per entry tends to :func:`denoising_mmse` (Troiani et al. 2022).

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
    beta, rho_c = canonical(L / d, rho)
    # the formula is for d <= L: a tall matrix is denoised through its transpose
    A = Y.T if L < d else Y
    scale = (d * L) ** 0.25  # the singular values of Y / (dL)^(1/4) are of order one
    u, s, vt = np.linalg.svd(A / scale, full_matrices=False)
    S_hat = scale * (u * shrink(np.maximum(s, 1e-300), beta, rho_c, zeta)) @ vt
    return S_hat.T if L < d else S_hat


def denoising_mmse_large_beta(rho, zeta):
    r"""Denoising MMSE in the limit :math:`\beta\to\infty` (closed form).

    .. math::
        \mathrm{mmse}_\infty(\zeta)=\zeta\big(1-\zeta g_{1/\rho}(-\zeta)\big)=\zeta-\frac\zeta2\Big[
        \sqrt{1+\rho\big((\zeta+2)\rho\zeta+2\zeta+\rho-2\big)}-(\rho-1)-\zeta\rho\Big],

    with :math:`g_{1/\rho}` the Marchenko-Pastur Stieltjes transform of ratio :math:`1/\rho`
    (the derivation is in Chapter 2.3).

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
    >>> round(float(denoising_mmse_large_beta(0.2, 1e-8) / 1e-8), 6)    # slope alpha_PR -> rho
    0.2
    """
    rho = check_positive(rho, "rho")
    z = check_array(zeta, "zeta")
    if np.any(z < 0):
        raise ValueError("zeta must be non-negative")
    # zeta (1 - zeta g(-zeta)), g the Marchenko-Pastur transform of ratio 1/rho: the positive
    # root of its quadratic, written out
    root = np.sqrt(1 + rho * ((z + 2) * rho * z + 2 * z + rho - 2))
    out = z - 0.5 * z * (root - (rho - 1) - z * rho)
    return float(out) if out.ndim == 0 else out


@functools.lru_cache(maxsize=65536)
def mmse_value(beta, rho, zeta):
    """The formula of :func:`denoising_mmse` for canonical (beta, rho) and zeta > 0 (cached)."""
    q = quadrature(beta, rho, zeta)
    # mmse = zeta - zeta^2 / sqrt(beta) [ ... ] (thm-p2-mmse): the two Hilbert-transform terms
    # of int s_hat^2 mu reduce to int mu^3 and int mu / x^2 by three identities
    # int mu^3 and int mu / x^2 over the symmetric density: twice the positive half
    bracket = 4 * np.pi**2 / (3 * beta) * 2 * np.sum(q.weights * q.density**3)
    if beta > 1:  # absent for square matrices
        bracket += (beta - 1) ** 2 / beta * 2 * np.sum(q.weights * q.density / q.x**2)
    return float(zeta - zeta**2 / np.sqrt(beta) * bracket)


def denoising_mmse(beta, rho, zeta):
    r"""MMSE per entry of the rectangular RIE, :math:`\lim\frac1{dL}\mathbb E\|\hat S-S^*\|_F^2`.

    .. math::
        \mathrm{mmse}_{\beta,\rho}(\zeta)=\zeta-\frac{\zeta^2}{\sqrt\beta}\Big[\frac{(\beta-1)^2}{\beta}
        \int\frac{\mu_\zeta(x)}{x^2}dx+\frac{4\pi^2}{3\beta}\int\mu_\zeta(x)^3dx\Big]

    by the quadrature of :func:`sv_quadrature` (about :math:`10^{-9}` absolute; cached).

    Parameters
    ----------
    beta : float
        Aspect ratio :math:`L/d>0`; ``np.inf`` gives :func:`denoising_mmse_large_beta` (then
        ``rho`` is :math:`r/\min(d,L)`).
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
    >>> round(denoising_mmse(1.0, 0.2, 1e-4) / 1e-4, 4)      # small-noise slope: alpha_PR
    0.36
    >>> denoising_mmse(0.5, 0.1, 0.3) == denoising_mmse(2.0, 0.2, 0.3)   # transposition
    True
    """
    if isinstance(beta, (float, np.floating)) and np.isposinf(beta):
        return denoising_mmse_large_beta(rho, check_nonnegative(zeta, "zeta"))
    beta, rho, zeta = _check(beta, rho, zeta, zeta_positive=False)
    return 0.0 if zeta == 0 else mmse_value(beta, rho, zeta)
