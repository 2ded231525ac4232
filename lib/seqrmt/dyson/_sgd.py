r"""Matrices driven by SGD-like noise: Dyson Brownian motion and the 2x2 teacher-student ensemble."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from .._validation import check_allocation, check_array, check_nonnegative, check_positive, \
    check_positive_int, check_seed, check_size
from ..ensemble import spawn_generators
from ..runtime import single_threaded_blas


_NOISE_BLOCK = 2**22  # increments drawn at once (32 MiB): bounds memory, does not change the numbers


def dyson_brownian_motion(h0, t_max, n_steps, rng=None, theta=0.0, s=1.0):
    r"""Simulate :math:`dH=-\theta H\,dt+s\,dB^{\rm GOE}` and return the sorted eigenvalue paths.

    The Ornstein-Uhlenbeck transition is sampled exactly,
    :math:`H_{k+1}=e^{-\theta\Delta t}H_k+s\sqrt{(1-e^{-2\theta\Delta t})/2\theta}\,(G_k+G_k^\top)/\sqrt2`
    with :math:`G_k` standard Gaussian (the Brownian increment when :math:`\theta=0`), so the
    eigenvalues at the grid times have the law of Dyson Brownian motion for any step. Matrix
    ``i`` of a batch draws its increments, step after step, from the ``i``-th child of ``rng``
    (see :func:`seqrmt.ensemble.run_ensemble`).

    Parameters
    ----------
    h0 : array_like, shape (n, n) or (m, n, n)
        Initial symmetric matrix, or a batch of them.
    t_max : float
        Final time.
    n_steps : int
        Time steps (the paths have ``n_steps + 1`` points).
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None
        Root of the matrices' generators.
    theta : float
        Restoring strength :math:`\theta\ge0`.
    s : float
        Noise scale: off-diagonal increments of variance :math:`s^2dt`, diagonal :math:`2s^2dt`.

    Returns
    -------
    t : numpy.ndarray, shape (n_steps + 1,)
    eigs : numpy.ndarray, shape (n_steps + 1, n) or (n_steps + 1, m, n)
        Eigenvalues at each time, sorted increasingly.

    Examples
    --------
    >>> t, eigs = dyson_brownian_motion(np.zeros((4, 4)), 1.0, 100, rng=0)
    >>> eigs.shape, bool(np.all(np.diff(eigs[1:], axis=-1) > 0))  # the paths never meet
    ((101, 4), True)
    """
    h = check_array(h0, "h0")
    if h.ndim not in (2, 3) or h.shape[-1] != h.shape[-2]:
        raise ValueError(f"h0 must have shape (n, n) or (m, n, n), got {h.shape}")
    if not np.allclose(h, np.swapaxes(h, -1, -2)):
        raise ValueError("h0 must be symmetric")
    t_max = check_positive(t_max, "t_max")
    n_steps = check_size(n_steps, "n_steps")
    check_allocation((n_steps + 1,) + h.shape[:-1], "n_steps, h0")
    theta = check_nonnegative(theta, "theta")
    s = check_positive(s, "s")
    dt = t_max / n_steps
    # exact OU step: decay a, and noise b with b^2 = s^2 (1 - e^{-2 theta dt}) / (2 theta)
    a = np.exp(-theta * dt)
    b = s * np.sqrt(dt if theta == 0 else -np.expm1(-2.0 * theta * dt) / (2.0 * theta))
    # one generator per matrix: matrix i's path does not depend on how many run beside it
    gens = spawn_generators(check_seed(rng), int(np.prod(h.shape[:-2], dtype=np.int64)))
    batch, item = h.shape[:-2], h.shape[-2:]
    out = np.empty((n_steps + 1,) + h.shape[:-1])
    # steps whose noise is drawn at once; each generator's stream is the same for any chunk
    chunk = max(1, min(n_steps, _NOISE_BLOCK // (len(gens) * item[0] * item[1])))
    with single_threaded_blas():
        out[0] = np.linalg.eigvalsh(h)
        for k0 in range(0, n_steps, chunk):
            k = min(chunk, n_steps - k0)
            g = np.stack([r.standard_normal((k,) + item) for r in gens], axis=1).reshape((k,) + batch + item)
            for j in range(k):
                # (G + G^T) / sqrt(2): a GOE increment, off-diagonal variance b^2, diagonal 2 b^2
                h = a * h + (b / np.sqrt(2.0)) * (g[j] + np.swapaxes(g[j], -1, -2))
                out[k0 + j + 1] = np.linalg.eigvalsh(h)
    return np.linspace(0.0, t_max, n_steps + 1), out


def _check_sgd(lr, batch, eps):
    """Learning rate in (0, 2) (a stationary state exists), batch size and noise scale."""
    lr = check_positive(lr, "lr")
    if lr >= 2:
        raise ValueError(f"lr must be below 2 (SGD has no stationary state otherwise), got {lr}")
    return lr, check_positive_int(batch, "batch"), check_positive(eps, "eps")


def _batch_statistics(g, n_batches, batch, eps):
    """One student's quenched data: batch covariances C_b (n, 2, 2) and mean label noise a_b (n, 2, 2)."""
    # Bartlett: |B| C_b = L L^T with L = [[chi_B, 0], [N(0, 1), chi_{B-1}]]
    # (the Cholesky factor of a Wishart matrix: three scalars per batch instead of |B| samples)
    l11 = np.sqrt(g.chisquare(batch, n_batches))
    l22 = np.sqrt(g.chisquare(batch - 1, n_batches)) if batch > 1 else np.zeros(n_batches)
    l21 = g.normal(size=n_batches)
    C = np.stack([l11 * l11, l11 * l21, l11 * l21, l21 * l21 + l22 * l22], -1).reshape(-1, 2, 2) / batch
    # the mean of |B| GOE matrices of scale eps^2: GOE of scale eps^2 / |B| (diagonal variance doubled)
    z = g.normal(size=(n_batches, 3)) * eps / np.sqrt(batch)
    a = np.stack([np.sqrt(2) * z[:, 0], z[:, 2], z[:, 2], np.sqrt(2) * z[:, 1]], -1).reshape(-1, 2, 2)
    return C, a


