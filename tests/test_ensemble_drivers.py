"""Monte Carlo drivers give every realisation its own generator (seqrmt.ensemble).

For each driver: the result is bit-identical with one and two workers, and realisation ``i``
equals an independent computation with the ``i``-th spawned generator, built from the public
one-draw samplers (so a driver that went back to sharing one stream would fail).
"""

import numpy as np
import pytest

from seqrmt import lgm
from seqrmt._validation import check_seed
from seqrmt.ensemble import spawn_generators


@pytest.fixture(scope="module")
def P9():
    return lgm.softmax_distributions(3, 9, 0.9, rng=0)


def _same(a, b):
    """Bit-identical arrays (or nested tuples/lists of arrays)."""
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return np.array_equal(np.asarray(a), np.asarray(b))


def _context_fields(sim):
    return (sim.m, sim.C, sim.train_error, sim.delta, sim.realised_weights)


# ------------------------------------------------------------------------------- the root helper
def test_root_accepts_seeds_sequences_generators_and_none():
    g = np.random.default_rng(1)
    ss = np.random.SeedSequence(2)
    assert check_seed(3) == 3 and check_seed(g) is g and check_seed(ss) is ss
    assert isinstance(check_seed(None), np.random.SeedSequence)
    for bad, match in ((-1, "non-negative"), (1.5, "rng"), (True, "rng"), ("0", "rng")):
        with pytest.raises(ValueError, match=match):
            check_seed(bad)


# --------------------------------------------------------------------------------- lgm, Model 1
def _context_trial_reference(rng, P, d, n, gammas, fixed=None):
    """Trial of Model 1 from scratch: Z, counts and the ridge predictions on the full data."""
    k, c = P.shape
    Z = rng.standard_normal((d, c))
    n_a = fixed if fixed is not None else rng.multinomial(n, np.full(c, 1 / c))
    N = rng.multinomial(n_a, P.T)
    return lgm.context_predictions(Z, N, gammas)


@pytest.mark.parametrize("counts", ["multinomial", "fixed"])
def test_simulate_context_model_workers_and_children(P9, counts):
    args = (P9, np.ones(9), 9, 90, [0.1, 1.0], 5)
    a = lgm.simulate_context_model(*args, rng=4, counts=counts, jobs=1)
    b = lgm.simulate_context_model(*args, rng=4, counts=counts, jobs=2)
    assert all(_same(x, y) for x, y in zip(_context_fields(a), _context_fields(b)))
    fixed = np.full(9, 10) if counts == "fixed" else None
    gens = spawn_generators(4, 5)
    hats = []
    for t, g in enumerate(gens):
        P_hat, delta = _context_trial_reference(g, P9, 9, 90, [0.1, 1.0], fixed)
        hats.append(P_hat)
        np.testing.assert_array_equal(a.delta[:, t], delta)
        np.testing.assert_allclose(a.train_error[:, t], np.sum((P_hat - P9) ** 2, axis=(1, 2)) / 9,
                                   rtol=1e-14)
    np.testing.assert_allclose(a.m, np.mean(hats, axis=0), rtol=1e-12, atol=1e-15)
    # a trial does not depend on how many there are
    more = lgm.simulate_context_model(*args[:-1], 8, rng=4, counts=counts)
    np.testing.assert_array_equal(more.train_error[:, :5], a.train_error)


def test_simulate_context_batches_children(P9):
    args = (P9, np.ones(9), 9, 90, [0.1], 8)
    bs1 = lgm.simulate_context_batches(*args, rng=6, n_batches=4, jobs=1)
    bs2 = lgm.simulate_context_batches(*args, rng=6, n_batches=4, jobs=2)
    for x, y in zip(bs1, bs2):
        assert all(_same(u, v) for u, v in zip(_context_fields(x), _context_fields(y)))
    for b, g in zip(bs1, spawn_generators(6, 4)):
        ref = lgm.simulate_context_model(*args[:-1], 2, rng=g)
        assert all(_same(u, v) for u, v in zip(_context_fields(b), _context_fields(ref)))
    assert not np.array_equal(bs1[0].train_error, bs1[1].train_error)


def test_context_variance_vs_samples_children(P9):
    v1 = lgm.context_variance_vs_samples(P9, np.ones(9), 9, [5, 20], 0.1, 6, rng=2, n_batches=3,
                                         jobs=1)
    v2 = lgm.context_variance_vs_samples(P9, np.ones(9), 9, [5, 20], 0.1, 6, rng=2, n_batches=3,
                                         jobs=2)
    np.testing.assert_array_equal(v1, v2)
    for j, (m, g) in enumerate(zip([5, 20], spawn_generators(2, 2))):
        bs = lgm.simulate_context_batches(P9, np.ones(9), 9, 9 * m, [0.1], 6, rng=g, n_batches=3,
                                          counts="fixed")
        np.testing.assert_array_equal(v1[:, j], lgm.context_batch_variance(bs)[:, 0].mean(axis=1))


