r"""SGD and random matrix theory (Chapter 4).

Submodules
----------
universality
    Wigner surmise, two-mode (2x2 GOE) density, Binder cumulant, unfolded spacings, spacing ratios.
dbm
    Dyson Brownian motion of symmetric matrices and the stationary Coulomb gas.
teacher_student
    The 2x2 teacher-student SGD ensemble with a degenerate target.
rbm
    The Gaussian (scalar-field) restricted Boltzmann machine and its training dynamics.
rbm_pairs
    Ensemble analysis of PCD runs: degenerate pairs, variance ratios, figures (names also in ``rbm``).
fokker_planck
    The Fokker-Planck operator of an eigenvalue, its spectrum and ground state.
weight_spectra
    Marchenko-Pastur bulk fits with a free area and power-law tail fits for trained weights.

Every public name of the submodules is available directly as ``seqrmt.dyson.<name>``.
"""

from . import dbm, fokker_planck, rbm, rbm_pairs, teacher_student, universality, weight_spectra
from .dbm import *  # noqa: F401,F403
from .fokker_planck import *  # noqa: F401,F403
from .rbm import *  # noqa: F401,F403
from .rbm_pairs import *  # noqa: F401,F403
from .teacher_student import *  # noqa: F401,F403
from .universality import *  # noqa: F401,F403
from .weight_spectra import *  # noqa: F401,F403

__all__ = (
    universality.__all__
    + dbm.__all__
    + teacher_student.__all__
    + rbm.__all__
    + rbm_pairs.__all__
    + fokker_planck.__all__
    + weight_spectra.__all__
)
