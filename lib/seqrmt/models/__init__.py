"""The book's two transformers, one readable file each, in the style of Karpathy's nanoGPT.

char_gpt
    The character-level GPT of Part 4 (Aarts et al., after Karpathy's lecture): learned positions,
    LayerNorm, per-head attention maps, a ReLU MLP.
llama_small
    The small LLaMA-style model of Part 3 (Zhao et al.): no positional encoding, RMSNorm, SwiGLU,
    a separate output vocabulary.

Both need torch; importing this package does not.
"""

__all__ = ["char_gpt", "llama_small"]
