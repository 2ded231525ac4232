r"""Cached training runs of the small GPT of Aarts et al.: key matrices saved during training.

A 5000-step training of :meth:`GPTConfig.aarts <seqrmt.nanogpt.GPTConfig.aarts>` takes
about 2.5 minutes of one CPU core, more than a notebook may spend. :func:`train_key_spectra`
trains the model for several seeds at the talk's settings (AdamW, learning rate :math:`10^{-3}`
constant, batches of 16 windows of 32 characters, :math:`\beta=(0.9,0.999)`, weight decay 0.01
on matrices, no gradient clipping, no dropout), saves the 16 key matrices and the validation loss
on the whole validation split at the steps ``steps``, and keeps the final weights of the first
seed. :meth:`KeySpectraRuns.save` writes it as a deterministic ``.npz`` (fixed zip timestamps, so
the same runs give the same bytes); :func:`load_key_spectra` reads the committed file
:data:`KEY_SPECTRA_FILE` and checks its SHA-256 against :data:`KEY_SPECTRA_SHA256`.

Regenerate the committed file (about 10 minutes on one CPU core)::

    python -m seqrmt.nanogpt key-spectra --seeds 0 1 2 --max-iters 5000 \
        --out lib/seqrmt/nanogpt/aarts_key_spectra.npz

CPU training is bit-reproducible on one machine and PyTorch build; another CPU or build may
round differently and then gives a statistically equivalent file with another hash.
"""

from __future__ import annotations

import json
import pathlib
from dataclasses import dataclass, field

import numpy as np
import torch

from .._validation import check_size
from .._io import read_npz_checked, write_npz_deterministic
from .config import GPTConfig, _check_nonneg_int
from .model import GPT, build_gpt
from .train import TrainConfig, train_gpt, validation_loss

__all__ = [
    "KEY_SPECTRA_FILE",
    "KEY_SPECTRA_SHA256",
    "DEFAULT_STEPS",
    "aarts_train_config",
    "KeySpectraRuns",
    "train_key_spectra",
    "load_key_spectra",
    "KeyRandomWalk",
    "key_random_walk",
]

KEY_SPECTRA_FILE = pathlib.Path(__file__).with_name("aarts_key_spectra.npz")
"""The committed runs (3 seeds x 5000 steps on the Shakespeare corpus)."""

KEY_SPECTRA_SHA256 = "3ae18140a7ca01c1b62bc653d3dbdba4535e7ccf10a8ee2997df390d2e60b740"
"""SHA-256 of :data:`KEY_SPECTRA_FILE`."""

DEFAULT_STEPS = (0, 10, 30, 100, 300, 1000, 2000, 3000, 5000)
"""Steps at which the key matrices and the validation loss are saved."""


def aarts_train_config(max_iters=5000, seed=0, snapshot_iters=()):
    """The training settings of the talk's nano-GPT as a :class:`~seqrmt.nanogpt.TrainConfig`.

    AdamW at a constant learning rate :math:`10^{-3}`, batch 16, :math:`\\beta=(0.9,0.999)`,
    weight decay 0.01 on matrices, no gradient clipping, no periodic evaluation, key snapshots.

    Examples
    --------
    >>> cfg = aarts_train_config(100, seed=3, snapshot_iters=(0, 100))
    >>> cfg.batch_size, cfg.lr, cfg.schedule, cfg.betas, cfg.snapshot_iters
    (16, 0.001, 'constant', (0.9, 0.999), (0, 100))
    """
    return TrainConfig(batch_size=16, max_iters=max_iters, lr=1e-3, schedule="constant",
                       betas=(0.9, 0.999), weight_decay=0.01, grad_clip=0.0, eval_interval=0,
                       log_interval=0, seed=seed, snapshot_iters=tuple(snapshot_iters),
                       snapshot_kinds=("key",), verbose=False)


@dataclass
class KeySpectraRuns:
    """Key matrices and validation losses of independent trainings, saved at common steps.

    Attributes
    ----------
    seeds : numpy.ndarray
        ``(R,)`` seeds (each seeds both the initialisation and the batches).
    steps : numpy.ndarray
        ``(S,)`` training steps of the snapshots (0 = initialisation).
    keys : numpy.ndarray
        ``(R, S, n_layer, n_head, head_size, n_embd)`` float32 key matrices.
    val_loss : numpy.ndarray
        ``(R, S)`` cross-entropy on the whole validation split (nats per character).
    config : dict
        ``{"model": GPTConfig fields, "train": TrainConfig fields}`` of the first run.
    state : dict
        Final weights (``state_dict``, float32 numpy arrays) of the first seed's model.
    """

    seeds: np.ndarray
    steps: np.ndarray
    keys: np.ndarray
    val_loss: np.ndarray
    config: dict
    state: dict = field(default_factory=dict)

    def eigenvalues(self):
        """``(R, S, n_layer * n_head, head_size)`` eigenvalues of the Gram matrices :math:`KK^\\top`.

        Computed in float64 from the float32 key matrices.
        """
        k = self.keys.astype(np.float64)
        k = k.reshape(k.shape[0], k.shape[1], -1, k.shape[-2], k.shape[-1])
        return np.linalg.eigvalsh(k @ np.swapaxes(k, -1, -2))

    def model(self):
        """The first seed's final model (a :class:`~seqrmt.nanogpt.GPT` on the CPU)."""
        if not self.state:
            raise ValueError("these runs hold no final weights (state is empty)")
        m = GPT(GPTConfig(**self.config["model"]))
        m.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in self.state.items()})
        return m

    def save(self, path):
        """Write a deterministic ``.npz`` (:func:`seqrmt._io.write_npz_deterministic`); return its SHA-256."""
        arrays = {"seeds": self.seeds, "steps": self.steps, "keys": self.keys,
                  "val_loss": self.val_loss,
                  "config": np.frombuffer(json.dumps(self.config, sort_keys=True).encode(), np.uint8)}
        arrays.update({f"state/{k}": v for k, v in self.state.items()})
        return write_npz_deterministic(path, arrays, sort=False)  # the committed file's entry order


