r"""Masked-token (leave-one-coordinate-out) ridge regression (Chapter 5.1).

Each coordinate :math:`k` of a sequence :math:`x\in\mathbb R^d` is predicted from the other
:math:`d-1` by ridge regression; stacking the :math:`d` predictors gives the zero-diagonal matrix

.. math::
    \hat A=\arg\min_{A:\,A_{kk}=0}\ \frac1n\|X-XA\|_F^2+\lambda\|A\|_F^2
    = I-R\,\operatorname{Diag}(R)^{-1},

with :math:`R=(S+\lambda I)^{-1}` and :math:`S=X^\top X/n`,

whose column :math:`k` is the filter that predicts :math:`x_k`. With
:math:`D=\operatorname{Diag}(R)` the residual of coordinate :math:`k` on a fresh
:math:`x\sim N(0,\Sigma)` is :math:`(D^{-1}Rx)_k`, so the test and training errors are

.. math::
    E_{\rm gen}=\frac1d\sum_k\frac{[R\Sigma R]_{kk}}{R_{kk}^2},\qquad
    E_{\rm train}=\frac1d\sum_k\frac{[RSR]_{kk}}{R_{kk}^2},

where :math:`RSR=R-\lambda R^2`. Both have deterministic equivalents through one ridge fixed point
(:func:`seqrmt.rmt.ridge_resolvent_de`). The zero-mean data are never centred.

Used in: Chapter 5, notebook ``01_masked_regression``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import rmt
from .._validation import check_array, check_nonnegative, check_positive, check_size
from ..ensemble import progress_bar, spawn_generators
from .._validation import as_generator
from ..stats import mean_se
from ..runtime import single_threaded_blas

__all__ = [
    "ar1_covariance",
    "masked_predictor",
    "masked_ridge",
    "MaskedRidgeErrors",
    "masked_ridge_errors",
    "MaskedRidgeTheory",
    "masked_ridge_theory",
    "isotropic_masked_errors",
    "masked_population_error",
    "masked_ridge_spectrum",
    "spiked_masked_top",
    "masked_ridge_experiment",
    "finite_size_gaps",
    "plot_errors_vs_ridge",
    "spiked_experiment",
    "spiked_table",
    "plot_spiked",
]


def _check_data(X):
    X = check_array(X, "X", ndim=2)
    if X.shape[1] < 2:
        raise ValueError(f"X must have at least two columns (coordinates), got shape {X.shape}")
    return X


def ar1_covariance(d, r):
    r"""Covariance :math:`\Sigma_{ij}=r^{|i-j|}` of a stationary AR(1) sequence of length ``d``.

    The sequence :math:`x_{t+1}=rx_t+\sqrt{1-r^2}\,\varepsilon_t` with unit marginal variance.
    Its precision matrix is tridiagonal: :math:`[\Sigma^{-1}]_{kk}=(1+r^2)/(1-r^2)` inside,
    :math:`1/(1-r^2)` at both ends, and :math:`-r/(1-r^2)` next to the diagonal.

    Parameters
    ----------
    d : int
        Sequence length (``d >= 2``).
    r : float
        Correlation, :math:`|r|<1`.

    Returns
    -------
    numpy.ndarray, shape (d, d)

    Examples
    --------
    >>> ar1_covariance(3, 0.5)
    array([[1.  , 0.5 , 0.25],
           [0.5 , 1.  , 0.5 ],
           [0.25, 0.5 , 1.  ]])
    """
    d = check_size(d, "d", minimum=2)
    if d > 20_000:
        raise ValueError(f"d must be at most 20000 (a dense d x d matrix), got {d}")
    r = float(check_array(r, "r", ndim=0))
    if not abs(r) < 1:
        raise ValueError(f"r must satisfy |r| < 1, got {r}")
    lag = np.abs(np.subtract.outer(np.arange(d), np.arange(d)))
    return np.power(r, lag)


def masked_predictor(C, lam=0.0):
    r"""The masked (zero-diagonal) ridge predictor :math:`I-R\operatorname{Diag}(R)^{-1}` of a covariance.

    For :math:`R=(C+\lambda I)^{-1}`, column :math:`k` of the result holds the coefficients of the
    ridge predictor of coordinate :math:`k` from the others under the second-moment matrix
    :math:`C`. With ``C = X.T @ X / n`` this is :func:`masked_ridge`; with the population
    covariance and ``lam = 0`` it is the optimal (interpolation) predictor
    :math:`I-\Sigma^{-1}\operatorname{Diag}(\Sigma^{-1})^{-1}`.

    Derivation: column :math:`k`'s stationarity condition with a multiplier :math:`\theta` for
    :math:`a_k=0` reads :math:`(C+\lambda)a=Ce_k-\theta e_k`, so
    :math:`a=e_k-(\lambda+\theta)Re_k`, and :math:`a_k=0` fixes :math:`\lambda+\theta=1/R_{kk}`.

    Parameters
    ----------
    C : array_like, shape (d, d)
        Symmetric positive semi-definite matrix.
    lam : float
        Ridge :math:`\lambda\ge0`; ``0`` needs a positive-definite ``C``.

    Returns
    -------
    numpy.ndarray, shape (d, d)
        Zero diagonal; column ``k`` predicts coordinate ``k``.

    Examples
    --------
    >>> A = masked_predictor(ar1_covariance(5, 0.6))
    >>> round(float(A[1, 2]), 4), round(float(A[3, 2]), 4), round(float(A[0, 2]), 12)  # r/(1+r^2)
    (0.4412, 0.4412, 0.0)
    """
    _, s, U = rmt._check_covariance(C, "C")
    if s.size < 2:
        raise ValueError(f"C must be at least 2 x 2, got {s.size} x {s.size}")
    lam = check_nonnegative(lam, "lam")
    if s[0] + lam <= 1e-12 * max(1.0, s[-1]):
        raise ValueError("C + lam I must be positive definite: C is singular, take lam > 0")
    R = (U / (s + lam)) @ U.T
    A = np.eye(s.size) - R / np.diag(R)[None, :]
    np.fill_diagonal(A, 0.0)
    return A


def masked_ridge(X, lam):
    r"""The masked-token ridge predictor :math:`\hat A=I-R\operatorname{Diag}(R)^{-1}` of data ``X``.

    The minimiser of :math:`\frac1n\|X-XA\|_F^2+\lambda\|A\|_F^2` over :math:`A` with zero
    diagonal, :math:`R=(X^\top X/n+\lambda I)^{-1}`. Column :math:`k` predicts :math:`x_k` from the
    other coordinates: :math:`\hat x_k=\sum_{j\ne k}x_j\hat A_{jk}`. The data are not centred.
    (sklearn's ``Ridge(alpha)`` on one column corresponds to ``alpha = n * lam``.)

    Parameters
    ----------
    X : array_like, shape (n, d)
        One sequence per row.
    lam : float
        Ridge :math:`\lambda>0`.

    Returns
    -------
    numpy.ndarray, shape (d, d)

    Examples
    --------
    >>> X = np.random.default_rng(0).standard_normal((50, 4))
    >>> A = masked_ridge(X, 0.1)
    >>> bool(np.all(np.diag(A) == 0))
    True
    """
    X = _check_data(X)
    lam = check_positive(lam, "lam")
    with single_threaded_blas():
        return masked_predictor(X.T @ X / X.shape[0], lam)


@dataclass(frozen=True)
class MaskedRidgeErrors:
    r"""Test and training errors of one masked ridge fit (:func:`masked_ridge_errors`).

    Attributes
    ----------
    test_error : float or numpy.ndarray
        :math:`E_{\rm gen}=\frac1d\sum_k[R\Sigma R]_{kk}/R_{kk}^2` (exact expectation over a fresh
        sample given the training data).
    train_error : float or numpy.ndarray
        :math:`E_{\rm train}=\frac1{nd}\|X-X\hat A\|_F^2`.
    """

    test_error: object
    train_error: object


def masked_ridge_errors(X, lam, Sigma):
    r"""Exact test and training errors of the masked ridge predictor, for one or several ridges.

    From one eigendecomposition :math:`S=U\operatorname{diag}(e)U^\top`:
    :math:`R_{kk}=\sum_jU_{kj}^2/(e_j+\lambda)`, :math:`[RSR]_{kk}=\sum_jU_{kj}^2e_j/(e_j+\lambda)^2`
    and :math:`[R\Sigma R]_{kk}` from :math:`U^\top\Sigma U`; no test sample is drawn.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Training sequences (rows), drawn from :math:`N(0,\Sigma)`.
    lam : float or array_like
        Ridge(s) :math:`\lambda>0`.
    Sigma : array_like, shape (d, d)
        Population covariance of the test sequences.

    Returns
    -------
    MaskedRidgeErrors
        Arrays with the shape of ``lam``.

    Examples
    --------
    >>> X = np.random.default_rng(1).standard_normal((40, 5))
    >>> err = masked_ridge_errors(X, 0.3, np.eye(5))
    >>> A = masked_ridge(X, 0.3)
    >>> bool(np.isclose(err.train_error, np.sum((X - X @ A)**2) / X.size))
    True
    >>> bool(np.isclose(err.test_error, np.sum((np.eye(5) - A)**2) / 5))  # Sigma = I
    True
    """
    X = _check_data(X)
    n, d = X.shape
    lam_a = check_array(lam, "lam", positive=True)
    Sigma, _, _ = rmt._check_covariance(Sigma)
    if Sigma.shape != (d, d):
        raise ValueError(f"Sigma must have shape {(d, d)} to match X, got {Sigma.shape}")
    with single_threaded_blas():
        e, U = np.linalg.eigh(X.T @ X / n)
        e = np.clip(e, 0.0, None)
        M = U.T @ Sigma @ U
        U2 = U**2
        test, train = [], []
        for lm in lam_a.ravel():
            r = 1.0 / (e + lm)
            Ur = U * r
            diag_r = U2 @ r
            test.append(np.mean(np.sum((Ur @ M) * Ur, axis=1) / diag_r**2))
            train.append(np.mean((U2 @ (e * r**2)) / diag_r**2))
    shape = lam_a.shape
    test, train = np.reshape(test, shape), np.reshape(train, shape)
    if lam_a.ndim == 0:
        return MaskedRidgeErrors(float(test), float(train))
    return MaskedRidgeErrors(test, train)


@dataclass(frozen=True)
class MaskedRidgeTheory:
    r"""Deterministic equivalents of the masked ridge errors (:func:`masked_ridge_theory`).

    Attributes
    ----------
    test_error : float or numpy.ndarray
        :math:`\frac1d\sum_k[\bar R\Sigma\bar R]_{kk}/((1-\zeta)\bar R_{kk}^2)`.
    train_error : float or numpy.ndarray
        :math:`\frac1d\sum_k(\bar R_{kk}+\lambda\,\partial_\lambda\bar R_{kk})/\bar R_{kk}^2`.
    delta, zeta : float or numpy.ndarray
        The scalars of :func:`seqrmt.rmt.ridge_resolvent_de`.
    """

    test_error: object
    train_error: object
    delta: object
    zeta: object


def masked_ridge_theory(Sigma, n, lam, tol=1e-12, max_iter=200):
    r"""Deterministic equivalents of the test and training errors of masked ridge regression.

    With :math:`\bar R=(\Sigma/(1+\delta)+\lambda I)^{-1}`, :math:`\delta=\frac1n\operatorname{Tr}\Sigma\bar R`
    and :math:`\zeta=\operatorname{Tr}(\Sigma\bar R\Sigma\bar R)/(n(1+\delta)^2)`,

    .. math::
        E_{\rm gen}\simeq\frac1d\sum_k\frac{[\bar R\Sigma\bar R]_{kk}}{(1-\zeta)\bar R_{kk}^2},\qquad
        E_{\rm train}\simeq\frac1d\sum_k\frac{\bar R_{kk}+\lambda\,\partial_\lambda\bar R_{kk}}{\bar R_{kk}^2},

    from :math:`u^\top Ru\simeq u^\top\bar Ru`, :math:`R\Sigma R\simeq\bar R\Sigma\bar R/(1-\zeta)`
    and :math:`R^2=-\partial_\lambda R`; the derivative includes that of :math:`\delta(\lambda)`
    (computed exactly by :func:`seqrmt.rmt.ridge_resolvent_de`).

    Parameters
    ----------
    Sigma : array_like, shape (d, d)
        Population covariance.
    n : int
        Number of training sequences.
    lam : float or array_like
        Ridge(s) :math:`\lambda>0`.
    tol, max_iter
        Passed to :func:`seqrmt.rmt.solve_delta`.

    Returns
    -------
    MaskedRidgeTheory
        Fields with the shape of ``lam``.

    Examples
    --------
    >>> th = masked_ridge_theory(np.eye(200), 400, 0.1)
    >>> round(th.test_error, 4), round(th.train_error, 4)
    (1.569, 0.5173)
    """
    de = rmt.ridge_resolvent_de(Sigma, n, lam, tol=tol, max_iter=max_iter)
    lam_a = np.asarray(lam, dtype=float)
    zeta = np.asarray(de.zeta)
    test = np.mean(de.diag_sigma / de.diag**2, axis=-1) / (1.0 - zeta)
    lam_b = lam_a.ravel()[:, None] if lam_a.ndim else lam_a
    train = np.mean((de.diag + lam_b * de.diag_prime) / de.diag**2, axis=-1)
    if lam_a.ndim == 0:
        return MaskedRidgeTheory(float(test), float(train), float(de.delta), float(de.zeta))
    shape = lam_a.shape
    return MaskedRidgeTheory(*(np.reshape(v, shape) for v in (test, train, de.delta, de.zeta)))


def isotropic_masked_errors(gamma, lam):
    r"""Closed forms of the masked ridge errors for :math:`\Sigma=I`.

    With :math:`m(\lambda)=\int\frac{\mu_{\rm MP}(dx)}{x+\lambda}` (ratio :math:`\gamma=d/n`) and
    :math:`m_2=-m'(\lambda)`: :math:`E_{\rm gen}=m_2/m^2` and :math:`E_{\rm train}=(m-\lambda m_2)/m^2`.
    Jensen's inequality gives :math:`m_2=\int(x+\lambda)^{-2}d\mu\ge m^2`, strictly since the
    Marchenko-Pastur law is not a point mass, so :math:`E_{\rm gen}>1=E^*` for every :math:`\lambda`.

    Parameters
    ----------
    gamma : float
        :math:`\gamma=d/n>0`.
    lam : float or array_like
        Ridge(s) :math:`\lambda>0`.

    Returns
    -------
    test_error, train_error : float or numpy.ndarray

    Examples
    --------
    >>> [round(float(v), 4) for v in isotropic_masked_errors(0.5, 0.1)]
    [1.569, 0.5173]
    """
    gamma = check_positive(gamma, "gamma")
    lam_a = check_array(lam, "lam", positive=True)
    m, m2 = rmt.mp_resolvent_moments(lam_a, gamma)
    test, train = m2 / m**2, (m - lam_a * m2) / m**2
    if lam_a.ndim == 0:
        return float(test), float(train)
    return test, train


def masked_population_error(Sigma):
    r"""Population optimum :math:`E^*=\frac1d\sum_k1/[\Sigma^{-1}]_{kk}` of masked-token prediction.

    :math:`1/[\Sigma^{-1}]_{kk}=\operatorname{Var}(x_k\mid x_{-k})` (Schur complement) is the error
    of the best linear predictor of coordinate :math:`k` from the others; it is the limit of
    :math:`E_{\rm gen}` as :math:`n\to\infty` and then :math:`\lambda\to0`. For AR(1) with
    correlation :math:`r` an interior coordinate contributes :math:`(1-r^2)/(1+r^2)` and the two
    end points :math:`1-r^2`.

    Parameters
    ----------
    Sigma : array_like, shape (d, d)
        Positive-definite covariance.

    Returns
    -------
    float

    Examples
    --------
    >>> round(masked_population_error(ar1_covariance(200, 0.6)), 4)
    0.4723
    """
    _, s, U = rmt._check_covariance(Sigma)
    if s.size < 2:
        raise ValueError("Sigma must be at least 2 x 2")
    if s[0] <= 1e-12 * max(1.0, s[-1]):
        raise ValueError("Sigma must be positive definite")
    prec_diag = (U**2) @ (1.0 / s)
    return float(np.mean(1.0 / prec_diag))


def masked_ridge_spectrum(X, lam):
    r"""Eigenvalues and right eigenvectors of the (non-symmetric) masked ridge predictor.

    :math:`\hat A=I-RD^{-1}` is similar to the symmetric :math:`B=I-D^{-1/2}RD^{-1/2}`:
    :math:`\hat A=D^{1/2}BD^{-1/2}`, so its eigenvalues are real and a right eigenvector is
    :math:`D^{1/2}w` for an eigenvector :math:`w` of :math:`B`.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Training sequences.
    lam : float
        Ridge :math:`\lambda>0`.

    Returns
    -------
    eigenvalues : numpy.ndarray, shape (d,)
        In decreasing order.
    vectors : numpy.ndarray, shape (d, d)
        Unit-norm right eigenvectors (columns), in the same order.

    Examples
    --------
    >>> X = np.random.default_rng(2).standard_normal((30, 6))
    >>> ev, V = masked_ridge_spectrum(X, 0.5)
    >>> bool(np.allclose(masked_ridge(X, 0.5) @ V, V * ev))
    True
    """
    X = _check_data(X)
    lam = check_positive(lam, "lam")
    n, d = X.shape
    with single_threaded_blas():
        e, U = np.linalg.eigh(X.T @ X / n)
        R = (U / (np.clip(e, 0.0, None) + lam)) @ U.T
        sq = np.sqrt(np.diag(R))
        ev, W = np.linalg.eigh(np.eye(d) - R / np.outer(sq, sq))
    V = W[:, ::-1] * sq[:, None]
    return ev[::-1], V / np.linalg.norm(V, axis=0)


def spiked_masked_top(theta, gamma, lam):
    r"""Top eigenvalue of :math:`\hat A` and overlap of its right eigenvector, spiked covariance.

    For :math:`\Sigma=I+\theta uu^\top` with a delocalised unit :math:`u` every :math:`R_{kk}\to m(\lambda)`
    (the Marchenko-Pastur Stieltjes transform at :math:`-\lambda`, ratio :math:`\gamma=d/n`), so
    :math:`\hat A\simeq I-R/m` and an eigenvalue :math:`\ell` of :math:`S` maps to
    :math:`1-1/(m(\ell+\lambda))`, increasing in :math:`\ell`. Hence (BBP transition)

    * :math:`\theta>\sqrt\gamma`: outlier at :math:`\ell_1=(1+\theta)(1+\gamma/\theta)`, squared overlap
      :math:`(1-\gamma/\theta^2)/(1+\gamma/\theta)` with :math:`u`;
    * :math:`\theta\le\sqrt\gamma`: the top eigenvalue sticks to the image of the bulk edge
      :math:`(1+\sqrt\gamma)^2`, overlap 0.

    Parameters
    ----------
    theta : float or array_like
        Spike strength(s) :math:`\theta\ge0`.
    gamma : float
        :math:`\gamma=d/n>0`.
    lam : float
        Ridge :math:`\lambda>0`.

    Returns
    -------
    top : float or numpy.ndarray
        Limit of the largest eigenvalue of :math:`\hat A`.
    overlap : float or numpy.ndarray
        Limit of :math:`\langle\hat v,u\rangle^2` for the top unit right eigenvector :math:`\hat v`.

    Examples
    --------
    >>> [round(float(v), 4) for v in spiked_masked_top(2.0, 0.5, 0.5)]
    [0.716, 0.7]
    """
    th = check_array(theta, "theta")
    if np.any(th < 0):
        raise ValueError("theta must be non-negative")
    gamma = check_positive(gamma, "gamma")
    lam = check_positive(lam, "lam")
    m, _ = rmt.mp_resolvent_moments(lam, gamma)
    above = th > np.sqrt(gamma)
    ths = np.where(above, th, 1.0)
    ell = np.where(above, (1 + ths) * (1 + gamma / ths), (1 + np.sqrt(gamma)) ** 2)
    top = 1.0 - 1.0 / (m * (ell + lam))
    overlap = np.where(above, (1 - gamma / ths**2) / (1 + gamma / ths), 0.0)
    if th.ndim == 0:
        return float(top), float(overlap)
    return top, overlap



# ---------------------------------------------------------------------------
# Monte Carlo drivers, tables and figures of the notebook
# ---------------------------------------------------------------------------


def _gaussian_sets(Sigma, n, n_sets, rng, desc=None):
    """Yield ``n_sets`` data sets ``X`` (n x d) with rows N(0, Sigma), set ``i`` drawn from the
    ``i``-th child generator of ``rng`` (:func:`seqrmt.ensemble.spawn_generators`)."""
    L = np.linalg.cholesky(Sigma)
    for g in progress_bar(spawn_generators(rng, n_sets), desc=desc):
        yield g.standard_normal((n, Sigma.shape[0])) @ L.T


def masked_ridge_experiment(Sigma, n, lam, n_sets, rng=None):
    r"""Test and training errors of masked ridge on independent Gaussian data sets.

    Each data set is :math:`X=GL^\top` with :math:`G` an :math:`n\times d` standard Gaussian matrix
    and :math:`LL^\top=\Sigma` (Cholesky), set :math:`i` drawn from the :math:`i`-th child generator of
    ``rng`` (:func:`seqrmt.ensemble.spawn_generators`); the errors are exact
    (:func:`masked_ridge_errors`).

    Parameters
    ----------
    Sigma : array_like, shape (d, d)
        Positive definite population covariance.
    n : int
        Training sequences per data set.
    lam : array_like, shape (k,)
        Ridges :math:`\lambda>0`.
    n_sets : int
        Number of data sets.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    numpy.ndarray, shape (n_sets, 2, k)
        :math:`E_{\rm gen}` (index 0) and :math:`E_{\rm train}` (index 1) per data set and ridge.

    Examples
    --------
    >>> e = masked_ridge_experiment(np.eye(4), 20, [0.1, 1.0], 3, rng=0)
    >>> e.shape, bool(np.all(e[:, 1, 0] <= e[:, 1, 1]))  # training error grows with the ridge
    ((3, 2, 2), True)
    """
    Sigma, _, _ = rmt._check_covariance(Sigma)
    if Sigma.shape[0] < 2:
        raise ValueError("Sigma must be at least 2 x 2")
    n = check_size(n, "n")
    lam = check_array(lam, "lam", ndim=1, positive=True)
    n_sets = check_size(n_sets, "n_sets")
    try:
        np.linalg.cholesky(Sigma)
    except np.linalg.LinAlgError:
        raise ValueError("Sigma must be positive definite") from None
    rng = as_generator(rng)
    out = []
    for X in _gaussian_sets(Sigma, n, n_sets, rng, desc="data sets"):
        run = masked_ridge_errors(X, lam, Sigma)
        out.append([run.test_error, run.train_error])
    return np.array(out)


def finite_size_gaps(Sigma, n, lam, n_sets, rng=None):
    r"""Scaled gaps :math:`d\,(E-\bar E)` between simulated errors and their equivalents.

    :func:`masked_ridge_experiment` minus :func:`masked_ridge_theory`, times :math:`d`: if the
    deterministic equivalent is exact to order :math:`1/d`, the mean gap stays of order one as
    :math:`d` grows.

    Parameters
    ----------
    Sigma, n, lam, n_sets, rng
        As in :func:`masked_ridge_experiment`.

    Returns
    -------
    numpy.ndarray, shape (n_sets, 2, k)
        :math:`d(E_{\rm gen}-\bar E_{\rm gen})` (index 0) and
        :math:`d(E_{\rm train}-\bar E_{\rm train})` (index 1).

    Examples
    --------
    >>> g = finite_size_gaps(ar1_covariance(20, 0.5), 15, [0.1], 2, rng=0)
    >>> g.shape
    (2, 2, 1)
    """
    e = masked_ridge_experiment(Sigma, n, lam, n_sets, rng)
    Sigma = np.asarray(Sigma, dtype=float)
    th = masked_ridge_theory(Sigma, n, np.asarray(lam, dtype=float))
    d = Sigma.shape[0]
    return d * (e - np.array([th.test_error, th.train_error]))


def plot_errors_vs_ridge(ax, lam, theory, lam_mc, mean, se, population_error=None):
    r"""Draw test and training errors against the ridge: theory lines and simulation points.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    lam : array_like, shape (k,)
        Ridges of the theory curves (log axis).
    theory : MaskedRidgeTheory
        :func:`masked_ridge_theory` at ``lam``.
    lam_mc : array_like, shape (m,)
        Ridges of the simulation.
    mean, se : array_like, shape (2, m)
        Mean and standard error of :math:`(E_{\rm gen},E_{\rm train})` over data sets; the error
        bars are two standard errors.
    population_error : float, optional
        :math:`E^*` (:func:`masked_population_error`), drawn as a dashed line.

    Returns
    -------
    matplotlib.axes.Axes
    """
    from .._validation import check_axes  # noqa: PLC0415
    check_axes(ax)
    lam = check_array(lam, "lam", ndim=1, positive=True)
    if not isinstance(theory, MaskedRidgeTheory):
        raise ValueError("theory must be a MaskedRidgeTheory (masked_ridge_theory)")
    lam_mc = check_array(lam_mc, "lam_mc", ndim=1, positive=True)
    mean = check_array(mean, "mean", shape=(2, lam_mc.size))
    se = check_array(se, "se", shape=(2, lam_mc.size))
    curves = [check_array(theory.test_error, "theory", shape=lam.shape),
              check_array(theory.train_error, "theory", shape=lam.shape)]
    for j, (curve, name) in enumerate(zip(curves, ("test", "train"))):
        ax.semilogx(lam, curve, color=f"C{j}", label=f"{name}, theory")
        ax.errorbar(lam_mc, mean[j], yerr=2 * se[j], fmt="o", mfc="white",
                    color=f"C{j}", capsize=3, label=f"{name}, simulation")
    if population_error is not None:
        ax.axhline(check_nonnegative(population_error, "population_error"), color="k",
                   ls="--", lw=1.5, label="$E^*$")
    ax.set_xlabel(r"ridge $\lambda$")
    return ax


def spiked_experiment(u, theta, n, lam, n_sets, rng=None, noise_variances=None):
    r"""Top eigenpair of masked ridge and of PCA on spiked data :math:`\Sigma=D+\theta uu^\top`.

    For each :math:`\theta` and data set (each set from its own child generator of ``rng``),
    :math:`n` Gaussian rows with covariance
    :math:`\Sigma`; records the top eigenvalue of :math:`\hat A` (:func:`masked_ridge_spectrum`)
    and the squared overlaps with :math:`u` of its top eigenvector and of the top eigenvector of
    :math:`X^\top X`.

    Parameters
    ----------
    u : array_like, shape (d,)
        Unit spike direction.
    theta : array_like, shape (m,)
        Spike strengths :math:`\theta\ge0`.
    n : int
        Rows per data set.
    lam : float
        Ridge :math:`\lambda>0`.
    n_sets : int
        Data sets per :math:`\theta`.
    rng : None, int or numpy.random.Generator
    noise_variances : array_like, shape (d,), optional
        Diagonal of the noise covariance :math:`D` (positive); default :math:`D=I`.

    Returns
    -------
    top, overlap, overlap_pca : numpy.ndarray, shape (m, n_sets)

    Examples
    --------
    >>> u = np.ones(20) / np.sqrt(20)  # a strong spike: both top eigenvectors find u
    >>> top, ov, ov_pca = spiked_experiment(u, [0.0, 20.0], 400, 0.5, 2, rng=0)
    >>> top.shape, bool(ov[1].min() > 0.9 and ov_pca[1].min() > 0.9)
    ((2, 2), True)
    """
    u = check_array(u, "u", ndim=1)
    if u.size < 2 or not np.isclose(u @ u, 1.0):
        raise ValueError("u must be a unit vector of dimension at least 2")
    n, n_sets = check_size(n, "n"), check_size(n_sets, "n_sets")
    lam = check_positive(lam, "lam")
    theta = check_array(theta, "theta", ndim=1)
    if np.any(theta < 0):
        raise ValueError("theta must be non-negative")
    noise = (np.eye(u.size) if noise_variances is None else
             np.diag(check_array(noise_variances, "noise_variances", shape=u.shape, positive=True)))
    rng = as_generator(rng)
    top, ov, ov_pca = (np.zeros((theta.size, n_sets)) for _ in range(3))
    for i, th in enumerate(theta):
        sets = _gaussian_sets(noise + th * np.outer(u, u), n, n_sets, rng)
        for s, X in enumerate(sets):
            ev, V = masked_ridge_spectrum(X, lam)
            top[i, s], ov[i, s] = ev[0], (V[:, 0] @ u) ** 2
            ov_pca[i, s] = (np.linalg.eigh(X.T @ X)[1][:, -1] @ u) ** 2
    return top, ov, ov_pca


def _check_spiked(theta, top, overlap, overlap_pca):
    theta = check_array(theta, "theta", ndim=1)
    top = check_array(top, "top", ndim=2)
    if top.shape[0] != theta.size or top.shape[1] < 2:
        raise ValueError("top must have shape (len(theta), n_sets >= 2)")
    overlap = check_array(overlap, "overlap", shape=top.shape)
    overlap_pca = check_array(overlap_pca, "overlap_pca", shape=top.shape)
    return theta, top, overlap, overlap_pca


def spiked_table(theta, top, overlap, overlap_pca, gamma, lam, strong=1.5):
    r"""Text table of the spiked masked-ridge theory against simulation.

    One row per :math:`\theta`: the top eigenvalue (theory, mean :math:`\pm` se) and the overlap
    (theory, masked ridge mean :math:`\pm` se, PCA mean), from :func:`spiked_masked_top`; then the
    largest eigenvalue gap in standard errors for :math:`\theta\ge` ``strong`` and the largest
    (over :math:`\theta`) mean absolute difference between the overlaps of masked ridge and PCA.

    Parameters
    ----------
    theta : array_like, shape (m,)
        Spike strengths.
    top, overlap, overlap_pca : array_like, shape (m, n_sets)
        From :func:`spiked_experiment`, ``n_sets >= 2``.
    gamma, lam : float
        :math:`d/n` and the ridge.
    strong : float
        Threshold of the eigenvalue-gap line (some :math:`\theta` must reach it).

    Returns
    -------
    str

    Examples
    --------
    >>> top = np.array([[0.70, 0.72], [0.76, 0.77]])
    >>> ov = np.array([[0.6, 0.7], [0.8, 0.82]])
    >>> print(spiked_table([2.0, 3.0], top, ov, ov, 0.5, 0.5))
    theta  top: theory  simulation    overlap: theory  masked      PCA
     2.0        0.7160  0.7100±0.0100          0.700  0.650±0.050  0.650
     3.0        0.7664  0.7650±0.0050          0.810  0.810±0.010  0.810
    top eigenvalue for theta >= 1.5: |simulation - theory| <= 0.6 SE
    |overlap masked - overlap PCA| <= 0.000 (mean per theta)
    """
    theta, top, ov, ov_pca = _check_spiked(theta, top, overlap, overlap_pca)
    strong = check_nonnegative(strong, "strong")
    if not np.any(theta >= strong):
        raise ValueError("strong must not exceed the largest theta")
    top_th, ov_th = spiked_masked_top(theta, gamma, lam)
    (m, se), (m_ov, se_ov) = mean_se(top, 1), mean_se(ov, 1)
    lines = ["theta  top: theory  simulation    overlap: theory  masked      PCA"]
    for i, th in enumerate(theta):
        lines.append(f"{th:4.1f}   {top_th[i]:11.4f}  {m[i]:.4f}±{se[i]:.4f}  "
                     f"{ov_th[i]:13.3f}  {m_ov[i]:.3f}±{se_ov[i]:.3f}  {ov_pca[i].mean():.3f}")
    gap = (m - top_th) / se
    lines.append(f"top eigenvalue for theta >= {strong:g}: |simulation - theory| <= "
                 f"{np.max(np.abs(gap[theta >= strong])):.1f} SE")
    lines.append(f"|overlap masked - overlap PCA| <= {np.abs(ov - ov_pca).mean(1).max():.3f}"
                 " (mean per theta)")
    return "\n".join(lines)


def plot_spiked(axes, theta, top, overlap, overlap_pca, gamma, lam, n_grid=200):
    r"""Draw the top eigenvalue (left) and the overlaps (right) of spiked masked ridge.

    Theory of :func:`spiked_masked_top` over :math:`[0.05,\,\max\theta+0.2]`, simulated means
    (eigenvalue with two standard errors; overlaps of masked ridge and of PCA) and the threshold
    :math:`\theta=\sqrt\gamma` (dotted).

    Parameters
    ----------
    axes : pair of matplotlib.axes.Axes
    theta, top, overlap, overlap_pca
        As in :func:`spiked_table`.
    gamma, lam : float
        :math:`d/n` and the ridge.
    n_grid : int
        Points of the theory curves.

    Returns
    -------
    pair of matplotlib.axes.Axes
    """
    from .._validation import check_axes_list  # noqa: PLC0415
    check_axes_list(axes)
    theta, top, ov, ov_pca = _check_spiked(theta, top, overlap, overlap_pca)
    if len(axes) != 2:
        raise ValueError("axes must be a pair of Axes")
    gamma = check_positive(gamma, "gamma")
    grid = np.linspace(0.05, theta.max() + 0.2, check_size(n_grid, "n_grid", 2))
    top_th, ov_th = spiked_masked_top(grid, gamma, lam)
    ax1, ax2 = axes
    ax1.plot(grid, top_th, label="theory")
    ax1.errorbar(theta, top.mean(1), yerr=2 * mean_se(top, 1)[1], fmt="o", mfc="white",
                 capsize=3, label="simulation")
    ax1.set_ylabel(r"top eigenvalue of $\hat A$")
    ax2.plot(grid, ov_th, label="theory (both)")
    ax2.plot(theta, ov.mean(1), "o", mfc="white", label="masked ridge")
    ax2.plot(theta, ov_pca.mean(1), "x", ms=7, mew=1.5, label="PCA")
    ax2.set_ylabel(r"overlap $\langle \hat v, u\rangle^2$")
    for ax in axes:
        ax.axvline(np.sqrt(gamma), color="k", ls=":", lw=1.5)
        ax.set_xlabel(r"spike strength $\theta$")
        ax.legend(fontsize=8)
    return axes
