"""The two figures of the book: a histogram against a density, a curve against Monte Carlo.

One style everywhere: opaque white backgrounds (readable in the dark theme),
lower-case axis labels set by the caller, line width 2, PNG output.

Figures are drawn for the book's text column (about 670 CSS pixels, 7 inches):
:data:`COLUMN_WIDTH` inches wide at most, 150 dpi so that they stay sharp on
high-density screens, and fonts of 10.5-11.5 pt: the desktop column shows them at
about 15-17 px, and a phone, which scales a figure to about 360 px, at 8-9 px
(with 9 pt the tick labels were about 5 px tall there). Multi-panel figures keep that width and stack rows rather than
putting more than two or three panels side by side (:func:`subplots`).

Used in: every chapter.
"""

from __future__ import annotations

import contextlib

import matplotlib as mpl
import numpy as np

from ._validation import check_array, check_axes, check_label, check_positive, check_size

__all__ = [
    "BOOK_STYLE",
    "COLUMN_WIDTH",
    "use_book_style",
    "book_style",
    "subplots",
    "hist_vs_density",
    "curve_vs_mc",
    "mean_spread",
]

#: Width (inches) of a figure that fills the book's text column.
COLUMN_WIDTH = 6.4
#: Default height (inches) of one row of panels.
ROW_HEIGHT = 3.2

#: Matplotlib settings of the book's figures.
BOOK_STYLE = {
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "savefig.transparent": False,
    "figure.figsize": (6.4, 3.8),
    "figure.dpi": 150,
    "savefig.dpi": 150,
    "lines.linewidth": 2.0,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.frameon": False,
    "font.size": 11.5,
    "axes.titlesize": 11.5,
    "axes.labelsize": 11.5,
    "xtick.labelsize": 10.5,
    "ytick.labelsize": 10.5,
    "legend.fontsize": 10.5,
    "axes.prop_cycle": mpl.cycler(
        color=["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf"]
    ),
}

THEORY_COLOR = "#d62728"
SIM_COLOR = "#1f77b4"


def use_book_style():
    """Apply :data:`BOOK_STYLE` globally and make inline figures PNG (call once per notebook).

    Examples
    --------
    >>> use_book_style()
    >>> mpl.rcParams["axes.grid"], mpl.rcParams["figure.dpi"]
    (True, 150.0)
    """
    mpl.rcParams.update(BOOK_STYLE)
    try:  # inline backend: PNG, never SVG (nbval would compare SVG as text)
        from matplotlib_inline.backend_inline import set_matplotlib_formats

        set_matplotlib_formats("png")
    except ImportError:  # pragma: no cover - outside IPython
        pass


@contextlib.contextmanager
def book_style():
    """Context manager applying :data:`BOOK_STYLE` temporarily.

    Examples
    --------
    >>> with book_style():
    ...     inside = mpl.rcParams["legend.frameon"]
    >>> inside
    False
    """
    with mpl.rc_context(BOOK_STYLE):
        yield


