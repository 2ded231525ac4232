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
    "seed_offset",
    "notebook_seed",
    "notebook_rng",
    "single_threaded_blas",
    "torch_device",
    "scale",
    "preset",
    "loglog_slope",
    "mean_se",
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


SEED_OFFSET_VARIABLE = "SEQRMT_SEED_OFFSET"


def seed_offset():
    """Return the seed shift selected by the environment variable ``SEQRMT_SEED_OFFSET``.

    The book's committed outputs are those of offset 0. Continuous integration
    re-runs every notebook with ``SEQRMT_SEED_OFFSET=1``: a claim in the prose
    that holds only for the committed seeds then fails the tolerance-aware
    comparison.

    Returns
    -------
    int
        The offset (0 when the variable is unset or empty).
    """
    value = os.environ.get(SEED_OFFSET_VARIABLE, "").strip()
    if not value:
        return 0
    try:
        offset = int(value)
    except ValueError:
        raise ValueError(f"{SEED_OFFSET_VARIABLE} must be a non-negative integer, got {value!r}") from None
    if offset < 0:
        raise ValueError(f"{SEED_OFFSET_VARIABLE} must be a non-negative integer, got {offset}")
    return offset


def notebook_seed(seed):
    """The seed a notebook actually uses: ``seed`` shifted by :func:`seed_offset`.

    Every notebook takes its randomness through this function (or
    :func:`notebook_rng`), once, so that one environment variable re-draws every
    random quantity of the book.

    Parameters
    ----------
    seed : int
        The notebook's base seed (non-negative).

    Returns
    -------
    int

    Examples
    --------
    >>> notebook_seed(7) == 7 + seed_offset()
    True
    """
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed}")
    return int(seed) + seed_offset()


def notebook_rng(seed):
    """A notebook's random generator: ``numpy.random.default_rng(notebook_seed(seed))``.

    Parameters
    ----------
    seed : int
        The notebook's base seed.

    Returns
    -------
    numpy.random.Generator

    Examples
    --------
    >>> rng = notebook_rng(3)
    >>> int(rng.integers(10)) == int(np.random.default_rng(3 + seed_offset()).integers(10))
    True
    """
    return np.random.default_rng(notebook_seed(seed))


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
    if np.ptp(x) == 0:
        raise ValueError("x must hold at least two distinct values (a slope needs a spread)")
    slope, _ = np.polyfit(np.log(x), np.log(y), 1)
    return float(slope)


def mean_se(samples):
    r"""Mean over independent realisations and its standard error.

    For realisations :math:`x_1,\dots,x_n` along the first axis, returns
    :math:`\bar x` and :math:`s/\sqrt n` with :math:`s` the sample standard
    deviation (``ddof=1``), elementwise over the remaining axes.

    Parameters
    ----------
    samples : array_like
        Independent realisations (draws, batches, trainings, seeds) along the
        first axis, at least 2.

    Returns
    -------
    mean, se : float or numpy.ndarray
        Shape ``samples.shape[1:]``; floats for 1-D input.

    Examples
    --------
    >>> mean_se([1.0, 2.0, 3.0, 6.0])
    (3.0, 1.0801234497346435)
    >>> m, se = mean_se(np.array([[0.0, 1.0], [2.0, 1.0]]))
    >>> m, se
    (array([1., 1.]), array([1., 0.]))
    """
    from ._validation import check_array

    x = check_array(samples, "samples")
    if x.ndim < 1 or x.shape[0] < 2:
        raise ValueError(f"samples must hold at least 2 realisations along axis 0, got shape {x.shape}")
    mean = x.mean(axis=0)
    se = x.std(axis=0, ddof=1) / np.sqrt(x.shape[0])
    if x.ndim == 1:
        return float(mean), float(se)
    return mean, se
