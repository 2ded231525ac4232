r"""Two-view spectra: PLS-SVD with a rank-one shared latent, in closed form (Chapter 5.5).

Model (after :cite:`leger2025pls`; rank one, no individual components). For :math:`i\le n`,
:math:`x_i=\sqrt{t_x}\,s_iu+\varepsilon_i\in\mathbb R^p` and :math:`y_i=\sqrt{t_y}\,s_iv+\eta_i\in\mathbb R^q`,
with a shared latent :math:`s_i\sim N(0,1)`, unit vectors :math:`u,v` and white noise;
:math:`c_x=p/n`, :math:`c_y=q/n`. PLS-SVD takes the top singular pair :math:`(\hat u,\hat v)` of the
cross-covariance :math:`S=X^\top Y/n` (:math:`X` is :math:`n\times p`, :math:`Y` is :math:`n\times q`).

Rotating the sample space so that :math:`s/\|s\|` is the first axis gives :math:`S=\sigma ab^\top+N` with
:math:`\sigma^2\to(t_x+c_x)(t_y+c_y)`, :math:`\langle a,u\rangle^2\to t_x/(t_x+c_x)`,
:math:`\langle b,v\rangle^2\to t_y/(t_y+c_y)` and the noise :math:`N=E_X^\top PE_Y/n` bi-orthogonally
invariant; the rectangular spike theorem of :cite:`benaychgeorges2012` then gives the outlier and the
alignments through the D-transform of :math:`N`. The nonzero spectrum of :math:`NN^\top` is that of a
product of two free Wishart matrices, whose S-transform is :math:`1/((t+c_x)(t+c_y))`; in the
parameter :math:`t>0` it gives everything in closed form (:func:`pls_spike`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from .._validation import as_generator, check_nonnegative, check_positive, check_size

__all__ = ["two_view_data", "PLSSpike", "pls_spike"]


def two_view_data(n, p, q, t_x, t_y, rng=None):
    r"""Draw two views sharing one Gaussian latent (rank one, white noise).

    Parameters
    ----------
    n, p, q : int
        Number of samples and the two dimensions.
    t_x, t_y : float
        Signal strengths :math:`t_x,t_y\ge0`.
    rng : None, int or numpy.random.Generator
        See :func:`seqrmt.ensemble.run_ensemble`.

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
    # u, v uniform on their spheres: the rectangular spike theorem needs no alignment with the noise
    u = rng.standard_normal(p)
    v = rng.standard_normal(q)
    u /= np.linalg.norm(u)
    v /= np.linalg.norm(v)
    s = rng.standard_normal(n)  # the shared latent
    X = np.sqrt(t_x) * np.outer(s, u) + rng.standard_normal((n, p))
    Y = np.sqrt(t_y) * np.outer(s, v) + rng.standard_normal((n, q))
    return X, Y, u, v


@dataclass(frozen=True)
class PLSSpike:
    r"""Limits of the top PLS-SVD singular value and alignments (see :func:`pls_spike`).

    Attributes
    ----------
    singular_value : float
        Outlier :math:`s_1` (the edge :math:`b` below the threshold).
    overlap_u, overlap_v : float
        :math:`\langle\hat u,u\rangle^2` and :math:`\langle\hat v,v\rangle^2` (0 below the threshold).
    detected : bool
        Whether :math:`\sigma^2=(t_x+c_x)(t_y+c_y)` exceeds the threshold.
    edge : float
        Right edge :math:`b` of the singular values of the noise :math:`N`.
    threshold : float
        :math:`1/D(b^+)`, the smallest detectable :math:`\sigma^2`.
    """

    singular_value: float
    overlap_u: float
    overlap_v: float
    detected: bool
    edge: float
    threshold: float


