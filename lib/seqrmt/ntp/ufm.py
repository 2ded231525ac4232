r"""The unconstrained-features model (UFM) of next-token prediction, trained by gradient descent.

Both the word embeddings :math:`W\in\mathbb R^{V\times d}` and the context embeddings
:math:`H\in\mathbb R^{d\times m}` are free parameters (Zhao et al. 2024):

.. math:: \min_{W,H}\ \mathrm{CE}(WH)+\frac\lambda2\big(\|W\|_F^2+\|H\|_F^2\big),

with the weighted cross-entropy :math:`\mathrm{CE}(L)=\sum_j\hat\pi_j(\operatorname{logsumexp}(L_{:,j})-\hat p_j^\top L_{:,j})`.
With :math:`G=(\mathbb S(WH)-\hat P)\operatorname{diag}(\hat\pi)` (column-wise softmax) the
gradients are :math:`\nabla_W=GH^\top+\lambda W` and :math:`\nabla_H=W^\top G+\lambda H`.
Because :math:`\min_{WH=L}\frac12(\|W\|_F^2+\|H\|_F^2)=\|L\|_*`, the UFM with :math:`d\ge V`
has the same minimal logits as the convex problem :math:`\min_L\mathrm{CE}(L)+\lambda\|L\|_*`
(:func:`seqrmt.ntp.svm.logit_path`); :func:`compare_with_logits` measures the agreement.

Shapes (the paper's orientation): ``P`` and logits ``L`` are ``(V, m)`` (columns are
contexts), ``W`` is ``(V, d)`` (rows are words), ``H`` is ``(d, m)`` (columns are contexts),
``pi`` is ``(m,)`` and sums to one.

Used in: Chapter 3, "Unconstrained features and the logit matrix" and "A transformer and a
UFM on a TinyStories-like corpus".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validation import check_array, check_positive, check_size
from ..ensemble import progress_bar
from .._validation import ConvergenceError, as_generator
from ..runtime import single_threaded_blas
from .geometry import in_support_logits, max_margin_coefficient, project_T
from .linear import frobenius_cosine, _adam_step, _check_finite, _check_problem, _softmax_residual, log_spaced_steps

__all__ = [
    "ufm_loss_and_gradients",
    "balancedness",
    "UFMRun",
    "train_ufm",
    "LogitComparison",
    "compare_with_logits",
    "entropy_gap_prediction",
    "path_decomposition",
    "path_offset_estimate",
]

OPTIMIZERS = ("gd", "adam", "adamw")


def _check_factors(W, H, V=None, m=None):
    W = check_array(W, "W", ndim=2, shape=(V, None))
    H = check_array(H, "H", ndim=2, shape=(W.shape[1], m))
    return W, H


def ufm_loss_and_gradients(W, H, P, pi, lam):
    r"""UFM objective and its gradients.

    Parameters
    ----------
    W, H : array_like
        Word embeddings ``(V, d)`` (rows) and context embeddings ``(d, m)`` (columns).
    P, pi : array_like
        Next-token distributions ``(V, m)`` (columns summing to one) and context frequencies
        ``(m,)`` (positive, summing to one).
    lam : float
        Weight decay :math:`\lambda>0`.

    Returns
    -------
    objective : float
        :math:`\mathrm{CE}(WH)-\mathcal H+\frac\lambda2(\|W\|_F^2+\|H\|_F^2)` (the entropy
        :math:`\mathcal H` is subtracted, so the value is the excess loss plus the penalty).
    grad_W : numpy.ndarray, shape (V, d)
        :math:`GH^\top+\lambda W`.
    grad_H : numpy.ndarray, shape (d, m)
        :math:`W^\top G+\lambda H`.

    Examples
    --------
    >>> P = np.array([[0.5, 1.0], [0.5, 0.0]])
    >>> f, gW, gH = ufm_loss_and_gradients(np.eye(2), np.zeros((2, 2)), P, [0.5, 0.5], 0.1)
    >>> round(f, 4), gH.round(3).tolist()
    (0.4466, [[0.0, -0.25], [0.0, 0.25]])
    """
    P, pi, logP = _check_problem(P, pi)
    W, H = _check_factors(W, H, *P.shape)
    lam = check_positive(lam, "lam")
    G, gap = _softmax_residual(W @ H, P, pi, logP)
    obj = float(gap) + 0.5 * lam * (np.sum(W * W) + np.sum(H * H))
    return float(obj), G @ H.T + lam * W, W.T @ G + lam * H


def balancedness(W, H):
    r"""Balancedness :math:`\|W\|_F^2-\|H\|_F^2` of a factorisation, and its matrix version.

    At every stationary point of the regularised UFM, :math:`W^\top W=HH^\top` (multiply the
    two first-order conditions by :math:`W^\top` and :math:`H^\top`); taking traces gives
    :math:`\|W\|_F^2=\|H\|_F^2`. Gradient flow from any initialisation conserves
    :math:`W^\top W-HH^\top` when :math:`\lambda=0` and shrinks it like :math:`e^{-2\lambda t}` otherwise.

    Parameters
    ----------
    W : array_like, shape (V, d)
    H : array_like, shape (d, m)

    Returns
    -------
    scalar : float
        :math:`\|W\|_F^2-\|H\|_F^2`.
    matrix : float
        :math:`\|W^\top W-HH^\top\|_F`.

    Examples
    --------
    >>> balancedness(np.ones((2, 1)), np.ones((1, 3)))
    (-1.0, 1.0)
    """
    W, H = _check_factors(W, H)
    return (float(np.sum(W * W) - np.sum(H * H)), float(np.linalg.norm(W.T @ W - H @ H.T)))


@dataclass
class UFMRun:
    """Trajectory of the UFM trained by :func:`train_ufm`.

    Every array is indexed like ``steps``.

    Attributes
    ----------
    W : numpy.ndarray, shape (V, d)
        Final word embeddings.
    H : numpy.ndarray, shape (d, m)
        Final context embeddings.
    steps : numpy.ndarray of int
        Recorded steps (0 is the initialisation).
    ce_gap : numpy.ndarray
        :math:`\\mathrm{CE}(W_tH_t)-\\mathcal H`.
    objective : numpy.ndarray
        ``ce_gap`` plus the penalty :math:`\\frac\\lambda2(\\|W_t\\|_F^2+\\|H_t\\|_F^2)`.
    norm_W, norm_H : numpy.ndarray
        Frobenius norms.
    grad_norm : numpy.ndarray
        :math:`(\\|\\nabla_W\\|_F^2+\\|\\nabla_H\\|_F^2)^{1/2}`.
    cos_target : numpy.ndarray
        :math:`\\cos(W_tH_t,L_{\\rm target})` (NaN without a target).
    snapshots : dict
        With ``store=True``: lists ``"W"``, ``"H"``, ``"L"`` of copies at the recorded steps.
    lam, eta : float
    optimizer : str
    """

    W: np.ndarray
    H: np.ndarray
    steps: np.ndarray
    ce_gap: np.ndarray
    objective: np.ndarray
    norm_W: np.ndarray
    norm_H: np.ndarray
    grad_norm: np.ndarray
    cos_target: np.ndarray
    lam: float
    eta: float
    optimizer: str
    snapshots: dict = field(default_factory=dict)

    @property
    def balancedness(self):
        """:math:`\\|W_t\\|_F^2-\\|H_t\\|_F^2` at the recorded steps."""
        return self.norm_W**2 - self.norm_H**2


def train_ufm(P, pi, d, lam, eta=0.5, max_iter=10_000, record_at=None, rng=None,
              init_scale=0.1, W0=None, H0=None, optimizer="gd", betas=(0.9, 0.999),
              eps=1e-8, tol=None, L_target=None, store=False, dtype=np.float64, milestones=(),
              gamma=0.4, progress=None):
    r"""Train the UFM :math:`\min_{W,H}\mathrm{CE}(WH)+\frac\lambda2(\|W\|_F^2+\|H\|_F^2)`.

    Full-batch gradient descent (the default; step ``eta``), Adam on the regularised objective,
    or AdamW (Adam on :math:`\mathrm{CE}` with the weight decay ``lam`` decoupled, as in
    :class:`torch.optim.AdamW`: :math:`x\leftarrow(1-\eta_t\lambda)x` before each Adam step), from
    :math:`W_0,H_0` with i.i.d. entries ``init_scale`` :math:`\times N(0,1)` (drawn from ``rng``,
    first :math:`W_0` then :math:`H_0`).

    Parameters
    ----------
    P : array_like, shape (V, m)
        Next-token distributions (columns summing to one).
    pi : array_like, shape (m,)
        Context frequencies (positive, summing to one).
    d : int
        Embedding dimension (use :math:`d\ge V` to match the convex nuclear-norm problem).
    lam : float
        Weight decay :math:`\lambda>0`.
    eta : float
        Step size.
    max_iter : int
        Number of steps.
    record_at : array_like of int, optional
        Steps to record, between 0 and ``max_iter``; default 0 and 40 log-spaced steps.
    rng : int, numpy.random.Generator or None
        Randomness of the initialisation.
    init_scale : float
        Standard deviation of the initial entries.
    W0, H0 : array_like, optional
        Explicit initialisation (both or neither); overrides ``rng`` and ``init_scale``.
    optimizer : {"gd", "adam", "adamw"}
        Update rule. AdamW's fixed points are not the stationary points of the regularised
        objective; ``grad_norm`` still records the gradient of that objective.
    betas, eps : tuple of float, float
        Adam's parameters.
    tol : float, optional
        If given, stop when the gradient norm falls below ``tol`` (checked at the recorded
        steps) and raise :class:`~seqrmt.ConvergenceError` if it never does.
    L_target : array_like, shape (V, m), optional
        A logit matrix to compare with (e.g. the convex solution): records
        :math:`\cos(W_tH_t,L_{\rm target})`.
    store : bool
        Keep copies of :math:`W_t`, :math:`H_t`, :math:`L_t=W_tH_t` at the recorded steps.
    dtype : numpy dtype
        ``float64`` (default) or ``float32`` (about twice faster on large problems).
    milestones : sequence of int
        Steps at which the step size is multiplied by ``gamma`` (PyTorch's ``MultiStepLR``:
        step ``t`` uses ``eta * gamma**(number of milestones <= t)``).
    gamma : float
        Step-size factor at each milestone (> 0).
    progress : bool or None
        Show a progress bar (one step per tick, on stderr); ``None``: on at the paper's size, off at the book's size and under
        CI (``seqrmt.ensemble.progress_enabled``).

    Returns
    -------
    UFMRun

    Raises
    ------
    FloatingPointError
        If the iterates become NaN or infinite.

    Examples
    --------
    >>> P = np.array([[0.5, 1.0], [0.5, 0.0]])
    >>> run = train_ufm(P, [0.5, 0.5], d=2, lam=0.01, max_iter=3000, rng=0, record_at=[3000])
    >>> round(abs(float(run.balancedness[-1])), 4), round(float(run.ce_gap[-1]), 3)
    (0.0, 0.007)
    """
    P, pi, logP = _check_problem(P, pi)
    V, m = P.shape
    d = check_size(d, "d")
    lam = check_positive(lam, "lam")
    eta = check_positive(eta, "eta")
    max_iter = check_size(max_iter, "max_iter")
    init_scale = check_positive(init_scale, "init_scale")
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}")
    if len(betas) != 2 or not all(0 <= b < 1 for b in betas):
        raise ValueError(f"betas must be two numbers in [0, 1), got {betas}")
    eps = check_positive(eps, "eps")
    gamma = check_positive(gamma, "gamma")
    milestones = np.sort(np.asarray(milestones, dtype=float).ravel())
    if milestones.size and (milestones[0] < 1 or not np.all(milestones == np.round(milestones))):
        raise ValueError(f"milestones must be positive integers, got {milestones.tolist()}")
    if tol is not None:
        tol = check_positive(tol, "tol")
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    if record_at is None:
        record_at = np.concatenate([[0], log_spaced_steps(max_iter)])
    record_at = np.unique(check_array(record_at, "record_at", ndim=1).astype(int))
    if record_at[0] < 0 or record_at[-1] > max_iter:
        raise ValueError(f"record_at must lie between 0 and max_iter={max_iter}")
    if L_target is not None:
        L_target = check_array(L_target, "L_target", shape=(V, m))
        if not np.any(L_target):
            raise ValueError("L_target must not be zero")
        t_norm = np.linalg.norm(L_target)
    if (W0 is None) != (H0 is None):
        raise ValueError("give both W0 and H0, or neither")
    if W0 is None:
        gen = as_generator(rng)
        W = init_scale * gen.standard_normal((V, d))
        H = init_scale * gen.standard_normal((d, m))
    else:
        W = check_array(W0, "W0", shape=(V, d)).copy()
        H = check_array(H0, "H0", shape=(d, m)).copy()
    W, H = W.astype(dtype), H.astype(dtype)
    Pd, pid, logPd = P.astype(dtype), pi.astype(dtype), logP.astype(dtype)

    n_rec = record_at.size
    keys = ("ce_gap", "objective", "norm_W", "norm_H", "grad_norm", "cos_target")
    rec = {key: np.full(n_rec, np.nan) for key in keys}
    snaps = {"W": [], "H": [], "L": []} if store else {}
    if optimizer in ("adam", "adamw"):
        mom = [np.zeros_like(W), np.zeros_like(H)]
        vel = [np.zeros_like(W), np.zeros_like(H)]
    b1, b2 = betas
    hint = f" (optimizer {optimizer!r}, eta={eta:g}; try a smaller eta)"
    i_rec = 0
    t = 0
    stopped = False
    with single_threaded_blas():
        for t in progress_bar(range(0, max_iter + 1), desc="UFM steps", enabled=progress):
            L = W @ H
            do_rec = i_rec < n_rec and t == record_at[i_rec]
            G, gap = _softmax_residual(L, Pd, pid, logPd, need_gap=do_rec)
            gW = G @ H.T + lam * W
            gH = W.T @ G + lam * H
            if do_rec:
                _check_finite(L, "W H", t, hint)
                nW, nH = np.linalg.norm(W), np.linalg.norm(H)
                gnorm = float(np.sqrt(np.sum(gW * gW) + np.sum(gH * gH)))
                rec["ce_gap"][i_rec] = gap
                rec["objective"][i_rec] = gap + 0.5 * lam * (nW**2 + nH**2)
                rec["norm_W"][i_rec], rec["norm_H"][i_rec] = nW, nH
                rec["grad_norm"][i_rec] = gnorm
                if L_target is not None:
                    nL = np.linalg.norm(L)
                    if nL > 0:
                        rec["cos_target"][i_rec] = np.sum(L * L_target) / (nL * t_norm)
                if store:
                    snaps["W"].append(W.copy())
                    snaps["H"].append(H.copy())
                    snaps["L"].append(L.copy())
                i_rec += 1
                if tol is not None and gnorm < tol:
                    stopped = True
                    break
            if t == max_iter:
                break
            eta_t = eta * gamma ** int(np.searchsorted(milestones, t, side="right"))
            if optimizer == "gd":
                W -= eta_t * gW
                H -= eta_t * gH
            else:
                k = t + 1
                for x, g, mo, ve in ((W, gW, mom[0], vel[0]), (H, gH, mom[1], vel[1])):
                    if optimizer == "adamw":  # decoupled decay, gradient of CE only
                        g = g - lam * x
                        x *= 1 - eta_t * lam
                    _adam_step(x, g, mo, ve, k, eta_t, b1, b2, eps)
            if t % 256 == 0:
                _check_finite(W, "W", t + 1, hint)
    _check_finite(W, "W", t, hint)
    _check_finite(H, "H", t, hint)
    if tol is not None and not stopped:
        raise ConvergenceError(f"gradient norm did not fall below tol={tol:g} in {max_iter} steps")
    keep = slice(0, i_rec)
    return UFMRun(W=W.astype(float), H=H.astype(float), steps=record_at[keep], lam=lam,
                  eta=eta, optimizer=optimizer, snapshots=snaps,
                  **{key: val[keep] for key, val in rec.items()})


@dataclass
class LogitComparison:
    """Agreement between a trained factorisation :math:`WH` and a logit matrix :math:`L`.

    Attributes
    ----------
    cosine : float
        :math:`\\cos(WH,L)` (Frobenius).
    rel_error : float
        :math:`\\|WH-L\\|_F/\\|L\\|_F`.
    penalty : float
        :math:`\\frac12(\\|W\\|_F^2+\\|H\\|_F^2)`.
    nuclear : float
        :math:`\\|L\\|_*`, the smallest possible ``penalty`` of an exact factorisation of :math:`L`.
    balancedness : float
        :math:`(\\|W\\|_F^2-\\|H\\|_F^2)/(\\|W\\|_F^2+\\|H\\|_F^2)`.
    """

    cosine: float
    rel_error: float
    penalty: float
    nuclear: float
    balancedness: float


def compare_with_logits(W, H, L):
    r"""Compare a UFM factorisation :math:`(W,H)` with a logit matrix :math:`L`.

    Use it with the convex solution :math:`L_\lambda` of
    :math:`\min_L\mathrm{CE}(L)+\lambda\|L\|_*` at the same :math:`\lambda`: at the global
    minimum of the UFM (with :math:`d\ge\operatorname{rank}L_\lambda`), :math:`WH=L_\lambda`,
    the penalty equals :math:`\|L_\lambda\|_*` and the factors are balanced.

    Parameters
    ----------
    W : array_like, shape (V, d)
    H : array_like, shape (d, m)
        ``W @ H`` must not be zero (the cosine would be undefined).
    L : array_like, shape (V, m)
        Reference logits (not zero).

    Returns
    -------
    LogitComparison

    Raises
    ------
    ValueError
        If a shape does not match, an entry is not finite, or ``L`` or ``W @ H`` is zero.

    Examples
    --------
    >>> L = np.diag([2.0, 0.5])
    >>> c = compare_with_logits(np.sqrt(L), np.sqrt(L), L)
    >>> round(c.cosine, 4), round(c.penalty, 4), round(c.nuclear, 4)
    (1.0, 2.5, 2.5)
    """
    W, H = _check_factors(W, H)
    L = check_array(L, "L", ndim=2, shape=(W.shape[0], H.shape[1]))
    nL = np.linalg.norm(L)
    if nL == 0:
        raise ValueError("L must not be zero")
    WH = W @ H
    nWH = np.linalg.norm(WH)
    if nWH == 0:
        raise ValueError("W @ H must not be zero (the cosine with L is undefined)")
    w2, h2 = float(np.sum(W * W)), float(np.sum(H * H))
    return LogitComparison(
        cosine=float(np.sum(WH * L) / (nWH * nL)),
        rel_error=float(np.linalg.norm(WH - L) / nL),
        penalty=0.5 * (w2 + h2),
        nuclear=float(np.linalg.svd(L, compute_uv=False).sum()),
        balancedness=(w2 - h2) / (w2 + h2) if w2 + h2 > 0 else 0.0,
    )


def entropy_gap_prediction(L_mm, lam):
    r"""Leading-order excess loss :math:`\mathrm{CE}(L_\lambda)-\mathcal H\simeq\lambda\|L^{\rm mm}\|_*`.

    Along the regularisation path :math:`L_\lambda=\arg\min_L\mathrm{CE}(L)+\lambda\|L\|_*`,
    the first-order condition gives the exact identity
    :math:`\langle-\nabla\mathrm{CE}(L_\lambda),L_\lambda\rangle=\lambda\|L_\lambda\|_*`; with
    :math:`L_\lambda=L^{\rm in}+\rho L^{\rm mm}+O(1)` both sides are :math:`\rho` times
    (excess loss, resp. :math:`\lambda\|L^{\rm mm}\|_*`) up to relative corrections
    :math:`O(1/\rho)`, :math:`\rho\approx\ln(1/\lambda)`. No parameter is fitted.

    Parameters
    ----------
    L_mm : array_like, shape (V, m)
        Max-margin logits (:func:`seqrmt.ntp.svm.ntp_svm_nuclear`), not zero.
    lam : float
        Regularisation strength, positive.

    Returns
    -------
    float
        :math:`\lambda\|L^{\rm mm}\|_*`.

    Examples
    --------
    >>> from seqrmt.ntp.geometry import closed_form_max_margin
    >>> round(entropy_gap_prediction(closed_form_max_margin(5, 2), 1e-3), 6)
    0.006928
    """
    L_mm = check_array(L_mm, "L_mm", ndim=2)
    lam = check_positive(lam, "lam")
    nuc = float(np.linalg.svd(L_mm, compute_uv=False).sum())
    if nuc == 0:
        raise ValueError("L_mm must not be zero")
    return lam * nuc


def path_decomposition(path, L_in, L_mm, S):
    r"""Sparse-plus-low-rank diagnostics of logit matrices along a regularisation path.

    For each :math:`L_\lambda` of ``path`` (e.g. :func:`seqrmt.ntp.svm.logit_path` at decreasing
    :math:`\lambda`), with :math:`L_\lambda=L^{\rm in}+\rho(\lambda)L^{\rm mm}+R_\lambda`:

    * ``"rho"``: :math:`\rho(\lambda)` (:func:`seqrmt.ntp.geometry.max_margin_coefficient`);
    * ``"nuclear"``: :math:`\|L_\lambda\|_*`;
    * ``"cos_raw"`` and ``"cos_centred"``: :math:`\cos(L_\lambda,L^{\rm mm})` and
      :math:`\cos(L_\lambda-L^{\rm in},L^{\rm mm})` (Frobenius);
    * ``"dist_T"``: :math:`\|P_\mathcal T L_\lambda-L^{\rm in}\|_F`, the distance of the
      in-support part to its limit (:func:`seqrmt.ntp.geometry.project_T`).

    Parameters
    ----------
    path : sequence of array_like, each of shape (V, m)
        At least one logit matrix; none zero.
    L_in, L_mm : array_like, shape (V, m)
        In-support and max-margin logits (``L_mm`` not zero).
    S : array_like, shape (V, m)
        0/1 support matrix.

    Returns
    -------
    dict
        ``name -> numpy.ndarray`` of shape ``(len(path),)`` for the five names above.

    Examples
    --------
    >>> from seqrmt.ntp.geometry import closed_form_max_margin, k_subset_supports
    >>> L_mm, S = closed_form_max_margin(4, 2), k_subset_supports(4, 2)
    >>> dec = path_decomposition([2 * L_mm, 5 * L_mm], np.zeros((4, 6)), L_mm, S)
    >>> np.round(dec["rho"], 6).tolist(), np.round(dec["cos_raw"], 6).tolist()
    ([2.0, 5.0], [1.0, 1.0])
    """
    if isinstance(path, (str, np.ndarray)) and np.ndim(path) != 3:
        raise ValueError("path must be a sequence of (V, m) logit matrices")
    if len(path) == 0:
        raise ValueError("path must hold at least one logit matrix")
    L_mm = check_array(L_mm, "L_mm", ndim=2)
    L_in = check_array(L_in, "L_in", ndim=2, shape=L_mm.shape)
    S = check_array(S, "S", ndim=2, shape=L_mm.shape)
    out = {key: [] for key in ("rho", "nuclear", "cos_raw", "cos_centred", "dist_T")}
    for i, L in enumerate(path):
        L = check_array(L, "path", ndim=2, shape=L_mm.shape)
        if not L.any():
            raise ValueError(f"path[{i}] must not be zero (its cosine with L_mm is undefined)")
        out["rho"].append(max_margin_coefficient(L, L_in, L_mm))
        out["nuclear"].append(np.linalg.svd(L, compute_uv=False).sum())
        out["cos_raw"].append(frobenius_cosine(L, L_mm))
        out["cos_centred"].append(frobenius_cosine(L - L_in, L_mm))
        out["dist_T"].append(np.linalg.norm(project_T(L, S) - L_in))
    return {key: np.array(val, dtype=float) for key, val in out.items()}


def path_offset_estimate(P, pi, L_mm):
    r"""Heuristic offset :math:`\ln(C/\|L^{\rm mm}\|_*)` of :math:`\rho(\lambda)-\ln(1/\lambda)`, ignoring :math:`R_\lambda`.

    Along :math:`L=L^{\rm in}+\rho L^{\rm mm}` the excess loss is
    :math:`\mathrm{CE}-\mathcal H\simeq Ce^{-\rho}` with

    .. math:: C=\sum_j\hat\pi_j\,\frac{\sum_{v\notin\mathcal S_j}e^{L^{\rm in}_{vj}}}
              {\sum_{z\in\mathcal S_j}e^{L^{\rm in}_{zj}}}

    (:math:`L^{\rm in}=0` off the support), and minimising
    :math:`Ce^{-\rho}+\lambda\rho\|L^{\rm mm}\|_*` over :math:`\rho` gives
    :math:`\rho=\ln(1/\lambda)+\ln(C/\|L^{\rm mm}\|_*)`. The bounded remainder :math:`R_\lambda`
    of the true path shifts this constant by :math:`O(1)`.

    Parameters
    ----------
    P : array_like, shape (V, m)
        Next-token distributions (columns sum to one); the support is ``P > 0``.
    pi : array_like, shape (m,)
        Context weights, positive, summing to one.
    L_mm : array_like, shape (V, m)
        Max-margin logits, not zero.

    Returns
    -------
    float

    Examples
    --------
    >>> from seqrmt.ntp.geometry import closed_form_max_margin, k_subset_supports
    >>> S = k_subset_supports(4, 2)  # uniform on pairs: L_in = 0, C = (V - k) / k = 1
    >>> val = path_offset_estimate(S / 2, np.full(6, 1 / 6), closed_form_max_margin(4, 2))
    >>> bool(abs(val + np.log(3 * np.sqrt(2))) < 1e-12)  # ln(C / |L_mm|_*) = -ln(3 sqrt 2)
    True
    """
    P, pi, _ = _check_problem(P, pi)
    L_mm = check_array(L_mm, "L_mm", ndim=2, shape=P.shape)
    nuc = float(np.linalg.svd(L_mm, compute_uv=False).sum())
    if nuc == 0:
        raise ValueError("L_mm must not be zero")
    E_in = np.exp(in_support_logits(P))
    on = P > 0
    C = float(pi @ ((E_in * ~on).sum(0) / (E_in * on).sum(0)))
    return float(np.log(C / nuc))
