r"""Universal local statistics of eigenvalues: surmise, two-mode density, Binder cumulant, spacings.

Conventions: a GOE matrix of scale :math:`v` has off-diagonal entries of variance :math:`v` and
diagonal entries of variance :math:`2v`; the two-mode width of a :math:`2\times2` block is
:math:`\sigma^2=2v`. A set of spectra is a 2-D array with one spectrum per row.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy import optimize, special
from scipy.linalg.lapack import dsterf as _dsterf

from .._validation import check_allocation, check_array, check_callable, check_choice, \
    check_positive, check_positive_int, check_seed, check_size
from ..ensemble import spawn_generators

# Smallest n at which goe_eigs(method="auto") draws the tridiagonal model: the crossover measured by
# benchmarks/goe_tridiagonal_benchmark.py at one BLAS thread (dense wins at n = 2-3, either at 4-5).
_TRIDIAGONAL_MIN_N = 6


def wigner_surmise(s):
    r"""The GOE Wigner surmise :math:`P(s)=\frac{\pi s}2e^{-\pi s^2/4}` (zero for :math:`s<0`).

    The exact law of the spacing of a :math:`2\times2` GOE matrix in units of its mean; its
    distribution function is :math:`1-e^{-\pi s^2/4}`.

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
    # the 2 x 2 GOE spacing law scaled to unit mean: linear repulsion at small s, Gaussian tail
    return np.where(s > 0, 0.5 * np.pi * s * np.exp(-0.25 * np.pi * s * s), 0.0)


def two_mode_density(x, x0, sigma):
    r"""One-point density :math:`\rho(x;x_0,\sigma)` of a degenerate pair (a :math:`2\times2` GOE block).

    With :math:`u=x-x_0`,

    .. math::
        \rho(x;x_0,\sigma)=\frac{e^{-u^2/2\sigma^2}}{4\sqrt\pi\,\sigma}
        \Big[2e^{-u^2/2\sigma^2}+\sqrt{2\pi}\,\frac u\sigma\,
        \operatorname{erf}\Big(\frac{u}{\sqrt2\sigma}\Big)\Big],

    the marginal of :math:`P(\lambda_1,\lambda_2)\propto|\lambda_1-\lambda_2|
    e^{-[(\lambda_1-x_0)^2+(\lambda_2-x_0)^2]/2\sigma^2}`. Mean :math:`x_0`, variance
    :math:`\frac32\sigma^2`, fourth central moment :math:`\frac{23}4\sigma^4` (Binder cumulant
    :math:`-4/27`).

    Parameters
    ----------
    x : array_like
        Points.
    x0 : float
        The degenerate (target) eigenvalue.
    sigma : float
        Width, :math:`\sigma^2=2v` for a GOE block of off-diagonal variance :math:`v`.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> float(np.round(two_mode_density(2.0, 2.0, 0.3), 6))  # 1 / (2 sqrt(pi) 0.3)
    0.940316
    """
    x = check_array(x, "x")
    x0 = float(check_array(x0, "x0", ndim=0))
    sigma = check_positive(sigma, "sigma")
    z = (x - x0) / sigma
    g = np.exp(-0.5 * z * z)
    # E|x - y| over the partner eigenvalue y ~ N(x0, sigma^2), times the Gaussian weight of x
    return g / (4.0 * np.sqrt(np.pi) * sigma) * (2.0 * g + np.sqrt(2.0 * np.pi) * z * special.erf(z / np.sqrt(2.0)))


def fit_two_mode(samples):
    r"""Least-squares fit of :func:`two_mode_density` to a Freedman-Diaconis histogram: ``(x0, sigma)``.

    The fitting procedure of Aarts et al.: density-normalised histogram with bin width
    :math:`2\,\mathrm{IQR}/n^{1/3}`, unweighted least squares at the bin centres, started from the
    sample mean and the moment width :math:`\sqrt{2\operatorname{Var}/3}`.

    Parameters
    ----------
    samples : array_like
        Pooled eigenvalues of the pair (flattened; at least 10, not all equal).

    Returns
    -------
    x0, sigma : float

    Examples
    --------
    >>> eigs = goe_eigs(2, 4000, 0, scale=0.5 * 0.1**2) + 1.0  # sigma^2 = 2 v = 0.01
    >>> [round(v, 2) for v in fit_two_mode(eigs)]
    [1.0, 0.1]
    """
    x = check_array(samples, "samples").ravel()
    if x.size < 10 or np.ptp(x) == 0:
        raise ValueError("samples must hold at least 10 values, not all equal")
    # least squares on the Freedman-Diaconis histogram, evaluated at the bin centres
    hist, edges = np.histogram(x, bins="fd", density=True)
    if hist.size < 2:
        raise ValueError("samples are too concentrated: their histogram has a single bin")
    centres = 0.5 * (edges[1:] + edges[:-1])
    p0 = [x.mean(), np.sqrt(2.0 * x.var() / 3.0)]  # the two-mode variance is 3 sigma^2 / 2
    popt, _ = optimize.curve_fit(lambda t, a, b: two_mode_density(t, a, abs(b)), centres, hist, p0=p0)
    return float(popt[0]), float(abs(popt[1]))


