r"""The Gaussian restricted Boltzmann machine: its laws, its two trainers, and the Fokker-Planck spectrum.

Conventions (Chapter 4.3): hidden width :math:`\sigma_h=1`, weights ``W`` of shape ``(n_v, n_h)``,
model kernel :math:`K=\mu^2I-WW^\top`, target kernel with eigenvalues :math:`\kappa_i`, and
:math:`X=WW^\top` with learned values :math:`x_i^*=\mu^2-\kappa_i`. One PCD "epoch" is one update.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.linalg import eigh_tridiagonal

from .._validation import as_generator, check_array, check_callable, check_choice, check_positive, \
    check_positive_int, check_seed, check_size
from ..ensemble import progress_bar, spawn_generators
from ..runtime import single_threaded_blas


def _check_learnable(kappa, mu2):
    """Target eigenvalues, all positive and below mu2 (every mode learnable), and mu2."""
    kappa, mu2 = check_array(kappa, "kappa", positive=True), check_positive(mu2, "mu2")
    if np.any(kappa >= mu2):
        raise ValueError(f"every kappa must lie below mu2 = {mu2} (a mode above mu2 is not learned)")
    return kappa, mu2


def rbm_stationary_variance(kappa, mu2, lr, batch, k=None):
    r"""Stationary variance of a learned diagonal element :math:`X_{ii}` under PCD mini-batch noise.

    Leading order (``k=None``): :math:`2(\alpha/|\mathcal B|)(\mu^2-\kappa)`, a function of the
    ratio :math:`\alpha/|\mathcal B|` alone. With ``k`` Gibbs sweeps per update, the linearised
    recursion :math:`\delta_{n+1}=(1-a)\delta_n-b\,\xi_n` (:math:`a=2\alpha x^*/\kappa^2`,
    :math:`b=2\alpha x^*`, :math:`\operatorname{Var}\xi=2/(|\mathcal B|\kappa^2)`, lag-one
    correlation :math:`r=(x^*/\mu^2)^{2k}` of the persistent chains) is solved in discrete time:
    :math:`\frac{b^2\operatorname{Var}\xi}{1-(1-a)^2}\frac{1+(1-a)r}{1-(1-a)r}`.

    Parameters
    ----------
    kappa : array_like
        Target eigenvalues, each below ``mu2``.
    mu2 : float
        Visible mass.
    lr : float
        Learning rate :math:`\alpha`.
    batch : int
        Number of persistent chains :math:`|\mathcal B|`.
    k : int, optional
        Gibbs sweeps per update, for the discrete-time and chain corrections.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> np.round(rbm_stationary_variance([4.0, 8.0], 9.0, 0.1, 16), 5)
    array([0.0625, 0.0125])
    >>> np.round(rbm_stationary_variance([4.0, 8.0], 9.0, 0.1, 16, k=3), 5)
    array([0.06817, 0.01252])
    """
    kappa, mu2 = _check_learnable(kappa, mu2)
    lr, batch = check_positive(lr, "lr"), check_positive_int(batch, "batch")
    # learned weight x* = mu2 - kappa of each mode; k = None: independent negative samples
    x_star = mu2 - kappa
    if k is None:
        return 2.0 * lr / batch * x_star
    a = 2.0 * lr * x_star / kappa**2  # relaxation per update
    if np.any(a >= 2.0):
        raise ValueError("lr too large: the linearised recursion is unstable")
    r = (x_star / mu2) ** (2 * check_positive_int(k, "k"))  # a sweep keeps the fraction x / mu2 of a mode
    var_xi = 2.0 / (batch * kappa**2)  # a mean of |B| squares of N(0, 1 / kappa) variables
    return (2.0 * lr * x_star) ** 2 * var_xi / (a * (2.0 - a)) * (1 + (1 - a) * r) / (1 - (1 - a) * r)


def rbm_learning_bias(kappa, mu2, lr, batch):
    r"""Leading-order shift :math:`\langle X_{ii}\rangle-x_i^*` of the learned modes under PCD noise.

    .. math::
        \langle\delta_{ii}\rangle=-\frac{\alpha}{2|\mathcal B|\,x_i^*}\sum_j\frac{1+\delta_{ij}}{\kappa_j}
        \big[\mu^2(x_i^*+x_j^*)-\kappa_ix_j^*\big],

    from averaging the update of :math:`X_{ii}` at stationarity to second order in the
    fluctuations; term :math:`j` is the contribution of mode :math:`j`'s fluctuations. Full rank
    (:math:`N_h=N_v`), every :math:`\kappa_j<\mu^2`.

    Parameters
    ----------
    kappa : array_like, shape (n_v,)
        All target eigenvalues.
    mu2, lr, batch
        As in :func:`rbm_stationary_variance`.

    Returns
    -------
    numpy.ndarray, shape (n_v,)

    Examples
    --------
    >>> np.round(rbm_learning_bias([4.0, 6.0, 6.0, 8.0], 9.0, 0.1, 16), 4)
    array([-0.0383, -0.0336, -0.0336, -0.0312])
    """
    kappa, mu2 = _check_learnable(kappa, mu2)
    if kappa.ndim != 1:
        raise ValueError(f"kappa must be 1-D, got shape {kappa.shape}")
    lr, batch = check_positive(lr, "lr"), check_positive_int(batch, "batch")
    # second order in the noise: the mean shift of mode i from the fluctuations of every mode j
    x = mu2 - kappa
    weight = (1.0 + np.eye(kappa.size)) / kappa[None, :]  # (1 + delta_ij) / kappa_j
    bracket = mu2 * (x[:, None] + x[None, :]) - kappa[:, None] * x[None, :]
    return -lr / (2.0 * batch) / x * np.sum(weight * bracket, axis=1)


def rbm_learned_spectrum(kappa, n_h, mu2):
    r"""Model-kernel spectrum learned by exact-gradient training: the ultraviolet regulator.

    The ``n_h`` smallest target eigenvalues are learned where they lie below :math:`\mu^2`;
    every other eigenvalue of the model kernel stays at :math:`\mu^2`.

    Parameters
    ----------
    kappa : array_like, shape (n_v,)
        Target eigenvalues, positive, any order.
    n_h : int
        Hidden units.
    mu2 : float
        Visible mass.

    Returns
    -------
    numpy.ndarray, shape (n_v,)
        Ascending.

    Examples
    --------
    >>> rbm_learned_spectrum([4.0, 8.0, 5.0, 10.0], 3, 9.0)
    array([4., 5., 8., 9.])
    """
    kappa = np.sort(check_array(kappa, "kappa", positive=True).ravel())
    n_h, mu2 = check_positive_int(n_h, "n_h"), check_positive(mu2, "mu2")
    # the n_h softest target modes are learned (capped at mu2), the others sit at the mass
    m = min(n_h, kappa.size)
    return np.sort(np.r_[np.minimum(kappa[:m], mu2), np.full(kappa.size - m, mu2)])


def rbm_learned_mass(kappa, n_h):
    r"""The mass :math:`\mu^2_*` that joint exact-gradient training of :math:`W` and :math:`\mu^2` learns.

    For :math:`N_h<N_v` the harmonic mean of the unlearned target eigenvalues,
    :math:`\mu^2_*=(N_v-N_h)\big/\sum_{i>N_h}\kappa_i^{-1}` (:math:`\kappa` ascending): the model
    then has the data's total variance, and :math:`1/\mu^2_*` is the maximum-likelihood noise
    variance of probabilistic PCA. For :math:`N_h\ge N_v` every mode is learned and the mass
    settles at :math:`\kappa_{\max}` (from a small start, up to the exponentially decayed
    initial weight of the top mode).

    Parameters
    ----------
    kappa : array_like, shape (n_v,)
        Target (data) kernel eigenvalues, positive, any order.
    n_h : int
        Hidden units.

    Returns
    -------
    float

    Examples
    --------
    >>> rbm_learned_mass([1.0, 2.0, 4.0, 4.0], 2)  # 2 / (1/4 + 1/4)
    4.0
    >>> rbm_learned_mass([1.0, 2.0, 4.0, 8.0], 4)
    8.0
    """
    kappa = np.sort(check_array(kappa, "kappa", positive=True, ndim=1))
    n_h = check_positive_int(n_h, "n_h")
    if n_h >= kappa.size:  # every mode learned: the mass stops at the largest kappa
        return float(kappa[-1])
    # tr K^-1 = tr K_data^-1 at the fixed point: the unlearned modes' 1/kappa average to 1/mu2
    return float((kappa.size - n_h) / np.sum(1.0 / kappa[n_h:]))


def _check_target(K_target, n_h, mu2, lr, steps, w_std):
    """The trainers' shared arguments; the target as its eigen-decomposition (kappa ascending, U)."""
    K = check_array(K_target, "K_target", ndim=2)
    if K.shape[0] != K.shape[1] or not np.allclose(K, K.T, atol=1e-10 * max(1.0, np.abs(K).max())):
        raise ValueError(f"K_target must be a symmetric square matrix, got shape {K.shape}")
    mu2 = check_positive(mu2, "mu2")
    kappa, U = np.linalg.eigh(K)
    if kappa[0] <= 0 or mu2 <= kappa[0]:
        raise ValueError(f"K_target must be positive definite with smallest eigenvalue below mu2 = {mu2}, "
                         f"got {kappa[0]:.4g}")
    return (K, kappa, U, check_size(n_h, "n_h"), mu2, check_positive(lr, "lr"), check_size(steps, "steps"),
            check_positive(w_std, "w_std"))


