r"""Fine-tuning as regularisation towards a pretrained model (Chapter 5.4): two stories, two modules.

**L2-SP** (the setting of Hedges 2025, re-derived for isotropic data). A ridge source fit
:math:`\hat w_s(\tau)` on :math:`n_s` samples, then a target fit pulled towards it,
:math:`\hat w_t=\arg\min\frac1{n_t}\|y-Xw\|^2+\lambda\|w-\hat w_s\|^2`. The laws:
:func:`l2sp_coefficients` (the source enters through :math:`a,b,v`), :func:`target_risk` (the
target risk, which sees the source only through :math:`D^2=\|\hat w_s-w_1\|^2`) and
:func:`transfer_optimal_penalty`.

**alpha-LoRA** (El Firdoussi, Chayti, Seddik & Jaggi 2025). A ridge source classifier :math:`\tilde w`
on a Gaussian mixture and the fine-tuned :math:`w=\alpha\tilde w+a`, which is L2-SP towards
:math:`\alpha\tilde w`. The laws: :func:`alpha_lora_moments` (the mean and second moment of the
score, hence the accuracy and :math:`\alpha^*`) and :func:`alpha_lora_source_norm_sq` (the limit of
:math:`\|\tilde w\|^2`, where the authors' code goes wrong).
"""

from ._alpha_lora import AlphaLoRAMoments, alpha_lora_moments, alpha_lora_source_norm_sq
from ._l2sp import l2sp_coefficients, target_risk, transfer_optimal_penalty

__all__ = [
    "l2sp_coefficients",
    "target_risk",
    "transfer_optimal_penalty",
    "AlphaLoRAMoments",
    "alpha_lora_moments",
    "alpha_lora_source_norm_sq",
]
