r"""Spectra of weight matrices: Marchenko-Pastur bulk with a free area, tail weight, power-law tails.

For a weight matrix :math:`W\in\mathbb R^{M\times N}` (:math:`N\le M`) with iid entries, the
:math:`N` eigenvalues of :math:`X=W^\top W` (the squared singular values of :math:`W`) follow the
Marchenko-Pastur law with ratio :math:`r=N/M` and scale :math:`s^2=M\operatorname{Var}W_{ij}` (the
mean eigenvalue). After training, part of the spectral weight leaves the bulk; we fit

.. math::
    \rho_{\rm fit}(x)=A\,\frac{\sqrt{(x_+-x)(x-x_-)}}{2\pi s^2 r\,x},\qquad x_\pm=s^2(1\pm\sqrt r)^2,

to a histogram normalised by the **total** number of eigenvalues, so that :math:`A` is the bulk's
share and :math:`1-A` the **tail weight**. In :mod:`seqrmt.rmt` terms
:math:`\rho_{\rm fit}=A\cdot` ``mp_density(x, ratio=r, var=s2)``.

Heavy tails are also summarised, as weightwatcher does, by the exponent :math:`\alpha` of a
power law :math:`p(x)\propto x^{-\alpha}` for :math:`x\ge x_{\min}`, fitted by maximum likelihood
with :math:`x_{\min}` chosen by the Kolmogorov-Smirnov criterion of Clauset, Shalizi and Newman.

Conventions: eigenvalue arrays are 1-D (pooled) or 2-D with one spectrum per row; weight stacks
have shape ``(..., M, N)`` or ``(..., N, M)`` (the smaller side sets the number of eigenvalues).

Used in: Chapter 4 (spectra of a small GPT's weights).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from .._validation import (check_allocation, check_array, check_int_array, check_positive, check_positive_int,
                           check_size)
from ..rmt import mp_cdf, mp_density, mp_edges
from .._validation import check_seed
from ..ensemble import spawn_generators
from .._validation import as_generator

__all__ = [
    "gram_eigenvalues",
    "mp_bulk_density",
    "MPBulkFit",
    "fit_mp_bulk",
    "fit_mp_bulk_cdf",
    "normalise_bulk_scale",
    "tail_weight",
    "MPBootstrap",
    "bootstrap_mp_fit",
    "covariance_matched_gaussian",
    "ensemble_cdf",
    "PowerLawFit",
    "powerlaw_tail_fit",
    "jackknife_mp_fit",
    "bootstrap_table",
    "independent_levels",
    "empirical_ccdf",
    "weightwatcher_metrics",
    "plot_mp_bulk_fit",
    "tail_weight_systematics",
]


def gram_eigenvalues(weights):
    r"""Squared singular values of each matrix of a stack, sorted ascending.

    For :math:`W` of shape ``(M, N)`` these are the :math:`\min(M,N)` eigenvalues of the smaller
    Gram matrix (:math:`W^\top W` or :math:`WW^\top`), i.e. the nonzero eigenvalues of both.

    Parameters
    ----------
    weights : array_like, shape (..., M, N)

    Returns
    -------
    numpy.ndarray, shape (..., min(M, N))

    Examples
    --------
    >>> gram_eigenvalues(np.diag([3.0, 1.0])).tolist()
    [1.0, 9.0]
    """
    w = check_array(weights, "weights")
    if w.ndim < 2:
        raise ValueError(f"weights must have at least 2 dimensions, got shape {w.shape}")
    sv = np.linalg.svd(w, compute_uv=False)
    return np.sort(sv**2, axis=-1)


def mp_bulk_density(x, area, var, ratio):
    r"""The Marchenko-Pastur density scaled by the bulk area, :math:`A\,\rho_{\rm MP}(x; r, s^2)`.

    Parameters
    ----------
    x : array_like
    area : float
        Bulk area :math:`A>0`.
    var : float
        Scale :math:`s^2>0` (the bulk's mean eigenvalue).
    ratio : float
        :math:`r=N/M\in(0,1]`.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> float(np.round(mp_bulk_density(1/3, 0.5, 1/3, 0.25), 4))
    0.9246
    """
    area = check_positive(area, "area")
    return area * mp_density(x, _check_ratio(ratio), check_positive(var, "var"))


def _check_ratio(ratio):
    r = check_positive(ratio, "ratio")
    if r > 1:
        raise ValueError(f"ratio must lie in (0, 1] (N/M with N <= M), got {r}")
    return r


@dataclass
class MPBulkFit:
    """Result of :func:`fit_mp_bulk`.

    Attributes
    ----------
    area : float
        Fitted bulk area :math:`A`.
    var : float
        Fitted scale :math:`s^2`.
    ratio : float
        The ratio :math:`r` used.
    bin_edges, hist : numpy.ndarray
        The histogram that was fitted (density normalised by all eigenvalues).
    rss : float
        Residual sum of squares of the fit over the bin centres.
    """

    area: float
    var: float
    ratio: float
    bin_edges: np.ndarray
    hist: np.ndarray
    rss: float

    @property
    def tail_weight(self):
        """:math:`1-A`, the spectral weight outside the fitted bulk."""
        return 1.0 - self.area

    @property
    def edges(self):
        """Bulk edges :math:`(x_-, x_+)` of the fitted law."""
        return mp_edges(self.ratio, self.var)

    def density(self, x):
        """Fitted density :math:`A\\rho_{\\rm MP}(x)`."""
        return mp_bulk_density(x, self.area, self.var, self.ratio)

    def cdf(self, x):
        """Distribution function of the fitted Marchenko-Pastur law (mass one), used for unfolding."""
        return mp_cdf(x, self.ratio, self.var)


def fit_mp_bulk(eigs, ratio, bins="fd", range=None, n_total=None, bin_model="average"):
    r"""Least-squares fit of :math:`A\rho_{\rm MP}(x;r,s^2)` to an eigenvalue histogram.

    The histogram (``numpy.histogram`` bins, Freedman-Diaconis by default) is normalised by the
    **total** number of eigenvalues ``n_total`` (default: all of ``eigs``, including those outside
    ``range``), so the bulk integrates to :math:`A` and the tail weight is :math:`1-A`. The sum of
    squared residuals over the bins is minimised: for fixed :math:`s^2` the best :math:`A` is linear
    least squares, and :math:`s^2` is found by a grid search refined by a bounded scalar
    minimisation (so the fit needs no starting point and returns the global minimum).

    By default the model is compared through its **bin averages**
    :math:`[F_{\rm MP}(b_{k+1})-F_{\rm MP}(b_k)]/(b_{k+1}-b_k)`, the exact expected histogram.
    Evaluating the density at the bin centres instead (``bin_model="centre"``, a common
    recipe) makes the residual jump whenever a square-root edge crosses a bin centre; the
    resulting spurious local minima let a tail just above :math:`x_+` drag :math:`s^2` up.

    Parameters
    ----------
    eigs : array_like
        Eigenvalues (any shape; pooled), non-negative.
    ratio : float
        :math:`r=N/M\in(0,1]` (1/4 for a 64x16 key matrix).
    bins : int, str or array_like
        Passed to :func:`numpy.histogram_bin_edges` (default ``"fd"``).
    range : tuple of float, optional
        Histogram range, e.g. ``(0, 1.2 * x_plus)``.
    n_total : int, optional
        Normalising count, at least ``eigs.size`` (default ``eigs.size``).
    bin_model : {"average", "centre"}
        Compare the histogram with the model's bin averages (default) or its values at the
        bin centres.

    Returns
    -------
    MPBulkFit
        With ``0 < area <= 1`` (the area is fitted under that constraint), so that the tail
        weight ``1 - area`` lies in ``[0, 1)``.

    Raises
    ------
    ValueError
        If ``eigs`` is empty, negative, non-finite, has fewer than two values or zero spread (all
        equal), or no bulk with a positive area fits.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> eigs = gram_eigenvalues(rng.uniform(-1/8, 1/8, size=(320, 64, 16)))
    >>> fit = fit_mp_bulk(eigs, 0.25)
    >>> round(fit.area, 2), round(fit.var, 2)
    (0.99, 0.33)
    """
    r = _check_ratio(ratio)
    x = check_array(eigs, "eigs").ravel()
    if np.any(x < 0):
        raise ValueError("eigs must be non-negative")
    if x.size < 2:
        raise ValueError("eigs must hold at least two eigenvalues")
    if np.ptp(x) == 0:
        raise ValueError(f"eigs has zero spread (all equal to {x[0]:g}); no bulk can be fitted")
    n = x.size if n_total is None else check_positive_int(n_total, "n_total")
    if n < x.size:
        raise ValueError(f"n_total ({n}) must be at least the number of eigenvalues given ({x.size}): "
                         "it counts them all, including those outside the bulk")
    try:
        edges = np.histogram_bin_edges(x, bins=bins, range=range)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"bins/range are invalid: {exc}") from exc
    if bin_model not in ("average", "centre"):
        raise ValueError(f"bin_model must be 'average' or 'centre', got {bin_model!r}")
    counts, edges = np.histogram(x, bins=edges)
    widths = np.diff(edges)
    hist = counts / (n * widths)
    centres = 0.5 * (edges[1:] + edges[:-1])

    def model(s2):
        if bin_model == "centre":
            return mp_density(centres, r, s2)
        return np.diff(mp_cdf(edges, r, s2)) / widths

    def profile(s2):
        f = model(s2)
        ff = f @ f
        a = min((f @ hist) / ff, 1.0) if ff > 0 else 0.0  # a bulk holds at most all the weight
        return a, float(np.sum((hist - a * f) ** 2))

    scale = float(np.median(x)) or float(np.mean(x))
    if scale <= 0:
        raise ValueError("eigs must not be all zero")
    grid = scale * np.logspace(-1.0, 1.0, 401)
    # the whole grid at once: the law at scale s^2 is the unit-scale law of x / s^2
    if bin_model == "centre":
        f = mp_density(centres[None, :] / grid[:, None], r, 1.0) / grid[:, None]
    else:
        f = np.diff(mp_cdf(edges[None, :] / grid[:, None], r, 1.0), axis=1) / widths
    ff = np.einsum("gk,gk->g", f, f)
    with np.errstate(invalid="ignore", divide="ignore"):
        a_grid = np.where(ff > 0, np.minimum((f @ hist) / np.where(ff > 0, ff, 1.0), 1.0), 0.0)
    rss = np.sum((hist[None, :] - a_grid[:, None] * f) ** 2, axis=1)
    k = int(np.argmin(rss))
    lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
    best = optimize.minimize_scalar(lambda s2: profile(s2)[1], bounds=(lo, hi), method="bounded",
                                    options={"xatol": 1e-10 * scale})
    s2 = float(best.x) if best.fun <= rss[k] else float(grid[k])
    a, res = profile(s2)
    if a <= 0:
        raise ValueError("no Marchenko-Pastur bulk could be fitted to eigs (fitted area <= 0)")
    return MPBulkFit(area=float(a), var=s2, ratio=r, bin_edges=edges, hist=hist, rss=res)


def fit_mp_bulk_cdf(eigs, ratio, n_grid=400, n_total=None):
    r"""Binning-free fit of a free-area Marchenko-Pastur bulk to the empirical distribution function.

    For a bulk of area :math:`A` and scale :math:`s^2` whose tail lies above :math:`x_+(s^2)`, the
    empirical distribution function :math:`F_n` of all eigenvalues equals
    :math:`A\,F_{\rm MP}(x;r,s^2)` on :math:`[0,x_+]`. On an interval :math:`[0,L]` let
    :math:`T(L)` be the scale that minimises the mean squared difference

    .. math::
        D_L(A,s^2)=\frac1L\int_0^L\big(F_n(x)-A\,F_{\rm MP}(x;r,s^2)\big)^2dx ,

    evaluated by the midpoint rule on ``n_grid`` points (the integrand is a known step function;
    no histogram of the data is formed); for fixed :math:`s^2` the best :math:`A\le1` is linear
    least squares. The fit is the self-consistent scale, :math:`T(x_+(s^2))=s^2`, found by
    bracketing from the scale whose law has the sample median and Brent's method: the data are
    compared with the bulk exactly on its support, and a tail above :math:`x_+` does not enter.

    Parameters
    ----------
    eigs : array_like
        Eigenvalues (any shape; pooled), non-negative, with a positive median.
    ratio : float
        :math:`r=N/M\in(0,1]`.
    n_grid : int
        Midpoints of the integral (at least 50).
    n_total : int, optional
        Normalising count of :math:`F_n` (default ``eigs.size``).

    Returns
    -------
    MPBulkFit
        ``bin_edges`` holds the integration grid and ``hist`` the values of :math:`F_n` on it;
        ``rss`` is :math:`D_{x_+}` at the optimum.

    Raises
    ------
    ValueError
        If no self-consistent scale lies within a factor 4 of the median-based start.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> bulk = gram_eigenvalues(rng.uniform(-1/8, 1/8, size=(320, 64, 16))).ravel()
    >>> fit = fit_mp_bulk_cdf(bulk, 0.25)
    >>> round(fit.area, 2), round(fit.var, 2)
    (1.0, 0.33)
    >>> tail = 0.75 * (1 + rng.pareto(1.5, size=bulk.size // 4))  # 20 % above x_+
    >>> round(fit_mp_bulk_cdf(np.concatenate([bulk, tail]), 0.25).tail_weight, 2)
    0.19
    """
    r = _check_ratio(ratio)
    x = np.sort(check_array(eigs, "eigs").ravel())
    if np.any(x < 0):
        raise ValueError("eigs must be non-negative")
    if x.size < 2 or np.ptp(x) == 0 or np.median(x) <= 0:
        raise ValueError("eigs must hold at least two distinct eigenvalues and a positive median")
    n_grid = check_size(n_grid, "n_grid")
    if n_grid < 50:
        raise ValueError(f"n_grid must be at least 50, got {n_grid}")
    n = x.size if n_total is None else check_positive_int(n_total, "n_total")
    x_plus1 = mp_edges(r, 1.0)[1]
    table_u = np.linspace(0.0, x_plus1, 4001)
    table_f = mp_cdf(table_u, r, 1.0)  # F_MP(x; s^2) = F_MP(x / s^2; 1)
    mid = (np.arange(n_grid) + 0.5) / n_grid

    def fit_on(L):
        """Best (s^2, A, D) on [0, L]."""
        g = mid * L
        fn = np.searchsorted(x, g, side="right") / n

        def profile(s2):
            fm = np.interp(g[None, :] / np.atleast_1d(s2)[:, None], table_u, table_f, right=1.0)
            a = np.minimum(fm @ fn / np.einsum("ij,ij->i", fm, fm), 1.0)
            return a, np.mean((fn[None, :] - a[:, None] * fm) ** 2, axis=1)

        grid = L / x_plus1 * np.logspace(-0.5, 0.5, 101)
        k = int(np.argmin(profile(grid)[1]))
        best = optimize.minimize_scalar(lambda s2: profile(s2)[1][0], method="bounded",
                                        bounds=(grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]),
                                        options={"xatol": 1e-10 * grid[k]})
        a, d = profile(best.x)
        return float(best.x), float(a[0]), float(d[0]), g, fn

    def excess(s2):
        return fit_on(s2 * x_plus1)[0] - s2

    s0 = float(np.median(x)) / optimize.brentq(lambda t: np.interp(t, table_u, table_f) - 0.5, 0.0, x_plus1)
    lo, h_lo = s0, excess(s0)
    step = 1.15 if h_lo >= 0 else 1 / 1.15
    while True:  # walk towards the sign change of T(x_+(s^2)) - s^2
        hi = lo * step
        h_hi = excess(hi)
        if (h_lo >= 0) != (h_hi >= 0):
            break
        if not 0.25 * s0 < hi < 4 * s0:
            raise ValueError("fit_mp_bulk_cdf: no self-consistent bulk scale within a factor 4 of the median's")
        lo, h_lo = hi, h_hi
    s2 = optimize.brentq(excess, min(lo, hi), max(lo, hi), xtol=1e-9 * s0)
    s2_fit, a, dist, g, fn = fit_on(s2 * x_plus1)
    if a <= 0:
        raise ValueError("no Marchenko-Pastur bulk could be fitted to eigs (fitted area <= 0)")
    return MPBulkFit(area=a, var=s2_fit, ratio=r, bin_edges=g, hist=fn, rss=dist)


def normalise_bulk_scale(eigs, quantile=0.5):
    r"""Divide each spectrum by its own scale before pooling: per-matrix normalisation of the bulk.

    Pooling the spectra of matrices whose bulks have different scales widens the pooled bulk and
    inflates the tail weight of a single fitted law. Row :math:`i` is multiplied by
    :math:`q/q_i`, where :math:`q_i` is its ``quantile`` (the median by default, insensitive to a
    few tail eigenvalues) and :math:`q` the median of the :math:`q_i`, so the pooled spectrum keeps
    its units.

    Parameters
    ----------
    eigs : array_like, shape (n_matrices, n)
        One spectrum per row, positive quantiles.
    quantile : float
        In ``(0, 1)``; a lower quantile is less affected by the tail.

    Returns
    -------
    numpy.ndarray, shape (n_matrices, n)

    Examples
    --------
    >>> e = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]])
    >>> normalise_bulk_scale(e)
    array([[1.5, 3. , 4.5],
           [1.5, 3. , 4.5]])
    """
    x = check_array(eigs, "eigs", ndim=2)
    if np.any(x < 0):
        raise ValueError("eigs must be non-negative")
    quantile = check_positive(quantile, "quantile")
    if not quantile < 1:
        raise ValueError(f"quantile must lie in (0, 1), got {quantile!r}")
    q = np.quantile(x, quantile, axis=1)
    if np.any(q <= 0):
        raise ValueError("every row of eigs must have a positive quantile")
    return x * (np.median(q) / q)[:, None]


def tail_weight_systematics(eigs, ratio, bins=(20, 30, 40, 60, 80), quantiles=(0.5, 0.25)):
    r"""Tail weight :math:`1-A` of one set of spectra by several reasonable estimators.

    The estimators: the binning-free :func:`fit_mp_bulk_cdf` and the histogram fit
    :func:`fit_mp_bulk` with Freedman-Diaconis bins and with ``bins`` equal bins, each on the
    spectra normalised per matrix by :func:`normalise_bulk_scale` at each of ``quantiles``, and
    (for comparison) on the pooled spectra without normalisation. Their spread is a systematic
    error of the tail weight: the data do not prefer one of them.

    Parameters
    ----------
    eigs : array_like, shape (n_matrices, n)
        One spectrum per row.
    ratio : float
        As in :func:`fit_mp_bulk`.
    bins : sequence of int
        Equal-bin counts of the histogram fits.
    quantiles : sequence of float
        Normalisation quantiles; the first is the reference.

    Returns
    -------
    dict
        ``{(normalisation, estimator): 1 - A}`` with normalisation ``"q=<quantile>"`` or
        ``"pooled"`` and estimator ``"cdf"``, ``"fd"`` or ``"<k> bins"``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> eigs = gram_eigenvalues(rng.uniform(-1/8, 1/8, size=(48, 64, 16)))
    >>> t = tail_weight_systematics(eigs, 0.25, bins=(30,), quantiles=(0.5,))
    >>> sorted(t) == sorted([(n, e) for n in ("q=0.5", "pooled") for e in ("cdf", "fd", "30 bins")])
    True
    >>> bool(max(t.values()) < 0.05)
    True
    """
    x = check_array(eigs, "eigs", ndim=2)
    bins = check_int_array(bins, "bins", low=2, ndim=1)
    quantiles = check_array(quantiles, "quantiles", ndim=1)
    if bins.size == 0 or quantiles.size == 0:
        raise ValueError("bins and quantiles must hold at least one value each")
    if np.any(bins > 10**5):
        raise ValueError(f"bins must be at most 1e5 bins, got {bins.max()}")
    if np.any((quantiles <= 0) | (quantiles >= 1)):
        raise ValueError(f"quantiles must lie in (0, 1), got {quantiles.tolist()}")
    sets = {f"q={q:g}": normalise_bulk_scale(x, q) for q in quantiles}
    sets["pooled"] = x
    out = {}
    for name, e in sets.items():
        out[(name, "cdf")] = fit_mp_bulk_cdf(e, ratio).tail_weight
        out[(name, "fd")] = fit_mp_bulk(e, ratio).tail_weight
        for b in bins.tolist():
            out[(name, f"{b} bins")] = fit_mp_bulk(e, ratio, bins=b).tail_weight
    return out


def tail_weight(eigs, ratio, **kwargs):
    """Tail weight :math:`1-A\\in[0,1)` of :func:`fit_mp_bulk` (same arguments and errors).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> bulk = gram_eigenvalues(rng.uniform(-1/8, 1/8, size=(320, 64, 16))).ravel()
    >>> tail = 0.75 * (1 + rng.pareto(1.5, size=bulk.size // 4))
    >>> round(tail_weight(np.concatenate([bulk, tail]), 0.25, bins=80, range=(0, 0.9)), 2)
    0.2
    """
    return fit_mp_bulk(eigs, ratio, **kwargs).tail_weight


@dataclass
class MPBootstrap:
    """Result of :func:`bootstrap_mp_fit`.

    Attributes
    ----------
    fit : MPBulkFit
        The fit of the whole sample.
    areas, vars : numpy.ndarray
        ``(n_boot,)`` area and scale of the fit of each bootstrap sample (the bootstrap
        distribution of :func:`scipy.stats.bootstrap`).
    area_ci, var_ci : tuple of float or None
        Bootstrap confidence intervals ``(low, high)`` of the area and the scale (level
        ``confidence_level`` of :func:`bootstrap_mp_fit`).
    """

    fit: MPBulkFit
    areas: np.ndarray
    vars: np.ndarray
    area_ci: tuple | None = None
    var_ci: tuple | None = None

    @property
    def area_se(self):
        """Bootstrap standard error of the area (standard deviation of ``areas``)."""
        return float(np.std(self.areas, ddof=1))

    @property
    def var_se(self):
        """Bootstrap standard error of the scale :math:`s^2`."""
        return float(np.std(self.vars, ddof=1))


def bootstrap_mp_fit(eigs, ratio, n_boot=100, rng=None, confidence_level=0.95, method="percentile",
                     fitter=None, **kwargs):
    r""":func:`fit_mp_bulk` with bootstrap errors from resampling whole matrices.

    The rows of ``eigs`` (one spectrum per matrix) are drawn with replacement ``n_boot`` times and
    each resample is refitted, through :func:`scipy.stats.bootstrap` (the rows' indices are the
    resampled data); the eigenvalues of one matrix stay together, so the errors include their
    correlations (level repulsion). They measure how much the fit depends on which matrices the
    sample happens to hold, not the spread between independent trainings. The standard errors are
    the standard deviations of the bootstrap distribution; the confidence intervals are
    scipy's (``method``).

    Parameters
    ----------
    eigs : array_like, shape (n_matrices, n)
        One spectrum per row (at least two rows).
    ratio : float
        As in :func:`fit_mp_bulk`.
    n_boot : int
        Number of bootstrap resamples (at least 2).
    rng : int, numpy.random.Generator or None
    confidence_level : float
        Level of the confidence intervals, in ``(0, 1)``.
    method : {"percentile", "basic", "BCa"}
        scipy's confidence-interval method.
    fitter : callable, optional
        ``fitter(eigs, ratio, **kwargs) -> MPBulkFit`` (default :func:`fit_mp_bulk`; e.g.
        :func:`fit_mp_bulk_cdf`).
    **kwargs
        Passed to ``fitter`` (``bins``, ``range``, ``bin_model`` of :func:`fit_mp_bulk`).

    Returns
    -------
    MPBootstrap

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> eigs = gram_eigenvalues(rng.uniform(-1/8, 1/8, size=(64, 64, 16)))
    >>> b = bootstrap_mp_fit(eigs, 0.25, n_boot=50, rng=1)
    >>> round(b.fit.var, 2), bool(b.var_se < 0.02), bool(0 < b.area_se < 0.05)
    (0.33, True, True)
    >>> bool(b.var_ci[0] < b.fit.var < b.var_ci[1])
    True
    """
    x = check_array(eigs, "eigs", ndim=2)
    if x.shape[0] < 2:
        raise ValueError(f"eigs must hold at least two spectra (rows), got {x.shape[0]}")
    n_boot = check_size(n_boot, "n_boot")
    if n_boot < 2:
        raise ValueError(f"n_boot must be at least 2, got {n_boot}")
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must lie in (0, 1), got {confidence_level!r}")
    if method not in ("percentile", "basic", "BCa"):
        raise ValueError(f"method must be 'percentile', 'basic' or 'BCa', got {method!r}")
    fitter = fit_mp_bulk if fitter is None else fitter
    if not callable(fitter):
        raise ValueError(f"fitter must be callable, got {type(fitter).__name__}")
    gen = as_generator(rng)
    fit = fitter(x, ratio, **kwargs)

    def statistic(idx):
        f = fitter(x[np.asarray(idx, dtype=int)], ratio, **kwargs)
        return np.array([f.area, f.var])

    seed_arg = "rng" if "rng" in inspect.signature(stats.bootstrap).parameters else "random_state"  # scipy < 1.15
    res = stats.bootstrap((np.arange(x.shape[0]),), statistic, n_resamples=n_boot, vectorized=False,
                          confidence_level=confidence_level, method=method, **{seed_arg: gen})
    dist = res.bootstrap_distribution
    ci = res.confidence_interval
    return MPBootstrap(fit=fit, areas=dist[0], vars=dist[1],
                       area_ci=(float(ci.low[0]), float(ci.high[0])),
                       var_ci=(float(ci.low[1]), float(ci.high[1])))


def covariance_matched_gaussian(weights, n_samples=None, rng=None):
    r"""Gaussian matrices with the same mean row covariance as a stack of weight matrices.

    For matrices :math:`K_1,\dots,K_n\in\mathbb R^{N\times M}` let
    :math:`\Sigma=\frac1{nN}\sum_iK_i^\top K_i` (``M x M``). The returned matrices are
    :math:`Z\Sigma^{1/2}` with :math:`Z` of iid standard normal entries, so that
    :math:`\mathbb E[K^\top K]/N=\Sigma` as for the input: a random matrix with no training
    history whose spectrum is spread like the input's (a *control* for spectral statistics).

    Parameters
    ----------
    weights : array_like, shape (n, N, M)
    n_samples : int, optional
        Number of matrices to draw (default ``n``).
    rng : int, numpy.random.Generator or None

    Returns
    -------
    numpy.ndarray, shape (n_samples, N, M)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> k = rng.normal(size=(50, 4, 3)) * np.array([1.0, 2.0, 3.0])
    >>> z = covariance_matched_gaussian(k, 4000, rng=1)
    >>> cov = lambda w: np.einsum("inm,inp->mp", w, w) / (w.shape[0] * w.shape[1])
    >>> bool(np.abs(cov(z) - cov(k)).max() < 0.05 * np.abs(cov(k)).max())
    True
    """
    w = check_array(weights, "weights", ndim=3)
    n, N, M = w.shape
    n_samples = n if n_samples is None else check_size(n_samples, "n_samples")
    check_allocation((n_samples, N, M), "n_samples")
    gen = as_generator(rng)
    sigma = np.einsum("inm,inp->mp", w, w) / (n * N)
    evals, evecs = np.linalg.eigh(sigma)
    root = (evecs * np.sqrt(np.clip(evals, 0.0, None))) @ evecs.T
    return gen.standard_normal((n_samples, N, M)) @ root


def ensemble_cdf(eigs):
    r"""Empirical distribution function of pooled eigenvalues, linearly interpolated (for unfolding).

    When the exact law is unknown (e.g. trained weights with a heavy tail), spectra are unfolded
    through the smoothed distribution of the whole ensemble: :math:`F` rises linearly from
    :math:`(k-\frac12)/n` to :math:`(k+\frac12)/n` between consecutive pooled eigenvalues.

    Parameters
    ----------
    eigs : array_like
        Pooled eigenvalues (any shape), at least two distinct values.

    Returns
    -------
    callable
        Vectorised, non-decreasing :math:`F` with values in [0, 1].

    Examples
    --------
    >>> F = ensemble_cdf([1.0, 2.0, 3.0, 4.0])
    >>> np.round(F(np.array([0.0, 1.0, 2.5, 5.0])), 3).tolist()
    [0.0, 0.125, 0.5, 1.0]
    """
    x = np.sort(check_array(eigs, "eigs").ravel())
    if np.unique(x).size < 2:
        raise ValueError("eigs must hold at least two distinct values")
    n = x.size
    levels = (np.arange(n) + 0.5) / n

    def cdf(t):
        return np.interp(np.asarray(t, dtype=float), x, levels, left=0.0, right=1.0)

    return cdf


@dataclass
class PowerLawFit:
    r"""Result of :func:`powerlaw_tail_fit`: :math:`p(x)\propto x^{-\alpha}` for :math:`x\ge x_{\min}`.

    Attributes
    ----------
    alpha : float
        Maximum-likelihood exponent.
    xmin : float
        Lower cutoff.
    n_tail : int
        Number of values :math:`\ge x_{\min}`.
    ks : float
        Kolmogorov-Smirnov distance between the tail and the fitted law.
    sigma : float
        Standard error :math:`(\alpha-1)/\sqrt{n_{\rm tail}}`.
    """

    alpha: float
    xmin: float
    n_tail: int
    ks: float
    sigma: float

    def ccdf(self, x):
        """Fitted complementary CDF :math:`(x/x_{\\min})^{1-\\alpha}` (one below ``xmin``).

        Raises
        ------
        ValueError
            If ``x`` is empty or holds NaN or inf.
        """
        x = check_array(x, "x")
        return np.where(x >= self.xmin, (np.maximum(x, self.xmin) / self.xmin) ** (1.0 - self.alpha), 1.0)


def _tail_ks(tail, alpha, xmin):
    n = tail.size
    F = 1.0 - (tail / xmin) ** (1.0 - alpha)
    i = np.arange(n)
    return float(max(np.max((i + 1) / n - F), np.max(F - i / n)))


def powerlaw_tail_fit(x, xmin=None, min_tail=10):
    r"""Continuous power-law fit of the upper tail (Clauset, Shalizi and Newman 2009).

    For a cutoff :math:`x_{\min}`, the maximum-likelihood exponent over the :math:`n` values
    :math:`x_i\ge x_{\min}` is :math:`\hat\alpha=1+n\big/\sum_i\log(x_i/x_{\min})`. Unless ``xmin``
    is given, every sample value leaving at least ``min_tail`` values in the tail is tried, and the
    one minimising the Kolmogorov-Smirnov distance between the tail's empirical CDF and
    :math:`1-(x/x_{\min})^{1-\hat\alpha}` is kept (weightwatcher's default procedure).

    Parameters
    ----------
    x : array_like
        Positive samples (any shape; pooled), e.g. eigenvalues.
    xmin : float, optional
        Fixed cutoff (> 0).
    min_tail : int
        Smallest tail size considered (>= 2).

    Returns
    -------
    PowerLawFit

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> fit = powerlaw_tail_fit(1 + rng.pareto(1.5, size=2000), xmin=1.0)
    >>> round(fit.alpha, 1), fit.n_tail
    (2.5, 2000)
    """
    v = np.sort(check_array(x, "x", positive=True).ravel())
    min_tail = check_positive_int(min_tail, "min_tail")
    if min_tail < 2:
        raise ValueError(f"min_tail must be at least 2, got {min_tail}")
    if xmin is not None:
        xmin = check_positive(xmin, "xmin")
        tail = v[v >= xmin]
        if tail.size < 2:
            raise ValueError(f"xmin={xmin} leaves fewer than two values in the tail")
        candidates = [(xmin, tail)]
    else:
        if v.size < min_tail:
            raise ValueError(f"x must hold at least min_tail={min_tail} values, got {v.size}")
        starts = np.unique(np.searchsorted(v, v[: v.size - min_tail + 1], side="left"))
        candidates = [(v[k], v[k:]) for k in starts]
    best = None
    for xm, tail in candidates:
        logs = np.log(tail / xm).sum()
        if logs <= 0:
            continue
        alpha = 1.0 + tail.size / logs
        ks = _tail_ks(tail, alpha, xm)
        if best is None or ks < best.ks:
            best = PowerLawFit(alpha=float(alpha), xmin=float(xm), n_tail=int(tail.size), ks=ks,
                               sigma=float((alpha - 1.0) / np.sqrt(tail.size)))
    if best is None:
        raise ValueError("x has no spread above any admissible xmin; no power law can be fitted")
    return best


# ---------------------------------------------------------------- ensemble drivers (Chapter 4 notebook)
def jackknife_mp_fit(eigs, ratio, n_groups=10, **kwargs):
    r""":func:`fit_mp_bulk` with jackknife standard errors over groups of matrices.

    The rows of ``eigs`` are split into ``n_groups`` consecutive groups (e.g. the matrices of one
    network); the fit is repeated with each group left out, and the standard error of a parameter
    :math:`\theta` is :math:`\sqrt{\frac{g-1}{g}\sum_k(\theta_{-k}-\bar\theta)^2}`. Unlike
    :func:`bootstrap_mp_fit`, it measures the spread between independent groups (networks).

    Parameters
    ----------
    eigs : array_like, shape (n_matrices, n)
        One spectrum per row, at least ``n_groups`` rows.
    ratio : float
        As in :func:`fit_mp_bulk`.
    n_groups : int
        Number of groups (at least 2).
    **kwargs
        Passed to :func:`fit_mp_bulk`.

    Returns
    -------
    fit : MPBulkFit
        The fit of all rows.
    area_se, var_se : float
        Jackknife standard errors of the area :math:`A` and the scale :math:`s^2`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> eigs = gram_eigenvalues(rng.uniform(-1/8, 1/8, size=(64, 64, 16)))
    >>> fit, area_se, var_se = jackknife_mp_fit(eigs, 0.25, n_groups=8)
    >>> round(fit.area, 2), round(fit.var, 2), bool(0 < var_se < 0.01)  # the area is capped at 1
    (1.0, 0.33, True)
    """
    x = check_array(eigs, "eigs", ndim=2)
    n_groups = check_positive_int(n_groups, "n_groups")
    if not 2 <= n_groups <= x.shape[0]:
        raise ValueError(f"n_groups must lie in [2, {x.shape[0]}] (the rows of eigs), got {n_groups}")
    fit = fit_mp_bulk(x, ratio, **kwargs)
    groups = np.array_split(np.arange(x.shape[0]), n_groups)
    values = []
    for g in groups:
        f = fit_mp_bulk(np.delete(x, g, axis=0), ratio, **kwargs)
        values.append((f.area, f.var))
    v = np.array(values)
    se = np.sqrt((n_groups - 1) / n_groups * np.sum((v - v.mean(axis=0)) ** 2, axis=0))
    return fit, float(se[0]), float(se[1])


def bootstrap_table(boots):
    r"""Areas, scales and their bootstrap errors of a nested list of :class:`MPBootstrap` results.

    Parameters
    ----------
    boots : sequence (possibly nested) of MPBootstrap
        E.g. ``boots[layer][step]``.

    Returns
    -------
    area, area_se, var, var_se : numpy.ndarray
        Each of the nesting's shape.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> eigs = gram_eigenvalues(rng.uniform(-1/8, 1/8, size=(2, 16, 64, 16)))
    >>> boots = [[bootstrap_mp_fit(e, 0.25, n_boot=10, rng=1)] for e in eigs]
    >>> area, area_se, var, var_se = bootstrap_table(boots)
    >>> area.shape, bool(np.all(np.abs(var - 1 / 3) < 0.05))
    ((2, 1), True)
    """
    b = np.asarray(boots, dtype=object)
    if b.size == 0:
        raise ValueError("boots must hold at least one MPBootstrap")
    if not all(isinstance(x, MPBootstrap) for x in b.flat):
        raise ValueError("boots must hold only MPBootstrap results")
    get = np.vectorize(lambda x, name: float(getattr(x, name) if "se" in name else getattr(x.fit, name)),
                       otypes=[float], excluded={"name"})
    return tuple(get(b, name=name) for name in ("area", "area_se", "var", "var_se"))


def independent_levels(eigs, n_spectra, rng=None):
    r"""Spectra of independent levels drawn from a pooled spectrum (a control without level repulsion).

    Each of ``n_spectra`` spectra holds ``n`` values (``n`` = the length of a row of ``eigs``) drawn
    without replacement from all of ``eigs``, sorted; their spacing statistics are those of
    uncorrelated (Poisson) levels with the same density. (Drawing with replacement would repeat a
    value in about one spectrum in six for 16 levels from 768: a zero spacing, which pulls the mean
    spacing ratio below the Poisson value.) Spectrum ``i`` draws from the ``i``-th child of ``rng``
    (:func:`seqrmt.ensemble.spawn_generators`).

    Parameters
    ----------
    eigs : array_like, shape (n_matrices, n)
        Spectra to pool.
    n_spectra : int
        Number of spectra to draw.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None

    Returns
    -------
    numpy.ndarray, shape (n_spectra, n)
        Ascending rows.

    Examples
    --------
    >>> e = independent_levels(np.array([[1.0, 2.0], [3.0, 4.0]]), 3, rng=0)
    >>> e.shape, bool(np.all(np.isin(e, [1.0, 2.0, 3.0, 4.0])))
    ((3, 2), True)
    """
    x = check_array(eigs, "eigs", ndim=2)
    n_spectra = check_size(n_spectra, "n_spectra")
    check_allocation((n_spectra, x.shape[1]), "n_spectra")
    pool = x.ravel()
    gens = spawn_generators(check_seed(rng), n_spectra)
    return np.sort([g.choice(pool, size=x.shape[1], replace=False) for g in gens], axis=1)


def empirical_ccdf(eigs):
    r"""Empirical complementary distribution :math:`\hat P(X\ge x_{(k)})=1-(k-1)/n` at the sorted values.

    Parameters
    ----------
    eigs : array_like
        Pooled values (any shape).

    Returns
    -------
    x, ccdf : numpy.ndarray
        Ascending values and the fraction of values at or above each.

    Examples
    --------
    >>> empirical_ccdf([[3.0, 1.0], [2.0, 4.0]])
    (array([1., 2., 3., 4.]), array([1.  , 0.75, 0.5 , 0.25]))
    """
    x = np.sort(check_array(eigs, "eigs").ravel())
    return x, 1.0 - np.arange(x.size) / x.size


def weightwatcher_metrics(eigs, ratio):
    r"""Three weightwatcher-style summaries of a set of spectra.

    * ``alpha_weighted`` :math:`=\hat\alpha\log_{10}\lambda_{\max}`, with :math:`\hat\alpha` from
      :func:`powerlaw_tail_fit`;
    * the fraction of eigenvalues above the fitted bulk edge :math:`x_+` (:func:`fit_mp_bulk`);
    * ``mp_softrank`` :math:`=x_+/\lambda_{\max}`.

    Parameters
    ----------
    eigs : array_like, shape (n_matrices, n)
        Spectra (pooled for the fits), positive.
    ratio : float
        As in :func:`fit_mp_bulk`.

    Returns
    -------
    numpy.ndarray, shape (3,)
        ``[alpha_weighted, fraction above x_+, mp_softrank]``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> eigs = gram_eigenvalues(rng.uniform(-1/8, 1/8, size=(64, 64, 16)))
    >>> aw, above, soft = weightwatcher_metrics(eigs, 0.25)
    >>> bool(above < 0.02), bool(0.9 < soft < 1.1)
    (True, True)
    """
    e = check_array(eigs, "eigs", ndim=2, positive=True)
    x_plus = fit_mp_bulk(e, ratio).edges[1]
    aw = powerlaw_tail_fit(e).alpha * np.log10(e.max())
    return np.array([aw, np.mean(e > x_plus), x_plus / e.max()])


def plot_mp_bulk_fit(ax, fit, eigs, label=None):
    r"""Draw the fitted histogram, the fitted bulk :math:`A\rho_{\rm MP}` and the edge :math:`x_+`.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    fit : MPBulkFit
        Output of :func:`fit_mp_bulk` for ``eigs``.
    eigs : array_like
        The fitted eigenvalues (sets the range of the curve).
    label : str, optional
        Legend label of the histogram.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``, with the histogram, the fitted bulk and its edge.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> e = gram_eigenvalues(np.random.default_rng(0).uniform(-1/8, 1/8, (32, 64, 16)))
    >>> fig, ax = plt.subplots()
    >>> len(plot_mp_bulk_fit(ax, fit_mp_bulk(e, 0.25), e, "init").lines)
    2
    >>> plt.close(fig)
    """
    from .._validation import check_axes  # noqa: PLC0415
    check_axes(ax)
    from .. import plotting

    if not isinstance(fit, MPBulkFit):
        raise ValueError(f"fit must be an MPBulkFit, got {type(fit).__name__}")
    e = check_array(eigs, "eigs")
    ax.stairs(fit.hist, fit.bin_edges, fill=True, color=plotting.SIM_COLOR, alpha=0.45, label=label)
    xs = np.linspace(1e-3, max(e.max(), fit.edges[1]) * 1.02, 500)
    ax.plot(xs, fit.density(xs), color=plotting.THEORY_COLOR,
            label=rf"$A\rho_{{\rm MP}}$, $A={fit.area:.2f}$")
    ax.axvline(fit.edges[1], color="k", ls=":", lw=1.5, label="$x_+$")
    return ax
