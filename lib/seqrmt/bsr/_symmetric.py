r"""The symmetric variant: Wishart plus GOE, its RIE and the quadratic network of extensive width.

Setting: :math:`S^*=WW^\top/\sqrt{md}` with :math:`W\in\mathbb R^{d\times m}` iid :math:`N(0,1)`,
:math:`\kappa=m/d` (spectrum :math:`\sqrt\kappa` times a Marchenko-Pastur law of ratio
:math:`1/\kappa`), observed as :math:`Y=S^*+\sqrt\zeta\,Z` with :math:`Z` a GOE matrix (semicircle
of variance one). With :math:`g(z)=\int\frac{\mu(d\lambda)}{\lambda-z}`, the free convolution with
the semicircle is the subordination :math:`g_Y(z)=g_S(z+\zeta g_Y(z))`; inserted in the
Marchenko-Pastur quadratic :math:`\eta wg^2-(1-\eta-w)g+1=0` (unit scale, :math:`\eta=1/\kappa`)
it gives the cubic

.. math::
    \eta\zeta' g^3+(\eta w+\zeta')g^2-(1-\eta-w)g+1=0,\qquad w=z/\sqrt\kappa,\ \zeta'=\zeta/\kappa,

for :math:`\sqrt\kappa\,g_Y(z)`. The RIE is :math:`\xi(\lambda)=\lambda+2\zeta\,\Re g_Y(\lambda+i0)`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .._validation import check_array, check_nonnegative, check_positive, check_size
from ._spectrum import interval_rule
from ._theory import scan_grid, solve_zeta

_LIFT = 1e-9  # smallest Im z: on the real axis outside the support all three roots are real
_N_NODES = 200  # Gauss-Legendre nodes per support interval (200 and 800 agree to ~1e-13)


def _cubic_roots(w, eta, zp):
    """Roots of eta zp g^3 + (eta w + zp) g^2 - (1 - eta - w) g + 1 (batched companion matrices)."""
    # companion matrix: first row minus the lower coefficients over the leading one, eta zp
    C = np.zeros(w.shape + (3, 3), dtype=complex)
    C[..., 0, 0] = -(eta * w + zp) / (eta * zp)
    C[..., 0, 1] = (1 - eta - w) / (eta * zp)
    C[..., 0, 2] = -1 / (eta * zp)
    C[..., 1, 0] = C[..., 2, 1] = 1
    return np.linalg.eigvals(C)


def _stieltjes(z, kappa, zeta):
    """g_Y(z) for Im z >= 0 (real points are lifted to x + 1e-9 i)."""
    s = np.sqrt(kappa)  # S* = sqrt(kappa) x (unit Marchenko-Pastur): the cubic is in z / s
    z = np.asarray(z, dtype=complex)
    z = z.real + 1j * np.maximum(z.imag, _LIFT)  # the physical root is then the one with Im > 0
    roots = _cubic_roots(z / s, 1 / kappa, zeta / kappa)
    pick = np.argmax(roots.imag, axis=-1)[..., None]  # the one root in the upper half-plane
    return np.take_along_axis(roots, pick, axis=-1)[..., 0] / s


def symmetric_stieltjes(z, kappa, zeta):
    r"""Stieltjes transform :math:`g_Y(z)=\int\frac{\mu_Y(d\lambda)}{\lambda-z}` of Wishart plus GOE.

    The root of the cubic (module docstring) with the largest imaginary part; exactly one root has
    :math:`\Im g>0` when :math:`\Im z>0`. Real points are lifted to :math:`x+10^{-9}i`: on the axis
    outside the support the three roots are real and only that lift tells the physical one. The
    density of :math:`Y` is :math:`\frac1\pi\Im g_Y(x+i0)`.

    Parameters
    ----------
    z : array_like of complex
        Points with :math:`\Im z\ge0` (real points give the boundary value :math:`g_Y(x+i0)`).
    kappa : float
        Width ratio :math:`m/d>0`.
    zeta : float
        Noise variance :math:`\zeta>0`.

    Returns
    -------
    numpy.ndarray of complex

    Examples
    --------
    The same transform by the subordination iteration of :mod:`seqrmt.rmt`:

    >>> from seqrmt import rmt
    >>> z = np.array([0.5 + 0.3j])
    >>> g_s = lambda w: rmt.mp_stieltjes(w / np.sqrt(2.0), 0.5) / np.sqrt(2.0)
    >>> g = rmt.semicircle_free_convolution(g_s, 0.3, z)
    >>> bool(abs(symmetric_stieltjes(z, 2.0, 0.3)[0] - g[0]) < 1e-8)
    True
    >>> x = np.linspace(-3.0, 8.0, 4001)                  # the density has mass one
    >>> round(float(np.trapezoid(symmetric_stieltjes(x, 2.0, 0.3).imag / np.pi, x)), 4)
    1.0
    """
    z = check_array(z, "z", allow_complex=True).astype(complex)
    if np.any(z.imag < 0):
        raise ValueError("z must lie in the closed upper half-plane (Im z >= 0)")
    return _stieltjes(z, check_positive(kappa, "kappa"), check_positive(zeta, "zeta"))


@functools.lru_cache(maxsize=4096)
def _support(kappa, zeta):
    """Support intervals of mu_Y, in z: where the cubic's discriminant in w is negative."""
    eta, zp = 1 / kappa, zeta / kappa
    P = np.polynomial.Polynomial
    a, b, c, d = P([eta * zp]), P([zp, eta]), P([eta - 1, 1.0]), P([1.0])
    # a cubic with real coefficients has a complex root pair (w in the support) iff disc < 0
    disc = 18 * a * b * c * d - 4 * b**3 * d + b**2 * c**2 - 4 * a * c**3 - 27 * a**2 * d**2
    roots = disc.roots()
    w = np.sort(roots.real[np.abs(roots.imag) <= 1e-9 * (1 + np.abs(roots))])
    # double roots (cusps) do not change the sign: test every gap between candidates
    inside = disc(0.5 * (w[1:] + w[:-1])) < 0
    intervals = []
    for k in np.flatnonzero(inside):
        if intervals and intervals[-1][1] == w[k]:
            intervals[-1][1] = w[k + 1]
        else:
            intervals.append([w[k], w[k + 1]])
    return np.sqrt(kappa) * np.array(intervals)  # z = sqrt(kappa) w


