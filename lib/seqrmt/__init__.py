"""seqrmt: the companion library of *Random Matrix Theory for Sequence Models*.

Modules
-------
rmt
    Marchenko-Pastur and semicircle laws, Stieltjes transforms, deterministic equivalents.
lgm
    Linear generative models of next tokens (Chapter 1).
plotting
    Theory-against-simulation figures in the book's style.
utils
    Random generators, single-threaded BLAS, torch devices, size presets.
"""

from . import lgm, plotting, rmt, utils
from .utils import ConvergenceError, as_generator, preset, scale, single_threaded_blas, torch_device

__version__ = "0.1.0"

__all__ = [
    "lgm",
    "plotting",
    "rmt",
    "utils",
    "ConvergenceError",
    "as_generator",
    "preset",
    "scale",
    "single_threaded_blas",
    "torch_device",
    "__version__",
]
