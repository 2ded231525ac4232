r"""Bilinear sequence regression (Chapter 2): the laws the chapter derives and their solvers.

A sequence :math:`X_\mu\in\mathbb R^{L\times d}` is labelled by
:math:`y_\mu=\operatorname{Tr}[X_\mu S^*]/\sqrt{dL}+\sqrt\Delta\,\xi_\mu` with a planted rank-:math:`r`
matrix :math:`S^*=U^*V^{*\top}/\sqrt r`; :math:`\alpha=n/(dL)`, :math:`\beta=L/d`, :math:`\rho=r/d`.

* the sampler :func:`sample_bsr`;
* the spectrum of signal plus noise and the rectangular RIE (Chapter 2.2): :func:`sv_density`,
  :func:`sv_hilbert`, :func:`sv_quadrature`, :func:`rie_denoise`, :func:`denoising_mmse`,
  :func:`denoising_mmse_large_beta`;
* the Bayes-optimal error and its limits (2.1, 2.3): :func:`alpha_pr`, :func:`alpha_bar`,
  :func:`ridge_error`, :func:`bayes_optimal`, :func:`bayes_optimal_curve`,
  :func:`bo_free_entropy`, :func:`low_rank_bayes_optimal`;
* the symmetric variant, a quadratic network (2.3): :func:`symmetric_stieltjes`,
  :func:`symmetric_mmse`, :func:`quadratic_network_alpha_pr`,
  :func:`quadratic_network_bayes_optimal`;
* algorithms (2.4, 2.5): :func:`gamp_rie` and its :func:`gamp_state_evolution`,
  :func:`min_nuclear_norm` with its threshold :func:`alpha_mnne` and the soft-thresholding risk
  :func:`svt_risk`.

The chapter's simulations, drivers and gradient-descent runs are written in the notebooks.
"""

from ._algorithms import gamp_rie, min_nuclear_norm
from ._model import sample_bsr
from ._spectrum import (denoising_mmse, denoising_mmse_large_beta, rie_denoise, sv_density,
                        sv_hilbert, sv_quadrature)
from ._symmetric import (quadratic_network_alpha_pr, quadratic_network_bayes_optimal,
                         symmetric_mmse, symmetric_stieltjes)
from ._theory import (alpha_bar, alpha_mnne, alpha_pr, bayes_optimal, bayes_optimal_curve,
                      bo_free_entropy, gamp_state_evolution, low_rank_bayes_optimal, ridge_error,
                      svt_risk)

__all__ = [
    "sample_bsr",
    "sv_density",
    "sv_hilbert",
    "sv_quadrature",
    "rie_denoise",
    "denoising_mmse",
    "denoising_mmse_large_beta",
    "alpha_pr",
    "alpha_bar",
    "ridge_error",
    "bayes_optimal",
    "bayes_optimal_curve",
    "bo_free_entropy",
    "low_rank_bayes_optimal",
    "gamp_state_evolution",
    "gamp_rie",
    "alpha_mnne",
    "svt_risk",
    "min_nuclear_norm",
    "symmetric_stieltjes",
    "symmetric_mmse",
    "quadratic_network_alpha_pr",
    "quadratic_network_bayes_optimal",
]
