r"""Gradient methods on the linear next-token model with fixed context embeddings.

The model (Thrampoulidis 2024, Section 2) predicts the logits :math:`\ell_j=W\bar h_j` of
context :math:`j` from a fixed embedding :math:`\bar h_j`; training minimises the
cross-entropy

.. math:: \mathrm{CE}(W)=\sum_j\hat\pi_j\big(\operatorname{logsumexp}(W\bar h_j)-\hat p_j^\top W\bar h_j\big)
   =\mathcal H+\sum_j\hat\pi_j\,\mathrm{KL}(\hat p_j\,\|\,\mathbb S(W\bar h_j)),

whose gradient is :math:`\sum_j\hat\pi_j(\mathbb S(W\bar h_j)-\hat p_j)\bar h_j^\top`.

This module runs gradient descent (GD), normalised GD and Adam from :math:`W_0=0` and
records, at logarithmically spaced iterations, the quantities of the implicit-bias theorem:
:math:`\mathrm{CE}-\mathcal H`, :math:`\|W_k\|_F`, :math:`\|P_\mathcal F W_k-W^\star\|_F`,
:math:`\cos(W_k,W^{\rm mm})` and :math:`\cos(W_k-W^\star,W^{\rm mm})`. It also solves the
ridge (weight-decay) path :math:`\min_W\mathrm{CE}(W)+\frac\lambda2\|W\|_F^2`, the penalised
form of the norm-constrained regularisation path.

Shapes (the paper's orientation): ``W`` is ``(V, d)`` (rows are words), ``Hbar`` is
``(d, m)`` (columns are contexts), ``P`` is ``(V, m)`` (columns are the next-token
distributions :math:`\hat p_j`), ``pi`` is ``(m,)`` and sums to one. The targets
:math:`W^\star` and :math:`W^{\rm mm}` come from :mod:`seqrmt.ntp.geometry` and
:mod:`seqrmt.ntp.svm`.

Used in: Chapter 3, "The implicit bias of gradient descent".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validation import (
    check_array,
    check_positive,
    check_positive_int,
    check_positive_weights,
    check_prob_columns,
    check_returned,
    check_size,
)
from ..ensemble import progress_bar
from .._validation import ConvergenceError
from ..runtime import single_threaded_blas

__all__ = [
    "smoothness_bound",
    "ntp_loss_and_gradient",
    "frobenius_cosine",
    "log_spaced_steps",
    "LinearRun",
    "train_linear",
    "ridge_path",
]

METHODS = ("gd", "ngd", "adam")


# ---------------------------------------------------------------------------
# Shared pieces (also used by seqrmt.ntp.ufm)
# ---------------------------------------------------------------------------

def _adam_step(x, g, mom, vel, k, eta, b1, b2, eps):
    """One in-place Adam update of ``x`` with gradient ``g`` at step ``k >= 1`` (bias-corrected)."""
    mom *= b1
    mom += (1 - b1) * g
    vel *= b2
    vel += (1 - b2) * g * g
    x -= eta * (mom / (1 - b1**k)) / (np.sqrt(vel / (1 - b2**k)) + eps)


def _check_problem(P, pi):
    """Validate ``P`` (V, m) and ``pi`` (m,); return them with ``log P`` on the support."""
    P = check_prob_columns(P, "P")
    pi = check_positive_weights(pi, "pi", size=P.shape[1], sum_one=True)
    logP = np.zeros_like(P)
    np.log(P, out=logP, where=P > 0)
    return P, pi, logP


def _softmax_residual(L, P, pi, logP, need_gap=True):
    r"""Return ``G = (softmax(L) - P) diag(pi)`` and, optionally, ``CE - H``.

    The softmax is column-wise and stable (the column maximum is subtracted). ``CE - H`` is
    computed as :math:`\sum_j\pi_j\sum_{z\in\mathcal S_j}p_{jz}(\log p_{jz}-\log q_{jz})`,
    which never subtracts two large numbers.
    """
    shifted = L - L.max(axis=0)
    E = np.exp(shifted)
    Z = E.sum(axis=0)
    G = (E / Z - P) * pi
    gap = None
    if need_gap:
        logq = shifted - np.log(Z)
        gap = float(pi @ np.sum(np.where(P > 0, P * (logP - logq), 0.0), axis=0))
    return G, gap


def _check_finite(M, name, step, hint=""):
    if not np.all(np.isfinite(M)):
        raise FloatingPointError(f"{name} became NaN or inf at step {step}{hint}")


def frobenius_cosine(A, B):
    r"""Cosine of two matrices in the Frobenius inner product.

    .. math:: \cos(A,B)=\frac{\langle A,B\rangle_F}{\|A\|_F\,\|B\|_F}.

    Parameters
    ----------
    A, B : array_like
        Arrays of the same shape, neither identically zero.

    Returns
    -------
    float

    Examples
    --------
    >>> round(frobenius_cosine([[1.0, 0.0]], [[1.0, 1.0]]), 4)
    0.7071
    """
    A = check_array(A, "A")
    B = check_array(B, "B", shape=A.shape)
    na, nb = np.linalg.norm(A), np.linalg.norm(B)
    if na == 0:
        raise ValueError("A must not be zero")
    if nb == 0:
        raise ValueError("B must not be zero")
    return float(np.sum(A * B) / (na * nb))


def log_spaced_steps(max_iter, num=40):
    """Distinct integers from 1 to ``max_iter``, evenly spaced on a log scale.

    Parameters
    ----------
    max_iter : int
        Last iteration (included).
    num : int
        Number of points before rounding and removing duplicates.

    Returns
    -------
    numpy.ndarray of int

    Examples
    --------
    >>> log_spaced_steps(1000, num=4).tolist()
    [1, 10, 100, 1000]
    """
    max_iter = check_positive_int(max_iter, "max_iter")
    num = check_size(num, "num")
    return np.unique(np.round(np.geomspace(1, max_iter, num)).astype(int))


# ---------------------------------------------------------------------------
# Linear model
# ---------------------------------------------------------------------------

def _check_linear(Hbar, P, pi):
    P, pi, logP = _check_problem(P, pi)
    Hbar = check_array(Hbar, "Hbar", ndim=2, shape=(None, P.shape[1]))
    return Hbar, P, pi, logP


def smoothness_bound(Hbar, pi):
    r"""Upper bound on the smoothness constant of the linear NTP cross-entropy.

    The Hessian of :math:`u\mapsto\operatorname{logsumexp}(u)` is
    :math:`\operatorname{diag}(q)-qq^\top`, of norm at most :math:`\frac12`; hence

    .. math:: L\le\tfrac12\,\lambda_{\max}\Big(\sum_j\hat\pi_j\bar h_j\bar h_j^\top\Big),

    and gradient descent with :math:`\eta\le1/(2L)` satisfies the assumption of
    Thrampoulidis (2024, Theorem 2).

    Parameters
    ----------
    Hbar : array_like, shape (d, m)
        Context embeddings (columns).
    pi : array_like, shape (m,)
        Context frequencies (positive, summing to one).

    Returns
    -------
    float
        The bound on :math:`L`.

    Examples
    --------
    >>> round(smoothness_bound(np.eye(2) * 2.0, [0.5, 0.5]), 4)
    1.0
    """
    Hbar = check_array(Hbar, "Hbar", ndim=2)
    pi = check_positive_weights(pi, "pi", size=Hbar.shape[1], sum_one=True)
    return 0.5 * float(np.linalg.eigvalsh((Hbar * pi) @ Hbar.T)[-1])


def ntp_loss_and_gradient(W, Hbar, P, pi):
    r"""Excess cross-entropy :math:`\mathrm{CE}(W)-\mathcal H` and the gradient of CE.

    Parameters
    ----------
    W : array_like, shape (V, d)
        Word embeddings (rows).
    Hbar : array_like, shape (d, m)
        Context embeddings (columns).
    P : array_like, shape (V, m)
        Next-token distributions (columns).
    pi : array_like, shape (m,)
        Context frequencies.

    Returns
    -------
    gap : float
        :math:`\mathrm{CE}(W)-\mathcal H=\sum_j\hat\pi_j\mathrm{KL}(\hat p_j\|\mathbb S(W\bar h_j))\ge0`.
    grad : numpy.ndarray, shape (V, d)
        :math:`\sum_j\hat\pi_j(\mathbb S(W\bar h_j)-\hat p_j)\bar h_j^\top`.

    Examples
    --------
    >>> P = np.array([[0.5, 1.0], [0.5, 0.0]])
    >>> gap, grad = ntp_loss_and_gradient(np.zeros((2, 2)), np.eye(2), P, [0.5, 0.5])
    >>> round(gap, 4), grad.round(3).tolist()
    (0.3466, [[0.0, -0.25], [0.0, 0.25]])
    """
    Hbar, P, pi, logP = _check_linear(Hbar, P, pi)
    W = check_array(W, "W", ndim=2, shape=(P.shape[0], Hbar.shape[0]))
    G, gap = _softmax_residual(W @ Hbar, P, pi, logP)
    return gap, G @ Hbar.T


@dataclass
class LinearRun:
    """Trajectory of a gradient method on the linear NTP model.

    Every array is indexed like ``steps`` (the recorded iterations, log-spaced).
    Quantities that need a target that was not supplied are NaN.

    Attributes
    ----------
    W : numpy.ndarray, shape (V, d)
        The last iterate.
    steps : numpy.ndarray of int
        Recorded iterations :math:`k`.
    ce_gap : numpy.ndarray
        :math:`\\mathrm{CE}(W_k)-\\mathcal H`.
    norm : numpy.ndarray
        :math:`\\|W_k\\|_F`.
    dist_F : numpy.ndarray
        :math:`\\|P_\\mathcal F W_k-W^\\star\\|_F`.
    cos_mm : numpy.ndarray
        :math:`\\cos(W_k,W^{\\rm mm})`.
    cos_mm_centered : numpy.ndarray
        :math:`\\cos(W_k-W^\\star,W^{\\rm mm})`.
    method : str
        ``"gd"``, ``"ngd"`` or ``"adam"``.
    eta : float
        The step size used.
    n_iter : int
        Number of iterations performed.
    snapshots : list of numpy.ndarray
        With ``store=True``: copies of :math:`W_k` at the recorded iterations.
    """

    W: np.ndarray
    steps: np.ndarray
    ce_gap: np.ndarray
    norm: np.ndarray
    dist_F: np.ndarray
    cos_mm: np.ndarray
    cos_mm_centered: np.ndarray
    method: str
    eta: float
    n_iter: int
    snapshots: list = field(default_factory=list)


def train_linear(Hbar, P, pi, method="gd", eta=None, max_iter=10_000, record_at=None,
                 W_star=None, W_mm=None, project_F=None, W0=None, betas=(0.9, 0.99),
                 eps=1e-8, tol=None, store=False, progress=None):
    r"""Run GD, normalised GD or Adam on the linear NTP cross-entropy and record the theory's metrics.

    Updates, with :math:`g_k=\nabla\mathrm{CE}(W_{k-1})`:

    * ``"gd"``: :math:`W_k=W_{k-1}-\eta g_k`;
    * ``"ngd"`` (normalised GD): :math:`W_k=W_{k-1}-\eta g_k/\|g_k\|_F`;
    * ``"adam"``: Adam with ``betas`` and ``eps``, bias-corrected moments.

    Parameters
    ----------
    Hbar : array_like, shape (d, m)
        Fixed context embeddings (columns).
    P : array_like, shape (V, m)
        Next-token distributions (columns summing to one).
    pi : array_like, shape (m,)
        Context frequencies (positive, summing to one).
    method : {"gd", "ngd", "adam"}
        The update rule.
    eta : float, optional
        Step size. Default for ``"gd"``: :math:`1/(2L)` with :math:`L` from
        :func:`smoothness_bound`; for ``"ngd"`` and ``"adam"``: 0.01.
    max_iter : int
        Number of iterations.
    record_at : array_like of int, optional
        Iterations to record (between 1 and ``max_iter``); default :func:`log_spaced_steps`.
    W_star : array_like, shape (V, d), optional
        The finite component :math:`W^\star` (:func:`seqrmt.ntp.geometry.w_star`).
    W_mm : array_like, shape (V, d), optional
        The NTP-SVM solution :math:`W^{\rm mm}` (:func:`seqrmt.ntp.svm.ntp_svm_frobenius`).
    project_F : callable, optional
        ``W -> P_F(W)``, the orthogonal projector onto the data subspace. Needed, with
        ``W_star``, for ``dist_F``.
    W0 : array_like, shape (V, d), optional
        Initialisation; default zero.
    betas : tuple of float
        Adam's moment decay rates.
    eps : float
        Adam's denominator offset.
    tol : float, optional
        If given, stop as soon as :math:`\|\nabla\mathrm{CE}(W_k)\|_F<` ``tol`` (checked at the
        recorded iterations only) and raise :class:`~seqrmt.ConvergenceError` if this does
        not happen within ``max_iter`` iterations. By default all ``max_iter`` iterations are run.
    store : bool
        Keep copies of :math:`W_k` at the recorded iterations (``LinearRun.snapshots``).
    progress : bool or None
        Show a progress bar (one iteration per tick, on stderr); ``None``: on at the paper's size, off at the book's size and under
        CI (``seqrmt.ensemble.progress_enabled``).

    Returns
    -------
    LinearRun

    Raises
    ------
    FloatingPointError
        If an iterate becomes NaN or infinite (step size too large).

    Examples
    --------
    >>> Hbar = np.eye(2); P = np.array([[0.5, 1.0], [0.5, 0.0]])
    >>> run = train_linear(Hbar, P, [0.5, 0.5], eta=1.0, max_iter=1000, record_at=[10, 1000])
    >>> run.ce_gap.round(5).tolist()
    [0.04948, 0.0005]
    """
    Hbar, P, pi, logP = _check_linear(Hbar, P, pi)
    V, d = P.shape[0], Hbar.shape[0]
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    max_iter = check_size(max_iter, "max_iter")
    if eta is None:
        eta = 1.0 / (2.0 * smoothness_bound(Hbar, pi)) if method == "gd" else 0.01
    eta = check_positive(eta, "eta")
    if record_at is None:
        record_at = log_spaced_steps(max_iter)
    record_at = np.unique(check_array(record_at, "record_at", ndim=1).astype(int))
    if record_at[0] < 1 or record_at[-1] > max_iter:
        raise ValueError(f"record_at must lie between 1 and max_iter={max_iter}")
    shape = (V, d)
    W_star = None if W_star is None else check_array(W_star, "W_star", shape=shape)
    W_mm = None if W_mm is None else check_array(W_mm, "W_mm", shape=shape)
    if project_F is not None and not callable(project_F):
        raise ValueError("project_F must be a callable W -> P_F(W)")
    W = np.zeros(shape) if W0 is None else check_array(W0, "W0", shape=shape).copy()
    if len(betas) != 2 or not all(0 <= b < 1 for b in betas):
        raise ValueError(f"betas must be two numbers in [0, 1), got {betas}")
    eps = check_positive(eps, "eps")
    if tol is not None:
        tol = check_positive(tol, "tol")

    n_rec = record_at.size
    rec = {key: np.full(n_rec, np.nan) for key in
           ("ce_gap", "norm", "dist_F", "cos_mm", "cos_mm_centered")}
    mm_norm = None if W_mm is None else np.linalg.norm(W_mm)
    m1 = np.zeros(shape)
    m2 = np.zeros(shape)
    b1, b2 = betas
    hint = f" (method {method!r}, eta={eta:g}; try a smaller eta)"
    HbarT = Hbar.T.copy()
    snapshots = []
    i_rec = 0
    k = 0
    converged = False
    with single_threaded_blas():
        for k in progress_bar(range(1, max_iter + 1), desc="linear NTP iterations", enabled=progress):
            G, _ = _softmax_residual(W @ Hbar, P, pi, logP, need_gap=False)
            grad = G @ HbarT
            if method == "gd":
                W -= eta * grad
            elif method == "ngd":
                gnorm = np.linalg.norm(grad)
                if gnorm > 0:
                    W -= (eta / gnorm) * grad
            else:
                _adam_step(W, grad, m1, m2, k, eta, b1, b2, eps)
            if k % 256 == 0:
                _check_finite(W, "W", k, hint)
            if i_rec < n_rec and k == record_at[i_rec]:
                _check_finite(W, "W", k, hint)
                G, gap = _softmax_residual(W @ Hbar, P, pi, logP)
                rec["ce_gap"][i_rec] = gap
                rec["norm"][i_rec] = np.linalg.norm(W)
                if store:
                    snapshots.append(W.copy())
                if W_star is not None and project_F is not None:
                    PW = check_returned(project_F(W), "project_F", W.shape)
                    rec["dist_F"][i_rec] = np.linalg.norm(PW - W_star)
                if W_mm is not None and rec["norm"][i_rec] > 0:
                    rec["cos_mm"][i_rec] = np.sum(W * W_mm) / (rec["norm"][i_rec] * mm_norm)
                    if W_star is not None:
                        D = W - W_star
                        rec["cos_mm_centered"][i_rec] = np.sum(D * W_mm) / (np.linalg.norm(D) * mm_norm)
                i_rec += 1
                if tol is not None and np.linalg.norm(G @ HbarT) < tol:
                    converged = True
                    break
    _check_finite(W, "W", k, hint)
    if tol is not None and not converged:
        raise ConvergenceError(f"gradient norm did not fall below tol={tol:g} in {max_iter} iterations")
    keep = slice(0, i_rec)
    return LinearRun(W=W, steps=record_at[keep], method=method, eta=eta, n_iter=k, snapshots=snapshots,
                     **{key: val[keep] for key, val in rec.items()})


def ridge_path(Hbar, P, pi, lams, tol=1e-10, max_iter=200):
    r"""Minimisers of :math:`\mathrm{CE}(W)+\frac\lambda2\|W\|_F^2` along a sequence of :math:`\lambda`.

    Each problem is smooth and strongly convex; it is solved by Newton's method with a
    backtracking line search, warm-started from the previous solution (sort ``lams`` in
    decreasing order). By Lagrange duality, the solution at :math:`\lambda` also solves the
    norm-constrained problem :math:`\min_{\|W\|_F\le B}\mathrm{CE}(W)` with
    :math:`B=\|W_\lambda\|_F`, so the path traces the regularisation path of
    Thrampoulidis (2024, Theorem 1).

    Parameters
    ----------
    Hbar, P, pi : array_like
        Embeddings ``(d, m)``, distributions ``(V, m)`` and frequencies ``(m,)``, as in
        :func:`ntp_loss_and_gradient`.
    lams : array_like
        Positive regularisation strengths.
    tol : float
        Stop when the largest entry of the gradient is below ``tol``.
    max_iter : int
        Newton iterations allowed per :math:`\lambda`.

    Returns
    -------
    numpy.ndarray, shape (len(lams), V, d)
        The minimisers :math:`W_\lambda`.

    Raises
    ------
    ConvergenceError
        If Newton's method does not reach ``tol``.

    Examples
    --------
    >>> P = np.array([[0.5, 1.0], [0.5, 0.0]])
    >>> Ws = ridge_path(np.eye(2), P, [0.5, 0.5], [1e-1, 1e-3])
    >>> np.linalg.norm(Ws, axis=(1, 2)).round(3).tolist()
    [1.155, 3.709]
    """
    Hbar, P, pi, logP = _check_linear(Hbar, P, pi)
    lams = check_array(lams, "lams", ndim=1, positive=True)
    tol = check_positive(tol, "tol")
    max_iter = check_positive_int(max_iter, "max_iter")
    V, d = P.shape[0], Hbar.shape[0]
    HH = (Hbar[:, None, :] * Hbar[None, :, :]).reshape(d * d, -1).T  # (m, d*d)

    def value_grad(W, lam):
        G, gap = _softmax_residual(W @ Hbar, P, pi, logP)
        return gap + 0.5 * lam * np.sum(W * W), G @ Hbar.T + lam * W

    out = np.empty((lams.size, V, d))
    W = np.zeros((V, d))
    with single_threaded_blas():
        for i, lam in enumerate(lams):
            out[i] = W = _newton_ridge(W, lam, value_grad, Hbar, HH, pi, tol, max_iter)
    return out


def _newton_ridge(W, lam, value_grad, Hbar, HH, pi, tol, max_iter):
    """Damped Newton iterations for one ridge problem (helper of :func:`ridge_path`)."""
    V, d = W.shape
    n = V * d
    eye = np.eye(V)
    f, g = value_grad(W, lam)
    for _ in range(max_iter):
        if np.max(np.abs(g)) < tol:
            return W
        L = W @ Hbar
        Q = np.exp(L - L.max(axis=0))
        Q /= Q.sum(axis=0)
        A = (eye[:, :, None] * Q[:, None, :] - Q[:, None, :] * Q[None, :, :]) * pi
        hess = (A.reshape(V * V, -1) @ HH).reshape(V, V, d, d).transpose(0, 2, 1, 3)
        hess = hess.reshape(n, n) + lam * np.eye(n)
        step = np.linalg.solve(hess, g.ravel()).reshape(V, d)
        dec = float(np.sum(g * step))
        t = 1.0
        while True:
            f_new, g_new = value_grad(W - t * step, lam)
            if f_new <= f - 0.25 * t * dec or t < 1e-12:
                break
            t *= 0.5
        W, f, g = W - t * step, f_new, g_new
    if np.max(np.abs(g)) >= tol:
        raise ConvergenceError(f"Newton's method did not reach tol={tol:g} at lam={lam:g}")
    return W
