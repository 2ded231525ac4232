r"""Masked-token (leave-one-position-out) ridge regression: its errors and its spike (Chapter 5.1).

Each position :math:`k` of a sequence :math:`x\in\mathbb R^d` is predicted from the other
:math:`d-1` by ridge regression; stacking the :math:`d` filters gives the zero-diagonal matrix

.. math::
    \hat A=\arg\min_{A:\,A_{kk}=0}\ \frac1n\|X-XA\|_F^2+\lambda\|A\|_F^2
    = I-R\,\operatorname{Diag}(R)^{-1},

    R=(X^\top X/n+\lambda I)^{-1},

whose test and training errors are averages of ratios of diagonal entries of resolvents,

.. math::
    E_{\rm gen}=\frac1d\sum_k\frac{[R\Sigma R]_{kk}}{R_{kk}^2},

    E_{\rm train}=\frac1d\sum_k\frac{[R-\lambda R^2]_{kk}}{R_{kk}^2}.

The notebook writes the predictor and its simulation; this module holds the two laws: the
deterministic equivalents of both errors (:func:`masked_ridge_theory`) and the BBP transition of
:math:`\hat A` for a delocalised spike (:func:`spiked_masked_top`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import rmt
from .._validation import check_array, check_positive

__all__ = ["MaskedRidgeTheory", "masked_ridge_theory", "spiked_masked_top"]


@dataclass(frozen=True)
class MaskedRidgeTheory:
    r"""Deterministic equivalents of the masked ridge errors (:func:`masked_ridge_theory`).

    Attributes
    ----------
    test_error : float or numpy.ndarray
        :math:`\bar E_{\rm gen}=\frac1d\sum_k[\bar R\Sigma\bar R]_{kk}/((1-\zeta)\bar R_{kk}^2)`.
    train_error : float or numpy.ndarray
        :math:`\bar E_{\rm train}=\frac1d\sum_k(\bar R_{kk}+\lambda\,\partial_\lambda\bar R_{kk})/\bar R_{kk}^2`.
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
        E_{\rm gen}\simeq\frac1d\sum_k\frac{[\bar R\Sigma\bar R]_{kk}}{(1-\zeta)\bar R_{kk}^2},

        E_{\rm train}\simeq\frac1d\sum_k\frac{\bar R_{kk}+\lambda\,\partial_\lambda\bar R_{kk}}{\bar R_{kk}^2},

    from :math:`u^\top Ru\simeq u^\top\bar Ru`, :math:`R\Sigma R\simeq\bar R\Sigma\bar R/(1-\zeta)`
    and :math:`R^2=-\partial_\lambda R`; the derivative includes that of :math:`\delta(\lambda)`
    (computed exactly by :func:`seqrmt.rmt.ridge_resolvent_de`).

    Parameters
    ----------
    Sigma : array_like, shape (d, d)
        Population covariance (symmetric positive semi-definite).
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
    For :math:`\Sigma=I` the errors are :math:`m_2/m^2` and :math:`(m-\lambda m_2)/m^2` with the
    Marchenko-Pastur moments of :func:`seqrmt.rmt.mp_resolvent_moments`:

    >>> th = masked_ridge_theory(np.eye(200), 400, 0.1)
    >>> round(th.test_error, 4), round(th.train_error, 4)
    (1.569, 0.5173)
    """
    # one fixed point gives Rbar_kk, [Rbar Sigma Rbar]_kk, zeta and dRbar_kk/dlam for every ridge
    de = rmt.ridge_resolvent_de(Sigma, n, lam, tol=tol, max_iter=max_iter)
    lam_a = np.asarray(lam, dtype=float)
    zeta = np.asarray(de.zeta)
    # E_gen: [R Sigma R]_kk ~ [Rbar Sigma Rbar]_kk / (1 - zeta), R_kk ~ Rbar_kk
    test = np.mean(de.diag_sigma / de.diag**2, axis=-1) / (1.0 - zeta)
    # E_train: [R S R]_kk = [R - lam R^2]_kk = R_kk + lam d/dlam R_kk (R^2 = -dR/dlam)
    # with several ridges the diagonals have shape (k, d): lam must broadcast along the first axis
    lam_b = lam_a.ravel()[:, None] if lam_a.ndim else lam_a
    train = np.mean((de.diag + lam_b * de.diag_prime) / de.diag**2, axis=-1)
    if lam_a.ndim == 0:
        return MaskedRidgeTheory(float(test), float(train), float(de.delta), float(de.zeta))
    shape = lam_a.shape
    return MaskedRidgeTheory(*(np.reshape(v, shape) for v in (test, train, de.delta, de.zeta)))


def spiked_masked_top(theta, gamma, lam):
    r"""Limits of the top eigenvalue of :math:`\hat A` and of its eigenvector overlap, :math:`\Sigma=I+\theta uu^\top`.

    For a delocalised unit :math:`u` every :math:`R_{kk}\to m(\lambda)` (the Marchenko-Pastur
    Stieltjes transform at :math:`-\lambda`, ratio :math:`\gamma=d/n`), so
    :math:`\hat A\simeq I-R/m` and an eigenvalue :math:`\ell` of :math:`S` maps to
    :math:`1-1/(m(\ell+\lambda))`, increasing in :math:`\ell`. Hence (the BBP transition)

    * :math:`\theta>\sqrt\gamma`: outlier at :math:`\ell_1=(1+\theta)(1+\gamma/\theta)`, squared
      overlap :math:`(1-\gamma/\theta^2)/(1+\gamma/\theta)` with :math:`u`;
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
    # every R_kk -> m(lam), the Marchenko-Pastur transform: the spike changes delta by O(1/n) only
    m, _ = rmt.mp_resolvent_moments(lam, gamma)
    above = th > np.sqrt(gamma)
    # (1 + theta)(1 + gamma/theta) is the BBP outlier of S; below the threshold the edge, where it merges
    ths = np.where(above, th, 1.0)  # a placeholder below the threshold, where it is not used
    # BBP: the top sample eigenvalue leaves the bulk edge (1 + sqrt(gamma))^2 above theta = sqrt(gamma)
    ell = np.where(above, (1 + ths) * (1 + gamma / ths), (1 + np.sqrt(gamma)) ** 2)
    # A_hat ~ I - R/m maps the eigenvalue ell of S to 1 - 1/(m (ell + lam)), increasing in ell,
    # with the same eigenvectors: the overlap is PCA's (Paul 2007)
    top = 1.0 - 1.0 / (m * (ell + lam))
    overlap = np.where(above, (1 - gamma / ths**2) / (1 + gamma / ths), 0.0)
    if th.ndim == 0:
        return float(top), float(overlap)
    return top, overlap
