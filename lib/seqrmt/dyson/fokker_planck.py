r"""The Fokker-Planck operator of one eigenvalue, its spectrum and ground state.

Convention (stated everywhere in the book): the eigenvalue obeys the SDE

.. math::

    dx=-\tfrac12V'(x)\,dt+g\,dB_t ,

so that :math:`\partial_tP=\partial_x(\tfrac12V'P)+\tfrac{g^2}2\partial_x^2P` and the stationary density is
:math:`P_s\propto e^{-V/g^2}`. Writing :math:`P=\sqrt{P_s}\,\psi` turns the Fokker-Planck equation into
:math:`\partial_t\psi=-H_{\rm FP}\psi` with the Schrodinger operator

.. math::

    H_{\rm FP}=-\frac{g^2}2\frac{d^2}{dx^2}+\frac{U_0}{g^2}+U_1,\qquad U_0=\tfrac18(V')^2,\quad U_1=-\tfrac14V''.

Its ground state is :math:`\psi_0=\sqrt{P_s}` with :math:`E_0=0`; the other eigenvalues :math:`E_n` are the
relaxation rates. (An SDE written with drift :math:`-V'` is covered by passing :math:`2V`.)

Discretisation: second-order finite differences on a uniform grid of interior points of an interval,
with Dirichlet conditions one spacing beyond each end. Eigenfunctions are normalised so that
:math:`\sum_j\psi(x_j)^2\,h=1` (``h`` the grid spacing), i.e. :math:`\psi_0^2` is a probability density.

Used in: Chapter 4 (notebook ``04_fokker_planck``).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.linalg import eigh_tridiagonal

from .._validation import check_array, check_positive, check_positive_int, check_returned

__all__ = [
    "potential_on_grid",
    "fokker_planck_potential",
    "fokker_planck_operator",
    "fokker_planck_spectrum",
    "stationary_density",
    "fokker_planck_mean",
    "mean_position",
    "density_moments",
    "decay_rate",
    "ensemble_decay_rate",
    "plot_levels",
]


def _check_grid(x_grid):
    x = check_array(x_grid, "x_grid", ndim=1)
    if x.size < 3:
        raise ValueError(f"x_grid must hold at least 3 points, got {x.size}")
    dx = np.diff(x)
    h = dx.mean()
    if h <= 0 or np.max(np.abs(dx - h)) > 1e-8 * max(1.0, abs(h)):
        raise ValueError("x_grid must be uniform and increasing")
    return x, h


def potential_on_grid(V, x_grid):
    r"""Values :math:`V`, :math:`V'` and :math:`V''` on the grid.

    Parameters
    ----------
    V : callable or array_like
        Either a vectorised function of ``x`` (then derivatives are central differences with step
        ``h/2``, which never leaves the open interval one spacing beyond the grid), or the values of
        :math:`V` on ``x_grid`` (then derivatives by :func:`numpy.gradient`, second order, one-sided at the ends).
    x_grid : array_like
        Uniform increasing grid.

    Returns
    -------
    V, dV, d2V : ndarray
        Each of shape ``x_grid.shape``.

    Examples
    --------
    >>> x = np.linspace(-1, 1, 5)
    >>> _, dV, d2V = potential_on_grid(lambda x: x**2, x)
    >>> np.round(dV, 6), np.round(d2V, 6)
    (array([-2., -1.,  0.,  1.,  2.]), array([2., 2., 2., 2., 2.]))
    """
    x, h = _check_grid(x_grid)
    if callable(V):
        d = 0.5 * h
        v0, vp, vm = (np.asarray(V(y), dtype=float) for y in (x, x + d, x - d))
        if v0.shape != x.shape or vp.shape != x.shape or vm.shape != x.shape:
            raise ValueError("V must return one value per grid point")
        if not (np.all(np.isfinite(v0)) and np.all(np.isfinite(vp)) and np.all(np.isfinite(vm))):
            raise ValueError("V must be finite within half a spacing of the grid")
        return v0, (vp - vm) / (2 * d), (vp - 2 * v0 + vm) / d**2
    v0 = check_array(V, "V", shape=x.shape)
    dV = np.gradient(v0, h, edge_order=2)
    return v0, dV, np.gradient(dV, h, edge_order=2)


def fokker_planck_potential(V, g2, x_grid):
    r"""The Schrodinger potential :math:`U=U_0/g^2+U_1=(V')^2/(8g^2)-V''/4` on the grid.

    Parameters
    ----------
    V : callable or array_like
        The potential (see :func:`potential_on_grid`).
    g2 : float
        Noise strength :math:`g^2>0` of :math:`dx=-\frac12V'dt+g\,dB`.
    x_grid : array_like
        Uniform grid.

    Returns
    -------
    ndarray

    Examples
    --------
    >>> np.round(fokker_planck_potential(lambda x: x**2, 0.5, np.linspace(-1, 1, 3)), 6)
    array([ 0.5, -0.5,  0.5])
    """
    g2 = check_positive(g2, "g2")
    _, dV, d2V = potential_on_grid(V, x_grid)
    return dV**2 / (8.0 * g2) - d2V / 4.0


def fokker_planck_operator(V, g2, x_grid):
    r"""Sparse symmetric matrix of :math:`H_{\rm FP}` (finite differences, Dirichlet ends).

    Parameters
    ----------
    V, g2, x_grid
        As in :func:`fokker_planck_potential` (uniform grid of interior points).

    Returns
    -------
    scipy.sparse.csr_matrix, shape (n, n)

    Examples
    --------
    >>> H = fokker_planck_operator(lambda x: x**2, 1.0, np.linspace(-5, 5, 201))
    >>> H.shape
    (201, 201)
    """
    g2 = check_positive(g2, "g2")
    x, h = _check_grid(x_grid)
    U = fokker_planck_potential(V, g2, x)
    diag = g2 / h**2 + U
    off = np.full(x.size - 1, -0.5 * g2 / h**2)
    return sparse.diags([off, diag, off], [-1, 0, 1], format="csr")


def fokker_planck_spectrum(V, g2, x_grid, n_states):
    r"""Lowest eigenvalues and eigenfunctions of :math:`H_{\rm FP}`.

    Parameters
    ----------
    V : callable or array_like
        The potential of :math:`dx=-\frac12V'dt+g\,dB` (see :func:`potential_on_grid`).
    g2 : float
        Noise strength :math:`g^2>0`.
    x_grid : array_like
        Uniform grid of interior points (a few thousand points are enough).
    n_states : int
        Number of eigenpairs, at most ``len(x_grid)``.

    Returns
    -------
    E : ndarray, shape (n_states,)
        Ascending eigenvalues (relaxation rates in the time ``t`` of the SDE; :math:`E_0\approx0`).
    psi : ndarray, shape (len(x_grid), n_states)
        Eigenfunctions normalised to :math:`\sum_j\psi_j^2h=1`, each with a positive largest-magnitude entry
        (so :math:`\psi_0\ge0`).

    Examples
    --------
    >>> x = np.linspace(-4, 4, 2001)  # Ornstein-Uhlenbeck, V = x^2: E_n = n
    >>> E, psi = fokker_planck_spectrum(lambda x: x**2, 0.5, x, 3)
    >>> np.round(E, 4) + 0.0  # + 0.0 turns -0. into 0.
    array([0., 1., 2.])
    """
    g2 = check_positive(g2, "g2")
    x, h = _check_grid(x_grid)
    n_states = check_positive_int(n_states, "n_states")
    if n_states > x.size:
        raise ValueError(f"n_states must be at most len(x_grid) = {x.size}, got {n_states}")
    U = fokker_planck_potential(V, g2, x)
    E, psi = eigh_tridiagonal(g2 / h**2 + U, np.full(x.size - 1, -0.5 * g2 / h**2),
                              select="i", select_range=(0, n_states - 1))
    psi = psi / np.sqrt(h)
    idx = np.argmax(np.abs(psi), axis=0)
    psi = psi * np.sign(psi[idx, np.arange(n_states)])
    return E, psi


def stationary_density(V, g2, x_grid):
    r"""Stationary density :math:`P_s\propto e^{-V/g^2}` on the grid, normalised to :math:`\sum_jP_s(x_j)h=1`.

    Parameters
    ----------
    V, g2, x_grid
        As in :func:`fokker_planck_potential` (uniform grid).

    Returns
    -------
    ndarray

    Examples
    --------
    >>> x = np.linspace(-6, 6, 1201)
    >>> p = stationary_density(lambda x: x**2 / 2, 1.0, x)  # standard normal
    >>> round(float(np.sum(x**2 * p) * (x[1] - x[0])), 4)
    1.0
    """
    g2 = check_positive(g2, "g2")
    x, h = _check_grid(x_grid)
    v = np.asarray(V(x), dtype=float) if callable(V) else check_array(V, "V", shape=x.shape)
    if v.shape != x.shape or not np.all(np.isfinite(v)):
        raise ValueError("V must be finite on the grid, one value per point")
    w = np.exp(-(v - v.min()) / g2)
    return w / (w.sum() * h)


def fokker_planck_mean(V, g2, x_grid, x0, times, n_states=40, f=None):
    r"""Expectation :math:`\langle f(x)\rangle(t)` for a start at :math:`x_0`, from the spectral decomposition.

    With :math:`P(x,0)=\delta(x-x_0)` and :math:`P=\sqrt{P_s}\,\psi`,

    .. math::

        P(x,t)=\sqrt{P_s(x)}\sum_n\frac{\psi_n(x_0)}{\psi_0(x_0)}\,\psi_n(x)\,e^{-E_nt},

    so :math:`\langle f\rangle(t)=\sum_n\frac{\psi_n(x_0)}{\psi_0(x_0)}e^{-E_nt}\int f\,\psi_0\psi_n\,dx`
    (convention :math:`dx=-\frac12V'dt+g\,dB`). Truncating at ``n_states`` terms is accurate once
    :math:`e^{-E_{n}t}` is small for the omitted states; at :math:`t=0` the truncated series is only a smoothed delta.
    The start must lie where :math:`P_s` is not negligible (:math:`\psi_0(x_0)\ge10^{-6}\max\psi_0`).

    Parameters
    ----------
    V, g2, x_grid
        As in :func:`fokker_planck_potential` (uniform grid of interior points).
    x0 : float
        Starting point, inside the grid.
    times : array_like
        Non-negative times.
    n_states : int
        Number of eigenpairs in the sum.
    f : callable, optional
        Observable (default :math:`f(x)=x`).

    Returns
    -------
    ndarray, shape (len(times),)

    Examples
    --------
    >>> x = np.linspace(-5, 5, 2001)  # Ornstein-Uhlenbeck: <x>(t) = x0 exp(-t)
    >>> m = fokker_planck_mean(lambda y: y**2, 0.5, x, 1.0, [0.5, 1.0, 2.0], n_states=30)
    >>> np.round(m, 4)
    array([0.6065, 0.3679, 0.1353])
    """
    x, h = _check_grid(x_grid)
    x0 = float(check_array(x0, "x0", ndim=0))
    if not x[0] <= x0 <= x[-1]:
        raise ValueError("x0 must lie inside x_grid")
    times = check_array(times, "times", ndim=1)
    if np.any(times < 0):
        raise ValueError("times must be non-negative")
    E, psi = fokker_planck_spectrum(V, g2, x, n_states)
    j0 = int(np.argmin(np.abs(x - x0)))
    if psi[j0, 0] < 1e-6 * psi[:, 0].max():
        raise ValueError("x0 lies where P_s is negligible: the truncated sum cannot represent a start there "
                         "(start closer to the minimum, or increase g2)")
    fx = x if f is None else np.asarray(f(x), dtype=float)
    if fx.shape != x.shape:
        raise ValueError("f must return one value per grid point")
    check_returned(fx, "f")
    coef = psi[j0] / psi[j0, 0] * (np.sum((fx * psi[:, 0])[:, None] * psi, axis=0) * h)
    return np.exp(-np.outer(times, E)) @ coef


# ---------------------------------------------------------------- reading spectra and relaxation curves
def mean_position(psi, x_grid):
    r"""Mean position :math:`\int x\,\psi_n(x)^2\,dx` of each normalised eigenfunction (which well it lives in).

    Parameters
    ----------
    psi : array_like, shape (len(x_grid),) or (len(x_grid), n_states)
        Eigenfunctions on the grid, normalised as in :func:`fokker_planck_spectrum`
        (:math:`\sum_j\psi(x_j)^2h=1`).
    x_grid : array_like
        Uniform grid.

    Returns
    -------
    float or ndarray, shape (n_states,)

    Examples
    --------
    >>> x = np.linspace(-1, 3, 401)
    >>> psi = np.exp(-(x - 1) ** 2 / 0.02)
    >>> psi /= np.sqrt(np.sum(psi**2) * (x[1] - x[0]))
    >>> round(float(mean_position(psi, x)), 6)
    1.0
    """
    x, _ = _check_grid(x_grid)
    p = check_array(psi, "psi")
    if p.ndim not in (1, 2) or p.shape[0] != x.size:
        raise ValueError(f"psi must have shape ({x.size},) or ({x.size}, n_states), got {p.shape}")
    xs = x if p.ndim == 1 else x[:, None]
    return np.sum(xs * p**2, axis=0) * (x[1] - x[0])


def density_moments(p, x_grid):
    r"""Mean and variance of a density on a uniform grid (Riemann sums, :math:`\sum_jp(x_j)h=1`).

    Parameters
    ----------
    p : array_like, shape (len(x_grid),)
        Density values, non-negative (e.g. :func:`stationary_density`).
    x_grid : array_like
        Uniform grid.

    Returns
    -------
    mean, var : float

    Examples
    --------
    >>> x = np.linspace(-8, 8, 1601)
    >>> m, v = density_moments(stationary_density(lambda y: (y - 1) ** 2, 0.5, x), x)
    >>> round(m, 4), round(v, 4)  # N(1, 1/4)
    (1.0, 0.25)
    """
    x, _ = _check_grid(x_grid)
    p = check_array(p, "p", shape=x.shape)
    if np.any(p < 0):
        raise ValueError("p must be non-negative")
    h = x[1] - x[0]
    m = np.sum(x * p) * h
    return float(m), float(np.sum((x - m) ** 2 * p) * h)


def _check_window(t, window):
    t = check_array(t, "t", ndim=1)
    if len(window) != 2:
        raise ValueError(f"window must be (t_lo, t_hi), got {window!r}")
    win = (t >= window[0]) & (t <= window[1])
    if win.sum() < 2 or np.ptp(t[win]) == 0:
        raise ValueError("t must hold at least two distinct times inside the window")
    return t, win


def decay_rate(t, y, y_inf, window):
    r"""Exponential decay rate of :math:`y_\infty-y(t)` in a time window, by a log-linear least-squares fit.

    Parameters
    ----------
    t : array_like, shape (n,)
        Times.
    y : array_like, shape (n,)
        Relaxing curve, below ``y_inf`` inside the window.
    y_inf : float
        Asymptote.
    window : (float, float)
        Closed interval of ``t`` used for the fit (at least two points).

    Returns
    -------
    float
        The rate :math:`\gamma` of :math:`y_\infty-y\propto e^{-\gamma t}`.

    Examples
    --------
    >>> t = np.linspace(0, 10, 101)
    >>> round(decay_rate(t, 2 - 3 * np.exp(-0.4 * t), 2.0, (1, 8)), 6)
    0.4
    """
    t, win = _check_window(t, window)
    y = check_array(y, "y", shape=t.shape)
    y_inf = float(check_array(y_inf, "y_inf", ndim=0))
    gap = y_inf - y[win]
    if np.any(gap <= 0):
        raise ValueError("y must stay below y_inf inside the window")
    return float(-np.polyfit(t[win], np.log(gap), 1)[0])


def ensemble_decay_rate(t, samples, window, n_late=16, n_groups=20):
    r"""Decay rate of an ensemble mean, with a jackknife standard error over the ensemble members.

    The mean over the members (columns of ``samples``) relaxes to an asymptote estimated by the mean of
    its last ``n_late`` records; :func:`decay_rate` is fitted in ``window``. The jackknife deletes one
    of ``n_groups`` groups of members at a time.

    Parameters
    ----------
    t : array_like, shape (n_records,)
        Times.
    samples : array_like, shape (n_records, n_members)
        One independent trajectory per column (e.g. one training per column).
    window : (float, float)
        Fit window, as in :func:`decay_rate`.
    n_late : int
        Number of final records averaged for the asymptote.
    n_groups : int
        Jackknife groups (at least 2, at most ``n_members``).

    Returns
    -------
    rate, se : float

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> t = np.linspace(0, 20, 81)
    >>> y = 1 - np.exp(-0.5 * t)[:, None] + 0.01 * rng.normal(size=(81, 200))
    >>> rate, se = ensemble_decay_rate(t, y, (1, 6))
    >>> bool(abs(rate - 0.5) < 4 * se), bool(se < 0.01)
    (True, True)
    """
    from .universality import jackknife

    t, win = _check_window(t, window)
    x = check_array(samples, "samples", ndim=2)
    if x.shape[0] != t.size:
        raise ValueError(f"samples must have {t.size} rows (one per time), got {x.shape[0]}")
    n_late = check_positive_int(n_late, "n_late")
    if n_late > t.size:
        raise ValueError(f"n_late must be at most {t.size}, got {n_late}")

    def rate(members):  # members: (n_members, n_records)
        m = members.mean(axis=0)
        return decay_rate(t, m, m[-n_late:].mean(), window)

    return jackknife(x.T, rate, n_groups=n_groups)


def plot_levels(ax, V, g2, x_grid, energies):
    r"""Draw the Schrödinger potential :math:`U(x)` and the levels :math:`E_n` as horizontal lines.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    V, g2, x_grid
        As in :func:`fokker_planck_potential`.
    energies : array_like
        Eigenvalues to mark (e.g. from :func:`fokker_planck_spectrum`); labelled with :math:`|E_n|`.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``, with :math:`U(x)` and one line per level.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> x = np.linspace(-4, 4, 401)
    >>> E, _ = fokker_planck_spectrum(lambda y: y**2, 0.5, x, 3)
    >>> fig, ax = plt.subplots()
    >>> len(plot_levels(ax, lambda y: y**2, 0.5, x, E).lines)
    4
    >>> plt.close(fig)
    """
    from .._validation import check_axes  # noqa: PLC0415
    check_axes(ax)
    x, _ = _check_grid(x_grid)
    E = check_array(energies, "energies", ndim=1)
    ax.plot(x, fokker_planck_potential(V, g2, x), color="k", lw=1.5)
    for j, e in enumerate(E):
        ax.axhline(e, color=f"C{j}", lw=1, label=rf"$E_{j}={abs(e):.3f}$")
    ax.set_xlabel("$x$")
    ax.set_ylabel("$U(x)$")
    return ax
