r"""Next-token data as sparse soft labels, and the chapter's offline data sets.

A corpus of ``n`` (context, next-token) pairs is summarised by its ``m`` *distinct* contexts:
the empirical next-token distribution :math:`\hat p_j` of context ``j`` over ``V`` tokens, its
support :math:`\mathcal S_j=\{z:\hat p_{j,z}>0\}` and the context frequency :math:`\hat\pi_j`.
The cross-entropy of logits :math:`\ell_j` is

.. math:: \mathrm{CE}=\sum_j\hat\pi_j\big(\operatorname{logsumexp}(\ell_j)-\hat p_j^\top\ell_j\big)
          =\mathcal H+\sum_j\hat\pi_j\,\mathrm{KL}(\hat p_j\,\|\,\mathbb S(\ell_j))\ \ge\ \mathcal H .

Orientation (the papers'): matrices are ``V x m``, rows are next tokens and columns contexts, so
``P[:, j]`` is :math:`\hat p_j`; embeddings are ``d x m``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from .._validation import as_generator, check_array, check_positive_int, check_prob_columns, check_size

__all__ = ["NTPData", "TinyStoriesLike", "tinystories_like", "linear_ntp_example"]


def _check_P_pi(P, pi):
    """Validated ``P`` (columns on the simplex) and ``pi`` (non-negative, summing to one)."""
    P = check_prob_columns(P, "P")  # columns on the simplex, to 1e-8
    pi = check_array(pi, "pi", ndim=1, shape=(P.shape[1],))
    if np.any(pi < 0):
        raise ValueError("pi must have non-negative entries")
    if abs(pi.sum() - 1.0) > 1e-8:
        raise ValueError(f"pi must sum to one, got sum {pi.sum():.6g}")
    return P, pi


@dataclass(frozen=True, eq=False)
class NTPData:
    r"""Distinct contexts with their sparse next-token distributions (``V x m`` orientation).

    Parameters
    ----------
    S : array_like, shape (V, m)
        0/1 support matrix, ``S[z, j] = 1`` iff token ``z`` follows context ``j``; must equal
        ``P > 0``.
    P : array_like, shape (V, m)
        Empirical next-token probabilities; columns sum to one, zero off the support.
    pi : array_like, shape (m,)
        Context frequencies :math:`\hat\pi_j` (sum to one).
    counts : array_like, shape (V, m), optional
        Integer counts :math:`c_{j,z}` from which ``P`` and ``pi`` were computed.
    contexts : list, optional
        Keys of the ``m`` contexts (for example tuples of words).
    vocab : list, optional
        The ``V`` next-token strings.

    Notes
    -----
    Build instances with :meth:`from_counts`, :meth:`from_pairs` or :meth:`from_corpus`; the
    constructor validates and stores float arrays (``S`` as an int array).

    Examples
    --------
    >>> d = NTPData.from_pairs([("a", "x"), ("a", "y"), ("b", "x"), ("a", "x")])
    >>> d.V, d.m, d.n
    (2, 2, 4)
    >>> print(np.round(d.P, 3))
    [[0.667 1.   ]
     [0.333 0.   ]]
    >>> round(d.entropy(), 4), round(d.cross_entropy(np.zeros((2, 2))), 4)
    (0.4774, 0.6931)
    """

    S: np.ndarray
    P: np.ndarray
    pi: np.ndarray
    counts: np.ndarray | None = None
    contexts: list | None = None
    vocab: list | None = None

    def __post_init__(self):
        P, pi = _check_P_pi(self.P, self.pi)
        # S must be exactly the support of P: the programs build their constraints from S,
        # the losses use P, and a mismatch would make them describe different data
        S = check_array(self.S, "S", ndim=2)
        if S.shape != P.shape:
            raise ValueError(f"S must have the shape of P {P.shape}, got {S.shape}")
        if not np.all((S == 0) | (S == 1)):
            raise ValueError("S must be a 0/1 matrix")
        if not np.array_equal(S.astype(bool), P > 0):
            raise ValueError("S must equal the support of P (S[z, j] = 1 iff P[z, j] > 0)")
        counts = self.counts
        if counts is not None:
            counts = check_array(counts, "counts", ndim=2, shape=P.shape)
            if np.any(counts < 0) or np.any(counts != np.round(counts)):
                raise ValueError("counts must be non-negative integers")
            if not np.array_equal(counts > 0, S.astype(bool)):
                raise ValueError("counts must be positive exactly on the support S")
            counts = counts.astype(np.int64)
        for name, keys, size in (("contexts", self.contexts, P.shape[1]), ("vocab", self.vocab, P.shape[0])):
            if keys is not None and len(keys) != size:
                raise ValueError(f"{name} must have length {size}, got {len(keys)}")
        # frozen dataclass: store the validated arrays through object.__setattr__
        object.__setattr__(self, "S", S.astype(np.int64))
        object.__setattr__(self, "P", P)
        object.__setattr__(self, "pi", pi)
        object.__setattr__(self, "counts", counts)
        for name in ("contexts", "vocab"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, list(getattr(self, name)))

    @classmethod
    def from_counts(cls, counts, contexts=None, vocab=None):
        r"""Build the data from a ``V x m`` count matrix.

        Parameters
        ----------
        counts : array_like, shape (V, m)
            Non-negative integer counts :math:`c_{j,z}` (token ``z`` after context ``j``); every
            column must have a positive total.
        contexts, vocab : list, optional
            Keys of the contexts and next tokens.

        Returns
        -------
        NTPData
            With :math:`n_j=\sum_zc_{j,z}`, :math:`\hat\pi_j=n_j/n`, :math:`\hat p_{j,z}=c_{j,z}/n_j`.

        Examples
        --------
        >>> d = NTPData.from_counts([[1, 2], [3, 0]])
        >>> print(d.pi, d.S.tolist())
        [0.66666667 0.33333333] [[1, 1], [1, 0]]
        """
        counts = check_array(counts, "counts", ndim=2)
        if np.any(counts < 0) or np.any(counts != np.round(counts)):
            raise ValueError("counts must be non-negative integers")
        nj = counts.sum(axis=0)  # n_j, the occurrences of context j
        if np.any(nj <= 0):
            raise ValueError(f"counts must have a positive total in every column (column {int(np.argmin(nj))})")
        # p_jz = c_jz / n_j (columns on the simplex) and pi_j = n_j / n
        return cls(S=(counts > 0).astype(np.int64), P=counts / nj, pi=nj / nj.sum(), counts=counts,
                   contexts=contexts, vocab=vocab)

    @classmethod
    def from_pairs(cls, pairs, contexts=None, vocab=None):
        """Count (context, next-token) pairs.

        Parameters
        ----------
        pairs : iterable of (hashable, hashable)
            The training pairs; contexts are hashable keys (e.g. tuples of words).
        contexts, vocab : list, optional
            Orders of the contexts and next tokens; by default the order of first appearance.
            Given orders must contain every key that occurs.

        Returns
        -------
        NTPData

        Examples
        --------
        >>> d = NTPData.from_pairs([(("a", "b"), "x"), (("a", "b"), "y")])
        >>> d.contexts, d.vocab, d.n
        ([('a', 'b')], ['x', 'y'], 2)
        """
        pairs = list(pairs)
        if not pairs:
            raise ValueError("pairs must not be empty")
        for p in pairs:
            if not isinstance(p, (tuple, list)) or len(p) != 2:
                raise ValueError(f"pairs must hold (context, next_token) pairs, got {p!r}")
        # default orders: first appearance (dict keeps insertion order)
        contexts = list(dict.fromkeys(c for c, _ in pairs)) if contexts is None else contexts
        vocab = list(dict.fromkeys(t for _, t in pairs)) if vocab is None else vocab
        ci = {c: i for i, c in enumerate(contexts)}
        vi = {t: i for i, t in enumerate(vocab)}
        counts = np.zeros((len(vocab), len(contexts)), dtype=np.int64)
        for c, t in pairs:
            if c not in ci:
                raise ValueError(f"contexts does not contain the context {c!r}")
            if t not in vi:
                raise ValueError(f"vocab does not contain the token {t!r}")
            counts[vi[t], ci[c]] += 1
        return cls.from_counts(counts, contexts=contexts, vocab=vocab)

    @classmethod
    def from_corpus(cls, lines, context_length=5, contexts=None, vocab=None):
        """Count the (first ``context_length`` words, next word) pair of each line of a corpus.

        This is the construction of Zhao et al. (2024): one pair per line; lines with at most
        ``context_length`` tokens contribute nothing.

        Parameters
        ----------
        lines : iterable of str or of sequences of tokens
            The corpus, one sentence per item; strings are split on whitespace.
        context_length : int
            Number of tokens in a context.
        contexts, vocab : list, optional
            As in :meth:`from_pairs`.

        Returns
        -------
        NTPData
            Contexts are tuples of tokens.

        Examples
        --------
        >>> d = NTPData.from_corpus(["the cat sat", "the cat ran", "the cat sat"], context_length=2)
        >>> d.contexts, d.vocab, d.counts.ravel().tolist()
        ([('the', 'cat')], ['sat', 'ran'], [2, 1])
        """
        T = check_positive_int(context_length, "context_length")
        if isinstance(lines, str):
            raise ValueError("lines must be an iterable of lines, not a single string")
        tokens = [line.split() if isinstance(line, str) else list(line) for line in lines]
        # one pair per line: its first T tokens and the token after them
        pairs = [(tuple(t[:T]), t[T]) for t in tokens if len(t) > T]
        if not pairs:
            raise ValueError(f"lines must contain at least one line with more than context_length = {T} tokens")
        return cls.from_pairs(pairs, contexts=contexts, vocab=vocab)

    @property
    def V(self):
        """Vocabulary size (number of rows)."""
        return self.P.shape[0]

    @property
    def m(self):
        """Number of distinct contexts (number of columns)."""
        return self.P.shape[1]

    @property
    def n(self):
        """Total number of pairs (``None`` when no counts are stored)."""
        return None if self.counts is None else int(self.counts.sum())

    @property
    def support_sizes(self):
        """Support sizes :math:`S_j=|\\mathcal S_j|`, shape (m,)."""
        return self.S.sum(axis=0)

    def entropy(self):
        r"""The lower bound of the cross-entropy (nats).

        :math:`\mathcal H=-\sum_j\hat\pi_j\sum_{z\in\mathcal S_j}\hat p_{j,z}\log\hat p_{j,z}`.
        """
        plogp = np.where(self.S > 0, self.P * np.log(np.where(self.S > 0, self.P, 1.0)), 0.0)  # 0 log 0 = 0
        return float(-(plogp.sum(axis=0) @ self.pi))

    def cross_entropy(self, logits):
        r"""Cross-entropy of logits ``(V, m)`` (nats).

        :math:`\sum_j\hat\pi_j(\operatorname{logsumexp}(\ell_j)-\hat p_j^\top\ell_j)`.
        """
        logits = check_array(logits, "logits", ndim=2, shape=self.P.shape)
        # logsumexp is stable for large logits; near the bound, CE - H loses digits to rounding
        # (ntp_loss_and_gradients computes the excess directly)
        return float((logsumexp(logits, axis=0) - np.sum(self.P * logits, axis=0)) @ self.pi)


#: Next-token word classes: class name -> (words, 4-token verb phrases, 3-token verb phrases).
_WORD_CLASSES = {
    "food": ("cake apple soup cookie bread candy pie banana cheese",
             ["likes to eat the", "wanted to eat some"], ["ate a big", "shared the sweet"]),
    "toy": ("ball doll kite blocks teddy puzzle robot drum top",
            ["wanted to play with", "got a new shiny"], ["played with the", "lost the little"]),
    "family": ("mom dad sister brother grandma grandpa aunt uncle baby",
               ["ran to hug his", "said thank you to"], ["went home with", "smiled at her"]),
    "place": ("park school beach forest garden house farm zoo store",
              ["went to the big", "ran to the old"], ["walked to the", "hid in the"]),
    "animal": ("dog cat bird fish frog bunny duck horse bear",
               ["wanted to pet the", "found a tiny lost"], ["saw a little", "chased the silly"]),
    "feeling": ("happy sad scared angry proud tired excited sorry brave",
                ["started to feel very", "said she was so"], ["felt very very", "was not so"]),
    "colour": ("red blue green yellow pink purple orange white black",
               ["painted the door bright", "liked the color of"], ["wore a bright", "picked the crayon"]),
    "action": ("laughed cried jumped danced smiled shouted slept sang ran",
               ["was happy because she", "was sad because he"], ["looked up and", "turned around and"]),
    "clothes": ("hat coat dress shoes socks scarf shirt boots",
                ["put on her new", "could not find his"], ["wore a warm", "lost her old"]),
    "weather": ("rain snow sun wind storm clouds fog thunder",
                ["looked outside at the", "was scared of the"], ["played in the", "watched the cold"]),
    "vehicle": ("car bus train boat bike truck plane rocket",
                ["wanted to ride the", "saw a big red"], ["rode the old", "drove a toy"]),
    "body": ("nose hand knee foot head ear arm tummy",
             ["fell and hurt her", "gently touched his little"], ["washed her dirty", "bumped his little"]),
}
# one-word subjects go with the 4-token phrases, two-word subjects with the 3-token ones: 5 words
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
        The context-word vocabulary.
    word_class : ndarray of int, shape (V,)
        Class index of each next token.
    context_class : ndarray of int, shape (m,)
        Class of each context's template (the class its support mostly comes from).
    """

    data: NTPData
    lines: list
    context_ids: np.ndarray
    context_vocab: list
    word_class: np.ndarray
    context_class: np.ndarray


