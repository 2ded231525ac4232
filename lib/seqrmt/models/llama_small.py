r"""The small LLaMA-style transformer of Part 3, all of it in this file.

It is the network that Zhao et al. (2024) train on next-token data (the ``Transformer`` of their
code, after Karpathy's llama2.c), read top to bottom like nanoGPT's ``model.py``:

* token embeddings and **no positional encoding**: the causal mask is the only source of order;
* pre-norm blocks, ``x + attention(RMSNorm(x))`` then ``x + SwiGLU(RMSNorm(x))``, no biases;
* an attention width ``n_head * head_dim`` (6 x 20 = 120) different from ``n_embd`` (128);
* a final RMSNorm whose outputs are the **context embeddings** :math:`h_j` that Chapter 3.5 reads
  at the last position, and an untied head ``Linear(n_embd, out_vocab_size)`` whose rows are the
  **word embeddings** :math:`w_z`: the logits are :math:`\ell_j=Wh_j`;
* an output vocabulary (the next tokens) different from the input one (the context words);
* llama2.c's initialisation: every weight :math:`N(0,0.02^2)`, the two matrices that write into the
  residual stream scaled down by :math:`\sqrt{2\,n_{\rm layer}}`.

Shapes in the comments: ``B`` contexts, ``T`` tokens per context, ``C = n_embd``,
``nh = n_head``, ``hs = head_dim``, ``A = nh * hs``, ``F = mlp_hidden``, ``V = out_vocab_size``.
Chapter 3.5 writes the training loop; this file only defines the model.
"""

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.nn import functional as F

from .._validation import check_size

__all__ = ["LlamaConfig", "LlamaSmall"]


@dataclass
class LlamaConfig:
    """Sizes of ``LlamaSmall``; the defaults are the paper's 4-layer model.

    Parameters
    ----------
    vocab_size : int
        Input vocabulary: the words that make up contexts.
    out_vocab_size : int
        Output vocabulary: the next tokens :math:`z`, :math:`V` in Chapter 3.
    n_layer, n_head, head_dim, n_embd, mlp_hidden : int
        Blocks, attention heads, width of one head, residual width :math:`d`, SwiGLU hidden width.

    Examples
    --------
    >>> cfg = LlamaConfig(vocab_size=50, out_vocab_size=30)
    >>> cfg.n_head * cfg.head_dim, cfg.n_embd
    (120, 128)
    """

    vocab_size: int
    out_vocab_size: int
    n_layer: int = 4
    n_head: int = 6
    head_dim: int = 20  # llama2.c rounds 128 / 6 down to an even width: A = 120 != C = 128
    n_embd: int = 128
    mlp_hidden: int = 512  # 4 C, without llama's 2/3 reduction (as in the authors' code)

    def __post_init__(self):
        for name in ("vocab_size", "out_vocab_size", "n_layer", "n_head", "head_dim", "n_embd", "mlp_hidden"):
            check_size(getattr(self, name), name)


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention, queries, keys and values of all heads in one matrix."""

    def __init__(self, config):
        super().__init__()
        self.n_head, self.head_dim = config.n_head, config.head_dim
        width = config.n_head * config.head_dim  # A: need not equal C
        self.c_attn = nn.Linear(config.n_embd, 3 * width, bias=False)  # C -> 3A (llama's wq, wk, wv)
        self.c_proj = nn.Linear(width, config.n_embd, bias=False)  # A -> C (llama's wo)

    def forward(self, x, last=False):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_head * self.head_dim, dim=2)  # 3 x (B, T, A)
        if last:  # the query of the last position only: it sees every key, so no mask is needed
            q, T = q[:, -1:], 1
        # move the heads forward to be a batch dimension: (B, nh, T, hs); k, v keep all positions
        q, k, v = (t.view(B, -1, self.n_head, self.head_dim).transpose(1, 2) for t in (q, k, v))
        # softmax(q k^T / sqrt(hs)) v with the causal mask; no rotary or learned positions, so a
        # single layer sees its prefix as a multiset (exercise ex-p3-tf-positions of Chapter 3.5)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=not last)  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, self.n_head * self.head_dim)  # heads side by side
        return self.c_proj(y)  # (B, T, C)


class MLP(nn.Module):
    """SwiGLU feed-forward: ``c_proj(silu(c_fc(x)) * c_up(x))``, llama's ``w2(silu(w1 x) * w3 x)``."""

    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, config.mlp_hidden, bias=False)  # gate, C -> F (w1)
        self.c_up = nn.Linear(config.n_embd, config.mlp_hidden, bias=False)  # value, C -> F (w3)
        self.c_proj = nn.Linear(config.mlp_hidden, config.n_embd, bias=False)  # F -> C (w2)

    def forward(self, x):
        # the gate silu(x W1) multiplies the linear path x W3 entry by entry: (B, T, F)
        return self.c_proj(F.silu(self.c_fc(x)) * self.c_up(x))  # (B, T, C)


