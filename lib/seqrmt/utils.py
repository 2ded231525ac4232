"""Shared utilities: random generators, BLAS threads, torch devices and presets.

Used in: every chapter.
"""

from __future__ import annotations

import contextlib
import numbers
import os

import numpy as np

__all__ = [
    "ConvergenceError",
    "as_generator",
    "single_threaded_blas",
    "torch_device",
    "scale",
    "preset",
    "loglog_slope",
]

SCALES = ("book", "paper")


class ConvergenceError(RuntimeError):
    """Raised when an iterative solver does not reach its tolerance in ``max_iter`` steps."""


def as_generator(rng=None):
    """Return a :class:`numpy.random.Generator` from ``int | Generator | None``.

    Parameters
    ----------
    rng : int, numpy.random.Generator or None
        A seed, an existing generator (returned unchanged, so its stream is
        shared with the caller) or ``None`` for fresh operating-system entropy.

    Returns
    -------
    numpy.random.Generator

    Examples
    --------
    >>> g = as_generator(0)
    >>> as_generator(g) is g
    True
    """
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, (bool, np.bool_)):
        if rng < 0:
            raise ValueError(f"rng must be a non-negative seed, got {rng}")
        return np.random.default_rng(int(rng))
    raise ValueError(f"rng must be an int, a numpy Generator or None, got {type(rng).__name__}")


@contextlib.contextmanager
def single_threaded_blas():
    """Context manager limiting BLAS to one thread.

    For the small matrices of Monte Carlo loops (a few hundred rows),
    multithreaded OpenBLAS is 10-100 times slower than one thread and its
    timings are erratic. Setting ``OPENBLAS_NUM_THREADS`` after numpy is
    imported has no effect; ``threadpoolctl`` works at any time.

    Examples
    --------
    >>> with single_threaded_blas():
    ...     _ = np.linalg.eigvalsh(np.eye(3))
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def torch_device(device=None):
    """Resolve a torch device: CUDA when available, otherwise the CPU.

    Parameters
    ----------
    device : str, torch.device or None
        ``None`` picks ``"cuda"`` when a GPU is visible and ``"cpu"``
        otherwise; anything else is passed to :class:`torch.device`.

    Returns
    -------
    torch.device
    """
    import torch

    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"device must name a torch device, got {device!r}") from exc
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device is 'cuda' but no CUDA device is available")
    return dev


def scale():
    """Return the size preset selected by the environment variable ``SEQRMT_SCALE``.

    ``"book"`` (the default) sizes every notebook to run in under a minute on two
    CPU cores; ``"paper"`` selects the sizes of the papers (minutes, a GPU helps).

    Returns
    -------
    str
        ``"book"`` or ``"paper"``.
    """
    value = os.environ.get("SEQRMT_SCALE", "book").strip().lower() or "book"
    if value not in SCALES:
        raise ValueError(f"SEQRMT_SCALE must be one of {SCALES}, got {value!r}")
    return value


def preset(book, paper):
    """Pick ``book`` or ``paper`` according to :func:`scale`.

    Examples
    --------
    >>> n_trials = preset(book=200, paper=5000)
    """
    return paper if scale() == "paper" else book


def loglog_slope(x, y):
    """Least-squares slope of ``log y`` against ``log x``.

    Parameters
    ----------
    x, y : array_like
        Positive values of equal length (at least two).

    Returns
    -------
    float
        The fitted exponent ``p`` in ``y ~ C x**p``.

    Examples
    --------
    >>> round(loglog_slope([1, 10, 100], [1, 0.1, 0.01]), 6)
    -1.0
    """
    from ._validation import check_array

    x = check_array(x, "x", ndim=1, positive=True)
    y = check_array(y, "y", ndim=1, shape=(x.size,), positive=True)
    if x.size < 2:
        raise ValueError("x must hold at least two points")
    slope, _ = np.polyfit(np.log(x), np.log(y), 1)
    return float(slope)