def binder_cumulant(samples):
    r"""Binder cumulant :math:`U_4=\langle u^4\rangle/(3\langle u^2\rangle^2)-1` of a sample, :math:`u=x-\bar x`.

    Zero for a Gaussian, :math:`-4/27` for the two-mode density, :math:`-1/3` for the
    semicircle.

    Parameters
    ----------
    samples : array_like
        Values (flattened; at least two distinct).

    Returns
    -------
    float

    Examples
    --------
    >>> round(binder_cumulant(np.random.default_rng(0).normal(size=100_000)), 1)
    0.0
    >>> round(binder_cumulant(np.linspace(-1, 1, 100_001)), 3)  # uniform: (1/5) / (3/9) - 1
    -0.4
    """
    x = check_array(samples, "samples").ravel()
    # central moments: U4 = 0 for a Gaussian, < 0 for lighter tails (a bounded law), > 0 heavier
    u = x - x.mean()
    m2 = np.mean(u * u)
    if x.size < 2 or m2 == 0:
        raise ValueError("samples must hold at least two distinct values")
    return float(np.mean(u**4) / (3.0 * m2 * m2) - 1.0)


def goe_binder_cumulant(n):
    r"""Binder cumulant of the one-point density of an :math:`n\times n` GOE matrix.

    From :math:`\mathbb E\operatorname{Tr}H^2=n(n+1)v` and
    :math:`\mathbb E\operatorname{Tr}H^4=(2n^3+5n^2+5n)v^2`,
    :math:`U_4(n)=-(n-1)(n+2)/(3(n+1)^2)`: 0 for one mode, :math:`-4/27` for a pair, tending to
    the semicircle's :math:`-1/3`.

    Parameters
    ----------
    n : int or array_like of int
        Matrix sizes, at least 1.

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
    else:
        n = check_array(n, "n")
        if np.any(n < 1) or np.any(n != np.round(n)):
            raise ValueError("n must hold positive integers")
    # exact at every n: 0 at n = 1 (a single Gaussian eigenvalue), the semicircle's value as n grows
    u4 = -(n - 1) * (n + 2) / (3.0 * (n + 1) ** 2)
    return float(u4) if np.ndim(u4) == 0 else u4


def goe_eigs(n, n_matrices, rng=None, scale=1.0, method="auto"):
    r"""Sorted eigenvalues of independent :math:`n\times n` GOE matrices of scale ``scale``.

    ``"dense"`` draws the matrix and diagonalises it. ``"tridiagonal"`` draws the
    Dumitriu-Edelman :math:`\beta=1` model, the Householder tridiagonalisation of a GOE matrix,
    whose entries are independent: diagonal :math:`\mathcal N(0,2v)`, off-diagonal
    :math:`\sqrt v\,\chi_{n-k}`, :math:`k=1,\dots,n-1`; LAPACK's ``dsterf`` then needs
    :math:`O(n^2)` time and :math:`O(n)` memory. ``"auto"`` uses the tridiagonal model from
    :math:`n=6` on, where it is faster. Matrix ``i`` draws from the ``i``-th child of ``rng``
    (see :func:`seqrmt.ensemble.run_ensemble`); the two methods give different, equally
    distributed, eigenvalues for the same seed.

    Parameters
    ----------
    n : int
        Matrix size.
    n_matrices : int
        Number of matrices.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None
        Root of the matrices' generators.
    scale : float
        Off-diagonal variance :math:`v`.
    method : {"auto", "dense", "tridiagonal"}

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
        method = "tridiagonal" if n >= _TRIDIAGONAL_MIN_N else "dense"
    gens = spawn_generators(check_seed(rng), n_matrices)
    if method == "dense":
        check_allocation((n_matrices, n, n), "n, n_matrices")
        g = np.stack([r.normal(size=(n, n)) for r in gens])
        # (G + G^T) sqrt(v / 2): off-diagonal variance v, diagonal 2 v
        return np.linalg.eigvalsh(np.sqrt(v / 2.0) * (g + np.swapaxes(g, 1, 2)))
    check_allocation((n_matrices, n), "n, n_matrices")
    # Dumitriu-Edelman: Householder reflections take a GOE matrix to a tridiagonal one with the
    # same eigenvalues, diagonal N(0, 2v) and sub-diagonal sqrt(v) chi_{n-1}, ..., sqrt(v) chi_1
    dof = np.arange(n - 1, 0, -1)  # chi degrees of freedom n - 1, ..., 1 below the diagonal
    out = np.empty((n_matrices, n))
    for i, r in enumerate(gens):  # matrix i: its diagonal, then its chi-squares
        a = np.sqrt(2.0 * v) * r.normal(size=n)
        if n == 1:
            out[i] = a
            continue
        # LAPACK's root-free QR for tridiagonal eigenvalues: O(n^2), no eigenvectors
        out[i], info = _dsterf(a, np.sqrt(v * r.chisquare(dof)))
        if info != 0:  # pragma: no cover - LAPACK failure, not seen on finite input
            raise np.linalg.LinAlgError(f"goe_eigs: LAPACK dsterf failed (info={info}) on matrix {i}")
    return out