def train_rbm_exact(K_target, n_h, mu2, lr, steps, rng=None, w_std=0.1, progress=None):
    r"""Train the Gaussian RBM with the exact gradient: :math:`W\leftarrow W+\alpha[(K^{\rm target})^{-1}-(\mu^2I-WW^\top)^{-1}]W`.

    The PCD update with the sampled negative phase replaced by its expectation (no noise), from
    :math:`W_{ia}\sim N(0,w_{\rm std}^2)`.

    Parameters
    ----------
    K_target : array_like, shape (n_v, n_v)
        Symmetric positive-definite target kernel; ``mu2`` must exceed its smallest eigenvalue.
    n_h : int
        Hidden units.
    mu2 : float
        Visible mass.
    lr : float
        Learning rate.
    steps : int
        Updates.
    rng : int, numpy.random.Generator or None
        Randomness of the initial weights.
    w_std : float
        Standard deviation of the initial weights.
    progress : bool or None
        See :func:`seqrmt.ensemble.run_ensemble`.

    Returns
    -------
    numpy.ndarray, shape (n_v, n_h)

    Examples
    --------
    >>> K = 6.0 * np.eye(6) - np.roll(np.eye(6), 1, 0) - np.roll(np.eye(6), -1, 0)  # ring, m^2 = 4
    >>> W = train_rbm_exact(K, 6, 9.0, 0.1, 6000, rng=0)
    >>> np.round(np.linalg.eigvalsh(9.0 * np.eye(6) - W @ W.T), 2)  # the target spectrum
    array([4., 5., 5., 7., 7., 8.])
    """
    K, _, _, n_h, mu2, lr, steps, w_std = _check_target(K_target, n_h, mu2, lr, steps, w_std)
    rng = as_generator(rng)
    C_target, eye = np.linalg.inv(K), np.eye(K.shape[0])
    W = rng.normal(0.0, w_std, size=(K.shape[0], n_h))
    with single_threaded_blas():
        for n in progress_bar(range(steps), desc="RBM exact-gradient steps", enabled=progress):
            # gradient of the log-likelihood: (data covariance - model covariance) W
            W = W + lr * (C_target - np.linalg.inv(mu2 * eye - W @ W.T)) @ W
            if n % 200 == 0 and not np.linalg.eigvalsh(mu2 * eye - W @ W.T)[0] > 0:
                raise FloatingPointError("the model kernel lost positivity: reduce lr")
    if not np.all(np.isfinite(W)) or not np.linalg.eigvalsh(mu2 * eye - W @ W.T)[0] > 0:
        raise FloatingPointError("the model kernel lost positivity: reduce lr")
    return W


