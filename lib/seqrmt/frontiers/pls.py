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

from .. import plotting
from .._validation import check_array, check_int_array, check_nonnegative, check_positive, check_size
from ..ensemble import run_ensemble, spawn_generators
from .._validation import as_generator
from ..stats import mean_se

__all__ = [
    "two_view_data",
    "pls_svd",
    "PLSNoise",
    "PLSSpike",
    "pls_noise",
    "pls_spike",
    "pca_overlap",
    "overlap_experiment",
    "plot_overlaps",
    "spike_report",
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

    A one-sided signal (:math:`t_y=0`, or :math:`t_x=0`) is no exception: the
    reduction :math:`S=\sigma ab^\top+N` holds with :math:`b\propto E_Y^\top s`, a pure-noise
    direction still independent of :math:`N` and of squared norm :math:`c_y`, so the spike
    :math:`\sigma^2=(t_x+c_x)c_y` is detected above the same threshold and
    :math:`\langle\hat u,u\rangle^2` is the same formula (while
    :math:`\langle\hat v,v\rangle^2=0`). Independently, at :math:`t_y=0`,
    :math:`SS^\top=c_y\hat\Sigma_X^{1/2}W\hat\Sigma_X^{1/2}` with :math:`W` a white Wishart
    matrix of ratio :math:`c_x/c_y` independent of :math:`\hat\Sigma_X=X^\top X/n`: a sample
    covariance whose population is itself a spiked sample covariance, which gives the same limits
    (tests/test_frontiers_pls.py).

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
    >>> one_sided = pls_spike(4.0, 0.0, 0.5, 0.75)  # no signal in Y
    >>> one_sided.detected, round(one_sided.overlap_u, 3), one_sided.overlap_v
    (True, 0.683, 0.0)
    """
    t_x = check_nonnegative(t_x, "t_x")
    t_y = check_nonnegative(t_y, "t_y")
    tr = _Transforms(*_ratios(c_x, c_y))
    m_edge = tr.edge_m()
    sigma2 = (t_x + tr.cx) * (t_y + tr.cy)
    z_b, _, _, D_b, _ = tr.values(m_edge)
    if sigma2 * D_b <= 1.0:
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

    with :math:`c=p/n` (``ratio``) :cite:`masked_paul2007,benaychgeorges2012`.

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


def overlap_experiment(n, p, q, t_x, t_y, n_rep, rng=None):
    r"""Monte Carlo of PLS-SVD and of PCA of :math:`X` alone over a grid of signal strengths.

    For each :math:`t_y` and each :math:`t_x` (in this order) the next child generator of ``rng``
    is the root of :func:`seqrmt.ensemble.run_ensemble` over the repetitions (workers and progress
    as there; in parallel at the paper size), each repetition one draw of
    :func:`two_view_data`; records the top singular value :math:`s_1` of :func:`pls_svd`, the
    squared overlaps :math:`\langle\hat u,u\rangle^2`, :math:`\langle\hat v,v\rangle^2`, and the
    squared overlap of the top eigenvector of :math:`X^\top X` with :math:`u`.

    Parameters
    ----------
    n, p, q : int
        Number of samples and the two dimensions.
    t_x, t_y : array_like
        Signal strengths :math:`\ge0` (one-dimensional).
    n_rep : int
        Draws per pair :math:`(t_y,t_x)`.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    pls_stats : numpy.ndarray, shape (len(t_y), len(t_x), n_rep, 3)
        :math:`s_1`, :math:`\langle\hat u,u\rangle^2`, :math:`\langle\hat v,v\rangle^2` per draw.
    pca : numpy.ndarray, shape (len(t_y), len(t_x), n_rep)
        :math:`\langle\hat u_{\rm PCA},u\rangle^2` per draw.

    Examples
    --------
    >>> st, pca = overlap_experiment(40, 4, 6, [0.0, 9.0], [9.0], 2, rng=0)
    >>> st.shape, pca.shape, bool(np.all(st[..., 1:] <= 1 + 1e-12))
    ((1, 2, 2, 3), (1, 2, 2), True)
    """
    n, p, q = (check_size(a, name) for a, name in ((n, "n"), (p, "p"), (q, "q")))
    t_x = check_array(t_x, "t_x", ndim=1)
    t_y = check_array(t_y, "t_y", ndim=1)
    for t, name in ((t_x, "t_x"), (t_y, "t_y")):
        if np.any(t < 0):
            raise ValueError(f"{name} must be non-negative")
    n_rep = check_size(n_rep, "n_rep")
    roots = iter(spawn_generators(as_generator(rng), t_y.size * t_x.size))
    runs = np.empty((t_y.size, t_x.size, n_rep, 4))
    for a, ty in enumerate(t_y):
        for b, tx in enumerate(t_x):
            runs[a, b] = run_ensemble(_overlap_draw, n_rep, next(roots), args=(n, p, q, tx, ty),
                                      desc=f"t_x = {tx:g}, t_y = {ty:g}")
    return runs[..., :3], runs[..., 3]


def _overlap_draw(rng, n, p, q, t_x, t_y):
    """One draw of :func:`overlap_experiment`: s1, the two PLS overlaps and the PCA overlap."""
    X, Y, u, v = two_view_data(n, p, q, t_x, t_y, rng)
    s1, u_hat, v_hat = pls_svd(X, Y)
    u_pca = np.linalg.eigh(X.T @ X)[1][:, -1]  # top eigenvector
    return s1, (u_hat @ u) ** 2, (v_hat @ v) ** 2, (u_pca @ u) ** 2


def _check_runs(t_x, t_y, pls_stats, pca):
    t_x = check_array(t_x, "t_x", ndim=1)
    t_y = check_array(t_y, "t_y", ndim=1)
    pls_stats = check_array(pls_stats, "pls_stats", ndim=4)
    if pls_stats.shape[:2] != (t_y.size, t_x.size) or pls_stats.shape[2] < 2 \
            or pls_stats.shape[3] != 3:
        raise ValueError("pls_stats must have shape (len(t_y), len(t_x), n_rep >= 2, 3)")
    pca = check_array(pca, "pca", shape=pls_stats.shape[:3])
    return t_x, t_y, pls_stats, pca


def plot_overlaps(ax, t_x, t_y, c_x, c_y, t_x_mc, pls_stats, pca):
    r"""Draw :math:`\langle\hat u,u\rangle^2` against :math:`t_x`: PLS-SVD per :math:`t_y` and PCA.

    Theory lines (:func:`pls_spike`, :func:`pca_overlap`) and Monte Carlo means with two standard
    errors (:func:`overlap_experiment`; PCA pooled over :math:`t_y`); shaded: the :math:`t_x` of
    the grid where PLS with the largest :math:`t_y` detects the spike and PCA cannot.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    t_x : array_like
        Grid of the theory curves.
    t_y : array_like
        Strengths of the second view (as in the simulation).
    c_x, c_y : float
        :math:`p/n` and :math:`q/n`.
    t_x_mc : array_like
        Strengths :math:`t_x` of the simulation.
    pls_stats, pca : numpy.ndarray
        From :func:`overlap_experiment`.

    Returns
    -------
    matplotlib.axes.Axes
    """
    from .._validation import check_axes  # noqa: PLC0415
    check_axes(ax)
    grid = check_array(t_x, "t_x", ndim=1)
    if np.any(grid < 0):
        raise ValueError("t_x must be non-negative")
    t_x_mc, t_y, pls_stats, pca = _check_runs(t_x_mc, t_y, pls_stats, pca)
    c_x, c_y = check_positive(c_x, "c_x"), check_positive(c_y, "c_y")
    for a, ty in enumerate(t_y):
        ov = np.array([pls_spike(t, ty, c_x, c_y).overlap_u for t in grid])
        m, se = mean_se(pls_stats[a, :, :, 1], 1)
        plotting.curve_vs_mc(ax, grid, ov, t_x_mc, m, 2 * se, color=f"C{a}",
                             theory_label=f"PLS, $t_y={ty:g}$", mc_label=None)
    pooled = np.moveaxis(pca, 1, 0).reshape(t_x_mc.size, -1)
    m, se = mean_se(pooled, 1)
    plotting.curve_vs_mc(ax, grid, pca_overlap(grid, c_x), t_x_mc, m, 2 * se, color="k",
                         marker="s", theory_label="PCA of $X$", mc_label="Monte Carlo")
    top = int(np.argmax(t_y))
    seen = [t for t in grid if pls_spike(t, t_y[top], c_x, c_y).detected]
    if seen and min(seen) < np.sqrt(c_x):
        ax.axvspan(min(seen), np.sqrt(c_x), color=f"C{top}", alpha=0.12)
    ax.set_xlabel("signal strength $t_x$ of view $X$")
    ax.set_ylabel(r"overlap $\langle\hat u, u\rangle^2$")
    ax.legend()
    return ax


def spike_report(t_x, t_y, c_x, c_y, pls_stats, pca, rows, pca_columns):
    r"""Text report of the rank-one PLS and PCA theory against Monte Carlo (mean :math:`\pm` se).

    Three blocks: the squared overlaps of :math:`\hat u` and :math:`\hat v` (:func:`pls_spike`)
    in the chosen rows, with the largest gap in standard errors; the top singular value
    :math:`s_1` in the same rows; the PCA overlap (:func:`pca_overlap`, pooled over
    :math:`t_y`) in the chosen columns.

    Parameters
    ----------
    t_x, t_y : array_like
        Strengths of the simulation.
    c_x, c_y : float
        :math:`p/n` and :math:`q/n`.
    pls_stats, pca : numpy.ndarray
        From :func:`overlap_experiment` (at least 2 repetitions).
    rows : sequence of (int, int)
        ``(t_y index, t_x index)`` pairs to report.
    pca_columns : sequence of int
        ``t_x`` indices of the PCA lines.

    Returns
    -------
    str

    Examples
    --------
    >>> st, pca = overlap_experiment(200, 50, 100, [4.0], [4.0], 2, rng=0)
    >>> print(spike_report([4.0], [4.0], 0.25, 0.5, st, pca, [(0, 0)], [0]))
    ... # doctest: +ELLIPSIS
    t_x   t_y   <u_hat,u>^2: theory, MC      <v_hat,v>^2: theory, MC
    4.00    4   0.9...
    """
    t_x, t_y, st, pca = _check_runs(t_x, t_y, pls_stats, pca)
    c_x, c_y = check_positive(c_x, "c_x"), check_positive(c_y, "c_y")
    rows = check_int_array(rows, "rows", low=0, ndim=2)
    if rows.shape[1] != 2 or np.any(rows[:, 0] >= t_y.size) or np.any(rows[:, 1] >= t_x.size):
        raise ValueError("rows must hold (t_y index, t_x index) pairs in range")
    rows = [(int(a), int(b)) for a, b in rows]
    cols = check_int_array(pca_columns, "pca_columns", low=0, high=t_x.size, ndim=1).tolist()
    lines = ["t_x   t_y   <u_hat,u>^2: theory, MC      <v_hat,v>^2: theory, MC"]
    z, spikes = [], {r: pls_spike(t_x[r[1]], t_y[r[0]], c_x, c_y) for r in rows}
    for a, b in rows:
        sp, (m, se) = spikes[a, b], mean_se(st[a, b], 0)
        z += [(m[1] - sp.overlap_u) / se[1], (m[2] - sp.overlap_v) / se[2]]
        lines.append(f"{t_x[b]:4.2f}  {t_y[a]:3g}   "
                     f"{sp.overlap_u:.4f}, {m[1]:.4f} ± {se[1]:.4f}    "
                     f"{sp.overlap_v:.4f}, {m[2]:.4f} ± {se[2]:.4f}")
    lines.append(f"largest overlap gap in these rows: {np.max(np.abs(z)):.1f} se")
    lines.append("top singular value s1: theory, MC")
    for a, b in rows:
        m, se = mean_se(st[a, b], 0)
        lines.append(f"  s1 at t_x = {t_x[b]:4.2f}, t_y = {t_y[a]:g}: "
                     f"{spikes[a, b].singular_value:.4f}, {m[0]:.4f} ± {se[0]:.4f}")
    pooled = "both" if t_y.size == 2 else "all"
    lines.append(f"PCA of X alone, <u_pca,u>^2: theory, MC ({pooled} t_y pooled)")
    for b in cols:
        m, se = mean_se(pca[:, b].ravel(), 0)
        lines.append(f"  PCA at t_x = {t_x[b]:4.2f}: {pca_overlap(t_x[b], c_x):.4f}, "
                     f"{m:.4f} ± {se:.4f}")
    return "\n".join(lines)
