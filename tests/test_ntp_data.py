"""Next-token data and the offline data sets of Part 3 (``seqrmt.ntp``: NTPData, tinystories_like, linear_ntp_example)."""

import numpy as np
import pytest

from seqrmt.ntp import NTPData, linear_ntp_example, tinystories_like


def test_from_counts_and_pairs_agree():
    rng = np.random.default_rng(1)
    counts = rng.integers(0, 3, size=(6, 5))
    counts[0] += 1  # no empty column
    d1 = NTPData.from_counts(counts)
    pairs = [(j, z) for j in range(5) for z in range(6) for _ in range(counts[z, j])]
    d2 = NTPData.from_pairs(pairs, contexts=list(range(5)), vocab=list(range(6)))
    np.testing.assert_array_equal(d1.S, d2.S)
    np.testing.assert_allclose(d1.P, d2.P)
    np.testing.assert_allclose(d1.pi, d2.pi)
    assert d1.n == counts.sum() and d1.V == 6 and d1.m == 5
    np.testing.assert_allclose(d1.P.sum(axis=0), 1.0)
    np.testing.assert_allclose(d1.pi * d1.n, counts.sum(axis=0))


def test_ce_equals_entropy_plus_kl():
    rng = np.random.default_rng(2)
    counts = rng.integers(0, 4, size=(7, 6))
    counts[3] += 1
    d = NTPData.from_counts(counts)
    L = rng.standard_normal((7, 6))
    Q = np.exp(L - L.max(axis=0)) / np.exp(L - L.max(axis=0)).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        kl = np.where(d.P > 0, d.P * np.log(d.P / Q), 0.0).sum(axis=0) @ d.pi
    assert d.cross_entropy(L) == pytest.approx(d.entropy() + kl, rel=1e-12)
    # logits log P on the support and -60 off it reach H to double precision
    Lp = np.where(d.P > 0, np.log(np.where(d.P > 0, d.P, 1)), -60.0)
    assert d.cross_entropy(Lp) == pytest.approx(d.entropy(), abs=1e-12)


def test_entropy_and_cross_entropy_hand_values():
    # uniform on 2 tokens (log 2) and a point mass (0), weights one half each
    d = NTPData(S=[[1, 1], [1, 0]], P=[[0.5, 1.0], [0.5, 0.0]], pi=[0.5, 0.5])
    assert d.entropy() == pytest.approx(0.5 * np.log(2))
    assert NTPData.from_counts([[1], [0], [0]]).cross_entropy(np.zeros((3, 1))) == pytest.approx(np.log(3))


def test_validation_errors():
    P = np.array([[0.5, 1.0], [0.5, 0.0]])
    with pytest.raises(ValueError, match="P"):
        NTPData(S=(P > 0).astype(int), P=[[0.5, 0.9], [0.4, 0.0]], pi=[0.5, 0.5])
    with pytest.raises(ValueError, match="S must equal the support"):
        NTPData(S=[[1, 1], [1, 1]], P=P, pi=[0.5, 0.5])
    with pytest.raises(ValueError, match="S must have the shape"):
        NTPData(S=[[1, 1]], P=P, pi=[0.5, 0.5])
    with pytest.raises(ValueError, match="pi"):
        NTPData(S=(P > 0).astype(int), P=P, pi=[0.5, 0.6])
    with pytest.raises(ValueError, match="logits"):
        NTPData.from_counts([[1, 2], [1, 0]]).cross_entropy(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="counts"):
        NTPData.from_counts([[1, 0], [2, 0]])
    with pytest.raises(ValueError, match="counts"):
        NTPData.from_counts([[1.5, 1], [2, 1]])
    with pytest.raises(ValueError, match="pairs"):
        NTPData.from_pairs([])
    with pytest.raises(ValueError, match="vocab"):
        NTPData.from_pairs([("a", "x")], vocab=["y"])
    with pytest.raises(ValueError, match="contexts"):
        NTPData.from_counts([[1, 1]], contexts=["a"])
    with pytest.raises(Exception):
        NTPData.from_counts([[1, 2], [3, 0]]).P = None  # frozen


def test_from_corpus_counts_the_first_window_of_each_line():
    first = NTPData.from_corpus(["a b c d", "a b", "a b e"], context_length=2)
    assert first.contexts == [("a", "b")] and first.vocab == ["c", "e"] and first.n == 2
    with pytest.raises(ValueError, match="context_length"):
        NTPData.from_corpus(["a b c"], context_length=0)
    with pytest.raises(ValueError, match="lines"):
        NTPData.from_corpus(["a b"], context_length=2)
    with pytest.raises(ValueError, match="lines"):
        NTPData.from_corpus("a b c", context_length=1)


def test_c3_linear_example_statistics():
    """Checkpoint C-3 of the specification: H = 1.309491, n = 217 (the exact draw order)."""
    Hbar, d = linear_ntp_example(0)
    assert Hbar.shape == (30, 20) and d.S.shape == (8, 20) and d.n == 217
    assert d.entropy() == pytest.approx(1.309491, abs=1e-6)
    assert np.all(d.support_sizes == 4)
    with pytest.raises(ValueError, match="k"):
        linear_ntp_example(0, V=3, k=4)
    with pytest.raises(ValueError, match="d"):
        linear_ntp_example(0, d=0)


def test_tinystories_like_statistics():
    c = tinystories_like(0)
    d = c.data
    assert d.m == 400 and 95 <= d.V <= 104
    sizes = d.support_sizes
    assert sizes.min() >= 2 and sizes.max() <= 9 and 4.5 < sizes.mean() < 6
    # counting the lines gives back the generator's data (an independent construction)
    again = NTPData.from_corpus(c.lines, context_length=5, contexts=d.contexts, vocab=d.vocab)
    np.testing.assert_array_equal(again.counts, d.counts)
    assert [tuple(c.context_vocab[i] for i in row) for row in c.context_ids] == d.contexts
    assert len(set(d.contexts)) == d.m
    # supports are reused (subspace collapse is visible) and mostly in-class
    assert len(np.unique(d.S.T, axis=0)) < 0.8 * d.m
    in_class = np.array([(d.S[:, j] * (c.word_class == c.context_class[j])).sum() for j in range(d.m)])
    assert np.all(sizes - in_class <= 1) and 0.15 < np.mean(sizes - in_class) < 0.4
    assert set(np.unique(d.counts[d.S == 1]).tolist()) == {1, 2, 3, 4}
    np.testing.assert_array_equal(tinystories_like(0).data.counts, d.counts)  # seeded


def test_tinystories_like_keeps_the_corpus_of_the_cached_runs():
    """Chapter 3.5's cached UFM runs belong to tinystories_like(default_rng(305), m=200)."""
    d = tinystories_like(np.random.default_rng(305), m=200).data
    assert (d.m, d.V, d.n, len(np.unique(d.S.T, axis=0))) == (200, 104, 2859, 153)
    assert d.entropy() == pytest.approx(1.727, abs=5e-4)


def test_tinystories_like_errors():
    with pytest.raises(ValueError, match="m"):
        tinystories_like(0, m=10_000)
    with pytest.raises(ValueError, match="p_cross"):
        tinystories_like(0, p_cross=1.5)
    with pytest.raises(ValueError, match="size_range"):
        tinystories_like(0, size_range=(5, 2))
    with pytest.raises(ValueError, match="rng"):
        tinystories_like("seed")
