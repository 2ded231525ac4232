r"""Training the small GPT: batches, AdamW with warm-up and cosine decay, validation loss.

The loop of nanoGPT's ``train.py`` as a function, :func:`~seqrmt.nanogpt.train_gpt`, configured
by :class:`~seqrmt.nanogpt.TrainConfig`; it returns a :class:`~seqrmt.nanogpt.TrainResult` with
step timings, losses and
snapshots of the per-head weights. CPU runs are bit-reproducible (``TrainConfig.seed``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from .._validation import check_choice, check_nonnegative, check_positive, check_positive_int, check_size
from ..ensemble import progress_bar
from ..runtime import torch_device
from .config import _QKV_KINDS, _check_nonneg_int
from .model import GPT, _check_ids, head_weights

__all__ = ["TrainConfig", "TrainResult", "lr_at", "sample_batch", "validation_loss", "train_gpt"]


@dataclass
class TrainConfig:
    """Optimisation settings of :func:`train_gpt` (AdamW with warm-up and cosine decay by default).

    Parameters
    ----------
    batch_size : int
        Sequences per step.
    max_iters : int
        Optimizer steps (>= 0).
    lr, min_lr : float
        Peak and final learning rate (``0 <= min_lr <= lr``, ``lr > 0``).
    warmup_iters : int
        Linear warm-up steps (``lr * (it + 1) / (warmup_iters + 1)``).
    lr_decay_iters : int or None
        End of the cosine decay (``None``: ``max_iters``).
    schedule : {"cosine", "constant"}
        ``"constant"`` uses ``lr`` throughout (no warm-up).
    weight_decay : float
        AdamW decoupled weight decay, applied to parameters with two or more dimensions only.
    betas : tuple of float
        AdamW coefficients.
    grad_clip : float
        Clip the gradient norm to this value (0 disables).
    eval_interval : int
        Estimate train and validation losses every ``eval_interval`` steps and at the end (0: never).
    eval_iters : int
        Random batches per estimate.
    log_interval : int
        Print a progress line every ``log_interval`` steps when ``verbose`` (0: never).
    seed : int
        Seed of the batches and of dropout.
    device : str, torch.device or None
        Training device (``None``: the model's device); a name torch does not know is refused here.
    snapshot_iters : sequence of int
        Steps (0 = before training, up to ``max_iters``) at which the per-head weights are saved.
    snapshot_kinds : sequence of str
        Which per-head weights to save: ``"query"``, ``"key"``, ``"value"``.
    verbose : bool
        Print progress lines.
    """

    batch_size: int = 32
    max_iters: int = 1000
    lr: float = 1e-3
    min_lr: float = 1e-4
    warmup_iters: int = 100
    lr_decay_iters: int | None = None
    schedule: str = "cosine"
    weight_decay: float = 0.1
    betas: tuple = (0.9, 0.99)
    grad_clip: float = 1.0
    eval_interval: int = 0
    eval_iters: int = 20
    log_interval: int = 100
    seed: int = 0
    device: object = None
    snapshot_iters: tuple = ()
    snapshot_kinds: tuple = ("key",)
    verbose: bool = True

    def __post_init__(self):
        check_positive_int(self.batch_size, "batch_size")
        for name in ("max_iters", "warmup_iters", "eval_interval", "log_interval", "seed"):
            _check_nonneg_int(getattr(self, name), name)
        check_positive_int(self.eval_iters, "eval_iters")
        lr = check_positive(self.lr, "lr")
        if check_nonnegative(self.min_lr, "min_lr") > lr:
            raise ValueError(f"min_lr must not exceed lr, got {self.min_lr} > {lr}")
        if self.lr_decay_iters is not None:
            check_positive_int(self.lr_decay_iters, "lr_decay_iters")
        check_choice(self.schedule, "schedule", ("cosine", "constant"))
        check_nonnegative(self.weight_decay, "weight_decay")
        check_nonnegative(self.grad_clip, "grad_clip")
        if len(self.betas) != 2 or not all(0 <= float(b) < 1 for b in self.betas):
            raise ValueError(f"betas must be two numbers in [0, 1), got {self.betas!r}")
        self.snapshot_iters = tuple(sorted({_check_nonneg_int(i, "snapshot_iters") for i in self.snapshot_iters}))
        if self.snapshot_iters and self.snapshot_iters[-1] > self.max_iters:
            raise ValueError(f"snapshot_iters must not exceed max_iters={self.max_iters}")
        self.snapshot_kinds = tuple(check_choice(k, "snapshot_kinds", _QKV_KINDS) for k in self.snapshot_kinds)
        if self.device is not None:  # a misspelt device fails here, not after the data are prepared
            try:
                torch.device(self.device)
            except (RuntimeError, TypeError, ValueError) as exc:
                raise ValueError(f"device must name a torch device (e.g. 'cpu', 'cuda'), got {self.device!r}") from exc


@dataclass
class TrainResult:
    """Outcome of :func:`train_gpt`.

    Attributes
    ----------
    iter_ms : numpy.ndarray
        Wall time of each step in milliseconds (batch, forward, backward, update; evaluation excluded).
    log : list of tuple
        ``(step, train-batch loss)`` at every logged step.
    evals : list of tuple
        ``(step, train loss, validation loss)`` estimates.
    snapshots : dict
        ``snapshots[kind][step]``: per-head weights ``(n_layer, n_head, hs, C)`` (numpy float64).
    tokens_per_iter : int
        ``batch_size * block_size``.
    """

    iter_ms: np.ndarray
    log: list = field(default_factory=list)
    evals: list = field(default_factory=list)
    snapshots: dict = field(default_factory=dict)
    tokens_per_iter: int = 0

    def median_ms(self, skip=None):
        """Median step time over steady steps (the first ``skip`` are dropped; default ``min(10, n // 10)``)."""
        n = self.iter_ms.size
        if n == 0:
            raise ValueError("no training steps were timed")
        skip = min(10, n // 10) if skip is None else _check_nonneg_int(skip, "skip")
        return float(np.median(self.iter_ms[min(skip, n - 1):]))

    def tokens_per_second(self, skip=None):
        """Training throughput at the median step time."""
        return self.tokens_per_iter / (self.median_ms(skip) / 1000.0)


def lr_at(it, config):
    """Learning rate at step ``it``: linear warm-up, cosine decay to ``min_lr``, then constant.

    Examples
    --------
    >>> cfg = TrainConfig(max_iters=1000, lr=1e-3, min_lr=1e-4, warmup_iters=100)
    >>> [round(lr_at(i, cfg), 6) for i in (0, 100, 550, 1000)]
    [1e-05, 0.001, 0.00055, 0.0001]
    """
    it = _check_nonneg_int(it, "it")
    if not isinstance(config, TrainConfig):
        raise ValueError("config must be a TrainConfig")
    if config.schedule == "constant":
        return config.lr
    if it < config.warmup_iters:
        return config.lr * (it + 1) / (config.warmup_iters + 1)
    decay = config.lr_decay_iters or config.max_iters
    if it >= decay or decay <= config.warmup_iters:
        return config.min_lr
    ratio = (it - config.warmup_iters) / (decay - config.warmup_iters)
    return config.min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (config.lr - config.min_lr)


def sample_batch(data, batch_size, block_size, generator=None):
    """Random windows of a token tensor: inputs ``(B, T)`` and next-token targets ``(B, T)``.

    One vectorised gather: offsets ``i ~ U{0, ..., len - T - 1}``, ``x = data[i:i+T]``,
    ``y = data[i+1:i+T+1]``.

    Parameters
    ----------
    data : torch.Tensor
        1-D ``long`` tensor of token ids, longer than ``block_size``.
    batch_size, block_size : int
    generator : torch.Generator, optional
        CPU generator of the offsets (the windows are gathered on ``data``'s device).

    Returns
    -------
    tuple of torch.Tensor

    Examples
    --------
    >>> x, y = sample_batch(torch.arange(100), 4, 8, torch.Generator().manual_seed(0))
    >>> tuple(x.shape), bool((y - x == 1).all())
    ((4, 8), True)
    """
    batch_size = check_size(batch_size, "batch_size")
    block_size = check_positive_int(block_size, "block_size")
    if not torch.is_tensor(data) or data.ndim != 1 or data.numel() <= block_size:
        raise ValueError("data must be a 1-D tensor longer than block_size")
    if data.dtype.is_floating_point or data.dtype.is_complex or data.dtype == torch.bool:
        raise TypeError(f"data must have an integer dtype (token ids), got {data.dtype}")
    ix = torch.randint(data.numel() - block_size, (batch_size,), generator=generator)
    window = ix[:, None] + torch.arange(block_size + 1)  # (B, T + 1)
    chunk = data[window.to(data.device, non_blocking=True)]
    return chunk[:, :-1], chunk[:, 1:]


def _n_ids(model):
    """Token ids of a sequence that is both input and target lie in ``[0, _n_ids(model))``."""
    return min(model.config.vocab_size, model.config.n_out)


def _as_tokens(tokens, name, device, vocab_size):
    """A 1-D ``long`` tensor on ``device`` of ids in ``[0, vocab_size)``, checked once."""
    if not torch.is_tensor(tokens):
        arr = np.asarray(tokens)
        if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"{name} must be a 1-D integer array")
        tokens = torch.from_numpy(arr.astype(np.int64, copy=False))
    _check_ids(tokens, name, vocab_size, ndim=1)
    t = tokens.to(device=device, dtype=torch.long)
    if t.numel() < 2:
        raise ValueError(f"{name} must be a 1-D token sequence with at least two tokens")
    return t


@torch.no_grad()
def validation_loss(model, tokens, block_size=None, batch_size=64):
    """Mean next-token cross-entropy over a whole token sequence, cut into non-overlapping windows.

    The sequence is cut into ``(len - 1) // block_size`` windows of ``block_size`` inputs (the last
    partial window is dropped); every position of every window is scored once.

    Parameters
    ----------
    model : GPT
    tokens : array_like or torch.Tensor
        1-D token ids (e.g. the whole validation split).
    block_size : int, optional
        Window length (default: the model's ``block_size``; at most that).
    batch_size : int
        Windows per forward pass.

    Returns
    -------
    float
        Loss in nats per token.

    Examples
    --------
    >>> from seqrmt.nanogpt import GPTConfig, build_gpt
    >>> m = build_gpt(GPTConfig(vocab_size=5, block_size=8, n_layer=1, n_head=1, n_embd=8), device="cpu")
    >>> bool(abs(validation_loss(m, np.arange(100) % 5) - np.log(5)) < 0.3)  # about log 5 at init
    True
    """
    if not isinstance(model, GPT):
        raise ValueError(f"model must be a GPT, got {type(model).__name__}")
    T = model.config.block_size if block_size is None else check_positive_int(block_size, "block_size")
    if T > model.config.block_size:
        raise ValueError(f"block_size must not exceed the model's ({model.config.block_size}), got {T}")
    batch_size = check_positive_int(batch_size, "batch_size")
    device = next(model.parameters()).device
    data = _as_tokens(tokens, "tokens", device, _n_ids(model))
    n_win = (data.numel() - 1) // T
    if n_win < 1:
        raise ValueError("tokens must hold more than block_size tokens")
    x_all = data[: n_win * T].view(n_win, T)
    y_all = data[1: n_win * T + 1].view(n_win, T)
    was_training = model.training
    model.eval()
    total = 0.0
    for start in range(0, n_win, batch_size):
        logits, _ = model._forward(x_all[start:start + batch_size])
        total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y_all[start:start + batch_size].reshape(-1),
                                 reduction="sum").item()
    model.train(was_training)
    return total / (n_win * T)


@torch.no_grad()
def _estimate_losses(model, splits, config, generator):
    model.eval()
    out = []
    for data in splits:
        losses = [model._forward(*sample_batch(data, config.batch_size, model.config.block_size, generator))[1].item()
                  for _ in range(config.eval_iters)]
        out.append(float(np.mean(losses)))
    model.train()
    return out


def _make_optimizer(model, config, device):
    decay = [p for p in model.parameters() if p.requires_grad and p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.requires_grad and p.dim() < 2]
    groups = [{"params": decay, "weight_decay": config.weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    kw = dict(lr=config.lr, betas=tuple(float(b) for b in config.betas))
    try:
        return torch.optim.AdamW(groups, fused=True, **kw)
    except (RuntimeError, TypeError, ValueError):  # fused not supported on this device/build
        return torch.optim.AdamW(groups, foreach=True, **kw)


def train_gpt(model, train_tokens, val_tokens=None, config=None, on_snapshot=None, progress=None):
    """Train ``model`` on random windows of ``train_tokens`` with AdamW.

    Each step: sample a batch (:func:`sample_batch`), forward, backward, clip the gradient norm,
    set the learning rate (:func:`lr_at`) and update. Per-head weights are saved at
    ``config.snapshot_iters``; losses are estimated every ``config.eval_interval`` steps.
    The model is trained in place (on ``config.device`` if given).

    Parameters
    ----------
    model : GPT
    train_tokens : array_like or torch.Tensor
        1-D training token ids.
    val_tokens : array_like or torch.Tensor, optional
        1-D validation token ids (needed for periodic evaluation).
    config : TrainConfig, optional
    on_snapshot : callable, optional
        Called as ``on_snapshot(step, model)`` at every step of ``config.snapshot_iters``, after
        the weights are saved (e.g. to measure the whole-split validation loss there); the model
        is in training mode again afterwards.
    progress : bool or None
        Show a progress bar (one step per tick, on stderr); ``None``: on at the paper's size, off at the book's size and under
        CI (``seqrmt.ensemble.progress_enabled``).

    Returns
    -------
    TrainResult

    Examples
    --------
    >>> from seqrmt.nanogpt import GPTConfig, build_gpt
    >>> m = build_gpt(GPTConfig(vocab_size=5, block_size=8, n_layer=1, n_head=1, n_embd=8), device="cpu")
    >>> cfg = TrainConfig(batch_size=8, max_iters=3, snapshot_iters=(0, 3), verbose=False)
    >>> res = train_gpt(m, np.arange(200) % 5, config=cfg)
    >>> res.iter_ms.shape, sorted(res.snapshots["key"]), res.snapshots["key"][3].shape
    ((3,), [0, 3], (1, 1, 8, 8))
    """
    if not isinstance(model, GPT):
        raise ValueError(f"model must be a GPT, got {type(model).__name__}")
    config = TrainConfig() if config is None else config
    if not isinstance(config, TrainConfig):
        raise ValueError("config must be a TrainConfig")
    if on_snapshot is not None and not callable(on_snapshot):
        raise ValueError(f"on_snapshot must be callable or None, got {type(on_snapshot).__name__}")
    device = next(model.parameters()).device if config.device is None else torch_device(config.device)
    model.to(device)
    T = model.config.block_size
    train_data = _as_tokens(train_tokens, "train_tokens", device, _n_ids(model))
    if train_data.numel() <= T:
        raise ValueError("train_tokens must be longer than the model's block_size")
    val_data = None if val_tokens is None else _as_tokens(val_tokens, "val_tokens", device, _n_ids(model))
    if config.eval_interval and (val_data is None or val_data.numel() <= T):
        raise ValueError("periodic evaluation (eval_interval > 0) needs val_tokens longer than block_size")

    torch.manual_seed(config.seed)  # dropout
    gen = torch.Generator().manual_seed(config.seed)
    eval_gen = torch.Generator().manual_seed(config.seed + 1)
    optimizer = _make_optimizer(model, config, device)
    params = [p for p in model.parameters() if p.requires_grad]
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    res = TrainResult(iter_ms=np.zeros(config.max_iters), tokens_per_iter=config.batch_size * T,
                      snapshots={k: {} for k in config.snapshot_kinds})
    snaps = set(config.snapshot_iters)

    def snapshot(it):
        if it in snaps:
            for kind in config.snapshot_kinds:
                res.snapshots[kind][it] = head_weights(model, kind)
            if on_snapshot is not None:
                on_snapshot(it, model)
                model.train()

    def evaluate(it):
        tr, va = _estimate_losses(model, (train_data, val_data), config, eval_gen)
        res.evals.append((it, tr, va))
        if config.verbose:
            print(f"step {it:5d}: train loss {tr:.4f}, val loss {va:.4f}", flush=True)

    model.train()
    snapshot(0)
    for it in progress_bar(range(config.max_iters), desc="GPT training steps", enabled=progress):
        if config.eval_interval and it % config.eval_interval == 0:
            evaluate(it)
        t0 = time.perf_counter()
        lr = lr_at(it, config)
        for group in optimizer.param_groups:
            group["lr"] = lr
        x, y = sample_batch(train_data, config.batch_size, T, gen)
        _, loss = model._forward(x, y)  # ids checked once above
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if config.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(params, config.grad_clip, foreach=True)
        optimizer.step()
        sync()
        res.iter_ms[it] = 1000.0 * (time.perf_counter() - t0)
        last = it + 1 == config.max_iters
        if config.log_interval and (it % config.log_interval == 0 or last):
            res.log.append((it, loss.item()))
            if config.verbose:
                print(f"iter {it:5d}: loss {res.log[-1][1]:.4f}, lr {lr:.2e}, {res.iter_ms[it]:.1f} ms", flush=True)
        snapshot(it + 1)
    if config.eval_interval and config.max_iters:
        evaluate(config.max_iters)
    return res
