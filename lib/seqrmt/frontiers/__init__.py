r"""Frontiers: recent random-matrix results on sequence models (Chapter 5).

Submodules (import them explicitly, e.g. ``from seqrmt.frontiers import masked``)
---------------------------------------------------------------------------------
masked
    Masked-token (leave-one-coordinate-out) ridge regression: the closed form of the predictor,
    its train and test errors through one deterministic equivalent, AR(1) and spiked data.
attention
    Attention as a kernel: ridge memorisation error, the linear-plus-semicircle equivalent of the
    attention kernel's spectrum.
icl
    In-context learning of linear regression by linear attention under a pretraining/test
    task-covariance mismatch.
transfer
    Fine-tuning as regularisation towards a pretrained model: L2-SP ridge transfer and alpha-LoRA.
features
    Random-features ridge regression and its high-dimensional (linear) equivalent.
pls
    Two-view spectra: PLS-SVD with a rank-one shared latent.
"""

__all__ = ["masked", "attention", "icl", "transfer", "features", "pls"]
