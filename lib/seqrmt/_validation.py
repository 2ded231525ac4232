"""Input checks shared by every public function of :mod:`seqrmt`.

Each helper raises :class:`ValueError` with a message that names the offending
argument, so that a reader who passes a bad value learns which one it was.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "ConvergenceError",
    "as_generator",
    "check_seed",
    "MAX_SIZE",
    "MAX_ELEMENTS",
    "check_positive",
    "check_nonnegative",
    "check_positive_int",
    "check_size",
    "check_allocation",
    "check_int_array",
    "check_choice",
    "check_callable",
    "check_array",
    "check_prob_columns",
    "check_positive_weights",
]


#: Largest size, count of steps or trials that an allocating (or looping) function accepts.
MAX_SIZE = 2**31 - 1
#: Largest number of entries of an array that a function allocates (2**31 float64: 16 GiB).
MAX_ELEMENTS = 2**31


class ConvergenceError(RuntimeError):
    """Raised when an iterative solver does not reach its tolerance in ``max_iter`` steps."""


def as_generator(rng=None, name="rng"):
    """A :class:`numpy.random.Generator` from an int seed, a generator (returned as it is) or ``None``."""
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, (bool, np.bool_)):
        if rng < 0:
            raise ValueError(f"{name} must be a non-negative seed, got {rng}")
        return np.random.default_rng(int(rng))
    raise ValueError(f"{name} must be an int, a numpy Generator or None, got {type(rng).__name__}")


def check_seed(rng=None, name="rng"):
    """The root of a sampler's realisations, for :func:`seqrmt.ensemble.spawn_generators`.

    An int seed, a :class:`numpy.random.SeedSequence` or a :class:`numpy.random.Generator` is
    returned as it is (a generator is not drawn from: its seed sequence spawns the children);
    ``None`` becomes a fresh seed sequence.
    """
    if rng is None:
        return np.random.SeedSequence()
    if isinstance(rng, (np.random.Generator, np.random.SeedSequence)):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, (bool, np.bool_)):
        if rng < 0:
            raise ValueError(f"{name} must be a non-negative seed, got {rng}")
        return int(rng)
    raise ValueError(f"{name} must be an int, a SeedSequence, a numpy Generator or None, "
                     f"got {type(rng).__name__}")


def _as_real_scalar(x, name):
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (numbers.Real, np.ndarray)):
        raise ValueError(f"{name} must be a real number, got {x!r}")
    x = np.asarray(x, dtype=float)
    if x.ndim != 0:
        raise ValueError(f"{name} must be a scalar, got shape {x.shape}")
    x = float(x)
    if not np.isfinite(x):
        raise ValueError(f"{name} must be finite, got {x}")
    return x


def check_positive(x, name):
    """Return ``x`` as a float after checking that it is finite and > 0."""
    x = _as_real_scalar(x, name)
    if x <= 0:
        raise ValueError(f"{name} must be positive, got {x}")
    return x


def check_nonnegative(x, name):
    """Return ``x`` as a float after checking that it is finite and >= 0."""
    x = _as_real_scalar(x, name)
    if x < 0:
        raise ValueError(f"{name} must be non-negative, got {x}")
    return x


def check_positive_int(x, name):
    """Return ``x`` as an int after checking that it is an integer >= 1."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
        raise ValueError(f"{name} must be a positive integer, got {x!r}")
    if x < 1:
        raise ValueError(f"{name} must be a positive integer, got {x}")
    return int(x)


def check_size(x, name, minimum=1):
    """Return ``x`` as an int after checking ``minimum <= x <= MAX_SIZE``.

    For sizes, numbers of steps or trials that turn into allocations or loops: an absurd value
    (``10**12``) is refused here, before anything is allocated.

    Raises
    ------
    ValueError
        If ``x`` is not an integer in ``[minimum, MAX_SIZE]``; the message names ``name``.
    """
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {x!r}")
    if not minimum <= x <= MAX_SIZE:
        raise ValueError(f"{name} must be an integer in [{minimum}, MAX_SIZE = {MAX_SIZE}], got {x}")
    return int(x)


def check_allocation(shape, name):
    """Check, before allocating, that an array of ``shape`` has at most ``MAX_ELEMENTS`` entries.

    ``shape`` holds Python ints (exact, no overflow) or ``inf`` for a size known to be huge.

    Raises
    ------
    ValueError
        If the product of ``shape`` exceeds ``MAX_ELEMENTS``; the message names ``name`` (the
        arguments that set the size).
    """
    n = math.prod(shape)
    if n > MAX_ELEMENTS:
        raise ValueError(
            f"{name} too large: an array of shape {tuple(shape)} ({n:.3g} entries) exceeds "
            f"MAX_ELEMENTS = {MAX_ELEMENTS}"
        )
    return n


def check_choice(x, name, choices):
    """Return ``x`` after checking that it is one of ``choices``."""
    if not isinstance(x, str) or x not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {x!r}")
    return x


def check_callable(f, name):
    """Return ``f`` after checking that it is callable (``ValueError`` otherwise, as elsewhere)."""
    if not callable(f):
        raise ValueError(f"{name} must be callable, got {type(f).__name__}")
    return f


