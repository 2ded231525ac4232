r"""Next-token data as sparse soft-label classification.

A training corpus of ``n`` (context, next-token) pairs is summarised by its ``m`` *distinct*
contexts: for each context ``j`` the empirical next-token distribution :math:`\hat p_j` over a
vocabulary of ``V`` tokens, its support :math:`\mathcal S_j=\{z:\hat p_{j,z}>0\}` and the context
frequency :math:`\hat\pi_j`. The cross-entropy of logits :math:`\ell_j` is

.. math:: \mathrm{CE}=\sum_j\hat\pi_j\big(\operatorname{logsumexp}(\ell_j)-\hat p_j^\top\ell_j\big)
          =\mathcal H+\sum_j\hat\pi_j\,\mathrm{KL}(\hat p_j\,\|\,\mathbb S(\ell_j))\ \ge\ \mathcal H .

Orientation (as in the papers): matrices are ``V x m`` -- **rows are next tokens, columns are
contexts** -- so ``P[:, j]`` is :math:`\hat p_j` and ``logits[:, j]`` is :math:`\ell_j`.

Used in: Chapter 3.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from .._validation import check_array, check_positive_int, check_prob_columns

__all__ = ["NTPData", "ntp_entropy", "ntp_cross_entropy"]


def _check_P_pi(P, pi):
    P = check_prob_columns(P, "P")
    pi = check_array(pi, "pi", ndim=1, shape=(P.shape[1],))
    if np.any(pi < 0):
        raise ValueError("pi must have non-negative entries")
    if abs(pi.sum() - 1.0) > 1e-8:
        raise ValueError(f"pi must sum to one, got sum {pi.sum():.6g}")
    return P, pi


def ntp_entropy(P, pi):
    r"""Empirical conditional entropy :math:`\mathcal H`, the lower bound of the NTP cross-entropy.

    Parameters
    ----------
    P : array_like, shape (V, m)
        Next-token probabilities; column ``j`` is :math:`\hat p_j` (sums to one).
    pi : array_like, shape (m,)
        Context frequencies (sum to one).

    Returns
    -------
    float
        :math:`\mathcal H=-\sum_j\hat\pi_j\sum_{z\in\mathcal S_j}\hat p_{j,z}\log\hat p_{j,z}` (nats).

    Examples
    --------
    >>> round(ntp_entropy([[0.5, 1.0], [0.5, 0.0]], [0.5, 0.5]), 4)
    0.3466
    """
    P, pi = _check_P_pi(P, pi)
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(P > 0, P * np.log(np.where(P > 0, P, 1.0)), 0.0)
    return float(-(plogp.sum(axis=0) @ pi))


def ntp_cross_entropy(logits, P, pi):
    r"""NTP cross-entropy of a logit matrix.

    Parameters
    ----------
    logits : array_like, shape (V, m)
        Logits; column ``j`` is :math:`\ell_j` (for a linear model ``W @ Hbar``).
    P : array_like, shape (V, m)
        Next-token probabilities (columns sum to one).
    pi : array_like, shape (m,)
        Context frequencies (sum to one).

    Returns
    -------
    float
        :math:`\sum_j\hat\pi_j(\operatorname{logsumexp}(\ell_j)-\hat p_j^\top\ell_j)` (nats).

    Examples
    --------
    >>> round(ntp_cross_entropy(np.zeros((2, 2)), [[0.5, 1.0], [0.5, 0.0]], [0.5, 0.5]), 4)
    0.6931
    """
    P, pi = _check_P_pi(P, pi)
    logits = check_array(logits, "logits", ndim=2, shape=P.shape)
    per_context = logsumexp(logits, axis=0) - np.sum(P * logits, axis=0)
    return float(per_context @ pi)


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
    Build instances with :meth:`from_counts` or :meth:`from_pairs`; the constructor validates and
    stores float arrays (``S`` as an int array).

    Examples
    --------
    >>> d = NTPData.from_pairs([("a", "x"), ("a", "y"), ("b", "x"), ("a", "x")])
    >>> d.V, d.m, d.n
    (2, 2, 4)
    >>> print(np.round(d.P, 3))
    [[0.667 1.   ]
     [0.333 0.   ]]
    >>> round(d.entropy(), 4)
    0.4774
    """

    S: np.ndarray
    P: np.ndarray
    pi: np.ndarray
    counts: np.ndarray | None = None
    contexts: list | None = None
    vocab: list | None = None

    def __post_init__(self):
        P, pi = _check_P_pi(self.P, self.pi)
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
        if self.contexts is not None and len(self.contexts) != P.shape[1]:
            raise ValueError(f"contexts must have length m = {P.shape[1]}, got {len(self.contexts)}")
        if self.vocab is not None and len(self.vocab) != P.shape[0]:
            raise ValueError(f"vocab must have length V = {P.shape[0]}, got {len(self.vocab)}")
        object.__setattr__(self, "S", S.astype(np.int64))
        object.__setattr__(self, "P", P)
        object.__setattr__(self, "pi", pi)
        object.__setattr__(self, "counts", counts)
        if self.contexts is not None:
            object.__setattr__(self, "contexts", list(self.contexts))
        if self.vocab is not None:
            object.__setattr__(self, "vocab", list(self.vocab))

    # ------------------------------------------------------------------ constructors
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
        nj = counts.sum(axis=0)
        if np.any(nj <= 0):
            raise ValueError(f"counts must have a positive total in every column (column {int(np.argmin(nj))})")
        P = counts / nj
        return cls(S=(counts > 0).astype(np.int64), P=P, pi=nj / nj.sum(), counts=counts,
                   contexts=contexts, vocab=vocab)

    @classmethod
    def from_corpus(cls, lines, context_length=5, windows="first", contexts=None, vocab=None):
        """Extract (context, next-token) pairs from a whitespace-tokenised corpus and count them.

        Parameters
        ----------
        lines : iterable of str or of sequences of tokens
            The corpus, one sentence (or document) per item; strings are split on whitespace.
        context_length : int
            Number of tokens :math:`T-1` in a context.
        windows : {"first", "all"}
            ``"first"``: one pair per line, the first ``context_length`` tokens and the next one
            (the construction of Zhao et al., 2024); ``"all"``: every window of the line.
            Lines shorter than ``context_length + 1`` tokens contribute nothing.
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
        if windows not in ("first", "all"):
            raise ValueError(f"windows must be 'first' or 'all', got {windows!r}")
        if isinstance(lines, str):
            raise ValueError("lines must be an iterable of lines, not a single string")
        pairs = []
        for line in lines:
            tokens = line.split() if isinstance(line, str) else list(line)
            starts = range(len(tokens) - T) if windows == "all" else range(min(1, len(tokens) - T))
            pairs.extend((tuple(tokens[i:i + T]), tokens[i + T]) for i in starts)
        if not pairs:
            raise ValueError(f"lines must contain at least one line with more than context_length = {T} tokens")
        return cls.from_pairs(pairs, contexts=contexts, vocab=vocab)

    @classmethod
    def from_pairs(cls, pairs, contexts=None, vocab=None):
        """Count (context, next-token) pairs.

        Parameters
        ----------
        pairs : iterable of (hashable, hashable)
            The training pairs; contexts are hashable keys (e.g. tuples of words).
        contexts, vocab : list, optional
            Orders of the contexts and next tokens; by default the order of first appearance.
            Given orders must contain every key that occurs (extra keys are rejected only if
            they leave a context without any next token).

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
        if contexts is None:
            contexts = list(dict.fromkeys(c for c, _ in pairs))
        if vocab is None:
            vocab = list(dict.fromkeys(t for _, t in pairs))
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

    # ------------------------------------------------------------------ properties
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

    # ------------------------------------------------------------------ losses
    def entropy(self):
        r"""The entropy lower bound :math:`\mathcal H` (see :func:`ntp_entropy`)."""
        return ntp_entropy(self.P, self.pi)

    def cross_entropy(self, logits):
        """Cross-entropy of ``logits`` of shape (V, m) (see :func:`ntp_cross_entropy`)."""
        return ntp_cross_entropy(logits, self.P, self.pi)
