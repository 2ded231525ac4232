r"""Two-view spectra: PLS-SVD with a rank-one shared latent.

Model (Chapter 5.5, after :cite:`leger2025pls`; rank one, no individual components). For
:math:`i\le n`, :math:`x_i=\sqrt{t_x}\,s_iu+\varepsilon_i\in\mathbb R^p` and
:math:`y_i=\sqrt{t_y}\,s_iv+\eta_i\in\mathbb R^q`, with a shared latent :math:`s_i\sim N(0,1)`, unit
vectors :math:`u,v` and white noise; :math:`c_x=p/n`, :math:`c_y=q/n`. PLS-SVD takes the top singular
pair :math:`(\hat u,\hat v)` of the cross-covariance :math:`S=X^\top Y/n` (:math:`X` is
:math:`n\times p`, :math:`Y` is :math:`n\times q`).

Rotating the sample space so that :math:`s/\|s\|` is the first axis gives
:math:`S=\sigma ab^\top+N` with :math:`\sigma^2\to(t_x+c_x)(t_y+c_y)`,
:math:`\langle a,u\rangle^2\to t_x/(t_x+c_x)`, :math:`\langle b,v\rangle^2\to t_y/(t_y+c_y)` and the
noise :math:`N=E_X^\top PE_Y/n` bi-orthogonally invariant; the rectangular spike theorem of
:cite:`benaychgeorges2012` then gives the outlier and the alignments through the D-transform of
:math:`N`.

Used in: Chapter 5 (notebook ``05_features_and_pls``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from .._validation import check_nonnegative, check_positive, check_size
from ..utils import as_generator

__all__ = [
    "two_view_data",
    "pls_svd",
    "PLSNoise",
    "PLSSpike",
    "pls_noise",
    "pls_spike",
    "pca_overlap",
]

_N_NODES = 400


def two_view_data(n, p, q, t_x, t_y, rng=None):
    r"""Draw two views sharing one Gaussian latent (rank one, white noise).

    Parameters
    ----------
    n, p, q : int
        Number of samples and the two dimensions.
    t_x, t_y : float
        Signal strengths :math:`t_x,t_y\ge0`.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    X : numpy.ndarray, shape (n, p)
    Y : numpy.ndarray, shape (n, q)
    u : numpy.ndarray, shape (p,)
        Unit vector (uniform on the sphere).
    v : numpy.ndarray, shape (q,)
        Unit vector (uniform on the sphere).

    Examples
    --------
    >>> X, Y, u, v = two_view_data(5, 3, 4, 1.0, 2.0, rng=0)
    >>> X.shape, Y.shape, round(float(u @ u), 12)
    ((5, 3), (5, 4), 1.0)
    """
    n, p, q = (check_size(a, name) for a, name in ((n, "n"), (p, "p"), (q, "q")))
    if n * (p + q) > 2**31:
        raise ValueError(f"n, p, q too large: n * (p + q) = {n * (p + q)} entries")
    t_x = check_nonnegative(t_x, "t_x")
    t_y = check_nonnegative(t_y, "t_y")
    rng = as_generator(rng)
    u = rng.standard_normal(p)
    v = rng.standard_normal(q)
    u /= np.linalg.norm(u)
    v /= np.linalg.norm(v)
    s = rng.standard_normal(n)
    X = np.sqrt(t_x) * np.outer(s, u) + rng.standard_normal((n, p))
    Y = np.sqrt(t_y) * np.outer(s, v) + rng.standard_normal((n, q))
    return X, Y, u, v


def pls_svd(X, Y):
    r"""Top singular triple :math:`(s_1,\hat u,\hat v)` of the cross-covariance :math:`X^\top Y/n`.

    Parameters
    ----------
    X : array_like, shape (n, p)
    Y : array_like, shape (n, q)

    Returns
    -------
    tuple
        ``(s1, u_hat, v_hat)``: the top singular value and unit singular vectors.

    Examples
    --------
    >>> s1, a, b = pls_svd(np.eye(2), np.diag([2.0, 1.0]))
    >>> float(s1), a.tolist() in ([1.0, 0.0], [-1.0, -0.0]), abs(float(b[0]))
    (1.0, True, 1.0)
    """
    from .._validation import check_array

    X = check_array(X, "X", ndim=2)
    Y = check_array(Y, "Y", ndim=2, shape=(X.shape[0], None))
    U, sv, Vt = np.linalg.svd(X.T @ Y / X.shape[0], full_matrices=False)
    return float(sv[0]), U[:, 0], Vt[0]


class _Law:
    """The law H of E_Y E_Y^T / n (n x n): density sqrt((t+ - t)(t - t-)) / (2 pi t) plus an atom at 0."""

    def __init__(self, c_y):
        lo, hi = (1 - np.sqrt(c_y)) ** 2, (1 + np.sqrt(c_y)) ** 2
        mid, half = (hi + lo) / 2, (hi - lo) / 2
        x, w = np.polynomial.legendre.leggauss(_N_NODES)
        phi = np.pi * (x + 1) / 2  # Gauss-Legendre on [0, pi]; t = mid - half cos(phi)
        self.t = mid - half * np.cos(phi)
        self.w = (np.pi / 2) * w * (half * np.sin(phi)) ** 2 / (2 * np.pi * self.t)
        self.atom = max(1.0 - c_y, 0.0)
        self.t_max = hi

    def integral(self, f):
        return self.atom * f(0.0) + np.sum(self.w * f(self.t))


@dataclass(frozen=True)
class PLSNoise:
    r"""Spectral edge and detection threshold of the PLS noise :math:`N=E_X^\top PE_Y/n`.

    Attributes
    ----------
    edge : float
        Right edge :math:`b` of the singular-value support of :math:`N`.
    threshold : float
        :math:`1/D(b^+)`: a spike is detected iff :math:`\sigma^2=(t_x+c_x)(t_y+c_y)` exceeds it.
    """

    edge: float
    threshold: float


@dataclass(frozen=True)
class PLSSpike:
    r"""Limits of the top PLS-SVD singular value and alignments.

    Attributes
    ----------
    singular_value : float
        Outlier :math:`\rho` (the edge :math:`b` below the threshold).
    overlap_u, overlap_v : float
        :math:`\langle\hat u,u\rangle^2` and :math:`\langle\hat v,v\rangle^2` (0 below the threshold).
    detected : bool
        Whether :math:`\sigma^2` exceeds the threshold.
    """

    singular_value: float
    overlap_u: float
    overlap_v: float
    detected: bool


class _Transforms:
    """D-transform of N parametrised by m = m_L(z^2) < 0 on the real axis right of the support."""

    def __init__(self, c_x, c_y):
        self.cx, self.cy = c_x, c_y
        self.law = _Law(c_y)
        self.m_low = -1.0 / (c_x * self.law.t_max)  # pole of the integrand

    def w(self, m):  # z^2 as a function of m (inverse of m_L)
        return -1.0 / m + self.law.integral(lambda t: t / (1 + self.cx * t * m))

    def dw(self, m):
        return 1.0 / m**2 - self.law.integral(lambda t: self.cx * t**2 / (1 + self.cx * t * m) ** 2)

    def edge_m(self):
        span = -self.m_low
        res = optimize.minimize_scalar(self.w, bounds=(self.m_low + 1e-9 * span, -1e-9 * span),
                                       method="bounded", options={"xatol": 1e-13 * span})
        return float(res.x)

    def values(self, m):
        """(z, phi_L, phi_R, D, dD/dz) at the point z = sqrt(w(m))."""
        z = np.sqrt(self.w(m))
        dz = self.dw(m) / (2 * z)
        phi_l = -z * m
        phi_r = (self.cx * phi_l - (self.cx - self.cy) / z) / self.cy
        dphi_l = -dz * m - z
        dphi_r = (self.cx * dphi_l + (self.cx - self.cy) * dz / z**2) / self.cy
        return z, phi_l, phi_r, phi_l * phi_r, (dphi_l * phi_r + phi_l * dphi_r) / dz


def _ratios(c_x, c_y):
    return check_positive(c_x, "c_x"), check_positive(c_y, "c_y")


def pls_noise(c_x, c_y):
    r"""Edge :math:`b` and detection threshold :math:`1/D(b^+)` of the PLS noise.

    :math:`m_L(w)=\frac1p\operatorname{Tr}(NN^\top-w)^{-1}` solves
    :math:`w=-1/m+\int\frac{t}{1+c_xtm}dH(t)`, with :math:`H` the law of :math:`E_YE_Y^\top/n`
    (Marchenko-Pastur of ratio :math:`c_y` on :math:`n` points, atom :math:`(1-c_y)_+` at 0).
    The edge is :math:`b^2=\min_{m}w(m)` over :math:`(-1/(c_xt_+),0)`; with
    :math:`\varphi_L(z)=-zm_L(z^2)`, :math:`\varphi_R` from :math:`p\varphi_L-q\varphi_R=(p-q)/z` and
    :math:`D=\varphi_L\varphi_R`, the threshold is :math:`1/D(b^+)`.

    Parameters
    ----------
    c_x, c_y : float
        :math:`p/n` and :math:`q/n`.

    Returns
    -------
    PLSNoise

    Examples
    --------
    >>> noise = pls_noise(0.5, 0.75)
    >>> round(noise.edge, 3), round(noise.threshold, 3)
    (1.899, 1.429)
    """
    tr = _Transforms(*_ratios(c_x, c_y))
    z, _, _, D, _ = tr.values(tr.edge_m())
    return PLSNoise(float(z), float(1.0 / D))


def pls_spike(t_x, t_y, c_x, c_y):
    r"""Limits of the PLS-SVD outlier and of its singular-vector alignments (rank one).

    With :math:`\sigma^2=(t_x+c_x)(t_y+c_y)`: if :math:`\sigma^2>1/D(b^+)` the top singular value
    converges to the root :math:`\rho>b` of :math:`D(\rho)=1/\sigma^2` and

    .. math::
        \langle\hat u,u\rangle^2\to\frac{t_x}{t_x+c_x}\cdot\frac{-2\varphi_L(\rho)}{\sigma^2D'(\rho)},\qquad
        \langle\hat v,v\rangle^2\to\frac{t_y}{t_y+c_y}\cdot\frac{-2\varphi_R(\rho)}{\sigma^2D'(\rho)};

    otherwise it sticks to the edge :math:`b` and both alignments vanish.

    Parameters
    ----------
    t_x, t_y : float
        Signal strengths :math:`\ge0`.
    c_x, c_y : float
        :math:`p/n` and :math:`q/n`.

    Returns
    -------
    PLSSpike

    Examples
    --------
    >>> sp = pls_spike(0.5, 3.0, 0.5, 0.75)
    >>> round(sp.singular_value, 3), round(sp.overlap_u, 3), round(sp.overlap_v, 3)
    (2.294, 0.4, 0.601)
    """
    t_x = check_nonnegative(t_x, "t_x")
    t_y = check_nonnegative(t_y, "t_y")
    tr = _Transforms(*_ratios(c_x, c_y))
    m_edge = tr.edge_m()
    sigma2 = (t_x + tr.cx) * (t_y + tr.cy)
    z_b, _, _, D_b, _ = tr.values(m_edge)
    if sigma2 * D_b <= 1.0 or t_x * t_y == 0.0:
        return PLSSpike(float(z_b), 0.0, 0.0, False)
    # D decreases from D(b+) to 0 as m goes from the edge to 0
    m = optimize.brentq(lambda mm: tr.values(mm)[3] - 1.0 / sigma2, m_edge, -1e-12 * abs(m_edge),
                        xtol=1e-15, rtol=1e-13)
    z, phi_l, phi_r, _, dD = tr.values(m)
    ou = t_x / (t_x + tr.cx) * (-2.0 * phi_l / (sigma2 * dD))
    ov = t_y / (t_y + tr.cy) * (-2.0 * phi_r / (sigma2 * dD))
    return PLSSpike(float(z), float(ou), float(ov), True)


def pca_overlap(t, ratio):
    r"""BBP limit of :math:`\langle\hat u,u\rangle^2` for PCA of one view :math:`x_i=\sqrt t\,s_iu+\varepsilon_i`.

    .. math::
        \langle\hat u,u\rangle^2\to\frac{1-c/t^2}{1+c/t}\ \text{if } t>\sqrt c,\qquad 0\ \text{otherwise},

    with :math:`c=p/n` (``ratio``) :cite:`plsbaik2005,benaychgeorges2012`.

    Parameters
    ----------
    t : float or array_like
        Spike strength :math:`t\ge0`.
    ratio : float
        :math:`c=p/n>0`.

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    >>> round(pca_overlap(2.0, 0.5), 4)
    0.7
    """
    from .._validation import check_array

    t = check_array(t, "t")
    if np.any(t < 0):
        raise ValueError("t must be non-negative")
    c = check_positive(ratio, "ratio")
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(t > np.sqrt(c), (1 - c / t**2) / (1 + c / t), 0.0)
    return float(out) if out.ndim == 0 else out