def check_returned(values, name, shape=None, allow_complex=False):
    """Return what the user's callable ``name`` returned as a float (or complex) array, checked.

    A NaN or an infinity from a user's function would otherwise flow silently into the result.

    Raises
    ------
    ValueError
        If the values are not numbers, not of ``shape`` (when given) or not all finite; the message
        names ``name``.
    """
    try:
        arr = np.asarray(values, dtype=complex if allow_complex else float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must return numbers, got {type(values).__name__}") from exc
    if shape is not None and arr.shape != tuple(shape):
        raise ValueError(f"{name} must return an array of shape {tuple(shape)}, got {arr.shape}")
    finite = np.isfinite(arr)
    if not np.all(finite):
        raise ValueError(f"{name} returned {arr.size - int(np.sum(finite))} non-finite value(s) "
                         f"(NaN or inf) out of {arr.size}")
    return arr


def check_axes(ax, name="ax"):
    """Return ``ax`` after checking that it is a :class:`matplotlib.axes.Axes`."""
    from matplotlib.axes import Axes

    if not isinstance(ax, Axes):
        raise ValueError(f"{name} must be a matplotlib Axes, got {type(ax).__name__}")
    return ax


def check_axes_list(axes, name="axes"):
    """Return ``axes`` as a list after checking that it is a sequence of matplotlib Axes."""
    if isinstance(axes, (str, bytes)) or not hasattr(axes, "__len__"):
        raise ValueError(f"{name} must be a sequence of matplotlib Axes, got {type(axes).__name__}")
    out = list(np.ravel(np.asarray(axes, dtype=object))) if isinstance(axes, np.ndarray) else list(axes)
    for i, ax in enumerate(out):
        check_axes(ax, f"{name}[{i}]")
    return out


def check_label(label, name):
    """Return ``label`` after checking that it is a string or ``None`` (a legend entry)."""
    if label is not None and not isinstance(label, str):
        raise ValueError(f"{name} must be a string or None, got {type(label).__name__}")
    return label


def check_solver(solver, name="solver"):
    """Return ``solver`` after checking that it names an installed cvxpy solver.

    Without this check cvxpy reports an unknown solver as a failed (e.g. "infeasible") program.
    """
    import cvxpy  # imported here: only the cvxpy wrappers need it

    installed = cvxpy.installed_solvers()
    if not isinstance(solver, str) or solver.upper() not in installed:
        raise ValueError(f"{name} must be an installed cvxpy solver {tuple(installed)}, got {solver!r}")
    return solver


def check_int_array(a, name, low=None, high=None, ndim=None):
    """Return ``a`` as an int64 array of integers in ``[low, high)`` (bounds optional).

    Raises
    ------
    ValueError
        If ``a`` is empty, not integer-valued (a float dtype with integral values is accepted),
        of the wrong ``ndim`` or outside ``[low, high)``.
    """
    arr = check_array(a, name, ndim=ndim)
    if np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must hold integers")
    if low is not None and arr.min() < low:
        raise ValueError(f"{name} must be >= {low}, got {arr.min():g}")
    if high is not None and arr.max() >= high:
        raise ValueError(f"{name} must be < {high}, got {arr.max():g}")
    return arr.astype(np.int64)


def check_array(a, name, ndim=None, shape=None, positive=False, allow_complex=False):
    """Return ``a`` as a float (or complex) array after shape and finiteness checks.

    Parameters
    ----------
    a : array_like
        The input.
    name : str
        Argument name used in error messages.
    ndim : int, optional
        Required number of dimensions.
    shape : tuple, optional
        Required shape; ``None`` entries match any length.
    positive : bool
        Require every entry to be > 0.
    allow_complex : bool
        Keep complex input complex instead of rejecting it.
    """
    arr = np.asarray(a)
    if arr.dtype == object:
        raise ValueError(f"{name} must be a numeric array")
    if np.iscomplexobj(arr):
        if not allow_complex:
            raise ValueError(f"{name} must be real")
        arr = arr.astype(complex)
    else:
        try:
            arr = arr.astype(float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be a numeric array") from exc
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {arr.shape}")
    if shape is not None:
        if arr.ndim != len(shape) or any(
            s is not None and s != t for s, t in zip(shape, arr.shape)
        ):
            want = tuple("*" if s is None else s for s in shape)
            raise ValueError(f"{name} must have shape {want}, got {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must not contain NaN or inf")
    if positive and np.any(arr.real <= 0):
        raise ValueError(f"{name} must have positive entries")
    return arr


def check_prob_columns(P, name, atol=1e-8, shape=None):
    """Check that ``P`` is a 2-D array (of ``shape``, if given) whose columns are probability vectors."""
    P = check_array(P, name, ndim=2, shape=shape)
    if np.any(P < 0):
        raise ValueError(f"{name} must have non-negative entries")
    sums = P.sum(axis=0)
    if np.any(np.abs(sums - 1.0) > atol):
        worst = int(np.argmax(np.abs(sums - 1.0)))
        raise ValueError(
            f"columns of {name} must sum to one (column {worst} sums to {sums[worst]:.6g})"
        )
    return P


def check_positive_weights(w, name, size=None, mean_one=False, sum_one=False, atol=1e-8):
    """Check a 1-D array of positive weights, optionally of mean or sum one."""
    w = check_array(w, name, ndim=1, shape=None if size is None else (size,))
    if np.any(w <= 0):
        raise ValueError(f"{name} must be positive")
    if mean_one and abs(w.mean() - 1.0) > atol:
        raise ValueError(f"{name} must have mean one, got mean {w.mean():.6g}")
    if sum_one and abs(w.sum() - 1.0) > atol:
        raise ValueError(f"{name} must sum to one, got sum {w.sum():.6g}")
    return w
