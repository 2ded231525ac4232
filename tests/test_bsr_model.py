"""Tests of the bilinear-sequence-regression data model (seqrmt.bsr.model)."""

import numpy as np
import pytest

from seqrmt.bsr.model import bilinear_readout, bsr_scalings, sample_bsr


def test_shapes_and_scalings_for_both_aspect_ratios():
    for d, L in [(12, 6), (6, 12)]:
        data = sample_bsr(30, d, L, 3, 0.2, rng=0)
        assert data.X.shape == (30, L, d)
        assert data.S.shape == (d, L) and data.U.shape == (d, 3) and data.V.shape == (L, 3)
        assert np.isclose(data.alpha, 30 / (d * L))
        assert np.isclose(data.beta, L / d) and np.isclose(data.rho, 3 / d)
        assert np.linalg.matrix_rank(data.S) == 3


def test_readout_equals_trace_formula():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((5, 3, 4))
    S = rng.standard_normal((4, 3))
    expected = [np.trace(X[m] @ S) / np.sqrt(12) for m in range(5)]
    assert np.allclose(bilinear_readout(X, S), expected)


def test_normalisation_unit_variance_entries_and_targets():
    # Entries of S* have variance 1 and Var y = 1 + delta (spec Section 1).
    d, L, r, delta, n = 30, 20, 6, 0.5, 4000
    data = sample_bsr(n, d, L, r, delta, rng=2)
    S_var = np.mean([sample_bsr(1, d, L, r, 0.0, rng=s).S.var() for s in range(200)])
    assert abs(S_var - 1.0) < 0.02  # std of the mean of 200 draws is about 0.006
    # The variance of y given S* is ||S*||_F^2/(dL) + delta; its sampling error is sqrt(2/n) * 1.5.
    expected = np.sum(data.S**2) / (d * L) + delta
    assert abs(data.y.var() - expected) < 4 * np.sqrt(2 / n) * expected
    noise = data.y - bilinear_readout(data.X, data.S)
    assert abs(noise.var() - delta) < 4 * np.sqrt(2 / n) * delta


def test_same_seed_same_draw():
    a, b = sample_bsr(10, 5, 4, 2, 0.1, rng=7), sample_bsr(10, 5, 4, 2, 0.1, rng=7)
    assert np.array_equal(a.y, b.y) and np.array_equal(a.S, b.S)


def test_bsr_scalings_alpha_bar_identity():
    alpha, beta, rho, alpha_bar = bsr_scalings(500, 20, 40, 4)
    assert np.isclose(alpha_bar, alpha * beta / (rho * (1 + beta)))


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


def test_readout_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="S"):
        bilinear_readout(np.ones((2, 3, 4)), np.ones((3, 4)))
    with pytest.raises(ValueError, match="X"):
        bilinear_readout(np.ones((3, 4)), np.ones((4, 3)))
