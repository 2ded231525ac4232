r"""Converged UFM runs on the TinyStories-like corpus of Chapter 3.5, trained once and cached.

Section 3.5 compares the geometry of a trained UFM with the max-margin geometry. Gradient
descent on the UFM reaches its loss plateau in a few thousand steps, but its geometry keeps
moving for tens of thousands (the slowest directions relax on a time scale much longer than
:math:`1/(\eta\lambda)`), more than a notebook may spend. :func:`ufm_geometry_runs` trains the
UFM for several seeds,

* by gradient descent (``"gd"``) on :math:`\mathrm{CE}(WH)+\frac\lambda2(\|W\|_F^2+\|H\|_F^2)`,
  in segments of doubling length (checkpoints ``first``, ``2 first``, ``4 first``, ...), until
  the **stopping rule** holds for every seed: between the checkpoints :math:`t/2` and :math:`t`
  every correlation score (:func:`seqrmt.ntp.transformer.geometry_scores`) has moved by less
  than ``tol`` and :math:`\rho` by less than ``tol`` relative;
* by AdamW (``"adamw"``) with the schedule of Zhao et al. (2024): learning rate
  :math:`10^{-4}`, decoupled weight decay :math:`10^{-6}`, divided by 2.5 every 5000 steps,
  30 000 steps;

and records the gradient norm, :math:`\mathrm{CE}-\mathcal H` and every geometry score at the
checkpoints. The final factors are stored in float16 (the scores are computed from the rounded
factors, so a notebook that recomputes them from the file finds the same values).
:meth:`UFMGeometryRuns.save` writes a deterministic ``.npz``; :func:`load_ufm_runs` reads the
committed file :data:`UFM_RUNS_FILE`, checks its SHA-256 and that it belongs to the corpus at hand.

Regenerate the committed file (about 10 minutes of one CPU core)::

    python -m seqrmt.ntp ufm-runs --out lib/seqrmt/ntp/ufm_runs.npz

Runs are bit-reproducible on one machine and BLAS build; another may round differently in
float32 and then gives a statistically equivalent file with another hash.

Used in: Chapter 3, "A transformer and a UFM on a TinyStories-like corpus".
"""

from __future__ import annotations

import hashlib
import json
import pathlib
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_positive, check_size
from ..ensemble import spawn_generators
from .._io import read_npz_checked, write_npz_deterministic
from .corpus import tinystories_like
from .geometry import block_indicator, cosine_similarity, embedding_cosines, in_support_logits
from .svm import ntp_svm_nuclear
from .transformer import geometry_scores
from .ufm import train_ufm

__all__ = [
    "UFM_RUNS_FILE",
    "UFM_RUNS_SHA256",
    "CORPUS_SEED",
    "CORPUS_SIZE",
    "GD_SETTINGS",
    "ADAMW_SETTINGS",
    "corpus_fingerprint",
    "geometry_targets",
    "UFMGeometryRuns",
    "ufm_geometry_runs",
    "load_ufm_runs",
    "default_corpus",
]

UFM_RUNS_FILE = pathlib.Path(__file__).with_name("ufm_runs.npz")
"""The committed runs (5 seeds by gradient descent, 5 by AdamW)."""

UFM_RUNS_SHA256 = "9363c85682a0bf603c9f1bb952c96cc67c72824bee1c542fa974adb7dad264a4"
"""SHA-256 of :data:`UFM_RUNS_FILE`."""

CORPUS_SEED = 305
"""Seed of the corpus of the committed runs: ``tinystories_like(default_rng(305), m=200)``."""

CORPUS_SIZE = 200
"""Number of contexts of the corpus of the committed runs."""

GD_SETTINGS = dict(d=128, lam=1e-4, eta_per_context=1 / 20, first=1000, max_iter=256_000, tol=1e-3)
"""Gradient descent: :math:`\\eta=m/20`, :math:`\\lambda=10^{-4}`, float32, stopping rule ``tol``."""

ADAMW_SETTINGS = dict(d=128, lam=1e-6, eta=1e-4, steps=30_000, milestones=(5000, 10000, 15000, 20000, 25000),
                      gamma=0.4)
"""AdamW as in the paper: lr :math:`10^{-4}`, weight decay :math:`10^{-6}`, x0.4 every 5000 steps."""

_RATIO_SCORES = ("rho",)


