"""Tests for seqrmt.ntp.corpus (offline data sets of Chapter 3)."""

import numpy as np
import pytest

from seqrmt.ntp.corpus import linear_ntp_example, support_only, tinystories_like
from seqrmt.ntp.data import NTPData


def test_c3_data_statistics():
    """C-3: H = 1.309491, n = 217 (exact draw order of the spec)."""
    Hbar, d = linear_ntp_example(0)
    assert Hbar.shape == (30, 20) and d.S.shape == (8, 20)
    assert d.n == 217
    assert d.entropy() == pytest.approx(1.309491, abs=1e-4)
    assert np.all(d.support_sizes == 4)


def test_support_only_c8_statistics():
    """Section 5.3 generator: mean support size 4.25 at (400, 104, 12), seed 0."""
    S = support_only(400, 104, 12, 0)
    assert S.shape == (104, 400)
    assert S.sum(axis=0).mean() == pytest.approx(4.255, abs=1e-9)
    assert S.sum(axis=0).min() >= 2 and S.sum(axis=0).max() <= 7
    np.testing.assert_array_equal(S, support_only(400, 104, 12, np.random.default_rng(0)))


def test_tinystories_like_statistics():
    c = tinystories_like(0)
    d = c.data
    assert isinstance(d, NTPData)
    assert d.m == 400 and 95 <= d.V <= 104
    sizes = d.support_sizes
    assert sizes.min() >= 2 and sizes.max() <= 9 and 4.5 < sizes.mean() < 6
    assert len(c.lines) == d.n
    assert c.context_ids.shape == (400, 5)
    # the corpus lines reproduce the counts
    again = NTPData.from_pairs(
        [(tuple(line.split()[:5]), line.split()[5]) for line in c.lines],
        contexts=d.contexts, vocab=d.vocab,
    )
    np.testing.assert_array_equal(again.counts, d.counts)
    # ids decode to the contexts, contexts distinct
    assert [tuple(c.context_vocab[i] for i in row) for row in c.context_ids] == d.contexts
    assert len(set(d.contexts)) == d.m
    # supports are reused (subspace collapse visible) and mostly in-class
    n_unique = len(np.unique(d.S.T, axis=0))
    assert n_unique < 0.8 * d.m
    in_class = np.array([(d.S[:, j] * (c.word_class == c.context_class[j])).sum() for j in range(d.m)])
    assert np.all(sizes - in_class <= 1)
    assert 0.15 < np.mean(sizes - in_class) < 0.4
    # counts in {1..4}
    assert set(np.unique(d.counts[d.S == 1]).tolist()) == {1, 2, 3, 4}
    # seeded
    np.testing.assert_array_equal(tinystories_like(0).data.counts, d.counts)


def test_validation_errors():
    with pytest.raises(ValueError, match="m"):
        support_only(0, 10, 2, 0)
    with pytest.raises(ValueError, match="n_class"):
        support_only(5, 3, 4, 0)
    with pytest.raises(ValueError, match="k"):
        linear_ntp_example(0, V=3, k=4)
    with pytest.raises(ValueError, match="d"):
        linear_ntp_example(0, d=0)
    with pytest.raises(ValueError, match="m"):
        tinystories_like(0, m=10_000)
    with pytest.raises(ValueError, match="p_cross"):
        tinystories_like(0, p_cross=1.5)


@pytest.mark.slow
def test_tinystories_like_max_margin_statistics():
    """Spec 5.2 step 5: rank L^mm well below min(V, d) and cos(L^mm, S~) > 0.99 (SCS, ~5 s)."""
    from seqrmt.ntp.geometry import centered_support
    from seqrmt.ntp.svm import ntp_svm_nuclear

    S = tinystories_like(0).data.S
    L = ntp_svm_nuclear(S)
    St = centered_support(S)
    cos = np.sum(L * St) / np.linalg.norm(L) / np.linalg.norm(St)
    assert cos > 0.99
    s = np.linalg.svd(L, compute_uv=False)
    assert np.sum(s > 1e-3 * s[0]) <= S.shape[0] - 1
