r"""The statistics of the book's checks: error bars, fitted exponents, and :func:`check`.

Every agreement between theory and simulation that the book claims is one visible line,

>>> check(0.352, 0.353, se=0.009, why="mean of 8 data sets")
✓ 0.352 against 0.353: 0.11 SE apart, within 4 SE (mean of 8 data sets)

which prints how far the two are and raises :class:`CheckError` when they are farther than the
stated bound: ``k`` standard errors of independent realisations, an absolute bound ``atol`` for
a deterministic value (a solver's residual, a finite-size bias the text derives), a relative bound
``rtol``, or their sum. The notebook tests (nbval) do not compare the numbers of a cell that
calls :func:`check`: its checks judge them, for the committed seeds and for shifted ones.

Used in: every chapter.
"""

from __future__ import annotations

import numbers

import numpy as np

from ._validation import check_array

__all__ = ["CheckError", "check", "mean_se", "loglog_fit"]


class CheckError(AssertionError):
    """A value is farther from its reference than its stated bound (raised by :func:`check`)."""


def _bound_text(k, se, atol, rtol):
    parts = ([f"{k:g} SE"] if se is not None else []) + ([f"{atol:.2g}"] if atol else []) \
        + ([f"{rtol:.2g} relative"] if rtol else [])
    return " + ".join(parts) if parts else "0"


def check(value, reference, *, se=None, k=4.0, atol=None, rtol=None, why):
    r"""Print the agreement of ``value`` with ``reference``; raise :class:`CheckError` beyond the bound.

    The bound on :math:`|\mathrm{value}-\mathrm{reference}|` is
    :math:`k\,\mathrm{se}+\mathrm{atol}+\mathrm{rtol}\,|\mathrm{reference}|`, elementwise for
    arrays. With ``se`` alone the line reports the distance in standard errors (the largest one
    for arrays); otherwise the largest absolute difference and the bound.

    Parameters
    ----------
    value : float or array_like
        What was measured (a Monte Carlo mean, a solver's output). A NaN fails the check.
    reference : float or array_like
        What theory predicts, broadcastable against ``value``.
    se : float or array_like, optional
        Standard error of ``value`` (of ``value - reference`` when both are random), from
        independent realisations, broadcastable against ``value``.
    k : float
        How many standard errors are allowed (default 4: a false alarm about once in 16,000
        comparisons of Gaussian errors).
    atol, rtol : float, optional
        Absolute and relative bounds, added to ``k * se``. At least one of ``se``, ``atol`` and
        ``rtol`` must be given; ``atol=0`` asks for exact equality.
    why : str
        What the error bar or the bound stands for ("mean of 8 data sets", "solver tolerance").

    Returns
    -------
    None
        The line is printed.

    Raises
    ------
    CheckError
        When some element is farther than its bound, or ``value`` holds a NaN.

    Examples
    --------
    >>> check(np.pi, 3.14159, atol=1e-5, why="six digits of pi")
    ✓ 3.142 against 3.142: |difference| 2.7e-06 ≤ 1e-05 (six digits of pi)
    >>> check([1.02, 0.97, 1.1], 1.0, se=[0.02, 0.01, 0.05], why="three estimates")
    ✓ 3 values against their references: at most 3 SE apart, within 4 SE (three estimates)
    >>> check(0.087, 0.026, se=0.015, why="mean of 8 data sets")
    Traceback (most recent call last):
    ...
    seqrmt.stats.CheckError: ✗ 0.087 against 0.026: 4.1 SE apart, beyond 4 SE (mean of 8 data sets)
    """
    if not isinstance(why, str) or not why.strip():
        raise ValueError("why must say what the error bar or the bound stands for")
    if se is None and atol is None and rtol is None:
        raise ValueError("give se, atol or rtol: the bound of the check")
    v = np.asarray(value, dtype=float)
    ref = check_array(reference, "reference")
    shape = np.broadcast_shapes(v.shape, ref.shape)
    bound = np.zeros(shape)
    if se is not None:
        se = check_array(se, "se")
        if np.any(se < 0):
            raise ValueError("se must be non-negative")
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Real) or not 0 < k < np.inf:
            raise ValueError(f"k must be a positive finite number, got {k!r}")
        bound = bound + k * se
    for name, tol in (("atol", atol), ("rtol", rtol)):
        if tol is not None and (isinstance(tol, bool) or not isinstance(tol, numbers.Real)
                                or not np.isfinite(tol) or tol < 0):
            raise ValueError(f"{name} must be a non-negative number, got {tol!r}")
    bound = bound + (atol or 0.0) + (rtol or 0.0) * np.abs(ref)
    diff = np.broadcast_to(np.abs(v - ref), shape)
    ok = bool(np.all(diff <= bound)) and not np.isnan(v).any()
    scalar = diff.size == 1
    if scalar:
        head = f"{float(v.flat[0]):.4g} against {float(ref.flat[0]):.4g}"
    else:
        head = f"{diff.size} values against their references"
    if se is not None and atol is None and rtol is None:
        se_b = np.broadcast_to(se, shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(diff == 0, 0.0, diff / se_b)
        z_text = f"{float(np.max(z)):.2g}" if np.isfinite(np.max(z)) else "inf"
        body = (f"{z_text} SE apart" if scalar else f"at most {z_text} SE apart") \
            + (f", within {k:g} SE" if ok else f", beyond {k:g} SE")
    else:
        worst = float(np.max(diff)) if diff.size else 0.0
        rel = "≤" if ok else ">"
        body = (f"|difference| {worst:.2g}" if scalar else f"largest |difference| {worst:.2g}") \
            + f" {rel} " + (f"{float(bound.flat[0]):.2g}" if scalar and se is None
                            else _bound_text(k, se, atol, rtol))
    if np.isnan(v).any():
        body = "the value is NaN"
    line = f"{head}: {body} ({why})"
    if not ok:
        raise CheckError("✗ " + line)
    print("✓ " + line)


def mean_se(samples, axis=0):
    r"""Mean over independent realisations and its standard error.

    For realisations :math:`x_1,\dots,x_n` along ``axis``: :math:`\bar x` and :math:`s/\sqrt n`
    with :math:`s` the sample standard deviation (``ddof=1``), elementwise over the other axes
    (the standard error of :func:`scipy.stats.sem`).

    Parameters
    ----------
    samples : array_like
        Independent realisations (draws, batches, trainings, seeds) along ``axis``, at least 2,
        all finite.
    axis : int
        The axis of the realisations (default the first).

    Returns
    -------
    mean, se : float or numpy.ndarray
        The shape of ``samples`` without ``axis``; floats for 1-D input.

    Examples
    --------
    >>> mean_se([1.0, 2.0, 3.0, 6.0])
    (3.0, 1.0801234497346435)
    >>> mean_se(np.array([[0.0, 2.0], [1.0, 1.0]]), axis=1)[1]
    array([1., 0.])
    """
    x = check_array(samples, "samples")
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, numbers.Integral):
        raise ValueError(f"axis must be an integer, got {axis!r}")
    if x.ndim < 1 or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of range for samples of shape {x.shape}")
    if x.shape[axis] < 2:
        raise ValueError(f"samples must hold at least 2 realisations along axis {axis}, got shape {x.shape}")
    mean = x.mean(axis=axis)
    se = x.std(axis=axis, ddof=1) / np.sqrt(x.shape[axis])
    if x.ndim == 1:
        return float(mean), float(se)
    return mean, se


