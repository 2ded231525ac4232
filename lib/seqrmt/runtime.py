"""How a notebook runs: its seeds, its threads, its size, its device, and the numbers it glues.

Every notebook starts with ``rng = notebook_rng(SEED)`` and reads its sizes through
``preset(book=..., paper=...)``. Three environment variables change a run without
touching the notebook:

``SEQRMT_SEED_OFFSET``
    Shifts every seed (continuous integration re-runs the book with 1: a claim that
    holds only for the committed realisation then fails its check).
``SEQRMT_SCALE``
    ``book`` (default: every notebook in under a minute on two cores) or ``paper``
    (the papers' sizes).
``SEQRMT_JOBS``, ``SEQRMT_PROGRESS``
    Workers and progress bars of :func:`seqrmt.ensemble.run_ensemble`.

Used in: every chapter.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import numbers
import os
import pathlib
import sys
import zipfile

import numpy as np

__all__ = [
    "write_npz_deterministic",
    "notebook_rng",
    "notebook_seed",
    "seed_offset",
    "scale",
    "preset",
    "fit_threads",
    "single_threaded_blas",
    "torch_device",
    "glue",
]

SCALES = ("book", "paper")
SEED_OFFSET_VARIABLE = "SEQRMT_SEED_OFFSET"
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def seed_offset():
    """The seed shift set by the environment variable ``SEQRMT_SEED_OFFSET`` (0 when unset).

    Returns
    -------
    int

    Examples
    --------
    >>> seed_offset() >= 0
    True
    """
    value = os.environ.get(SEED_OFFSET_VARIABLE, "").strip()
    if not value:
        return 0
    if not value.isdigit():
        raise ValueError(f"{SEED_OFFSET_VARIABLE} must be a non-negative integer, got {value!r}")
    return int(value)


def notebook_seed(seed):
    """The seed a notebook uses: ``seed`` shifted by :func:`seed_offset`.

    Parameters
    ----------
    seed : int
        The notebook's base seed (non-negative).

    Returns
    -------
    int

    Examples
    --------
    >>> notebook_seed(7) == 7 + seed_offset()
    True
    """
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    return int(seed) + seed_offset()


def notebook_rng(seed):
    """A notebook's set-up: its random generator, and threads that fit the machine.

    Returns ``numpy.random.default_rng(notebook_seed(seed))`` after :func:`fit_threads`, so
    that BLAS and torch use no more threads than the CPUs this process may run on (a Binder
    pod that sees 64 host cores but is given one gets one thread). Pass the generator to
    :func:`seqrmt.ensemble.run_ensemble`: each realisation then draws from its own child.

    Parameters
    ----------
    seed : int
        The notebook's base seed.

    Returns
    -------
    numpy.random.Generator

    Examples
    --------
    >>> rng = notebook_rng(3)
    >>> int(rng.integers(10)) == int(np.random.default_rng(3 + seed_offset()).integers(10))
    True
    """
    fit_threads()
    return np.random.default_rng(notebook_seed(seed))


def scale():
    """The size preset selected by the environment variable ``SEQRMT_SCALE``.

    ``"book"`` (the default) sizes every notebook to run in under a minute on two CPU cores;
    ``"paper"`` selects the sizes of the papers (minutes to hours; a GPU helps in 2.6 and 3.5).

    Returns
    -------
    str
        ``"book"`` or ``"paper"``.

    Examples
    --------
    >>> scale() in ("book", "paper")
    True
    """
    value = os.environ.get("SEQRMT_SCALE", "book").strip().lower() or "book"
    if value not in SCALES:
        raise ValueError(f"SEQRMT_SCALE must be one of {SCALES}, got {value!r}")
    return value


def preset(book, paper):
    """``book`` or ``paper``, whichever :func:`scale` selects.

    Parameters
    ----------
    book, paper : object
        The values at the two sizes.

    Returns
    -------
    object

    Examples
    --------
    >>> n_trials = preset(book=200, paper=5000)
    """
    return paper if scale() == "paper" else book


def fit_threads(threads=None):
    """Limit BLAS and torch threads to the CPUs this process may use.

    More threads than CPUs make OpenBLAS spin: a notebook ran four times slower on a loaded
    two-core machine with its default threads.

    Parameters
    ----------
    threads : int or None
        The thread count. By default the CPUs this process may use (``joblib.cpu_count``:
        the affinity mask and the cgroup quota of a container or Binder pod), lowered to
        ``OMP_NUM_THREADS``/``OPENBLAS_NUM_THREADS``/``MKL_NUM_THREADS`` when one is set.

    Returns
    -------
    int
        The thread count in force.

    Examples
    --------
    >>> fit_threads(1)
    1
    """
    import joblib
    from threadpoolctl import threadpool_limits

    if threads is None:
        limit = joblib.cpu_count()
        for var in _THREAD_VARIABLES:
            value = os.environ.get(var, "").strip()
            if value.isdigit() and int(value) > 0:
                limit = min(limit, int(value))
    elif isinstance(threads, (bool, np.bool_)) or not isinstance(threads, numbers.Integral) or threads < 1:
        raise ValueError(f"threads must be a positive integer, got {threads!r}")
    else:
        limit = min(int(threads), os.cpu_count() or 1)
    threadpool_limits(limits=limit, user_api="blas")
    # torch reads OMP_NUM_THREADS when it starts; once imported, set it directly
    os.environ.setdefault("OMP_NUM_THREADS", str(limit))
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(limit)
    return limit


@contextlib.contextmanager
def single_threaded_blas():
    """Context manager limiting BLAS to one thread.

    For the small matrices of Monte Carlo loops (a few hundred rows), multithreaded OpenBLAS
    is 10-100 times slower than one thread and its timings are erratic. Setting
    ``OPENBLAS_NUM_THREADS`` after numpy is imported has no effect; ``threadpoolctl`` works
    at any time.

    Examples
    --------
    >>> with single_threaded_blas():
    ...     _ = np.linalg.eigvalsh(np.eye(3))
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def torch_device(device=None):
    """A torch device: the one named, or CUDA when a GPU is visible and the CPU otherwise.

    Parameters
    ----------
    device : str, torch.device or None
        ``None`` picks ``"cuda"`` when available, else ``"cpu"``.

    Returns
    -------
    torch.device

    Examples
    --------
    >>> torch_device("cpu").type
    'cpu'
    """
    import torch  # this function is for the chapters that train torch models

    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"device must name a torch device, got {device!r}") from exc
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device is 'cuda' but no CUDA device is available")
    return dev


