"""Tests of the bilinear-sequence-regression sampler (seqrmt.bsr.sample_bsr)."""

import numpy as np
import pytest

from seqrmt.bsr import sample_bsr


def test_shapes_rank_and_trace_formula_for_both_aspect_ratios():
    for d, L in [(12, 6), (6, 12)]:
        data = sample_bsr(30, d, L, 3, 0.0, rng=0)
        assert data.X.shape == (30, L, d) and data.y.shape == (30,)
        assert data.S.shape == (d, L) and data.U.shape == (d, 3) and data.V.shape == (L, 3)
        assert np.linalg.matrix_rank(data.S) == 3
        np.testing.assert_allclose(data.S, data.U @ data.V.T / np.sqrt(3), rtol=1e-13)
        # noiseless labels are Tr[X_mu S*] / sqrt(dL), one trace at a time
        want = [np.trace(data.X[m] @ data.S) / np.sqrt(d * L) for m in range(30)]
        np.testing.assert_allclose(data.y, want, rtol=1e-12, atol=1e-12)


def test_normalisation_unit_variance_entries_and_labels():
    # Entries of S* have variance 1 and Var y = ||S*||^2 / (dL) + delta given S*.
    d, L, r, delta, n = 30, 20, 6, 0.5, 4000
    data = sample_bsr(n, d, L, r, delta, rng=2)
    S_var = np.mean([sample_bsr(1, d, L, r, 0.0, rng=s).S.var() for s in range(200)])
    assert abs(S_var - 1.0) < 0.02  # the sd of the mean of 200 draws is about 0.006
    expected = np.sum(data.S**2) / (d * L) + delta
    assert abs(data.y.var() - expected) < 4 * np.sqrt(2 / n) * expected
    noise = data.y - np.einsum("nld,dl->n", data.X, data.S) / np.sqrt(d * L)
    assert abs(noise.var() - delta) < 4 * np.sqrt(2 / n) * delta


def test_same_seed_same_draw_and_draw_order():
    a, b = sample_bsr(10, 5, 4, 2, 0.1, rng=7), sample_bsr(10, 5, 4, 2, 0.1, rng=7)
    assert np.array_equal(a.y, b.y) and np.array_equal(a.S, b.S)
    g = np.random.default_rng(7)  # documented order: U, V, X, noise
    U, V, X = g.standard_normal((5, 2)), g.standard_normal((4, 2)), g.standard_normal((10, 4, 5))
    assert np.array_equal(a.U, U) and np.array_equal(a.V, V) and np.array_equal(a.X, X)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(n=0, d=3, L=3, r=1, delta=0.0), "n"),
        (dict(n=5, d=-1, L=3, r=1, delta=0.0), "d"),
        (dict(n=5, d=3, L=0, r=1, delta=0.0), "L"),
        (dict(n=5, d=3, L=3, r=0, delta=0.0), "r"),
        (dict(n=5, d=3, L=3, r=1, delta=-0.1), "delta"),
        (dict(n=5, d=3, L=3, r=1, delta=float("nan")), "delta"),
    ],
)
def test_sample_bsr_rejects_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        sample_bsr(**kwargs, rng=0)
