r"""Random-features ridge regression: its high-dimensional equivalent and its linear equivalent.

Setting (Chapter 5.5, the example of :cite:`louart2018nn` that :cite:`liao2025beyond` generalise).
Fixed data :math:`X\in\mathbb R^{p\times n}` (columns :math:`x_i`, :math:`\|x_i\|\approx1`), targets
:math:`y\in\mathbb R^n`, a random first layer :math:`W\in\mathbb R^{N\times p}` with i.i.d.
:math:`N(0,1)` entries and features :math:`\Sigma=\sigma(WX)\in\mathbb R^{N\times n}`. A ridge
read-out with penalty :math:`\gamma` has training error
:math:`E=\frac{\gamma^2}{n}y^\top Q^2y`, :math:`Q=(\Sigma^\top\Sigma/n+\gamma I_n)^{-1}`
(:func:`seqrmt.frontiers.attention.memorisation_error` computes it for one draw of :math:`W`).
Conditionally on :math:`X`, :math:`E` concentrates around a deterministic functional of the kernel
:math:`\Phi=\mathbb E_w[\sigma(X^\top w)\sigma(w^\top X)]`.

Used in: Chapter 5 (notebook ``05_features_and_pls``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import plotting
from .._validation import check_array, check_int_array, check_nonnegative, check_size
from ..rmt import solve_delta
from .attention import memorisation_error
from ..ensemble import run_ensemble, spawn_generators
from .._validation import as_generator
from ..stats import mean_se

__all__ = [
    "mixture_data",
    "relu_features",
    "relu_kernel",
    "relu_kernel_linear",
    "RandomFeaturesEquivalent",
    "random_features_training_error",
    "random_features_errors",
    "training_error_table",
    "plot_training_error",
]


def mixture_data(n, p, mean_norm, rng=None):
    r"""Two-class Gaussian mixture :math:`x_i=(y_i\mu+z_i)/\sqrt p`, balanced random labels.

    Parameters
    ----------
    n, p : int
        Number of samples and dimension.
    mean_norm : float
        :math:`\|\mu\|\ge0`; :math:`\mu=\|\mu\|e_1`.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    X : numpy.ndarray, shape (p, n)
        Columns of squared norm :math:`1+O(p^{-1/2})`.
    y : numpy.ndarray, shape (n,)
        Labels :math:`\pm1`.

    Examples
    --------
    >>> X, y = mixture_data(6, 4, 2.0, rng=0)
    >>> X.shape, sorted(set(y.tolist()))
    ((4, 6), [-1.0, 1.0])
    """
    n = check_size(n, "n")
    p = check_size(p, "p")
    if n * p > 2**31:
        raise ValueError(f"n, p too large: n * p = {n * p} entries")
    norm = check_nonnegative(mean_norm, "mean_norm")
    rng = as_generator(rng)
    y = rng.choice([-1.0, 1.0], size=n)
    X = rng.standard_normal((p, n))
    X[0] += norm * y
    return X / np.sqrt(p), y


def relu_features(X, n_features, rng=None):
    r"""Random ReLU features :math:`\max(WX,0)` with :math:`W_{kj}\sim N(0,1)` i.i.d.

    Parameters
    ----------
    X : array_like, shape (p, n)
    n_features : int
        :math:`N`, the number of rows of :math:`W`.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    numpy.ndarray, shape (N, n)

    Examples
    --------
    >>> relu_features(np.ones((3, 2)), 5, rng=0).shape
    (5, 2)
    """
    X = check_array(X, "X", ndim=2)
    N = check_size(n_features, "n_features")
    if N * max(X.shape) > 2**31:
        raise ValueError(f"n_features too large: {N}")
    rng = as_generator(rng)
    return np.maximum(rng.standard_normal((N, X.shape[0])) @ X, 0.0)


def relu_kernel(X):
    r"""Arc-cosine kernel :math:`\Phi=\mathbb E_w[\mathrm{relu}(X^\top w)\mathrm{relu}(w^\top X)]`, :math:`w\sim N(0,I_p)`.

    .. math::
        \Phi_{ij}=\frac{\|x_i\|\|x_j\|}{2\pi}\big(\sin\theta_{ij}+(\pi-\theta_{ij})\cos\theta_{ij}\big),
        \qquad\cos\theta_{ij}=\frac{x_i^\top x_j}{\|x_i\|\|x_j\|}.

    Parameters
    ----------
    X : array_like, shape (p, n)
        Non-zero columns.

    Returns
    -------
    numpy.ndarray, shape (n, n)

    Examples
    --------
    >>> Phi = relu_kernel(np.eye(2))
    >>> bool(np.allclose(Phi, [[0.5, 1 / (2 * np.pi)], [1 / (2 * np.pi), 0.5]]))
    True
    """
    X = check_array(X, "X", ndim=2)
    norms = np.linalg.norm(X, axis=0)
    if np.any(norms == 0):
        raise ValueError("X must have non-zero columns")
    cos = np.clip((X.T @ X) / np.outer(norms, norms), -1.0, 1.0)
    theta = np.arccos(cos)
    return np.outer(norms, norms) * (np.sin(theta) + (np.pi - theta) * cos) / (2.0 * np.pi)


def relu_kernel_linear(X):
    r"""Linear equivalent of the arc-cosine kernel for columns of nearly equal norm.

    With :math:`\tau=\frac1n\sum_i\|x_i\|^2`,

    .. math::
        \Phi_{\rm lin}=\frac{\tau}{2\pi}\mathbf 1\mathbf 1^\top+\frac14X^\top X
        +\Big(\frac14-\frac1{2\pi}\Big)\tau I_n ,

    the first-order expansion of :func:`relu_kernel` in :math:`\cos\theta_{ij}=O(p^{-1/2})` off
    the diagonal, with the diagonal :math:`\|x_i\|^2/2` matched. It requires
    :math:`\|x_i\|^2=\tau+O(p^{-1/2})`; the neglected second-order term has entries of order
    :math:`1/p`.

    Parameters
    ----------
    X : array_like, shape (p, n)

    Returns
    -------
    numpy.ndarray, shape (n, n)

    Examples
    --------
    >>> L = relu_kernel_linear(np.eye(2))
    >>> bool(np.allclose(np.diag(L), 0.5))
    True
    """
    X = check_array(X, "X", ndim=2)
    n = X.shape[1]
    tau = float(np.sum(X * X)) / n
    return tau / (2 * np.pi) + (X.T @ X) / 4 + (0.25 - 1 / (2 * np.pi)) * tau * np.eye(n)


@dataclass(frozen=True)
class RandomFeaturesEquivalent:
    r"""High-dimensional equivalent of random-features ridge regression.

    Attributes
    ----------
    train_error : float or numpy.ndarray
        Deterministic equivalent of :math:`\frac{\gamma^2}{n}y^\top Q^2y`.
    delta : float or numpy.ndarray
        :math:`\delta=\frac1n\operatorname{Tr}\Phi\bar Q`.
    """

    train_error: float
    delta: float


def random_features_training_error(Phi, y, n_features, gamma, tol=1e-12, max_iter=200):
    r"""Deterministic equivalent of the random-features training error, given the kernel.

    With :math:`\bar Q=(\Psi+\gamma I)^{-1}`, :math:`\Psi=\frac Nn\frac{\Phi}{1+\delta}` and
    :math:`\delta=\frac1n\operatorname{Tr}\Phi\bar Q` (:func:`seqrmt.rmt.solve_delta`),

    .. math::
        E\simeq\frac{\gamma^2}{n}\,y^\top\bar Q\Big[\frac{\frac1N\operatorname{Tr}\Psi\bar Q^2}
        {1-\frac1N\operatorname{Tr}\Psi\bar Q\Psi\bar Q}\,\Psi+I\Big]\bar Qy .

    :math:`\Phi` is diagonalised once, so arrays of widths and ridges cost little more than one.

    Parameters
    ----------
    Phi : array_like, shape (n, n)
        Symmetric positive semi-definite kernel, e.g. :func:`relu_kernel`.
    y : array_like, shape (n,)
    n_features : int or array_like of int
        :math:`N`.
    gamma : float or array_like
        :math:`\gamma>0`; broadcast against ``n_features``.
    tol, max_iter
        Passed to :func:`seqrmt.rmt.solve_delta`.

    Returns
    -------
    RandomFeaturesEquivalent
        Attributes of the broadcast shape (floats for scalar inputs).

    Examples
    --------
    With a kernel :math:`\Phi=I` and :math:`N=n` the equivalent is that of Marchenko-Pastur:

    >>> eq = random_features_training_error(np.eye(4), np.ones(4), 4, 1.0)
    >>> round(eq.delta, 6)  # delta = ridge_delta(1, 1) = 0.618034
    0.618034
    """
    Phi = check_array(Phi, "Phi", ndim=2)
    n = Phi.shape[0]
    if Phi.shape != (n, n) or not np.allclose(Phi, Phi.T, atol=1e-10 * max(1.0, np.abs(Phi).max())):
        raise ValueError(f"Phi must be a symmetric square matrix, got shape {Phi.shape}")
    y = check_array(y, "y", ndim=1, shape=(n,))
    N_arr = check_int_array(n_features, "n_features", low=1, high=2**31)
    g_arr = check_array(gamma, "gamma", positive=True)
    N_b, g_b = np.broadcast_arrays(N_arr, g_arr)
    phi, U = np.linalg.eigh(Phi)
    if phi[0] < -1e-8 * max(phi[-1], 1.0):
        raise ValueError("Phi must be positive semi-definite")
    phi = np.clip(phi, 0.0, None)
    yt2 = (U.T @ y) ** 2
    err, dl = np.empty(N_b.shape), np.empty(N_b.shape)
    for idx in np.ndindex(N_b.shape):
        N, g = int(N_b[idx]), float(g_b[idx])
        # delta = (1/n) sum phi / ((N/n) phi / (1 + delta) + g) = rmt.solve_delta(phi, N, g n / N)
        delta = float(solve_delta(phi, N, g * n / N, tol=tol, max_iter=max_iter))
        psi = (N / n) * phi / (1.0 + delta)
        qbar = 1.0 / (psi + g)
        coef = np.sum(psi * qbar**2) / N / (1.0 - np.sum((psi * qbar) ** 2) / N)
        err[idx] = g**2 / n * np.sum(yt2 * qbar**2 * (coef * psi + 1.0))
        dl[idx] = delta
    if err.ndim == 0:
        return RandomFeaturesEquivalent(float(err), float(dl))
    return RandomFeaturesEquivalent(err, dl)


def random_features_errors(X, y, ratios, gamma, n_draws, rng=None):
    r"""Monte Carlo training errors of random ReLU features for several widths and ridges.

    For each ratio :math:`r` and draw, :math:`N=\lfloor rn\rfloor` features
    (:func:`relu_features`, one fresh :math:`W` per draw, drawn in the order ratio, draw) and the
    training error :func:`~seqrmt.frontiers.attention.memorisation_error` at every ridge.

    Parameters
    ----------
    X : array_like, shape (p, n)
        Fixed data.
    y : array_like, shape (n,)
        Targets.
    ratios : array_like, shape (k,)
        Features per sample :math:`N/n>0`.
    gamma : array_like, shape (m,)
        Ridges :math:`\gamma>0`.
    n_draws : int
        Draws of :math:`W` per ratio.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    numpy.ndarray, shape (k, n_draws, m)

    Examples
    --------
    >>> X, y = mixture_data(8, 4, 2.0, rng=0)
    >>> random_features_errors(X, y, [0.5, 1.0], [0.1, 1.0], 2, rng=0).shape
    (2, 2, 2)
    """
    X = check_array(X, "X", ndim=2)
    n = X.shape[1]
    y = check_array(y, "y", shape=(n,))
    ratios = check_array(ratios, "ratios", ndim=1, positive=True)
    gamma = check_array(gamma, "gamma", ndim=1, positive=True)
    n_draws = check_size(n_draws, "n_draws")
    widths = [check_size(int(r * n), "ratios") for r in ratios]
    roots = spawn_generators(as_generator(rng), len(widths))
    return np.array([run_ensemble(_features_draw, n_draws, root, args=(X, y, N, gamma),
                                  desc=f"N = {N}") for N, root in zip(widths, roots)])


def _features_draw(rng, X, y, n_features, gamma):
    """One draw of W for :func:`random_features_errors`: the memorisation errors per ridge."""
    return memorisation_error(relu_features(X, n_features, rng), y, gamma)


def training_error_table(ratios, gamma, errors, theory, theory_linear, show=None):
    r"""Text table of the training-error equivalent against Monte Carlo (mean :math:`\pm` se).

    Parameters
    ----------
    ratios : array_like, shape (k,)
        Features per sample :math:`N/n`.
    gamma : array_like, shape (m,)
        Ridges.
    errors : array_like, shape (k, n_draws, m)
        Monte Carlo errors (:func:`random_features_errors`), ``n_draws >= 2``.
    theory, theory_linear : array_like, shape (k, m)
        The equivalent with the kernel and with its linearisation.
    show : sequence of float, optional
        Ridges whose rows are printed (default: all); the last line, the largest gap in
        standard errors, is over all of them.

    Returns
    -------
    str

    Examples
    --------
    >>> err = np.array([[[0.30], [0.32]]])  # one ratio, two draws, one ridge
    >>> print(training_error_table([0.5], [0.1], err, [[0.3]], [[0.3]]))
      N/n  gamma   theory  linearised   Monte Carlo (mean ± se)
     0.50   0.10   0.3000      0.3000   0.3100 ± 0.0100
    largest |gap|: 1.0 se, at N/n = 0.50, gamma = 0.1
    """
    ratios = check_array(ratios, "ratios", ndim=1)
    gamma = check_array(gamma, "gamma", ndim=1)
    k, m = ratios.size, gamma.size
    errors = check_array(errors, "errors", ndim=3)
    if errors.shape[0] != k or errors.shape[2] != m or errors.shape[1] < 2:
        raise ValueError("errors must have shape (len(ratios), n_draws >= 2, len(gamma))")
    theory = check_array(theory, "theory", shape=(k, m))
    theory_linear = check_array(theory_linear, "theory_linear", shape=(k, m))
    show = gamma if show is None else check_array(show, "show", ndim=1)
    mean, se = mean_se(errors, 1)
    z = (mean - theory) / se
    lines = ["  N/n  gamma   theory  linearised   Monte Carlo (mean ± se)"]
    for j, r in enumerate(ratios):
        for i, g in enumerate(gamma):
            if np.any(np.isclose(show, g, rtol=1e-12, atol=0)):
                lines.append(f"{r:5.2f}  {g:5.2f}  {theory[j, i]:7.4f}  "
                             f"{theory_linear[j, i]:10.4f}   {mean[j, i]:.4f} ± {se[j, i]:.4f}")
    j, i = np.unravel_index(np.argmax(np.abs(z)), z.shape)
    lines.append(f"largest |gap|: {abs(z[j, i]):.1f} se, at N/n = {ratios[j]:.2f}, "
                 f"gamma = {gamma[i]:g}")
    return "\n".join(lines)


def plot_training_error(ax, ratios, theory, theory_linear, ratios_mc, errors, gamma):
    r"""Draw the training error against :math:`N/n` on log-log axes: equivalent and Monte Carlo.

    One colour per ridge: the equivalent with the kernel (line), with the linearised kernel
    (dotted black) and the Monte Carlo mean with two standard errors; a grey line at
    :math:`N=n`.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    ratios : array_like, shape (k,)
        Abscissae of the theory curves.
    theory, theory_linear : array_like, shape (m, k)
        The equivalent per ridge and ratio, with the kernel and with its linearisation.
    ratios_mc : array_like, shape (l,)
        Ratios of the simulation (also the axis ticks).
    errors : array_like, shape (l, n_draws, m)
        Monte Carlo errors (:func:`random_features_errors`), ``n_draws >= 2``.
    gamma : array_like, shape (m,)
        Ridges (legend).

    Returns
    -------
    matplotlib.axes.Axes
    """
    from .._validation import check_axes  # noqa: PLC0415
    check_axes(ax)
    ratios = check_array(ratios, "ratios", ndim=1, positive=True)
    gamma = check_array(gamma, "gamma", ndim=1)
    theory = check_array(theory, "theory", shape=(gamma.size, ratios.size))
    theory_linear = check_array(theory_linear, "theory_linear", shape=theory.shape)
    ratios_mc = check_array(ratios_mc, "ratios_mc", ndim=1, positive=True)
    errors = check_array(errors, "errors", ndim=3)
    if errors.shape[0] != ratios_mc.size or errors.shape[2] != gamma.size or errors.shape[1] < 2:
        raise ValueError("errors must have shape (len(ratios_mc), n_draws >= 2, len(gamma))")
    mean, se = mean_se(errors, 1)
    for i, g in enumerate(gamma):
        plotting.curve_vs_mc(ax, ratios, theory[i], ratios_mc, mean[:, i], 2 * se[:, i],
                             color=f"C{i}", theory_label=rf"$\gamma={g:g}$",
                             mc_label="Monte Carlo" if i == 0 else None)
        ax.plot(ratios, theory_linear[i], ":", color="k", lw=1.5,
                label=r"linearised $\Phi$" if i == 0 else None)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(ratios_mc, [f"{r:g}" for r in ratios_mc])
    ax.minorticks_off()
    ax.axvline(1.0, color="0.5", lw=1)
    ax.set_xlabel("features per sample $N/n$")
    ax.set_ylabel("training error $E$")
    ax.legend()
    return ax