def corpus_fingerprint(data):
    """SHA-256 (hex) of the next-token data ``P`` and ``pi`` (float64 bytes): which corpus runs belong to.

    Examples
    --------
    >>> from seqrmt.ntp.data import NTPData
    >>> len(corpus_fingerprint(NTPData.from_counts([[1, 0], [1, 2]])))
    64
    """
    from .data import NTPData  # noqa: PLC0415

    if not isinstance(data, NTPData):
        raise ValueError(f"data must be an NTPData, got {type(data).__name__}")
    h = hashlib.sha256()
    for arr in (data.P, data.pi):
        h.update(np.ascontiguousarray(arr, dtype=np.float64).tobytes())
    return h.hexdigest()


def geometry_targets(corpus, L_mm):
    """Targets, class blocks and in-support logits of Chapter 3.5's geometry scores.

    Parameters
    ----------
    corpus : seqrmt.ntp.corpus.TinyStoriesLike
    L_mm : array_like, shape (V, m)
        Max-margin logits of ``corpus.data.S``.

    Returns
    -------
    targets : dict
        ``"ctx_mm"``, ``"ctx_S"``, ``"word_mm"``, ``"word_S"`` -> ``(kind, cosine matrix)``.
    blocks : dict
        ``"H"``, ``"W"`` -> class-block indicators.
    L_in : numpy.ndarray
        In-support logits.
    """
    data = corpus.data
    cw_mm, ch_mm = embedding_cosines(L_mm)
    targets = {"ctx_mm": ("H", ch_mm), "ctx_S": ("H", cosine_similarity(data.S.T)),
               "word_mm": ("W", cw_mm), "word_S": ("W", cosine_similarity(data.S))}
    blocks = {"H": block_indicator(corpus.context_class), "W": block_indicator(corpus.word_class)}
    return targets, blocks, in_support_logits(data.P)


@dataclass
class UFMGeometryRuns:
    """UFM trainings of several seeds with their geometry scores at checkpoints.

    Attributes
    ----------
    fingerprint : str
        :func:`corpus_fingerprint` of the training data.
    score_names : list of str
        Names of the scores (keys of :func:`seqrmt.ntp.transformer.geometry_scores`).
    runs : dict
        ``optimizer -> dict`` with ``"steps"`` ``(S,)``, ``"grad_norm"`` and ``"ce_gap"``
        ``(R, S)``, ``"scores"`` ``(R, S, K)``, and the final float16 factors ``"W"``
        ``(R, V, d)`` and ``"H"`` ``(R, d, m)``.
    config : dict
        Settings (``GD_SETTINGS``, ``ADAMW_SETTINGS``, seeds, corpus).
    """

    fingerprint: str
    score_names: list
    runs: dict = field(default_factory=dict)
    config: dict = field(default_factory=dict)

    def _run(self, optimizer):
        if not isinstance(optimizer, str) or optimizer not in self.runs:
            raise ValueError(f"optimizer must be one of {sorted(self.runs)}, got {optimizer!r}")
        return self.runs[optimizer]

    def scores(self, optimizer, name):
        """``(R, S)`` trajectory of one score of one optimizer's runs."""
        r = self._run(optimizer)
        if not isinstance(name, str) or name not in self.score_names:
            raise ValueError(f"name must be one of {self.score_names}, got {name!r}")
        return r["scores"][:, :, self.score_names.index(name)]

    def factors(self, optimizer, seed_index=0):
        """Final ``(W, H)`` of one run, as float64."""
        r = self._run(optimizer)
        n = len(r["W"])
        if isinstance(seed_index, bool) or not isinstance(seed_index, (int, np.integer)) \
                or not 0 <= seed_index < n:
            raise ValueError(f"seed_index must be an integer in [0, {n}), got {seed_index!r}")
        return r["W"][seed_index].astype(np.float64), r["H"][seed_index].astype(np.float64)

    def save(self, path):
        """Write a deterministic ``.npz`` (:func:`seqrmt._io.write_npz_deterministic`); return its SHA-256."""
        meta = {"fingerprint": self.fingerprint, "score_names": self.score_names, "config": self.config}
        arrays = {"meta": np.frombuffer(json.dumps(meta, sort_keys=True).encode(), np.uint8)}
        for opt, r in self.runs.items():
            arrays.update({f"{opt}/{k}": v for k, v in r.items()})
        return write_npz_deterministic(path, arrays)


def _scores(W, H, targets, blocks, L_in, L_mm):
    """Scores of float16-rounded factors (what the file stores)."""
    W = W.astype(np.float16).astype(np.float64)
    H = H.astype(np.float16).astype(np.float64)
    return geometry_scores(W, H, W @ H, targets, blocks, L_in, L_mm)


