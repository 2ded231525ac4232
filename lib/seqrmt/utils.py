"""Shared utilities: random generators, BLAS threads, torch devices and presets.

Used in: every chapter.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import os
import pathlib
import sys

import numpy as np

__all__ = [
    "ConvergenceError",
    "as_generator",
    "seed_offset",
    "notebook_seed",
    "notebook_rng",
    "single_threaded_blas",
    "available_cpus",
    "fit_threads",
    "torch_device",
    "scale",
    "preset",
    "loglog_slope",
    "mean_se",
    "write_npz_deterministic",
    "read_npz_checked",
    "glue",
]

SCALES = ("book", "paper")


class ConvergenceError(RuntimeError):
    """Raised when an iterative solver does not reach its tolerance in ``max_iter`` steps."""


def as_generator(rng=None):
    """Return a :class:`numpy.random.Generator` from ``int | Generator | None``.

    Parameters
    ----------
    rng : int, numpy.random.Generator or None
        A seed, an existing generator (returned unchanged, so its stream is
        shared with the caller) or ``None`` for fresh operating-system entropy.

    Returns
    -------
    numpy.random.Generator

    Examples
    --------
    >>> g = as_generator(0)
    >>> as_generator(g) is g
    True
    """
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, (bool, np.bool_)):
        if rng < 0:
            raise ValueError(f"rng must be a non-negative seed, got {rng}")
        return np.random.default_rng(int(rng))
    raise ValueError(f"rng must be an int, a numpy Generator or None, got {type(rng).__name__}")


SEED_OFFSET_VARIABLE = "SEQRMT_SEED_OFFSET"


def seed_offset():
    """Return the seed shift selected by the environment variable ``SEQRMT_SEED_OFFSET``.

    The book's committed outputs are those of offset 0. Continuous integration
    re-runs every notebook with ``SEQRMT_SEED_OFFSET=1``: a claim in the prose
    that holds only for the committed seeds then fails the tolerance-aware
    comparison.

    Returns
    -------
    int
        The offset (0 when the variable is unset or empty).
    """
    value = os.environ.get(SEED_OFFSET_VARIABLE, "").strip()
    if not value:
        return 0
    try:
        offset = int(value)
    except ValueError:
        raise ValueError(f"{SEED_OFFSET_VARIABLE} must be a non-negative integer, got {value!r}") from None
    if offset < 0:
        raise ValueError(f"{SEED_OFFSET_VARIABLE} must be a non-negative integer, got {offset}")
    return offset


def notebook_seed(seed):
    """The seed a notebook actually uses: ``seed`` shifted by :func:`seed_offset`.

    Every notebook takes its randomness through this function (or
    :func:`notebook_rng`), once, so that one environment variable re-draws every
    random quantity of the book.

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
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed}")
    return int(seed) + seed_offset()


def notebook_rng(seed):
    """A notebook's set-up: its random generator, and threads that fit the machine.

    Returns ``numpy.random.default_rng(notebook_seed(seed))``. Every notebook
    calls it once at the top, so it also calls :func:`fit_threads`: BLAS and
    torch then use no more threads than the CPUs this process may run on
    (a Binder pod that sees 64 host cores but is given one gets one thread).

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


@contextlib.contextmanager
def single_threaded_blas():
    """Context manager limiting BLAS to one thread.

    For the small matrices of Monte Carlo loops (a few hundred rows),
    multithreaded OpenBLAS is 10-100 times slower than one thread and its
    timings are erratic. Setting ``OPENBLAS_NUM_THREADS`` after numpy is
    imported has no effect; ``threadpoolctl`` works at any time.

    Examples
    --------
    >>> with single_threaded_blas():
    ...     _ = np.linalg.eigvalsh(np.eye(3))
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _cgroup_cpu_quota(root="/sys/fs/cgroup"):
    """The CPU quota of this process's cgroup, in CPUs (``None`` when unlimited)."""
    root = pathlib.Path(root)
    try:  # cgroup v2: "max 100000" or "150000 100000"
        quota, period = (root / "cpu.max").read_text().split()[:2]
        if quota != "max" and float(period) > 0:
            return float(quota) / float(period)
        return None
    except (OSError, ValueError):
        pass
    try:  # cgroup v1
        quota = float((root / "cpu" / "cpu.cfs_quota_us").read_text())
        period = float((root / "cpu" / "cpu.cfs_period_us").read_text())
        if quota > 0 and period > 0:
            return quota / period
    except (OSError, ValueError):
        pass
    return None