_NOISE_BLOCK = 2**20  # Gibbs noise drawn at once (8 MiB): bounds memory, does not change the numbers


class PCDTrajectory(NamedTuple):
    """Recorded PCD training of an ensemble (returned by :func:`train_rbm_pcd`).

    ``steps`` (n_rec,) the update counts recorded; ``eigs`` (n_rec, n_seeds, n_h) the ascending
    eigenvalues of :math:`W^\\top W`; ``gram`` (n_rec, n_seeds, n_v, n_v) the matrix
    :math:`U^\\top XU` in the target eigenbasis (columns of ``U`` in the order of ``kappa``
    ascending); ``modes`` its diagonal :math:`X_{ii}`; ``W`` (n_seeds, n_v, n_h) the final weights.
    """

    steps: np.ndarray
    eigs: np.ndarray
    gram: np.ndarray
    modes: np.ndarray
    W: np.ndarray


def train_rbm_pcd(K_target, n_h, mu2, lr, batch, steps, n_seeds, rng=None, k=3, record_steps=None,
                  init="random", w_std=0.1, progress=None):
    r"""Train an ensemble of Gaussian RBMs by persistent contrastive divergence, vectorised over trainings.

    Each update: ``k`` Gibbs sweeps on each of the ``batch`` persistent chains,
    :math:`h\sim N(W^\top\phi,1)` then :math:`\phi\sim N(Wh/\mu^2,\mu^{-2})`, and
    :math:`W\leftarrow W+\alpha[(K^{\rm target})^{-1}-\hat C]W` with the exact positive phase and the
    negative phase :math:`\hat C=\frac1{|\mathcal B|}\sum_b\phi_b\phi_b^\top`. Training ``i`` draws its
    initial weights and chains and its Gibbs noise from the ``i``-th child of ``rng`` (see
    :func:`seqrmt.ensemble.run_ensemble`).

    Parameters
    ----------
    K_target, n_h, mu2, lr, w_std, progress
        As in :func:`train_rbm_exact`.
    batch : int
        Persistent chains :math:`|\mathcal B|`.
    steps : int
        Updates.
    n_seeds : int
        Independent trainings.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None
        Root of the trainings' generators.
    k : int
        Gibbs sweeps per update.
    record_steps : array_like of int, optional
        Update counts in ``[0, steps]`` to record (default ``[steps]``).
    init : {"random", "fixed_point"} or array_like
        ``"random"``: :math:`W_{ia}\sim N(0,w_{\rm std}^2)`, chains at all ones (the authors'
        choice); ``"fixed_point"``: the learned solution on the ``n_h`` infrared modes; an array
        ``(n_v, n_h)`` or ``(n_seeds, n_v, n_h)``: that start. Except for ``"random"`` the chains
        start from the model distribution :math:`N(0,K^{-1})`.

    Returns
    -------
    PCDTrajectory

    Examples
    --------
    >>> K = 6.0 * np.eye(4) - np.roll(np.eye(4), 1, 0) - np.roll(np.eye(4), -1, 0)
    >>> run = train_rbm_pcd(K, 4, 9.0, 0.1, 16, 3000, 20, rng=0)
    >>> np.round(run.modes[-1].mean(axis=0), 1)  # near mu2 - kappa = 5, 3, 3, 1
    array([5. , 3. , 3. , 0.8])
    """
    K, kappa, U, n_h, mu2, lr, steps, w_std = _check_target(K_target, n_h, mu2, lr, steps, w_std)
    batch, n_seeds, k = check_size(batch, "batch"), check_size(n_seeds, "n_seeds"), check_positive_int(k, "k")
    gens, n_v = spawn_generators(check_seed(rng), n_seeds), K.shape[0]
    record = np.array([steps]) if record_steps is None else np.unique(check_array(record_steps, "record_steps",
                                                                                     ndim=1)).astype(int)
    if record[0] < 0 or record[-1] > steps:
        raise ValueError("record_steps must lie in [0, steps]")
    if isinstance(init, str) and check_choice(init, "init", ("random", "fixed_point")) == "random":
        W = np.stack([g.normal(0.0, w_std, size=(n_v, n_h)) for g in gens])
        phi = np.ones((n_seeds, batch, n_v))
    else:
        if isinstance(init, str):  # W = U_{:, :m} diag(sqrt(x*)) on the m infrared modes
            W0, m = np.zeros((n_v, n_h)), min(n_h, n_v)
            W0[:, :m] = U[:, :m] * np.sqrt(np.maximum(mu2 - kappa[:m], 0.0))
        else:
            W0 = check_array(init, "init")
            if W0.shape not in {(n_v, n_h), (n_seeds, n_v, n_h)}:
                raise ValueError(f"init must have shape {(n_v, n_h)} or {(n_seeds, n_v, n_h)}, got {W0.shape}")
        W = np.broadcast_to(W0, (n_seeds, n_v, n_h)).copy()
        M = mu2 * np.eye(n_v) - W @ W.transpose(0, 2, 1)
        if np.linalg.eigvalsh(M)[:, 0].min() <= 0:
            raise ValueError("init: the model kernel mu2 - W W^T must be positive definite")
        L = np.linalg.cholesky(np.linalg.inv(M))  # chains from the model, covariance M^{-1}
        phi = np.stack([g.standard_normal((batch, n_v)) for g in gens]) @ L.transpose(0, 2, 1)
    C_target = np.linalg.inv(K)
    eigs, gram = np.empty((record.size, n_seeds, n_h)), np.empty((record.size, n_seeds, n_v, n_v))

    def save(j, W):
        eigs[j] = np.linalg.eigvalsh(W.transpose(0, 2, 1) @ W)
        UW = U.T @ W  # X in the target eigenbasis
        gram[j] = UW @ UW.transpose(0, 2, 1)

    j = 0
    if record[0] == 0:
        save(0, W)
        j = 1
    chunk = max(1, min(steps, _NOISE_BLOCK // (n_seeds * k * batch * (n_h + n_v))))
    with single_threaded_blas():
        for n in progress_bar(range(1, steps + 1), desc="RBM PCD updates", enabled=progress):
            if (n - 1) % chunk == 0:  # training i draws its noise, update after update, from gens[i]
                m = min(chunk, steps - n + 1)
                noise = np.stack([g.standard_normal((m, k, batch, n_h + n_v)) for g in gens], axis=1)
            z = noise[(n - 1) % chunk]  # (n_seeds, k, batch, n_h + n_v)
            for s in range(k):  # k Gibbs sweeps: h | phi, then phi | h
                # h | phi ~ N(W^T phi, I), phi | h ~ N(W h / mu2, I / mu2): the Gaussian RBM
                h = phi @ W + z[:, s, :, :n_h]
                phi = (h @ W.transpose(0, 2, 1)) / mu2 + z[:, s, :, n_h:] / np.sqrt(mu2)
            # the exact gradient with the model covariance replaced by the persistent chains'
            W = W + lr * (C_target - phi.transpose(0, 2, 1) @ phi / batch) @ W
            if j < record.size and n == record[j]:
                save(j, W)
                j += 1
    if not np.all(np.isfinite(W)):
        raise FloatingPointError("PCD training diverged: reduce lr or increase mu2")
    return PCDTrajectory(record, eigs, gram, np.diagonal(gram, axis1=-2, axis2=-1).copy(), W)


def fokker_planck_spectrum(V, g2, x_grid, n_states):
    r"""Lowest eigenpairs of the Fokker-Planck Hamiltonian :math:`H_{\rm FP}=-\frac{g^2}2\partial_x^2+\frac{(V')^2}{8g^2}-\frac{V''}4`.

    For :math:`dx=-\frac12V'(x)\,dt+g\,dB_t`: second-order finite differences on a uniform grid
    of interior points, Dirichlet conditions one spacing beyond the ends, :math:`V'` and
    :math:`V''` by central differences of step :math:`h/2`. The ground state is
    :math:`\sqrt{P_s}\propto e^{-V/2g^2}` with :math:`E_0=0`; the other :math:`E_n` are the
    relaxation rates.

    Parameters
    ----------
    V : callable
        Vectorised potential, finite within half a spacing of the grid.
    g2 : float
        Noise strength :math:`g^2`.
    x_grid : array_like
        Uniform increasing grid (a few thousand points are plenty).
    n_states : int
        Number of eigenpairs, at most ``len(x_grid)``.

    Returns
    -------
    E : numpy.ndarray, shape (n_states,)
        Ascending eigenvalues.
    psi : numpy.ndarray, shape (len(x_grid), n_states)
        Eigenfunctions with :math:`\sum_j\psi_j^2h=1` and a positive largest entry
        (so :math:`\psi_0^2` is a probability density on the grid).

    Examples
    --------
    >>> x = np.linspace(-4, 4, 2001)  # Ornstein-Uhlenbeck, V = x^2: E_n = n
    >>> E, psi = fokker_planck_spectrum(lambda x: x**2, 0.5, x, 3)
    >>> np.round(E, 4) + 0.0
    array([0., 1., 2.])
    """
    check_callable(V, "V")
    g2 = check_positive(g2, "g2")
    x = check_array(x_grid, "x_grid", ndim=1)
    h = (x[-1] - x[0]) / max(x.size - 1, 1)
    if x.size < 3 or h <= 0 or np.max(np.abs(np.diff(x) - h)) > 1e-8 * max(1.0, h):
        raise ValueError("x_grid must be uniform and increasing, with at least 3 points")
    n_states = check_positive_int(n_states, "n_states")
    if n_states > x.size:
        raise ValueError(f"n_states must be at most len(x_grid) = {x.size}, got {n_states}")
    # P = sqrt(P_s) psi turns the Fokker-Planck operator into H = -g^2/2 d^2/dx^2 + U, with
    # U = V'^2 / (8 g^2) - V'' / 4; V is sampled half a spacing either side of each grid point
    v0, vp, vm = (np.asarray(V(y), dtype=float) for y in (x, x + h / 2, x - h / 2))
    if not all(v.shape == x.shape and np.all(np.isfinite(v)) for v in (v0, vp, vm)):
        raise ValueError("V must return finite values, one per grid point, within half a spacing of the grid")
    dV, d2V = (vp - vm) / h, (vp - 2 * v0 + vm) / (h / 2) ** 2  # central differences of step h / 2
    U = dV**2 / (8.0 * g2) - d2V / 4.0  # U_0 / g^2 + U_1
    # three-point Laplacian: diagonal g^2 / h^2 + U, off-diagonal -g^2 / (2 h^2) (Dirichlet ends)
    E, psi = eigh_tridiagonal(g2 / h**2 + U, np.full(x.size - 1, -0.5 * g2 / h**2),
                              select="i", select_range=(0, n_states - 1))
    psi = psi / np.sqrt(h)  # sum_j psi_j^2 h = 1
    # sign convention: each state's largest-magnitude value positive
    return E, psi * np.sign(psi[np.argmax(np.abs(psi), axis=0), np.arange(n_states)])
