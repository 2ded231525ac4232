r"""Convex programs of next-token prediction (cvxpy).

* :func:`ntp_svm_frobenius`: P1's NTP-SVM for the linear model ``logits = W @ Hbar`` -- minimise the
  squared **Frobenius** norm of ``W`` (not the spectral norm) subject to equal in-support logits
  and margin one against every off-support token;
* :func:`is_separable` (feasibility of the same constraints) and :func:`is_compatible` (the
  log-odds equations, a linear system solved by least squares);
* :func:`ntp_svm_nuclear`: the nuclear-norm NTP-SVM* of the unconstrained-features model, whose
  solution :math:`L^{\rm mm}` depends only on the support matrix;
* :func:`logit_path`: the nuclear-norm-regularised cross-entropy in logit space (the
  regularisation path of the unconstrained-features model).

The constraints are vectorised with the anchors :math:`a_j=\min\mathcal S_j` and the masks of
:func:`seqrmt.ntp.geometry.support_masks`: one cvxpy constraint per kind, never one per entry.

Orientation: supports, probabilities and logits are ``V x m`` (columns are contexts);
embeddings :math:`\bar H` are ``d x m``; ``W`` is ``V x d``.

Used in: Chapter 3.
"""

from __future__ import annotations

from dataclasses import dataclass

import cvxpy as cp
import numpy as np

from .._validation import check_array, check_positive, check_positive_int, check_prob_columns, check_solver
from .geometry import (
    SubspaceF,
    _check_support,
    closed_form_context_cosine,
    closed_form_max_margin,
    closed_form_nuclear_norm,
    cosine_similarity,
    k_subset_supports,
    support_masks,
    support_word_alignment,
    svd_factors,
)

__all__ = [
    "InfeasibleProgramError",
    "ntp_svm_frobenius",
    "is_separable",
    "is_compatible",
    "ntp_svm_nuclear",
    "logit_path",
    "CompleteSupportSolution",
    "complete_support_solution",
    "duplicated_context_collapse",
]


class InfeasibleProgramError(RuntimeError):
    """Raised when a convex program is infeasible or the solver fails; the message has the status."""


def _constraints(Lam, S, margin=None):
    """Vectorised NTP-SVM constraints on the cvxpy expression ``Lam`` (V x m).

    Equal logits on each support; off-support margin 1, or ``margin[j]`` in column ``j``.
    """
    anchors, E, O = support_masks(S)
    ez, ej = np.nonzero(E)
    ov, oj = np.nonzero(O)
    cons = []
    if ez.size:
        cons.append(Lam[anchors[ej], ej] - Lam[ez, ej] == 0)
    if ov.size:
        cons.append(Lam[anchors[oj], oj] - Lam[ov, oj] >= (1 if margin is None else margin[oj]))
    return cons


def _solve(prob, solver, what, **kwargs):
    check_solver(solver)
    try:
        prob.solve(solver=solver, **kwargs)
    except cp.error.SolverError as exc:
        raise InfeasibleProgramError(f"{what}: solver {solver} failed ({exc})") from exc
    if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        raise InfeasibleProgramError(f"{what}: solver status {prob.status!r}")
    return prob.status


def ntp_svm_frobenius(Hbar, S, solver="CLARABEL"):
    r"""P1's NTP-SVM for the linear model with fixed embeddings.

    .. math:: W^{\rm mm}=\arg\min_W\|W\|_F^2\ \text{ s.t. }\ (e_z-e_{z'})^\top W\bar h_j=0,\quad
              (e_z-e_v)^\top W\bar h_j\ge1\quad(z,z'\in\mathcal S_j,\ v\notin\mathcal S_j).

    Parameters
    ----------
    Hbar : array_like, shape (d, m)
        Context embeddings (columns).
    S : array_like, shape (V, m)
        0/1 support matrix.
    solver : str
        cvxpy solver (Clarabel by default).

    Returns
    -------
    ndarray, shape (V, d)

    Raises
    ------
    InfeasibleProgramError
        If the data are not NTP-separable (status in the message).
    ValueError
        If ``solver`` is not an installed cvxpy solver, or another argument is invalid.

    Examples
    --------
    >>> W = ntp_svm_frobenius(np.eye(2), [[1, 0], [0, 1], [0, 0]])
    >>> print(np.round(W, 4))
    [[ 0.6667 -0.3333]
     [-0.3333  0.6667]
     [-0.3333 -0.3333]]
    """
    S = _check_support(S)
    Hbar = check_array(Hbar, "Hbar", ndim=2, shape=(None, S.shape[1]))
    check_solver(solver)
    W = cp.Variable((S.shape[0], Hbar.shape[0]))
    prob = cp.Problem(cp.Minimize(cp.sum_squares(W)), _constraints(W @ Hbar, S))
    _solve(prob, solver, "NTP-SVM (not NTP-separable?)")
    return W.value