def train_key_spectra(dataset, seeds=(0, 1, 2), max_iters=5000, steps=DEFAULT_STEPS, progress=None):
    """Train the talk's nano-GPT once per seed on the CPU and record its key matrices.

    Parameters
    ----------
    dataset : seqrmt.data.CharDataset
        Tokens (e.g. :func:`seqrmt.data.shakespeare_dataset`).
    seeds : sequence of int
        One training per seed (initialisation ``build_gpt(seed=s)``, batches ``TrainConfig.seed=s``).
    max_iters : int
        Training steps.
    steps : sequence of int
        Snapshot steps, within ``[0, max_iters]`` (``max_iters`` is always added).
    progress : bool or None
        Show a progress bar (the training steps of each seed); ``None``: on at the paper's size, off at the book's size and under
        CI (``seqrmt.ensemble.progress_enabled``).

    Returns
    -------
    KeySpectraRuns

    Examples
    --------
    >>> from seqrmt.data import CharDataset, CharTokenizer, train_val_split
    >>> text = "to be or not to be, that is the question. " * 40
    >>> tok = CharTokenizer(text)
    >>> ds = CharDataset(*train_val_split(tok.encode(text)), tok)
    >>> runs = train_key_spectra(ds, seeds=(0,), max_iters=4, steps=(0, 2))
    >>> runs.keys.shape, runs.steps.tolist()
    ((1, 3, 4, 4, 16, 64), [0, 2, 4])
    """
    from ..data import CharDataset  # noqa: PLC0415

    if not isinstance(dataset, CharDataset):
        raise ValueError(f"dataset must be a CharDataset, got {type(dataset).__name__}")
    seeds = [_check_nonneg_int(s, "seeds") for s in np.atleast_1d(seeds).tolist()]
    if not seeds:
        raise ValueError("seeds must hold at least one seed")
    max_iters = check_size(max_iters, "max_iters")
    steps = sorted({_check_nonneg_int(s, "steps") for s in steps} | {max_iters})
    if steps[-1] > max_iters:
        raise ValueError(f"steps must not exceed max_iters={max_iters}")
    cfg = GPTConfig.aarts(vocab_size=dataset.vocab_size)
    keys, losses, state, tcfg = [], [], {}, None
    for seed in seeds:  # one bar per seed (train_gpt's)
        model = build_gpt(cfg, seed=seed, device="cpu")
        tcfg = aarts_train_config(max_iters, seed, steps)
        loss = {}
        res = train_gpt(model, dataset.train, None, tcfg,
                        on_snapshot=lambda it, m: loss.__setitem__(
                            it, validation_loss(m, dataset.val, batch_size=512)), progress=progress)
        keys.append(np.stack([res.snapshots["key"][t] for t in steps]).astype(np.float32))
        losses.append([loss[t] for t in steps])
        if not state:
            state = {k: v.detach().cpu().numpy().copy() for k, v in model.state_dict().items()}
    config = {"model": {k: getattr(cfg, k) for k in cfg.__dataclass_fields__},
              "train": {k: getattr(tcfg, k) for k in ("batch_size", "lr", "schedule", "betas", "weight_decay",
                                                      "grad_clip", "max_iters")}}
    config["train"]["betas"] = list(config["train"]["betas"])
    return KeySpectraRuns(seeds=np.array(seeds), steps=np.array(steps), keys=np.stack(keys),
                          val_loss=np.array(losses), config=config, state=state)


