r"""The character-level GPT of Part 4, in one file to be read top to bottom.

This is the model of Karpathy's lecture *Let's build GPT* (``gpt.py`` of ng-video-lecture), which
Aarts et al. train on Shakespeare and whose key matrices Chapter 4.5 studies; its layout is that
of Karpathy's nanoGPT ``model.py``. It has no options: a token and a learned position
embedding, ``n_layer`` pre-LayerNorm blocks of causal self-attention and a ReLU MLP, a final
LayerNorm and an untied output layer with a bias. The lecture's per-head
``Linear(n_embd, head_size, bias=False)`` query, key and value maps are the rows of one matrix
``c_attn`` per block, as in nanoGPT (without its bias), and every weight keeps PyTorch's default
initialisation (uniform on :math:`\pm1/\sqrt{\text{fan\_in}}`), drawn in the lecture's order.

Shapes in comments: ``B`` batch, ``T`` positions, ``C = n_embd``, ``nh`` heads of ``hs = C // nh``.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["CharGPT", "validation_loss"]


class CausalSelfAttention(nn.Module):
    """``nh`` heads of causal self-attention side by side, then an output map ``Linear(C, C)``.

    The query, key and value maps of all heads are one ``(3C, C)`` weight without bias, ``c_attn``:
    rows ``[0, C)`` are the queries, ``[C, 2C)`` the keys and ``[2C, 3C)`` the values, head ``h``
    owning rows ``h hs`` to ``(h + 1) hs`` of each third. These are the lecture's per-head
    ``Linear(C, hs, bias=False)`` maps stacked and drawn as the lecture draws them; as one
    parameter, one product computes every head and the optimiser updates one tensor, not ``3 nh``.
    """

    def __init__(self, n_embd, n_head):
        super().__init__()
        self.n_head, self.head_size = n_head, n_embd // n_head
        self.c_attn = nn.Parameter(torch.empty(3 * n_embd, n_embd))
        with torch.no_grad():  # head by head, key then query then value: the lecture's order,
            for h in range(n_head):  # which fixes how a seed is consumed
                for start in (n_embd, 0, 2 * n_embd):  # the key, query and value thirds
                    rows = self.c_attn[start + h * self.head_size: start + (h + 1) * self.head_size]
                    # Linear's default: kaiming_uniform_(a=sqrt 5) is U(-1/sqrt(C), 1/sqrt(C))
                    nn.init.kaiming_uniform_(rows, a=math.sqrt(5))
        self.c_proj = nn.Linear(n_embd, n_embd)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = F.linear(x, self.c_attn).split(C, dim=2)  # 3 x (B, T, C)
        # split C into nh heads of width hs and move the heads next to the batch axis
        q, k, v = (t.view(B, T, self.n_head, self.head_size).transpose(1, 2) for t in (q, k, v))
        # softmax(q k^T / sqrt(hs)) v over the earlier positions only (the causal mask):
        # the lecture's masked softmax, in PyTorch's fused kernel
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # heads side by side again
        return self.c_proj(y)


class MLP(nn.Module):
    """Position-wise ``Linear(C, 4C)``, ReLU, ``Linear(4C, C)``."""

    def __init__(self, n_embd):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.c_proj = nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):  # (B, T, C) -> (B, T, 4C) -> (B, T, C)
        return self.c_proj(F.relu(self.c_fc(x)))


class Block(nn.Module):
    """Pre-norm residual block: ``x + attn(ln_1(x))``, then ``x + mlp(ln_2(x))``."""

    def __init__(self, n_embd, n_head):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = MLP(n_embd)

    def forward(self, x):  # (B, T, C) -> (B, T, C)
        x = x + self.attn(self.ln_1(x))  # tokens exchange information
        return x + self.mlp(self.ln_2(x))  # each token computes on its own


class CharGPT(nn.Module):
    r"""The GPT of Aarts et al. and Karpathy's lecture: 4 blocks of 4 heads, width 64, context 32.

    :math:`201\,344+129V` parameters at the default sizes; seed torch to fix the initialisation.

    Parameters
    ----------
    vocab_size : int
        Number of distinct characters ``V``.
    block_size, n_layer, n_head, n_embd : int
        Context length, blocks, heads per block and embedding width (``n_embd`` a multiple of
        ``n_head``); the defaults are the talk's model.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> model = CharGPT(vocab_size=77)
    >>> sum(p.numel() for p in model.parameters())  # 201,344 + 129 V
    211277
    >>> logits, loss = model(torch.zeros(2, 8, dtype=torch.long), torch.ones(2, 8, dtype=torch.long))
    >>> tuple(logits.shape), round(loss.item(), 1)  # near log 77 = 4.3 at initialisation
    ((2, 8, 77), 4.1)
    >>> keys = model.key_matrices()  # 4 layers x 4 heads of 16 x 64 key matrices
    >>> tuple(keys.shape), round(keys.var().item() * 192, 1)  # U(-1/8, 1/8): variance 1/192
    ((4, 4, 16, 64), 1.0)
    """

    def __init__(self, vocab_size, block_size=32, n_layer=4, n_head=4, n_embd=64):
        super().__init__()
        for name, n in [("vocab_size", vocab_size), ("block_size", block_size),
                        ("n_layer", n_layer), ("n_head", n_head), ("n_embd", n_embd)]:
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise ValueError(f"{name} must be a positive integer, got {n!r}")
        if n_embd % n_head:
            raise ValueError(f"n_embd ({n_embd}) must be a multiple of n_head ({n_head})")
        # 12 C^2 + 10 C per block, block_size C + 2 C outside, 2 C V + V for the vocabulary
        size = n_layer * (12 * n_embd + 10) * n_embd + (block_size + 2 + 2 * vocab_size) * n_embd
        if size + vocab_size > 2**31:
            raise ValueError(f"vocab_size, block_size, n_layer and n_embd give {size:.3g} parameters")
        self.vocab_size, self.block_size = vocab_size, block_size
        self.wte = nn.Embedding(vocab_size, n_embd)  # token embedding
        self.wpe = nn.Embedding(block_size, n_embd)  # learned position embedding
        self.blocks = nn.ModuleList(Block(n_embd, n_head) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size)  # untied from wte, with a bias

    def forward(self, idx, targets=None):
        """Next-character logits ``(B, T, V)``; with ``targets`` ``(B, T)``, the mean loss."""
        B, T = idx.shape
        if T > self.block_size:
            raise ValueError(f"idx has {T} positions, more than block_size={self.block_size}")
        x = self.wte(idx) + self.wpe(torch.arange(T, device=idx.device))  # (B, T, C)
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))  # (B, T, V)
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.view(B * T, -1), targets.reshape(B * T))

    def key_matrices(self):
        """The key matrices ``(n_layer, n_head, hs, C)``, detached; ``[l, h]``: block l, head h."""
        C = self.wte.embedding_dim  # rows [C, 2C) of each block's c_attn: the keys, head by head
        return torch.stack([b.attn.c_attn[C:2 * C].view(b.attn.n_head, -1, C)
                            for b in self.blocks]).detach()


@torch.no_grad()
def validation_loss(model, tokens, batch_size=512):
    """Mean next-character cross-entropy over a whole token sequence, in nats per character.

    The sequence is cut into ``(len - 1) // block_size`` non-overlapping windows (a last partial
    one is dropped), every position of every window is scored once, in evaluation mode.

    Parameters
    ----------
    model : CharGPT
    tokens : torch.Tensor
        1-D ``long`` token ids, e.g. the whole validation split.
    batch_size : int
        Windows per forward pass (the result does not depend on it).

    Returns
    -------
    float

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> model = CharGPT(5, block_size=8, n_layer=1, n_head=1, n_embd=8)
    >>> loss = validation_loss(model, torch.arange(100) % 5)  # untrained, above log 5 = 1.6 here
    >>> round(loss, 1), abs(validation_loss(model, torch.arange(100) % 5, batch_size=2) - loss) < 1e-6
    (1.9, True)
    """
    if not isinstance(model, CharGPT):
        raise ValueError(f"model must be a CharGPT, got {type(model).__name__}")
    if not (torch.is_tensor(tokens) and tokens.ndim == 1 and tokens.dtype == torch.long) or (
            tokens.numel() and not 0 <= tokens.min() <= tokens.max() < model.vocab_size):
        raise ValueError("tokens must be a 1-D torch.long tensor of ids in [0, vocab_size)")
    T = model.block_size
    n_win = (tokens.numel() - 1) // T
    if n_win < 1:
        raise ValueError(f"tokens must hold more than block_size={T} tokens")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    x_all = tokens[: n_win * T].view(n_win, T)  # windows of inputs
    y_all = tokens[1: n_win * T + 1].view(n_win, T)  # the characters that follow them
    was_training, total = model.training, 0.0
    model.eval()
    for s in range(0, n_win, batch_size):
        logits, _ = model(x_all[s:s + batch_size])  # (b, T, V)
        total += F.cross_entropy(logits.flatten(0, 1), y_all[s:s + batch_size].flatten(),
                                 reduction="sum").item()
    model.train(was_training)
    return total / (n_win * T)