def glue(name, value, display=False):
    """Record ``value`` under ``name`` for the book's prose (MyST-NB's ``glue``).

    The prose inserts it with the ``glue:text`` role and a format (``.3f``). NumPy scalars are
    stored as Python numbers (NumPy 2 prints ``np.float64(0.5)``, which no format can read).
    Where MyST-NB is not installed (Binder, Colab, a browser kernel) the call does nothing, so
    the notebooks run there unchanged.

    Parameters
    ----------
    name : str
        The key, unique in its notebook.
    value : object
        A number or a string.
    display : bool
        Also show the value as the cell's output (off by default: the print next to it shows it).

    Examples
    --------
    >>> glue("answer", np.float64(0.5))
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    if not isinstance(display, (bool, np.bool_)):
        raise ValueError(f"display must be True or False, got {display!r}")
    if isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0):
        value = value.item()
    try:
        from myst_nb import glue as myst_glue
    except ImportError:
        return
    myst_glue(name, value, display=bool(display))


def write_npz_deterministic(path, arrays, sort=True):
    """Write ``arrays`` (name -> array) to a compressed ``.npz`` whose bytes depend only on them.

    ``numpy.savez_compressed`` stamps every entry with the current time, so the same runs give a
    new file each time; here every entry carries the same fixed timestamp, which lets a cached run
    (Chapters 3.5 and 4.5) be regenerated to the same bytes and checked by its SHA-256.

    Parameters
    ----------
    path : str or os.PathLike
        File to write.
    arrays : dict
        Name -> array (non-empty); no pickled objects.
    sort : bool
        Entries sorted by name (``False``: in the dict's order).

    Returns
    -------
    str
        The SHA-256 of the bytes written.

    Examples
    --------
    >>> import tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> a = write_npz_deterministic(folder / "a.npz", {"x": np.arange(3)})
    >>> a == write_npz_deterministic(folder / "b.npz", {"x": np.arange(3)})  # same arrays, same bytes
    True
    >>> dict(np.load(folder / "a.npz"))["x"]
    array([0, 1, 2])
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    if not isinstance(arrays, dict) or not arrays or not all(isinstance(k, str) for k in arrays):
        raise ValueError("arrays must be a non-empty dict name -> array")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in (sorted(arrays) if sort else arrays):
            data = io.BytesIO()
            np.lib.format.write_array(data, np.ascontiguousarray(arrays[name]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))  # fixed stamp
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data.getvalue())
    blob = buf.getvalue()
    pathlib.Path(path).write_bytes(blob)
    return hashlib.sha256(blob).hexdigest()
