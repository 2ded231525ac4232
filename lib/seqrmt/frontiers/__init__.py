r"""Frontiers: the laws of Part 5, one module per paper (import them explicitly).

masked
    Masked-token ridge regression: the deterministic equivalents of its errors, its BBP transition.
attention
    The memorisation error of a ridge read-out on any features (the ridge baseline's closed form is
    :func:`seqrmt.rmt.ridge_memorisation_error`).
icl
    In-context learning by linear attention under a pretraining/test task-covariance mismatch.
transfer
    Fine-tuning as regularisation towards a pretrained model: L2-SP and alpha-LoRA.
features
    Random-features ridge regression: the arc-cosine kernel and the training-error equivalent.
pls
    Two-view spectra: PLS-SVD with a rank-one shared latent, in closed form.

The simulations, tables and figures of the chapter are written in its notebooks.
"""

from . import attention, features, icl, masked, pls, transfer

__all__ = ["masked", "attention", "icl", "transfer", "features", "pls"]