def is_separable(Hbar, S, solver="CLARABEL"):
    r"""Whether the data are NTP-separable (P1 Def. 2): the NTP-SVM constraints are feasible.

    The feasibility program is solved with the NTP-SVM's strongly convex objective (same feasible
    set): interior-point solvers handle it better than a zero objective.

    Examples
    --------
    >>> S = [[1, 0, 1], [0, 1, 1], [0, 0, 0]]
    >>> is_separable(np.eye(3), S), is_separable(np.ones((1, 3)), S)
    (True, False)
    """
    S = _check_support(S)
    Hbar = check_array(Hbar, "Hbar", ndim=2, shape=(None, S.shape[1]))
    check_solver(solver)
    W = cp.Variable((S.shape[0], Hbar.shape[0]))
    prob = cp.Problem(cp.Minimize(cp.sum_squares(W)), _constraints(W @ Hbar, S))
    try:
        prob.solve(solver=solver)
    except cp.error.SolverError as exc:
        raise InfeasibleProgramError(f"separability check: solver {solver} failed ({exc})") from exc
    if prob.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        return True
    if prob.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        return False
    raise InfeasibleProgramError(f"separability check: solver status {prob.status!r}")


def is_compatible(Hbar, P, tol=1e-8):
    r"""Whether the data are NTP\ :sub:`H`-compatible (P1 Def. 1).

    The log-odds equations :math:`(e_{a_j}-e_z)^\top W\bar h_j=\log(\hat p_{j,a_j}/\hat p_{j,z})` are a
    linear system in ``W``; they are solvable iff the least-squares residual vanishes (relative
    tolerance ``tol``).

    Examples
    --------
    >>> P = [[0.5, 0.2, 0.6], [0.5, 0.8, 0.4]]
    >>> is_compatible(np.eye(3), P), is_compatible(np.ones((1, 3)), P)
    (True, False)
    """
    P = check_prob_columns(P, "P")
    tol = check_positive(tol, "tol")
    F = SubspaceF(Hbar, (P > 0).astype(int))
    b = F.log_odds(P)
    if b.size == 0:
        return True
    w, *_ = np.linalg.lstsq(F.A, b, rcond=None)
    return bool(np.linalg.norm(F.A @ w - b) <= tol * (1.0 + np.linalg.norm(b)))


def ntp_svm_nuclear(S, solver=None, deduplicate=True, **solver_options):
    r"""The nuclear-norm NTP-SVM* of the unconstrained-features model.

    .. math:: L^{\rm mm}=\arg\min_L\|L\|_*\ \text{ s.t. }\ L_{zj}=L_{z'j}\ (z,z'\in\mathcal S_j),\quad
              L_{zj}-L_{vj}\ge1\ (z\in\mathcal S_j,\ v\notin\mathcal S_j).

    Parameters
    ----------
    S : array_like, shape (V, m)
        0/1 support matrix.
    solver : str, optional
        ``None`` picks Clarabel (accurate, ~1e-9) when the reduced problem has at most 500
        entries and SCS (first order, ~1e-4) otherwise, or where cvxpy has no SCS (Pyodide).
    deduplicate : bool
        Solve over the distinct support columns only. Contexts with equal supports have equal
        columns at a (symmetrised) optimum, and ``k`` equal columns ``c`` have the nuclear norm of
        the single column :math:`\sqrt k\,c`, so the reduced program has one column per distinct
        support, scaled by the square root of its multiplicity. Same minimum, smaller SDP.
    **solver_options
        Passed to ``Problem.solve``.

    Returns
    -------
    ndarray, shape (V, m)

    Examples
    --------
    >>> L = ntp_svm_nuclear([[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    >>> print(np.round(L, 4) + 0.0)
    [[ 0.6667 -0.3333 -0.3333]
     [-0.3333  0.6667 -0.3333]
     [-0.3333 -0.3333  0.6667]]
    """
    S = _check_support(S)
    V, m = S.shape
    if deduplicate:
        Su, inverse, mult = np.unique(S.T, axis=0, return_inverse=True, return_counts=True)
        Su, inverse = Su.T, inverse.ravel()
    else:
        Su, inverse, mult = S, np.arange(m), np.ones(m)
    root = np.sqrt(mult.astype(float))
    if solver is None:
        # SCS is faster on large SDPs; Pyodide's cvxpy (in the browser) has Clarabel only
        small = Su.size <= 500 or "SCS" not in cp.installed_solvers()
        solver = "CLARABEL" if small else "SCS"
    X = cp.Variable(Su.shape)
    # X = L_u diag(root): equalities are homogeneous, the margin of column g becomes root[g].
    prob = cp.Problem(cp.Minimize(cp.normNuc(X)), _constraints(X, Su, margin=root))
    _solve(prob, solver, "NTP-SVM*", **solver_options)
    Lu = X.value / root
    return Lu[:, inverse]