def _moved(prev, new, names, tol):
    """Whether any score moved by ``tol`` or more (relative for rho) between two checkpoints."""
    for k, name in enumerate(names):
        scale = abs(prev[k]) if name in _RATIO_SCORES else 1.0
        if abs(new[k] - prev[k]) >= tol * scale:
            return True
    return False


def _stack(rows):
    return np.array(rows).swapaxes(0, 1)  # (S, R, ...) -> (R, S, ...)


def ufm_geometry_runs(corpus, L_mm, seeds=5, seed=0, optimizers=("gd", "adamw"), gd=None, adamw=None,
                      progress=None):
    """Train the UFM for several seeds and record its geometry scores (see the module docstring).

    Parameters
    ----------
    corpus : seqrmt.ntp.corpus.TinyStoriesLike
        The corpus (``corpus.data`` holds ``P`` and ``pi``).
    L_mm : array_like, shape (V, m)
        Max-margin logits of the corpus's supports.
    seeds : int
        Number of seeds per optimizer; seed ``i`` initialises from the ``i``-th generator of
        :func:`seqrmt.ensemble.spawn_generators` ``(seed, seeds)``.
    seed : int
        Root seed.
    optimizers : sequence of {"gd", "adamw"}
    gd, adamw : dict, optional
        Overrides of :data:`GD_SETTINGS` and :data:`ADAMW_SETTINGS`.
    progress : callable, optional
        Called with a short message after each checkpoint (e.g. ``print``).

    Returns
    -------
    UFMGeometryRuns

    Raises
    ------
    seqrmt.ConvergenceError
        If gradient descent has not met the stopping rule by ``max_iter`` steps.

    Examples
    --------
    >>> import numpy as np
    >>> from seqrmt.ntp.corpus import tinystories_like
    >>> c = tinystories_like(np.random.default_rng(0), m=30)
    >>> from seqrmt.ntp.svm import ntp_svm_nuclear
    >>> runs = ufm_geometry_runs(c, ntp_svm_nuclear(c.data.S), seeds=2, optimizers=("gd",),
    ...                          gd=dict(first=100, tol=1.0, max_iter=1000))  # a loose rule
    >>> runs.runs["gd"]["steps"].tolist(), runs.runs["gd"]["scores"].shape[:2]
    ([100, 200], (2, 2))
    """
    from .._validation import ConvergenceError# noqa: PLC0415

    seeds = check_size(seeds, "seeds")
    gd = {**GD_SETTINGS, **(gd or {})}
    adamw = {**ADAMW_SETTINGS, **(adamw or {})}
    for opt in optimizers:
        if opt not in ("gd", "adamw"):
            raise ValueError(f"optimizers must hold 'gd' and/or 'adamw', got {opt!r}")
    check_positive(gd["tol"], "tol")
    data = corpus.data
    L_mm = np.asarray(L_mm, dtype=float)
    targets, blocks, L_in = geometry_targets(corpus, L_mm)
    names = None
    say = progress or (lambda msg: None)
    out = {}
    if "gd" in optimizers:
        gens = spawn_generators(seed, seeds)
        eta = data.m * gd["eta_per_context"]
        d = gd["d"]
        state = [(0.1 * g.standard_normal((data.V, d)), 0.1 * g.standard_normal((d, data.m))) for g in gens]
        steps, rows, t, prev = [], [], 0, None
        while True:
            t_next = gd["first"] if t == 0 else 2 * t
            new_state, row = [], []
            for W0, H0 in state:
                run = train_ufm(data.P, data.pi, d=d, lam=gd["lam"], eta=eta, max_iter=t_next - t,
                                W0=W0, H0=H0, record_at=[t_next - t], dtype=np.float32)
                sc = _scores(run.W, run.H, targets, blocks, L_in, L_mm)
                names = names or sorted(sc)
                row.append(([sc[k] for k in names], run.grad_norm[-1], run.ce_gap[-1]))
                new_state.append((run.W, run.H))
            state, t = new_state, t_next
            steps.append(t)
            rows.append(row)
            cur = [r[0] for r in row]
            say(f"gd step {t}: grad norm {max(r[1] for r in row):.1e}")
            if prev is not None and not any(_moved(p, c, names, gd["tol"]) for p, c in zip(prev, cur)):
                break
            if 2 * t > gd["max_iter"]:
                raise ConvergenceError(f"the UFM geometry still moves after {t} steps (tol={gd['tol']})")
            prev = cur
        out["gd"] = {"steps": np.array(steps), "scores": _stack([[r[0] for r in row] for row in rows]),
                     "grad_norm": _stack([[r[1] for r in row] for row in rows]),
                     "ce_gap": _stack([[r[2] for r in row] for row in rows]),
                     "W": np.stack([W.astype(np.float16) for W, _ in state]),
                     "H": np.stack([H.astype(np.float16) for _, H in state])}
    if "adamw" in optimizers:
        gens = spawn_generators(seed + 1, seeds)
        n = adamw["steps"]
        record = np.unique(np.r_[np.geomspace(100, n, 12).astype(int), list(adamw["milestones"]), n])
        record = record[record <= n]
        sc_all, gn, ce, Ws, Hs = [], [], [], [], []
        for i, g in enumerate(gens):
            run = train_ufm(data.P, data.pi, d=adamw["d"], lam=adamw["lam"], eta=adamw["eta"], max_iter=n,
                            rng=g, optimizer="adamw", milestones=adamw["milestones"], gamma=adamw["gamma"],
                            record_at=record, store=True, dtype=np.float32)
            per_step = [_scores(W, H, targets, blocks, L_in, L_mm)
                        for W, H in zip(run.snapshots["W"], run.snapshots["H"])]
            names = names or sorted(per_step[0])
            sc_all.append([[s[k] for k in names] for s in per_step])
            gn.append(run.grad_norm)
            ce.append(run.ce_gap)
            Ws.append(run.W.astype(np.float16))
            Hs.append(run.H.astype(np.float16))
            say(f"adamw seed {i}: CE - H {run.ce_gap[-1]:.4f}")
        out["adamw"] = {"steps": record, "scores": np.array(sc_all), "grad_norm": np.array(gn),
                        "ce_gap": np.array(ce), "W": np.stack(Ws), "H": np.stack(Hs)}
    config = {"gd": {k: (list(v) if isinstance(v, tuple) else v) for k, v in gd.items()},
              "adamw": {k: (list(v) if isinstance(v, tuple) else v) for k, v in adamw.items()},
              "seeds": seeds, "seed": seed}
    return UFMGeometryRuns(fingerprint=corpus_fingerprint(data), score_names=names, runs=out, config=config)


