r"""Logits, embeddings and their geometry: the closed forms and measures of Chapter 3.

* :func:`ntp_loss_and_gradients`: the excess cross-entropy of logits :math:`L=WH` and its
  gradients, the step shared by the linear model (``H`` fixed) and the unconstrained-features
  model (both trained);
* :func:`in_support_logits` (:math:`L^{\rm in}`), :func:`centered_support` (:math:`\tilde S`) and
  :func:`k_subset_supports`: the finite part of the regularisation path, the max-margin proxy
  and the complete supports of the closed form :math:`L^{\rm mm}=\tilde S`;
* :func:`svd_factors`: the balanced factors (word and context embeddings) of a logit matrix;
* :func:`cosine_similarity`, :func:`structural_similarity` (the authors' SSIM structure term) and
  :func:`offdiagonal_correlation` (optionally partial, given class blocks): how cosine matrices
  are compared.

Orientation: logits, supports and probabilities are ``V x m`` (columns are contexts); word
embeddings are the **rows** of ``W`` (``V x d``), context embeddings the **columns** of ``H``
(``d x m``), so that :math:`L=WH`.
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np

from .._validation import (
    check_allocation,
    check_array,
    check_nonnegative,
    check_positive,
    check_prob_columns,
    check_size,
)

__all__ = ["ntp_loss_and_gradients", "in_support_logits", "centered_support", "k_subset_supports", "svd_factors",
           "cosine_similarity", "structural_similarity", "offdiagonal_correlation"]


def ntp_loss_and_gradients(W, H, P, pi, lam=0.0):
    r"""Excess loss :math:`\mathrm{CE}(WH)-\mathcal H+\frac\lambda2(\|W\|_F^2+\|H\|_F^2)` and its gradients.

    With the column-wise softmax :math:`\mathbb S` and the gradient of CE in the logits
    :math:`L=WH`, :math:`G=(\mathbb S(WH)-\hat P)\operatorname{diag}(\hat\pi)`,

    .. math:: \nabla_W=GH^\top+\lambda W,\qquad \nabla_H=W^\top G+\lambda H .

    The linear model of Chapter 3.2 is ``H = Hbar`` fixed and ``lam = 0`` (use ``grad_W``); the
    unconstrained-features model of 3.3 and 3.5 trains both factors with ``lam > 0``.

    Parameters
    ----------
    W : array_like, shape (V, d)
        Word embeddings (rows), or the decoder of the linear model.
    H : array_like, shape (d, m)
        Context embeddings (columns).
    P : array_like, shape (V, m)
        Next-token distributions (columns summing to one).
    pi : array_like, shape (m,)
        Context frequencies (non-negative, summing to one).
    lam : float
        Weight decay :math:`\lambda\ge0`.

    Returns
    -------
    excess : float
        :math:`\sum_j\hat\pi_j\mathrm{KL}(\hat p_j\|\mathbb S(\ell_j))` plus the penalty; computed
        as a sum of :math:`\hat p\log(\hat p/q)`, which never subtracts two large numbers.
    grad_W : ndarray, shape (V, d)
    grad_H : ndarray, shape (d, m)

    Examples
    --------
    >>> P = np.array([[0.5, 1.0], [0.5, 0.0]])
    >>> f, gW, gH = ntp_loss_and_gradients(np.eye(2), np.zeros((2, 2)), P, [0.5, 0.5], lam=0.1)
    >>> round(f, 4), gH.round(3).tolist()
    (0.4466, [[0.0, -0.25], [0.0, 0.25]])
    """
    P = check_prob_columns(P, "P")
    pi = check_array(pi, "pi", ndim=1, shape=(P.shape[1],))
    if np.any(pi < 0) or abs(pi.sum() - 1) > 1e-8:
        raise ValueError("pi must be non-negative and sum to one")
    W = check_array(W, "W", ndim=2, shape=(P.shape[0], None))
    H = check_array(H, "H", ndim=2, shape=(W.shape[1], P.shape[1]))
    lam = check_nonnegative(lam, "lam")  # 0: the linear model, no penalty
    L = W @ H  # the logits, one column per context
    shifted = L - L.max(axis=0)  # a stable softmax: the largest logit of each column is 0
    Z = np.exp(shifted).sum(axis=0)
    G = (np.exp(shifted) / Z - P) * pi  # (softmax - P) diag(pi), the gradient in the logits
    on = P > 0
    # KL(p_j | q_j) = sum_z p_z (log p_z - log q_z), 0 log 0 = 0; both logs are O(1), so the
    # difference keeps its digits where CE and H agree to many
    log_q = shifted - np.log(Z)
    kl = np.where(on, P * (np.log(np.where(on, P, 1.0)) - log_q), 0.0).sum(axis=0)  # KL per context
    excess = float(pi @ kl) + 0.5 * lam * float(np.sum(W * W) + np.sum(H * H))
    return excess, G @ H.T + lam * W, W.T @ G + lam * H


def in_support_logits(P):
    r"""The finite in-support logits :math:`L^{\rm in}` (the minimum-norm solution in :math:`\mathcal T`).

    Parameters
    ----------
    P : array_like, shape (V, m)
        Next-token probabilities (columns sum to one).

    Returns
    -------
    ndarray, shape (V, m)
        :math:`L^{\rm in}_{zj}=\log\hat p_{j,z}-\frac1{S_j}\sum_{z'\in\mathcal S_j}\log\hat p_{j,z'}` on
        the support (every in-support log-odds is right, and each column is centred on its
        support), zero off it.

    Examples
    --------
    >>> print(np.round(in_support_logits([[0.8], [0.2]]).ravel(), 4))
    [ 0.6931 -0.6931]
    """
    P = check_prob_columns(P, "P")
    S = P > 0
    logP = np.log(np.where(S, P, 1.0))
    # log p minus its mean over the support: the log-odds are right, and the column lies in T
    # (zero mean on the support, zero off it), where the solution of minimum norm lives
    return np.where(S, logP - (logP * S).sum(axis=0) / S.sum(axis=0), 0.0)


def centered_support(S):
    r"""The centred support matrix :math:`\tilde S=(I_V-\frac1V\mathbf 1\mathbf 1^\top)S`.

    Feasible for NTP-SVM* with every margin exactly one; its solution when the supports are all
    the subsets of one size (Chapter 3.4).

    Examples
    --------
    >>> print(centered_support([[1, 0], [0, 1]]))
    [[ 0.5 -0.5]
     [-0.5  0.5]]
    """
    S = check_array(S, "S", ndim=2)
    if not np.all((S == 0) | (S == 1)):
        raise ValueError("S must be a 0/1 matrix")
    # subtract k_j / V from every entry of column j: in-support entries 1 - k_j/V, off-support
    # -k_j/V, a margin of exactly one, and zero column sums (the softmax ignores a constant)
    return S - S.mean(axis=0, keepdims=True)


def k_subset_supports(V, k):
    r"""Support matrix whose columns are all :math:`\binom Vk` subsets of size ``k`` (lexicographic).

    Raises
    ------
    ValueError
        If ``k > V`` or the ``V x C(V, k)`` matrix would be too large (checked with ``math.comb``
        before anything is enumerated).

    Examples
    --------
    >>> k_subset_supports(3, 2).tolist()
    [[1, 1, 0], [1, 0, 1], [0, 1, 1]]
    """
    V = check_size(V, "V")
    k = check_size(k, "k")
    if k > V:
        raise ValueError(f"k must be at most V = {V}, got {k}")
    # C(70, 35) > 1e20: past that, the count itself is not worth computing
    check_allocation((V, comb(V, k) if min(k, V - k) < 35 else float("inf")), "V, k")
    cols = list(combinations(range(V), k))  # lexicographic, like the columns of the closed form
    S = np.zeros((V, len(cols)), dtype=np.int64)
    for j, c in enumerate(cols):
        S[list(c), j] = 1
    return S


def svd_factors(L, tol=1e-6):
    r"""Balanced factors of a logit matrix: the word and context embeddings.

    With the SVD :math:`L=U\Sigma Q^\top` restricted to singular values above ``tol`` times the
    largest: :math:`W=U_r\Sigma_r^{1/2}` (rows are words) and :math:`H=\Sigma_r^{1/2}Q_r^\top`
    (columns are contexts), so that ``L = W @ H`` and :math:`W^\top W=HH^\top=\Sigma_r`.

    Parameters
    ----------
    L : array_like, shape (V, m)
    tol : float
        Relative rank tolerance.

    Returns
    -------
    W : ndarray, shape (V, r)
    H : ndarray, shape (r, m)

    Examples
    --------
    >>> L = centered_support(k_subset_supports(5, 1))
    >>> W, H = svd_factors(L)
    >>> W.shape, H.shape, bool(np.allclose(W @ H, L))
    ((5, 4), (4, 5), True)
    """
    L = check_array(L, "L", ndim=2)
    tol = check_positive(tol, "tol")
    U, s, Qt = np.linalg.svd(L, full_matrices=False)
    if s[0] == 0:
        raise ValueError("L must not be zero")
    # the rank: a relative threshold, since a first-order solver (SCS) leaves singular values of
    # order its accuracy where the exact solution has zeros
    r = int(np.sum(s > tol * s[0]))
    root = np.sqrt(s[:r])
    # split Sigma evenly: W^T W = H H^T = Sigma_r, the balanced factors of the UFM's minimisers
    return U[:, :r] * root, root[:, None] * Qt[:r]


def cosine_similarity(A):
    r"""Uncentred cosine similarities of the rows of ``A``.

    :math:`\mathrm{Cos}(A)_{ik}=\langle a_i,a_k\rangle/(\|a_i\|\|a_k\|)`; rows of zero norm get
    cosine 0 with every row. Word cosines are ``cosine_similarity(W)``, context cosines
    ``cosine_similarity(H.T)``.

    Examples
    --------
    >>> print(np.round(cosine_similarity([[1.0, 0.0], [1.0, 1.0]]), 4))
    [[1.     0.7071]
     [0.7071 1.    ]]
    """
    A = check_array(A, "A", ndim=2)
    norm = np.linalg.norm(A, axis=1)  # zero rows stay zero: cosine 0 with everything
    unit = A / np.where(norm > 0, norm, 1.0)[:, None]
    return np.clip(unit @ unit.T, -1.0, 1.0)  # clip the rounding of |cos| = 1


def structural_similarity(A, B, C=1e-5):
    r"""Structure term of SSIM ("structural correlation") of two equally shaped arrays.

    :math:`(\sigma_{AB}+C)/(\sigma_A\sigma_B+C)` with :math:`\sigma_A,\sigma_B` the sample
    standard deviations (``ddof=1``) over all entries and
    :math:`\sigma_{AB}=\mathrm{mean}((A-\bar A)(B-\bar B))` (``ddof=0``), as Zhao et al. (2024)
    compute it: for :math:`N` entries its maximum is :math:`(N-1)/N`, not one. Cosine matrices
    keep their unit diagonal in it.

    Examples
    --------
    >>> A = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> round(structural_similarity(A, 2 * A), 4)
    0.75
    """
    A = check_array(A, "A")
    B = check_array(B, "B", shape=A.shape)
    C = check_nonnegative(C, "C")
    if A.size < 2:
        raise ValueError("A must have at least two entries")
    # ddof = 0 in the covariance and ddof = 1 in the deviations, as the authors compute it: the
    # value of A against itself is (N - 1)/N; C keeps constant arrays finite
    cov = np.mean((A - A.mean()) * (B - B.mean()))
    return float((cov + C) / (A.std(ddof=1) * B.std(ddof=1) + C))


def _offdiag(A, name, n=None):
    """Off-diagonal entries of a square matrix of size ``n`` (if given) and at least 3, not all equal."""
    A = check_array(A, name, ndim=2, shape=(n, n) if n is not None else None)
    if A.shape[0] != A.shape[1] or A.shape[0] < 3:
        raise ValueError(f"{name} must be a square matrix of size at least 3, got shape {A.shape}")
    x = A[~np.eye(A.shape[0], dtype=bool)]
    if np.ptp(x) == 0:
        raise ValueError(f"{name} must have non-constant off-diagonal entries")
    return x


def offdiagonal_correlation(A, B, given=None):
    r"""Pearson correlation of the off-diagonal entries of two square matrices, optionally partial.

    The diagonal of a cosine matrix is identically one; including it (as
    :func:`structural_similarity` does) rewards any two cosine matrices whose off-diagonal entries
    are small, even unrelated ones. With ``given=Z`` (e.g. the class-block indicator
    :math:`Z_{ik}=\mathbb 1[c_i=c_k]`), the off-diagonal entries of ``A`` and ``B`` are first
    regressed on those of ``Z`` (least squares with an intercept) and the residuals are correlated:
    the partial correlation :math:`(r_{AB}-r_{AZ}r_{BZ})/\sqrt{(1-r_{AZ}^2)(1-r_{BZ}^2)}`, the
    agreement beyond what ``Z`` explains.

    Parameters
    ----------
    A, B : array_like, shape (n, n)
        Square matrices, ``n >= 3``, with non-constant off-diagonal entries.
    given : array_like, shape (n, n), optional
        The matrix to partial out.

    Returns
    -------
    float

    Examples
    --------
    >>> A = np.array([[1.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 1.0]])
    >>> round(offdiagonal_correlation(A, 2 * A - 1), 6)
    1.0
    >>> Z = np.kron(np.eye(2), np.ones((2, 2)))  # two classes of two
    >>> A = Z + np.eye(4)
    >>> A[0, 2] = A[2, 0] = 0.5
    >>> round(offdiagonal_correlation(A, A, given=Z), 6)
    1.0
    """
    # the diagonal of a cosine matrix is identically one: leave it out
    a = _offdiag(A, "A")
    n = np.shape(A)[0]
    b = _offdiag(B, "B", n)
    if given is None:
        return float(np.corrcoef(a, b)[0, 1])
    z = _offdiag(given, "given", n)
    X = np.column_stack([np.ones_like(z), z])  # intercept and the matrix partialled out
    ra = a - X @ np.linalg.lstsq(X, a, rcond=None)[0]  # residuals after the regression on (1, z)
    rb = b - X @ np.linalg.lstsq(X, b, rcond=None)[0]
    na, nb = np.linalg.norm(ra), np.linalg.norm(rb)
    if min(na, nb) <= 1e-12 * max(np.linalg.norm(a - a.mean()), np.linalg.norm(b - b.mean())):
        raise ValueError("A and B must not be affine functions of given off the diagonal")
    return float(ra @ rb / (na * nb))