def subplots(nrows=1, ncols=1, row_height=ROW_HEIGHT, **kwargs):
    """A grid of panels that fits the book's column: :data:`COLUMN_WIDTH` wide.

    Parameters
    ----------
    nrows, ncols : int
        Grid shape; at most three panels per row (more would shrink the text
        below legibility at the column width: stack rows instead).
    row_height : float
        Height of one row in inches.
    **kwargs
        Passed to :func:`matplotlib.pyplot.subplots` (``figsize`` is set here).

    Returns
    -------
    fig : matplotlib.figure.Figure
    axes : matplotlib.axes.Axes or numpy.ndarray of them

    Examples
    --------
    >>> fig, (ax1, ax2) = subplots(1, 2)
    >>> tuple(fig.get_size_inches()) == (COLUMN_WIDTH, ROW_HEIGHT)
    True
    """
    import matplotlib.pyplot as plt

    for name, value, top in (("nrows", nrows, 6), ("ncols", ncols, 3)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
            raise ValueError(f"{name} must be an integer between 1 and {top}, got {value!r}")
    if isinstance(row_height, bool) or not isinstance(row_height, (int, float)) or not 0.5 <= row_height <= 6:
        raise ValueError(f"row_height must be a number of inches in [0.5, 6], got {row_height!r}")
    if "figsize" in kwargs:
        raise ValueError("figsize is set by subplots: pass row_height instead")
    kwargs.setdefault("layout", "constrained")
    return plt.subplots(nrows, ncols, figsize=(COLUMN_WIDTH, row_height * nrows), **kwargs)


_MAX_BINS = 100_000  # more bins than pixels in any figure


def _pair(value, name):
    """Two finite numbers ``(a, b)``."""
    pair = check_array(value, name, shape=(2,))
    return float(pair[0]), float(pair[1])


def hist_vs_density(ax, samples, x, density, bins=50, sim_label="simulation",
                    theory_label="theory", hist_range=None, atom=None, color=None):
    """Overlay a density-normalised histogram of ``samples`` and a theoretical density.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Target axes.
    samples : array_like
        Simulated values (e.g. eigenvalues).
    x, density : array_like
        Grid and theoretical density on it (same length).
    bins : int or array_like
        Histogram bins.
    sim_label, theory_label : str
        Legend entries.
    hist_range : tuple, optional
        Range of the histogram.
    atom : tuple (location, mass), optional
        A point mass of the theoretical law, drawn as a vertical stem (not to
        scale) labelled with its mass.
    color : str, optional
        Colour of the theory curve.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``, with the histogram, the density and the legend.

    Examples
    --------
    >>> fig, ax = subplots()
    >>> u = np.random.default_rng(0).uniform(size=1000)
    >>> _ = hist_vs_density(ax, u, np.linspace(0, 1, 11), np.ones(11), bins=10)
    >>> sorted(t.get_text() for t in ax.get_legend().get_texts())
    ['simulation', 'theory']
    """
    check_axes(ax)
    samples = check_array(samples, "samples").ravel()
    x = check_array(x, "x", ndim=1)
    density = check_array(density, "density", shape=(x.size,))
    if isinstance(bins, (np.ndarray, list, tuple)):
        edges = check_array(bins, "bins", ndim=1)
        if edges.size < 2 or np.any(np.diff(edges) <= 0):
            raise ValueError("bins must be an increasing sequence of at least two edges")
    else:
        check_size(bins, "bins")
        if bins > _MAX_BINS:
            raise ValueError(f"bins must be at most {_MAX_BINS}, got {bins}")
    if hist_range is not None:
        lo, hi = _pair(hist_range, "hist_range")
        if not lo < hi:
            raise ValueError(f"hist_range must be increasing, got {hist_range}")
    if atom is not None:
        loc, mass = _pair(atom, "atom")
        check_positive(mass, "atom")
    check_label(sim_label, "sim_label")
    check_label(theory_label, "theory_label")
    ax.hist(samples, bins=bins, range=hist_range, density=True, color=SIM_COLOR,
            alpha=0.45, edgecolor="white", linewidth=0.5, label=sim_label)
    ax.plot(x, density, color=color or THEORY_COLOR, lw=2, label=theory_label)
    if atom is not None:
        top = ax.get_ylim()[1]
        ax.vlines(loc, 0, 0.8 * top, color=color or THEORY_COLOR, lw=3)
        ax.plot([loc], [0.8 * top], "^", color=color or THEORY_COLOR, ms=8)
        ax.annotate(f" atom {mass:.2f}", xy=(loc, 0.8 * top), ha="left", va="center", fontsize=9)
    ax.legend()
    return ax


def curve_vs_mc(ax, x, y_theory, x_mc, y_mc, y_err=None, theory_label="theory",
                mc_label="Monte Carlo", color=None, marker="o"):
    """Plot a theory curve with Monte Carlo points and error bars.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    x, y_theory : array_like
        Theory curve.
    x_mc, y_mc : array_like
        Monte Carlo abscissae and means.
    y_err : array_like, optional
        Error bars (e.g. two standard errors).
    theory_label, mc_label : str
        Legend entries (``None`` hides one).
    color : str, optional
        Shared colour of the curve and points.
    marker : str
        Marker of the Monte Carlo points.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``, with the theory curve, the points and the legend.

    Examples
    --------
    >>> fig, ax = subplots()
    >>> x = np.linspace(0, 1, 5)
    >>> _ = curve_vs_mc(ax, x, x**2, x[1:4], x[1:4]**2 + 0.01, y_err=np.full(3, 0.02))
    >>> len(ax.lines) >= 2
    True
    """
    check_axes(ax)
    x = check_array(x, "x", ndim=1)
    y_theory = check_array(y_theory, "y_theory", shape=(x.size,))
    check_label(theory_label, "theory_label")
    check_label(mc_label, "mc_label")
    if not isinstance(marker, str):
        raise ValueError(f"marker must be a matplotlib marker string, got {type(marker).__name__}")
    x_mc = check_array(x_mc, "x_mc", ndim=1)
    y_mc = check_array(y_mc, "y_mc", shape=(x_mc.size,))
    if y_err is not None:
        y_err = check_array(y_err, "y_err", shape=(x_mc.size,))
        if np.any(y_err < 0):
            raise ValueError("y_err must be non-negative (half-lengths of the error bars)")
    line, = ax.plot(x, y_theory, lw=2, color=color, label=theory_label)
    ax.errorbar(x_mc, y_mc, yerr=y_err, fmt=marker, ms=5, capsize=3, lw=1.2,
                color=line.get_color(), mfc="white", mew=1.5, label=mc_label)
    if theory_label is not None or mc_label is not None:
        ax.legend()
    return ax


def mean_spread(ax, truth, theory_mean, theory_sd, mc_mean, mc_sd, n_sd=2.0, labels=None):
    """Compare predicted and simulated means with spreads, component by component.

    For each component ``j`` (e.g. a token of a next-token distribution) draws the
    true value (cross), the theoretical mean with ``n_sd`` theoretical standard
    deviations (square) and the Monte Carlo mean with ``n_sd`` empirical standard
    deviations (circle), side by side.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    truth, theory_mean, theory_sd, mc_mean, mc_sd : array_like, shape (k,)
        Values per component.
    n_sd : float
        Half-width of the bars in standard deviations.
    labels : list of str, optional
        Tick labels of the components (default ``"1", "2", ...``).

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``, with one marker and bar per component.

    Examples
    --------
    >>> fig, ax = subplots()
    >>> _ = mean_spread(ax, [0.2, 0.8], [0.25, 0.75], [0.1, 0.1], [0.2, 0.8], [0.1, 0.1])
    >>> [t.get_text() for t in ax.get_xticklabels()]
    ['1', '2']
    """
    check_axes(ax)
    truth = check_array(truth, "truth", ndim=1)
    k = truth.size
    n_sd = check_positive(n_sd, "n_sd")
    if labels is not None and (isinstance(labels, str) or len(labels) != k):
        raise ValueError(f"labels must be a sequence of {k} tick labels, got {labels!r}")
    arrays = [check_array(a, name, shape=(k,)) for a, name in
              ((theory_mean, "theory_mean"), (theory_sd, "theory_sd"), (mc_mean, "mc_mean"), (mc_sd, "mc_sd"))]
    theory_mean, theory_sd, mc_mean, mc_sd = arrays
    for sd, name in ((theory_sd, "theory_sd"), (mc_sd, "mc_sd")):
        if np.any(sd < 0):
            raise ValueError(f"{name} must be non-negative")
    x = np.arange(k)
    ax.plot(x - 0.22, truth, "kx", ms=9, mew=2, label="truth")
    ax.errorbar(x, theory_mean, yerr=n_sd * theory_sd, fmt="s", color=THEORY_COLOR, capsize=4,
                label=rf"theory $\pm {n_sd:g}\sigma$")
    ax.errorbar(x + 0.22, mc_mean, yerr=n_sd * mc_sd, fmt="o", mfc="white", color=SIM_COLOR, capsize=4,
                label=rf"Monte Carlo $\pm {n_sd:g}\sigma$")
    ax.set_xticks(x, labels if labels is not None else [str(j + 1) for j in x])
    return ax
