r"""Ensemble analysis of PCD runs of the Gaussian RBM: degenerate pairs, variance ratios, figures.

:mod:`seqrmt.dyson.rbm` trains the RBM and holds its theory; this module reads what the training
recorded. For a doubly degenerate target level it extracts the two eigenvalues of :math:`X=WW^\top`
compressed to the level (:func:`rbm_pair_eigenvalues`), their two-mode widths with jackknife errors over
independent trainings (:func:`rbm_pair_widths`), the scaled diagonal elements, eigenvalues and spacings of
the pairs (:func:`rbm_pair_scaled`) and their moments (:func:`rbm_pair_statistics`); it compares stationary
variances with a prediction (:func:`rbm_variance_ratio`) and draws the figures of the notebook. The names
are also importable from :mod:`seqrmt.dyson.rbm`, where they used to live.

Used in: Chapter 4 (notebook ``03_gaussian_rbm``).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_array, check_positive, check_positive_int
from ..stats import mean_se
from . import universality as _univ
from .rbm import (  # noqa: F401  (the last four for the examples)
    PCDTrajectory, _check_kappa, rbm_learned_spectrum, rbm_mode_dynamics, rbm_target_kernel, train_rbm_pcd)

__all__ = [
    "rbm_pair_eigenvalues",
    "rbm_variance_ratio",
    "rbm_pair_widths",
    "rbm_pair_scaled",
    "rbm_pair_statistics",
    "plot_mode_learning",
    "plot_stationary_eigenvalues",
    "plot_pair_histograms",
]


def rbm_pair_eigenvalues(gram, kappa, rtol=1e-8):
    r"""Eigenvalues of :math:`X` compressed to each doubly degenerate target level.

    For a level :math:`\kappa_i=\kappa_{i+1}` with target eigenvectors :math:`u_i,u_{i+1}`, returns the two
    eigenvalues of the :math:`2\times2` block :math:`[u_a^\top Xu_b]_{a,b\in\{i,i+1\}}`. They do not depend on
    which orthonormal basis of the level the eigensolver chose, and they are the pair's eigenvalues of
    :math:`X` up to its coupling to the other levels (second order in the off-block elements).
    Non-degenerate levels are skipped; a level of multiplicity above two is an error.

    Parameters
    ----------
    gram : array_like, shape (..., n_v, n_v)
        :math:`U^\top XU` in the target eigenbasis, columns in the order of ``kappa`` (e.g.
        ``PCDTrajectory.gram``).
    kappa : array_like, shape (n_v,)
        Ascending target eigenvalues.
    rtol : float
        Relative tolerance for two ``kappa`` to count as degenerate.

    Returns
    -------
    levels : ndarray, shape (n_pairs,)
        The degenerate target eigenvalues, ascending.
    pairs : ndarray, shape (..., n_pairs, 2)
        Ascending eigenvalues of each block.

    Examples
    --------
    >>> kappa = np.array([4.0, 5.0, 5.0])
    >>> gram = np.array([[5.0, 0.0, 0.0], [0.0, 4.0, 1.0], [0.0, 1.0, 4.0]])
    >>> levels, pairs = rbm_pair_eigenvalues(gram, kappa)
    >>> levels, pairs
    (array([5.]), array([[3., 5.]]))
    """
    kappa = _check_kappa(kappa)
    if kappa.ndim != 1 or kappa.size < 2:
        raise ValueError(f"kappa must be 1-D with at least 2 entries, got shape {kappa.shape}")
    if np.any(np.diff(kappa) < 0):
        raise ValueError("kappa must be ascending")
    rtol = check_positive(rtol, "rtol")
    G = check_array(gram, "gram")
    n = kappa.size
    if G.ndim < 2 or G.shape[-2:] != (n, n):
        raise ValueError(f"gram must have shape (..., {n}, {n}), got {G.shape}")
    same = np.isclose(kappa[1:], kappa[:-1], rtol=rtol, atol=0.0)
    if np.any(same[1:] & same[:-1]):
        raise ValueError("kappa has a level of multiplicity above two")
    first = np.flatnonzero(same)
    if first.size == 0:
        raise ValueError("kappa has no degenerate pair")
    idx = first[:, None] + np.arange(2)  # (n_pairs, 2)
    blocks = G[..., idx[:, :, None], idx[:, None, :]]  # (..., n_pairs, 2, 2)
    blocks = 0.5 * (blocks + np.swapaxes(blocks, -1, -2))
    return kappa[first].copy(), np.linalg.eigvalsh(blocks)


def _check_records(a, name, ndim=3):
    """An array of shape (records, trainings, ...) with at least two trainings."""
    a = check_array(a, name)
    if a.ndim != ndim or a.shape[1] < 2:
        raise ValueError(f"{name} must have {ndim} axes (records, trainings, ...) and at least 2 trainings, "
                         f"got shape {a.shape}")
    return a


def _by_training(a):
    """(records, trainings, ...) -> (trainings, records * ...): one row per independent training."""
    return np.moveaxis(a, 1, 0).reshape(a.shape[1], -1)


def rbm_variance_ratio(modes, pred, n_groups=16):
    r"""Measured over predicted stationary variance of the modes, pooled over modes, with its standard error.

    The squared deviations of :math:`X_{ii}` from the mean over *all* trainings (a group's own mean would
    miss the slow fluctuations of the per-training means) are averaged over the records and trainings of
    each of ``n_groups`` disjoint groups of trainings, divided by ``pred`` and averaged over the modes. The
    value is the mean of the group ratios; its standard error is their spread over :math:`\sqrt{n_{\rm groups}}`.

    Parameters
    ----------
    modes : array_like, shape (n_rec, n_train, n_v)
        Stationary records of the modes (e.g. ``PCDTrajectory.modes``).
    pred : array_like, shape (n_v,)
        Predicted variances, positive (e.g. :func:`~seqrmt.dyson.rbm.rbm_stationary_variance`).
    n_groups : int
        Number of groups of trainings, between 2 and ``n_train``.

    Returns
    -------
    ratio, se : float

    Examples
    --------
    >>> x = np.random.default_rng(0).normal(2.0, 0.5, size=(50, 32, 3))
    >>> r, se = rbm_variance_ratio(x, np.full(3, 0.25))
    >>> bool(abs(r - 1) < 4 * se)
    True
    """
    modes = _check_records(modes, "modes")
    pred = check_array(pred, "pred", ndim=1, shape=(modes.shape[2],), positive=True)
    n_groups = check_positive_int(n_groups, "n_groups")
    if not 2 <= n_groups <= modes.shape[1]:
        raise ValueError(f"n_groups must lie in [2, {modes.shape[1]}], got {n_groups}")
    dev2 = (modes - modes.mean(axis=(0, 1))) ** 2
    split = np.array_split(np.arange(modes.shape[1]), n_groups)
    r = [np.mean(dev2[:, g].mean(axis=(0, 1)) / pred) for g in split]
    return mean_se(r)


def rbm_pair_widths(pairs, n_groups=16):
    r"""Two-mode width of each degenerate pair, with a jackknife standard error over trainings.

    For each pair, :func:`~seqrmt.dyson.universality.fit_two_mode` is fitted to the eigenvalues of all
    records and trainings; :func:`~seqrmt.dyson.universality.jackknife` over ``n_groups`` groups of
    trainings gives the standard error.

    Parameters
    ----------
    pairs : array_like, shape (n_rec, n_train, n_pairs, 2)
        Pair eigenvalues (second output of :func:`rbm_pair_eigenvalues`).
    n_groups : int
        Number of jackknife groups, between 2 and ``n_train``.

    Returns
    -------
    ndarray, shape (n_pairs, 2)
        Fitted :math:`\sigma` and its standard error, per pair.

    Examples
    --------
    >>> from seqrmt.dyson import goe_eigs
    >>> e = goe_eigs(2, 4000, 0, scale=0.5).reshape(10, 400, 1, 2) + 3.0
    >>> sig, se = rbm_pair_widths(e, n_groups=8)[0]
    >>> bool(abs(sig - 1.0) < 4 * se)  # sigma^2 = 2 * scale
    True
    """
    pairs = _check_records(pairs, "pairs", ndim=4)
    if pairs.shape[3] != 2:
        raise ValueError(f"pairs must have a last axis of length 2, got shape {pairs.shape}")
    if np.any(np.ptp(pairs, axis=(0, 1, 3)) == 0):
        raise ValueError("pairs: the eigenvalues of a pair must not all be equal")

    def width(rows):
        return _univ.fit_two_mode(rows)[1]

    return np.array([_univ.jackknife(_by_training(pairs[..., p, :]), width, n_groups=n_groups)
                     for p in range(pairs.shape[2])])


def rbm_pair_scaled(diag, pairs, sigma):
    r"""Diagonal elements, pair eigenvalues and pair spacings of the degenerate pairs, in natural units.

    Returns, one row per training, :math:`(X_{ii}-\langle X_{ii}\rangle)/\sigma`,
    :math:`(\lambda-\langle\lambda\rangle)/\sigma` (the mean over both eigenvalues of the pair) and the
    spacing :math:`S/\langle S\rangle`, where :math:`\langle\cdot\rangle` averages over records and trainings.

    Parameters
    ----------
    diag : array_like, shape (n_rec, n_train, 2 * n_pairs)
        The diagonal elements :math:`X_{ii}` of the paired modes, two consecutive columns per pair.
    pairs : array_like, shape (n_rec, n_train, n_pairs, 2)
        Pair eigenvalues (second output of :func:`rbm_pair_eigenvalues`).
    sigma : array_like, shape (n_pairs,)
        Width of each pair, positive.

    Returns
    -------
    z_diag : ndarray, shape (n_train, n_rec * 2 * n_pairs)
    z_eig : ndarray, shape (n_train, n_rec * n_pairs * 2)
    s_norm : ndarray, shape (n_train, n_rec * n_pairs)

    Examples
    --------
    >>> pairs = np.array([[[[1.0, 3.0]], [[2.0, 2.0]]]])  # 1 record, 2 trainings
    >>> z_diag, z_eig, s_norm = rbm_pair_scaled(pairs[..., 0, :], pairs, [1.0])
    >>> z_eig, s_norm
    (array([[-1.,  1.],
           [ 0.,  0.]]), array([[2.],
           [0.]]))
    """
    pairs = _check_records(pairs, "pairs", ndim=4)
    n_pairs = pairs.shape[2]
    if pairs.shape[3] != 2:
        raise ValueError(f"pairs must have a last axis of length 2, got shape {pairs.shape}")
    diag = check_array(diag, "diag", ndim=3, shape=pairs.shape[:2] + (2 * n_pairs,))
    sigma = check_array(sigma, "sigma", ndim=1, shape=(n_pairs,), positive=True)
    z_diag = _by_training((diag - diag.mean(axis=(0, 1))) / np.repeat(sigma, 2))
    centre = pairs.mean(axis=(0, 1, 3))[:, None]
    z_eig = _by_training((pairs - centre) / sigma[:, None])
    S = pairs[..., 1] - pairs[..., 0]
    if np.any(S.mean(axis=(0, 1)) <= 0):
        raise ValueError("pairs: each pair needs a positive mean spacing (ascending, not all equal)")
    s_norm = _by_training(S / S.mean(axis=(0, 1)))
    return z_diag, z_eig, s_norm


def _eig_diag_variance_ratio(rows):
    half = rows.shape[1] // 2
    return np.mean(rows[:, half:] ** 2) / np.mean(rows[:, :half] ** 2)


def _second_moment(rows):
    return np.mean(rows**2)


def rbm_pair_statistics(z_diag, z_eig, s_norm, n_groups=16):
    r"""Universality statistics of the degenerate pairs, with jackknife standard errors over trainings.

    The two-mode law predicts a variance ratio 3/2 of pair eigenvalues to diagonal elements and a Binder
    cumulant :math:`U_4=-4/27` of the eigenvalues; Gaussian diagonal elements have :math:`U_4=0`; the
    Wigner surmise has :math:`\langle s^2\rangle=4/\pi`.

    Parameters
    ----------
    z_diag, z_eig, s_norm : array_like, 2-D
        Outputs of :func:`rbm_pair_scaled` (one row per training); ``z_diag`` and ``z_eig`` of equal shape.
    n_groups : int
        Number of jackknife groups (at least 2, at most the number of rows).

    Returns
    -------
    dict
        Maps a description to ``(value, se)``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=(64, 200))
    >>> st = rbm_pair_statistics(z, z, np.abs(z), n_groups=8)
    >>> [round(v, 1) + 0.0 for v, _ in st.values()]  # + 0.0 turns -0.0 into 0.0
    [1.0, 0.0, 0.0, 1.0]
    """
    z_diag = check_array(z_diag, "z_diag", ndim=2)
    z_eig = check_array(z_eig, "z_eig", ndim=2, shape=z_diag.shape)
    s_norm = check_array(s_norm, "s_norm", ndim=2)
    for z, name in [(z_diag, "z_diag"), (z_eig, "z_eig"), (s_norm, "s_norm")]:
        if np.ptp(z) == 0:
            raise ValueError(f"{name} must not be constant")
    jk = _univ.jackknife
    both = np.concatenate([z_diag, z_eig], axis=1)
    return {
        "variance, eigenvalues / diagonal": jk(both, _eig_diag_variance_ratio, n_groups),
        "U4 of the diagonal elements": jk(z_diag, _univ.binder_cumulant, n_groups),
        "U4 of the pair eigenvalues": jk(z_eig, _univ.binder_cumulant, n_groups),
        "<s^2> of the spacings": jk(s_norm, _second_moment, n_groups),
    }


# ---------------------------------------------------------------- figures
def plot_mode_learning(ax, run, det):
    r"""Draw the ensemble-mean modes of a PCD run (points) against the deterministic dynamics (lines).

    Degenerate modes are averaged; one colour per target level, time on a logarithmic axis.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    run : PCDTrajectory
        Output of :func:`~seqrmt.dyson.rbm.train_rbm_pcd` (``run.steps[0]`` is skipped on the log axis).
    det : array_like, shape (steps + 1, n_v)
        Deterministic mode trajectory (:func:`~seqrmt.dyson.rbm.rbm_mode_dynamics`), columns in the order of ``run.kappa``.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``, with one colour per target level.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> run = train_rbm_pcd(rbm_target_kernel(4, 4.0), 4, 9.0, 0.1, 8, 20, 2, rng=0,
    ...                     record_steps=[0, 10, 20])
    >>> det = rbm_mode_dynamics(np.full(4, 0.04), run.kappa, 9.0, 0.1, 20)
    >>> fig, ax = plt.subplots()
    >>> len(plot_mode_learning(ax, run, det).lines)  # 3 levels: points and line each
    6
    >>> plt.close(fig)
    """
    from .._validation import check_axes  # noqa: PLC0415
    check_axes(ax)
    if not isinstance(run, PCDTrajectory):
        raise ValueError(f"run must be a PCDTrajectory, got {type(run).__name__}")
    kappa = run.kappa
    det = check_array(det, "det", ndim=2)
    if det.shape[1] != kappa.size or det.shape[0] <= run.steps[-1]:
        raise ValueError(f"det must have shape (>= {run.steps[-1] + 1}, {kappa.size}), got {det.shape}")
    t = np.arange(1, det.shape[0])
    for j, kap in enumerate(np.unique(np.round(kappa, 6))):
        sel = np.isclose(kappa, kap)
        ax.plot(run.steps[1:], run.modes[1:, :, sel].mean(axis=(1, 2)), "o", ms=3, color=f"C{j}")
        ax.plot(t, det[1:, sel][:, 0], color=f"C{j}", label=rf"$\kappa={kap:.2f}$")
    ax.set_xscale("log")
    ax.set_xlabel("update $n$")
    ax.set_ylabel(r"$\langle X_{ii}\rangle$")
    return ax


def plot_stationary_eigenvalues(ax, eigs, x_star, bins=30):
    r"""Histogram each sorted eigenvalue of :math:`WW^\top` separately; dashed lines at the fixed points.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    eigs : array_like, shape (..., n_h)
        Ascending eigenvalues (e.g. late records of ``PCDTrajectory.eigs``); column ``i`` is the ``i``-th.
    x_star : array_like
        Fixed points :math:`x^*` (:func:`~seqrmt.dyson.rbm.rbm_fixed_points`); distinct values are marked.
    bins : int
        Bins per histogram.

    Returns
    -------
    ax : matplotlib.axes.Axes
        The input Axes, with one histogram per sorted eigenvalue.

    Examples
    --------
    >>> from matplotlib import pyplot
    >>> fig, ax = pyplot.subplots()
    >>> e = np.sort(np.random.default_rng(0).normal([1.0, 3.0], 0.1, (50, 2)), axis=1)
    >>> len(plot_stationary_eigenvalues(ax, e, [1.0, 3.0]).collections)
    1
    >>> pyplot.close(fig)
    """
    from .._validation import check_axes  # noqa: PLC0415
    check_axes(ax)
    eigs = check_array(eigs, "eigs")
    x_star = check_array(x_star, "x_star")
    bins = check_positive_int(bins, "bins")
    if eigs.ndim < 1:
        raise ValueError("eigs must have at least one axis")
    for i in range(eigs.shape[-1]):
        ax.hist(eigs[..., i].ravel(), bins=bins, alpha=0.5, density=True, color=f"C{i % 7}")
    ax.vlines(np.unique(np.round(x_star, 6)), 0, 2.5, colors="k", linestyles="--", lw=1)
    ax.set_xlabel("eigenvalue $x$ of $WW^\\top$")
    ax.set_ylabel("density")
    return ax


def plot_pair_histograms(axes, z_diag, z_eig, s_norm):
    r"""Three panels: Gaussian diagonal elements, two-mode pair eigenvalues, Wigner-surmise spacings.

    Parameters
    ----------
    axes : sequence of three matplotlib.axes.Axes
    z_diag, z_eig, s_norm : array_like
        Outputs of :func:`rbm_pair_scaled`.

    Returns
    -------
    sequence of matplotlib.axes.Axes
        ``axes``, with the Gaussian, two-mode and surmise panels.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> z = np.random.default_rng(0).normal(size=(10, 50))
    >>> fig, axes = plt.subplots(1, 3)
    >>> [ax.get_xlabel()[:9] for ax in plot_pair_histograms(axes, z, z, np.abs(z))]
    ['$(X_{ii}-', '$(\\lambda', 'spacing $']
    >>> plt.close(fig)
    """
    from .._validation import check_axes_list  # noqa: PLC0415
    check_axes_list(axes)
    from .. import plotting

    if len(axes) != 3:
        raise ValueError(f"axes must hold three Axes, got {len(axes)}")
    data = [check_array(z, name) for z, name in
            [(z_diag, "z_diag"), (z_eig, "z_eig"), (s_norm, "s_norm")]]
    u = np.linspace(-4, 4, 300)
    w = np.linspace(0, 3.5, 200)
    gauss = np.exp(-u**2 / 2) / np.sqrt(2 * np.pi)
    theory = [(u, gauss, "Gaussian", 40, (-4, 4)),
              (u, _univ.two_mode_density(u, 0, 1), "two-mode", 40, (-4, 4)),
              (w, _univ.wigner_surmise(w), "surmise", 30, (0, 3.5))]
    labels = [r"$(X_{ii}-\langle X_{ii}\rangle)/\sigma$",
              r"$(\lambda-\langle\lambda\rangle)/\sigma$, pair eigenvalues",
              r"spacing $S/\langle S\rangle$"]
    for ax, z, (x, dens, name, bins, rng_), label in zip(axes, data, theory, labels):
        plotting.hist_vs_density(ax, z, x, dens, bins=bins, hist_range=rng_, theory_label=name)
        ax.set_xlabel(label)
        ax.set_ylabel("density")
        ax.legend(loc="upper right")
    return axes