def tinystories_like(rng=None, m=400, max_count=4, size_range=(2, 8), p_cross=0.3, p_reuse=0.4):
    r"""Generate the offline TinyStories-like corpus of Chapter 3.

    Every 5-word context is a subject ("lily", "the dog", ...) followed by a verb phrase of one of
    twelve semantic classes ("likes to eat the" -> foods); ``m`` distinct contexts are drawn (in
    class order). The in-class part of each support is, with probability ``p_reuse``, a copy of one
    already used in its class (so that contexts share supports), otherwise ``s`` distinct class
    words, ``s`` uniform on ``size_range`` (capped by the class size); then, with probability
    ``p_cross``, one word of another class is added. Each support word gets a count uniform on
    ``{1, ..., max_count}``: as in the data of Zhao et al. (2024), only the supports carry
    linguistic structure.

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
    p_cross, p_reuse : float
        Probabilities of adding one cross-class word and of reusing an earlier support of the class.

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
    # the next-token vocabulary, grouped by class: rows of S in class order
    words = [spec[0].split() for spec in _WORD_CLASSES.values()]
    vocab = [w for ws in words for w in ws]
    word_class = np.concatenate([np.full(len(ws), i) for i, ws in enumerate(words)])
    offsets = np.cumsum([0] + [len(ws) for ws in words])  # first token id of each class
    cand = []  # candidate contexts (class, text), in class order
    for ci, (_, p4, p3) in enumerate(_WORD_CLASSES.values()):
        cand += [(ci, f"{s} {p}") for p in p4 for s in _SUBJECTS_1]
        cand += [(ci, f"{s} {p}") for p in p3 for s in _SUBJECTS_2]
    if m > len(cand):
        raise ValueError(f"m must be at most {len(cand)}, got {m}")
    # m distinct contexts, kept in class order so that S and the cosine matrices are block-ordered
    chosen = [cand[i] for i in np.sort(rng.choice(len(cand), size=m, replace=False))]
    counts = np.zeros((len(vocab), m), dtype=np.int64)
    used = {ci: [] for ci in range(len(words))}  # supports drawn so far, per class
    for j, (ci, _) in enumerate(chosen):
        if used[ci] and rng.random() < p_reuse:  # an earlier support of the class: equal supports
            supp = list(used[ci][rng.integers(len(used[ci]))])
        else:
            size = min(int(rng.integers(lo, hi + 1)), len(words[ci]))
            supp = sorted(int(z) for z in offsets[ci] + rng.choice(len(words[ci]), size=size, replace=False))
            used[ci].append(supp)
        if rng.random() < p_cross:  # one word of another class
            supp = supp + [int(rng.choice(np.flatnonzero(word_class != ci)))]
        # counts uniform on 1..max_count: the probabilities carry no linguistic structure
        counts[supp, j] = rng.integers(1, max_count + 1, size=len(supp))
    seen = counts.sum(axis=1) > 0  # drop words that never occur, as the authors re-index
    counts, vocab, word_class = counts[seen], [w for w, s in zip(vocab, seen) if s], word_class[seen]
    contexts = [tuple(text.split()) for _, text in chosen]
    # the corpus: one line per count, so that counting its lines gives the data back
    lines = [" ".join(ctx) + " " + vocab[z] for j, ctx in enumerate(contexts)
             for z in np.flatnonzero(counts[:, j]) for _ in range(counts[z, j])]
    # the context words are another vocabulary: the transformer reads them, predicts `vocab`
    context_vocab = sorted({w for ctx in contexts for w in ctx})
    index = {w: i for i, w in enumerate(context_vocab)}
    return TinyStoriesLike(
        data=NTPData.from_counts(counts, contexts=contexts, vocab=vocab), lines=lines,
        context_ids=np.array([[index[w] for w in ctx] for ctx in contexts], dtype=np.int64),
        context_vocab=context_vocab, word_class=word_class, context_class=np.array([ci for ci, _ in chosen]))


def linear_ntp_example(rng=0, d=30, m=20, V=8, k=4, max_count=4):
    r"""Gaussian fixed embeddings with random supports and counts (the linear model of Chapter 3).

    Draw order: :math:`\bar H` = one ``d x m`` standard-normal draw; then for each context a support
    of ``k`` distinct tokens (``choice(V, k, replace=False)``, sorted); then for each context ``k``
    counts uniform on ``{1, ..., max_count}``. With the defaults and ``rng=0`` the data have
    :math:`\mathcal H=1.309491` and ``n = 217``.

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
    # the draw order of the specification's checkpoint C-3 (H = 1.309491, n = 217 for rng=0)
    Hbar = rng.standard_normal((d, m))
    supports = [np.sort(rng.choice(V, k, replace=False)) for _ in range(m)]
    counts = np.zeros((V, m), dtype=np.int64)
    for j in range(m):
        counts[supports[j], j] = rng.integers(1, max_count + 1, k)
    return Hbar, NTPData.from_counts(counts)