def teacher_student_ensemble(lr, batch, eps, n_seeds, rng=None, n_steps=400, n_batches=500):
    r"""Singular values of an ensemble of :math:`2\times2` students trained by SGD on a teacher :math:`2I_2`.

    Student ``i`` draws, from the ``i``-th child of ``rng``, its quenched data (``n_batches``
    batches, reused in the same order every epoch: the batch covariances
    :math:`\hat C_b=\frac1{|\mathcal B|}\sum_{z\in b}zz^\top`, :math:`z\sim N(0,I_2)`, by the
    Bartlett decomposition, and the batch means :math:`\bar a_b` of GOE label noise of scale
    :math:`\varepsilon^2`), then its start :math:`W\sim N(0,0.1^2)^{2\times2}`, and takes
    ``n_steps`` steps :math:`W\leftarrow W+\alpha[(2I-W)\hat C_b+\bar a_b]`.

    Parameters
    ----------
    lr : float
        Learning rate :math:`\alpha\in(0,2)`.
    batch : int
        Batch size :math:`|\mathcal B|`.
    eps : float
        Label-noise scale :math:`\varepsilon`.
    n_seeds : int
        Number of students.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None
        Root of the students' generators (see :func:`seqrmt.ensemble.run_ensemble`).
    n_steps : int
        SGD steps.
    n_batches : int
        Batches per epoch.

    Returns
    -------
    numpy.ndarray, shape (n_seeds, 2)
        Final singular values, largest first.

    Examples
    --------
    >>> sv = teacher_student_ensemble(0.1, 16, 0.1, n_seeds=500, rng=0, n_steps=200)
    >>> sv.shape, round(float(sv.mean()), 2)
    ((500, 2), 2.0)
    """
    lr, batch, eps = _check_sgd(lr, batch, eps)
    n_seeds, n_steps = check_size(n_seeds, "n_seeds"), check_size(n_steps, "n_steps")
    n_batches = check_size(n_batches, "n_batches")
    n_used = min(n_batches, n_steps)  # batches never reached are not drawn
    check_allocation((n_seeds, n_used, 2, 2), "n_seeds, n_steps")
    C, a, W = np.empty((n_seeds, n_used, 2, 2)), np.empty((n_seeds, n_used, 2, 2)), np.empty((n_seeds, 2, 2))
    for i, g in enumerate(spawn_generators(check_seed(rng), n_seeds)):
        C[i], a[i] = _batch_statistics(g, n_used, batch, eps)
        W[i] = 0.1 * g.normal(size=(2, 2))
    with single_threaded_blas():
        # all students at once; batch n % n_batches: the quenched data are reused every epoch
        for n in range(n_steps):
            W = W + lr * ((2.0 * np.eye(2) - W) @ C[:, n % n_batches] + a[:, n % n_batches])
    return np.linalg.svd(W, compute_uv=False)


