r"""Estimators of the planted matrix: GAMP-RIE and minimal nuclear norm.

Both read the data through the design matrix :math:`F\in\mathbb R^{n\times dL}` whose row
:math:`\mu` is :math:`\operatorname{vec}(X_\mu^\top)/\sqrt{dL}`, so that
:math:`y=F\operatorname{vec}(S^*)+\sqrt\Delta\,\xi`. Estimates have shape ``(d, L)``; errors are
:math:`\|\hat S-S^*\|_F^2/(dL)`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from .._validation import (ConvergenceError, check_array, check_choice, check_nonnegative,
                           check_positive, check_positive_int, check_size)
from ._model import design
from ._spectrum import canonical, mmse_value, rie_denoise
from ._theory import gamp_state_evolution


def _check_data(X, y):
    """X of shape (n, L, d) and y of shape (n,)."""
    X = check_array(X, "X", ndim=3)
    y = check_array(y, "y", ndim=1)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"y must have length n = X.shape[0] = {X.shape[0]}, got {y.shape[0]}")
    return X, y


@dataclass
class GampRieResult:
    """Output of :func:`gamp_rie`.

    Fields: ``S`` (the final estimate; the last finite iterate after a divergence), ``mse``
    (:math:`\\|\\hat S^t-S^*\\|_F^2/(dL)` for :math:`t=0,1,\\dots`, or ``None`` without ``S_true``),
    ``se_mse`` (its state-evolution prediction :math:`V^t`), ``zeta`` (the effective noise
    :math:`1/A^t` of each denoising step), ``converged`` and ``diverged``.
    """

    S: np.ndarray
    mse: np.ndarray | None
    se_mse: np.ndarray
    zeta: np.ndarray
    converged: bool
    diverged: bool


def gamp_rie(X, y, rho, delta, S_true=None, tol=1e-8, max_iter=200, damping=0.2,
             precision="theory", on_failure="raise"):
    r"""GAMP with the rectangular RIE as denoiser, for the BSR model.

    With :math:`F` the design matrix, start from :math:`\hat S^0=0`, :math:`V^0=1`,
    :math:`g^{-1}=0` and iterate

    .. math::

        \omega^t=F\operatorname{vec}\hat S^t-V^tg^{t-1},\quad
        g^t=\frac{y-\omega^t}{\Delta+V^t},\quad
        R^t=\hat S^t+\zeta_t\operatorname{mat}(F^\top g^t),

        \hat S^{t+1}=\mathrm{RIE}(R^t;\zeta_t),\qquad V^{t+1}=\mathrm{mmse}_{\beta,\rho}(\zeta_t),

    with :math:`\zeta_t=1/A^t` and :math:`A^t=\alpha/(\Delta+V^t)` (or :math:`\|g^t\|^2/(dL)`).
    :math:`R^t` behaves like :math:`S^*+\sqrt{\zeta_t}Z`; the RIE is :func:`rie_denoise` and
    :math:`\mathrm{mmse}` is :func:`denoising_mmse`. Stops when
    :math:`\|\hat S^{t+1}-\hat S^t\|_F^2/(dL)<` ``tol``, or, for :math:`\Delta=0`, when
    :math:`\zeta_t<10^{-9}` (perfect recovery, :math:`\hat S=R^t`). A run is declared diverged
    when an iterate has :math:`\|\hat S^t\|_F^2/(dL)>10` (ten times the prior's mean square: a
    posterior mean is never that large) or a non-finite value.

    Parameters
    ----------
    X : array_like, shape (n, L, d)
        Token sequences.
    y : array_like, shape (n,)
        Labels.
    rho : float
        Rank ratio :math:`r/d` of the prior.
    delta : float
        Noise variance :math:`\Delta\ge0`.
    S_true : array_like, shape (d, L), optional
        Planted matrix; when given, the error of every iterate is recorded.
    tol : float
        Tolerance of the stopping rule.
    max_iter : int
        Maximum number of iterations.
    damping : float in [0, 1)
        :math:`\omega^t\leftarrow(1-\text{damping})\,\omega^t+\text{damping}\,\omega^{t-1}`, and the
        same for :math:`V^t`; 0 is the plain algorithm. Fixed points do not depend on it.
    precision : {"theory", "empirical"}
        :math:`A^t=\alpha/(\Delta+V^t)` or :math:`\|g^t\|^2/(dL)` (the authors' choice).
    on_failure : {"raise", "warn", "flag"}
        On divergence or when ``max_iter`` is reached: raise :class:`~seqrmt.ConvergenceError`,
        warn, or only flag the result.

    Returns
    -------
    GampRieResult
        Fields ``S``, ``mse``, ``se_mse``, ``zeta``, ``converged``, ``diverged``.

    Examples
    --------
    >>> from seqrmt.bsr import sample_bsr
    >>> data = sample_bsr(360, 20, 20, 4, 0.0, rng=1)       # alpha = 0.9 > alpha_PR = 0.36
    >>> res = gamp_rie(data.X, data.y, 0.2, 0.0, S_true=data.S)
    >>> res.converged, bool(res.mse[-1] < 1e-6)
    (True, True)
    """
    X, y = _check_data(X, y)
    n, L, d = X.shape
    rho = check_positive(rho, "rho")
    delta = check_nonnegative(delta, "delta")
    tol = check_positive(tol, "tol")
    max_iter = check_positive_int(max_iter, "max_iter")
    damping = check_nonnegative(damping, "damping")
    if damping >= 1:
        raise ValueError(f"damping must lie in [0, 1), got {damping}")
    check_choice(precision, "precision", ("theory", "empirical"))
    check_choice(on_failure, "on_failure", ("raise", "warn", "flag"))
    if S_true is not None:
        S_true = check_array(S_true, "S_true", shape=(d, L))
    beta, rho_c = canonical(L / d, rho)
    # y = F vec(S*) + noise: GAMP for a generalised linear model with the RIE as denoiser
    alpha, F = n / (d * L), design(X)
    S, V, g = np.zeros((d, L)), 1.0, np.zeros(n)  # g^{-1} = 0: no Onsager term at t = 0
    omega_old = V_old = None
    mse = None if S_true is None else [np.mean(S_true**2)]
    zetas, converged, diverged = [], False, False
    for _ in range(max_iter):
        omega = F @ S.ravel() - V * g  # Onsager: removes the correlation of F s_t with the noise
        if damping > 0 and omega_old is not None:
            # damping mixes with the previous step: same fixed points, a slower, stabler path
            omega = (1 - damping) * omega + damping * omega_old
            V = (1 - damping) * V + damping * V_old
        omega_old, V_old = omega, V
        # residuals scaled by their predicted variance Delta + V (state evolution)
        g = (y - omega) / (delta + V)
        # 1/A: the variance of the effective observation R = S* + sqrt(zeta) Z
        zeta = (delta + V) / alpha if precision == "theory" else d * L / np.dot(g, g)
        if not np.isfinite(zeta):
            diverged = True
            break
        zetas.append(zeta)
        R = S + zeta * (F.T @ g).reshape(d, L)  # back-projection of the residuals
        perfect = delta == 0 and zeta < 1e-9  # R is S* itself to numerical precision
        S_new = R if perfect else rie_denoise(R, zeta, rho)
        # the denoiser's predicted error is the next variance (clipped to [0, 1]: the prior's)
        V = 0.0 if perfect else min(max(mmse_value(beta, rho_c, zeta), 0.0), 1.0)
        norm2 = np.mean(S_new**2)
        if not norm2 <= 10.0:  # also catches NaN
            diverged = True
            break
        change, S = np.mean((S_new - S) ** 2), S_new
        if mse is not None:
            mse.append(np.mean((S - S_true) ** 2))
        if perfect or change < tol:
            converged = True
            break
    if not converged and on_failure != "flag":
        what = "GAMP-RIE diverged" if diverged else f"GAMP-RIE did not reach tol in {max_iter} steps"
        if on_failure == "raise":
            raise ConvergenceError(what + " (try damping > 0, or alpha >= 0.1)")
        warnings.warn(what, RuntimeWarning, stacklevel=2)
    # state evolution over as many steps as were run, for comparison with the iterates
    n_rec = len(zetas) if mse is None else len(mse) - 1
    se = gamp_state_evolution(alpha, L / d, rho, delta, max(n_rec, 1))[: n_rec + 1]
    return GampRieResult(S=S, mse=None if mse is None else np.array(mse), se_mse=se,
                         zeta=np.array(zetas), converged=converged, diverged=diverged)


def min_nuclear_norm(X, y, solver=None, **solver_options):
    r"""Minimal nuclear-norm estimator (MNNE) under the noiseless constraints.

    Solves :math:`\min\|S\|_*` subject to :math:`F\operatorname{vec}(S)=y`, i.e.
    :math:`\operatorname{Tr}[X_\mu S]/\sqrt{dL}=y_\mu` for every :math:`\mu`, written as one
    matrix constraint (a semidefinite program, solved by cvxpy).

    Parameters
    ----------
    X, y
        Token sequences (n, L, d) and labels (n,), as in :func:`gamp_rie`.
    solver : {"SCS", "CLARABEL"}, optional
        Conic solver used by cvxpy. ``None``: SCS (the authors' first-order solver) where cvxpy has
        it, else Clarabel (Pyodide's cvxpy, in the browser, has Clarabel only).
    **solver_options
        Passed to :meth:`cvxpy.Problem.solve`.

    Returns
    -------
    ndarray, shape (d, L)
        The minimiser.

    Raises
    ------
    RuntimeError
        When the solver does not report an optimal solution (the message gives its status).

    Examples
    --------
    >>> from seqrmt.bsr import sample_bsr
    >>> data = sample_bsr(140, 10, 10, 1, 0.0, rng=0)   # alpha = 1.4, well above the threshold
    >>> S = min_nuclear_norm(data.X, data.y)
    >>> round(float(np.mean((S - data.S) ** 2)), 4)
    0.0
    """
    import cvxpy as cp  # optional dependency, needed only here

    X, y = _check_data(X, y)
    n, L, d = X.shape
    if solver is None:
        solver = "SCS" if "SCS" in cp.installed_solvers() else "CLARABEL"
    check_choice(solver, "solver", ("CLARABEL", "SCS"))
    # column-major vec of S (d, L) has index l d + i, matching X[mu, l, i] flattened row-major
    F = X.reshape(n, L * d) / np.sqrt(d * L)
    if solver == "CLARABEL" and n >= d * L and np.linalg.matrix_rank(F) == d * L:
        # the constraints alone fix S (alpha >= 1): a feasible set of one point leaves an
        # interior-point solver no interior to work in, so solve F vec(S) = y directly
        return np.linalg.lstsq(F, y, rcond=None)[0].reshape(L, d).T
    S = cp.Variable((d, L))
    # cvxpy turns min |S|_* into a semidefinite program (prop-p2-nuclear-dual of Chapter 2.5)
    problem = cp.Problem(cp.Minimize(cp.normNuc(S)), [F @ cp.vec(S, order="F") == y])
    try:
        problem.solve(solver=solver, **solver_options)
    except cp.error.SolverError as exc:
        raise RuntimeError(f"min_nuclear_norm: solver {solver} failed ({exc})") from exc
    if problem.status not in ("optimal", "optimal_inaccurate") or S.value is None:
        raise RuntimeError(f"min_nuclear_norm: solver {solver} returned status {problem.status!r}")
    return np.asarray(S.value)
