"""Independent realisations: one generator each, run serially or in parallel.

Every Monte Carlo draw, every training seed of the book is a *realisation*.
:func:`run_ensemble` gives realisation ``i`` its own generator, the ``i``-th
child of one :class:`numpy.random.SeedSequence`, so a result depends only on
the seed and the realisation's index, never on how the realisations are split
among workers or machines: one worker, two workers and a Dask cluster return
the same bits.

Workers. The realisations run through ``joblib`` (the ``loky`` process
backend by default). The number of workers is the ``jobs`` argument, or the
environment variable ``SEQRMT_JOBS``, or by default 1 at the book's size and
every available CPU at the paper's size (:func:`seqrmt.runtime.scale`);
"available" is ``joblib.cpu_count()``: the affinity mask and the cgroup quota.

A cluster. joblib hands its work to whatever backend is active, so the same
call runs on a Dask cluster (or Ray) without a change to the notebook::

    from dask.distributed import Client
    from joblib import parallel_config

    client = Client("tcp://scheduler:8786")     # or Client() for a local one
    with parallel_config(backend="dask"):
        results = run_ensemble(draw, 400, seed=1, jobs=-1)

Progress. Long ensembles report progress with ``tqdm.auto`` (a notebook
bar in Jupyter, text in a terminal); see :func:`progress_enabled`.

Used in: every chapter with a Monte Carlo ensemble or several training seeds.
"""

from __future__ import annotations

import numbers
import os

import joblib
import numpy as np

from .runtime import scale

__all__ = [
    "JOBS_VARIABLE",
    "PROGRESS_VARIABLE",
    "n_jobs",
    "progress_enabled",
    "progress_bar",
    "spawn_generators",
    "run_ensemble",
]

JOBS_VARIABLE = "SEQRMT_JOBS"
PROGRESS_VARIABLE = "SEQRMT_PROGRESS"
MAX_REALISATIONS = 10**7  # one generator each: more would not fit in memory


def n_jobs(jobs=None):
    """The number of workers for an ensemble.

    Parameters
    ----------
    jobs : int or None
        A positive count, ``-1`` for every available CPU, or ``None`` for the
        environment variable ``SEQRMT_JOBS`` (same values) and, when that is
        unset, 1 at the book's size and every available CPU at the paper's.

    Returns
    -------
    int
        At least 1.

    Examples
    --------
    >>> n_jobs(3)
    3
    >>> n_jobs(-1) == joblib.cpu_count()
    True
    """
    source = "jobs"
    if jobs is None:
        value = os.environ.get(JOBS_VARIABLE, "").strip()
        if not value:
            return joblib.cpu_count() if scale() == "paper" else 1
        source = JOBS_VARIABLE
        try:
            jobs = int(value)
        except ValueError:
            raise ValueError(f"{JOBS_VARIABLE} must be a positive integer or -1, got {value!r}") from None
    if isinstance(jobs, (bool, np.bool_)) or not isinstance(jobs, numbers.Integral):
        raise ValueError(f"{source} must be a positive integer or -1, got {jobs!r}")
    if jobs == -1:
        return joblib.cpu_count()
    if jobs < 1:
        raise ValueError(f"{source} must be a positive integer or -1, got {jobs}")
    return int(jobs)


def progress_enabled(progress=None):
    """Whether long loops show a progress bar.

    Parameters
    ----------
    progress : bool or None
        An explicit choice, or ``None`` for the default: the environment
        variable ``SEQRMT_PROGRESS`` (``1``/``0``) when set; otherwise on at
        the paper's size and off at the book's size and under continuous
        integration (``CI`` set), so that committed outputs do not change.

    Returns
    -------
    bool

    Examples
    --------
    >>> progress_enabled(True), progress_enabled(False)
    (True, False)
    """
    if progress is not None:
        if not isinstance(progress, (bool, np.bool_)):
            raise ValueError(f"progress must be True, False or None, got {progress!r}")
        return bool(progress)
    value = os.environ.get(PROGRESS_VARIABLE, "").strip().lower()
    if value:
        if value not in ("0", "1", "true", "false"):
            raise ValueError(f"{PROGRESS_VARIABLE} must be 0 or 1, got {value!r}")
        return value in ("1", "true")
    if os.environ.get("CI"):
        return False
    return scale() == "paper"