@functools.lru_cache(maxsize=4096)
def _mmse(kappa, zeta):
    """mmse^sym_kappa(zeta) by Gauss-Legendre in the angle variable of each support interval."""
    x, w = interval_rule(_support(kappa, zeta), _N_NODES)
    g = _stieltjes(x, kappa, zeta)
    mu = np.clip(g.imag / np.pi, 0.0, None)  # Stieltjes inversion: density = Im g(x + i0) / pi
    if zeta <= 1:
        # zeta - (4 pi^2 / 3) zeta^2 int mu^3: both terms are O(zeta), no cancellation
        return float(zeta - 4 * np.pi**2 / 3 * zeta**2 * np.sum(w * mu**3))
    # for zeta > 1 the form above subtracts two terms of order zeta to leave one of order one;
    # instead use Pythagoras, mmse = (1/d) E|S*|^2 - (1/d) E|S_hat|^2 = (kappa + 1) - int xi^2 mu,
    # where kappa + 1 is the second moment of sqrt(kappa) MP(1/kappa)
    xi = x + 2 * zeta * g.real  # the symmetric RIE (Stein's lemma on the resolvent of Y)
    return float(kappa + 1 - np.sum(w * mu * xi**2))


def symmetric_mmse(kappa, zeta):
    r"""MSE per entry of the symmetric RIE, :math:`\mathrm{mmse}^{\rm sym}_\kappa(\zeta)`.

    .. math::
        \mathrm{mmse}^{\rm sym}_\kappa(\zeta)=\zeta-\frac{4\pi^2}3\zeta^2\int\mu_Y(x)^3dx
        =(\kappa+1)-\int\xi(x)^2\mu_Y(x)\,dx,

    the first form for :math:`\zeta\le1`, the second (no cancellation between terms of order
    :math:`\zeta`) above; Gauss-Legendre nodes in the angle variable of each support interval,
    whose edges are the real roots of the cubic's discriminant. Cached. It behaves like
    :math:`(2\kappa-\kappa^2)\zeta` (:math:`\zeta` for :math:`\kappa\ge1`) as :math:`\zeta\to0` and
    tends to 1 (the variance per entry of :math:`S^*` about its mean :math:`\sqrt\kappa I`) as
    :math:`\zeta\to\infty`.

    Parameters
    ----------
    kappa : float
        Width ratio :math:`m/d>0`.
    zeta : float or array_like
        Noise variance(s) :math:`\zeta\ge0`.

    Returns
    -------
    float or ndarray
        A float for a scalar ``zeta``.

    Examples
    --------
    >>> round(float(symmetric_mmse(0.5, 1e-4) / 1e-4), 3)   # slope 2 kappa - kappa^2
    0.75
    >>> round(float(symmetric_mmse(0.5, 0.3)), 4)
    0.1689
    """
    kappa = check_positive(kappa, "kappa")
    z = check_array(zeta, "zeta")
    if np.any(z < 0):
        raise ValueError("zeta must be non-negative")
    out = np.array([_mmse(kappa, float(v)) if v > 0 else 0.0 for v in z.ravel()]).reshape(z.shape)
    return float(out) if out.ndim == 0 else out


