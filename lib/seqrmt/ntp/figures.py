r"""Figure helpers of Chapter 3: cosine heat maps, measured-against-formula scatter plots, the
panels of the regularisation path and of UFM training, embedding norms and similarity
trajectories of trained models.

Every helper draws on matplotlib ``Axes`` supplied by the caller (from
:func:`seqrmt.plotting.subplots` or ``plt.subplot_mosaic``), in the book's style
(:mod:`seqrmt.plotting`); the caller adds the colour bar, legend placement and ``plt.show()``.

Used in: Chapter 3 (notebooks ``03_unconstrained_features``, ``04_max_margin_geometry`` and
``05_transformer_and_ufm``).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_array, check_positive

__all__ = [
    "cosine_heatmap",
    "scatter_vs_formula",
    "logit_path_panels",
    "ufm_training_panels",
    "embedding_norm_panel",
    "similarity_trajectory_panel",
]


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


def _check_axes_seq(axes, n, name="axes"):
    if isinstance(axes, str) or not hasattr(axes, "__len__") or len(axes) != n:
        raise ValueError(f"{name} must be a sequence of {n} matplotlib Axes")
    for ax in axes:
        _check_axes(ax, name)
    return list(axes)


def logit_path_panels(axes, lams, decomposition, nuclear_mm):
    r"""Draw the three panels of the regularisation path :math:`L_\lambda=L^{\rm in}+\rho L^{\rm mm}+R_\lambda`.

    1. :math:`\rho(\lambda)` and :math:`\|L_\lambda\|_*/\|L^{\rm mm}\|_*` against
       :math:`\ln(1/\lambda)`, with a unit-slope line through the last :math:`\rho`;
    2. the cosine gaps :math:`1-\cos(L_\lambda,L^{\rm mm})` and
       :math:`1-\cos(L_\lambda-L^{\rm in},L^{\rm mm})` (log scale);
    3. :math:`\|P_\mathcal TL_\lambda-L^{\rm in}\|_F` against :math:`\lambda` (log-log), with a
       line :math:`\propto\lambda` through the second point.

    Parameters
    ----------
    axes : sequence of 3 matplotlib Axes
    lams : array_like, shape (n,)
        Positive regularisation strengths, at least two.
    decomposition : dict
        From :func:`seqrmt.ntp.ufm.path_decomposition` on the path at ``lams``.
    nuclear_mm : float
        :math:`\|L^{\rm mm}\|_*`, positive.

    Returns
    -------
    list of matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, axes = plt.subplots(1, 3)
    >>> dec = {"rho": np.array([1.0, 2.0]), "nuclear": np.array([2.0, 4.0]),
    ...        "cos_raw": np.array([0.9, 0.99]), "cos_centred": np.array([0.95, 0.995]),
    ...        "dist_T": np.array([1e-1, 1e-2])}
    >>> len(logit_path_panels(axes, [0.1, 0.01], dec, 2.0))
    3
    >>> plt.close(fig)
    """
    axes = _check_axes_seq(axes, 3)
    lams = check_array(lams, "lams", ndim=1, positive=True)
    if lams.size < 2:
        raise ValueError("lams must hold at least two values")
    keys = ("rho", "nuclear", "cos_raw", "cos_centred", "dist_T")
    if not isinstance(decomposition, dict) or any(k not in decomposition for k in keys):
        raise ValueError(f"decomposition must be a dict with keys {keys} (path_decomposition)")
    d = {k: check_array(decomposition[k], f"decomposition[{k!r}]", shape=lams.shape) for k in keys}
    nuclear_mm = check_positive(nuclear_mm, "nuclear_mm")
    x = np.log(1 / lams)
    ax = axes[0]
    ax.plot(x, d["rho"], "o-", label=r"$\rho(\lambda)$")
    ax.plot(x, d["nuclear"] / nuclear_mm, "s-", label=r"$\|L_\lambda\|_*/\|L^{\rm mm}\|_*$")
    ax.plot(x, x + d["rho"][-1] - x[-1], "k--", lw=1.5, label=r"$\ln(1/\lambda)+$const")
    ax.set(xlabel=r"$\ln(1/\lambda)$", ylabel="coefficient")
    ax = axes[1]
    ax.semilogy(x, 1 - d["cos_raw"], "o-", label=r"raw $L_\lambda$")
    ax.semilogy(x, 1 - d["cos_centred"], "s-", label=r"$L_\lambda-L^{\rm in}$")
    ax.set(xlabel=r"$\ln(1/\lambda)$", ylabel=r"$1-\cos(\cdot, L^{\rm mm})$")
    ax = axes[2]
    ax.loglog(lams, d["dist_T"], "o-", label="convex solution")
    ax.loglog(lams, d["dist_T"][1] * lams / lams[1], "k--", lw=1.5, label=r"$\propto\lambda$")
    ax.set(xlabel=r"$\lambda$", ylabel=r"$\|P_{\mathcal{T}}L_\lambda-L^{\rm in}\|_F$")
    for ax in axes:
        ax.legend()
    return axes


def ufm_training_panels(axes, runs, optimum):
    r"""Draw the three panels of UFM training by gradient descent, one curve per :math:`\lambda`.

    1. the objective minus the convex optimum (log-log);
    2. the imbalance :math:`|\|W_t\|_F^2-\|H_t\|_F^2|` (log scale) with the prediction
       :math:`|\cdot|_0\,e^{-2\lambda\eta t}` of exact gradient descent (dashed);
    3. the cosine gap :math:`1-\cos(W_tH_t,L_\lambda)` (log-log).

    Step 0 is left out (log axes).

    Parameters
    ----------
    axes : sequence of 3 matplotlib Axes
    runs : dict
        ``lam -> UFMRun`` from :func:`seqrmt.ntp.ufm.train_ufm` with ``L_target`` the convex
        solution at ``lam`` (for ``cos_target``).
    optimum : dict
        ``lam -> float``, the convex optimum :math:`\min_L\mathrm{CE}(L)-\mathcal H+\lambda\|L\|_*`.

    Returns
    -------
    list of matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from seqrmt.ntp.ufm import train_ufm
    >>> P = np.array([[0.5, 0.0], [0.5, 1.0]])
    >>> run = train_ufm(P, [0.5, 0.5], d=2, lam=0.1, max_iter=20, rng=0, L_target=np.eye(2))
    >>> fig, axes = plt.subplots(1, 3)
    >>> len(ufm_training_panels(axes, {0.1: run}, {0.1: 0.0}))
    3
    >>> plt.close(fig)
    """
    axes = _check_axes_seq(axes, 3)
    if not isinstance(runs, dict) or not runs:
        raise ValueError("runs must be a non-empty dict lam -> UFMRun")
    if not isinstance(optimum, dict) or set(optimum) != set(runs):
        raise ValueError("optimum must be a dict with the keys of runs")
    for lam, run in runs.items():
        if not all(hasattr(run, a) for a in ("steps", "objective", "balancedness", "cos_target")):
            raise ValueError(f"runs[{lam!r}] must be a UFMRun")
        t, lab = run.steps[1:], rf"$\lambda={lam:g}$"
        axes[0].loglog(t, np.abs(run.objective[1:] - optimum[lam]), label=lab)
        line, = axes[1].semilogy(t, np.abs(run.balancedness[1:]), label=lab)
        axes[1].semilogy(t, np.abs(run.balancedness[0]) * np.exp(-2 * run.lam * run.eta * t),
                         "--", color=line.get_color(), lw=1.5)
        axes[2].loglog(t, 1 - run.cos_target[1:], label=lab)
    axes[0].set_ylabel("objective - convex optimum")
    axes[1].set_ylabel(r"$|\|W_t\|_F^2-\|H_t\|_F^2|$")
    axes[1].set_ylim(1e-16, 10)
    axes[2].set_ylabel(r"$1-\cos(W_tH_t, L_\lambda)$")
    for ax in axes:
        ax.set_xlabel("step $t$")
        ax.legend()
    return axes


def _check_curves(models, name, n_arrays):
    if isinstance(models, str) or not hasattr(models, "__len__") or len(models) == 0:
        raise ValueError(f"{name} must be a non-empty sequence of tuples")
    for entry in models:
        if not isinstance(entry, tuple) or len(entry) != 1 + n_arrays:
            raise ValueError(f"{name} entries must be tuples of {1 + n_arrays} items, got {entry!r}")
        _check_label(entry[0], f"{name} label")
    return models


def embedding_norm_panel(ax, models):
    r"""Frobenius norms :math:`\|W_t\|_F` (solid) and :math:`\|H_t\|_F` (dashed) of trained models.

    Log-log axes; the first recorded time (usually 0) is left out.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    models : sequence of (str, array_like, array_like, array_like)
        ``(label, times, Ws, Hs)`` per model: the recorded times ``(k,)``, the word embeddings
        ``(k, V, d)`` and the context embeddings ``(k, d, m)``; one colour per model.

    Returns
    -------
    list of matplotlib.lines.Line2D

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> Ws = np.stack([np.eye(2), 2 * np.eye(2)])
    >>> lines = embedding_norm_panel(ax, [("A", np.array([0, 1]), Ws, Ws)])
    >>> [round(float(y[0]), 4) for y in (lines[0].get_ydata(), lines[1].get_ydata())]
    [2.8284, 2.8284]
    >>> plt.close(fig)
    """
    _check_axes(ax)
    _check_curves(models, "models", 3)
    lines = []
    for i, (lab, t, Ws, Hs) in enumerate(models):
        t = check_array(t, "models times", ndim=1)
        Ws = check_array(Ws, "models Ws", ndim=3, shape=(t.size, None, None))
        Hs = check_array(Hs, "models Hs", ndim=3, shape=(t.size, None, None))
        c = f"C{i}"
        lines += ax.loglog(t[1:], np.linalg.norm(Ws, axis=(1, 2))[1:], "-", color=c,
                           label=rf"{lab} $\|W\|_F$")
        lines += ax.loglog(t[1:], np.linalg.norm(Hs, axis=(1, 2))[1:], "--", color=c,
                           label=rf"{lab} $\|H\|_F$")
    ax.set_ylabel("Frobenius norm")
    return lines


def similarity_trajectory_panel(ax, runs, kind, yardstick):
    r"""Structural correlation with the max-margin geometry and with the overlaps, against time.

    For each run, the trajectory of ``"<kind>_mm"`` (solid, vs max margin) and of
    ``"<kind>_S"`` (dashed, vs the support overlap) from
    :func:`seqrmt.ntp.transformer.structural_trajectory`, on a logarithmic time axis (the first
    recorded time left out), and a dotted horizontal line at the yardstick (e.g. the class-block
    indicator against the max-margin geometry).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    runs : sequence of (str, array_like, dict)
        ``(label, times, trajectory)`` per run; one colour per run.
    kind : {"ctx", "word"}
    yardstick : float

    Returns
    -------
    list of matplotlib.lines.Line2D

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> traj = {"ctx_mm": np.array([0.2, 0.5, 0.9]), "ctx_S": np.array([0.3, 0.6, 0.95])}
    >>> len(similarity_trajectory_panel(ax, [("TF", np.array([0, 1, 10]), traj)], "ctx", 0.7))
    3
    >>> plt.close(fig)
    """
    _check_axes(ax)
    _check_curves(runs, "runs", 2)
    if kind not in ("ctx", "word"):
        raise ValueError(f"kind must be 'ctx' or 'word', got {kind!r}")
    yardstick = float(check_array(yardstick, "yardstick", ndim=0))
    lines = []
    for i, (lab, t, traj) in enumerate(runs):
        t = check_array(t, "runs times", ndim=1)
        if not isinstance(traj, dict) or any(f"{kind}_{s}" not in traj for s in ("mm", "S")):
            raise ValueError(f"runs trajectory must be a dict with keys '{kind}_mm' and '{kind}_S'")
        for s, ls, what in (("mm", "-", "max margin"), ("S", "--", "overlap")):
            y = check_array(traj[f"{kind}_{s}"], "runs trajectory", shape=t.shape)
            lines += ax.semilogx(t[1:], y[1:], ls, color=f"C{i}", label=f"{lab} vs {what}")
    lines.append(ax.axhline(yardstick, color="k", ls=":", lw=1.5, label="class blocks vs max margin"))
    return lines