def unfolded_spacings(eigs, cdf, drop_edges=1):
    r"""Nearest-neighbour spacings after unfolding each spectrum through a distribution function.

    A spectrum of length :math:`N` is sorted and mapped to :math:`u_i=N\,F(x_i)`, whose mean
    spacing is one where :math:`F` is the right law; ``drop_edges`` spacings are dropped at each
    end (the edges unfold poorly), and the rest are pooled and divided by their mean.

    Parameters
    ----------
    eigs : array_like, shape (N,) or (n_spectra, N)
        One spectrum, or one per row.
    cdf : callable
        Vectorised distribution function :math:`F` of the eigenvalue density.
    drop_edges : int
        Spacings dropped at each end of every spectrum.

    Returns
    -------
    numpy.ndarray
        Pooled spacings with mean one.

    Examples
    --------
    >>> np.round(unfolded_spacings([[0.1, 0.2, 0.4, 0.7]], lambda x: x, drop_edges=0), 3).tolist()
    [0.5, 1.0, 1.5]
    """
    check_callable(cdf, "cdf")
    e = _spectra(eigs, "eigs", 2)
    if isinstance(drop_edges, (bool, np.bool_)) or not isinstance(drop_edges, numbers.Integral) \
            or drop_edges < 0:
        raise ValueError(f"drop_edges must be a non-negative integer, got {drop_edges!r}")
    n = e.shape[1]
    if n - 1 - 2 * drop_edges < 1:
        raise ValueError(f"drop_edges={drop_edges} leaves no spacing in spectra of length {n}")
    u = n * np.asarray(cdf(e), dtype=float)  # unfolded levels: mean spacing one
    if u.shape != e.shape or not np.all(np.isfinite(u)):
        raise ValueError("cdf must return finite values of the same shape as its input")
    # near the spectral edges the unfolding is least accurate: drop those spacings
    s = np.diff(u, axis=1)[:, drop_edges:n - 1 - drop_edges].ravel()
    if s.mean() <= 0:
        raise ValueError("cdf must increase over the spectra (all unfolded spacings are zero)")
    return s / s.mean()


def spacing_ratios(eigs):
    r"""Spacing ratios :math:`\tilde r_i=\min(s_i,s_{i+1})/\max(s_i,s_{i+1})` of each spectrum, pooled.

    :math:`s_i=x_{i+1}-x_i` are the spacings of the sorted spectrum; a smooth change of the
    density cancels in the ratio, so no unfolding is needed. Its mean is about 0.5307 for large
    GOE matrices and :math:`2\log2-1` for independent levels.

    Parameters
    ----------
    eigs : array_like, shape (N,) or (n_spectra, N)
        One spectrum or one per row, :math:`N\ge3`, no three equal eigenvalues in a row.

    Returns
    -------
    numpy.ndarray, shape (n_spectra * (N - 2),)

    Examples
    --------
    >>> np.round(spacing_ratios([0.0, 1.0, 3.0, 3.5]), 3).tolist()
    [0.5, 0.25]
    """
    s = np.diff(_spectra(eigs, "eigs", 3), axis=1)
    # r_k = min(s_k, s_k+1) / max(s_k, s_k+1): the local density cancels, so no unfolding
    a, b = s[:, :-1], s[:, 1:]
    hi = np.maximum(a, b)
    if np.any(hi <= 0):
        raise ValueError("eigs must not contain three equal eigenvalues in a row")
    return (np.minimum(a, b) / hi).ravel()


def _spectra(eigs, name, min_len):
    """Spectra as sorted rows of a 2-D array, each at least ``min_len`` long."""
    e = check_array(eigs, name)
    e = e[None, :] if e.ndim == 1 else e
    if e.ndim != 2 or e.shape[1] < min_len:
        raise ValueError(f"{name} must be 1-D or 2-D with at least {min_len} eigenvalues per spectrum, "
                         f"got shape {e.shape}")
    return np.sort(e, axis=1)
