r"""The decoder-only transformer: attention, MLP, block, :class:`~seqrmt.nanogpt.GPT`.

The layout is nanoGPT's ``model.py``: token and (optionally) learned position embeddings,
``n_layer`` pre-norm blocks of causal self-attention and an MLP, a final norm and a
language-model head; :class:`~seqrmt.nanogpt.GPTConfig` selects the variants.

Shapes: ``B`` batch, ``T`` sequence length (``<= block_size``), ``C = n_embd``, ``nh = n_head``,
``hs`` head size, ``A = nh * hs``, ``V`` vocabulary. Per-head weights have shape
``(n_layer, n_head, hs, C)``: entry ``[l, h]`` is the weight of head ``h``'s ``Linear(C, hs)``
map in block ``l``.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .._validation import check_choice, check_positive, check_positive_int, check_size
from ..runtime import torch_device
from .config import _QKV_KINDS, GPTConfig, _check_nonneg_int

__all__ = ["GPT", "build_gpt", "head_weights"]


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
        See :func:`seqrmt.runtime.torch_device` (``None``: CUDA when available).

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

