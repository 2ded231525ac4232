r"""The symmetric variant: Wishart plus GOE, its RIE and the quadratic network of extensive width.

Setting: :math:`S^*=WW^\top/\sqrt{md}` with :math:`W\in\RR^{d\times m}` iid :math:`N(0,1)`,
:math:`\kappa=m/d` (off-diagonal entries of variance :math:`1/d`; spectrum :math:`\sqrt\kappa` times
a Marchenko-Pastur law of ratio :math:`1/\kappa`), observed as :math:`Y=S^*+\sqrt\zeta\,Z` with
:math:`Z` a GOE matrix (semicircle of variance one, off-diagonal entries of variance :math:`1/d`).

Conventions (those of Part 1, ``def-stieltjes``): :math:`g(z)=\int\frac{\mu(d\lambda)}{\lambda-z}`,
so the free convolution with a semicircle of variance :math:`\zeta` is the subordination
:math:`g_Y(z)=g_S(z+\zeta g_Y(z))`. Inserting it in the Marchenko-Pastur quadratic
:math:`\eta wg^2-(1-\eta-w)g+1=0` (unit scale, :math:`\eta=1/\kappa`) gives the **cubic**

.. math::
    \eta\zeta' g^3+(\eta w+\zeta')g^2-(1-\eta-w)g+1=0,\qquad w=z/\sqrt\kappa,\ \zeta'=\zeta/\kappa,

for :math:`\sqrt\kappa\,g_Y(z)`. The RIE is :math:`\xi(\lambda)=\lambda+2\zeta\,\Re g_Y(\lambda+i0)`
(:math:`=\lambda-2\zeta\pi\mathcal H_Y(\lambda)`) and its MSE per entry,
:math:`\lim\frac1d\mathbb E\|\hat S-S^*\|_F^2`, is
:math:`\mathrm{mmse}^{\rm sym}_\kappa(\zeta)=\zeta-\frac{4\pi^2}3\zeta^2\int\mu_Y(x)^3dx`.

The quadratic network :math:`y=\frac1{d\sqrt m}\sum_k\big((w_k^\top x)^2-\|w_k\|^2\big)+\sqrt\Delta\xi`
is symmetric matrix sensing of :math:`S^*`; with :math:`n=\alpha d^2` samples its Bayes-optimal
effective noise is the largest root of :math:`4\alpha\zeta=\Delta+2\,\mathrm{mmse}^{\rm sym}_\kappa(\zeta)`
(the heuristic of Chapter 2.3 in this normalisation; Maillard et al. 2024 derive it with replicas).

Used in: Chapter 2.3.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .._validation import check_array, check_nonnegative, check_positive, check_size
from .theory import _solve_zeta

__all__ = [
    "symmetric_stieltjes",
    "symmetric_density",
    "symmetric_mmse",
    "quadratic_network_alpha_pr",
    "QuadraticNetworkResult",
    "quadratic_network_bayes_optimal",
]

_N_GRID = 1500  # bulk grid of the density integral; the atom region of kappa < 1 gets 1000 more


def _cubic_roots(w, eta, zp):
    """Roots of eta*zp g^3 + (eta w + zp) g^2 - (1 - eta - w) g + 1 (batched companion matrices)."""
    C = np.zeros(w.shape + (3, 3), dtype=complex)
    C[..., 0, 0] = -(eta * w + zp) / (eta * zp)
    C[..., 0, 1] = (1 - eta - w) / (eta * zp)
    C[..., 0, 2] = -1 / (eta * zp)
    C[..., 1, 0] = 1
    C[..., 2, 1] = 1
    return np.linalg.eigvals(C)


_LIFT = 1e-9  # smallest Im z: on the real axis the three roots are real up to rounding noise


def _stieltjes(z, kappa, zeta):
    s = np.sqrt(kappa)
    z = np.asarray(z, dtype=complex)
    z = z.real + 1j * np.maximum(z.imag, _LIFT)  # the physical root is then the one with Im > 0
    roots = _cubic_roots(z / s, 1 / kappa, zeta / kappa)
    pick = np.argmax(roots.imag, axis=-1)[..., None]  # the one root in the upper half-plane
    return np.take_along_axis(roots, pick, axis=-1)[..., 0] / s


def symmetric_stieltjes(z, kappa, zeta):
    r"""Stieltjes transform :math:`g_Y(z)=\int\frac{\mu_Y(d\lambda)}{\lambda-z}` of Wishart plus GOE.

    The root of the cubic (module docstring) with the largest imaginary part; at every point
    tested (:math:`\Im z\ge10^{-9}`) exactly one root has :math:`\Im g>0`. Real points are lifted
    to :math:`x+10^{-9}i`: on the axis outside the support the three roots are real and only that
    lift tells the physical one.

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
    """
    z = check_array(z, "z", allow_complex=True).astype(complex)
    if np.any(z.imag < 0):
        raise ValueError("z must lie in the closed upper half-plane (Im z >= 0)")
    return _stieltjes(z, check_positive(kappa, "kappa"), check_positive(zeta, "zeta"))


def symmetric_density(x, kappa, zeta):
    r"""Density of the eigenvalues of :math:`Y=S^*+\sqrt\zeta Z`, :math:`\frac1\pi\Im g_Y(x+i0)`.

    Parameters
    ----------
    x : array_like
        Real points.
    kappa, zeta : float
        As in :func:`symmetric_stieltjes`.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> x = np.linspace(-3.0, 8.0, 4001)
    >>> round(float(np.trapezoid(symmetric_density(x, 2.0, 0.3), x)), 4)
    1.0
    """
    x = check_array(x, "x")
    g = _stieltjes(x.astype(complex), check_positive(kappa, "kappa"), check_positive(zeta, "zeta"))
    return np.clip(g.imag / np.pi, 0.0, None)


def _grid(kappa, zeta):
    s = np.sqrt(kappa)
    lo, hi = s * (1 - 1 / s) ** 2, s * (1 + 1 / s) ** 2  # support of S* (plus an atom at 0)
    r = 2.05 * np.sqrt(zeta)  # beyond the semicircle's radius 2 sqrt(zeta)
    x = np.linspace(min(lo, 0.0) - r, hi + r, _N_GRID)
    if kappa < 1:  # the atom of mass 1 - kappa at 0 becomes a narrow semicircle
        x = np.union1d(x, np.linspace(-r, r, 1000))
    return x


@functools.lru_cache(maxsize=4096)
def _mmse(kappa, zeta):
    x = _grid(kappa, zeta)
    rho = np.clip(_stieltjes(x.astype(complex), kappa, zeta).imag / np.pi, 0.0, None)
    return zeta - 4 * np.pi**2 / 3 * zeta**2 * np.trapezoid(rho**3, x)


def symmetric_mmse(kappa, zeta):
    r"""MSE per entry of the symmetric RIE, :math:`\zeta-\frac{4\pi^2}3\zeta^2\int\mu_Y^3`.

    Trapezoidal rule on a grid covering the support (a finer one around the atom when
    :math:`\kappa<1`); cached. It tends to 1 (the variance per entry of :math:`S^*` about its mean
    :math:`\sqrt\kappa I`) as :math:`\zeta\to\infty` and behaves like :math:`(2\kappa-\kappa^2)\zeta`
    (:math:`\zeta` for :math:`\kappa\ge1`) as :math:`\zeta\to0`.

    Parameters
    ----------
    kappa : float
        Width ratio :math:`m/d>0`.
    zeta : float or array_like
        Noise variance(s) :math:`\zeta\ge0`; returns a float for a scalar, else an array.

    Examples
    --------
    >>> round(float(symmetric_mmse(0.5, 1e-4) / 1e-4), 3)   # slope 2 kappa - kappa^2
    0.75
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
        Width ratio :math:`m/d>0`; the threshold returned is a float.

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

    Attributes
    ----------
    zeta : ndarray
        Effective noise of the denoising channel (0 at perfect recovery).
    mmse : ndarray
        :math:`\\mathrm{MMSE}_S=\\mathrm{mmse}^{\\rm sym}_\\kappa(\\zeta)=2\\alpha\\zeta-\\Delta/2`.
    test_error : ndarray
        :math:`\\Delta+2\\,\\mathrm{MMSE}_S` (the variance of a label's residual).
    alpha : ndarray
        Sample ratios :math:`n/d^2`.
    kappa, delta : float
        The inputs.
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
    equation :math:`\alpha'\zeta=\Delta'+\mathrm{mmse}(\zeta)` of Chapter 2.3 with
    :math:`\alpha'=2\alpha`, :math:`\Delta'=\Delta/2`, solved by the same downward scan and Brent
    polish as :func:`seqrmt.bsr.theory.bayes_optimal_curve` (one shared grid).

    Parameters
    ----------
    alphas : array_like
        Sample ratios :math:`n/d^2>0` (1-D).
    kappa : float
        Width ratio :math:`m/d>0`.
    delta, tol, max_iter
        Label-noise variance :math:`\Delta\ge0` and the root finder's settings, as in
        :func:`seqrmt.bsr.theory.bayes_optimal`.

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
    a_pr = 2 * quadratic_network_alpha_pr(kappa)

    def mmse_fn(z):
        return symmetric_mmse(kappa, z)

    # one shared log grid of zeta for the scan, as in bayes_optimal_curve (7.4 points per decade)
    z_top, z_bot = (1 + delta / 2) / (2 * alphas.min()), 1e-8 * (1 + delta / 2) / (2 * alphas.max())
    grid = np.geomspace(z_top, z_bot, int(np.ceil(59 / 8 * np.log10(z_top / z_bot))) + 1)
    need = ~((delta == 0) & (2 * alphas >= a_pr))
    m_grid = mmse_fn(grid) if need.any() else None
    zetas = np.array([_solve_zeta(2 * a, delta / 2, mmse_fn, a_pr, F_grid=m_grid, grid=grid,
                                  tol=tol, max_iter=max_iter) for a in alphas])
    mmse = np.maximum(2 * alphas * zetas - delta / 2, 0.0)
    return QuadraticNetworkResult(zeta=zetas, mmse=mmse, test_error=delta + 2 * mmse,
                                  alpha=alphas, kappa=kappa, delta=delta)