def teacher_student_width(lr, batch, eps, method="exact"):
    r"""Stationary two-mode width :math:`\sigma_\rho` of the teacher-student pair.

    ``"leading"``: :math:`\sqrt{\alpha\varepsilon^2/|\mathcal B|}` (the SDE limit);
    ``"ar1"``: :math:`\sqrt{2\alpha\varepsilon^2/(|\mathcal B|(2-\alpha))}` (the recursion with
    :math:`\hat C_b` replaced by :math:`I`); ``"exact"``: from the stationary second moments of
    :math:`D\leftarrow D(I-\alpha\hat C_b)+\alpha\bar a_b`, :math:`D=W-2I`, Wishart fluctuations of
    :math:`\hat C_b` included (a :math:`16\times16` linear system), as :math:`\frac23` of the
    pooled variance of the eigenvalues of the symmetric part of :math:`D`.

    Parameters
    ----------
    lr, batch, eps
        As in :func:`teacher_student_ensemble`.
    method : {"exact", "ar1", "leading"}

    Returns
    -------
    float

    Examples
    --------
    >>> [round(teacher_student_width(0.1, 16, 0.1, m), 5) for m in ("leading", "ar1", "exact")]
    [0.00791, 0.00811, 0.00814]
    """
    lr, batch, eps = _check_sgd(lr, batch, eps)
    if method == "leading":
        return float(np.sqrt(lr * eps**2 / batch))
    if method == "ar1":
        return float(np.sqrt(2.0 * lr * eps**2 / (batch * (2.0 - lr))))
    if method != "exact":
        raise ValueError(f"method must be 'exact', 'ar1' or 'leading', got {method!r}")
    # the second moments scale as eps^2; the two-mode density's variance 3 sigma^2 / 2 is that
    # of the pooled eigenvalues c +- r: E c^2 + E r^2, with r^2 = d^2 + b^2
    m2 = _moments(lr, batch, order=2) * eps**2
    c, d, b = _EIG_FORMS
    return float(np.sqrt(2.0 / 3.0 * (c @ m2 @ c + d @ m2 @ d + b @ m2 @ b)))


def teacher_student_binder(lr, batch):
    r"""Stationary Binder cumulant :math:`U_4` of the teacher-student eigenvalues, exactly.

    The stationary fourth moments of :math:`D\leftarrow D(I-\alpha\hat C_b)+\alpha\bar a_b` solve a
    :math:`256\times256` linear system, with the exact Wishart moments of :math:`\hat C_b` up to
    order four; the Binder cumulant of the pooled eigenvalues
    :math:`c\pm\sqrt{\delta^2+b^2}` of the symmetric part of :math:`D` (centre :math:`c`, half
    difference :math:`\delta`, off-diagonal :math:`b`) follows. It does not depend on
    :math:`\varepsilon`. With :math:`\hat C_b=I` it would be the two-mode value :math:`-4/27`; the
    multiplicative noise raises it by :math:`\frac{46}{27}\frac{\alpha}{|\mathcal B|}` to leading
    order.

    Parameters
    ----------
    lr, batch
        As in :func:`teacher_student_ensemble`.

    Returns
    -------
    float

    Examples
    --------
    >>> round(teacher_student_binder(0.1, 16), 4), round(-4 / 27 + 46 / 27 / 160, 4)
    (-0.1377, -0.1375)
    """
    lr, batch, _ = _check_sgd(lr, batch, 1.0)
    m2, m4 = _moments(lr, batch, order=2), _moments(lr, batch, order=4)
    c, d, b = _EIG_FORMS
    e4 = lambda u, v, w, z: np.einsum("a,b,c,d,abcd->", u, v, w, z, m4)  # noqa: E731
    # pooled eigenvalues c +- r, r^2 = d^2 + b^2: <u^2> = E c^2 + E r^2, <u^4> = E c^4 + 6 E c^2 r^2 + E r^4
    mom2 = c @ m2 @ c + d @ m2 @ d + b @ m2 @ b
    mom4 = (e4(c, c, c, c) + 6 * (e4(c, c, d, d) + e4(c, c, b, b))
            + e4(d, d, d, d) + 2 * e4(d, d, b, b) + e4(b, b, b, b))
    return float(mom4 / (3.0 * mom2**2) - 1.0)


# linear forms on the entries (D00, D01, D10, D11): centre, half difference, symmetric off-diagonal
_EIG_FORMS = (np.array([0.5, 0.0, 0.0, 0.5]), np.array([0.5, 0.0, 0.0, -0.5]), np.array([0.0, 0.5, 0.5, 0.0]))
_ENTRIES = [(0, 0), (0, 1), (1, 0), (1, 1)]


def _matchings(items):
    """Perfect matchings of a list (Isserlis' theorem sums over them)."""
    if not items:
        yield []
        return
    for k in range(1, len(items)):
        for rest in _matchings(items[1:k] + items[k + 1:]):
            yield [(items[0], items[k])] + rest


def _partitions(items):
    """Set partitions of a list."""
    if not items:
        yield []
        return
    for p in _partitions(items[1:]):
        for k in range(len(p)):
            yield p[:k] + [[items[0]] + p[k]] + p[k + 1:]
        yield [[items[0]]] + p