def quadratic_network_alpha_pr(kappa):
    r"""Perfect-recovery threshold :math:`n/d^2` of the quadratic network: :math:`\kappa-\kappa^2/2`.

    A symmetric rank-:math:`m` matrix has :math:`md-m(m-1)/2` degrees of freedom; for
    :math:`\kappa\ge1` the threshold is :math:`1/2`.

    Parameters
    ----------
    kappa : float
        Width ratio :math:`m/d>0`.

    Returns
    -------
    float

    Examples
    --------
    >>> quadratic_network_alpha_pr(0.5), quadratic_network_alpha_pr(2.0)
    (0.375, 0.5)
    """
    kappa = check_positive(kappa, "kappa")
    return 0.5 if kappa >= 1 else kappa - kappa**2 / 2


@dataclass(frozen=True)
class QuadraticNetworkResult:
    """Bayes-optimal solution of the quadratic network (arrays over ``alpha``).

    Fields: ``zeta`` (effective noise, 0 at perfect recovery), ``mmse``
    (:math:`\\mathrm{mmse}^{\\rm sym}_\\kappa(\\zeta)=2\\alpha\\zeta-\\Delta/2`), ``test_error``
    (:math:`\\Delta+2\\,\\mathrm{MMSE}_S`), ``alpha``, ``kappa``, ``delta``.
    """

    zeta: np.ndarray
    mmse: np.ndarray
    test_error: np.ndarray
    alpha: np.ndarray
    kappa: float
    delta: float


def quadratic_network_bayes_optimal(alphas, kappa, delta=0.0, tol=1e-10, max_iter=200):
    r"""Bayes-optimal error of the extensive-width quadratic network.

    Largest root of :math:`4\alpha\zeta=\Delta+2\,\mathrm{mmse}^{\rm sym}_\kappa(\zeta)`, i.e. the
    equation :math:`\alpha'\zeta=\Delta'+\mathrm{mmse}(\zeta)` of :func:`bayes_optimal` with
    :math:`\alpha'=2\alpha`, :math:`\Delta'=\Delta/2`, solved by the same downward scan and Brent
    polish (one shared grid of :math:`\zeta`).

    Parameters
    ----------
    alphas : array_like
        Sample ratios :math:`n/d^2>0` (1-D).
    kappa : float
        Width ratio :math:`m/d>0`.
    delta, tol, max_iter
        Label-noise variance :math:`\Delta\ge0` and the root finder's settings, as in
        :func:`bayes_optimal`.

    Returns
    -------
    QuadraticNetworkResult

    Examples
    --------
    >>> res = quadratic_network_bayes_optimal([0.1, 0.4], 0.5)
    >>> bool(0 < res.mmse[0] < 1), float(res.mmse[1])   # above alpha_PR = 0.375
    (True, 0.0)
    """
    alphas = check_array(alphas, "alphas", ndim=1, positive=True)
    kappa = check_positive(kappa, "kappa")
    delta = check_nonnegative(delta, "delta")
    tol = check_positive(tol, "tol")
    max_iter = check_size(max_iter, "max_iter")
    a2, d2 = 2 * alphas, delta / 2  # 4 alpha zeta = Delta + 2 mmse, divided by two
    a_pr = 2 * quadratic_network_alpha_pr(kappa)  # the slope of mmse^sym at 0 is 2 kappa - kappa^2
    grid = scan_grid((1 + d2) / a2.min(), 1e-8 * (1 + d2) / a2.max())
    m_grid = symmetric_mmse(kappa, grid) if (delta > 0 or np.any(a2 < a_pr)) else None
    zetas = np.array([solve_zeta(a, d2, lambda z: symmetric_mmse(kappa, z), a_pr, grid, m_grid,
                                 tol, max_iter) for a in a2])
    mmse = np.maximum(a2 * zetas - d2, 0.0)
    return QuadraticNetworkResult(zeta=zetas, mmse=mmse, test_error=delta + 2 * mmse,
                                  alpha=alphas, kappa=kappa, delta=delta)
