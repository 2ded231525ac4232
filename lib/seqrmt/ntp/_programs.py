r"""The linear and convex programs of next-token prediction (numpy and cvxpy).

For the linear model ``logits = W @ Hbar`` with fixed embeddings (Thrampoulidis 2024):

* :class:`SubspaceF`, the data subspace :math:`\mathcal F` of the in-support logit differences;
* :func:`w_star` and :func:`is_compatible`: the log-odds equations, a linear system;
* :func:`ntp_svm_frobenius` and :func:`is_separable`: the NTP-SVM, a quadratic program in the
  **Frobenius** norm (not the spectral norm, which ``cp.norm2`` of a matrix would give).

For the unconstrained-features model (Zhao et al. 2024), in logit space:

* :func:`ntp_svm_nuclear`: the nuclear-norm NTP-SVM*, whose solution depends on the supports only
  (an SDP for cvxpy, or a numpy ADMM for large problems);
* :func:`logit_path`: the nuclear-norm-regularised cross-entropy (the regularisation path).

The constraints use an **anchor** :math:`a_j=\min\mathcal S_j` per context: every in-support
logit equals the anchor's, every off-support logit lies at least one below it. Given the
equalities this is the full set of margin constraints, and it takes one cvxpy constraint per
kind, never one per entry (which makes compilation dominate at m = 400).
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from .._validation import (ConvergenceError, check_array, check_positive, check_prob_columns, check_size,
                           check_solver)
from ..runtime import single_threaded_blas

__all__ = ["SubspaceF", "w_star", "is_compatible", "is_separable", "ntp_svm_frobenius", "ntp_svm_nuclear",
           "logit_path"]


def _check_support(S, name="S"):
    """A 0/1 support matrix with no empty column, as int64."""
    S = check_array(S, name, ndim=2)
    if not np.all((S == 0) | (S == 1)):
        raise ValueError(f"{name} must be a 0/1 matrix")
    if np.any(S.sum(axis=0) < 1):
        raise ValueError(f"every column of {name} must contain at least one token")
    return S.astype(np.int64)


def _margin_constraints(Lam, S, margin=None):
    """Equal in-support logits and off-support margins (1, or ``margin[j]``) on the expression ``Lam``."""
    S = S.astype(bool)
    anchors = np.argmax(S, axis=0)  # a_j = min S_j
    E = S.copy()
    E[anchors, np.arange(S.shape[1])] = False  # in-support entries other than the anchor
    ez, ej = np.nonzero(E)
    ov, oj = np.nonzero(~S)  # off-support entries
    cons = []
    # one vectorised constraint per kind: with m = 400 contexts, one per entry would make cvxpy's
    # compilation, not the solver, take most of the time
    if ez.size:  # L_{a_j, j} = L_{z, j} for z in S_j
        cons.append(Lam[anchors[ej], ej] - Lam[ez, ej] == 0)
    if ov.size:  # L_{a_j, j} - L_{v, j} >= 1 for v not in S_j: with the equalities, every pair
        cons.append(Lam[anchors[oj], oj] - Lam[ov, oj] >= (1 if margin is None else margin[oj]))
    return cons


def _solve(prob, solver, what, **options):
    """Solve ``prob``; ValueError if infeasible, ConvergenceError if the solver fails."""
    try:
        prob.solve(solver=solver, **options)
    except cp.error.SolverError as exc:
        raise ConvergenceError(f"{what}: solver {solver} failed ({exc})") from exc
    if prob.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        raise ValueError(f"{what}: the program is infeasible")
    # OPTIMAL_INACCURATE is accepted: callers state the solver's accuracy in their checks
    if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        raise ConvergenceError(f"{what}: solver status {prob.status!r}")


class SubspaceF:
    r"""The data subspace :math:`\mathcal F\subset\mathbb R^{V\times d}` of the linear model.

    :math:`\mathcal F=\operatorname{span}\{(e_z-e_{z'})\bar h_j^\top:z\ne z'\in\mathcal S_j\}`,
    spanned by the rows of the log-odds system ``A`` (one row per context and non-anchor support
    token); its orthonormal basis comes from an SVD of ``A`` (singular values above ``tol`` times
    the largest).

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
        Rows :math:`\operatorname{vec}((e_{a_j}-e_z)\bar h_j^\top)` (row-major vectorisation of ``W``).
    rows : tuple of ndarray
        ``(z, j)`` of the rows of ``A``.
    basis : ndarray, shape (V*d, dim F)
        Orthonormal basis of :math:`\mathcal F`.

    Examples
    --------
    >>> F = SubspaceF(np.eye(2), [[1, 1], [1, 0], [0, 1]])
    >>> F.basis.shape[1]
    2
    >>> W = np.arange(6.0).reshape(3, 2)
    >>> bool(np.allclose(F.project(W) + F.perp(W), W))
    True
    """

    def __init__(self, Hbar, S, tol=1e-10):
        S = _check_support(S)
        Hbar = check_array(Hbar, "Hbar", ndim=2, shape=(None, S.shape[1]))
        tol = check_positive(tol, "tol")
        (V, m), d = S.shape, Hbar.shape[0]
        # anchor a_j = the first word of S_j; the differences with the anchor span all pairs
        anchors = np.argmax(S, axis=0)
        E = S.astype(bool)
        E[anchors, np.arange(m)] = False
        z, j = np.nonzero(E)
        A = np.zeros((z.size, V, d))
        rows = np.arange(z.size)
        A[rows, anchors[j], :] += Hbar[:, j].T  # (e_a - e_z) hbar_j^T, one row per equation
        A[rows, z, :] -= Hbar[:, j].T
        self.A, self.rows, self.shape, self.n_contexts = A.reshape(z.size, V * d), (z, j), (V, d), m
        if z.size == 0:
            self.basis = np.zeros((V * d, 0))
        else:
            _, s, Vt = np.linalg.svd(self.A, full_matrices=False)
            self.basis = Vt[s > tol * s[0]].T  # the row space of A is F

    def project(self, W):
        r"""Orthogonal projection :math:`P_\mathcal F(W)` of ``W`` (``V x d``)."""
        w = check_array(W, "W", ndim=2, shape=self.shape).ravel()  # row-major, like the rows of A
        return (self.basis @ (self.basis.T @ w)).reshape(self.shape)  # B B^T w

    def perp(self, W):
        r""":math:`P_\perp(W)=W-P_\mathcal F(W)`."""
        return check_array(W, "W", ndim=2, shape=self.shape) - self.project(W)

    def log_odds(self, P):
        r"""Right-hand side :math:`\log(\hat p_{j,a_j}/\hat p_{j,z})` of the rows of ``A``."""
        P = check_prob_columns(P, "P", shape=(self.shape[0], self.n_contexts))
        anchors = np.argmax(P > 0, axis=0)
        z, j = self.rows
        with np.errstate(divide="ignore"):
            return np.log(P[anchors[j], j]) - np.log(P[z, j])


def _least_squares(Hbar, P):
    """The log-odds system of ``(Hbar, P)``: its subspace, least-norm solution and relative residual."""
    P = check_prob_columns(P, "P")
    F = SubspaceF(Hbar, (P > 0).astype(int))
    b = F.log_odds(P)  # log(p_{j,a_j} / p_{j,z}), one per row of the system
    if b.size == 0:  # every support has one token: no log-odds to match
        return F, np.zeros(F.shape[0] * F.shape[1]), 0.0
    w = np.linalg.lstsq(F.A, b, rcond=None)[0]  # least norm: w lies in the row space F
    return F, w, float(np.linalg.norm(F.A @ w - b) / (1.0 + np.linalg.norm(b)))


def w_star(Hbar, P, tol=1e-8):
    r"""The finite component :math:`W^\star`: the log-odds equations' solution inside :math:`\mathcal F`.

    Solves :math:`(e_{a_j}-e_z)^\top W\bar h_j=\log(\hat p_{j,a_j}/\hat p_{j,z})` for all ``j`` and
    ``z`` in :math:`\mathcal S_j\setminus\{a_j\}` in the least-norm sense; the least-norm solution
    lies in the row space of the system, which is :math:`\mathcal F`.

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
        The least-squares solution of the log-odds equations.

    Raises
    ------
    ValueError
        If the equations are inconsistent (not NTP-compatible).

    Examples
    --------
    >>> P = np.array([[0.5, 0.2], [0.5, 0.0], [0.0, 0.8]])
    >>> print(np.round(w_star(np.eye(2), P), 4) + 0.0)
    [[ 0.     -0.6931]
     [ 0.      0.    ]
     [ 0.      0.6931]]
    """
    tol = check_positive(tol, "tol")
    F, w, res = _least_squares(Hbar, P)
    if res > tol:
        raise ValueError(f"Hbar and P are not NTP-compatible (relative residual {res:.3g})")
    return w.reshape(F.shape)


def is_compatible(Hbar, P, tol=1e-8):
    r"""Whether the data are NTP-compatible: the log-odds equations have a solution.

    They are a linear system in ``W``, solvable iff the least-squares residual vanishes (relative
    tolerance ``tol``).

    Examples
    --------
    >>> P = [[0.5, 0.2, 0.6], [0.5, 0.8, 0.4]]
    >>> is_compatible(np.eye(3), P), is_compatible(np.ones((1, 3)), P)
    (True, False)
    """
    tol = check_positive(tol, "tol")
    return _least_squares(Hbar, P)[2] <= tol


def _svm_problem(Hbar, S):
    """min |W|_F^2 subject to the NTP-SVM constraints on W @ Hbar, and its variable."""
    # the constraints act on the logits W @ Hbar, affine in W: a quadratic program
    S = _check_support(S)
    Hbar = check_array(Hbar, "Hbar", ndim=2, shape=(None, S.shape[1]))
    W = cp.Variable((S.shape[0], Hbar.shape[0]))
    # sum of squares, the Frobenius norm; cp.norm2(W) would be the spectral norm
    return cp.Problem(cp.Minimize(cp.sum_squares(W)), _margin_constraints(W @ Hbar, S)), W


def is_separable(Hbar, S, solver="CLARABEL"):
    r"""Whether the data are NTP-separable: some ``W`` has equal in-support logits and margin one.

    Decided by the NTP-SVM itself (same feasible set): interior-point solvers handle its strongly
    convex objective better than a zero one.

    Examples
    --------
    >>> S = [[1, 0, 1], [0, 1, 1], [0, 0, 0]]
    >>> is_separable(np.eye(3), S), is_separable(np.ones((1, 3)), S)
    (True, False)
    """
    check_solver(solver)
    prob, _ = _svm_problem(Hbar, S)
    try:
        _solve(prob, solver, "NTP-SVM")
    except ValueError:  # infeasible: no W with equal in-support logits and margin one
        return False
    return True


def ntp_svm_frobenius(Hbar, S, solver="CLARABEL"):
    r"""The NTP-SVM of the linear model with fixed embeddings.

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
    ValueError
        If the data are not NTP-separable, or an argument is invalid.

    Examples
    --------
    >>> W = ntp_svm_frobenius(np.eye(2), [[1, 0], [0, 1], [0, 0]])
    >>> print(np.round(W, 4))
    [[ 0.6667 -0.3333]
     [-0.3333  0.6667]
     [-0.3333 -0.3333]]
    """
    check_solver(solver)
    prob, W = _svm_problem(Hbar, S)
    _solve(prob, solver, "NTP-SVM (are Hbar and S NTP-separable?)")
    return W.value


def _project_margins(Y, on, r):
    r"""Euclidean projection of every column of ``Y`` onto its constraints (support ``on``, margin ``r``)."""
    # column j: min_{a, x} sum_{z in S_j} (a - y_z)^2 + sum_{v notin S_j} (x_v - y_v)^2 s.t.
    # x_v <= a - r_j. For a given a the best x_v is min(y_v, a - r_j), so a minimises
    # phi(a) = sum_S (a - y_z)^2 + sum_{v notin S} (t_v - a)_+^2 with t_v = y_v + r_j, and
    # phi'(a) = 0 reads |S| (a - mean_S y) = sum_v (t_v - a)_+ : increasing left, decreasing right
    V, m = Y.shape
    size = on.sum(axis=0)
    mean = np.where(on, Y, 0.0).sum(axis=0) / size
    t = np.where(on, -np.inf, Y + r)
    t_desc = -np.sort(-t, axis=0)  # off-support t_v in decreasing order, the support (-inf) last
    # if exactly k of the t_v exceed a: |S| (a - mean) = T_k - k a, T_k the sum of the k largest
    T = np.cumsum(np.where(np.isfinite(t_desc), t_desc, 0.0), axis=0)
    T = np.vstack([np.zeros(m), T])
    a_k = (size * mean + T) / (size + np.arange(V + 1)[:, None])
    # phi'(t_(k+1)) = (|S| + k) (t_(k+1) - a_k) changes sign once: a_k < t_(k+1) exactly for k < k*
    k_star = np.sum(a_k[:-1] < t_desc, axis=0)
    a = a_k[k_star, np.arange(m)]
    return np.where(on, a, np.minimum(Y, a - r))


def _admm_nuclear(S, r, tol, max_iter):
    r"""ADMM for min |X|_* s.t. X in C (equal logits on each support, margin ``r[j]`` off it)."""
    on = S.astype(bool)
    # the splitting min |X|_* + I_C(Y) s.t. X = Y, scaled dual U (Boyd et al. 2011, Section 3.1)
    Y = (S - S.mean(axis=0)) * r  # the centred support: feasible, so the start is in C
    U = np.zeros_like(Y)
    if not Y.any():  # every support is the whole vocabulary: no margin to keep, L = 0
        return Y
    rho = 1.0 / np.linalg.norm(Y, 2)  # SVT threshold 1/rho: the top singular value of the start
    for it in range(1, max_iter + 1):
        # X-step: prox of |.|_*/rho, singular value thresholding of Y - U
        Uy, s, Qt = np.linalg.svd(Y - U, full_matrices=False)
        s = np.maximum(s - 1.0 / rho, 0.0)
        X = (Uy * s) @ Qt
        # Y-step: the exact projection onto C; U-step: the running sum of the residuals X - Y
        Y_old, Y = Y, _project_margins(X + U, on, r)
        U += X - Y
        # primal residual |X - Y| and dual residual rho |Y - Y_old|, relative to the iterates and to
        # the dual rho U (at the optimum rho U is a subgradient of |.|_*: spectral norm <= 1)
        primal, dual = np.linalg.norm(X - Y), rho * np.linalg.norm(Y - Y_old)
        eps_primal = tol * max(np.linalg.norm(X), np.linalg.norm(Y))
        eps_dual = tol * rho * np.linalg.norm(U)
        if primal <= eps_primal and dual <= eps_dual:
            # Y, not X: Y lies in C exactly, and |Y|_* is within the tolerance of the optimum
            return Y
        # residual balancing (Boyd et al. 2011, Section 3.4.1): rescale rho, keep rho U fixed
        if it % 10 == 0 and primal * eps_dual > 10 * dual * eps_primal:
            rho, U = 2 * rho, U / 2
        elif it % 10 == 0 and dual * eps_primal > 10 * primal * eps_dual:
            rho, U = rho / 2, 2 * U
    raise ConvergenceError(f"NTP-SVM* (ADMM): no convergence in {max_iter} iterations (primal residual "
                           f"{primal:.2g}, dual {dual:.2g}; tol {tol:g})")


def ntp_svm_nuclear(S, solver=None, deduplicate=True, tol=1e-7, max_iter=5000, **solver_options):
    r"""The nuclear-norm NTP-SVM* of the unconstrained-features model.

    .. math:: L^{\rm mm}=\arg\min_L\|L\|_*\ \text{ s.t. }\ L_{zj}=L_{z'j}\ (z,z'\in\mathcal S_j),\quad
              L_{zj}-L_{vj}\ge1\ (z\in\mathcal S_j,\ v\notin\mathcal S_j).

    Parameters
    ----------
    S : array_like, shape (V, m)
        0/1 support matrix.
    solver : {"ADMM", "CLARABEL", "SCS", ...}, optional
        ``"ADMM"``: a first-order method in numpy (singular value thresholding, then the exact
        projection onto the constraints, column by column), stopped on its primal and dual
        residuals; its result satisfies the constraints exactly, and its nuclear norm is within
        about ``tol`` (relative) of the minimum. Any other name is a cvxpy solver for the SDP:
        Clarabel (interior point, ~1e-9), SCS (first order, ~1e-4). ``None`` picks Clarabel when
        the reduced problem has at most 500 entries, ADMM otherwise (Clarabel needs over 20 GB
        for V = 104 and 182 distinct supports; ADMM solves them in about a second).
    deduplicate : bool
        Solve over the distinct supports only. Contexts with equal supports have equal columns at
        a (symmetrised) optimum, and ``k`` equal columns ``c`` have the nuclear norm of the single
        column :math:`\sqrt k\,c`: same minimum, smaller SDP.
    tol, max_iter : float, int
        ADMM only: relative tolerance on the residuals, and the number of iterations after which
        :class:`seqrmt.ConvergenceError` is raised.
    **solver_options
        cvxpy solvers only: passed to ``Problem.solve``.

    Returns
    -------
    ndarray, shape (V, m)

    Raises
    ------
    seqrmt.ConvergenceError
        If the solver fails (ADMM: not converged within ``max_iter`` iterations).

    Examples
    --------
    >>> L = ntp_svm_nuclear([[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    >>> print(np.round(L, 4) + 0.0)
    [[ 0.6667 -0.3333 -0.3333]
     [-0.3333  0.6667 -0.3333]
     [-0.3333 -0.3333  0.6667]]
    >>> L = ntp_svm_nuclear([[1, 0, 0], [0, 1, 0], [0, 0, 1]], solver="ADMM", tol=1e-10)
    >>> print(np.round(L, 4) + 0.0)
    [[ 0.6667 -0.3333 -0.3333]
     [-0.3333  0.6667 -0.3333]
     [-0.3333 -0.3333  0.6667]]
    """
    S = _check_support(S)
    tol = check_positive(tol, "tol")
    max_iter = check_size(max_iter, "max_iter")
    if deduplicate:
        # one column per distinct support, with its multiplicity
        Su, inverse, mult = np.unique(S.T, axis=0, return_inverse=True, return_counts=True)
        Su, inverse = Su.T, inverse.ravel()
    else:
        Su, inverse, mult = S, np.arange(S.shape[1]), np.ones(S.shape[1])
    root = np.sqrt(mult.astype(float))
    # an interior-point solver is accurate but its cost grows fast with the size of the SDP; ADMM
    # costs one SVD of the V x m matrix per iteration and solves m = 400 in seconds
    if solver is None:
        solver = "CLARABEL" if Su.size <= 500 else "ADMM"
    # X = L_u diag(root): the equalities are homogeneous, the margin of column g becomes root[g]
    if isinstance(solver, str) and solver.upper() == "ADMM":
        if solver_options:
            raise TypeError(f"solver options {sorted(solver_options)} are cvxpy's; ADMM takes tol and max_iter")
        # one SVD of a V x m matrix per step: with one BLAS thread 1.2 s at V = 104 and 182 supports,
        # with two threads on a loaded two-core machine 15 s
        with single_threaded_blas():
            X = _admm_nuclear(Su, root, tol, max_iter)
    else:
        solver = check_solver(solver)
        X = cp.Variable(Su.shape)
        prob = cp.Problem(cp.Minimize(cp.normNuc(X)), _margin_constraints(X, Su, margin=root))
        _solve(prob, solver, "NTP-SVM*", **solver_options)
        X = X.value
    # undo the scaling, then give every context the column of its support
    return (X / root)[:, inverse]


def logit_path(P, pi, lam, solver="CLARABEL"):
    r"""The nuclear-norm-regularised cross-entropy in logit space: the UFM's regularisation path.

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
        cvxpy solver (Clarabel: exponential cone and SDP, about 1e-8 accurate).

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
    check_solver(solver)
    L = cp.Variable(P.shape)
    # CE(L) = sum_j pi_j (logsumexp(L_j) - p_j . L_j): exponential cones; the nuclear norm: an SDP
    ce = cp.sum(cp.multiply(pi, cp.log_sum_exp(L, axis=0))) - cp.sum(cp.multiply(P * pi, L))
    prob = cp.Problem(cp.Minimize(ce + lam * cp.normNuc(L)))
    _solve(prob, solver, "logit path")
    return L.value
