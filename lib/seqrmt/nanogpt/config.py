r"""Architecture of the small GPT: :class:`~seqrmt.nanogpt.GPTConfig` and its presets.

The defaults are nanoGPT's (bias-free, tied embeddings, GELU).
:meth:`~seqrmt.nanogpt.GPTConfig.aarts` gives the model of Karpathy's *ng-video-lecture* studied by
Aarts et al. (Chapter 4), :meth:`~seqrmt.nanogpt.GPTConfig.llama` the Llama-2-style model of Zhao et
al. (Chapter 3).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_choice, check_nonnegative, check_size

__all__ = ["GPTConfig"]

_QKV_KINDS = ("query", "key", "value")


def _check_nonneg_int(x, name):
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {x!r}")
    return int(x)




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
