r"""SGD and random matrix theory (Chapter 4): the laws and samplers that the notebooks check against.

Universality
    :func:`wigner_surmise`, :func:`two_mode_density` (a degenerate pair), :func:`fit_two_mode`,
    :func:`binder_cumulant`, :func:`goe_binder_cumulant` (:math:`U_4(n)` of :math:`n` degenerate
    modes), :func:`goe_eigs`, :func:`unfolded_spacings`, :func:`spacing_ratios`.
SGD noise
    :func:`dyson_brownian_motion`; the :math:`2\times2` teacher-student ensemble
    (:func:`teacher_student_ensemble`) and its exact stationary width and Binder cumulant
    (:func:`teacher_student_width`, :func:`teacher_student_binder`).
The Gaussian RBM
    :func:`rbm_stationary_variance`, :func:`rbm_learning_bias`, :func:`rbm_learned_spectrum` (the
    ultraviolet regulator), :func:`rbm_learned_mass`; the trainers :func:`train_rbm_exact` and
    :func:`train_rbm_pcd`; :func:`fokker_planck_spectrum` of one eigenvalue.
Trained weights
    :func:`fit_mp_bulk`, the Marchenko-Pastur fit with a free area.

The simulations, fits and figures of the chapter are written in its notebooks; each notebook
that has a library version here checks its own code against it in one line.
"""

from ._rbm import (fokker_planck_spectrum, rbm_learned_mass, rbm_learned_spectrum, rbm_learning_bias,
                   rbm_stationary_variance, train_rbm_exact, train_rbm_pcd)
from ._sgd import dyson_brownian_motion, teacher_student_binder, teacher_student_ensemble, teacher_student_width
from ._universality import (binder_cumulant, fit_two_mode, goe_binder_cumulant, goe_eigs, spacing_ratios,
                            two_mode_density, unfolded_spacings, wigner_surmise)
from ._weights import fit_mp_bulk

__all__ = [
    "wigner_surmise",
    "two_mode_density",
    "fit_two_mode",
    "binder_cumulant",
    "goe_binder_cumulant",
    "goe_eigs",
    "unfolded_spacings",
    "spacing_ratios",
    "dyson_brownian_motion",
    "teacher_student_ensemble",
    "teacher_student_width",
    "teacher_student_binder",
    "rbm_stationary_variance",
    "rbm_learning_bias",
    "rbm_learned_spectrum",
    "rbm_learned_mass",
    "train_rbm_exact",
    "train_rbm_pcd",
    "fokker_planck_spectrum",
    "fit_mp_bulk",
]