def logit_path(P, pi, lam, solver="CLARABEL"):
    r"""Nuclear-norm-regularised cross-entropy in logit space (UFM regularisation path).

    .. math:: L_\lambda=\arg\min_L\ \sum_j\hat\pi_j\big(\operatorname{logsumexp}(L_{:,j})-
              \hat p_j^\top L_{:,j}\big)+\lambda\|L\|_* .

    Parameters
    ----------
    P : array_like, shape (V, m)
        Next-token probabilities.
    pi : array_like, shape (m,)
        Context frequencies (sum to one).
    lam : float
        Regularisation strength, > 0.
    solver : str
        cvxpy solver (Clarabel: exponential cone + SDP).

    Returns
    -------
    ndarray, shape (V, m)

    Examples
    --------
    >>> P = np.array([[0.5, 0.0], [0.5, 0.0], [0.0, 1.0]])
    >>> L = logit_path(P, [0.5, 0.5], 1e-2)
    >>> round(float(L[0, 0] - L[1, 0]), 4), bool(L[2, 1] - L[0, 1] > 3)
    (0.0, True)
    """
    P = check_prob_columns(P, "P")
    pi = check_array(pi, "pi", ndim=1, shape=(P.shape[1],))
    if np.any(pi < 0) or abs(pi.sum() - 1) > 1e-8:
        raise ValueError("pi must be non-negative and sum to one")
    lam = check_positive(lam, "lam")
    L = cp.Variable(P.shape)
    ce = cp.sum(cp.multiply(pi, cp.log_sum_exp(L, axis=0))) - cp.sum(cp.multiply(P * pi, L))
    prob = cp.Problem(cp.Minimize(ce + lam * cp.normNuc(L)))
    _solve(prob, solver, "logit path")
    return L.value


@dataclass
class CompleteSupportSolution:
    """NTP-SVM* solved numerically for complete k-subset supports (:func:`complete_support_solution`).

    Attributes
    ----------
    V, k : int
    S : numpy.ndarray
        The ``V x C(V, k)`` support matrix (:func:`seqrmt.ntp.geometry.k_subset_supports`).
    L : numpy.ndarray
        The solver's :math:`L^{\\rm mm}`.
    W, H : numpy.ndarray
        Its balanced factors (:func:`seqrmt.ntp.geometry.svd_factors`).
    max_error : float
        :math:`\\max|L-\\tilde S|`, the distance to the closed form.
    nuclear, nuclear_theory : float
        :math:`\\|L\\|_*` and the closed form :math:`(V-1)\\sqrt{\\binom{V-2}{k-1}}`.
    word_cosines, context_cosines, context_cosines_formula : numpy.ndarray
        :math:`\\mathrm{Cos}(W)`, :math:`\\mathrm{Cos}(H^\\top)` and the closed form of the latter.
    support_word_alignment : numpy.ndarray
        :math:`\\cos(h_j,\\sum_{z\\in\\mathcal S_j}w_z)` per context.
    """

    V: int
    k: int
    S: np.ndarray
    L: np.ndarray
    W: np.ndarray
    H: np.ndarray
    max_error: float
    nuclear: float
    nuclear_theory: float
    word_cosines: np.ndarray
    context_cosines: np.ndarray
    context_cosines_formula: np.ndarray
    support_word_alignment: np.ndarray


