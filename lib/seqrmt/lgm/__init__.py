r"""Linear generative models of next tokens: ridge read-outs analysed with random matrices.

Two models (Seddik 2023), with the corrections of the book's specification:

* **Model 1 (context model).** Contexts :math:`a=1,\dots,c` carry random embeddings
  :math:`z_a\sim N(0,I_d)`; context :math:`a` is seen with probability :math:`\alpha_a/c`
  and followed by token :math:`j` with probability :math:`(p_a)_j`. A ridge regression
  of one-hot next tokens on embeddings predicts :math:`\hat p_a=W^\top z_a`.
* **Model 2 (Gaussian mixture).** Inputs :math:`x=\mu_a+z`, :math:`z\sim N(0,I_d)`, with
  :math:`c` fixed and :math:`\|\mu_a\|=O(1)`; the same ridge read-out, now tested on fresh inputs.

Shapes: ``P`` is ``(k, c)`` with **columns** :math:`p_a` (the next-token distributions),
``M`` is ``(d, c)`` with columns :math:`\mu_a`.

Used in: Chapter 1, "A linear generative model of next tokens" and
"Generalization in a Gaussian-mixture model".

The package is split by model: ``lgm.distributions`` (the next-token distributions),
``lgm.context`` (Model 1) and ``lgm.mixture`` (Model 2). Every public name
is re-exported here, so ``seqrmt.lgm.<name>`` keeps working.
"""

from . import context, distributions, mixture
from .context import *  # noqa: F401,F403
from .distributions import *  # noqa: F401,F403
from .mixture import *  # noqa: F401,F403

__all__ = distributions.__all__ + context.__all__ + mixture.__all__

# The public names keep the module path ``seqrmt.lgm`` they had before the split (API registry
# keys, pickles of the result records); doctests still run in the submodules.
for _name in __all__:
    globals()[_name].__module__ = __name__
del _name