def progress_bar(iterable, total=None, desc=None, enabled=None):
    """Wrap ``iterable`` in a ``tqdm.auto`` bar when progress is enabled.

    Parameters
    ----------
    iterable : iterable
        The loop to report on.
    total : int, optional
        Its length, when ``len(iterable)`` is not defined.
    desc : str, optional
        The bar's label.
    enabled : bool or None
        Passed to :func:`progress_enabled`.

    Returns
    -------
    iterable
        ``iterable`` itself when progress is off, else a tqdm bar over it.

    Examples
    --------
    >>> list(progress_bar(range(3), enabled=False))
    [0, 1, 2]
    """
    if not progress_enabled(enabled):
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc)


def spawn_generators(seed, n):
    """``n`` independent generators, the children of one seed.

    Parameters
    ----------
    seed : int, numpy.random.SeedSequence or numpy.random.Generator
        The root: a non-negative integer (e.g. from
        :func:`seqrmt.runtime.notebook_seed`), a seed sequence, or a generator (its
        own seed sequence spawns the children, see
        :meth:`numpy.random.Generator.spawn`).
    n : int
        The number of realisations, at least 1.

    Returns
    -------
    list of numpy.random.Generator
        Child ``i`` depends only on ``seed`` and ``i`` (for an integer or a
        fresh seed sequence).

    Examples
    --------
    >>> a = spawn_generators(5, 3)
    >>> b = spawn_generators(5, 4)
    >>> float(a[2].random()) == float(b[2].random())
    True
    """
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if n > MAX_REALISATIONS:
        raise ValueError(f"n must be at most {MAX_REALISATIONS:.0e} realisations, got {n}")
    if isinstance(seed, np.random.Generator):
        return seed.spawn(int(n))
    if isinstance(seed, np.random.SeedSequence):
        root = seed
    elif isinstance(seed, numbers.Integral) and not isinstance(seed, (bool, np.bool_)):
        if seed < 0:
            raise ValueError(f"seed must be non-negative, got {seed}")
        root = np.random.SeedSequence(int(seed))
    else:
        raise ValueError(f"seed must be an int, a SeedSequence or a Generator, got {type(seed).__name__}")
    return [np.random.default_rng(child) for child in root.spawn(int(n))]


def run_ensemble(func, n, seed, *, args=(), kwargs=None, jobs=None, progress=None, desc=None):
    """Run ``n`` independent realisations ``func(rng_i, *args, **kwargs)``.

    Realisation ``i`` receives the ``i``-th generator of
    :func:`spawn_generators`, so the list returned is the same (bit for bit)
    for any number of workers and any joblib backend.

    Parameters
    ----------
    func : callable
        ``func(rng, *args, **kwargs)`` returning one realisation's result. To
        run in worker processes it must be importable (a module-level
        function, not a lambda defined in a notebook cell) unless
        ``jobs == 1``.
    n : int
        The number of realisations.
    seed : int, numpy.random.SeedSequence or numpy.random.Generator
        The root of the realisations' generators.
    args, kwargs : tuple, dict
        Passed to every call.
    jobs : int or None
        Workers (see :func:`n_jobs`), at most ``n``. With 1 the realisations
        run in this process, in order.
    progress : bool or None
        Show a progress bar (see :func:`progress_enabled`).
    desc : str, optional
        The progress bar's label.

    Returns
    -------
    list
        The ``n`` results, in realisation order.

    Examples
    --------
    >>> def draw(rng, size):
    ...     return float(rng.standard_normal(size).mean())
    >>> run_ensemble(draw, 4, seed=0, args=(10,)) == run_ensemble(
    ...     draw, 4, seed=0, args=(10,), jobs=1)
    True
    """
    if not callable(func):
        raise ValueError(f"func must be callable, got {type(func).__name__}")
    if not isinstance(args, tuple):
        raise ValueError(f"args must be a tuple, got {type(args).__name__}")
    if kwargs is None:
        kwargs = {}
    if not isinstance(kwargs, dict):
        raise ValueError(f"kwargs must be a dict, got {type(kwargs).__name__}")
    generators = spawn_generators(seed, n)
    workers = min(n_jobs(jobs), len(generators))
    if workers == 1:
        calls = (func(rng, *args, **kwargs) for rng in generators)
        return list(progress_bar(calls, len(generators), desc, enabled=progress))
    from joblib import Parallel, delayed

    parallel = Parallel(n_jobs=workers, return_as="generator")
    calls = parallel(delayed(func)(rng, *args, **kwargs) for rng in generators)
    return list(progress_bar(calls, len(generators), desc, enabled=progress))