def available_cpus():
    """The number of CPUs this process may use.

    The smallest of the CPUs in its affinity mask (``taskset``) and its
    cgroup's CPU quota rounded up (a container or a Binder pod), at least 1.

    Returns
    -------
    int

    Examples
    --------
    >>> 1 <= available_cpus() <= os.cpu_count()
    True
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    quota = _cgroup_cpu_quota()
    if quota is not None:
        cpus = min(cpus, math.ceil(quota))
    return max(1, cpus)


def fit_threads(threads=None):
    """Limit BLAS and torch threads to the CPUs this process may use.

    More threads than CPUs make OpenBLAS spin: a notebook ran four times
    slower on a loaded two-core machine with its default threads.

    Parameters
    ----------
    threads : int or None
        The thread count; by default :func:`available_cpus`, lowered to
        ``OMP_NUM_THREADS``/``OPENBLAS_NUM_THREADS``/``MKL_NUM_THREADS`` when
        the caller set one of them. A larger ``threads`` than the machine's
        CPU count is lowered to it.

    Returns
    -------
    int
        The thread count in force.

    Examples
    --------
    >>> fit_threads(1)
    1
    """
    if threads is None:
        limit = available_cpus()
        for var in _THREAD_VARIABLES:
            value = os.environ.get(var, "").strip()
            if value.isdigit() and int(value) > 0:
                limit = min(limit, int(value))
    elif isinstance(threads, (bool, np.bool_)) or not isinstance(threads, numbers.Integral) or threads < 1:
        raise ValueError(f"threads must be a positive integer, got {threads!r}")
    else:
        limit = min(int(threads), os.cpu_count() or 1)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=limit, user_api="blas")
    # torch reads OMP_NUM_THREADS when it starts; once imported, set it directly
    os.environ.setdefault("OMP_NUM_THREADS", str(limit))
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(limit)
    return limit


def torch_device(device=None):
    """Resolve a torch device: CUDA when available, otherwise the CPU.

    Parameters
    ----------
    device : str, torch.device or None
        ``None`` picks ``"cuda"`` when a GPU is visible and ``"cpu"``
        otherwise; anything else is passed to :class:`torch.device`.

    Returns
    -------
    torch.device
    """
    import torch

    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"device must name a torch device, got {device!r}") from exc
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device is 'cuda' but no CUDA device is available")
    return dev


def scale():
    """Return the size preset selected by the environment variable ``SEQRMT_SCALE``.

    ``"book"`` (the default) sizes every notebook to run in under a minute on two
    CPU cores; ``"paper"`` selects the sizes of the papers (minutes, a GPU helps).

    Returns
    -------
    str
        ``"book"`` or ``"paper"``.
    """
    value = os.environ.get("SEQRMT_SCALE", "book").strip().lower() or "book"
    if value not in SCALES:
        raise ValueError(f"SEQRMT_SCALE must be one of {SCALES}, got {value!r}")
    return value


def preset(book, paper):
    """Pick ``book`` or ``paper`` according to :func:`scale`.

    Examples
    --------
    >>> n_trials = preset(book=200, paper=5000)
    """
    return paper if scale() == "paper" else book


def loglog_slope(x, y):
    """Least-squares slope of ``log y`` against ``log x``.

    Parameters
    ----------
    x, y : array_like
        Positive values of equal length (at least two).

    Returns
    -------
    float
        The fitted exponent ``p`` in ``y ~ C x**p``.

    Examples
    --------
    >>> round(loglog_slope([1, 10, 100], [1, 0.1, 0.01]), 6)
    -1.0
    """
    from ._validation import check_array

    x = check_array(x, "x", ndim=1, positive=True)
    y = check_array(y, "y", ndim=1, shape=(x.size,), positive=True)
    if x.size < 2:
        raise ValueError("x must hold at least two points")
    if np.ptp(x) == 0:
        raise ValueError("x must hold at least two distinct values (a slope needs a spread)")
    slope, _ = np.polyfit(np.log(x), np.log(y), 1)
    return float(slope)


def mean_se(samples, axis=0):
    r"""Mean over independent realisations and its standard error.

    For realisations :math:`x_1,\dots,x_n` along ``axis``, returns
    :math:`\bar x` and :math:`s/\sqrt n` with :math:`s` the sample standard
    deviation (``ddof=1``), elementwise over the remaining axes: the
    standard error of :func:`scipy.stats.sem`. The one standard-error helper
    of the library: every Monte Carlo, batch-means or training-seed error bar
    goes through it.

    Parameters
    ----------
    samples : array_like
        Independent realisations (draws, batches, trainings, seeds) along
        ``axis``, at least 2, all finite.
    axis : int
        The axis of the realisations (default the first).

    Returns
    -------
    mean, se : float or numpy.ndarray
        The shape of ``samples`` without ``axis``; floats for 1-D input.

    Examples
    --------
    >>> mean_se([1.0, 2.0, 3.0, 6.0])
    (3.0, 1.0801234497346435)
    >>> m, se = mean_se(np.array([[0.0, 1.0], [2.0, 1.0]]))
    >>> m, se
    (array([1., 1.]), array([1., 0.]))
    >>> mean_se(np.array([[0.0, 2.0], [1.0, 1.0]]), axis=1)[1]
    array([1., 0.])
    """
    from ._validation import check_array

    x = check_array(samples, "samples")
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, numbers.Integral):
        raise ValueError(f"axis must be an integer, got {axis!r}")
    if x.ndim < 1 or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of range for samples of shape {x.shape}")
    if x.shape[axis] < 2:
        raise ValueError(f"samples must hold at least 2 realisations along axis {axis}, got shape {x.shape}")
    mean = x.mean(axis=axis)
    se = x.std(axis=axis, ddof=1) / np.sqrt(x.shape[axis])
    if x.ndim == 1:
        return float(mean), float(se)
    return mean, se


def write_npz_deterministic(path, arrays, sort=True):
    """Write arrays to a compressed ``.npz`` whose bytes depend on the arrays only; return its SHA-256.

    The zip entries are sorted by name and carry a fixed timestamp, so the same arrays give the
    same file (and hash) on every run. Used for the book's cached training runs.

    Parameters
    ----------
    path : str or pathlib.Path
        Output file.
    arrays : dict
        ``name -> numpy array`` (no object arrays).
    sort : bool
        Write the entries sorted by name (default), or in the order of ``arrays`` (the
        committed GPT runs of :mod:`seqrmt.nanogpt.key_spectra` were written that way).

    Returns
    -------
    str
        Hex SHA-256 of the file written.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     a = write_npz_deterministic(pathlib.Path(tmp) / "a.npz", {"x": np.arange(3)})
    ...     b = write_npz_deterministic(pathlib.Path(tmp) / "b.npz", {"x": np.arange(3)})
    >>> a == b
    True
    """
    import hashlib  # noqa: PLC0415
    import io  # noqa: PLC0415
    import zipfile  # noqa: PLC0415

    if not isinstance(arrays, dict) or not arrays:
        raise ValueError("arrays must be a non-empty dict name -> array")
    if not isinstance(sort, (bool, np.bool_)):
        raise ValueError(f"sort must be True or False, got {sort!r}")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in (sorted(arrays) if sort else arrays):
            data = io.BytesIO()
            np.lib.format.write_array(data, np.ascontiguousarray(arrays[name]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data.getvalue())
    blob = buf.getvalue()
    pathlib.Path(path).write_bytes(blob)
    return hashlib.sha256(blob).hexdigest()


def read_npz_checked(path, sha256=None, regenerate=""):
    """Read an ``.npz`` into a dict of arrays, after checking the file's SHA-256.

    Parameters
    ----------
    path : str or pathlib.Path
        The file.
    sha256 : str or None
        Expected hex digest; ``None`` or ``""`` skips the check.
    regenerate : str
        How to regenerate the file, quoted in the error message.

    Returns
    -------
    dict
        ``name -> numpy array``.

    Raises
    ------
    ValueError
        If ``path`` is not an existing file, or the hash differs.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     h = write_npz_deterministic(pathlib.Path(tmp) / "a.npz", {"x": np.arange(3)})
    ...     read_npz_checked(pathlib.Path(tmp) / "a.npz", h)["x"].tolist()
    [0, 1, 2]
    """
    import hashlib  # noqa: PLC0415
    import io  # noqa: PLC0415

    if not isinstance(path, (str, os.PathLike)) or not pathlib.Path(path).is_file():
        raise ValueError(f"path must be an existing file, got {path!r}")
    p = pathlib.Path(path)
    blob = p.read_bytes()
    if sha256:
        if not isinstance(sha256, str):
            raise ValueError(f"sha256 must be a hex string or None, got {type(sha256).__name__}")
        got = hashlib.sha256(blob).hexdigest()
        if got != sha256.lower():
            raise ValueError(f"sha256 of {p} is {got}, expected {sha256}: the file is not the committed one"
                             + (f" ({regenerate})" if regenerate else ""))
    with np.load(io.BytesIO(blob), allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def glue(name, value, display=True):
    """Record ``value`` under ``name`` for the book's prose (MyST-NB's ``glue``).

    The prose inserts it with MyST-NB's ``glue:text`` role (with a format
    such as ``.3f``) wherever the notebook is built into the book. NumPy scalars are stored as Python numbers (NumPy 2
    prints ``np.float64(0.5)``, which no format specification can read), and
    where MyST-NB is not installed (Binder, Colab) the call only returns, so
    the notebooks run there unchanged.

    Parameters
    ----------
    name : str
        The key, unique in its notebook.
    value : object
        A number, a string, a figure, ...
    display : bool
        Also show the value as the cell's output (MyST-NB's default).

    Examples
    --------
    >>> glue("answer", np.float64(0.5), display=False)
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    if isinstance(display, (bool, np.bool_)):
        display = bool(display)
    else:
        raise ValueError(f"display must be True or False, got {display!r}")
    if isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0):
        value = value.item()
    try:
        from myst_nb import glue as myst_glue
    except ImportError:
        return None
    myst_glue(name, value, display=display)
    return None
