r"""A small transformer trained on next-token data, and the geometry it learns (Chapter 3).

The model is :class:`seqrmt.nanogpt.GPT` configured as the Llama-2-style network of Zhao et al.
(2024) by :meth:`seqrmt.nanogpt.GPTConfig.llama` (RMSNorm, SwiGLU, no positional encoding,
untied head). It reads the :math:`m` distinct contexts (token ids, shape ``(m, T)``) and predicts
from the **last position**. Training is full batch: one AdamW step per epoch on the loss

.. math::
    \mathrm{CE}=\sum_{j=1}^m\hat\pi_j\,\mathrm{CE}\big(\hat p_j,\ \mathbb S(\ell_j)\big)
    =\frac1n\sum_{i=1}^n-\log\mathbb S_{z_i}(\ell_{j(i)}),

the summed cross-entropy over all :math:`n` samples divided by :math:`n`.

**Conventions and shapes.**

* Next-token data in the paper's orientation: ``P`` is ``(V, m)`` (column :math:`j` is
  :math:`\hat p_j`), ``pi`` is ``(m,)``; logits are recorded as ``(V, m)``.
* Embeddings in the orientation of the whole chapter (:mod:`seqrmt.ntp.geometry`): word embeddings
  are the rows of ``W``, the head's weight ``(V, d)``; context embeddings are the columns of ``H``,
  the final normalised hidden states at the last position ``(d, m)``. Hence ``logits = W @ H``.

Used in: Chapter 3 (notebook ``05_transformer_and_ufm``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from .._validation import (
    check_array,
    check_nonnegative,
    check_positive,
    check_positive_int,
    check_size,
)
from ..nanogpt import GPTConfig, build_gpt
from ..ensemble import progress_bar
from ..runtime import torch_device
from .data import NTPData
from .geometry import (
    cosine_similarity,
    max_margin_coefficient,
    offdiagonal_correlation,
    partial_correlation,
    structural_similarity,
)
from .linear import frobenius_cosine, log_spaced_steps

__all__ = ["NTPTrainResult", "train_ntp_transformer", "structural_trajectory", "geometry_scores", "seed_table"]


@dataclass
class NTPTrainResult:
    """Outcome of :func:`train_ntp_transformer`.

    Attributes
    ----------
    loss : numpy.ndarray
        Full-batch loss after ``t`` optimiser steps, ``t = 0, ..., epochs`` (shape ``(epochs + 1,)``).
    epochs : numpy.ndarray
        The recorded epochs ``t_1 < ... < t_k``.
    W : numpy.ndarray
        Head weights (word embeddings) at the recorded epochs, ``(k, V, d)``.
    H : numpy.ndarray
        Last-position final normalised hidden states (context embeddings, columns), ``(k, d, m)``.
    logits : numpy.ndarray
        Logits ``W_t H_t`` of the distinct contexts, ``(k, V, m)``.
    model : seqrmt.nanogpt.GPT
        The trained model (on its training device).
    """

    loss: np.ndarray
    epochs: np.ndarray
    W: np.ndarray
    H: np.ndarray
    logits: np.ndarray
    model: object


def train_ntp_transformer(data, contexts, config, epochs, lr=1e-4, weight_decay=1e-6, milestones=(), gamma=0.4,
                          record=None, seed=0, device="cpu", progress=None):
    r"""Train :class:`seqrmt.nanogpt.GPT` full batch on next-token data and record its geometry.

    Every epoch is one AdamW step on :math:`\sum_j\hat\pi_j\,\mathrm{CE}(\hat p_j,\mathbb S(\ell_j))`,
    with :math:`\ell_j` the logits at the last position of context :math:`j`; the learning rate
    is multiplied by ``gamma`` at each epoch in ``milestones`` (PyTorch's ``MultiStepLR``). The
    weight decay applies to every parameter, as in the authors' code.

    Parameters
    ----------
    data : NTPData
        Next-token data: ``P`` ``(V, m)`` and ``pi`` ``(m,)``, with ``V = config.n_out``.
    contexts : array_like of int
        Token ids of the :math:`m` distinct contexts, shape ``(m, T)``, ``T <= config.block_size``,
        ids below ``config.vocab_size`` (e.g. ``TinyStoriesLike.context_ids``).
    config : seqrmt.nanogpt.GPTConfig
        The architecture (e.g. :meth:`~seqrmt.nanogpt.GPTConfig.llama`).
    epochs : int
        Number of optimiser steps (>= 1).
    lr, weight_decay : float
        AdamW's learning rate (> 0) and decoupled weight decay (>= 0); the paper uses 1e-4, 1e-6.
    milestones : sequence of int
        Epochs at which the learning rate is multiplied by ``gamma`` (the paper: 5000, ..., 25000).
    gamma : float
        Learning-rate factor at each milestone (> 0).
    record : sequence of int, optional
        Epochs (0 = initialisation) at which ``W``, ``H`` and the logits are saved
        (default: 0 and :func:`seqrmt.ntp.linear.log_spaced_steps` ``(epochs)``).
    seed : int
        Seed of the initialisation (:func:`seqrmt.nanogpt.build_gpt`).
    device : str, torch.device or None
        ``"cpu"`` by default; ``None`` picks CUDA when available (:func:`seqrmt.runtime.torch_device`).
    progress : bool or None
        Show a progress bar (one epoch per tick, on stderr); ``None``: on at the paper's size, off at the book's size and under
        CI (``seqrmt.ensemble.progress_enabled``).

    Returns
    -------
    NTPTrainResult

    Examples
    --------
    >>> data = NTPData.from_counts([[2, 0], [2, 1], [0, 3]])
    >>> cfg = GPTConfig.llama(4, out_vocab_size=3, n_layer=1, n_embd=16, head_dim=4, mlp_hidden=32)
    >>> res = train_ntp_transformer(data, [[1, 2], [3, 2]], cfg, epochs=50, lr=1e-2, record=[0, 50])
    >>> res.W.shape, res.H.shape, res.logits.shape
    ((2, 3, 16), (2, 16, 2), (2, 3, 2))
    >>> bool(res.loss[-1] - data.entropy() < 0.05 * (res.loss[0] - data.entropy()))  # CE approaches H
    True
    """
    if not isinstance(config, GPTConfig):
        raise ValueError(f"config must be a GPTConfig, got {type(config).__name__}")
    if not isinstance(data, NTPData):
        raise ValueError(f"data must be an NTPData, got {type(data).__name__}")
    P, pi = data.P, data.pi
    ctx = np.asarray(contexts)
    if ctx.ndim != 2 or ctx.shape[0] != P.shape[1] or not np.issubdtype(ctx.dtype, np.integer):
        raise ValueError(f"contexts must be an integer array of shape (m, T) with m = {P.shape[1]}, "
                         f"got {ctx.dtype} {ctx.shape}")
    if ctx.shape[1] > config.block_size or ctx.min() < 0 or ctx.max() >= config.vocab_size:
        raise ValueError("contexts must have T <= block_size and ids in [0, vocab_size)")
    if P.shape[0] != config.n_out:
        raise ValueError(f"data has V = {P.shape[0]} next tokens but config predicts {config.n_out}")
    epochs = check_size(epochs, "epochs")
    lr = check_positive(lr, "lr")
    weight_decay = check_nonnegative(weight_decay, "weight_decay")
    gamma = check_positive(gamma, "gamma")
    milestones = sorted(int(check_positive_int(e, "milestones")) for e in milestones)
    rec = np.concatenate([[0], log_spaced_steps(epochs)]) if record is None else np.unique(np.asarray(record))
    if rec.size == 0 or not np.issubdtype(rec.dtype, np.integer) or rec[0] < 0 or rec[-1] > epochs:
        raise ValueError(f"record must hold integers in [0, epochs={epochs}]")
    dev = torch_device(device)

    model = build_gpt(config, seed=seed, device=dev)
    model.train()
    idx = torch.as_tensor(ctx, dtype=torch.long, device=dev)
    target = torch.as_tensor(P.T * pi[:, None], dtype=torch.float32, device=dev)  # (m, V): pi_j p_{j,z}
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=milestones, gamma=gamma)
    losses = torch.zeros(epochs + 1, device=dev)
    saved, wanted = {"W": [], "H": [], "logits": []}, set(rec.tolist())
    for t in progress_bar(range(epochs + 1), desc="NTP transformer epochs", enabled=progress):
        h = model.hidden_states(idx)[:, -1]  # (m, d)
        logits = model.lm_head(h)  # (m, V)
        loss = -(target * F.log_softmax(logits, dim=-1)).sum()
        losses[t] = loss.detach()
        if t in wanted:
            saved["W"].append(model.lm_head.weight.detach().cpu().double().numpy().copy())
            saved["H"].append(h.detach().cpu().double().numpy().T)
            saved["logits"].append(logits.detach().cpu().double().numpy().T)
        if t < epochs:
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
    return NTPTrainResult(loss=losses.cpu().double().numpy(), epochs=rec, W=np.stack(saved["W"]),
                          H=np.stack(saved["H"]), logits=np.stack(saved["logits"]), model=model)


def structural_trajectory(Ws, Hs, targets, metric="ssim", blocks=None):
    r"""Similarity of the trained cosine matrices with target cosine matrices, per epoch.

    For each recorded pair :math:`(W_t, H_t)` the cosine matrices of the word embeddings (rows of
    :math:`W_t`, ``V x V``) and of the context embeddings (columns of :math:`H_t`, ``m x m``) are
    compared with each target by one of three measures:

    * ``"ssim"``: the structural correlation of all entries,
      :func:`seqrmt.ntp.geometry.structural_similarity` (the authors' measure; the unit diagonal
      counts);
    * ``"offdiag"``: the correlation of the off-diagonal entries,
      :func:`seqrmt.ntp.geometry.offdiagonal_correlation`;
    * ``"partial"``: the partial correlation of the off-diagonal entries given a class-block
      indicator, :func:`seqrmt.ntp.geometry.partial_correlation` (needs ``blocks``).

    Parameters
    ----------
    Ws : array_like
        Word embeddings, ``(k, V, d)`` (rows are words).
    Hs : array_like
        Context embeddings, ``(k, d, m)`` (columns are contexts).
    targets : dict
        ``name -> (kind, C)`` with ``kind`` ``"W"`` (``C`` is ``V x V``) or ``"H"`` (``C`` is ``m x m``).
    metric : {"ssim", "offdiag", "partial"}
    blocks : dict, optional
        ``kind -> Z`` with the block indicator ``Z`` (:func:`seqrmt.ntp.geometry.block_indicator`)
        of the words (``"W"``) and of the contexts (``"H"``); required for ``"partial"``.

    Returns
    -------
    dict
        ``name -> numpy.ndarray`` of shape ``(k,)``.

    Examples
    --------
    >>> Ws = np.stack([np.eye(3), -np.eye(3) + 1.0])  # orthogonal rows, then cosines 1/2 off the diagonal
    >>> out = structural_trajectory(Ws, Ws, {"words": ("W", np.eye(3))})  # symmetric: H = W
    >>> np.round(out["words"], 3).tolist()
    [0.889, 0.889]
    """
    Ws = check_array(Ws, "Ws", ndim=3)
    Hs = check_array(Hs, "Hs", ndim=3, shape=(Ws.shape[0], None, None))
    if not isinstance(targets, dict) or not targets:
        raise ValueError("targets must be a non-empty dict name -> (kind, matrix)")
    if metric not in ("ssim", "offdiag", "partial"):
        raise ValueError(f"metric must be 'ssim', 'offdiag' or 'partial', got {metric!r}")
    if metric == "partial" and not isinstance(blocks, dict):
        raise ValueError("blocks must be a dict kind -> block indicator for metric 'partial'")
    out = {}
    for name, (kind, C) in targets.items():
        if kind not in ("W", "H"):
            raise ValueError(f"targets[{name!r}] kind must be 'W' or 'H', got {kind!r}")
        X = Ws if kind == "W" else np.swapaxes(Hs, 1, 2)  # rows are the vectors compared
        C = check_array(C, f"targets[{name!r}]", ndim=2, shape=(X.shape[1], X.shape[1]))
        if metric == "ssim":
            score = structural_similarity
        elif metric == "offdiag":
            score = offdiagonal_correlation
        else:
            if kind not in blocks:
                raise ValueError(f"blocks must have an entry for kind {kind!r}")
            Z = check_array(blocks[kind], f"blocks[{kind!r}]", ndim=2, shape=C.shape)

            def score(A, B, Z=Z):
                return partial_correlation(A, B, Z)
        out[name] = np.array([score(cosine_similarity(x), C) for x in X])
    return out


def geometry_scores(W, H, L, targets, blocks, L_in, L_mm):
    r"""Every end-of-training score of one trained model against the max-margin geometry.

    For trained embeddings ``W`` (``V x d``), ``H`` (``d x m``) with logits ``L``:

    * ``"ssim/<name>"``, ``"offdiag/<name>"``, ``"partial/<name>"`` for every target: the three
      measures of :func:`structural_trajectory` (``"partial"`` given the class blocks);
    * ``"cos"`` and ``"cos_centred"``: :math:`\cos(L,L^{\rm mm})` and
      :math:`\cos(L-L^{\rm in},L^{\rm mm})` (Frobenius);
    * ``"rho"``: the coefficient of :math:`L^{\rm mm}` in :math:`L-L^{\rm in}`
      (:func:`seqrmt.ntp.geometry.max_margin_coefficient`).

    Parameters
    ----------
    W : array_like, shape (V, d)
        Rows (words) with non-constant pairwise cosines if a target has kind ``"W"``.
    H : array_like, shape (d, m)
        Columns (contexts) likewise, if a target has kind ``"H"``.
    L : array_like, shape (V, m)
        The model's logits (``W @ H`` up to the model's bias, if any); not zero.
    targets : dict
        ``name -> (kind, C)`` as in :func:`structural_trajectory`.
    blocks : dict
        ``kind -> Z`` class-block indicators as in :func:`structural_trajectory`.
    L_in, L_mm : array_like, shape (V, m)
        In-support and max-margin logits (``L_mm`` not zero).

    Returns
    -------
    dict
        ``score name -> float``.

    Examples
    --------
    >>> from seqrmt.ntp.geometry import block_indicator
    >>> W = np.array([[1.0, 0.2], [0.9, 0.5], [0.1, 1.0], [0.3, 0.8]])
    >>> C, Z = cosine_similarity(W), block_indicator([0, 0, 1, 1])
    >>> out = geometry_scores(W, W.T, W @ W.T, {"w": ("W", C), "h": ("H", C)},
    ...                       {"W": Z, "H": Z}, np.zeros((4, 4)), W @ W.T)
    >>> round(out["ssim/w"], 4), round(out["offdiag/h"], 4), round(out["rho"], 4)  # ssim: 15/16
    (0.9375, 1.0, 1.0)
    """
    W = check_array(W, "W", ndim=2)
    H = check_array(H, "H", ndim=2, shape=(W.shape[1], None))
    L = check_array(L, "L", ndim=2, shape=(W.shape[0], H.shape[1]))
    if not L.any():
        raise ValueError("L must not be zero (its cosine with L_mm is undefined)")
    kinds = {t[0] for t in targets.values()} if isinstance(targets, dict) else set()
    for kind, X, what in (("W", W, "rows"), ("H", H.T, "columns")):
        off = cosine_similarity(X)[~np.eye(X.shape[0], dtype=bool)]
        if kind in kinds and off.size and np.ptp(off) <= 1e-12:
            raise ValueError(f"{kind} must have non-constant cosines between its {what} "
                             "(the correlations with the targets are undefined)")
    out = {}
    for metric in ("ssim", "offdiag", "partial"):
        sim = structural_trajectory(W[None], H[None], targets, metric=metric, blocks=blocks)
        out.update({f"{metric}/{name}": float(v[0]) for name, v in sim.items()})
    L_in = check_array(L_in, "L_in", ndim=2, shape=L.shape)
    L_mm = check_array(L_mm, "L_mm", ndim=2, shape=L.shape)
    out["cos"] = frobenius_cosine(L, L_mm)
    out["cos_centred"] = frobenius_cosine(L - L_in, L_mm)
    out["rho"] = max_margin_coefficient(L, L_in, L_mm)
    return out


def seed_table(results, rows, title="(mean +- SD over seeds)", spread="sd"):
    """A text table of mean +- SD over independent seeds, one column per model.

    Parameters
    ----------
    results : dict
        ``model -> {score name -> array of per-seed values}`` (at least two seeds, for the SD).
    rows : sequence of (str, str, int)
        ``(label, score name, digits)`` of each row.
    title : str
        Top-left cell.
    spread : {"sd", "range"} or dict
        ``"sd"``: ``mean +- SD`` with the sample SD (``ddof=1``); ``"range"``:
        ``[min,max]`` (the honest summary of two or three seeds, whose SD is itself
        uncertain by tens of per cent; for two seeds the mean is the midpoint); a dict
        ``model -> "sd" | "range"`` (default ``"sd"``).

    Returns
    -------
    str
        Header line and one line per row: the label (as wide as the longest label or the
        title, plus one) and, per model, the mean and its spread.

    Examples
    --------
    >>> res = {"A": {"x": np.array([1.0, 3.0])}, "B": {"x": np.array([2.0, 2.0])}}
    >>> print(seed_table(res, [("score x", "x", 1)], title="(2 seeds)"))
    (2 seeds)               A              B
    score x     2.0 +- 1.4  2.0 +- 0.0
    >>> print(seed_table(res, [("score x", "x", 1)], title="(2 seeds)", spread={"A": "range"}))
    (2 seeds)               A              B
    score x     [1.0,3.0]  2.0 +- 0.0
    """
    if not isinstance(results, dict) or not results:
        raise ValueError("results must be a non-empty dict model -> {score name -> values}")
    if not isinstance(title, str):
        raise ValueError(f"title must be a string, got {title!r}")
    if isinstance(rows, str) or not hasattr(rows, "__len__") or len(rows) == 0:
        raise ValueError("rows must be a non-empty sequence of (label, score name, digits)")
    kinds = {model: (spread.get(model, "sd") if isinstance(spread, dict) else spread) for model in results}
    for kind in kinds.values():
        if kind not in ("sd", "range"):
            raise ValueError(f"spread must be 'sd', 'range' or a dict of them, got {kind!r}")
    width = max([len(title)] + [len(str(row[0])) for row in rows if isinstance(row, tuple) and row]) + 1
    lines = [f"{title:{width}s}" + "".join(f"  {model:>13s}" for model in results)]
    for row in rows:
        if not (isinstance(row, tuple) and len(row) == 3):
            raise ValueError(f"rows must hold (label, score name, digits) tuples, got {row!r}")
        label, name, digits = row
        if isinstance(digits, bool) or not isinstance(digits, (int, np.integer)) or digits < 0:
            raise ValueError(f"rows digits must be a non-negative integer, got {digits!r}")
        cells = []
        for model, res in results.items():
            if not isinstance(res, dict) or name not in res:
                raise ValueError(f"results[{model!r}] has no score {name!r}")
            x = check_array(res[name], f"results[{model!r}][{name!r}]", ndim=1)
            if x.size < 2:
                raise ValueError(f"results[{model!r}][{name!r}] needs at least two seeds")
            if kinds[model] == "range":
                cells.append(f"  [{x.min():.{digits}f},{x.max():.{digits}f}]")
            else:
                cells.append(f"  {x.mean():.{digits}f} +- {x.std(ddof=1):.{digits}f}")
        lines.append(f"{label:{width}s}" + "".join(cells))
    return "\n".join(lines)
