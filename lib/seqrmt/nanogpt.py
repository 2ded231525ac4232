r"""A small character-level GPT that runs on the CPU and, unchanged, on a CUDA GPU.

The model follows the layout of Karpathy's nanoGPT (``model.py``): token and learned position
embeddings, ``n_layer`` pre-LayerNorm blocks of causal self-attention and an MLP, a final
LayerNorm and a language-model head. Options reproduce the smaller model of Karpathy's
*ng-video-lecture* used by Aarts et al. (per-head ``Linear(n_embd, head_size, bias=False)``
key/query/value maps, ReLU MLP, untied head with bias, PyTorch's default initialisation):
:meth:`GPTConfig.aarts`.

**Conventions and shapes.**

* ``B`` batch, ``T`` sequence length (``<= block_size``), ``C = n_embd``, ``nh = n_head``,
  ``hs = C // nh`` (head size, or ``head_dim``), ``V = vocab_size``.
* Per-head weights are returned with shape ``(n_layer, n_head, hs, C)``: entry ``[l, h]`` is the
  weight matrix of the ``Linear(C, hs)`` map of head ``h`` in block ``l`` (a key matrix
  :math:`K\in\mathbb R^{16\times64}` for the talk's model). Its Gram matrix :math:`KK^\top` has the
  nonzero eigenvalues of :math:`X=K^\top K`.
* Training is seeded: the model's initialisation by :func:`build_gpt` (``seed``), the batches and
  dropout by :class:`TrainConfig` ``.seed``; CPU runs are bit-reproducible.

Options used by Chapter 3 (a Llama-2-style model, :meth:`GPTConfig.llama`): no positional
encoding (``pos_embedding="none"``), RMSNorm (``norm="rmsnorm"``), SwiGLU feed-forward
(``activation="swiglu"``, hidden width ``mlp_hidden``), an attention width ``n_head * head_dim``
different from ``n_embd``, Llama initialisation (``init="llama"``), an output vocabulary different
from the input one (``out_vocab_size``) and the final normalised hidden states
(:meth:`GPT.hidden_states`). Their defaults leave every earlier model unchanged.

Command line: ``python -m seqrmt.nanogpt --help`` trains on the Shakespeare corpus
(:func:`seqrmt.data.shakespeare_dataset`) and writes timings and the final validation loss as JSON.

Used in: Chapter 3 (the transformer trained on next-token data), Chapter 4 (spectra of a small
GPT's weights).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from ._validation import check_choice, check_nonnegative, check_positive, check_positive_int, check_size
from .utils import torch_device

__all__ = [
    "GPTConfig",
    "GPT",
    "build_gpt",
    "head_weights",
    "TrainConfig",
    "TrainResult",
    "lr_at",
    "sample_batch",
    "validation_loss",
    "train_gpt",
    "main",
]

_QKV_KINDS = ("query", "key", "value")


def _check_nonneg_int(x, name):
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {x!r}")
    return int(x)


def _check_ids(ids, name, high, ndim):
    """Check a tensor of token ids once: integer dtype, ``ndim``, not empty, all in ``[0, high)``.

    One ``aminmax`` pass; callers check whole token sequences once, not every batch.
    """
    if not torch.is_tensor(ids):
        raise TypeError(f"{name} must be a torch.Tensor of token ids, got {type(ids).__name__}")
    if ids.dtype.is_floating_point or ids.dtype.is_complex or ids.dtype == torch.bool:
        raise TypeError(f"{name} must have an integer dtype (token ids), got {ids.dtype}")
    if ids.ndim != ndim or ids.numel() == 0:
        raise ValueError(f"{name} must be a non-empty {ndim}-D tensor of token ids, got shape {tuple(ids.shape)}")
    lo, hi = (int(v) for v in torch.aminmax(ids))
    if lo < 0 or hi >= high:
        raise ValueError(f"{name} must hold token ids in the vocabulary [0, {high}), got values in [{lo}, {hi}]")
    return ids


# ---------------------------------------------------------------------------
# Configuration and model
# ---------------------------------------------------------------------------


@dataclass
class GPTConfig:
    """Architecture of :class:`GPT`. The defaults are nanoGPT's (bias-free, tied, GELU).

    Parameters
    ----------
    vocab_size, block_size, n_layer, n_head, n_embd : int
        Vocabulary, context length, number of blocks, heads per block, embedding width
        (``n_embd`` must be divisible by ``n_head`` unless ``head_dim`` is given).
    dropout : float
        Dropout probability in [0, 1) (embeddings, attention weights, residual branches).
    bias : bool
        Biases in the LayerNorms, the attention output and the MLP.
    tie_weights : bool
        Share the token embedding with the language-model head.
    qkv_layout : {"fused", "per_head"}
        One ``Linear(C, 3C)`` map (nanoGPT) or a ``query``/``key``/``value``
        ``Linear(C, hs)`` per head (ng-video-lecture). Both compute the same function.
    qkv_bias : bool or None
        Biases of the query/key/value maps; ``None`` follows ``bias``.
    lm_head_bias : bool
        Bias of the language-model head.
    activation : {"gelu", "relu", "swiglu"}
        MLP non-linearity. ``"swiglu"``: :math:`W_2(\\mathrm{SiLU}(W_1x)\\odot W_3x)` with three
        maps ``c_fc`` (:math:`W_1`), ``c_up`` (:math:`W_3`), ``c_proj`` (:math:`W_2`).
    mlp_ratio : int
        Hidden width of the MLP in units of ``n_embd`` (when ``mlp_hidden`` is None).
    mlp_hidden : int or None
        Hidden width of the MLP (``None``: ``mlp_ratio * n_embd``).
    init : {"gpt2", "pytorch", "llama"}
        ``"gpt2"``: normal(0, 0.02) weights, zero biases, residual projections scaled by
        ``1/sqrt(2 n_layer)`` (nanoGPT). ``"pytorch"``: PyTorch's defaults, e.g.
        :math:`U(-1/\\sqrt{\\text{fan\\_in}}, 1/\\sqrt{\\text{fan\\_in}})` for ``nn.Linear`` weights.
        ``"llama"`` (llama2.c): normal(0, 0.02) for every Linear and Embedding weight, zero biases,
        and std ``0.02/sqrt(2 n_layer)`` for the attention output ``c_proj`` (``wo``) and the SwiGLU
        map ``c_up`` (``w3``; the MLP's ``c_proj`` for the other activations).
    pos_embedding : {"learned", "none"}
        Learned absolute positions (``wpe``) or no positional encoding at all.
    norm : {"layernorm", "rmsnorm"}
        Normalisation of the blocks and of the final hidden state (eps ``1e-5``; RMSNorm has a
        weight only).
    head_dim : int or None
        Width of each attention head (``None``: ``n_embd // n_head``). The attention maps then
        act as ``Linear(n_embd, n_head * head_dim)`` and ``Linear(n_head * head_dim, n_embd)``.
    out_vocab_size : int or None
        Size of the language-model head's output (``None``: ``vocab_size``); a different value
        needs ``tie_weights=False``.

    Examples
    --------
    >>> cfg = GPTConfig.aarts(vocab_size=65)
    >>> cfg.n_embd, cfg.head_size, cfg.qkv_layout
    (64, 16, 'per_head')
    """

    vocab_size: int = 65
    block_size: int = 128
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 64
    dropout: float = 0.0
    bias: bool = False
    tie_weights: bool = True
    qkv_layout: str = "fused"
    qkv_bias: bool | None = None
    lm_head_bias: bool = False
    activation: str = "gelu"
    mlp_ratio: int = 4
    init: str = "gpt2"
    pos_embedding: str = "learned"
    norm: str = "layernorm"
    mlp_hidden: int | None = None
    head_dim: int | None = None
    out_vocab_size: int | None = None

    def __post_init__(self):
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd", "mlp_ratio"):
            check_size(getattr(self, name), name)
        for name in ("mlp_hidden", "head_dim", "out_vocab_size"):
            if getattr(self, name) is not None:
                check_size(getattr(self, name), name)
        if self.head_dim is None and self.n_embd % self.n_head:
            raise ValueError(f"n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head})")
        d = check_nonnegative(self.dropout, "dropout")
        if d >= 1:
            raise ValueError(f"dropout must lie in [0, 1), got {d}")
        check_choice(self.qkv_layout, "qkv_layout", ("fused", "per_head"))
        check_choice(self.activation, "activation", ("gelu", "relu", "swiglu"))
        check_choice(self.init, "init", ("gpt2", "pytorch", "llama"))
        check_choice(self.pos_embedding, "pos_embedding", ("learned", "none"))
        check_choice(self.norm, "norm", ("layernorm", "rmsnorm"))
        for name in ("bias", "tie_weights", "lm_head_bias"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be a bool, got {getattr(self, name)!r}")
        if self.qkv_bias is not None and not isinstance(self.qkv_bias, bool):
            raise ValueError(f"qkv_bias must be a bool or None, got {self.qkv_bias!r}")
        if self.tie_weights and self.out_vocab_size not in (None, self.vocab_size):
            raise ValueError(f"out_vocab_size ({self.out_vocab_size}) differs from vocab_size ({self.vocab_size}); "
                             "this needs tie_weights=False")

    @property
    def head_size(self):
        """``head_dim`` if given, else ``n_embd // n_head``."""
        return self.n_embd // self.n_head if self.head_dim is None else self.head_dim

    @property
    def attn_width(self):
        """``n_head * head_size``: the width of the concatenated queries, keys and values."""
        return self.n_head * self.head_size

    @property
    def hidden_width(self):
        """Hidden width of the MLP: ``mlp_hidden`` or ``mlp_ratio * n_embd``."""
        return self.mlp_ratio * self.n_embd if self.mlp_hidden is None else self.mlp_hidden

    @property
    def n_out(self):
        """Output vocabulary of the head: ``out_vocab_size`` or ``vocab_size``."""
        return self.vocab_size if self.out_vocab_size is None else self.out_vocab_size

    @classmethod
    def llama(cls, vocab_size, out_vocab_size=None, **overrides):
        """The Llama-2-style model of Zhao et al. (2024): 4 layers, width 128, 6 heads of width 20.

        Pre-RMSNorm blocks and a final RMSNorm (eps ``1e-5``), SwiGLU with hidden width
        :math:`4d=512`, no biases, no positional encoding, untied bias-free head, llama2.c's
        initialisation. Any field can be overridden (e.g. a smaller ``n_layer``).

        Examples
        --------
        >>> cfg = GPTConfig.llama(50, out_vocab_size=30)
        >>> cfg.head_size, cfg.attn_width, cfg.hidden_width, cfg.n_out
        (20, 120, 512, 30)
        """
        kw = dict(vocab_size=vocab_size, out_vocab_size=out_vocab_size, block_size=8, n_layer=4, n_head=6,
                  n_embd=128, head_dim=2 * (128 // 6 // 2), dropout=0.0, bias=False, tie_weights=False,
                  qkv_layout="fused", lm_head_bias=False, activation="swiglu", mlp_hidden=512, init="llama",
                  pos_embedding="none", norm="rmsnorm")
        kw.update(overrides)
        return cls(**kw)

    @classmethod
    def aarts(cls, vocab_size=65, **overrides):
        """The model of Aarts et al.: ng-video-lecture's GPT with 4 layers, 4 heads, width 64, block 32.

        Per-head ``Linear(64, 16, bias=False)`` key/query/value maps, biases elsewhere, ReLU MLP,
        untied head with bias, PyTorch's default initialisation. It has
        :math:`201\\,344+129V` parameters: 209,729 for ``vocab_size=65``, 211,277 for 77.

        Examples
        --------
        >>> GPTConfig.aarts(77).block_size
        32
        """
        kw = dict(vocab_size=vocab_size, block_size=32, n_layer=4, n_head=4, n_embd=64, dropout=0.0,
                  bias=True, tie_weights=False, qkv_layout="per_head", qkv_bias=False,
                  lm_head_bias=True, activation="relu", init="pytorch")
        kw.update(overrides)
        return cls(**kw)


class _Head(nn.Module):
    """Query, key and value maps ``Linear(C, hs)`` of one attention head (per-head layout)."""

    def __init__(self, n_embd, head_size, bias):
        super().__init__()
        self.key = nn.Linear(n_embd, head_size, bias=bias)
        self.query = nn.Linear(n_embd, head_size, bias=bias)
        self.value = nn.Linear(n_embd, head_size, bias=bias)


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention through ``scaled_dot_product_attention``."""

    def __init__(self, cfg):
        super().__init__()
        self.n_head, self.head_size, self.dropout = cfg.n_head, cfg.head_size, cfg.dropout
        qkv_bias = cfg.bias if cfg.qkv_bias is None else cfg.qkv_bias
        if cfg.qkv_layout == "fused":
            self.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.attn_width, bias=qkv_bias)
        else:
            self.heads = nn.ModuleList(_Head(cfg.n_embd, cfg.head_size, qkv_bias) for _ in range(cfg.n_head))
        self.c_proj = nn.Linear(cfg.attn_width, cfg.n_embd, bias=cfg.bias)
        self.resid_dropout = nn.Dropout(cfg.dropout)

    def qkv_params(self):
        """Weight ``(3A, C)`` (rows: queries, keys, values; heads in order; ``A = n_head * hs``) and bias or None."""
        if hasattr(self, "c_attn"):
            return self.c_attn.weight, self.c_attn.bias
        mods = [getattr(h, kind) for kind in _QKV_KINDS for h in self.heads]
        weight = torch.cat([m.weight for m in mods])
        bias = None if mods[0].bias is None else torch.cat([m.bias for m in mods])
        return weight, bias

    def forward(self, x):
        B, T, C = x.shape
        A = self.n_head * self.head_size
        q, k, v = F.linear(x, *self.qkv_params()).split(A, dim=2)  # 3 x (B, T, A)
        q, k, v = (t.view(B, T, self.n_head, self.head_size).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0,
                                           is_causal=True)  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, self.n_head * self.head_size)  # (B, T, A)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    """Position-wise ``Linear(C, F) -> activation -> Linear(F, C) -> dropout`` (``F`` the hidden width).

    With ``activation="swiglu"``: ``c_proj(silu(c_fc(x)) * c_up(x))``, llama's ``w2(silu(w1 x) * w3 x)``.
    """

    def __init__(self, cfg):
        super().__init__()
        hidden = cfg.hidden_width
        self.swiglu = cfg.activation == "swiglu"
        self.c_fc = nn.Linear(cfg.n_embd, hidden, bias=cfg.bias)
        if self.swiglu:
            self.c_up = nn.Linear(cfg.n_embd, hidden, bias=cfg.bias)
        self.act = {"gelu": nn.GELU, "relu": nn.ReLU, "swiglu": nn.SiLU}[cfg.activation]()
        self.c_proj = nn.Linear(hidden, cfg.n_embd, bias=cfg.bias)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x):  # (B, T, C) -> (B, T, C)
        h = self.act(self.c_fc(x))  # (B, T, F)
        if self.swiglu:
            h = h * self.c_up(x)
        return self.dropout(self.c_proj(h))


def _norm(cfg):
    if cfg.norm == "rmsnorm":
        return nn.RMSNorm(cfg.n_embd, eps=1e-5)
    return nn.LayerNorm(cfg.n_embd, bias=cfg.bias)


class Block(nn.Module):
    """Pre-norm transformer block: ``x + attn(ln(x))``, then ``x + mlp(ln(x))`` (LayerNorm or RMSNorm)."""

    def __init__(self, cfg):
        super().__init__()
        self.ln_1 = _norm(cfg)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = _norm(cfg)
        self.mlp = MLP(cfg)

    def forward(self, x):  # (B, T, C) -> (B, T, C)
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """Decoder-only transformer language model.

    Parameters
    ----------
    config : GPTConfig

    Examples
    --------
    >>> torch.manual_seed(0)  # doctest: +ELLIPSIS
    <torch._C.Generator object at ...>
    >>> model = GPT(GPTConfig.aarts(vocab_size=65))
    >>> model.num_parameters()
    209729
    >>> logits, loss = model(torch.zeros(2, 8, dtype=torch.long))
    >>> tuple(logits.shape), loss is None
    ((2, 8, 65), True)
    """

    def __init__(self, config):
        super().__init__()
        if not isinstance(config, GPTConfig):
            raise ValueError(f"config must be a GPTConfig, got {type(config).__name__}")
        self.config = cfg = config
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.block_size, cfg.n_embd) if cfg.pos_embedding == "learned" else None
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = _norm(cfg)
        self.lm_head = nn.Linear(cfg.n_embd, cfg.n_out, bias=cfg.lm_head_bias)
        if cfg.init in ("gpt2", "llama"):
            self.apply(self._init_gpt2)
            scaled = ("attn.c_proj.weight", "mlp.c_up.weight" if cfg.activation == "swiglu" else "mlp.c_proj.weight")
            for name, p in self.named_parameters():
                if name.endswith("c_proj.weight" if cfg.init == "gpt2" else scaled):
                    nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg.n_layer))
        if cfg.tie_weights:
            self.lm_head.weight = self.wte.weight

    @staticmethod
    def _init_gpt2(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def num_parameters(self):
        """Number of parameters (a tied matrix counted once)."""
        return sum(p.numel() for p in self.parameters())

    def hidden_states(self, idx):
        """Final normalised hidden states ``(B, T, C)``: the inputs of the language-model head.

        ``model.lm_head(model.hidden_states(idx))`` equals the logits of ``model(idx)``;
        ``[:, -1]`` gives each sequence's last-position representation (Chapter 3's context embedding).

        Parameters
        ----------
        idx : torch.Tensor
            Token ids (``long``), shape ``(B, T)`` with ``1 <= T <= block_size``.

        Returns
        -------
        torch.Tensor

        Examples
        --------
        >>> m = build_gpt(GPTConfig.llama(12, out_vocab_size=7, n_layer=1, n_embd=16, head_dim=4, mlp_hidden=32),
        ...               device="cpu")
        >>> tuple(m.hidden_states(torch.zeros(3, 5, dtype=torch.long)).shape)
        (3, 5, 16)
        """
        return self._hidden_states(self._check_idx(idx))

    def _check_idx(self, idx):
        _check_ids(idx, "idx", self.config.vocab_size, ndim=2)
        if idx.shape[1] > self.config.block_size:
            raise ValueError(f"idx: sequence length {idx.shape[1]} exceeds block_size {self.config.block_size}")
        return idx

    def _hidden_states(self, idx):
        """:meth:`hidden_states` without the checks of ``idx`` (for callers that checked it)."""
        T = idx.shape[1]
        x = self.wte(idx)  # (B, T, C)
        if self.wpe is not None:
            x = x + self.wpe(torch.arange(T, device=idx.device))
        x = self.drop(x)
        for block in self.blocks:
            x = block(x)  # (B, T, C)
        return self.ln_f(x)

    def forward(self, idx, targets=None):
        """Logits ``(B, T, V)`` and, when ``targets`` ``(B, T)`` are given, the mean cross-entropy.

        Raises
        ------
        TypeError
            If ``idx`` or ``targets`` is not an integer tensor.
        ValueError
            If their shapes are wrong or an id lies outside the vocabulary (``vocab_size`` for
            ``idx``, ``n_out`` for ``targets``).
        """
        self._check_idx(idx)
        if targets is not None:
            _check_ids(targets, "targets", self.config.n_out, ndim=2)
            if targets.shape != idx.shape:
                raise ValueError(f"targets must have the shape of idx {tuple(idx.shape)}, got {tuple(targets.shape)}")
        return self._forward(idx, targets)

    def _forward(self, idx, targets=None):
        """:meth:`forward` without the checks (the training loop checks its token data once)."""
        B, T = idx.shape
        logits = self.lm_head(self._hidden_states(idx))  # (B, T, V)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(B * T, -1), targets.reshape(B * T))
        return logits, loss

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
        """Extend ``idx`` ``(B, T)`` by ``max_new_tokens`` sampled tokens; returns ``(B, T + max_new_tokens)``.

        Parameters
        ----------
        idx : torch.Tensor
            Context token ids (``long``), shape ``(B, T)`` with ``T >= 1``.
        max_new_tokens : int
            Number of tokens to sample (>= 0).
        temperature : float
            Logits are divided by it (> 0).
        top_k : int, optional
            Sample only among the ``top_k`` most likely tokens.
        generator : torch.Generator, optional
            For reproducible sampling.

        Raises
        ------
        TypeError
            If ``idx`` is not an integer tensor.
        ValueError
            If ``idx`` is not ``(B, T)`` with ids in ``[0, vocab_size)``, or the model samples
            from a larger output vocabulary than it reads (``n_out > vocab_size``).
        """
        max_new_tokens = check_size(max_new_tokens, "max_new_tokens", minimum=0)
        temperature = check_positive(temperature, "temperature")
        if top_k is not None:
            top_k = min(check_positive_int(top_k, "top_k"), self.config.n_out)
        _check_ids(idx, "idx", self.config.vocab_size, ndim=2)
        if self.config.n_out > self.config.vocab_size:
            raise ValueError(f"generate needs n_out <= vocab_size, got {self.config.n_out} > {self.config.vocab_size}")
        was_training = self.training
        self.eval()
        for _ in range(max_new_tokens):
            logits, _ = self._forward(idx[:, -self.config.block_size:])
            logits = logits[:, -1, :] / temperature  # (B, V)
            if top_k is not None:
                kth = torch.topk(logits, top_k).values[:, [-1]]
                logits = logits.masked_fill(logits < kth, float("-inf"))
            nxt = torch.multinomial(F.softmax(logits, dim=-1), 1, generator=generator)  # (B, 1)
            idx = torch.cat([idx, nxt], dim=1)
        self.train(was_training)
        return idx

    def head_weights(self, kind="key"):
        """Per-head ``kind`` weights, a detached tensor ``(n_layer, n_head, hs, C)`` (see :func:`head_weights`)."""
        check_choice(kind, "kind", _QKV_KINDS)
        cfg, j = self.config, _QKV_KINDS.index(kind)
        out = []
        for block in self.blocks:
            w, _ = block.attn.qkv_params()  # (3C, C)
            A = cfg.attn_width
            out.append(w[j * A:(j + 1) * A].view(cfg.n_head, cfg.head_size, cfg.n_embd))
        return torch.stack(out).detach()


def build_gpt(config, seed=0, device=None):
    """A :class:`GPT` initialised under ``torch.manual_seed(seed)`` and moved to ``device``.

    Parameters
    ----------
    config : GPTConfig
    seed : int
        Seed of the initialisation (non-negative).
    device : str, torch.device or None
        See :func:`seqrmt.utils.torch_device` (``None``: CUDA when available).

    Returns
    -------
    GPT

    Examples
    --------
    >>> m = build_gpt(GPTConfig.aarts(77), seed=1, device="cpu")
    >>> m.num_parameters(), round(float(m.head_weights("key").var()) * 192, 1)
    (211277, 1.0)
    """
    seed = _check_nonneg_int(seed, "seed")
    dev = torch_device(device)
    torch.manual_seed(seed)
    return GPT(config).to(dev)


def head_weights(model, kind="key"):
    """Per-head query, key or value matrices of every block as a float64 numpy array.

    Works for both attention layouts (fused ``c_attn`` or per-head ``Linear`` maps).

    Parameters
    ----------
    model : GPT
    kind : {"query", "key", "value"}

    Returns
    -------
    numpy.ndarray
        Shape ``(n_layer, n_head, head_size, n_embd)``; ``[l, h]`` is the weight of head ``h``'s
        ``Linear(n_embd, head_size)`` map in block ``l``.

    Examples
    --------
    >>> m = build_gpt(GPTConfig(vocab_size=10, block_size=8, n_layer=2, n_head=2, n_embd=8), device="cpu")
    >>> head_weights(m, "value").shape
    (2, 2, 4, 8)
    """
    if not isinstance(model, GPT):
        raise ValueError(f"model must be a GPT, got {type(model).__name__}")
    return model.head_weights(kind).cpu().double().numpy()


# ---------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------


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
        Training device (``None``: the model's device).
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


def train_gpt(model, train_tokens, val_tokens=None, config=None):
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

    Returns
    -------
    TrainResult

    Examples
    --------
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

    def evaluate(it):
        tr, va = _estimate_losses(model, (train_data, val_data), config, eval_gen)
        res.evals.append((it, tr, va))
        if config.verbose:
            print(f"step {it:5d}: train loss {tr:.4f}, val loss {va:.4f}", flush=True)

    model.train()
    snapshot(0)
    for it in range(config.max_iters):
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


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def _parser():
    p = argparse.ArgumentParser(prog="python -m seqrmt.nanogpt",
                                description="Train a small character-level GPT on the Shakespeare corpus.")
    p.add_argument("--style", choices=("nanogpt", "aarts"), default="nanogpt",
                   help="nanoGPT layout (default) or the per-head model of Aarts et al.")
    p.add_argument("--n-layer", type=int, default=4)
    p.add_argument("--n-head", type=int, default=4)
    p.add_argument("--n-embd", type=int, default=64)
    p.add_argument("--block-size", type=int, default=128)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--bias", action="store_true", help="biases in LayerNorm/Linear (nanogpt style)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--max-iters", type=int, default=1000)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--min-lr", type=float, default=1e-4)
    p.add_argument("--warmup-iters", type=int, default=100)
    p.add_argument("--lr-decay-iters", type=int, default=None)
    p.add_argument("--schedule", choices=("cosine", "constant"), default="cosine")
    p.add_argument("--constant-lr", action="store_true", help="same as --schedule constant")
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--beta1", type=float, default=0.9)
    p.add_argument("--beta2", type=float, default=0.99)
    p.add_argument("--grad-clip", type=float, default=1.0)
    p.add_argument("--eval-interval", type=int, default=0, help="0: no periodic evaluation")
    p.add_argument("--eval-iters", type=int, default=20)
    p.add_argument("--log-interval", type=int, default=100)
    p.add_argument("--device", default=None, help="cpu, cuda, ... (default: cuda when available)")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data", default=None, help="path of the corpus text (default: seqrmt.data.shakespeare())")
    p.add_argument("--no-verify", action="store_true", help="do not check the corpus hash")
    p.add_argument("--json", default=None, help="write the results to this file")
    p.add_argument("--quiet", action="store_true")
    return p


def main(argv=None):
    """Command-line entry point; returns the results dictionary (also written with ``--json``).

    The dictionary holds ``n_params``, ``ms_per_iter`` (median over steady steps, evaluation
    excluded), ``tokens_per_s``, ``final_val_loss`` (whole validation split), ``wall_s`` and the
    settings.
    """
    from .data import shakespeare_dataset  # noqa: PLC0415

    args = _parser().parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(check_positive_int(args.threads, "threads"))
    ds = shakespeare_dataset(path=args.data, verify=not args.no_verify)
    arch = dict(vocab_size=ds.vocab_size, n_layer=args.n_layer, n_head=args.n_head, n_embd=args.n_embd,
                block_size=args.block_size, dropout=args.dropout)
    cfg = GPTConfig.aarts(**arch) if args.style == "aarts" else GPTConfig(bias=args.bias, **arch)
    tcfg = TrainConfig(batch_size=args.batch_size, max_iters=args.max_iters, lr=args.lr, min_lr=args.min_lr,
                       warmup_iters=args.warmup_iters, lr_decay_iters=args.lr_decay_iters,
                       schedule="constant" if args.constant_lr else args.schedule,
                       weight_decay=args.weight_decay, betas=(args.beta1, args.beta2), grad_clip=args.grad_clip,
                       eval_interval=args.eval_interval, eval_iters=args.eval_iters,
                       log_interval=args.log_interval, seed=args.seed, device=args.device,
                       verbose=not args.quiet)
    model = build_gpt(cfg, seed=args.seed, device=args.device)
    t0 = time.perf_counter()
    res = train_gpt(model, ds.train, ds.val, tcfg)
    wall = time.perf_counter() - t0
    val = validation_loss(model, ds.val, batch_size=max(64, args.batch_size))
    out = {
        "n_params": model.num_parameters(),
        "ms_per_iter": res.median_ms() if args.max_iters else None,
        "tokens_per_s": res.tokens_per_second() if args.max_iters else None,
        "final_val_loss": val,
        "final_train_loss": res.log[-1][1] if res.log else None,
        "wall_s": wall,
        "device": str(next(model.parameters()).device),
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "model": dataclasses.asdict(cfg),
        "train": {k: v for k, v in dataclasses.asdict(tcfg).items() if k not in ("device",)},
    }
    if not args.quiet and args.max_iters:
        print(f"params {out['n_params']}, {out['ms_per_iter']:.1f} ms/iter, {out['tokens_per_s']:.0f} tokens/s, "
              f"val loss {val:.4f}", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=2, default=str)
    return out


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
