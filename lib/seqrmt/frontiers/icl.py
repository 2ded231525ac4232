r"""In-context learning of linear regression by linear attention: pretraining/test task alignment (5.3).

Model (Letey, Zavatone-Veth, Lu & Pehlevan 2025). Tokens :math:`x_i\sim\mathcal N(0,I_d/d)`, labels
:math:`y_i=\langle x_i,w\rangle+\varepsilon_i`, :math:`\varepsilon_i\sim\mathcal N(0,\rho)`; a context holds
:math:`\ell` labelled pairs and a query :math:`x_{\ell+1}`. Reduced linear attention predicts
:math:`\hat y=x_{\ell+1}^\top\Gamma h`, with
:math:`h=[\tfrac d\ell\sum_{i\le\ell}y_ix_i,\ \tfrac1\ell\sum_{i\le\ell}y_i^2]\in\mathbb R^{d+1}`.
It is pretrained by ridge on :math:`n` contexts whose tasks are drawn uniformly from :math:`k` tasks
:math:`w_j\sim\mathcal N(0,C_{\rm train})`, and tested on fresh tasks :math:`w\sim\mathcal N(0,C_{\rm test})`.
Scaling: :math:`\ell/d\to\alpha`, :math:`k/d\to\kappa`, :math:`n/d^2\to\tau`.

The law here is the asymptotic test error (:func:`icl_error`): the authors' formula, transcribed from
their public code (``mletey/pretrain-test-icl-alignment-ICLR26``, ``theory.py``, ``ICL_error``),
with the task transform :math:`M_\kappa` computed from the deterministic equivalent of Chapter 1
(:func:`seqrmt.rmt.solve_delta`) instead of the authors' Monte Carlo average. The notebook writes the
pretraining, the trace formula for a given :math:`\Gamma` and the infinite-pretraining limit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from .. import rmt
from .._validation import ConvergenceError, check_array, check_nonnegative, check_positive, check_positive_int

__all__ = ["ICLError", "icl_error"]


def _covariance(C, name):
    """A symmetric 2-D array (symmetrised), or a ValueError naming the argument."""
    C = check_array(C, name, ndim=2)
    if C.shape[0] != C.shape[1]:
        raise ValueError(f"{name} must be square, got shape {C.shape}")
    if not np.allclose(C, C.T, atol=1e-10 * max(1.0, float(np.abs(C).max()))):
        raise ValueError(f"{name} must be symmetric")
    return 0.5 * (C + C.T)


def _pair(C_train, C_test):
    """Eigenvalues s of C_train and the diagonal of C_test in C_train's eigenbasis."""
    C_train = _covariance(C_train, "C_train")
    C_test = _covariance(C_test, "C_test")
    if C_test.shape != C_train.shape:
        raise ValueError(
            f"C_test must have the shape of C_train {C_train.shape}, got {C_test.shape}"
        )
    # only the spectrum of C_train and the diagonal of C_test in its eigenbasis enter the formula
    s, U = np.linalg.eigh(C_train)
    if s.min() < -1e-10 * max(1.0, s.max()):
        raise ValueError("C_train must be positive semi-definite")
    t = np.einsum("ij,ik,kj->j", U, C_test, U)  # t_j = u_j^T C_test u_j
    if np.linalg.eigvalsh(C_test).min() < -1e-10 * max(1.0, t.max()):
        raise ValueError("C_test must be positive semi-definite")
    return np.clip(s, 0.0, None), t


def _task_resolvent_trace(eigs, kappa, nu, tol=1e-13, max_iter=200):
    """M_kappa(nu) = (1/d) tr(C_k + nu)^-1 (deterministic equivalent, k = kappa d tasks) and dM/dnu."""
    s = eigs
    # the fixed point of Chapter 1 with a non-integer sample count k = kappa d
    delta = rmt.solve_delta(s, kappa * s.size, nu, tol=tol, max_iter=max_iter)
    # Qbar = (a C + nu)^-1 with a = 1/(1 + delta): M is its normalised trace
    a = 1.0 / (1.0 + delta)
    den = s * a + nu
    M = float(np.mean(1.0 / den))
    # M' by implicit differentiation: delta = mean(s/den)/kappa with den' = s a' + 1, a' = -a^2 delta'
    num = -np.mean(s / den**2) / kappa
    ddelta = num / (1.0 - np.mean(s**2 * a**2 / den**2) / kappa)
    dM = float(-np.mean((1.0 - s * a**2 * ddelta) / den**2))  # negative: M decreases in nu
    return M, dM


@dataclass(frozen=True)
class ICLError:
    r"""Theoretical ICL error and its parts (see :func:`icl_error`).

    Attributes
    ----------
    error : float
        :math:`e`.
    pretraining : float
        The term that depends on :math:`C_{\rm test}` only through :math:`\mathrm{tr}C_{\rm test}`.
    interaction : float
        The pretrain-test interaction term (traces of :math:`C_{\rm test}F` and :math:`C_{\rm test}F_2`).
    nu, xi, M, dM, c_e : float
        The scalars of the formula.
    """

    error: float
    pretraining: float
    interaction: float
    nu: float
    xi: float
    M: float
    dM: float
    c_e: float


