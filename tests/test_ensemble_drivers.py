"""Monte Carlo drivers give every realisation its own generator (seqrmt.ensemble).

For each driver: the result is bit-identical with one and two workers, and realisation ``i``
equals an independent computation with the ``i``-th spawned generator, built from the public
one-draw samplers (so a driver that went back to sharing one stream would fail).
"""

import numpy as np
import pytest

from seqrmt import bsr
from seqrmt.bsr import free_probability as fp
from seqrmt.bsr import model as bsr_model
from seqrmt.bsr import theory as bsr_theory
from seqrmt._validation import check_seed
from seqrmt.ensemble import spawn_generators


def _same(a, b):
    """Bit-identical arrays (or nested tuples/lists of arrays)."""
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return np.array_equal(np.asarray(a), np.asarray(b))


# ------------------------------------------------------------------------------- the root helper
def test_root_accepts_seeds_sequences_generators_and_none():
    g = np.random.default_rng(1)
    ss = np.random.SeedSequence(2)
    assert check_seed(3) == 3 and check_seed(g) is g and check_seed(ss) is ss
    assert isinstance(check_seed(None), np.random.SeedSequence)
    for bad, match in ((-1, "non-negative"), (1.5, "rng"), (True, "rng"), ("0", "rng")):
        with pytest.raises(ValueError, match=match):
            check_seed(bad)


# ------------------------------------------------------------------------------------------ bsr
def test_signal_plus_noise_singular_values_workers_and_children():
    s1, o1 = fp.signal_plus_noise_singular_values(20, 2.0, 0.2, 0.3, 3, rng=5, oracle=True, jobs=1)
    s2, o2 = fp.signal_plus_noise_singular_values(20, 2.0, 0.2, 0.3, 3, rng=5, oracle=True, jobs=2)
    assert _same((s1, o1), (s2, o2))
    plain = fp.signal_plus_noise_singular_values(20, 2.0, 0.2, 0.3, 3, rng=5, jobs=2)
    for k, g in enumerate(spawn_generators(5, 3)):
        S, Y = fp.sample_signal_plus_noise(20, 40, 4, 0.3, g)
        u, s, vt = np.linalg.svd(Y)
        scale = (20 * 40) ** 0.25
        np.testing.assert_allclose(plain[k], s / scale, rtol=1e-12)
        np.testing.assert_allclose(s1[k], s / scale, rtol=1e-12)
        np.testing.assert_allclose(o1[k], np.diag(u.T @ S @ vt.T) / scale, atol=1e-12)


def test_rie_error_monte_carlo_workers_and_children():
    a = fp.rie_error_monte_carlo(30, 1.0, 0.5, 0.5, 3, rng=1, jobs=1)
    b = fp.rie_error_monte_carlo(30, 1.0, 0.5, 0.5, 3, rng=1, jobs=2)
    np.testing.assert_array_equal(a, b)
    for k, g in enumerate(spawn_generators(1, 3)):
        S, Y = fp.sample_signal_plus_noise(30, 30, 15, 0.5, g)
        assert a[k] == pytest.approx(np.mean((fp.rie_denoise(Y, 0.5, 0.5) - S) ** 2), rel=1e-12)


def test_svt_risk_monte_carlo_workers_and_children():
    lam = np.array([0.5, 1.0])
    a = bsr_theory.svt_risk_monte_carlo(20, 24, 3, 0.1, lam, 3, scale=10.0, rng=2, jobs=1)
    b = bsr_theory.svt_risk_monte_carlo(20, 24, 3, 0.1, lam, 3, scale=10.0, rng=2, jobs=2)
    assert _same(a, b)
    rows = []
    for g in spawn_generators(2, 3):
        S = 10.0 * bsr_model._planted(20, 24, 3, g)[2]
        Y = S + np.sqrt(0.1) * g.standard_normal((20, 24))
        u, s, vt = np.linalg.svd(Y, full_matrices=False)
        tau = lam * np.sqrt(0.1 * 21)
        rows.append([np.sum(((u * np.maximum(s - t, 0)) @ vt - S) ** 2) / (0.1 * 20 * 24)
                     for t in tau])
    rows = np.array(rows)
    np.testing.assert_allclose(a[0], rows.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(a[1], rows.std(axis=0, ddof=1) / np.sqrt(3), rtol=1e-9)


def test_gd_on_independent_data_workers_and_children():
    opts = dict(n_students=2, init="small", max_steps=40, record_every=10)
    a = bsr.gd_on_independent_data(3, 60, 6, 5, 1, delta=0.1, return_data=True, rng=3, jobs=1,
                                   **opts)
    b = bsr.gd_on_independent_data(3, 60, 6, 5, 1, delta=0.1, return_data=True, rng=3, jobs=2,
                                   **opts)
    for (da, ra), (db, rb) in zip(a, b):
        assert np.array_equal(da.X, db.X) and np.array_equal(ra.S, rb.S)
        assert np.array_equal(ra.error, rb.error)
    for (data, res), g in zip(a, spawn_generators(3, 3)):
        ref_data = bsr.sample_bsr(60, 6, 5, 1, 0.1, g)
        ref = bsr.gd_factorized(ref_data.X, ref_data.y, 1, S_true=ref_data.S, rng=g, **opts)
        assert np.array_equal(data.X, ref_data.X) and np.array_equal(res.S, ref.S)


def test_interpolator_comparison_workers_bit_identical():
    opts = dict(init="small", max_steps=100, tol=1e-10)
    a = bsr.interpolator_comparison(2, 30, 5, 5, 1, [1], rng=4, jobs=1, **opts)
    b = bsr.interpolator_comparison(2, 30, 5, 5, 1, [1], rng=4, jobs=2, **opts)
    assert sorted(a) == sorted(b)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])


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