def load_key_spectra(path=None, sha256=KEY_SPECTRA_SHA256):
    """Read runs saved by :meth:`KeySpectraRuns.save`, checking the file's SHA-256.

    Parameters
    ----------
    path : str or pathlib.Path, optional
        Default :data:`KEY_SPECTRA_FILE` (the committed runs).
    sha256 : str or None
        Expected hex digest (default: the committed file's); ``None`` skips the check.

    Returns
    -------
    KeySpectraRuns

    Raises
    ------
    ValueError
        If the file's hash differs from ``sha256``.
    FileNotFoundError
        If the file does not exist.
    """
    p = KEY_SPECTRA_FILE if path is None else pathlib.Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no key-spectra file at {p}")
    if sha256 is not None and not sha256:
        raise ValueError("sha256 must be a hex string or None, got ''")
    arr = read_npz_checked(p, sha256, "regenerate it with python -m seqrmt.nanogpt key-spectra, "
                                      "see seqrmt.nanogpt.key_spectra")
    state = {k.removeprefix("state/"): v for k, v in arr.items() if k.startswith("state/")}
    return KeySpectraRuns(seeds=arr["seeds"], steps=arr["steps"], keys=arr["keys"], val_loss=arr["val_loss"],
                          config=json.loads(arr["config"].tobytes().decode()),
                          state=state)


@dataclass
class KeyRandomWalk:
    r"""Result of :func:`key_random_walk`: the motion of the key entries between snapshots.

    Attributes
    ----------
    start, stop : numpy.ndarray
        ``(P,)`` steps at the two ends of each interval.
    rms : numpy.ndarray
        ``(R, P)`` root mean square change of a key entry over each interval, per run.
    lr : float
        The learning rate of the runs.
    n_embd : int
        Row length :math:`M` of a key matrix (the :math:`M` of :math:`s^2=M\operatorname{Var}K_{ij}`).
    """

    start: np.ndarray
    stop: np.ndarray
    rms: np.ndarray
    lr: float
    n_embd: int

    @property
    def n_steps(self):
        """``(P,)`` interval lengths :math:`\\Delta n`."""
        return self.stop - self.start

    @property
    def diffusive(self):
        """``(R, P)`` :math:`\\mathrm{rms}/(\\alpha\\sqrt{\\Delta n})`: of order one for a random walk of step :math:`\\approx\\alpha`."""
        return self.rms / (self.lr * np.sqrt(self.n_steps))

    @property
    def ballistic(self):
        """``(R, P)`` :math:`\\mathrm{rms}/(\\alpha\\,\\Delta n)`: of order one for steady motion in one direction."""
        return self.rms / (self.lr * self.n_steps)

    @property
    def predicted_growth(self):
        """``(R, P)`` growth :math:`M\\,\\mathrm{rms}^2` of the bulk scale :math:`s^2` if the increments are
        independent of the matrix they are added to."""
        return self.n_embd * self.rms**2


def key_random_walk(runs, min_step=1000):
    r"""Test the random-walk picture of training on the key entries of cached runs.

    Between consecutive snapshots :math:`n_1<n_2` (both at least ``min_step``) the change
    :math:`\Delta K=K(n_2)-K(n_1)` of every key entry is measured by its root mean square. A random
    walk of :math:`\Delta n=n_2-n_1` independent steps of size about :math:`\alpha` (AdamW's
    normalised step) gives :math:`\mathrm{rms}\approx\alpha\sqrt{\Delta n}`; steady motion in one
    direction gives :math:`\alpha\,\Delta n`. If the increments are independent of :math:`K`, the
    scale :math:`s^2=M\operatorname{Var}K_{ij}` grows by :math:`M\,\mathrm{rms}^2` over the interval
    ("the Marchenko-Pastur bulk broadens by Brownian motion").

    Parameters
    ----------
    runs : KeySpectraRuns
    min_step : int
        The first snapshot used (the early, fast phase of training is excluded by default).

    Returns
    -------
    KeyRandomWalk

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> keys = np.cumsum(1e-3 * rng.choice([-1.0, 1.0], size=(1, 401, 1, 1, 16, 64)), axis=1)
    >>> runs = KeySpectraRuns(seeds=np.array([0]), steps=np.arange(401), keys=keys[:, ::100],
    ...                       val_loss=np.zeros((1, 5)), config={"train": {"lr": 1e-3}, "model": {}})
    >>> runs.steps = np.arange(0, 401, 100)
    >>> walk = key_random_walk(runs, min_step=100)
    >>> walk.start.tolist(), np.round(walk.diffusive, 1).tolist()
    ([100, 200, 300], [[1.0, 1.0, 1.0]])
    """
    if not isinstance(runs, KeySpectraRuns):
        raise ValueError(f"runs must be a KeySpectraRuns, got {type(runs).__name__}")
    min_step = _check_nonneg_int(min_step, "min_step")
    use = np.flatnonzero(np.asarray(runs.steps) >= min_step)
    if use.size < 2:
        raise ValueError(f"min_step={min_step} leaves fewer than two snapshots")
    lr = float(runs.config.get("train", {}).get("lr", 0.0))
    if not lr > 0:
        raise ValueError("runs.config['train']['lr'] must be a positive learning rate")
    k = np.asarray(runs.keys, dtype=np.float64)[:, use]
    diff = np.diff(k, axis=1).reshape(k.shape[0], use.size - 1, -1)
    steps = np.asarray(runs.steps)[use]
    return KeyRandomWalk(start=steps[:-1], stop=steps[1:], rms=np.sqrt(np.mean(diff**2, axis=-1)), lr=lr,
                         n_embd=int(k.shape[-1]))