class Block(nn.Module):
    """Pre-norm residual block: ``x + attn(RMSNorm(x))``, then ``x + mlp(RMSNorm(x))``."""

    def __init__(self, config):
        super().__init__()
        # RMSNorm(x) = x / sqrt(mean(x^2) + eps) * g: no centring, no bias (llama's eps 1e-5)
        self.ln_1 = nn.RMSNorm(config.n_embd, eps=1e-5)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.RMSNorm(config.n_embd, eps=1e-5)
        self.mlp = MLP(config)

    def forward(self, x, last=False):
        # last: only the last position's output, (B, 1, C); the attention still reads every position
        x = (x[:, -1:] if last else x) + self.attn(self.ln_1(x), last)  # (B, T, C)
        return x + self.mlp(self.ln_2(x))


class LlamaSmall(nn.Module):
    """The decoder of Chapter 3.5: context tokens in, next-token logits out.

    Parameters
    ----------
    config : LlamaConfig

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> model = LlamaSmall(LlamaConfig(vocab_size=12, out_vocab_size=7, n_layer=1))
    >>> idx = torch.zeros(3, 5, dtype=torch.long)  # 3 contexts of 5 tokens
    >>> h = model.hidden_states(idx)[:, -1]  # context embeddings, last position
    >>> bool(torch.allclose(model.context_embeddings(idx), h, atol=1e-6))  # the same, cheaper
    True
    >>> tuple(h.shape), tuple(model.lm_head(h).shape), tuple(model(idx).shape)
    ((3, 128), (3, 7), (3, 5, 7))
    """

    def __init__(self, config):
        super().__init__()
        if not isinstance(config, LlamaConfig):
            raise TypeError(f"config must be a LlamaConfig, got {type(config).__name__}")
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)  # context words -> C; no position table
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layer))
        self.ln_f = nn.RMSNorm(config.n_embd, eps=1e-5)
        # untied head: the next tokens are another vocabulary than the context words
        self.lm_head = nn.Linear(config.n_embd, config.out_vocab_size, bias=False)  # rows: word embeddings
        # llama2.c's initialisation, in nanoGPT's order (so that a seed fixes the weights):
        # N(0, 0.02^2) everywhere, then the residual writers wo and w3 with std 0.02 / sqrt(2 L),
        # which keeps the variance of the residual stream of order one after L blocks
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith(("attn.c_proj.weight", "mlp.c_up.weight")):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    @staticmethod
    def _init_weights(module):
        """N(0, 0.02^2) for every Linear and Embedding weight (RMSNorm gains stay one)."""
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def hidden_states(self, idx):
        """Final normalised hidden states ``(B, T, C)`` of token ids ``idx`` ``(B, T)``: the head's inputs."""
        x = self.wte(idx)  # (B, T, C), the same vector for a word wherever it stands
        for block in self.blocks:
            x = block(x)  # (B, T, C)
        return self.ln_f(x)  # (B, T, C); [:, -1] are the context embeddings h_j

    def context_embeddings(self, idx):
        """``hidden_states(idx)[:, -1]``, ``(B, C)``, with the last block run at the last position only.

        The earlier blocks must compute every position (the last one attends to them); the last
        block needs its keys and values everywhere but its query, projection and MLP only at the
        last position, which saves about a quarter of the work of a 2-layer model.
        """
        x = self.wte(idx)  # (B, T, C)
        for block in self.blocks[:-1]:
            x = block(x)  # (B, T, C)
        return self.ln_f(self.blocks[-1](x, last=True))[:, 0]  # (B, C)

    def forward(self, idx):
        """Logits ``(B, T, V)`` at every position (Chapter 3.5 uses the last one only)."""
        return self.lm_head(self.hidden_states(idx))
