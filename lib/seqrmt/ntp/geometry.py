r"""Closed forms and geometry of next-token prediction.

What this module computes
-------------------------
* the anchors and masks shared by the convex programs (:func:`support_masks`);
* the finite (in-support) logits :math:`L^{\rm in}` and the projector :math:`P_\mathcal T`;
* for the linear model with fixed embeddings :math:`\bar H` (``d x m``): the data subspace
  :math:`\mathcal F` (:class:`SubspaceF`) and the minimum-norm solution :math:`W^\star` of the
  log-odds equations (:func:`w_star`);
* the centred support matrix :math:`\tilde S=(I-\frac1V\mathbf 1\mathbf 1^\top)S`, complete
  :math:`k`-subset supports and the closed-form max-margin logits;
* SVD factors (word and context embeddings), normalised Gram matrices, uncentred cosine
  matrices and the structural similarity of two matrices;
* yardsticks for such similarities: the class-block indicator (:func:`block_indicator`), the
  correlation of off-diagonal entries (:func:`offdiagonal_correlation`) and the partial
  correlation given the class blocks (:func:`partial_correlation`).

Conventions (one orientation for the whole chapter, that of the papers): logits, supports and
probabilities are ``V x m`` (rows are next tokens, columns are contexts); word embeddings are the
**rows** of ``W`` (``V x d``) and context embeddings the **columns** of ``H`` or :math:`\bar H`
(``d x m``), so that :math:`L=WH`. :func:`svd_factors` returns ``W`` (``V x r``) and ``H``
(``r x m``) in this orientation; :func:`cosine_similarity` compares rows, so the context cosines
are ``cosine_similarity(H.T)``. Vectorisation of ``W`` is row-major (``W.ravel()``) throughout.

Used in: Chapter 3.
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np

from .._validation import (
    check_allocation,
    check_array,
    check_int_array,
    check_positive,
    check_positive_int,
    check_prob_columns,
    check_size,
)

__all__ = [
    "support_masks",
    "in_support_logits",
    "project_T",
    "SubspaceF",
    "project_F",
    "w_star",
    "centered_support",
    "k_subset_supports",
    "closed_form_max_margin",
    "closed_form_nuclear_norm",
    "closed_form_context_cosine",
    "svd_factors",
    "gram_matrices",
    "normalized_gram",
    "cosine_similarity",
    "structural_similarity",
    "block_indicator",
    "offdiagonal_correlation",
    "partial_correlation",
    "margin",
    "embedding_cosines",
    "support_word_alignment",
    "nuclear_norm_bounds",
    "n_distinct_supports",
    "max_margin_coefficient",
]


def _check_support(S, name="S"):
    S = check_array(S, name, ndim=2)
    if not np.all((S == 0) | (S == 1)):
        raise ValueError(f"{name} must be a 0/1 matrix")
    if np.any(S.sum(axis=0) < 1):
        raise ValueError(f"every column of {name} must contain at least one token")
    return S.astype(np.int64)


def support_masks(S):
    r"""Anchors and masks of the NTP-SVM constraints.

    Parameters
    ----------
    S : array_like, shape (V, m)
        0/1 support matrix (every column non-empty).

    Returns
    -------
    anchors : ndarray of int, shape (m,)
        :math:`a_j=\min\mathcal S_j`.
    E : ndarray of bool, shape (V, m)
        In-support, non-anchor entries.
    O : ndarray of bool, shape (V, m)
        Off-support entries.

    Examples
    --------
    >>> a, E, O = support_masks([[1, 0], [1, 1], [0, 1]])
    >>> a.tolist(), E.astype(int).tolist(), O.astype(int).tolist()
    ([0, 1], [[0, 0], [1, 0], [0, 1]], [[0, 1], [0, 0], [1, 0]])
    """
    S = _check_support(S).astype(bool)
    anchors = np.argmax(S, axis=0)
    E = S.copy()
    E[anchors, np.arange(S.shape[1])] = False
    return anchors, E, ~S


def in_support_logits(P):
    r"""The finite in-support logits :math:`L^{\rm in}` (minimum-norm solution in :math:`\mathcal T`).

    Parameters
    ----------
    P : array_like, shape (V, m)
        Next-token probabilities (columns sum to one).

    Returns
    -------
    ndarray, shape (V, m)
        :math:`L^{\rm in}_{zj}=\log\hat p_{j,z}-\frac1{S_j}\sum_{z'\in\mathcal S_j}\log\hat p_{j,z'}` on
        the support, zero off it.

    Examples
    --------
    >>> print(np.round(in_support_logits([[0.5, 1.0], [0.5, 0.0]]), 3))
    [[0. 0.]
     [0. 0.]]
    >>> print(np.round(in_support_logits([[0.8], [0.2]]).ravel(), 4))
    [ 0.6931 -0.6931]
    """
    P = check_prob_columns(P, "P")
    S = P > 0
    logP = np.log(np.where(S, P, 1.0))
    mean = (logP * S).sum(axis=0) / S.sum(axis=0)
    return np.where(S, logP - mean, 0.0)


def project_T(L, S):
    r"""Projection onto the in-support subspace :math:`\mathcal T` (column-wise).

    Parameters
    ----------
    L : array_like, shape (V, m)
        Logits.
    S : array_like, shape (V, m)
        0/1 support matrix.

    Returns
    -------
    ndarray, shape (V, m)
        Column ``j`` restricted to :math:`\mathcal S_j` minus its mean over :math:`\mathcal S_j`,
        zero off the support.

    Examples
    --------
    >>> print(project_T([[3.0, 1.0], [1.0, 5.0]], [[1, 1], [1, 0]]))
    [[ 1.  0.]
     [-1.  0.]]
    """
    S = _check_support(S).astype(bool)
    L = check_array(L, "L", ndim=2, shape=S.shape)
    mean = (L * S).sum(axis=0) / S.sum(axis=0)
    return np.where(S, L - mean, 0.0)


class SubspaceF:
    r"""The data subspace :math:`\mathcal F\subset\mathbb R^{V\times d}` of the linear model.

    :math:`\mathcal F=\operatorname{span}\{(e_z-e_{z'})\bar h_j^\top:z\ne z'\in\mathcal S_j\}`. The
    basis is computed once (an SVD of the stacked anchor-difference system, singular values above
    ``tol`` times the largest) and cached.

    Parameters
    ----------
    Hbar : array_like, shape (d, m)
        Fixed context embeddings (columns).
    S : array_like, shape (V, m)
        0/1 support matrix.
    tol : float
        Relative threshold on singular values defining the rank.

    Attributes
    ----------
    A : ndarray, shape (sum_j S_j - m, V*d)
        Rows :math:`\operatorname{vec}((e_{a_j}-e_z)\bar h_j^\top)`, ``z`` in the support minus the anchor.
    rows : tuple of ndarray
        ``(z, j)`` indices of the rows of ``A``.
    basis : ndarray, shape (V*d, dim F)
        Orthonormal basis of :math:`\mathcal F` (row-major vectorisation).

    Examples
    --------
    >>> F = SubspaceF(np.eye(2), [[1, 1], [1, 0], [0, 1]])
    >>> F.dim
    2
    >>> W = np.arange(6.0).reshape(3, 2)
    >>> bool(np.allclose(F.project(W) + F.perp(W), W))
    True
    """

    def __init__(self, Hbar, S, tol=1e-10):
        S = _check_support(S)
        Hbar = check_array(Hbar, "Hbar", ndim=2, shape=(None, S.shape[1]))
        tol = check_positive(tol, "tol")
        V, m = S.shape
        d = Hbar.shape[0]
        anchors, E, _ = support_masks(S)
        z, j = np.nonzero(E)
        A = np.zeros((z.size, V, d))
        r = np.arange(z.size)
        A[r, anchors[j], :] += Hbar[:, j].T
        A[r, z, :] -= Hbar[:, j].T
        self.A = A.reshape(z.size, V * d)
        self.rows = (z, j)
        self.shape = (V, d)
        self.n_contexts = m
        if z.size == 0:
            self.basis = np.zeros((V * d, 0))
        else:
            _, s, Vt = np.linalg.svd(self.A, full_matrices=False)
            self.basis = Vt[s > tol * s[0]].T

    @property
    def dim(self):
        """Dimension of :math:`\\mathcal F`."""
        return self.basis.shape[1]

    def _check_W(self, W):
        return check_array(W, "W", ndim=2, shape=self.shape)

    def project(self, W):
        r"""Orthogonal projection :math:`P_\mathcal F(W)` of ``W`` (``V x d``)."""
        w = self._check_W(W).ravel()
        return (self.basis @ (self.basis.T @ w)).reshape(self.shape)

    def perp(self, W):
        r""":math:`P_\perp(W)=W-P_\mathcal F(W)`."""
        W = self._check_W(W)
        return W - self.project(W)

    def log_odds(self, P):
        r"""Right-hand side :math:`\log(\hat p_{j,a_j}/\hat p_{j,z})` of the rows of ``A``.

        Raises
        ------
        ValueError
            If ``P`` is not ``V x m`` (the shape of ``S``) with probability vectors as columns.
        """
        P = check_prob_columns(P, "P", atol=1e-8, shape=(self.shape[0], self.n_contexts))
        anchors = np.argmax(P > 0, axis=0)
        z, j = self.rows
        with np.errstate(divide="ignore"):
            return np.log(P[anchors[j], j]) - np.log(P[z, j])


def project_F(W, Hbar, S):
    r"""Project ``W`` (``V x d``) onto :math:`\mathcal F` (builds a :class:`SubspaceF`; cache it for
    repeated use).

    Examples
    --------
    >>> W = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]])
    >>> print(np.round(project_F(W, np.eye(2), [[1, 1], [1, 0], [0, 1]]), 3) + 0.0)
    [[ 0.5  0. ]
     [-0.5  0. ]
     [ 0.   0. ]]
    """
    return SubspaceF(Hbar, S).project(W)


def w_star(Hbar, P, tol=1e-8):
    r"""The finite component :math:`W^\star`: the minimum-norm solution of the log-odds equations.

    Solves :math:`(e_{a_j}-e_z)^\top W\bar h_j=\log(\hat p_{j,a_j}/\hat p_{j,z})` for all ``j`` and
    ``z`` in :math:`\mathcal S_j\setminus\{a_j\}` in the least-norm sense; the solution lies in
    :math:`\mathcal F`.

    Parameters
    ----------
    Hbar : array_like, shape (d, m)
        Context embeddings.
    P : array_like, shape (V, m)
        Next-token probabilities.
    tol : float
        Relative residual above which the data are declared not NTP-compatible.

    Returns
    -------
    ndarray, shape (V, d)

    Raises
    ------
    ValueError
        If the equations are inconsistent (not NTP_H-compatible).

    Examples
    --------
    >>> P = np.array([[0.5, 0.2], [0.5, 0.0], [0.0, 0.8]])
    >>> W = w_star(np.eye(2), P)
    >>> print(np.round(W, 4))
    [[ 0.     -0.6931]
     [ 0.      0.    ]
     [ 0.      0.6931]]
    """
    P = check_prob_columns(P, "P")
    F = SubspaceF(Hbar, (P > 0).astype(int))
    tol = check_positive(tol, "tol")
    b = F.log_odds(P)
    if b.size == 0:
        return np.zeros(F.shape)
    w, *_ = np.linalg.lstsq(F.A, b, rcond=None)
    res = np.linalg.norm(F.A @ w - b)
    if res > tol * (1.0 + np.linalg.norm(b)):
        raise ValueError(f"Hbar and P are not NTP-compatible (residual {res:.3g})")
    return w.reshape(F.shape)


def centered_support(S):
    r"""The centred support matrix :math:`\tilde S=(I_V-\frac1V\mathbf 1\mathbf 1^\top)S`.

    Always feasible for NTP-SVM* with margin exactly one.

    Examples
    --------
    >>> print(centered_support([[1, 0], [0, 1]]))
    [[ 0.5 -0.5]
     [-0.5  0.5]]
    """
    S = _check_support(S).astype(float)
    return S - S.mean(axis=0, keepdims=True)


def _n_subsets(V, k):
    """C(V, k), or inf when it is certainly astronomically large (C(70, 35) > 1e20)."""
    return comb(V, k) if min(k, V - k) < 35 else float("inf")


def k_subset_supports(V, k):
    r"""Support matrix whose columns are all :math:`\binom Vk` subsets of size ``k`` (lexicographic).

    Raises
    ------
    ValueError
        If ``k > V`` or the ``V x C(V, k)`` matrix would exceed ``MAX_ELEMENTS`` entries (checked
        with ``math.comb`` before anything is enumerated).

    Examples
    --------
    >>> k_subset_supports(3, 2).tolist()
    [[1, 1, 0], [1, 0, 1], [0, 1, 1]]
    """
    V = check_size(V, "V")
    k = check_size(k, "k")
    if k > V:
        raise ValueError(f"k must be at most V = {V}, got {k}")
    check_allocation((V, _n_subsets(V, k)), "V, k")
    cols = list(combinations(range(V), k))
    S = np.zeros((V, len(cols)), dtype=np.int64)
    for j, c in enumerate(cols):
        S[list(c), j] = 1
    return S


def closed_form_max_margin(V, k):
    r"""Closed-form NTP-SVM* solution for complete :math:`k`-subset supports.

    Returns :math:`L^{\rm mm}=(I_V-\frac1V\mathbf 1\mathbf 1^\top)S` with ``S = k_subset_supports(V, k)``
    (entries :math:`1-k/V` on the support and :math:`-k/V` off it).

    Raises
    ------
    ValueError
        As :func:`k_subset_supports` (too many subsets for ``MAX_ELEMENTS``).

    Examples
    --------
    >>> L = closed_form_max_margin(4, 2)
    >>> L.shape, sorted(set(np.round(L, 3).ravel().tolist()))
    ((4, 6), [-0.5, 0.5])
    """
    return centered_support(k_subset_supports(V, k))


def closed_form_nuclear_norm(V, k):
    r""":math:`\|L^{\rm mm}\|_*=(V-1)\sqrt{\binom{V-2}{k-1}}` for complete :math:`k`-subset supports.

    Examples
    --------
    >>> round(closed_form_nuclear_norm(5, 2), 6)
    6.928203
    """
    V = check_positive_int(V, "V")
    k = check_positive_int(k, "k")
    if V < 2 or k >= V:
        raise ValueError(f"need 1 <= k < V and V >= 2, got V = {V}, k = {k}")
    return float((V - 1) * np.sqrt(comb(V - 2, k - 1)))


def closed_form_context_cosine(V, k, overlap):
    r"""Cosine of two max-margin context embeddings for complete :math:`k`-subset supports.

    :math:`\cos(h_j,h_{j'})=(V\,|\mathcal S_j\cap\mathcal S_{j'}|-k^2)/(k(V-k))`.

    Examples
    --------
    >>> round(float(closed_form_context_cosine(5, 1, 0)), 4)
    -0.25
    """
    V = check_positive_int(V, "V")
    k = check_positive_int(k, "k")
    if k >= V:
        raise ValueError(f"k must be smaller than V = {V}, got {k}")
    overlap = check_int_array(overlap, "overlap", low=0, high=k + 1).astype(float)
    return (V * overlap - k**2) / (k * (V - k))


def svd_factors(L, tol=1e-6):
    r"""Balanced factors of a logit matrix: word and context embeddings.

    With the SVD :math:`L=U\Sigma V^\top` restricted to singular values above ``tol`` times the
    largest: :math:`W=U_r\Sigma_r^{1/2}` (rows are words) and :math:`H=\Sigma_r^{1/2}V_r^\top`
    (columns are contexts), so that ``L = W @ H``.

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
    >>> W, H = svd_factors(closed_form_max_margin(5, 1))
    >>> W.shape, H.shape, bool(np.allclose(W @ H, closed_form_max_margin(5, 1)))
    ((5, 4), (4, 5), True)
    """
    L = check_array(L, "L", ndim=2)
    tol = check_positive(tol, "tol")
    U, s, Vt = np.linalg.svd(L, full_matrices=False)
    if s[0] == 0:
        raise ValueError("L must not be zero")
    r = int(np.sum(s > tol * s[0]))
    root = np.sqrt(s[:r])
    return U[:, :r] * root, root[:, None] * Vt[:r]


def normalized_gram(A):
    r"""Row Gram matrix :math:`AA^\top/\|AA^\top\|_F`.

    Examples
    --------
    >>> print(np.round(normalized_gram(np.eye(2)), 4))
    [[0.7071 0.    ]
     [0.     0.7071]]
    """
    A = check_array(A, "A", ndim=2)
    G = A @ A.T
    nrm = np.linalg.norm(G)
    if nrm == 0:
        raise ValueError("A must not be zero")
    return G / nrm


def gram_matrices(L, tol=1e-6):
    r"""Frobenius-normalised Gram matrices of the balanced factors of ``L``.

    Returns :math:`G_W=WW^\top/\|WW^\top\|_F=(LL^\top)^{1/2}/\|\cdot\|_F` (``V x V``) and
    :math:`G_H=H^\top H/\|H^\top H\|_F=(L^\top L)^{1/2}/\|\cdot\|_F` (``m x m``), with ``W, H`` from
    :func:`svd_factors` (invariant to the rotation ``R``).

    Examples
    --------
    >>> GW, GH = gram_matrices(closed_form_max_margin(5, 2))
    >>> round(float(GW[0, 1] / GW[0, 0]), 4), GH.shape
    (-0.25, (10, 10))
    """
    W, H = svd_factors(L, tol=tol)
    return normalized_gram(W), normalized_gram(H.T)


def cosine_similarity(A):
    r"""Uncentred cosine similarities of the rows of ``A``.

    :math:`\mathrm{Cos}(A)_{ik}=\langle a_i,a_k\rangle/(\|a_i\|\|a_k\|)`; rows of zero norm get
    cosine 0 with every row.

    Examples
    --------
    >>> print(np.round(cosine_similarity([[1.0, 0.0], [1.0, 1.0]]), 4))
    [[1.     0.7071]
     [0.7071 1.    ]]
    """
    A = check_array(A, "A", ndim=2)
    nrm = np.linalg.norm(A, axis=1)
    inv = np.where(nrm > 0, 1.0 / np.where(nrm > 0, nrm, 1.0), 0.0)
    C = (A * inv[:, None]) @ (A * inv[:, None]).T
    return np.clip(C, -1.0, 1.0)


def structural_similarity(A, B, C=1e-5):
    r"""Structure term of SSIM ("structural correlation") of two equally shaped arrays.

    :math:`(\sigma_{AB}+C)/(\sigma_A\sigma_B+C)` with :math:`\sigma_A,\sigma_B` the sample
    standard deviations (``ddof=1``) over all entries and
    :math:`\sigma_{AB}=\mathrm{mean}((A-\bar A)(B-\bar B))` (``ddof=0``), as in the authors' code.

    Examples
    --------
    >>> A = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> round(structural_similarity(A, 2 * A), 4)
    0.75
    """
    A = check_array(A, "A")
    B = check_array(B, "B", shape=A.shape)
    C = check_positive(C, "C") if C != 0 else 0.0
    if A.size < 2:
        raise ValueError("A must have at least two entries")
    cov = np.mean((A - A.mean()) * (B - B.mean()))
    return float((cov + C) / (A.std(ddof=1) * B.std(ddof=1) + C))


def block_indicator(labels):
    r"""Class-block indicator :math:`Z_{ik}=\mathbb 1[c_i=c_k]` of a labelling.

    The cosine matrix of embeddings that know only their class: the trivial baseline for any
    comparison of cosine matrices whose rows are grouped by class.

    Parameters
    ----------
    labels : array_like of int, shape (n,)
        Class of each row.

    Returns
    -------
    numpy.ndarray
        ``n x n`` matrix of zeros and ones (ones on the diagonal).

    Examples
    --------
    >>> block_indicator([0, 0, 1]).tolist()
    [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    c = check_int_array(labels, "labels", ndim=1)
    if c.size < 2:
        raise ValueError("labels must have at least two entries")
    return (c[:, None] == c[None, :]).astype(float)


def _offdiag(A, name, n=None):
    """Off-diagonal entries of a square matrix (size ``n`` if given), checked non-constant."""
    A = check_array(A, name, ndim=2, shape=(n, n) if n is not None else None)
    if A.shape[0] != A.shape[1] or A.shape[0] < 3:
        raise ValueError(f"{name} must be a square matrix of size at least 3, got shape {A.shape}")
    x = A[~np.eye(A.shape[0], dtype=bool)]
    if np.ptp(x) == 0:
        raise ValueError(f"{name} must have non-constant off-diagonal entries")
    return x, A.shape[0]


def offdiagonal_correlation(A, B):
    r"""Pearson correlation of the off-diagonal entries of two square matrices.

    The diagonal of a cosine matrix is identically one; including it (as
    :func:`structural_similarity` does) rewards any pair of cosine matrices whose off-diagonal
    entries are small, even unrelated ones. This correlation ignores it.

    Examples
    --------
    >>> A = np.array([[1.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 1.0]])
    >>> round(offdiagonal_correlation(A, 2 * A - 1), 6)
    1.0
    """
    a, n = _offdiag(A, "A")
    b, _ = _offdiag(B, "B", n)
    return float(np.corrcoef(a, b)[0, 1])


def partial_correlation(A, B, Z):
    r"""Partial correlation of the off-diagonal entries of ``A`` and ``B`` given those of ``Z``.

    The off-diagonal entries of ``A`` and ``B`` are regressed (least squares, with an intercept)
    on those of ``Z``, and the residuals are correlated. With ``Z`` a class-block indicator
    (:func:`block_indicator`) this measures how much of the agreement of ``A`` and ``B`` lies
    *within and between* the blocks, beyond the block structure itself. Equivalent to
    :math:`(r_{AB}-r_{AZ}r_{BZ})/\sqrt{(1-r_{AZ}^2)(1-r_{BZ}^2)}` with the off-diagonal
    correlations :math:`r`.

    Examples
    --------
    >>> Z = block_indicator([0, 0, 1, 1])
    >>> A = Z + np.diag([1.0, 1.0, 1.0, 1.0])
    >>> A[0, 2] = A[2, 0] = 0.5
    >>> round(partial_correlation(A, A, Z), 6)
    1.0
    """
    a, n = _offdiag(A, "A")
    b, _ = _offdiag(B, "B", n)
    z, _ = _offdiag(Z, "Z", n)
    X = np.column_stack([np.ones_like(z), z])
    ra = a - X @ np.linalg.lstsq(X, a, rcond=None)[0]
    rb = b - X @ np.linalg.lstsq(X, b, rcond=None)[0]
    na, nb = np.linalg.norm(ra), np.linalg.norm(rb)
    scale = max(np.linalg.norm(a - a.mean()), np.linalg.norm(b - b.mean()))
    if min(na, nb) <= 1e-12 * scale:
        raise ValueError("A and B must not be affine functions of Z off the diagonal")
    return float(ra @ rb / (na * nb))


def margin(L, S):
    r"""Smallest margin :math:`\min_j\min_{z\in\mathcal S_j,v\notin\mathcal S_j}(L_{zj}-L_{vj})`.

    Returns ``inf`` if no column has an off-support token.

    Examples
    --------
    >>> round(margin(centered_support([[1, 0], [0, 1], [0, 0]]), [[1, 0], [0, 1], [0, 0]]), 6)
    1.0
    """
    S = _check_support(S).astype(bool)
    L = check_array(L, "L", ndim=2, shape=S.shape)
    lo = np.where(S, L, np.inf).min(axis=0)
    hi = np.where(~S, L, -np.inf).max(axis=0)
    return float(np.min(lo - hi))


def embedding_cosines(L, tol=1e-6):
    r"""Cosine matrices of the word and context embeddings of a logit matrix.

    With the balanced factors ``W, H = svd_factors(L, tol)`` (:func:`svd_factors`), returns
    :math:`\mathrm{Cos}(W)` (``V x V``, rows of ``W`` are words) and :math:`\mathrm{Cos}(H^\top)`
    (``m x m``, columns of ``H`` are contexts). Both depend on ``L`` only: for balanced factors
    :math:`WW^\top=(LL^\top)^{1/2}` and :math:`H^\top H=(L^\top L)^{1/2}`.

    Parameters
    ----------
    L : array_like, shape (V, m)
        Logit matrix, not zero.
    tol : float
        Relative rank tolerance of :func:`svd_factors`.

    Returns
    -------
    word_cos : ndarray, shape (V, V)
    context_cos : ndarray, shape (m, m)

    Examples
    --------
    >>> Cw, Ch = embedding_cosines(closed_form_max_margin(5, 1))
    >>> round(float(Cw[0, 1]), 4), round(float(Ch[0, 1]), 4)
    (-0.25, -0.25)
    """
    W, H = svd_factors(L, tol=tol)
    return cosine_similarity(W), cosine_similarity(H.T)


def support_word_alignment(W, H, S):
    r"""Cosine of each context embedding with the sum of the embeddings of its support words.

    :math:`\cos\big(h_j,\sum_{z\in\mathcal S_j}w_z\big)` for :math:`j=1,\dots,m`, with the words
    the rows of ``W`` and the contexts the columns of ``H``. For the max-margin factors of
    complete :math:`k`-subset supports it equals one for every context; for ``S = I`` (one
    next token per context) it is :math:`\cos(h_j,w_j)`, one under neural collapse.

    Parameters
    ----------
    W : array_like, shape (V, d)
    H : array_like, shape (d, m)
    S : array_like, shape (V, m)
        0/1 support matrix.

    Returns
    -------
    ndarray, shape (m,)
        Zero where ``h_j`` or the sum of its support words is zero.

    Examples
    --------
    >>> W, H = svd_factors(closed_form_max_margin(5, 2))
    >>> round(float(support_word_alignment(W, H, k_subset_supports(5, 2)).min()), 6)
    1.0
    """
    S = _check_support(S)
    W = check_array(W, "W", ndim=2, shape=(S.shape[0], None))
    H = check_array(H, "H", ndim=2, shape=(W.shape[1], S.shape[1]))
    sums = S.T @ W  # row j: sum of the support words of context j
    num = np.sum(H.T * sums, axis=1)
    den = np.linalg.norm(H, axis=0) * np.linalg.norm(sums, axis=1)
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def nuclear_norm_bounds(S):
    r"""Lower and upper bounds on :math:`\|L^{\rm mm}\|_*` from the centred support matrix.

    For any support matrix, :math:`\tilde S` is feasible for NTP-SVM* and
    :math:`\langle L,\tilde S\rangle\ge\|\tilde S\|_F^2` for every feasible :math:`L`, so

    .. math:: \frac{\|\tilde S\|_F^2}{\|\tilde S\|_2}\le\|L^{\rm mm}\|_*\le\|\tilde S\|_*.

    Parameters
    ----------
    S : array_like, shape (V, m)
        0/1 support matrix with at least one off-support token (``S`` not all ones).

    Returns
    -------
    lower, upper : float

    Examples
    --------
    >>> lo, hi = nuclear_norm_bounds(k_subset_supports(5, 2))  # tight: both 4 sqrt(3)
    >>> round(lo, 6), round(hi, 6)
    (6.928203, 6.928203)
    """
    St = centered_support(S)
    s = np.linalg.svd(St, compute_uv=False)
    if s[0] == 0:
        raise ValueError("S must have an off-support token (S is all ones)")
    return float(np.sum(s**2) / s[0]), float(s.sum())


def n_distinct_supports(S):
    """Number of distinct supports (distinct columns of the 0/1 support matrix ``S``).

    Examples
    --------
    >>> n_distinct_supports([[1, 1, 0], [0, 0, 1]])
    2
    """
    S = _check_support(S)
    return int(len(np.unique(S.T, axis=0)))


def max_margin_coefficient(L, L_in, L_mm):
    r"""Coefficient :math:`\rho` of the max-margin direction in :math:`L=L^{\rm in}+\rho L^{\rm mm}+R`.

    .. math:: \rho=\frac{\langle L-L^{\rm in},L^{\rm mm}\rangle}{\|L^{\rm mm}\|_F^2},

    the projection of :math:`L-L^{\rm in}` on :math:`L^{\rm mm}` (Frobenius inner product); along
    the regularisation path :math:`\rho(\lambda)=\ln(1/\lambda)+O(1)`.

    Parameters
    ----------
    L, L_in, L_mm : array_like, shape (V, m)
        Logits, in-support logits (:func:`in_support_logits`) and max-margin logits (not zero).

    Returns
    -------
    float

    Examples
    --------
    >>> L_mm = closed_form_max_margin(4, 2)
    >>> round(max_margin_coefficient(3.0 * L_mm, np.zeros((4, 6)), L_mm), 12)
    3.0
    """
    L = check_array(L, "L", ndim=2)
    L_in = check_array(L_in, "L_in", ndim=2, shape=L.shape)
    L_mm = check_array(L_mm, "L_mm", ndim=2, shape=L.shape)
    n2 = float(np.sum(L_mm**2))
    if n2 == 0:
        raise ValueError("L_mm must not be zero")
    return float(np.sum((L - L_in) * L_mm) / n2)