@functools.lru_cache(maxsize=None)
def _wishart_moment(pairs, batch):
    """E prod_r C_{i_r j_r} for C = (1/B) sum_s z_s z_s^T, z ~ N(0, I): sum over which factors share a sample."""
    # C = (1/B) sum_s z_s z_s^T: expand the product of factors over the samples they use; factors on
    # the same sample form a block of a partition, different blocks use different samples
    total = 0
    for p in _partitions(list(range(len(pairs)))):
        # the blocks of p draw distinct samples, B (B - 1) ... ways; within a block a Gaussian
        # moment of independent components, the product of (count - 1)!! over the components
        ways = math.prod(batch - k for k in range(len(p)))
        for block in p:
            idx = [x for r in block for x in pairs[r]]
            counts = (idx.count(0), idx.count(1))
            ways *= 0 if counts[0] % 2 or counts[1] % 2 else math.prod(math.prod(range(c - 1, 0, -2))
                                                                       for c in counts)
        total += ways
    return total / batch ** len(pairs)


def _a_moment(pairs, lr, batch):
    """E prod_r A_{k_r j_r} for A = I - lr C: expand the product over the factors taken from -lr C."""
    # A = I - lr C: each factor is either the identity (needs k == j) or -lr C_kj
    total = 0.0
    for take in itertools.product((0, 1), repeat=len(pairs)):
        if all(pairs[r][0] == pairs[r][1] for r in range(len(pairs)) if not take[r]):
            sub = tuple(pairs[r] for r in range(len(pairs)) if take[r])
            total += (-lr) ** len(sub) * (_wishart_moment(sub, batch) if sub else 1.0)
    return total


def _noise_moment(pairs):
    """E prod_r abar_{i_r j_r} for a GOE matrix of scale 1 (Isserlis)."""
    # Isserlis: a sum over perfect matchings; E abar_ij abar_kl = delta_ik delta_jl + delta_il delta_jk
    return sum(np.prod([(pairs[u][0] == pairs[v][0]) * (pairs[u][1] == pairs[v][1])
                        + (pairs[u][0] == pairs[v][1]) * (pairs[u][1] == pairs[v][0]) for u, v in m])
               for m in _matchings(list(range(len(pairs)))))


@functools.lru_cache(maxsize=None)
def _moments(lr, batch, order):
    """Stationary moments E D^(x order) of the recursion, for eps^2 / |B| = 1 / batch (shape (4,) * order)."""
    n = len(_ENTRIES)
    # E[prod_r A_{k_r j_r}] as a tensor with axes (k1, j1, k2, j2, ...)
    EA = np.zeros((2,) * (2 * order))
    for kj in itertools.product(range(2), repeat=2 * order):
        EA[kj] = _a_moment(tuple(zip(kj[::2], kj[1::2])), lr, batch)
    # L maps E[D_{i1 k1} D_{i2 k2} ...] to E[(DA)_{i1 j1} (DA)_{i2 j2} ...] (D, A independent)
    letters = "abcdefgh"[:order]
    outer, inner = "".join(f"{x}{x.upper()}" for x in letters), "".join(f"{x}{x.upper()}" for x in "pqrs"[:order])
    spec = ",".join(f"{x}{y}" for x, y in zip(letters, "pqrs")) + "," + "".join(
        f"{y.upper()}{x.upper()}" for x, y in zip(letters, "pqrs")) + "->" + outer + inner
    L = np.einsum(spec, *[np.eye(2)] * order, EA).reshape(n**order, n**order)
    if order == 2 and np.max(np.abs(np.linalg.eigvals(L))) >= 1:
        raise ValueError(f"the second moments diverge at lr={lr}, batch={batch}")
    var = lr**2 / batch  # the noise lr * abar has scale lr^2 eps^2 / |B|, eps = 1 here
    rhs = np.zeros((n,) * order)
    m2 = _moments(lr, batch, 2) if order == 4 else None
    for out in itertools.product(range(n), repeat=order):
        ij = [_ENTRIES[o] for o in out]
        rhs[out] = var ** (order // 2) * _noise_moment(tuple(ij))
        if order == 4:  # two factors of noise, two of D A (whose second moment is m2 - noise)
            for t in itertools.combinations(range(4), 2):
                r = [k for k in range(4) if k not in t]
                noise2 = var * _noise_moment((ij[t[0]], ij[t[1]]))
                rhs[out] += noise2 * (m2[out[r[0]], out[r[1]]] - var * _noise_moment((ij[r[0]], ij[r[1]])))
    # stationarity: m = L m + rhs, one linear solve (4 x 4 at order 2, 256 x 256 at order 4)
    m = np.linalg.solve(np.eye(n**order) - L, rhs.ravel()).reshape((n,) * order)
    if order == 4 and np.any(np.einsum("aaaa->a", m) < np.diag(m2) ** 2):
        # E D^4 >= (E D^2)^2 fails only when the fourth moments diverge
        raise ValueError(f"the fourth moments diverge at lr={lr}, batch={batch}")
    return m
