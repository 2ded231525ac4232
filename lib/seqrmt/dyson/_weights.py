r"""The Marchenko-Pastur fit with a free area, for the spectra of trained weight matrices."""

from __future__ import annotations

import numpy as np
from scipy import optimize

from .._validation import check_array, check_positive, check_positive_int
from ..rmt import mp_cdf


def fit_mp_bulk(eigs, ratio, bins="fd", range=None, n_total=None):
    r"""Least-squares fit of a Marchenko-Pastur bulk of free area :math:`A` to an eigenvalue histogram.

    The histogram is normalised by the **total** number of eigenvalues ``n_total`` (default all
    of ``eigs``), so the bulk integrates to :math:`A` and the tail weight is :math:`1-A`. The model
    of bin :math:`k` is the bin average of :math:`A\rho_{\rm MP}(x;r,s^2)`,
    :math:`A[F_{\rm MP}(b_{k+1})-F_{\rm MP}(b_k)]/(b_{k+1}-b_k)`; at the bin centres instead, the
    residual would jump whenever a square-root edge crosses a centre. For fixed :math:`s^2` the
    best :math:`A` is linear least squares (capped at 1); :math:`s^2` comes from a grid over two
    decades around the median eigenvalue, refined by a bounded scalar minimisation, so the global
    minimum is found without a starting point.

    Parameters
    ----------
    eigs : array_like
        Eigenvalues, pooled (any shape), non-negative, not all equal.
    ratio : float
        :math:`r=N/M\in(0,1]`, e.g. 1/4 for the Gram matrix of a 16 x 64 key matrix.
    bins : int, str or array_like
        Passed to :func:`numpy.histogram_bin_edges` (default Freedman-Diaconis).
    range : tuple of float, optional
        Histogram range.
    n_total : int, optional
        Normalising count, at least ``eigs.size``.

    Returns
    -------
    area, var : float
        The bulk area :math:`A\in(0,1]` and scale :math:`s^2`.

    Examples
    --------
    >>> k = np.random.default_rng(0).uniform(-1 / 8, 1 / 8, size=(320, 16, 64))
    >>> area, var = fit_mp_bulk(np.linalg.eigvalsh(k @ k.transpose(0, 2, 1)), 0.25)
    >>> round(area, 2), round(var, 2)  # no tail; s^2 = 64 / 192
    (0.99, 0.33)
    """
    r = check_positive(ratio, "ratio")
    if r > 1:
        raise ValueError(f"ratio must lie in (0, 1], got {r}")
    x = check_array(eigs, "eigs").ravel()
    if np.any(x < 0) or x.size < 2 or np.ptp(x) == 0:
        raise ValueError("eigs must hold at least two non-negative eigenvalues, not all equal")
    n = x.size if n_total is None else check_positive_int(n_total, "n_total")
    if n < x.size:
        raise ValueError(f"n_total ({n}) must be at least the number of eigenvalues given ({x.size})")
    try:
        counts, edges = np.histogram(x, bins=bins, range=range)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"bins/range are invalid: {exc}") from exc
    widths = np.diff(edges)
    hist = counts / (n * widths)  # normalised by all eigenvalues: the bulk has area A <= 1

    def fit_at(f):
        """Best area (rows of f: bin averages of unit-area laws) and residual sum of squares."""
        # for fixed s^2 the best area is linear least squares, A = <f, h> / <f, f>, capped at 1
        ff = np.sum(f * f, axis=-1)
        a = np.where(ff > 0, np.minimum(f @ hist / np.where(ff > 0, ff, 1.0), 1.0), 0.0)
        return a, np.sum((hist - a[..., None] * f) ** 2, axis=-1)

    # a grid over two decades around the median finds the global minimum; a bounded search refines
    scale = float(np.median(x)) or float(np.mean(x))
    grid = scale * np.logspace(-1.0, 1.0, 401)
    # the law at scale s^2 is the unit-scale law of x / s^2: the whole grid in one call
    _, rss = fit_at(np.diff(mp_cdf(edges[None, :] / grid[:, None], r, 1.0), axis=1) / widths)
    k = int(np.argmin(rss))
    best = optimize.minimize_scalar(lambda s2: fit_at(np.diff(mp_cdf(edges, r, s2)) / widths)[1],
                                    bounds=(grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]),
                                    method="bounded", options={"xatol": 1e-10 * scale})
    s2 = float(best.x) if best.fun <= rss[k] else float(grid[k])  # never worse than the grid
    area = float(fit_at(np.diff(mp_cdf(edges, r, s2)) / widths)[0])
    if area <= 0:
        raise ValueError("no Marchenko-Pastur bulk fits eigs (fitted area <= 0)")
    return area, s2
