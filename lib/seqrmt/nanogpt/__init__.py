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

**Layout** (as nanoGPT separates ``model.py`` from ``train.py``):

* :mod:`~seqrmt.nanogpt.config`: :class:`GPTConfig` and its presets;
* :mod:`~seqrmt.nanogpt.model`: the network (:class:`GPT`, :func:`build_gpt`, :func:`head_weights`);
* :mod:`~seqrmt.nanogpt.train`: the training loop (:class:`TrainConfig`, :func:`train_gpt`,
  :func:`validation_loss`);
* :mod:`~seqrmt.nanogpt.key_spectra`: the cached training runs of Chapter 4 (key matrices saved
  during training, checked by their SHA-256);
* :mod:`~seqrmt.nanogpt.cli`: ``python -m seqrmt.nanogpt --help`` trains on the Shakespeare corpus
  (:func:`seqrmt.data.shakespeare_dataset`) and writes timings and the final validation loss as
  JSON; ``python -m seqrmt.nanogpt key-spectra ...`` regenerates the cached runs.

Every public name is importable from :mod:`seqrmt.nanogpt` itself.

Used in: Chapter 3 (the transformer trained on next-token data), Chapter 4 (spectra of a small
GPT's weights).
"""

from . import key_spectra  # noqa: F401  (seqrmt.nanogpt.key_spectra after import seqrmt.nanogpt)
from .cli import main
from .config import GPTConfig
from .model import GPT, build_gpt, head_weights
from .train import TrainConfig, TrainResult, lr_at, sample_batch, train_gpt, validation_loss

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