def loglog_fit(x, y, y_se=None):
    r"""The exponent :math:`p` of :math:`y\approx Cx^p`, with its standard error.

    Least squares of :math:`\log y` on :math:`\log x`: :math:`\hat p=\sum_jw_j\log y_j` with
    :math:`w_j=u_j/\sum_iu_i^2`, :math:`u_j=\log x_j-\overline{\log x}`. With independent
    points of standard errors ``y_se`` (so :math:`\mathrm{se}(\log y_j)\approx
    \mathrm{se}(y_j)/y_j`), :math:`\mathrm{se}(\hat p)=(\sum_jw_j^2\,\mathrm{se}(\log y_j)^2)^{1/2}`;
    without them, the usual standard error from the residuals (at least three points).

    Parameters
    ----------
    x, y : array_like, shape (m,)
        Positive values; ``x`` with at least two distinct values.
    y_se : array_like, shape (m,), optional
        Standard errors of ``y`` from independent realisations.

    Returns
    -------
    slope, slope_se : float

    Examples
    --------
    >>> p, se = loglog_fit([10, 100, 1000], [1.0, 0.1, 0.01], [0.01, 0.001, 0.0001])
    >>> round(p, 6), round(se, 6)
    (-1.0, 0.003071)
    >>> p, se = loglog_fit([1, 2, 4, 8], [1.0, 0.26, 0.0625, 0.0158])
    >>> round(p, 2)
    -1.99
    """
    x = check_array(x, "x", ndim=1, positive=True)
    y = check_array(y, "y", ndim=1, shape=(x.size,), positive=True)
    u = np.log(x) - np.mean(np.log(x))
    if x.size < 2 or np.sum(u**2) == 0:
        raise ValueError("x must hold at least two distinct values (a slope needs a spread)")
    w = u / np.sum(u**2)
    slope = float(np.sum(w * np.log(y)))
    if y_se is not None:
        y_se = check_array(y_se, "y_se", ndim=1, shape=(x.size,))
        if np.any(y_se < 0):
            raise ValueError("y_se must be non-negative")
        return slope, float(np.sqrt(np.sum(w**2 * (y_se / y) ** 2)))
    if x.size < 3:
        raise ValueError("without y_se the slope's standard error needs at least three points")
    resid = np.log(y) - np.mean(np.log(y)) - slope * u
    return slope, float(np.sqrt(np.sum(resid**2) / (x.size - 2) / np.sum(u**2)))