def load_ufm_runs(data=None, path=None, sha256=UFM_RUNS_SHA256):
    """Read runs saved by :meth:`UFMGeometryRuns.save`, checking the file's SHA-256 and the corpus.

    Parameters
    ----------
    data : seqrmt.ntp.data.NTPData, optional
        If given, the runs must have been trained on it (:func:`corpus_fingerprint`).
    path : str or pathlib.Path, optional
        Default :data:`UFM_RUNS_FILE`.
    sha256 : str or None
        Expected hex digest (default: the committed file's); ``None`` or ``""`` skips the check.

    Returns
    -------
    UFMGeometryRuns

    Raises
    ------
    ValueError
        If the file does not exist, its hash differs, or the runs belong to another corpus.
    """
    p = UFM_RUNS_FILE if path is None else pathlib.Path(path)
    arr = read_npz_checked(p, sha256, "regenerate it with python -m seqrmt.ntp ufm-runs, see seqrmt.ntp.ufm_runs")
    meta = json.loads(arr.pop("meta").tobytes().decode())
    runs = {}
    for key, val in arr.items():
        opt, name = key.split("/", 1)
        runs.setdefault(opt, {})[name] = val
    out = UFMGeometryRuns(fingerprint=meta["fingerprint"], score_names=meta["score_names"], runs=runs,
                          config=meta["config"])
    if data is not None and corpus_fingerprint(data) != out.fingerprint:
        raise ValueError("these UFM runs were trained on another corpus (fingerprint differs); "
                         "retrain them with ufm_geometry_runs")
    return out


def default_corpus():
    """The corpus of the committed runs: ``tinystories_like(default_rng(CORPUS_SEED), m=CORPUS_SIZE)``."""
    return tinystories_like(np.random.default_rng(CORPUS_SEED), m=CORPUS_SIZE)


def _main(argv=None):
    import argparse  # noqa: PLC0415
    import time  # noqa: PLC0415

    parser = argparse.ArgumentParser(prog="python -m seqrmt.ntp ufm-runs",
                                     description="Train and cache the converged UFM runs of Chapter 3.5.")
    parser.add_argument("--out", default=str(UFM_RUNS_FILE))
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args(argv)
    start = time.time()
    corpus = default_corpus()
    L_mm = ntp_svm_nuclear(corpus.data.S)
    runs = ufm_geometry_runs(corpus, L_mm, seeds=args.seeds,
                             progress=lambda msg: print(f"[{time.time() - start:6.0f} s] {msg}", flush=True))
    print("sha256", runs.save(args.out))