def icl_error(C_train, C_test, alpha, kappa, tau, rho, tol=1e-13, max_iter=200):
    r"""Asymptotic test error of pretrained linear attention under a task-covariance mismatch.

    With :math:`\rho_{\rm tr}=\frac1d\mathrm{tr}C_{\rm train}+\rho`,
    :math:`\rho_{\rm te}=\frac1d\mathrm{tr}C_{\rm test}+\rho`: :math:`\xi=0` if :math:`\tau>1`,
    otherwise :math:`\xi` solves :math:`\xi M_\kappa(\xi+\rho_{\rm tr}/\alpha)=1-\tau`;
    :math:`\nu=\rho_{\rm tr}/\alpha+\xi`, :math:`M=M_\kappa(\nu)`, :math:`M'=M_\kappa'(\nu)`
    (the deterministic equivalent of Chapter 1);
    :math:`F=[(1-\frac1\kappa+\frac{\nu M}\kappa)C_{\rm train}+\nu I]^{-1}`,
    :math:`F_2=F[(\frac M\kappa+\frac{\nu M'}\kappa)C_{\rm train}+I]F`,

    .. math::
        c_e=\frac{\rho+\nu-\nu^2M-\xi(1-2\nu M-\nu^2M')}{\tau-(1-2\xi M-\xi^2M')},

    .. math::
        e=\rho+\frac{\rho_{\rm te}}\alpha\big[1+(c_e-2\nu)M+(\xi c_e-\nu^2)M'\big]
        +c_e\tfrac1d\mathrm{tr}(C_{\rm test}F)-(\xi c_e-\nu^2)\tfrac1d\mathrm{tr}(C_{\rm test}F_2).

    This is the formula of the authors' code (``ICL_error``), not re-derived here.

    Parameters
    ----------
    C_train, C_test : array_like, shape (d, d)
        Pretraining and test task covariances (symmetric positive semi-definite).
    alpha : float
        Context ratio :math:`\ell/d>0`.
    kappa : float
        Task-diversity ratio :math:`k/d>0`.
    tau : float
        Pretraining ratio :math:`n/d^2>0`, not equal to 1 (the formula is singular there).
    rho : float
        Label-noise variance :math:`\rho\ge0`.
    tol, max_iter
        Passed to the root finders.

    Returns
    -------
    ICLError

    Examples
    --------
    >>> I = np.eye(20)
    >>> round(icl_error(I, I, alpha=1.0, kappa=1.0, tau=4.0, rho=0.1).error, 4)
    0.9826
    """
    s, t = _pair(C_train, C_test)
    alpha = check_positive(alpha, "alpha")
    kappa = check_positive(kappa, "kappa")
    tau = check_positive(tau, "tau")
    if tau == 1.0:
        raise ValueError("tau must differ from 1 (interpolation threshold)")
    rho = check_nonnegative(rho, "rho")
    tol = check_positive(tol, "tol")
    max_iter = check_positive_int(max_iter, "max_iter")
    # the label power (1/d) E|w|^2 + rho of a pretraining and of a test prompt
    rho_tr = s.mean() + rho
    rho_te = t.mean() + rho
    if rho_tr <= 0:
        raise ValueError("C_train and rho cannot both vanish")

    def trace(nu):
        return _task_resolvent_trace(s, kappa, nu, tol=tol, max_iter=max_iter)

    # xi > 0 only below the interpolation threshold tau < 1: the ridgeless pretraining then has
    # more parameters than contexts and acts as a ridge nu = rho_tr / alpha + xi on the tasks
    xi = 0.0
    if tau < 1:
        def g(x):
            return x * trace(x + rho_tr / alpha)[0] - (1.0 - tau)

        # x M(x + c) increases from 0 to 1 > 1 - tau: double hi until it brackets the root
        hi = 1.0
        for _ in range(max_iter):
            if g(hi) > 0:
                break
            hi *= 2.0
        else:  # pragma: no cover - x M(x + c) -> 1 > 1 - tau
            raise ConvergenceError("icl_error: no bracket for xi")
        xi = optimize.brentq(g, 0.0, hi, xtol=tol, maxiter=max_iter)
    nu = rho_tr / alpha + xi  # rho_tr / alpha: the noise of the moment estimate h_1 of the task
    M, dM = trace(nu)
    # a = 1/(1 + delta): the learned prior is C_train shrunk by the finite task sample (5.3)
    a = 1.0 - 1.0 / kappa + nu * M / kappa
    f = 1.0 / (a * s + nu)
    # F_2 = F[(M + nu M')/kappa C + I]F: the second-order (fluctuation) part of the learned prior
    f2 = f**2 * ((M / kappa + nu * dM / kappa) * s + 1.0)
    # c_e: the pretraining error's excess over the noise, fed back through the ridgeless fit
    c_e = (rho + nu - nu**2 * M - xi * (1 - 2 * nu * M - nu**2 * dM)) / (
        tau - (1 - 2 * xi * M - xi**2 * dM)
    )
    # C_test enters the first term through its trace only, the second through F and F_2
    pre = rho + rho_te / alpha * (1 + (c_e - 2 * nu) * M + (xi * c_e - nu**2) * dM)
    inter = c_e * np.mean(t * f) - (xi * c_e - nu**2) * np.mean(t * f2)
    return ICLError(float(pre + inter), float(pre), float(inter), nu, xi, M, dM, float(c_e))
