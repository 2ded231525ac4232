r"""Command line: ``python -m seqrmt.nanogpt --help``.

Trains a GPT on the Shakespeare corpus (:func:`seqrmt.data.shakespeare_dataset`) and writes the
timings and the final validation loss as JSON.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time

import torch

from .._validation import check_positive_int
from .config import GPTConfig
from .model import build_gpt
from .train import TrainConfig, train_gpt, validation_loss

__all__ = ["main"]


def _parser():
    p = argparse.ArgumentParser(prog="python -m seqrmt.nanogpt",
                                description="Train a small character-level GPT on the Shakespeare corpus.")
    p.add_argument("--style", choices=("nanogpt", "aarts"), default="nanogpt",
                   help="nanoGPT layout (default) or the per-head model of Aarts et al.")
    p.add_argument("--n-layer", type=int, default=4)
    p.add_argument("--n-head", type=int, default=4)
    p.add_argument("--n-embd", type=int, default=64)
    p.add_argument("--block-size", type=int, default=128)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--bias", action="store_true", help="biases in LayerNorm/Linear (nanogpt style)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--max-iters", type=int, default=1000)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--min-lr", type=float, default=1e-4)
    p.add_argument("--warmup-iters", type=int, default=100)
    p.add_argument("--lr-decay-iters", type=int, default=None)
    p.add_argument("--schedule", choices=("cosine", "constant"), default="cosine")
    p.add_argument("--constant-lr", action="store_true", help="same as --schedule constant")
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--beta1", type=float, default=0.9)
    p.add_argument("--beta2", type=float, default=0.99)
    p.add_argument("--grad-clip", type=float, default=1.0)
    p.add_argument("--eval-interval", type=int, default=0, help="0: no periodic evaluation")
    p.add_argument("--eval-iters", type=int, default=20)
    p.add_argument("--log-interval", type=int, default=100)
    p.add_argument("--device", default=None, help="cpu, cuda, ... (default: cuda when available)")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data", default=None, help="path of the corpus text (default: seqrmt.data.shakespeare())")
    p.add_argument("--no-verify", action="store_true", help="do not check the corpus hash")
    p.add_argument("--json", default=None, help="write the results to this file")
    p.add_argument("--quiet", action="store_true")
    return p


def _key_spectra_main(argv):
    """``python -m seqrmt.nanogpt key-spectra``: regenerate the cached runs of Chapter 4."""
    from ..data import shakespeare_dataset  # noqa: PLC0415
    from .key_spectra import DEFAULT_STEPS, KEY_SPECTRA_FILE, train_key_spectra  # noqa: PLC0415

    p = argparse.ArgumentParser(prog="python -m seqrmt.nanogpt key-spectra",
                                description="Train the nano-GPT of Aarts et al. per seed and save its key "
                                            "matrices during training (seqrmt.nanogpt.key_spectra).")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--max-iters", type=int, default=5000)
    p.add_argument("--steps", type=int, nargs="+", default=list(DEFAULT_STEPS))
    p.add_argument("--out", default=str(KEY_SPECTRA_FILE))
    p.add_argument("--data", default=None, help="path of the corpus text (default: seqrmt.data.shakespeare())")
    p.add_argument("--no-verify", action="store_true", help="do not check the corpus hash")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    ds = shakespeare_dataset(path=args.data, verify=not args.no_verify)
    runs = train_key_spectra(ds, seeds=args.seeds, max_iters=args.max_iters,
                             steps=[s for s in args.steps if s <= args.max_iters])
    digest = runs.save(args.out)
    out = {"out": args.out, "sha256": digest, "final_val_loss": runs.val_loss[:, -1].tolist()}
    print(json.dumps(out, indent=2), flush=True)
    return out


def main(argv=None):
    """Command-line entry point; returns the results dictionary (also written with ``--json``).

    ``python -m seqrmt.nanogpt key-spectra [--seeds ...] [--max-iters ...] [--out ...]`` instead
    regenerates the cached training runs of :mod:`seqrmt.nanogpt.key_spectra` and prints their
    SHA-256.

    The dictionary holds ``n_params``, ``ms_per_iter`` (median over steady steps, evaluation
    excluded), ``tokens_per_s``, ``final_val_loss`` (whole validation split), ``wall_s`` and the
    settings.
    """
    from ..data import shakespeare_dataset  # noqa: PLC0415

    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["key-spectra"]:
        return _key_spectra_main(argv[1:])
    args = _parser().parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(check_positive_int(args.threads, "threads"))
    ds = shakespeare_dataset(path=args.data, verify=not args.no_verify)
    arch = dict(vocab_size=ds.vocab_size, n_layer=args.n_layer, n_head=args.n_head, n_embd=args.n_embd,
                block_size=args.block_size, dropout=args.dropout)
    cfg = GPTConfig.aarts(**arch) if args.style == "aarts" else GPTConfig(bias=args.bias, **arch)
    tcfg = TrainConfig(batch_size=args.batch_size, max_iters=args.max_iters, lr=args.lr, min_lr=args.min_lr,
                       warmup_iters=args.warmup_iters, lr_decay_iters=args.lr_decay_iters,
                       schedule="constant" if args.constant_lr else args.schedule,
                       weight_decay=args.weight_decay, betas=(args.beta1, args.beta2), grad_clip=args.grad_clip,
                       eval_interval=args.eval_interval, eval_iters=args.eval_iters,
                       log_interval=args.log_interval, seed=args.seed, device=args.device,
                       verbose=not args.quiet)
    model = build_gpt(cfg, seed=args.seed, device=args.device)
    t0 = time.perf_counter()
    res = train_gpt(model, ds.train, ds.val, tcfg)
    wall = time.perf_counter() - t0
    val = validation_loss(model, ds.val, batch_size=max(64, args.batch_size))
    out = {
        "n_params": model.num_parameters(),
        "ms_per_iter": res.median_ms() if args.max_iters else None,
        "tokens_per_s": res.tokens_per_second() if args.max_iters else None,
        "final_val_loss": val,
        "final_train_loss": res.log[-1][1] if res.log else None,
        "wall_s": wall,
        "device": str(next(model.parameters()).device),
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "model": dataclasses.asdict(cfg),
        "train": {k: v for k, v in dataclasses.asdict(tcfg).items() if k not in ("device",)},
    }
    if not args.quiet and args.max_iters:
        print(f"params {out['n_params']}, {out['ms_per_iter']:.1f} ms/iter, {out['tokens_per_s']:.0f} tokens/s, "
              f"val loss {val:.4f}", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=2, default=str)
    return out


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
