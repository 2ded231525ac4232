"""Tests for seqrmt.ntp.data (NTP data objects, entropy and cross-entropy)."""

import numpy as np
import pytest

from seqrmt.ntp.data import NTPData, ntp_cross_entropy, ntp_entropy


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
    assert d.cross_entropy(L) >= d.entropy()
    # logits equal to log P (on the support) with -inf-like off-support values reach H
    Lp = np.where(d.P > 0, np.log(np.where(d.P > 0, d.P, 1)), -60.0)
    assert d.cross_entropy(Lp) == pytest.approx(d.entropy(), abs=1e-20 + 1e-12)


def test_entropy_hand_value():
    # two contexts: uniform on 2 tokens (log 2) and a point mass (0), weights 0.5/0.5
    assert ntp_entropy([[0.5, 1.0], [0.5, 0.0]], [0.5, 0.5]) == pytest.approx(0.5 * np.log(2))
    assert ntp_cross_entropy(np.zeros((3, 1)), [[1.0], [0.0], [0.0]], [1.0]) == pytest.approx(np.log(3))


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
    with pytest.raises(ValueError, match="pi"):
        NTPData(S=(P > 0).astype(int), P=P, pi=[1.0])
    with pytest.raises(ValueError, match="P"):
        ntp_entropy([[np.nan, 1.0], [0.5, 0.0]], [0.5, 0.5])
    with pytest.raises(ValueError, match="logits"):
        ntp_cross_entropy(np.zeros((3, 2)), P, [0.5, 0.5])
    with pytest.raises(ValueError, match="logits"):
        ntp_cross_entropy([[np.nan, 0], [0, 0]], P, [0.5, 0.5])
    with pytest.raises(ValueError, match="counts"):
        NTPData.from_counts([[1, 0], [2, 0]])
    with pytest.raises(ValueError, match="counts"):
        NTPData.from_counts([[1.5, 1], [2, 1]])
    with pytest.raises(ValueError, match="counts"):
        NTPData.from_counts([[-1, 1], [2, 1]])
    with pytest.raises(ValueError, match="pairs"):
        NTPData.from_pairs([])
    with pytest.raises(ValueError, match="vocab"):
        NTPData.from_pairs([("a", "x")], vocab=["y"])
    with pytest.raises(ValueError, match="contexts"):
        NTPData.from_counts([[1, 1]], contexts=["a"])


def test_frozen():
    d = NTPData.from_counts([[1, 2], [3, 0]])
    with pytest.raises(Exception):
        d.P = None


def test_from_corpus_reproduces_the_generated_corpus():
    """Counting the corpus lines gives back the generator's NTPData (an independent construction)."""
    from seqrmt.ntp.corpus import tinystories_like

    corpus = tinystories_like(3, m=60)
    rebuilt = NTPData.from_corpus(corpus.lines, context_length=5, contexts=corpus.data.contexts,
                                  vocab=corpus.data.vocab)
    assert np.array_equal(rebuilt.counts, corpus.data.counts)
    assert np.allclose(rebuilt.P, corpus.data.P) and np.allclose(rebuilt.pi, corpus.data.pi)


def test_from_corpus_windows_and_errors():
    d = NTPData.from_corpus([["a", "b", "c", "d"]], context_length=2, windows="all")
    assert d.contexts == [("a", "b"), ("b", "c")] and d.vocab == ["c", "d"] and d.n == 2
    first = NTPData.from_corpus(["a b c d", "a b"], context_length=2)
    assert first.contexts == [("a", "b")] and first.n == 1  # the short line contributes nothing
    with pytest.raises(ValueError, match="context_length"):
        NTPData.from_corpus(["a b c"], context_length=0)
    with pytest.raises(ValueError, match="windows"):
        NTPData.from_corpus(["a b c"], context_length=1, windows="some")
    with pytest.raises(ValueError, match="lines"):
        NTPData.from_corpus(["a b"], context_length=2)
    with pytest.raises(ValueError, match="lines"):
        NTPData.from_corpus("a b c", context_length=1)
