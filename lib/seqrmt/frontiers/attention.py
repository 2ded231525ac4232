r"""The memorisation error of a ridge read-out, for any features (Chapter 5.2, reused in 5.5).

A ridge read-out :math:`w^*=(FF^\top+n\gamma I)^{-1}Fy` on features :math:`F\in\mathbb R^{q\times n}`
(one column per token) memorises the labels :math:`y` with error

.. math::
    E(F)=\frac1n\|y-F^\top w^*\|^2=\frac{\gamma^2}{n}\,y^\top\Big(\frac{F^\top F}{n}+\gamma I_n\Big)^{-2}y ,

a resolvent quadratic form (Chapter 5.2, ``lem-attn-residual``). :math:`F=X` is ridge on the tokens,
whose limit is :func:`seqrmt.rmt.ridge_memorisation_error`; :math:`F=XK` with an attention kernel
:math:`K` is one layer of nonlinear attention (5.2); :math:`F` = random ReLU features is the
random-features model of 5.5 (:func:`seqrmt.frontiers.features.random_features_training_error`).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_array

__all__ = ["memorisation_error"]


def memorisation_error(F, y, gamma):
    r"""Memorisation (training) error :math:`\frac{\gamma^2}{n}y^\top(F^\top F/n+\gamma I)^{-2}y` of ridge on ``F``.

    It is the mean squared residual :math:`\frac1n\|y-F^\top w^*\|^2` of the ridge read-out
    :math:`w^*=(FF^\top+n\gamma I)^{-1}Fy`, since :math:`y-F^\top w^*=\gamma(F^\top F/n+\gamma I)^{-1}y`.
    Computed from one eigendecomposition of the smaller of :math:`FF^\top` and :math:`F^\top F`, so
    an array of ridges costs no more than one (when :math:`q<n`, directions whose squared singular
    value is below :math:`10^{-12}` of the largest count as outside the row space).

    Parameters
    ----------
    F : array_like, shape (q, n)
        Features, one column per token.
    y : array_like, shape (n,)
        Targets.
    gamma : float or array_like
        Ridge penalties :math:`\gamma>0`.

    Returns
    -------
    float or numpy.ndarray
        Same shape as ``gamma``.

    Examples
    --------
    >>> F = np.array([[1.0, 0.0], [0.0, 2.0]])
    >>> y = np.array([1.0, 1.0])  # eigenvalues of F^T F / n: 0.5 and 2
    >>> bool(np.isclose(memorisation_error(F, y, 1.0), 0.5 * (1 / 1.5**2 + 1 / 3**2)))
    True
    """
    F = check_array(F, "F", ndim=2)
    n = F.shape[1]  # tokens are the columns: Q is n x n whatever the number q of features
    y = check_array(y, "y", ndim=1, shape=(n,))
    gam = check_array(gamma, "gamma", positive=True)
    # F^T F / n = V diag(sv^2 / n) V^T on the row space of F, zero on its orthogonal complement;
    # the eigendecomposition of the smaller Gram matrix is a few times cheaper than an SVD
    q = F.shape[0]
    if q < n:
        sv2, U = np.linalg.eigh(F @ F.T)
        keep = sv2 > 1e-12 * max(sv2[-1], 1e-300)  # directions of the row space only
        sv2, U = sv2[keep], U[:, keep]
        proj = (U.T @ (F @ y)) ** 2 / sv2  # (v_i . y)^2 with v_i = F^T u_i / sv_i
    else:
        sv2, V = np.linalg.eigh(F.T @ F)
        sv2 = np.clip(sv2, 0.0, None)
        proj = (V.T @ y) ** 2
    # the part of y outside the row space of F is not fitted at all: (gamma Q) acts as the identity
    rest = max(float(y @ y - proj.sum()), 0.0)
    g = gam.reshape(-1, 1)
    # gamma Q y has the component (gamma / (sv^2/n + gamma)) (v_i . y) along each right singular vector
    err = (np.sum(proj * (g / (sv2 / n + g)) ** 2, axis=1) + rest) / n
    return float(err[0]) if gam.ndim == 0 else err.reshape(gam.shape)