def pls_spike(t_x, t_y, c_x, c_y):
    r"""Limits of the PLS-SVD outlier and of its singular-vector alignments (rank one, closed form).

    Put :math:`f(t)=(1+t)(t+c_x)(t+c_y)` and :math:`g(t)=f(t)-tf'(t)=c_xc_y-(1+c_x+c_y)t^2-2t^3`.
    For :math:`t\in(0,t_e]`, with :math:`t_e` the positive root of :math:`g`, the point
    :math:`z=\sqrt{f(t)/t}` runs down from :math:`\infty` to the noise edge :math:`b=\sqrt{f(t_e)/t_e}`,
    and the transforms of :math:`N` are

    .. math::
        \varphi_L(z)=\frac{t+c_x}{c_xz},\qquad\varphi_R(z)=\frac{t+c_y}{c_yz},\qquad
        D(z)=\varphi_L\varphi_R=\frac{t}{c_xc_y(1+t)} .

    With :math:`\sigma^2=(t_x+c_x)(t_y+c_y)`, the outlier exists iff
    :math:`\sigma^2>1/D(b^+)=c_xc_y(1+t_e)/t_e`; then :math:`D(s_1)=1/\sigma^2` gives
    :math:`t_*=c_xc_y/(\sigma^2-c_xc_y)`, :math:`s_1=\sqrt{f(t_*)/t_*}` and

    .. math::
        \langle\hat u,u\rangle^2\to\frac{t_x}{t_x+c_x}\cdot\frac{g(t_*)}{c_x(t_*+c_y)},\qquad
        \langle\hat v,v\rangle^2\to\frac{t_y}{t_y+c_y}\cdot\frac{g(t_*)}{c_y(t_*+c_x)},

    the formula :math:`-2\varphi_L(\rho)/(\sigma^2D'(\rho))` of the rectangular spike theorem written
    in :math:`t`. Otherwise :math:`s_1` sticks to :math:`b` and both alignments vanish. A one-sided
    signal (:math:`t_y=0`) is no exception: :math:`b\propto E_Y^\top s` is then a pure-noise direction,
    still independent of :math:`N`, and the same formulas hold with :math:`\langle\hat v,v\rangle^2=0`.

    Parameters
    ----------
    t_x, t_y : float
        Signal strengths :math:`\ge0`.
    c_x, c_y : float
        :math:`p/n>0` and :math:`q/n>0`.

    Returns
    -------
    PLSSpike

    Examples
    --------
    >>> sp = pls_spike(0.5, 3.0, 0.5, 0.75)
    >>> round(sp.singular_value, 3), round(sp.overlap_u, 3), round(sp.overlap_v, 3)
    (2.294, 0.4, 0.601)
    >>> round(sp.edge, 4), round(sp.threshold, 4)
    (1.899, 1.4289)
    >>> one_sided = pls_spike(4.0, 0.0, 0.5, 0.75)  # no signal in Y
    >>> one_sided.detected, round(one_sided.overlap_u, 3), one_sided.overlap_v
    (True, 0.683, 0.0)
    """
    t_x = check_nonnegative(t_x, "t_x")
    t_y = check_nonnegative(t_y, "t_y")
    cx, cy = check_positive(c_x, "c_x"), check_positive(c_y, "c_y")

    # S-transform of the n x n product of the two free Wisharts: S(t) = 1/((t + cx)(t + cy)); its
    # chi(t) = S(t) t/(1 + t) = t/f(t) inverts the moment generating function, so z^2 = f(t)/t
    def f(t):
        return (1.0 + t) * (t + cx) * (t + cy)

    def g(t):  # f - t f': its zero is the edge, where dz/dt = 0
        return cx * cy - (1.0 + cx + cy) * t**2 - 2.0 * t**3

    # g decreases on t > 0 from g(0) = cx cy > 0 and g(t) < cx cy - 2 t^3: one root below (cx cy / 2)^(1/3)
    # xtol near machine precision: the threshold c_x c_y (1 + t_e)/t_e is sensitive to t_e when t_e is small
    t_e = optimize.brentq(g, 0.0, (cx * cy / 2.0) ** (1.0 / 3.0), xtol=1e-15, rtol=1e-14)
    # z(t) decreases on (0, t_e]: the edge is its minimum, and D(b+) its value there
    edge = float(np.sqrt(f(t_e) / t_e))
    threshold = float(cx * cy * (1.0 + t_e) / t_e)
    # the spike strength of S = sigma a b^T + N: the noise of each view adds c to its signal
    sigma2 = (t_x + cx) * (t_y + cy)
    if sigma2 <= threshold:
        return PLSSpike(edge, 0.0, 0.0, False, edge, threshold)
    # D(s1) = t / (cx cy (1 + t)) = 1 / sigma^2, solved for t; t < t_e exactly when detected
    t = cx * cy / (sigma2 - cx * cy)
    # <u_hat, a>^2 = -2 phi_L / (sigma^2 D') = g(t) / (cx (t + cy)), times <a, u>^2 = t_x / (t_x + cx);
    # the part of u_hat orthogonal to a is uniform in a's complement and adds nothing
    overlap_u = t_x / (t_x + cx) * g(t) / (cx * (t + cy))
    overlap_v = t_y / (t_y + cy) * g(t) / (cy * (t + cx))
    return PLSSpike(float(np.sqrt(f(t) / t)), float(overlap_u), float(overlap_v), True, edge, threshold)
