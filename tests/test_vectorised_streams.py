"""Vectorised batches of realisations: realisation ``i`` draws from the ``i``-th spawned generator.

For each batched sampler of the library (``goe_eigs``, ``teacher_student_ensemble``,
``train_rbm_pcd``) two properties are checked bit for bit:

* realisation ``i`` of a batch of ``n`` equals the same function called with a batch of one whose root
  spawns, as its first child, the ``i``-th child of the batch's root (a
  :class:`numpy.random.SeedSequence` with ``n_children_spawned=i``);
* split invariance: the first ``k`` realisations of a batch of ``n`` equal a batch of ``k``.

The samplers' first realisations are also recomputed independently from the ``i``-th generator of
:func:`seqrmt.ensemble.spawn_generators` in plain numpy.
(``train_rbm_exact`` trains a single run: its one generator is already one realisation.)
"""

import numpy as np
import pytest

from seqrmt import dyson
from seqrmt.dyson import _rbm
from seqrmt.ensemble import spawn_generators


def ith_root(seed, i):
    """A root whose first spawned child is the ``i``-th child of ``SeedSequence(seed)``."""
    return np.random.SeedSequence(seed, n_children_spawned=i)


def test_ith_root_spawns_the_ith_child():
    child = ith_root(9, 3).spawn(1)[0]
    assert child.spawn_key == np.random.SeedSequence(9).spawn(4)[3].spawn_key
    assert np.random.default_rng(child).random() == spawn_generators(9, 4)[3].random()


def check_streams(run, seed, n, k, equal=np.testing.assert_array_equal):
    """``run(root, size)`` returns a batch with realisations on axis 0."""
    full = run(seed, n)
    for i in range(n):
        equal(full[i], run(ith_root(seed, i), 1)[0])
    equal(full[:k], run(seed, k))
    assert not np.array_equal(full[0], full[1])  # the realisations differ


# ------------------------------------------------------------------ GOE spectra
@pytest.mark.parametrize("method,n", [("dense", 4), ("tridiagonal", 7), ("tridiagonal", 1)])
def test_goe_eigs_streams(method, n):
    check_streams(lambda r, m: dyson.goe_eigs(n, m, rng=r, scale=0.7, method=method), 5, 6, 3)


def test_goe_eigs_independent():
    n, v = 4, 0.7
    dense = dyson.goe_eigs(n, 3, rng=2, scale=v, method="dense")
    tri = dyson.goe_eigs(n, 3, rng=2, scale=v, method="tridiagonal")
    for i in range(3):
        g = spawn_generators(2, 3)[i]
        x = g.normal(size=(n, n))
        np.testing.assert_allclose(dense[i], np.linalg.eigvalsh(np.sqrt(v / 2) * (x + x.T)), atol=1e-12)
        g = spawn_generators(2, 3)[i]
        a = np.sqrt(2 * v) * g.normal(size=n)
        b = np.sqrt(v * g.chisquare(np.arange(n - 1, 0, -1)))
        t = np.diag(a) + np.diag(b, 1) + np.diag(b, -1)
        np.testing.assert_allclose(tri[i], np.linalg.eigvalsh(t), atol=1e-12)


# ------------------------------------------------------------------ teacher-student SGD
def test_teacher_student_ensemble_streams():
    check_streams(lambda r, m: dyson.teacher_student_ensemble(0.2, 4, 0.1, n_seeds=m, rng=r, n_steps=40,
                                                              n_batches=15), 4, 5, 2)


def test_teacher_student_ensemble_independent():
    """Member i: Bartlett Wishart means, then GOE noise, then W, from the i-th generator."""
    lr, B, eps, steps = 0.2, 3, 0.1, 12
    sv = dyson.teacher_student_ensemble(lr, B, eps, n_seeds=3, rng=6, n_steps=steps, n_batches=steps)
    for i, g in enumerate(spawn_generators(6, 3)):
        l11 = np.sqrt(g.chisquare(B, size=steps))
        l22 = np.sqrt(g.chisquare(B - 1, size=steps))
        l21 = g.normal(size=steps)
        L = np.zeros((steps, 2, 2))
        L[:, 0, 0], L[:, 1, 0], L[:, 1, 1] = l11, l21, l22
        C = L @ L.transpose(0, 2, 1) / B
        z = g.normal(size=(steps, 3)) * eps / np.sqrt(B)
        A = np.stack([np.sqrt(2) * z[:, 0], z[:, 2], z[:, 2], np.sqrt(2) * z[:, 1]], -1).reshape(-1, 2, 2)
        W = 0.1 * g.normal(size=(2, 2))
        for b in range(steps):
            W = W + lr * ((2 * np.eye(2) - W) @ C[b] + A[b])
        np.testing.assert_allclose(sv[i], np.linalg.svd(W, compute_uv=False), rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------------ RBM trained by PCD
K4 = 6.0 * np.eye(4) - np.roll(np.eye(4), 1, 0) - np.roll(np.eye(4), -1, 0)  # ring, m^2 = 4


@pytest.mark.parametrize("init", ["random", "fixed_point"])
def test_train_rbm_pcd_streams(init):
    def run(r, m):
        res = dyson.train_rbm_pcd(K4, 3, 9.0, 0.1, 5, 25, m, rng=r, k=2, init=init, record_steps=[0, 10, 25])
        return np.concatenate([res.gram.transpose(1, 0, 2, 3).reshape(m, -1), res.W.reshape(m, -1)], axis=1)

    check_streams(run, 11, 4, 2)


def test_train_rbm_pcd_noise_blocks_do_not_change_numbers(monkeypatch):
    a = dyson.train_rbm_pcd(K4, 3, 9.0, 0.1, 5, 25, 3, rng=1, k=2).W
    monkeypatch.setattr(_rbm, "_NOISE_BLOCK", 7)  # one update per block
    np.testing.assert_array_equal(dyson.train_rbm_pcd(K4, 3, 9.0, 0.1, 5, 25, 3, rng=1, k=2).W, a)


def test_train_rbm_pcd_independent():
    """Training i: initial W, then per update k sweeps of (hidden, visible) noise per chain."""
    n_v, n_h, mu2, lr, B, steps, k = 4, 3, 9.0, 0.1, 5, 6, 2
    res = dyson.train_rbm_pcd(K4, n_h, mu2, lr, B, steps, 2, rng=3, k=k)
    Ct = np.linalg.inv(K4)
    for i, g in enumerate(spawn_generators(3, 2)):
        W = g.normal(0.0, 0.1, size=(n_v, n_h))
        phi = np.ones((B, n_v))
        for _ in range(steps):
            z = g.standard_normal((k, B, n_h + n_v))
            for j in range(k):
                h = phi @ W + z[j, :, :n_h]
                phi = h @ W.T / mu2 + z[j, :, n_h:] / np.sqrt(mu2)
            W = W + lr * (Ct - phi.T @ phi / B) @ W
        np.testing.assert_allclose(res.W[i], W, rtol=1e-10, atol=1e-13)
