"""Input checks shared by every public function of :mod:`seqrmt`.

Each helper raises :class:`ValueError` with a message that names the offending
argument, so that a reader who passes a bad value learns which one it was.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "check_positive",
    "check_nonnegative",
    "check_positive_int",
    "check_array",
    "check_prob_columns",
    "check_positive_weights",
]


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


def check_prob_columns(P, name, atol=1e-8):
    """Check that ``P`` is a 2-D array whose columns are probability vectors."""
    P = check_array(P, name, ndim=2)
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
