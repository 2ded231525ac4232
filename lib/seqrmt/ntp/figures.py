r"""Figure helpers of Chapter 3: cosine heat maps and measured-against-formula scatter plots.

Both draw on a matplotlib ``Axes`` supplied by the caller (from
:func:`seqrmt.plotting.subplots` or ``plt.subplot_mosaic``), in the book's style
(:mod:`seqrmt.plotting`); the caller adds the colour bar, legend placement and ``plt.show()``.

Used in: Chapter 3 (notebooks ``04_max_margin_geometry`` and ``05_transformer_and_ufm``).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_array

__all__ = ["cosine_heatmap", "scatter_vs_formula"]


def _check_axes(ax, name="ax"):
    if not all(hasattr(ax, attr) for attr in ("imshow", "plot", "axline")):
        raise ValueError(f"{name} must be a matplotlib Axes, got {type(ax).__name__}")
    return ax


def _check_label(label, name):
    if label is not None and not isinstance(label, str):
        raise ValueError(f"{name} must be a string or None, got {label!r}")
    return label


def cosine_heatmap(ax, C, xlabel=None, ylabel=None, title=None, ticks=True):
    r"""Draw a cosine matrix as a heat map on the fixed colour range :math:`[-1,1]`.

    Diverging colour map ``RdBu_r`` (red: cosine one, white: zero, blue: minus one), one
    pixel per entry (no interpolation), so heat maps of different matrices are comparable.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    C : array_like, shape (n, n)
        Cosine matrix, e.g. from :func:`seqrmt.ntp.geometry.cosine_similarity`; finite.
    xlabel, ylabel, title : str, optional
    ticks : bool
        Keep the axis ticks (entry indices); ``False`` removes them.

    Returns
    -------
    matplotlib.image.AxesImage
        For the caller's colour bar.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> im = cosine_heatmap(ax, np.eye(3), "word", "word")
    >>> im.get_clim(), im.get_array().shape
    ((-1.0, 1.0), (3, 3))
    >>> plt.close(fig)
    """
    _check_axes(ax)
    C = check_array(C, "C", ndim=2)
    if C.shape[0] != C.shape[1]:
        raise ValueError(f"C must be square, got shape {C.shape}")
    for name, label in (("xlabel", xlabel), ("ylabel", ylabel), ("title", title)):
        _check_label(label, name)
    im = ax.imshow(C, cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest")
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    if title is not None:
        ax.set_title(title)
    if not ticks:
        ax.set_xticks([])
        ax.set_yticks([])
    return im


def scatter_vs_formula(ax, formula, measured, labels=None, line_label="formula", ms=4):
    r"""Scatter measured values against their closed form, one marker colour per group.

    Each group ``g`` is plotted as the points ``(formula[g], measured[g])`` (flattened); the
    identity line :math:`y=x` in the theory colour marks exact agreement.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    formula, measured : sequence of array_like
        One array per group, of equal sizes within a group; finite; at least one group.
    labels : sequence of str, optional
        Legend label of each group.
    line_label : str
        Legend label of the identity line.
    ms : float
        Marker size, positive.

    Returns
    -------
    list of matplotlib.lines.Line2D
        The groups' markers.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> lines = scatter_vs_formula(ax, [[0.0, 0.5]], [[0.0, 0.5]], labels=["k=1"])
    >>> len(lines), lines[0].get_xdata().tolist()
    (1, [0.0, 0.5])
    >>> plt.close(fig)
    """
    from ..plotting import THEORY_COLOR

    _check_axes(ax)
    if isinstance(formula, str) or isinstance(measured, str):
        raise ValueError("formula and measured must be sequences of arrays, not strings")
    if len(formula) == 0:
        raise ValueError("formula must hold at least one group")
    if len(measured) != len(formula):
        raise ValueError(f"measured must hold {len(formula)} groups like formula, got {len(measured)}")
    if labels is not None and (isinstance(labels, str) or len(labels) != len(formula)):
        raise ValueError(f"labels must be a sequence of {len(formula)} strings")
    _check_label(line_label, "line_label")
    if isinstance(ms, bool) or not isinstance(ms, (int, float)) or not np.isfinite(ms) or ms <= 0:
        raise ValueError(f"ms must be a positive number, got {ms!r}")
    lines = []
    for g, (f, y) in enumerate(zip(formula, measured)):
        f = check_array(f, "formula", ndim=None).ravel()
        y = check_array(y, "measured", ndim=None).ravel()
        if f.size != y.size:
            raise ValueError(f"measured[{g}] must have the {f.size} entries of formula[{g}]")
        lab = None if labels is None else _check_label(labels[g], "labels")
        lines += ax.plot(f, y, "o", ms=ms, label=lab)
    ax.axline((0.0, 0.0), slope=1.0, color=THEORY_COLOR, lw=1, label=line_label)
    return lines