def complete_support_solution(V, k, solver=None, **solver_options):
    r"""Solve NTP-SVM* for all :math:`\binom Vk` supports of size ``k`` and compare with the closed form.

    The solution is :math:`\tilde S=(I_V-\frac1V\mathbf 1\mathbf 1^\top)S`, of nuclear norm
    :math:`(V-1)\sqrt{\binom{V-2}{k-1}}`; its word embeddings form a simplex ETF and its context
    cosines are :math:`(V|\mathcal S_j\cap\mathcal S_{j'}|-k^2)/(k(V-k))`. This function solves
    the program with cvxpy (:func:`ntp_svm_nuclear`) and returns every quantity needed to check
    these statements.

    Parameters
    ----------
    V : int
        Vocabulary size, at least 2.
    k : int
        Support size, ``1 <= k < V``.
    solver : str, optional
        As in :func:`ntp_svm_nuclear`.
    **solver_options
        Passed to ``Problem.solve``.

    Returns
    -------
    CompleteSupportSolution

    Raises
    ------
    ValueError
        If ``V < 2`` or ``k`` is not in ``1, ..., V - 1``.

    Examples
    --------
    >>> sol = complete_support_solution(4, 2, solver="CLARABEL")
    >>> sol.S.shape, round(sol.nuclear, 5), round(sol.nuclear_theory, 5), bool(sol.max_error < 1e-8)
    ((4, 6), 4.24264, 4.24264, True)
    """
    V = check_positive_int(V, "V")
    k = check_positive_int(k, "k")
    if V < 2:
        raise ValueError(f"V must be at least 2, got {V}")
    if k >= V:
        raise ValueError(f"k must be smaller than V = {V}, got {k}")
    S = k_subset_supports(V, k)
    L = ntp_svm_nuclear(S, solver=solver, **solver_options)
    W, H = svd_factors(L)
    return CompleteSupportSolution(
        V=V, k=k, S=S, L=L, W=W, H=H,
        max_error=float(np.abs(L - closed_form_max_margin(V, k)).max()),
        nuclear=float(np.linalg.svd(L, compute_uv=False).sum()),
        nuclear_theory=closed_form_nuclear_norm(V, k),
        word_cosines=cosine_similarity(W), context_cosines=cosine_similarity(H.T),
        context_cosines_formula=closed_form_context_cosine(V, k, S.T @ S),
        support_word_alignment=support_word_alignment(W, H, S))


def duplicated_context_collapse(S, n_dup, solver="CLARABEL", **solver_options):
    r"""Subspace collapse: contexts with equal supports get parallel max-margin embeddings.

    Appends copies of the first ``n_dup`` contexts of ``S`` (contexts ``m, ..., m + n_dup - 1``
    repeat the supports of ``0, ..., n_dup - 1``), solves NTP-SVM* on all columns
    (``deduplicate=False``) and on the distinct columns only (the reduced program of
    :func:`ntp_svm_nuclear`), and returns the cosines of the duplicated pairs of context
    embeddings and the two optimal nuclear norms.

    Parameters
    ----------
    S : array_like, shape (V, m)
        0/1 support matrix, not all ones.
    n_dup : int
        Number of contexts to duplicate, ``1 <= n_dup <= m``.
    solver : str
        cvxpy solver of both programs (default Clarabel, accurate to about 1e-9).
    **solver_options
        Passed to ``Problem.solve``.

    Returns
    -------
    pair_cosines : ndarray, shape (n_dup,)
        :math:`\cos(h_j,h_{m+j})` from the full program.
    nuclear_full, nuclear_reduced : float
        :math:`\|L^{\rm mm}\|_*` of the full and of the reduced program (equal at the optimum).

    Examples
    --------
    >>> cos, nf, nr = duplicated_context_collapse(np.eye(3, dtype=int), 2)
    >>> np.round(cos, 6).tolist(), bool(abs(nf - nr) < 1e-6)
    ([1.0, 1.0], True)
    """
    S = _check_support(S)
    if S.all():
        raise ValueError("S must have an off-support token (S is all ones: L_mm = 0)")
    m = S.shape[1]
    n_dup = check_positive_int(n_dup, "n_dup")
    if n_dup > m:
        raise ValueError(f"n_dup must be at most the number of contexts {m}, got {n_dup}")
    S_dup = np.concatenate([S, S[:, :n_dup]], axis=1)
    L_full = ntp_svm_nuclear(S_dup, solver=solver, deduplicate=False, **solver_options)
    H = svd_factors(L_full)[1]
    cos = np.diag(cosine_similarity(H.T)[:n_dup, m:])
    L_red = ntp_svm_nuclear(S_dup, solver=solver, **solver_options)
    nuc = [float(np.linalg.svd(A, compute_uv=False).sum()) for A in (L_full, L_red)]
    return cos, nuc[0], nuc[1]
