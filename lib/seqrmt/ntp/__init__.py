r"""The implicit geometry of next-token prediction (Chapter 3).

Submodules
----------
data
    Next-token data as sparse soft labels: distinct contexts, supports, probabilities, entropy.
corpus
    An offline TinyStories-like corpus generator and a support-only generator.
svm
    Convex programs (cvxpy): the linear NTP-SVM, feasibility, the nuclear-norm NTP-SVM, the
    regularisation path in logit space.
geometry
    Closed forms and geometry: in-support logits, W*, the projector onto F, centred supports,
    SVD factors, Gram and cosine matrices, structural similarity.
linear
    Gradient descent, normalised GD and Adam on the linear model with fixed embeddings.
ufm
    The unconstrained-features model trained by gradient descent.
figures
    Figure helpers: cosine heat maps and measured-against-formula scatter plots.
transformer
    Training the small transformer of the chapter on NTP data and reading out its geometry.
ufm_runs
    The converged UFM runs of section 3.5, trained once and cached as package data.

Every public name of the submodules is available directly as ``seqrmt.ntp.<name>``; the
``transformer`` and ``ufm_runs`` submodules (which need torch) are imported on first access.
"""

import importlib

from . import corpus, data, figures, geometry, linear, svm, ufm
from .corpus import *  # noqa: F401,F403
from .data import *  # noqa: F401,F403
from .figures import *  # noqa: F401,F403
from .geometry import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .svm import *  # noqa: F401,F403
from .ufm import *  # noqa: F401,F403

__all__ = (data.__all__ + corpus.__all__ + svm.__all__ + geometry.__all__ + linear.__all__ + ufm.__all__
           + figures.__all__)


def __getattr__(name):
    if name in ("transformer", "ufm_runs"):
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'seqrmt.ntp' has no attribute {name!r}")
