r"""Data sets for the next-token-prediction chapter (nothing is downloaded).

* :func:`tinystories_like`: an offline corpus of child-story sentences built from templates over
  twelve semantic word classes. Like the TinyStories-derived set of Zhao et al. (2024), only the
  *support sets* carry linguistic structure; the counts are iid uniform on ``{1, ..., max_count}``.
* :func:`support_only`: random block-structured support matrices.
* :func:`linear_ntp_example`: Gaussian fixed embeddings with random supports and counts.

Orientation: supports and probabilities are ``V x m`` (columns are contexts); embeddings are
``d x m``.

Used in: Chapter 3.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_positive_int, check_size
from .._validation import as_generator
from .data import NTPData

__all__ = ["TinyStoriesLike", "tinystories_like", "support_only", "linear_ntp_example", "WORD_CLASSES"]

#: Next-token word classes: class name -> (words, 4-token verb phrases, 3-token verb phrases).
WORD_CLASSES = {
    "food": (
        "cake apple soup cookie bread candy pie banana cheese",
        ["likes to eat the", "wanted to eat some"],
        ["ate a big", "shared the sweet"],
    ),
    "toy": (
        "ball doll kite blocks teddy puzzle robot drum top",
        ["wanted to play with", "got a new shiny"],
        ["played with the", "lost the little"],
    ),
    "family": (
        "mom dad sister brother grandma grandpa aunt uncle baby",
        ["ran to hug his", "said thank you to"],
        ["went home with", "smiled at her"],
    ),
    "place": (
        "park school beach forest garden house farm zoo store",
        ["went to the big", "ran to the old"],
        ["walked to the", "hid in the"],
    ),
    "animal": (
        "dog cat bird fish frog bunny duck horse bear",
        ["wanted to pet the", "found a tiny lost"],
        ["saw a little", "chased the silly"],
    ),
    "feeling": (
        "happy sad scared angry proud tired excited sorry brave",
        ["started to feel very", "said she was so"],
        ["felt very very", "was not so"],
    ),
    "colour": (
        "red blue green yellow pink purple orange white black",
        ["painted the door bright", "liked the color of"],
        ["wore a bright", "picked the crayon"],
    ),
    "action": (
        "laughed cried jumped danced smiled shouted slept sang ran",
        ["was happy because she", "was sad because he"],
        ["looked up and", "turned around and"],
    ),
    "clothes": (
        "hat coat dress shoes socks scarf shirt boots",
        ["put on her new", "could not find his"],
        ["wore a warm", "lost her old"],
    ),
    "weather": (
        "rain snow sun wind storm clouds fog thunder",
        ["looked outside at the", "was scared of the"],
        ["played in the", "watched the cold"],
    ),
    "vehicle": (
        "car bus train boat bike truck plane rocket",
        ["wanted to ride the", "saw a big red"],
        ["rode the old", "drove a toy"],
    ),
    "body": (
        "nose hand knee foot head ear arm tummy",
        ["fell and hurt her", "gently touched his little"],
        ["washed her dirty", "bumped his little"],
    ),
}

_SUBJECTS_1 = "lily tom ben mia sam anna max sue tim lucy".split()
_SUBJECTS_2 = ["the girl", "the boy", "the dog", "the cat", "the bird", "his mom", "her dad", "the baby"]


@dataclass(frozen=True)
class TinyStoriesLike:
    """An offline TinyStories-like next-token corpus (see :func:`tinystories_like`).

    Attributes
    ----------
    data : NTPData
        Supports, probabilities, frequencies and counts (``V x m``); ``data.contexts`` are tuples
        of five words, ``data.vocab`` the next-token words (grouped by class).
    lines : list of str
        The corpus: one line "w1 w2 w3 w4 w5 next" per count (``n`` lines).
    context_ids : ndarray of int, shape (m, 5)
        Token ids of each distinct context in ``context_vocab`` (the transformer's input).
    context_vocab : list of str
        The context-token vocabulary.
    word_class : ndarray of int, shape (V,)
        Class index of each next token.
    context_class : ndarray of int, shape (m,)
        Class of each context's template (the class its support mostly comes from).
    class_names : list of str
    """

    data: NTPData
    lines: list
    context_ids: np.ndarray
    context_vocab: list
    word_class: np.ndarray
    context_class: np.ndarray
    class_names: list


def tinystories_like(rng=None, m=400, max_count=4, size_range=(2, 8), p_cross=0.3, p_reuse=0.4):
    r"""Generate the offline TinyStories-like corpus.

    Recipe: every 5-word context is a subject ("lily", "the dog", ...) followed by a verb phrase
    of one of twelve semantic classes ("likes to eat the" -> foods). ``m`` distinct contexts are
    drawn (in class order). The in-class part of each context's support is, with probability
    ``p_reuse``, a copy of one already used by a context of the same class (so that contexts
    share supports), otherwise a fresh draw of ``s`` distinct class words, ``s`` uniform on
    ``size_range`` (capped by the class size). Then, with probability ``p_cross``, one word of
    another class is added.
    Each support word gets a count uniform on ``{1, ..., max_count}``.

    Parameters
    ----------
    rng : int, numpy.random.Generator or None
        Randomness (seeded: the corpus is reproducible).
    m : int
        Number of distinct contexts (at most 432).
    max_count : int
        Largest count per (context, word).
    size_range : (int, int)
        Smallest and largest in-class support size.
    p_cross : float
        Probability of adding one cross-class word.
    p_reuse : float
        Probability that a context reuses an earlier support of its class.

    Returns
    -------
    TinyStoriesLike

    Examples
    --------
    >>> c = tinystories_like(0)
    >>> c.data.m, c.data.V, c.context_ids.shape
    (400, 104, (400, 5))
    >>> c.lines[0]
    'lily likes to eat the apple'
    """
    rng = as_generator(rng)
    m = check_size(m, "m")
    max_count = check_size(max_count, "max_count")
    lo, hi = (check_positive_int(s, "size_range") for s in size_range)
    if lo > hi:
        raise ValueError(f"size_range must be increasing, got {size_range}")
    for p, name in ((p_cross, "p_cross"), (p_reuse, "p_reuse")):
        if not 0 <= p <= 1:
            raise ValueError(f"{name} must lie in [0, 1], got {p}")
    names = list(WORD_CLASSES)
    words = [WORD_CLASSES[c][0].split() for c in names]
    vocab = [w for ws in words for w in ws]
    word_class = np.concatenate([np.full(len(ws), i) for i, ws in enumerate(words)])
    offsets = np.cumsum([0] + [len(ws) for ws in words])
    # candidate contexts, in class order
    cand = []
    for ci, c in enumerate(names):
        _, p4, p3 = WORD_CLASSES[c]
        cand += [(ci, f"{s} {p}") for p in p4 for s in _SUBJECTS_1]
        cand += [(ci, f"{s} {p}") for p in p3 for s in _SUBJECTS_2]
    if m > len(cand):
        raise ValueError(f"m must be at most {len(cand)}, got {m}")
    keep = np.sort(rng.choice(len(cand), size=m, replace=False))
    chosen = [cand[i] for i in keep]
    V = len(vocab)
    counts = np.zeros((V, m), dtype=np.int64)
    used = {ci: [] for ci in range(len(names))}
    for j, (ci, _) in enumerate(chosen):
        if used[ci] and rng.random() < p_reuse:
            supp = list(used[ci][rng.integers(len(used[ci]))])
        else:
            size = min(int(rng.integers(lo, hi + 1)), len(words[ci]))
            supp = sorted(int(z) for z in offsets[ci] + rng.choice(len(words[ci]), size=size, replace=False))
            used[ci].append(supp)
        if rng.random() < p_cross:
            supp = supp + [int(rng.choice(np.flatnonzero(word_class != ci)))]
        counts[supp, j] = rng.integers(1, max_count + 1, size=len(supp))
    seen = counts.sum(axis=1) > 0  # drop words that never occur, as the authors re-index
    counts, vocab = counts[seen], [w for w, s in zip(vocab, seen) if s]
    word_class = word_class[seen]
    contexts = [tuple(text.split()) for _, text in chosen]
    data = NTPData.from_counts(counts, contexts=contexts, vocab=vocab)
    lines = [
        " ".join(ctx) + " " + vocab[z]
        for j, ctx in enumerate(contexts)
        for z in np.flatnonzero(counts[:, j])
        for _ in range(counts[z, j])
    ]
    context_vocab = sorted({w for ctx in contexts for w in ctx})
    index = {w: i for i, w in enumerate(context_vocab)}
    context_ids = np.array([[index[w] for w in ctx] for ctx in contexts], dtype=np.int64)
    return TinyStoriesLike(
        data=data,
        lines=lines,
        context_ids=context_ids,
        context_vocab=context_vocab,
        word_class=word_class,
        context_class=np.array([ci for ci, _ in chosen]),
        class_names=names,
    )


def support_only(m, V, n_class, rng):
    r"""Random block-structured supports.

    Token ids ``0..V-1`` are split into ``n_class`` contiguous nearly equal blocks. For each
    context, in this order of draws: a class (``integers(n_class)``), a size ``s`` uniform on
    ``{2, ..., 6}`` (``integers(2, 7)``), ``min(s, |class|)`` distinct tokens of the class
    (``choice(..., replace=False)``), and with probability 0.3 (``random() < 0.3``) one uniformly
    random token (``integers(V)``).

    Parameters
    ----------
    m, V, n_class : int
        Contexts, vocabulary size, number of classes (``n_class <= V``).
    rng : int, numpy.random.Generator or None

    Returns
    -------
    ndarray of int, shape (V, m)

    Examples
    --------
    >>> S = support_only(400, 104, 12, 0)
    >>> S.shape, round(float(S.sum(axis=0).mean()), 2)
    ((104, 400), 4.25)
    """
    m = check_size(m, "m")
    V = check_size(V, "V")
    n_class = check_size(n_class, "n_class")
    if n_class > V:
        raise ValueError(f"n_class must be at most V = {V}, got {n_class}")
    rng = as_generator(rng)
    classes = np.array_split(np.arange(V), n_class)
    S = np.zeros((V, m), dtype=np.int64)
    for j in range(m):
        cls = classes[rng.integers(n_class)]
        s = rng.integers(2, 7)
        toks = list(rng.choice(cls, size=min(s, len(cls)), replace=False))
        if rng.random() < 0.3:
            toks.append(rng.integers(V))
        S[np.unique(toks), j] = 1
    return S


def linear_ntp_example(rng=0, d=30, m=20, V=8, k=4, max_count=4):
    r"""Gaussian fixed embeddings with random supports and counts.

    Draw order: :math:`\bar H` = one ``d x m`` standard-normal draw; then for each context a support
    of ``k`` distinct tokens (``choice(V, k, replace=False)``, sorted); then for each context ``k``
    counts uniform on ``{1, ..., max_count}`` (``integers(1, max_count + 1, k)``). With the
    defaults and ``rng=0`` the data have :math:`\mathcal H=1.309491` and ``n = 217``.

    Parameters
    ----------
    rng : int, numpy.random.Generator or None
    d, m, V, k, max_count : int
        Embedding dimension, contexts, vocabulary, support size, largest count.

    Returns
    -------
    Hbar : ndarray, shape (d, m)
    data : NTPData

    Examples
    --------
    >>> Hbar, data = linear_ntp_example(0)
    >>> Hbar.shape, data.n, round(data.entropy(), 6)
    ((30, 20), 217, 1.309491)
    """
    rng = as_generator(rng)
    d, m, V, k, max_count = (check_size(x, n) for x, n in
                             ((d, "d"), (m, "m"), (V, "V"), (k, "k"), (max_count, "max_count")))
    if k > V:
        raise ValueError(f"k must be at most V = {V}, got {k}")
    Hbar = rng.standard_normal((d, m))
    supports = [np.sort(rng.choice(V, k, replace=False)) for _ in range(m)]
    counts = np.zeros((V, m), dtype=np.int64)
    for j in range(m):
        counts[supports[j], j] = rng.integers(1, max_count + 1, k)
    return Hbar, NTPData.from_counts(counts)
