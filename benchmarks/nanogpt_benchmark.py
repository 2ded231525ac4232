"""Speed and quality benchmark of seqrmt's nano-GPT against the karpathy/nanoGPT reference.

Runs ``python -m seqrmt.nanogpt`` (one subprocess per run, so each gets a fresh process and the
requested thread count) with the settings of the karpathy/nanoGPT reference run below:

    4 layers x 4 heads x 64 embedding, block 128, batch 32, no bias, tied embeddings, dropout 0,
    AdamW betas (0.9, 0.99), weight decay 0.1, grad clip 1.0, lr 1e-3 with 100 warm-up steps and
    cosine decay to 1e-4 over 1000 steps, float32, CPU, 2 threads, no torch.compile.

Reference (karpathy/nanoGPT, unmodified, same machine class): about 69 ms/iter (59,000 tokens/s);
validation loss on the whole val split after 1000 steps 2.21 +- 0.03 (3 seeds); with a constant
lr 1e-3: 2.08. Pass criteria: tokens/s at least the reference, |val loss - reference| <= 0.03.

Usage::

    python benchmarks/nanogpt_benchmark.py                 # quick: 100 steps, speed only
    python benchmarks/nanogpt_benchmark.py --full          # 1000 steps, seeds 0 1 2, + constant lr
    python benchmarks/nanogpt_benchmark.py --full --seeds 0 --out results.json

Timings are medians over steady steps (evaluation excluded); on a shared machine they are
inflated by other processes, so run it on a quiet one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

REF_MS_PER_ITER = 69.0
REF_TOKENS_PER_S = 59_000.0
REF_VAL_LOSS = 2.21
REF_VAL_LOSS_CONSTANT_LR = 2.08
LOSS_TOL = 0.03

BASE_ARGS = ["--n-layer", "4", "--n-head", "4", "--n-embd", "64", "--block-size", "128", "--batch-size", "32",
             "--lr", "1e-3", "--min-lr", "1e-4", "--warmup-iters", "100", "--weight-decay", "0.1",
             "--grad-clip", "1.0", "--dropout", "0.0", "--device", "cpu", "--beta1", "0.9", "--beta2", "0.99",
             "--log-interval", "100"]


def run_once(max_iters, seed, threads, constant_lr=False, quiet=True):
    """Run the CLI once in a subprocess; return its JSON results."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        cmd = [sys.executable, "-m", "seqrmt.nanogpt", *BASE_ARGS, "--max-iters", str(max_iters),
               "--seed", str(seed), "--threads", str(threads), "--json", out]
        if constant_lr:
            cmd.append("--constant-lr")
        if quiet:
            cmd.append("--quiet")
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
        subprocess.run(cmd, check=True, env=env)
        with open(out) as fh:
            return json.load(fh)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--full", action="store_true", help="1000 steps with loss checks (several minutes per run)")
    p.add_argument("--iters", type=int, default=None, help="steps per run (default 100 quick, 1000 full)")
    p.add_argument("--seeds", type=int, nargs="+", default=None, help="seeds (default 0 quick, 0 1 2 full)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--no-constant-lr", action="store_true", help="skip the constant-lr run in --full mode")
    p.add_argument("--out", default=None, help="write all results as JSON")
    p.add_argument("--verbose", action="store_true", help="show the training progress lines")
    args = p.parse_args(argv)
    iters = args.iters or (1000 if args.full else 100)
    seeds = args.seeds or ([0, 1, 2] if args.full else [0])

    runs = []
    for seed in seeds:
        res = run_once(iters, seed, args.threads, quiet=not args.verbose)
        runs.append(res)
        print(f"seed {seed}: {res['ms_per_iter']:.1f} ms/iter, {res['tokens_per_s']:,.0f} tokens/s, "
              f"val loss {res['final_val_loss']:.4f}, params {res['n_params']:,}", flush=True)
    ms = statistics.median(r["ms_per_iter"] for r in runs)
    tps = statistics.median(r["tokens_per_s"] for r in runs)
    summary = {"iters": iters, "threads": args.threads, "seeds": seeds, "ms_per_iter": ms, "tokens_per_s": tps,
               "reference_ms_per_iter": REF_MS_PER_ITER, "reference_tokens_per_s": REF_TOKENS_PER_S,
               "speed_ok": tps >= REF_TOKENS_PER_S, "runs": runs}
    print(f"\nspeed: {ms:.1f} ms/iter, {tps:,.0f} tokens/s (reference {REF_MS_PER_ITER:.0f} ms/iter, "
          f"{REF_TOKENS_PER_S:,.0f} tokens/s): {'OK' if summary['speed_ok'] else 'SLOWER'}")
    if iters == 1000:
        loss = statistics.mean(r["final_val_loss"] for r in runs)
        summary.update(val_loss=loss, reference_val_loss=REF_VAL_LOSS, loss_ok=abs(loss - REF_VAL_LOSS) <= LOSS_TOL)
        print(f"val loss (cosine): {loss:.3f} (reference {REF_VAL_LOSS} +- {LOSS_TOL}): "
              f"{'OK' if summary['loss_ok'] else 'MISMATCH'}")
        if not args.no_constant_lr:
            const = run_once(iters, seeds[0], args.threads, constant_lr=True, quiet=not args.verbose)
            summary.update(val_loss_constant_lr=const["final_val_loss"],
                           reference_val_loss_constant_lr=REF_VAL_LOSS_CONSTANT_LR,
                           loss_constant_ok=abs(const["final_val_loss"] - REF_VAL_LOSS_CONSTANT_LR) <= LOSS_TOL)
            print(f"val loss (constant lr, seed {seeds[0]}): {const['final_val_loss']:.3f} "
                  f"(reference {REF_VAL_LOSS_CONSTANT_LR}): {'OK' if summary['loss_constant_ok'] else 'MISMATCH'}")
    elif args.full or iters != 100:
        print("(loss comparison needs --iters 1000)")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(summary, fh, indent=2)
    return summary


if __name__ == "__main__":
    main()
