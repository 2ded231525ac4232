r"""Universal local eigenvalue statistics: Wigner surmise, two-mode density, Binder cumulant, spacings.

The quantities compared with simulations in Chapter 4:

* the GOE **Wigner surmise** :math:`P(s)=\frac\pi2 s\,e^{-\pi s^2/4}` for nearest-neighbour spacings
  normalised to mean one;
* the **two-mode density** :math:`\rho(x;x_0,\sigma)`, the one-point density of a :math:`2\times2` GOE
  block :math:`P(\lambda_1,\lambda_2)\propto|\lambda_1-\lambda_2|\,e^{-[(\lambda_1-x_0)^2+(\lambda_2-x_0)^2]/2\sigma^2}`,
  and the law of its spacing :math:`S=|\lambda_1-\lambda_2|`;
* the **Binder cumulant** :math:`U_4=\langle u^4\rangle/(3\langle u^2\rangle^2)-1`, :math:`u=x-\langle x\rangle`
  (Gaussian 0, two-mode :math:`-4/27`, semicircle :math:`-1/3`), for samples, for a density on a grid
  and in closed form for the one-point density of an :math:`n\times n` GOE;
* **unfolded spacings** (through a distribution function) and the unfolding-free **spacing ratio**.

Conventions: a GOE matrix of scale :math:`v` has off-diagonal entries of variance :math:`v` and diagonal
entries of variance :math:`2v`; its two-mode width is :math:`\sigma^2=2v`. Spectra are 1-D arrays (one
spectrum) or 2-D arrays (one spectrum per row).

Used in: Chapter 4.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy import optimize, special
from scipy.linalg.lapack import dsterf as _dsterf

from .._validation import (
    check_allocation,
    check_array,
    check_callable,
    check_choice,
    check_positive,
    check_positive_int,
    check_size,
)
from .._validation import check_seed
from ..ensemble import spawn_generators
from ..stats import mean_se

__all__ = [
    "wigner_surmise",
    "wigner_surmise_cdf",
    "GOE_MEAN_SPACING_RATIO",
    "POISSON_MEAN_SPACING_RATIO",
    "two_mode_density",
    "two_mode_spacing_density",
    "fit_two_mode",
    "two_mode_width",
    "binder_cumulant",
    "binder_cumulant_density",
    "goe_binder_cumulant",
    "GOE_TRIDIAGONAL_MIN_N",
    "goe_eigs",
    "unfolded_spacings",
    "spacing_ratios",
    "spacing_ratio_density",
    "batch_statistic",
    "jackknife",
    "mean_spacing_ratio",
    "fit_two_mode_errors",
    "plot_two_mode_collapse",
]

#: Mean of the spacing ratio :math:`\tilde r` for large GOE matrices (Atas et al. 2013).
GOE_MEAN_SPACING_RATIO = 0.5307
#: Mean of the spacing ratio for uncorrelated (Poisson) levels, :math:`2\log2-1`.
POISSON_MEAN_SPACING_RATIO = 2.0 * np.log(2.0) - 1.0


def wigner_surmise(s):
    r"""GOE Wigner surmise :math:`P(s)=\frac{\pi s}{2}e^{-\pi s^2/4}` (zero for :math:`s<0`).

    It is the exact spacing law of a :math:`2\times2` GOE matrix, rescaled to mean spacing one.

    Parameters
    ----------
    s : array_like
        Spacings in units of the mean spacing.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> float(np.round(wigner_surmise(1.0), 6))
    0.716186
    """
    s = check_array(s, "s")
    return np.where(s > 0, 0.5 * np.pi * s * np.exp(-0.25 * np.pi * s * s), 0.0)


def wigner_surmise_cdf(s):
    r"""Distribution function :math:`1-e^{-\pi s^2/4}` of the Wigner surmise.

    Examples
    --------
    >>> float(np.round(wigner_surmise_cdf(1.0), 6))
    0.544062
    """
    s = check_array(s, "s")
    return np.where(s > 0, -np.expm1(-0.25 * np.pi * np.clip(s, 0.0, None) ** 2), 0.0)


def two_mode_density(x, x0, sigma):
    r"""One-point density of a degenerate pair (the :math:`2\times2` GOE), :math:`\rho(x;x_0,\sigma)`.

    With :math:`u=x-x_0`,

    .. math::
        \rho(x;x_0,\sigma)=\frac{e^{-u^2/2\sigma^2}}{4\sqrt\pi\,\sigma}
        \Big[2e^{-u^2/2\sigma^2}+\sqrt{2\pi}\,\frac u\sigma\,
        \operatorname{erf}\Big(\frac{u}{\sqrt2\sigma}\Big)\Big].

    It integrates to one, has mean :math:`x_0`, variance :math:`\frac32\sigma^2`, fourth central moment
    :math:`\frac{23}4\sigma^4` and :math:`\rho(x_0)=1/(2\sqrt\pi\sigma)`.

    Parameters
    ----------
    x : array_like
        Points.
    x0 : float
        Degenerate (target) eigenvalue.
    sigma : float
        Width, :math:`\sigma^2=2v` for a GOE of off-diagonal variance :math:`v`.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> float(np.round(two_mode_density(2.0, 2.0, 0.3), 7))
    0.940316
    """
    x = check_array(x, "x")
    x0 = _finite(x0, "x0")
    sigma = check_positive(sigma, "sigma")
    z = (x - x0) / sigma
    g = np.exp(-0.5 * z * z)
    return g / (4.0 * np.sqrt(np.pi) * sigma) * (
        2.0 * g + np.sqrt(2.0 * np.pi) * z * special.erf(z / np.sqrt(2.0))
    )


def two_mode_spacing_density(S, sigma):
    r"""Law of the spacing :math:`S=|\lambda_1-\lambda_2|` of a degenerate pair: :math:`\frac{S}{2\sigma^2}e^{-S^2/4\sigma^2}`.

    Its mean is :math:`\langle S\rangle=\sqrt\pi\,\sigma`; :math:`S/\langle S\rangle` follows the Wigner surmise.

    Examples
    --------
    >>> float(np.round(two_mode_spacing_density(1.0, 0.5), 6))
    0.735759
    """
    S = check_array(S, "S")
    sigma = check_positive(sigma, "sigma")
    return np.where(S > 0, S / (2.0 * sigma**2) * np.exp(-(S**2) / (4.0 * sigma**2)), 0.0)


def fit_two_mode(samples, x0=None, sigma=None):
    r"""Least-squares fit of :func:`two_mode_density` to a Freedman-Diaconis histogram.

    This is the fitting procedure of Aarts et al.: density-normalised histogram with bin width
    :math:`2\,\mathrm{IQR}/n^{1/3}`, unweighted least squares at the bin centres.

    Parameters
    ----------
    samples : array_like
        Pooled eigenvalues of the pair (any shape; flattened; at least 10).
    x0, sigma : float, optional
        Initial guesses; by default the sample mean and the moment estimate
        :math:`\sigma=\sqrt{2\operatorname{Var}/3}`.

    Returns
    -------
    x0, sigma : float
        Fitted centre and width.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> eigs = goe_eigs(2, 4000, rng, scale=0.5 * 0.1**2) + 1.0
    >>> [round(v, 1) for v in fit_two_mode(eigs)]
    [1.0, 0.1]
    """
    x = check_array(samples, "samples").ravel()
    if x.size < 10:
        raise ValueError(f"samples must hold at least 10 values, got {x.size}")
    p0 = [float(x.mean()) if x0 is None else _finite(x0, "x0"),
          float(np.sqrt(2.0 * x.var() / 3.0)) if sigma is None else check_positive(sigma, "sigma")]
    if p0[1] <= 0 or np.ptp(x) == 0:
        raise ValueError("samples must not all be equal")
    hist, edges = np.histogram(x, bins="fd", density=True)
    if hist.size < 2:
        raise ValueError("samples are too concentrated: their histogram has a single bin")
    centres = 0.5 * (edges[1:] + edges[:-1])
    popt, _ = optimize.curve_fit(lambda t, a, b: two_mode_density(t, a, abs(b)), centres, hist, p0=p0)
    return float(popt[0]), float(abs(popt[1]))


def two_mode_width(eigs):
    r"""Moment estimate :math:`\hat\sigma=\sqrt{2\langle u^2\rangle/3}` of the two-mode width, with its standard error.

    The two-mode density has variance :math:`\frac32\sigma^2`. Rows are independent ensemble members
    (e.g. the two eigenvalues of one training run); the standard error treats the per-row means of
    :math:`u^2` as independent and propagates it to :math:`\hat\sigma` (delta method).

    Parameters
    ----------
    eigs : array_like, shape (n_members, k)
        Eigenvalues of the degenerate block, one member per row (at least 2 rows).

    Returns
    -------
    sigma, se : float
        Estimate and standard error.

    Examples
    --------
    >>> e = goe_eigs(2, 20000, 0, scale=0.5)  # sigma = 1
    >>> sigma, se = two_mode_width(e)
    >>> round(sigma, 2), round(se, 3)
    (1.0, 0.003)
    """
    e = check_array(eigs, "eigs", ndim=2)
    if e.shape[0] < 2:
        raise ValueError(f"eigs must hold at least 2 rows (ensemble members), got {e.shape[0]}")
    q = np.mean((e - e.mean()) ** 2, axis=1)
    m2 = q.mean()
    if m2 <= 0:
        raise ValueError("eigs must not all be equal")
    sigma = np.sqrt(2.0 * m2 / 3.0)
    se = 0.5 * sigma * mean_se(q)[1] / m2  # delta method: d sigma / d m2 = sigma / (2 m2)
    return float(sigma), float(se)


def binder_cumulant(samples):
    r"""Binder cumulant :math:`U_4=\langle u^4\rangle/(3\langle u^2\rangle^2)-1` of a sample, :math:`u=x-\bar x`.

    Zero for a Gaussian, :math:`-4/27` for the two-mode density, :math:`-1/3` for the semicircle.

    Parameters
    ----------
    samples : array_like
        Values (any shape; flattened; at least two distinct).

    Returns
    -------
    float

    Examples
    --------
    >>> round(binder_cumulant(np.random.default_rng(0).normal(size=100_000)), 1)
    0.0
    """
    x = check_array(samples, "samples").ravel()
    u = x - x.mean()
    m2 = np.mean(u * u)
    if x.size < 2 or m2 == 0:
        raise ValueError("samples must hold at least two distinct values")
    return float(np.mean(u**4) / (3.0 * m2 * m2) - 1.0)


def binder_cumulant_density(x, density):
    r"""Binder cumulant of a density tabulated on a grid (trapezoidal quadrature).

    The density is normalised on the grid first, so it may be given up to a constant.

    Parameters
    ----------
    x : array_like, shape (m,)
        Increasing grid covering the support (at least 3 points).
    density : array_like, shape (m,)
        Non-negative density values.

    Returns
    -------
    float

    Examples
    --------
    >>> x = np.linspace(-1, 1, 20001)
    >>> round(binder_cumulant_density(x, np.sqrt(1 - x**2)), 4)  # semicircle
    -0.3333
    """
    x = check_array(x, "x", ndim=1)
    f = check_array(density, "density", shape=(x.size,))
    if x.size < 3 or np.any(np.diff(x) <= 0):
        raise ValueError("x must be an increasing grid of at least 3 points")
    if np.any(f < 0) or not np.any(f > 0):
        raise ValueError("density must be non-negative and not identically zero")
    mass = np.trapezoid(f, x)
    mean = np.trapezoid(x * f, x) / mass
    u = x - mean
    m2 = np.trapezoid(u**2 * f, x) / mass
    m4 = np.trapezoid(u**4 * f, x) / mass
    return float(m4 / (3.0 * m2 * m2) - 1.0)


def goe_binder_cumulant(n):
    r"""Exact Binder cumulant of the one-point density of an :math:`n\times n` GOE matrix.

    From :math:`\mathbb E\operatorname{Tr}H^2=n(n+1)v` and
    :math:`\mathbb E\operatorname{Tr}H^4=(2n^3+5n^2+5n)v^2`,

    .. math::
        U_4(n)=-\frac{(n-1)(n+2)}{3(n+1)^2},

    which is 0 for :math:`n=1` (Gaussian), :math:`-4/27` for :math:`n=2` (two-mode) and tends to
    :math:`-1/3` (semicircle) as :math:`n\to\infty`.

    Parameters
    ----------
    n : int or array_like of int
        Matrix size(s), >= 1.

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    >>> round(goe_binder_cumulant(2) * 27, 10)
    -4.0
    """
    if isinstance(n, numbers.Integral) and not isinstance(n, (bool, np.bool_)):
        n = check_positive_int(n, "n")
        return float(-(n - 1) * (n + 2) / (3.0 * (n + 1) ** 2))
    arr = check_array(n, "n")
    if np.any(arr < 1) or np.any(arr != np.round(arr)):
        raise ValueError("n must hold positive integers")
    return -(arr - 1) * (arr + 2) / (3.0 * (arr + 1) ** 2)


#: Smallest ``n`` at which :func:`goe_eigs` (``method="auto"``) uses the tridiagonal model: the
#: crossover measured with ``benchmarks/goe_tridiagonal_benchmark.py`` at one BLAS thread on the 2-core
#: CI machine (2026-11-27). Per matrix the dense path is faster at n = 2-3 (4x at n = 2); n = 4-5 went
#: either way between runs; from n = 6 on the tridiagonal model won in every run (1.3-2x for
#: n = 6-12, 3-4x for n = 64-256, 7-10x at n = 1000-2000).
GOE_TRIDIAGONAL_MIN_N = 6


def goe_eigs(n, n_matrices, rng=None, scale=1.0, method="auto"):
    r"""Sorted eigenvalues of independent :math:`n\times n` GOE matrices.

    Off-diagonal entries have variance ``scale``, diagonal entries ``2 * scale``
    (density :math:`\propto e^{-\operatorname{Tr}H^2/4v}`).

    Two samplers of the same law:

    * ``"dense"`` draws the :math:`n\times n` matrix and diagonalises it
      (:func:`numpy.linalg.eigvalsh`): the definition, :math:`O(n^3)` time and
      :math:`O(n^2)` memory per matrix.
    * ``"tridiagonal"`` draws the Dumitriu--Edelman :math:`\beta=1` model: the
      Householder tridiagonalisation of a GOE matrix has independent entries,
      diagonal :math:`a_i\sim\mathcal N(0,2v)` and off-diagonal
      :math:`b_k=\sqrt v\,\chi_{n-k}`, :math:`k=1,\dots,n-1` (the norm of the
      :math:`n-k` Gaussian entries below the diagonal, which orthogonal
      invariance leaves independent of the rest). Its eigenvalues come from
      LAPACK's root-free QR ``?sterf`` (the driver ``"sterf"`` of
      :func:`scipy.linalg.eigvalsh_tridiagonal`, called directly to spare its
      per-call checks): :math:`O(n^2)` time, :math:`O(n)` memory.

    ``"auto"`` takes the tridiagonal model from ``n >=``
    ``GOE_TRIDIAGONAL_MIN_N`` and the dense one below, where it is
    faster. The two samplers consume the generators differently: the same seed
    gives different (equally distributed) eigenvalues. Matrix ``i`` draws its
    entries from the ``i``-th child of ``rng``
    (:func:`seqrmt.ensemble.spawn_generators`), so the first ``k`` matrices
    do not depend on ``n_matrices``.

    Parameters
    ----------
    n : int
        Matrix size.
    n_matrices : int
        Number of matrices.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None
        Root of the matrices' generators (matrix ``i``: the ``i``-th child).
    scale : float
        Off-diagonal variance :math:`v`.
    method : {"auto", "dense", "tridiagonal"}
        The sampler.

    Returns
    -------
    numpy.ndarray, shape (n_matrices, n)
        Each row sorted increasingly.

    Examples
    --------
    >>> goe_eigs(3, 5, 0).shape
    (5, 3)
    >>> e = goe_eigs(200, 2, 0, method="tridiagonal")
    >>> round(float(np.mean(e**2) / 200), 1)  # E Tr H^2 / n^2 = (n + 1) / n
    1.0
    """
    n = check_size(n, "n")
    n_matrices = check_size(n_matrices, "n_matrices")
    v = check_positive(scale, "scale")
    method = check_choice(method, "method", ("auto", "dense", "tridiagonal"))
    if method == "auto":
        method = "tridiagonal" if n >= GOE_TRIDIAGONAL_MIN_N else "dense"
    gens = spawn_generators(check_seed(rng), n_matrices)
    if method == "dense":
        check_allocation((n_matrices, n, n), "n, n_matrices")
        g = np.stack([r.normal(size=(n, n)) for r in gens])
        h = np.sqrt(v / 2.0) * (g + np.swapaxes(g, 1, 2))
        return np.linalg.eigvalsh(h)
    check_allocation((n_matrices, n), "n, n_matrices")
    dof = np.arange(n - 1, 0, -1)
    a = np.empty((n_matrices, n))
    chi2 = np.empty((n_matrices, n - 1))
    for i, r in enumerate(gens):  # matrix i: its diagonal, then its chi-squares
        a[i] = r.normal(size=n)
        if n > 1:
            chi2[i] = r.chisquare(dof)
    a *= np.sqrt(2.0 * v)
    if n == 1:
        return a
    b = np.sqrt(v * chi2)
    out = np.empty((n_matrices, n))
    for i in range(n_matrices):
        out[i], info = _dsterf(a[i], b[i])
        if info != 0:  # pragma: no cover - LAPACK failure, not seen on finite input
            raise np.linalg.LinAlgError(f"goe_eigs: LAPACK dsterf failed (info={info}) on matrix {i}")
    return out


def unfolded_spacings(eigs, cdf, drop_edges=1):
    r"""Nearest-neighbour spacings after unfolding each spectrum through a distribution function.

    Each spectrum (row) of length :math:`N` is sorted and mapped to :math:`u_i=N\,F(x_i)`, which has
    mean spacing one where :math:`F` is the right law; the consecutive differences are taken,
    ``drop_edges`` spacings are dropped at each end (the edges unfold poorly), the rest are pooled
    over spectra and divided by their mean.

    Parameters
    ----------
    eigs : array_like, shape (N,) or (n_spectra, N)
        One spectrum, or one spectrum per row.
    cdf : callable
        Vectorised distribution function :math:`F` of the eigenvalue density.
    drop_edges : int
        Number of spacings dropped at each end of every spectrum (>= 0).

    Returns
    -------
    numpy.ndarray, shape (n_spectra * (N - 1 - 2 * drop_edges),)
        Pooled spacings with mean one.

    Examples
    --------
    >>> s = unfolded_spacings([[0.1, 0.2, 0.4, 0.7]], lambda x: x, drop_edges=0)
    >>> np.round(s, 3).tolist()
    [0.5, 1.0, 1.5]
    """
    check_callable(cdf, "cdf")
    e = _spectra(eigs, "eigs", 2)
    if isinstance(drop_edges, (bool, np.bool_)) or not isinstance(drop_edges, numbers.Integral) or drop_edges < 0:
        raise ValueError(f"drop_edges must be a non-negative integer, got {drop_edges!r}")
    n = e.shape[1]
    if n - 1 - 2 * drop_edges < 1:
        raise ValueError(f"drop_edges={drop_edges} leaves no spacing in spectra of length {n}")
    u = n * np.asarray(cdf(e), dtype=float)
    if u.shape != e.shape or not np.all(np.isfinite(u)):
        raise ValueError("cdf must return finite values of the same shape as its input")
    s = np.diff(u, axis=1)[:, drop_edges:n - 1 - drop_edges].ravel()
    if s.mean() <= 0:
        raise ValueError("cdf must increase over the spectra (all unfolded spacings are zero)")
    return s / s.mean()


def spacing_ratios(eigs):
    r"""Unfolding-free spacing ratios :math:`\tilde r_i=\min(s_i,s_{i+1})/\max(s_i,s_{i+1})`, pooled over rows.

    :math:`s_i=x_{i+1}-x_i` are the spacings of the sorted spectrum. The mean is about 0.5307 for the
    GOE (:data:`GOE_MEAN_SPACING_RATIO`) and :math:`2\log2-1\approx0.3863` for Poisson levels.

    Parameters
    ----------
    eigs : array_like, shape (N,) or (n_spectra, N)
        One spectrum or one per row, :math:`N\ge3`, without repeated eigenvalues.

    Returns
    -------
    numpy.ndarray, shape (n_spectra * (N - 2),)

    Examples
    --------
    >>> np.round(spacing_ratios([0.0, 1.0, 3.0, 3.5]), 3).tolist()
    [0.5, 0.25]
    """
    e = _spectra(eigs, "eigs", 3)
    s = np.diff(e, axis=1)
    a, b = s[:, :-1], s[:, 1:]
    hi = np.maximum(a, b)
    if np.any(hi <= 0):
        raise ValueError("eigs must not contain three equal eigenvalues in a row")
    return (np.minimum(a, b) / hi).ravel()


def spacing_ratio_density(r, ensemble="goe"):
    r"""Density of the spacing ratio :math:`\tilde r\in[0,1]` for a :math:`3\times3` GOE surmise or Poisson levels.

    ``"goe"``: :math:`P(\tilde r)=\frac{27}{4}\frac{\tilde r+\tilde r^2}{(1+\tilde r+\tilde r^2)^{5/2}}`
    (Atas et al. 2013; mean :math:`4-2\sqrt3\approx0.536`, slightly above the large-:math:`N` value 0.5307);
    ``"poisson"``: :math:`P(\tilde r)=2/(1+\tilde r)^2` (mean :math:`2\log2-1`).

    Parameters
    ----------
    r : array_like
        Ratios (zero outside :math:`[0,1]`).
    ensemble : {"goe", "poisson"}

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> np.round(spacing_ratio_density([0.5, 1.0]), 4).tolist()
    [1.2496, 0.866]
    """
    r = check_array(r, "r")
    inside = (r >= 0) & (r <= 1)
    if ensemble == "goe":
        f = 6.75 * (r + r * r) / (1.0 + r + r * r) ** 2.5
    elif ensemble == "poisson":
        f = 2.0 / (1.0 + np.abs(r)) ** 2
    else:
        raise ValueError(f"ensemble must be 'goe' or 'poisson', got {ensemble!r}")
    return np.where(inside, f, 0.0)


def batch_statistic(samples, statistic, n_batches=20):
    r"""A statistic of independent ensemble members, with a batch-means standard error.

    The rows of ``samples`` are independent members (trainings, matrices); the
    statistic is evaluated on all rows, and on ``n_batches`` disjoint groups of
    rows, whose spread gives the standard error
    :math:`\mathrm{sd}(\text{batch values})/\sqrt{n_\text{batches}}`. Unlike a
    standard error computed from the pooled values, it covers the correlations
    within a row (e.g. the eigenvalues of one matrix).

    Parameters
    ----------
    samples : array_like
        Independent members along the first axis (at least ``n_batches`` rows).
    statistic : callable
        Maps an array of rows to a float, e.g. :func:`binder_cumulant`.
    n_batches : int, optional
        Number of groups (at least 2).

    Returns
    -------
    value, se : float
        The statistic of all rows and its standard error.

    Examples
    --------
    >>> e = goe_eigs(2, 20000, 0)
    >>> u4, se = batch_statistic(e, binder_cumulant)
    >>> abs(u4 + 4 / 27) < 5 * se, round(se, 3)
    (True, 0.006)
    """
    x, n_batches = _check_members(samples, statistic, n_batches, "n_batches")
    values = [float(statistic(b)) for b in np.array_split(x, n_batches)]
    return float(statistic(x)), mean_se(values)[1]


def jackknife(samples, statistic, n_groups=None):
    r"""A statistic of independent ensemble members, with a jackknife standard error.

    The rows of ``samples`` are independent members (heads, trainings). The
    statistic is evaluated on all rows and on the rows left after deleting one
    of ``n_groups`` disjoint groups in turn; the standard error is
    :math:`\sqrt{\frac{g-1}{g}\sum_k(\theta_{-k}-\bar\theta)^2}`. Unlike
    :func:`batch_statistic`, every evaluation uses almost all rows, which suits
    statistics that need many samples (a fit to a pooled spectrum).

    Parameters
    ----------
    samples, statistic
        As in :func:`batch_statistic` (at least ``n_groups`` rows).
    n_groups : int, optional
        Number of groups (at least 2); default: one group per row.

    Returns
    -------
    value, se : float
        As in :func:`batch_statistic`.

    Examples
    --------
    >>> x = np.random.default_rng(0).normal(size=(400, 3))
    >>> mean, se = jackknife(x, np.mean, n_groups=20)
    >>> round(se, 3), round(float(x.mean(axis=1).std(ddof=1)) / 20, 3)
    (0.029, 0.029)
    """
    x, n_groups = _check_members(samples, statistic, n_groups, "n_groups")
    groups = np.array_split(np.arange(x.shape[0]), n_groups)
    values = np.array([float(statistic(np.delete(x, g, axis=0))) for g in groups])
    se = np.sqrt((n_groups - 1) / n_groups * np.sum((values - values.mean()) ** 2))
    return float(statistic(x)), float(se)


def fit_two_mode_errors(samples, n_batches=20):
    r""":func:`fit_two_mode` of independent ensemble members, with batch-means standard errors.

    The fit of all rows, and the standard errors
    :math:`\mathrm{sd}(\text{batch fits})/\sqrt{n_\text{batches}}` of the fits of ``n_batches``
    disjoint groups of rows (as :func:`batch_statistic`, with one fit per group for both parameters).

    Parameters
    ----------
    samples : array_like, shape (n_members, ...)
        Independent members (e.g. the two eigenvalues of each student) along the first axis.
    n_batches : int
        Number of groups (at least 2); each needs at least 10 values.

    Returns
    -------
    (x0, x0_se), (sigma, sigma_se) : tuple of float pairs
        Fitted centre and width with their standard errors.

    Examples
    --------
    >>> eigs = goe_eigs(2, 4000, 0, scale=0.5 * 0.1**2) + 1.0
    >>> (x0, x0_se), (sigma, sigma_se) = fit_two_mode_errors(eigs)
    >>> round(x0, 2), bool(abs(sigma - 0.1) < 4 * sigma_se)
    (1.0, True)
    """
    x, n_batches = _check_members(samples, fit_two_mode, n_batches, "n_batches")
    fit = fit_two_mode(x)
    values = np.array([fit_two_mode(b) for b in np.array_split(x, n_batches)])
    se = mean_se(values)[1]
    return (fit[0], float(se[0])), (fit[1], float(se[1]))


def plot_two_mode_collapse(ax, samples, x0, sigma, labels, bins=40, lim=4.0):
    r"""Step histograms of :math:`(\lambda-x_0)/\sigma` for several ensembles on the two-mode density.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    samples : sequence of array_like
        One array of eigenvalues per ensemble.
    x0 : float
        Common centre.
    sigma : float or sequence of float
        Width(s) used to rescale, positive.
    labels : sequence of str
        One legend label per ensemble.
    bins : int
        Histogram bins on ``[-lim, lim]``.
    lim : float
        Half-width of the plotted range.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``, with one step histogram per ensemble and the density.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> e = [goe_eigs(2, 500, k, scale=0.5) for k in range(2)]
    >>> len(plot_two_mode_collapse(ax, e, 0.0, 1.0, ["a", "b"]).lines)
    1
    >>> plt.close(fig)
    """
    from .._validation import check_axes  # noqa: PLC0415
    check_axes(ax)
    x0 = _finite(x0, "x0")
    lim = check_positive(lim, "lim")
    bins = check_positive_int(bins, "bins")
    samples = [check_array(e, "samples") for e in samples]
    sig = np.broadcast_to(check_array(sigma, "sigma", positive=True), (len(samples),))
    if len(labels) != len(samples):
        raise ValueError(f"labels must hold one label per ensemble ({len(samples)}), got {len(labels)}")
    for e, s, label in zip(samples, sig, labels):
        ax.hist(((e - x0) / s).ravel(), bins=bins, range=(-lim, lim), density=True, histtype="step",
                lw=1.5, label=label)
    u = np.linspace(-lim, lim, 300)
    ax.plot(u, two_mode_density(u, 0.0, 1.0), "k--", lw=1.5, label=r"two-mode, $\sigma=1$")
    ax.set_ylabel("density")
    return ax


def mean_spacing_ratio(eigs, n_batches=20):
    r"""Mean spacing ratio :math:`\langle\tilde r\rangle` of a set of spectra, with a batch-means error.

    :func:`spacing_ratios` of every spectrum (row), averaged; the standard error comes from
    :func:`batch_statistic` over ``n_batches`` groups of rows, so it covers the correlations between
    the ratios of one spectrum.

    Parameters
    ----------
    eigs : array_like, shape (n_spectra, n)
        One spectrum per row (at least 3 eigenvalues, at least ``n_batches`` rows).
    n_batches : int
        Number of groups (at least 2).

    Returns
    -------
    value, se : float

    Examples
    --------
    >>> r, se = mean_spacing_ratio(goe_eigs(50, 400, 0))
    >>> bool(abs(r - GOE_MEAN_SPACING_RATIO) < 5 * se)
    True
    """
    e = _spectra(eigs, "eigs", 3)
    return batch_statistic(e, lambda b: spacing_ratios(b).mean(), n_batches=n_batches)

def _check_members(samples, statistic, n_groups, name):
    """Rows of independent members, a callable statistic and 2 <= n_groups <= rows (None: one per row)."""
    x = check_array(samples, "samples")
    if x.ndim < 1:
        raise ValueError("samples must have at least one axis (the members)")
    if not callable(statistic):
        raise ValueError(f"statistic must be callable, got {statistic!r}")
    n_groups = x.shape[0] if n_groups is None else check_positive_int(n_groups, name)
    if n_groups < 2:
        raise ValueError(f"{name} must be at least 2, got {n_groups}")
    if x.shape[0] < n_groups:
        raise ValueError(f"samples must hold at least {name} = {n_groups} rows, got {x.shape[0]}")
    return x, n_groups


def _finite(x, name):
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (numbers.Real, np.ndarray)):
        raise ValueError(f"{name} must be a real number, got {x!r}")
    x = float(x)
    if not np.isfinite(x):
        raise ValueError(f"{name} must be finite, got {x}")
    return x


def _spectra(eigs, name, min_len):
    e = check_array(eigs, name)
    if e.ndim == 1:
        e = e[None, :]
    if e.ndim != 2:
        raise ValueError(f"{name} must be 1-D or 2-D, got shape {e.shape}")
    if e.shape[1] < min_len:
        raise ValueError(f"{name} must hold at least {min_len} eigenvalues per spectrum, got {e.shape[1]}")
    return np.sort(e, axis=1)
