r"""Algorithms for bilinear sequence regression: GAMP-RIE, nuclear norm, gradient descent.

Three estimators of the planted matrix :math:`S^*\in\mathbb R^{d\times L}` from the data
:math:`(X_\mu,y_\mu)_{\mu\le n}` of :mod:`seqrmt.bsr.model`:

* :func:`gamp_rie` -- generalised approximate message passing with the rectangular
  rotationally-invariant estimator (RIE) as denoiser, and its state evolution
  :math:`V^{t+1}=\mathrm{mmse}_{\beta,\rho}\big((\Delta+V^t)/\alpha\big)`, :math:`V^0=1`;
* :func:`min_nuclear_norm` -- :math:`\arg\min\|S\|_*` under the :math:`n` linear constraints
  :math:`\operatorname{Tr}[X_\mu S]/\sqrt{dL}=y_\mu` (cvxpy);
* :func:`gd_factorized` -- full-batch gradient descent on the factorised loss
  :math:`\frac14\sum_\mu(\hat y_\mu-y_\mu)^2`, :math:`S=UV^\top/\sqrt r`, for a batch of students
  trained on the same data (torch).

Conventions: ``X`` has shape ``(n, L, d)``, ``y`` shape ``(n,)``, estimates shape ``(d, L)``;
errors are :math:`\|\hat S-S^*\|_F^2/(dL)` (the entries of :math:`S^*` have unit variance).
The linear map is written with the design matrix :math:`F\in\mathbb R^{n\times dL}` whose row
:math:`\mu` is :math:`\operatorname{vec}(X_\mu^\top)/\sqrt{dL}`, so that
:math:`y=F\operatorname{vec}(S^*)+\text{noise}`.

Used in: Chapter 2 (GAMP-RIE, nuclear-norm minimisation, gradient descent).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from .._validation import (
    check_array,
    check_nonnegative,
    check_positive,
    check_positive_int,
    check_size,
)
from .._validation import check_seed
from ..ensemble import run_ensemble
from .._validation import ConvergenceError, as_generator
from ..stats import mean_se
from ..runtime import torch_device
from .model import bilinear_readout, sample_bsr

__all__ = [
    "design_matrix",
    "GampRieResult",
    "gamp_rie",
    "gamp_state_evolution",
    "min_nuclear_norm",
    "GDResult",
    "gd_factorized",
    "gd_on_independent_data",
    "gd_recovery_summary",
    "average_of_first_k_error",
    "interpolator_comparison",
]


def _check_data(X, y):
    X = check_array(X, "X", ndim=3)
    n, L, d = X.shape
    y = check_array(y, "y", ndim=1)
    if y.shape[0] != n:
        raise ValueError(f"y must have length n = X.shape[0] = {n}, got {y.shape[0]}")
    return X, y


def _check_rho(rho, d, L):
    rho = check_positive(rho, "rho")
    r = rho * d
    if abs(r - round(r)) > 1e-8 * max(1.0, r) or round(r) < 1:
        raise ValueError(f"rho * d must be a positive integer (the rank), got rho = {rho}, d = {d}")
    return rho, int(round(r))


def design_matrix(X):
    r"""Design matrix :math:`F` with rows :math:`\operatorname{vec}(X_\mu^\top)/\sqrt{dL}`.

    ``F @ S.ravel()`` equals :func:`seqrmt.bsr.model.bilinear_readout` ``(X, S)`` for ``S`` of shape
    ``(d, L)`` (row-major ``ravel``).

    Parameters
    ----------
    X : array_like, shape (n, L, d)
        Token sequences.

    Returns
    -------
    ndarray, shape (n, d * L)

    Examples
    --------
    >>> from seqrmt.bsr import sample_bsr
    >>> data = sample_bsr(30, 4, 3, 1, 0.0, rng=0)
    >>> bool(np.allclose(design_matrix(data.X) @ data.S.ravel(), data.y))
    True
    """
    X = check_array(X, "X", ndim=3)
    n, L, d = X.shape
    return np.ascontiguousarray(X.transpose(0, 2, 1).reshape(n, d * L)) / np.sqrt(d * L)


# --------------------------------------------------------------------------- GAMP-RIE


@dataclass
class GampRieResult:
    """Output of :func:`gamp_rie`.

    Attributes
    ----------
    S : ndarray, shape (d, L)
        Final estimate (the last finite iterate if the run diverged).
    mse : ndarray or None
        :math:`\\|\\hat S^t-S^*\\|_F^2/(dL)` for :math:`t=0,1,\\dots` (``mse[0]=1`` up to
        finite size, for :math:`\\hat S^0=0`); ``None`` when ``S_true`` was not given.
    se_mse : ndarray
        State-evolution prediction :math:`V^t` of the same quantity, same length.
    zeta : ndarray
        Effective noise :math:`1/A^t` seen by the denoiser at each iteration.
    se_zeta : ndarray
        Its state-evolution prediction :math:`(\\Delta+V^t)/\\alpha`.
    n_iter : int
        Number of denoising steps performed.
    converged : bool
        Whether the stopping rule was met.
    diverged : bool
        Whether the iteration blew up (non-finite or exploding iterates).
    damping : float or None
        The damping of the run returned: ``damping``, or the entry of ``retry_damping`` after
        which no divergence occurred (the last one tried if every run diverged).
    """

    S: np.ndarray
    mse: np.ndarray | None
    se_mse: np.ndarray
    zeta: np.ndarray
    se_zeta: np.ndarray
    n_iter: int
    converged: bool
    diverged: bool
    damping: float | None = None


def _checked_mmse(beta, rho, zeta):
    """denoising_mmse with a sanity check: 0 <= mmse <= min(1, zeta) up to quadrature error."""
    from .free_probability import denoising_mmse

    v = float(denoising_mmse(beta, rho, zeta))
    if not np.isfinite(v) or v < -1e-4 or v > min(1.0, zeta) + 1e-4:
        raise RuntimeError(
            f"denoising_mmse(beta={beta:g}, rho={rho:g}, zeta={zeta:.6g}) returned {v:.6g}, "
            "outside [0, min(1, zeta)]")
    return max(v, 0.0)


def gamp_state_evolution(alpha, beta, rho, delta, n_iter, v0=1.0):
    r"""State evolution of GAMP-RIE: :math:`V^{t+1}=\mathrm{mmse}_{\beta,\rho}((\Delta+V^t)/\alpha)`.

    Parameters
    ----------
    alpha, beta, rho : float
        Sample ratio :math:`n/(dL)`, aspect ratio :math:`L/d` and rank ratio :math:`r/d`
        (any :math:`\beta>0`; :math:`\beta<1` is mapped to :math:`(1/\beta,\rho/\beta)`).
    delta : float
        Noise variance :math:`\Delta\ge0`.
    n_iter : int
        Number of iterations.
    v0 : float
        Initial variance (1 for :math:`\hat S^0=0`).

    Returns
    -------
    ndarray, shape (n_iter + 1,)
        :math:`V^0,\dots,V^{n_{\rm iter}}`, the predicted MSE of the iterates.

    Examples
    --------
    >>> v = gamp_state_evolution(0.5, 1.0, 0.5, 0.0, 30)
    >>> round(float(v[-1]), 3)  # the Bayes-optimal MMSE 0.3515 (largest fixed point)
    0.351
    """
    alpha = check_positive(alpha, "alpha")
    beta = check_positive(beta, "beta")
    rho = check_positive(rho, "rho")
    delta = check_nonnegative(delta, "delta")
    n_iter = check_size(n_iter, "n_iter")
    v0 = check_nonnegative(v0, "v0")
    v = [v0]
    for _ in range(n_iter):
        zeta = (delta + v[-1]) / alpha
        v.append(0.0 if zeta < 1e-10 else _checked_mmse(beta, rho, zeta))
    return np.array(v)


def gamp_rie(X, y, rho, delta, S_true=None, tol=1e-8, max_iter=200, damping=0.2,
             precision="theory", on_failure="raise", blowup=1e6, norm_bound=10.0,
             retry_damping=()):
    r"""GAMP with the rectangular RIE denoiser (Bayes-optimal for the BSR model).

    With :math:`F` the :func:`design_matrix`, :math:`\hat S^0=0`, :math:`\hat c^0=1`, :math:`g^{-1}=0`,
    iterate for :math:`t=0,1,\dots`:

    .. math::

        V^t=\hat c^t,\quad \omega^t=F\operatorname{vec}\hat S^t-V^tg^{t-1},\quad
        g^t=\frac{y-\omega^t}{\Delta+V^t},\quad A^t=\frac{\alpha}{\Delta+V^t}
        \ \text{or}\ \frac{\|g^t\|^2}{dL},

        R^t=\hat S^t+\frac{1}{A^t}\operatorname{mat}(F^\top g^t),\quad
        \hat S^{t+1}=\mathrm{RIE}(R^t;\zeta=1/A^t),\quad \hat c^{t+1}=\mathrm{mmse}_{\beta,\rho}(1/A^t).

    :math:`R^t` behaves like :math:`S^*+\sqrt{1/A^t}\,Z`; the RIE is
    :func:`seqrmt.bsr.free_probability.rie_denoise` and the variance
    :func:`seqrmt.bsr.free_probability.denoising_mmse`.
    Stops when :math:`\|\hat S^{t+1}-\hat S^t\|_F^2/(dL)<` ``tol``, or, for :math:`\Delta=0`, when
    :math:`1/A^t<10^{-9}` (perfect recovery, :math:`\hat S=R^t`).

    Parameters
    ----------
    X : array_like, shape (n, L, d)
        Token sequences.
    y : array_like, shape (n,)
        Targets.
    rho : float
        Rank ratio :math:`r/d` of the prior (``rho * d`` must be an integer).
    delta : float
        Noise variance :math:`\Delta\ge0`.
    S_true : array_like, shape (d, L), optional
        Planted matrix; when given, the MSE of every iterate is recorded.
    tol : float
        Tolerance of the stopping rule.
    max_iter : int
        Maximum number of iterations.
    damping : float in [0, 1)
        Mix :math:`\omega^t` and :math:`V^t` with their previous values,
        ``new = (1 - damping) * new + damping * old``; 0 is the plain algorithm. At the sizes of
        the book (d <= 100) the plain iteration often ends on a period-2 cycle around its fixed
        point, and for Delta = 0 above the recovery threshold it can make 1/A collapse while the
        estimate is still wrong; the default 0.2 removed both in our runs. Fixed points do not
        depend on the damping.
    precision : {"theory", "empirical"}
        How :math:`A^t` (the precision of the effective observation :math:`R^t`) is computed:
        ``"theory"``, :math:`\alpha/(\Delta+V^t)`; ``"empirical"``, :math:`\|g^t\|^2/(dL)` (the
        authors' ``AMP.jl``). Undamped, ``"theory"`` can diverge at the book's sizes; damped
        (default 0.2) it was the most reliable choice in our runs, in particular in the
        perfect-recovery phase, where ``"empirical"`` with damping stalls at errors of a few 1e-2.
    on_failure : {"raise", "warn", "flag"}
        On divergence or when ``max_iter`` is reached: raise
        :class:`~seqrmt.ConvergenceError`, or warn, or only flag the result
        (``converged=False``, and ``diverged=True`` after a blow-up; the estimate is then the last
        finite iterate).
    blowup : float
        Divergence is declared when :math:`\|\hat S^t\|_F^2/(dL)` or :math:`1/A^t` exceeds it.
    norm_bound : float
        Divergence is also declared when :math:`\|\hat S^t\|_F^2/(dL)` exceeds ``norm_bound``
        times the mean square of the prior (one): a posterior mean is never far larger than the
        signal, so an iterate ten times larger (the default) is a blow-up under way. Below the
        recovery threshold the damped iteration can still oscillate with a growing amplitude
        (at :math:`\alpha=0.15`, :math:`\rho=0.2`, :math:`d=40`, noiseless, about one data set in
        sixty in our runs); this catches it while the numbers are finite and moderate.
    retry_damping : sequence of float
        Dampings tried in turn, each from :math:`\hat S^0=0`, after a run diverges; the first
        run that does not diverge is returned (its damping in ``GampRieResult.damping``).
        Empty (the default): no retry. ``on_failure`` applies to the last run tried.

    Returns
    -------
    GampRieResult
        Estimate, per-iteration MSE, state-evolution predictions, iteration count, flags.

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
    rho, _ = _check_rho(rho, d, L)
    delta = check_nonnegative(delta, "delta")
    tol = check_positive(tol, "tol")
    max_iter = check_positive_int(max_iter, "max_iter")
    damping = check_nonnegative(damping, "damping")
    if damping >= 1:
        raise ValueError(f"damping must lie in [0, 1), got {damping}")
    if precision not in ("theory", "empirical"):
        raise ValueError(f"precision must be 'theory' or 'empirical', got {precision!r}")
    if on_failure not in ("raise", "warn", "flag"):
        raise ValueError(f"on_failure must be 'raise', 'warn' or 'flag', got {on_failure!r}")
    blowup = check_positive(blowup, "blowup")
    norm_bound = check_positive(norm_bound, "norm_bound")
    if isinstance(retry_damping, (str, bytes)) or not np.iterable(retry_damping):
        raise ValueError(f"retry_damping must be a sequence of numbers in [0, 1), got {retry_damping!r}")
    retries = [check_nonnegative(r, "retry_damping") for r in retry_damping]
    if any(r >= 1 for r in retries):
        raise ValueError(f"retry_damping must hold numbers in [0, 1), got {retry_damping!r}")
    if S_true is not None:
        S_true = check_array(S_true, "S_true", shape=(d, L))
    beta, alpha = L / d, n / (d * L)
    F = design_matrix(X)
    for damp in [damping, *retries]:
        S, mse, zetas, converged, diverged, message = _gamp_run(
            F, y, d, L, rho, delta, S_true, tol, max_iter, damp, precision, blowup, norm_bound)
        if not diverged:
            break
    n_iter = len(zetas)
    if diverged or not converged:
        what = f"GAMP-RIE diverged: {message}" if diverged else (
            f"GAMP-RIE did not reach tol = {tol:g} in max_iter = {max_iter} iterations")
        if on_failure == "raise":
            raise ConvergenceError(what + " (try damping > 0, retry_damping, or alpha >= 0.1)")
        if on_failure == "warn":
            warnings.warn(what, RuntimeWarning, stacklevel=2)
    n_rec = len(mse) - 1 if S_true is not None else len(zetas)
    se = gamp_state_evolution(alpha, beta, rho, delta, max(n_rec, 1))[: n_rec + 1]
    return GampRieResult(
        S=S,
        mse=None if S_true is None else np.array(mse),
        se_mse=se,
        zeta=np.array(zetas),
        se_zeta=(delta + se[: len(zetas)]) / alpha,
        n_iter=n_iter,
        converged=converged,
        diverged=diverged,
        damping=float(damp),
    )


def _gamp_run(F, y, d, L, rho, delta, S_true, tol, max_iter, damping, precision, blowup,
              norm_bound):
    """One run of :func:`gamp_rie` from S = 0: (S, mse list, zetas, converged, diverged, message)."""
    from .free_probability import rie_denoise

    n = F.shape[0]
    beta, alpha = L / d, n / (d * L)
    dl = d * L
    S = np.zeros((d, L))
    c, g_prev = 1.0, np.zeros(n)
    omega_old = V_old = None
    mse = [] if S_true is None else [np.sum((S - S_true) ** 2) / dl]
    zetas = []
    converged = diverged = False
    message = ""
    for t in range(1, max_iter + 1):
        V = c
        omega = F @ S.ravel() - V * g_prev
        if damping > 0 and omega_old is not None:
            omega = (1 - damping) * omega + damping * omega_old
            V = (1 - damping) * V + damping * V_old
        omega_old, V_old = omega, V
        g = (y - omega) / (delta + V)
        A = np.dot(g, g) / dl if precision == "empirical" else alpha / (delta + V)
        if not np.isfinite(A) or not np.all(np.isfinite(g)):
            diverged, message = True, f"non-finite residuals at iteration {t}"
            break
        zeta = 1.0 / A if A > 0 else np.inf
        if not np.isfinite(zeta) or zeta > blowup:
            diverged, message = True, f"effective noise 1/A = {zeta:.3g} at iteration {t}"
            break
        zetas.append(zeta)
        R = S + (F.T @ g).reshape(d, L) / A
        if delta == 0 and zeta < 1e-9:
            S_new, converged = R, True
        else:
            S_new = rie_denoise(R, zeta, rho)
            c = _checked_mmse(beta, rho, zeta)
        change = np.sum((S_new - S) ** 2) / dl
        norm2 = np.sum(S_new**2) / dl if np.all(np.isfinite(S_new)) else np.inf
        if norm2 > min(blowup, norm_bound):
            diverged = True
            message = (f"iterate norm exploded at iteration {t}" if norm2 > blowup else
                       f"|S|^2 / (dL) = {norm2:.3g} > norm_bound = {norm_bound:g} at iteration {t}")
            break
        S, g_prev = S_new, g
        if S_true is not None:
            mse.append(np.sum((S - S_true) ** 2) / dl)
        if converged or change < tol:
            converged = True
            break
    return S, mse, zetas, converged, diverged, message


# --------------------------------------------------------------------------- nuclear norm


def min_nuclear_norm(X, y, solver=None, **solver_options):
    r"""Minimal nuclear-norm estimator (MNNE) under the noiseless constraints.

    Solves :math:`\min\|S\|_*` subject to :math:`F\operatorname{vec}(S)=y`, i.e.
    :math:`\operatorname{Tr}[X_\mu S]/\sqrt{dL}=y_\mu` for every :math:`\mu`, written as one
    matrix constraint (a semidefinite program, solved by cvxpy).

    Parameters
    ----------
    X : array_like, shape (n, L, d)
        Token sequences.
    y : array_like, shape (n,)
        Targets.
    solver : {"SCS", "CLARABEL"}, optional
        Conic solver used by cvxpy. ``None``: SCS where cvxpy has it, else Clarabel (Pyodide's
        cvxpy, in the browser, has Clarabel only).
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
    import cvxpy as cp

    X, y = _check_data(X, y)
    n, L, d = X.shape
    if solver is None:
        # SCS (first order) is the authors' solver; Clarabel (interior point) where SCS is absent
        solver = "SCS" if "SCS" in cp.installed_solvers() else "CLARABEL"
    if solver not in ("CLARABEL", "SCS"):
        raise ValueError(f"solver must be 'CLARABEL' or 'SCS', got {solver!r}")
    # Column-major vec of S (d, L) has index l * d + i, matching X[mu, l, i] flattened.
    F = X.reshape(n, L * d) / np.sqrt(d * L)
    if solver == "CLARABEL" and n >= d * L and np.linalg.matrix_rank(F) == d * L:
        # The constraints alone fix S (alpha >= 1): the feasible set is one point, which leaves
        # an interior-point solver (Clarabel) no interior to work in; solve F vec(S) = y directly.
        return np.linalg.lstsq(F, y, rcond=None)[0].reshape(L, d).T
    S = cp.Variable((d, L))
    problem = cp.Problem(cp.Minimize(cp.normNuc(S)), [F @ cp.vec(S, order="F") == y])
    try:
        problem.solve(solver=solver, **solver_options)
    except cp.error.SolverError as exc:
        raise RuntimeError(f"min_nuclear_norm: solver {solver} failed ({exc})") from exc
    if problem.status not in ("optimal", "optimal_inaccurate") or S.value is None:
        raise RuntimeError(f"min_nuclear_norm: solver {solver} returned status {problem.status!r}")
    return np.asarray(S.value)


# --------------------------------------------------------------------------- gradient descent


@dataclass
class GDResult:
    """Output of :func:`gd_factorized`.

    Attributes
    ----------
    S : ndarray, shape (K, d, L)
        Final matrices :math:`U_kV_k^\\top/\\sqrt r` of the ``K`` students.
    S_avg : ndarray, shape (d, L)
        Their average (averaged GD averages the matrices :math:`S`, not the factors).
    error : ndarray (K,) or None
        :math:`\\|S_k-S^*\\|_F^2/(dL)` per student (``None`` without ``S_true``).
    error_avg : float or None
        Same for ``S_avg``.
    train_mse : ndarray, shape (K,)
        Final training error :math:`\\frac1n\\sum_\\mu(\\hat y_\\mu-y_\\mu)^2` per student.
    steps : ndarray, shape (T,)
        Steps at which the history was recorded.
    error_history, train_history : ndarray, shape (T, K)
        Error (NaN without ``S_true``) and training error of each student at those steps.
    error_avg_history : ndarray, shape (T,)
        Error of the average at those steps.
    n_steps : int
        Number of steps performed.
    converged : bool
        Whether every student reached ``train_mse < tol`` before ``max_steps``.
    """

    S: np.ndarray
    S_avg: np.ndarray
    error: np.ndarray | None
    error_avg: float | None
    train_mse: np.ndarray
    steps: np.ndarray
    error_history: np.ndarray
    error_avg_history: np.ndarray
    train_history: np.ndarray
    n_steps: int
    converged: bool


def gd_factorized(X, y, r, n_students=1, init="prior", init_std=1e-4, lr=0.1, max_steps=5000,
                  tol=1e-10, S_true=None, record_every=100, rng=None, device="cpu",
                  dtype="float64"):
    r"""Full-batch gradient descent on the factorised BSR loss, for a batch of students.

    Each student :math:`k` holds :math:`U_k\in\mathbb R^{d\times r}`, :math:`V_k\in\mathbb R^{L\times r}`,
    :math:`S_k=U_kV_k^\top/\sqrt r`, and descends the **sum** loss
    :math:`\mathcal L=\frac14\sum_\mu(\langle F_\mu,\operatorname{vec}S_k\rangle-y_\mu)^2` with the gradients

    .. math::

        G_k=\partial_S\mathcal L=\tfrac12\operatorname{mat}\big(F^\top(F\operatorname{vec}S_k-y)\big),\qquad
        \partial_{U}\mathcal L=G_kV_k/\sqrt r,\qquad \partial_{V}\mathcal L=G_k^\top U_k/\sqrt r .

    All students share the data and are updated together (one matrix product per step).

    Parameters
    ----------
    X : array_like, shape (n, L, d)
        Token sequences.
    y : array_like, shape (n,)
        Targets.
    r : int
        Rank of the students.
    n_students : int
        Number ``K`` of independently initialised students.
    init : {"prior", "small"}
        ``"prior"``: entries of :math:`U,V` iid :math:`N(0,1)` (a draw from the prior);
        ``"small"``: iid :math:`N(0,\sigma^2)` with :math:`\sigma=` ``init_std``.
    init_std : float
        Standard deviation of the small initialisation.
    lr : float
        Learning rate (for the sum loss above).
    max_steps : int
        Maximum number of steps.
    tol : float
        Stop when every student's training error :math:`\frac1n\sum_\mu(\hat y_\mu-y_\mu)^2` is below it.
    S_true : array_like, shape (d, L), optional
        Planted matrix, for the errors.
    record_every : int
        Record the history every this many steps (and at the last step).
    rng : int or numpy.random.Generator, optional
        Source of randomness for the initialisation.
    device : str or torch.device or None
        Torch device (``None``: CUDA when available; default CPU).
    dtype : {"float64", "float32"}
        Floating-point precision.

    Returns
    -------
    GDResult

    Raises
    ------
    ConvergenceError
        When the training error becomes non-finite or explodes (learning rate too large).

    Examples
    --------
    >>> from seqrmt.bsr import sample_bsr
    >>> data = sample_bsr(300, 10, 10, 2, 0.0, rng=0)             # alpha = 3, rank 2
    >>> res = gd_factorized(data.X, data.y, 2, n_students=2, init="small", max_steps=3000,
    ...                     S_true=data.S, rng=1)
    >>> res.converged, bool(res.error.max() < 1e-6)
    (True, True)
    """
    import torch

    X, y = _check_data(X, y)
    n, L, d = X.shape
    r = check_size(r, "r")
    K = check_size(n_students, "n_students")
    if init not in ("prior", "small"):
        raise ValueError(f"init must be 'prior' or 'small', got {init!r}")
    init_std = check_positive(init_std, "init_std")
    lr = check_positive(lr, "lr")
    max_steps = check_size(max_steps, "max_steps")
    tol = check_positive(tol, "tol")
    record_every = check_positive_int(record_every, "record_every")
    if S_true is not None:
        S_true = check_array(S_true, "S_true", shape=(d, L))
    if dtype not in ("float64", "float32"):
        raise ValueError(f"dtype must be 'float64' or 'float32', got {dtype!r}")
    rng = as_generator(rng)
    dev = torch_device(device)
    tdt = getattr(torch, dtype)

    std = 1.0 if init == "prior" else init_std
    U0 = std * rng.standard_normal((K, d, r))
    V0 = std * rng.standard_normal((K, L, r))
    F = torch.as_tensor(design_matrix(X), dtype=tdt, device=dev)  # (n, dL)
    yt = torch.as_tensor(y, dtype=tdt, device=dev)
    U = torch.as_tensor(U0, dtype=tdt, device=dev)
    V = torch.as_tensor(V0, dtype=tdt, device=dev)
    St = None if S_true is None else torch.as_tensor(S_true, dtype=tdt, device=dev)
    sr = np.sqrt(r)
    steps, err_hist, avg_hist, train_hist = [], [], [], []
    initial = None

    def record(step, S, res):
        train = (res**2).mean(dim=1)
        steps.append(step)
        train_hist.append(train.cpu().numpy())
        if St is None:
            err_hist.append(np.full(K, np.nan))
            avg_hist.append(np.nan)
        else:
            err_hist.append(((S - St) ** 2).mean(dim=(1, 2)).cpu().numpy())
            avg_hist.append(float(((S.mean(dim=0) - St) ** 2).mean()))

    converged = False
    step = 0
    with torch.no_grad():
        for step in range(max_steps + 1):
            S = U @ V.transpose(1, 2) / sr  # (K, d, L)
            res = S.reshape(K, d * L) @ F.T - yt  # (K, n)
            train = (res**2).mean(dim=1)
            if initial is None:
                initial = float(train.max())
            worst = float(train.max())
            if not np.isfinite(worst) or worst > 1e6 * max(initial, 1.0):
                raise ConvergenceError(
                    f"gd_factorized diverged at step {step} (training error {worst:.3g}); "
                    f"lower lr = {lr:g}")
            done = worst < tol
            if step % record_every == 0 or done or step == max_steps:
                record(step, S, res)
            if done:
                converged = True
                break
            if step == max_steps:
                break
            G = 0.5 * (res @ F).reshape(K, d, L)
            gU = G @ V / sr
            gV = G.transpose(1, 2) @ U / sr
            U -= lr * gU
            V -= lr * gV
    S_np = S.cpu().numpy()
    S_avg = S_np.mean(axis=0)
    return GDResult(
        S=S_np,
        S_avg=S_avg,
        error=None if S_true is None else err_hist[-1],
        error_avg=None if S_true is None else avg_hist[-1],
        train_mse=train_hist[-1],
        steps=np.array(steps),
        error_history=np.array(err_hist),
        error_avg_history=np.array(avg_hist),
        train_history=np.array(train_hist),
        n_steps=step,
        converged=converged,
    )


# --------------------------------------------------------------------------- experiment drivers


def gd_on_independent_data(n_sets, n, d, L, r, delta=0.0, student_rank=None, return_data=False,
                           rng=None, jobs=None, **gd_options):
    r"""Run :func:`gd_factorized` on ``n_sets`` independent BSR data sets.

    Data set ``i`` has its own generator, the ``i``-th child of ``rng``
    (:func:`seqrmt.ensemble.run_ensemble`): it draws :math:`(X_\mu,y_\mu)_{\mu\le n}` with
    :func:`~seqrmt.bsr.model.sample_bsr` (teacher of rank ``r``), then the initialisations of the
    students trained on it with ``S_true`` set to the planted matrix. The result does not depend
    on ``jobs``.

    Parameters
    ----------
    n_sets : int
        Number of independent data sets.
    n, d, L, r : int
        Number of samples, dimensions and the teacher's rank.
    delta : float
        Noise variance :math:`\Delta\ge0`.
    student_rank : int, optional
        Rank of the students (default ``r``, the teacher's).
    return_data : bool
        Also return the data sets.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None
        Root of the data sets' generators (see :func:`seqrmt.ensemble.spawn_generators`).
    jobs : int or None
        Workers (see :func:`seqrmt.ensemble.n_jobs`).
    **gd_options
        Further keyword arguments of :func:`gd_factorized` (``n_students``, ``init``, ``lr``, ...).

    Returns
    -------
    list of GDResult, or list of (BSRData, GDResult) if ``return_data``
        One entry per data set.

    Examples
    --------
    >>> runs = gd_on_independent_data(2, 300, 10, 10, 2, init="small", max_steps=3000, rng=2)
    >>> [bool(res.error[0] < 1e-6) for res in runs]  # alpha = 3: both recover (not every set does)
    [True, True]
    """
    n_sets = check_size(n_sets, "n_sets")
    n, d, L, r = (check_size(v, k) for v, k in ((n, "n"), (d, "d"), (L, "L"), (r, "r")))
    delta = check_nonnegative(delta, "delta")
    rs = r if student_rank is None else check_size(student_rank, "student_rank")
    if not isinstance(return_data, (bool, np.bool_)):
        raise ValueError(f"return_data must be a bool, got {return_data!r}")
    for key in ("X", "y", "r", "S_true", "rng"):
        if key in gd_options:
            raise ValueError(f"gd_options must not set {key!r}: it is set for each data set")
    return run_ensemble(_gd_data_set, n_sets, check_seed(rng), args=(n, d, L, r, delta, rs, return_data),
                        kwargs=gd_options, jobs=jobs, desc="data sets")


def _gd_data_set(rng, n, d, L, r, delta, rs, return_data, **gd_options):
    """One data set of :func:`gd_on_independent_data`: the data, then the students, from ``rng``."""
    data = sample_bsr(n, d, L, r, delta, rng)
    res = gd_factorized(data.X, data.y, rs, S_true=data.S, rng=rng, **gd_options)
    return (data, res) if return_data else res


def _check_results(results, name="results"):
    results = list(results) if isinstance(results, (list, tuple)) else None
    if not results or not all(isinstance(res, GDResult) for res in results):
        raise ValueError(f"{name} must be a non-empty list of GDResult")
    if any(res.error is None for res in results):
        raise ValueError(f"{name} must hold errors: train with S_true")
    if len({res.error.shape for res in results}) != 1:
        raise ValueError(f"{name} must have the same number of students on every data set")
    return results


def gd_recovery_summary(results, fit_tol=1e-5, exact_tol=1e-3):
    r"""Error and recovery counts of students trained on independent data sets.

    Parameters
    ----------
    results : list of GDResult
        One result (``K`` students, trained with ``S_true``) per data set, e.g. from
        :func:`gd_on_independent_data`.
    fit_tol : float
        A student *fits the data* when its training error is below ``fit_tol``.
    exact_tol : float
        A student *has found* :math:`S^*` when its error is below ``exact_tol``.

    Returns
    -------
    dict
        ``error``: mean error over all students; ``se``: standard error of that mean, from the
        spread of the per-data-set means (the data sets are independent, the students of one data
        set are not); ``exact``: number of students that fit the data and found :math:`S^*`;
        ``fit_not_exact``: that fit the data without finding it; ``not_fit``: that do not fit the
        data; ``n_students``: total number. ``se`` is NaN for a single data set.

    Examples
    --------
    >>> runs = gd_on_independent_data(2, 300, 10, 10, 2, init="small", max_steps=3000, rng=2)
    >>> s = gd_recovery_summary(runs)
    >>> s["exact"], s["fit_not_exact"], s["not_fit"], s["n_students"]
    (2, 0, 0, 2)
    """
    results = _check_results(results)
    fit_tol = check_positive(fit_tol, "fit_tol")
    exact_tol = check_positive(exact_tol, "exact_tol")
    err = np.array([res.error for res in results])  # (data sets, students)
    fit = np.array([res.train_mse for res in results]) < fit_tol
    exact = err < exact_tol
    per_set = err.mean(axis=1)
    se = mean_se(per_set)[1] if len(per_set) > 1 else np.nan
    return dict(error=float(err.mean()), se=float(se), exact=int(np.sum(fit & exact)),
                fit_not_exact=int(np.sum(fit & ~exact)), not_fit=int(np.sum(~fit)),
                n_students=int(err.size))


def average_of_first_k_error(S, S_true):
    r"""Error of the average of the first :math:`k` matrices, for :math:`k=1,\dots,K`.

    .. math::

        e_k=\frac1{dL}\Big\|\frac1k\sum_{j\le k}S_j-S^*\Big\|_F^2 .

    For posterior samples :math:`\mathbb E\,e_k=(1+1/k)\,\mathrm{MMSE}`.

    Parameters
    ----------
    S : array_like, shape (K, d, L)
        The matrices, e.g. ``GDResult.S``.
    S_true : array_like, shape (d, L)
        The planted matrix.

    Returns
    -------
    ndarray, shape (K,)

    Examples
    --------
    >>> S = np.stack([np.ones((2, 2)), -np.ones((2, 2))])
    >>> average_of_first_k_error(S, np.zeros((2, 2)))
    array([1., 0.])
    """
    S = check_array(S, "S", ndim=3)
    S_true = check_array(S_true, "S_true", shape=S.shape[1:])
    k = np.arange(1, S.shape[0] + 1)[:, None, None]
    return np.mean((np.cumsum(S, axis=0) / k - S_true) ** 2, axis=(1, 2))


def interpolator_comparison(n_sets, n, d, L, r, student_ranks, rng=None, solver=None,
                            jobs=None, **gd_options):
    r"""Minimal nuclear norm against gradient-descent students, on independent noiseless data.

    Data set ``i`` has its own generator, the ``i``-th child of ``rng``
    (:func:`seqrmt.ensemble.run_ensemble`): it draws the data
    (:func:`~seqrmt.bsr.model.sample_bsr`, teacher of rank ``r``, no noise), then, after
    :func:`min_nuclear_norm`, the initialisation of one student of each rank in
    ``student_ranks`` (:func:`gd_factorized`). The result does not depend on ``jobs``.

    Parameters
    ----------
    n_sets, n : int
        Number of independent data sets, and of samples in each.
    d, L, r : int
        Dimensions of :math:`S^*` and the teacher's rank.
    student_ranks : sequence of int
        Ranks of the gradient-descent students.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None
        Root of the data sets' generators (see :func:`seqrmt.ensemble.spawn_generators`).
    solver : str, optional
        cvxpy solver of :func:`min_nuclear_norm` (``None``: its default).
    jobs : int or None
        Workers (see :func:`seqrmt.ensemble.n_jobs`).
    **gd_options
        Further keyword arguments of :func:`gd_factorized` (one student each).

    Returns
    -------
    dict of str to ndarray, shape (n_sets, 3)
        Keys ``"MNNE"`` and ``"GD, rank <r_s>"``; columns: error :math:`\|S-S^*\|_F^2/(dL)`,
        training error :math:`\frac1n\sum_\mu(\hat y_\mu-y_\mu)^2` and the nuclear-norm ratio
        :math:`\|S\|_*/\|S^*\|_*`.

    Examples
    --------
    >>> out = interpolator_comparison(1, 60, 6, 6, 1, [1], init="small", rng=0)
    >>> sorted(out), out["MNNE"].shape
    (['GD, rank 1', 'MNNE'], (1, 3))
    >>> bool(out["GD, rank 1"][0, 0] < 1e-6)                        # alpha = 5/3: recovery
    True
    """
    n_sets = check_size(n_sets, "n_sets")
    n, d, L, r = (check_size(v, k) for v, k in ((n, "n"), (d, "d"), (L, "L"), (r, "r")))
    ranks = np.atleast_1d(np.asarray(student_ranks))
    if ranks.ndim != 1 or ranks.size == 0:
        raise ValueError("student_ranks must be a non-empty sequence of positive integers")
    ranks = [check_size(rs, "student_ranks") for rs in ranks]
    for key in ("X", "y", "r", "S_true", "rng", "n_students"):
        if key in gd_options:
            raise ValueError(f"gd_options must not set {key!r}: it is set for each data set")
    sets = run_ensemble(_interpolator_data_set, n_sets, check_seed(rng), args=(n, d, L, r, ranks, solver),
                        kwargs=gd_options, jobs=jobs, desc="data sets")
    return {key: np.array([row[key] for row in sets]) for key in sets[0]}


def _interpolator_data_set(rng, n, d, L, r, ranks, solver, **gd_options):
    """One data set of :func:`interpolator_comparison`: a row (error, training MSE, nuclear ratio)
    per method."""
    data = sample_bsr(n, d, L, r, 0.0, rng)
    fits = {"MNNE": min_nuclear_norm(data.X, data.y, solver=solver)}
    for rs in ranks:
        fits[f"GD, rank {rs}"] = gd_factorized(data.X, data.y, rs, rng=rng, **gd_options).S[0]
    nuc_true = np.linalg.norm(data.S, "nuc")
    out = {}
    for key, S in fits.items():
        res = bilinear_readout(data.X, S) - data.y
        out[key] = (np.mean((S - data.S) ** 2), np.mean(res**2), np.linalg.norm(S, "nuc") / nuc_true)
    return out