# --------------------------------------------------------------------------------- lgm, Model 2
def _mixture_reference(rng, M, pi, P, n, gammas):
    """Trial of Model 2 from scratch: data matrix, one-hot labels, ridge by solve."""
    d, c = M.shape
    k = P.shape[0]
    a = rng.choice(c, size=n, p=pi)
    X = M[:, a] + rng.standard_normal((d, n))
    u = rng.random(n)
    tokens = np.minimum((u[None, :] > np.cumsum(P, axis=0)[:, a]).sum(axis=0), k - 1)
    Y = np.eye(k)[tokens].T
    out = []
    for g in gammas:
        W = np.linalg.solve(X @ X.T / n + g * np.eye(d), X @ Y.T / n)
        test = np.sum(pi * np.sum((W.T @ M - P) ** 2, axis=0)) + np.sum(W**2)
        out.append((test, np.sum((Y - W.T @ X) ** 2) / n, np.sum(W**2)))
    return np.array(out).T  # (3, g)


def test_simulate_mixture_model_workers_and_children(P9):
    rng = np.random.default_rng(3)
    M, pi = rng.standard_normal((12, 9)) * 2, rng.dirichlet(np.ones(9))
    a = lgm.simulate_mixture_model(M, pi, P9, 40, [0.1, 1.0], 4, rng=5, jobs=1)
    b = lgm.simulate_mixture_model(M, pi, P9, 40, [0.1, 1.0], 4, rng=5, jobs=2)
    for f in ("test_error", "train_error", "w_norm2"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
    for t, g in enumerate(spawn_generators(5, 4)):
        ref = _mixture_reference(g, M, pi, P9, 40, [0.1, 1.0])
        got = np.array([a.test_error[:, t], a.train_error[:, t], a.w_norm2[:, t]])
        np.testing.assert_allclose(got, ref, rtol=1e-9)


def test_mixture_test_error_deviations_children(P9):
    G, pi = np.eye(9) + 1, np.full(9, 1 / 9)
    a = lgm.mixture_test_error_deviations(G, pi, P9, [30, 60], 0.1, 3, rng=8, jobs=1)
    b = lgm.mixture_test_error_deviations(G, pi, P9, [30, 60], 0.1, 3, rng=8, jobs=2)
    np.testing.assert_array_equal(a, b)
    for j, (m, g) in enumerate(zip([30, 60], spawn_generators(8, 2))):
        M = lgm.means_from_gram(G, m // 2, g)
        sim = lgm.simulate_mixture_model(M, pi, P9, m, 0.1, 3, rng=g)
        want = sim.test_error[0] - lgm.mixture_theory(M, pi, P9, m, 0.1).test_error
        np.testing.assert_array_equal(a[j], want)


# ------------------------------------------------------------------------------------ dyson.dbm
def test_dyson_brownian_motion_one_generator_per_matrix(monkeypatch):
    from seqrmt.dyson import dbm

    h0 = np.stack([np.diag([0.0, 1.0, 2.0]), np.eye(3), np.zeros((3, 3))])
    t, e = dbm.dyson_brownian_motion(h0, 1.0, 7, rng=5, theta=0.5, s=0.7)
    a, b = dbm._ou_coefficients(0.5, 0.7, 1.0 / 7)
    for i, g in enumerate(spawn_generators(5, 3)):
        h, ref = h0[i], [np.linalg.eigvalsh(h0[i])]
        for _ in range(7):  # matrix i: its own stream, step after step
            z = g.standard_normal((3, 3))
            h = a * h + b / np.sqrt(2.0) * (z + z.T)
            ref.append(np.linalg.eigvalsh(h))
        np.testing.assert_allclose(e[:, i], np.array(ref), rtol=1e-12, atol=1e-12)
    # a path does not depend on the size of the batch
    np.testing.assert_array_equal(dbm.dyson_brownian_motion(h0[:2], 1.0, 7, rng=5, theta=0.5,
                                                            s=0.7)[1], e[:, :2])
    # blocks of steps bound the memory, not the numbers
    monkeypatch.setattr(dbm, "_NOISE_BLOCK", 20)
    np.testing.assert_array_equal(dbm.dyson_brownian_motion(h0, 1.0, 7, rng=5, theta=0.5, s=0.7)[1], e)


def test_independent_brownian_motion_and_wishart_one_generator_per_item(monkeypatch):
    from seqrmt.dyson import dbm

    x0 = np.array([[0.0, 1.0], [2.0, 3.0]])
    _, x = dbm.independent_brownian_motion(x0, 1.0, 5, rng=2, theta=1.0, s=0.5)
    a, b = dbm._ou_coefficients(1.0, np.sqrt(2.0) * 0.5, 0.2)
    for i, g in enumerate(spawn_generators(2, 2)):
        ref = [x0[i]]
        for z in g.standard_normal((5, 2)):
            ref.append(a * ref[-1] + b * z)
        np.testing.assert_allclose(x[:, i], np.array(ref), rtol=1e-14)
    w0 = np.zeros((3, 4, 2))
    _, e = dbm.wishart_process(w0, 2.0, 4, rng=9, s=0.5)
    for i, g in enumerate(spawn_generators(9, 3)):
        w = np.cumsum(0.5 * np.sqrt(0.5) * g.standard_normal((4, 4, 2)), axis=0)
        np.testing.assert_allclose(e[1:, i], np.linalg.eigvalsh(np.swapaxes(w, -1, -2) @ w),
                                   rtol=1e-10, atol=1e-12)
    monkeypatch.setattr(dbm, "_NOISE_BLOCK", 9)
    np.testing.assert_array_equal(dbm.wishart_process(w0, 2.0, 4, rng=9, s=0.5)[1], e)
    np.testing.assert_array_equal(
        dbm.independent_brownian_motion(x0, 1.0, 5, rng=2, theta=1.0, s=0.5)[1], x)
