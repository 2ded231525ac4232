"""Speed and quality benchmark of seqrmt's nano-GPT against the karpathy/nanoGPT reference.

Runs ``python -m seqrmt.nanogpt`` (one subprocess per run, so each gets a fresh process and the
requested thread count) with the settings of the karpathy/nanoGPT reference run below:

    4 layers x 4 heads x 64 embedding, block 128, batch 32, no bias, tied embeddings, dropout 0,
    AdamW betas (0.9, 0.99), weight decay 0.1, grad clip 1.0, lr 1e-3 with 100 warm-up steps and
    cosine decay to 1e-4 over 1000 steps, float32, CPU, 2 threads, no torch.compile.

Speed against karpathy/nanoGPT is measured by the paired mode (``--reference DIR``, a nanoGPT
checkout; its ``model.py`` is imported, nothing of it is copied here): in one process, chunks of
steps of nanoGPT's model trained by nanoGPT's ``train.py`` loop alternate with chunks of
``seqrmt.nanogpt.train_gpt``, so machine noise hits both alike; it reports the per-round ratio of
median step times with a bootstrap interval, checks with ``torch.profiler`` that the forward and
backward passes call the same ATen operators, and times the parts outside the model (batch,
gradient clipping, AdamW) in isolation. Pass (not slower): the interval's lower end <= 1.
Separate runs one after the other are no substitute: on a shared 2-core machine the same run
varies by +-20 % within minutes.

Reference losses (karpathy/nanoGPT, unmodified): validation loss on the whole val split after
1000 steps 2.21 +- 0.03 (3 seeds); with a constant lr 1e-3: 2.08. ``--full`` checks
|val loss - reference| <= 0.03. The quick mode prints our absolute speed (nanoGPT took about
69 ms/iter on the machine of the original comparison).

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
import time

REF_MS_PER_ITER = 69.0  # karpathy/nanoGPT on the machine of the original comparison (information only)
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


def _reference_batch(data, batch_size, block_size, gen):
    """A batch as karpathy/nanoGPT's ``get_batch`` makes it on CPU (without re-opening the memmap)."""
    import numpy as np
    import torch

    ix = torch.randint(len(data) - block_size, (batch_size,), generator=gen)
    x = torch.stack([torch.from_numpy(data[i:i + block_size].astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy(data[i + 1:i + 1 + block_size].astype(np.int64)) for i in ix])
    return x, y


def _reference_steps(model, optimizer, data, n, batch_size, block_size, grad_clip, gen):
    """``n`` steps of karpathy/nanoGPT's ``train.py`` inner loop on CPU; wall ms of each.

    As in ``train.py`` (float32 on CPU, so no autocast and a disabled GradScaler): a batch
    (:func:`_reference_batch`), ``model(X, Y)``, backward, ``clip_grad_norm_``,
    ``optimizer.step()``, ``zero_grad(set_to_none=True)``, ``loss.item()``.
    """
    import torch

    ms = []
    for _ in range(n):
        t0 = time.perf_counter()
        x, y = _reference_batch(data, batch_size, block_size, gen)
        _, loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        loss.item()
        ms.append(1000.0 * (time.perf_counter() - t0))
    return ms


def _aten_ops(model, forward, x, y):
    """ATen operator counts of one forward and backward pass from zero gradients (torch.profiler)."""
    from torch.profiler import ProfilerActivity, profile

    model.zero_grad(set_to_none=True)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        forward(x, y)[1].backward()
    return {e.key: e.count for e in prof.key_averages() if e.key.startswith("aten::")}


def _median_ms(fn, n=300):
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return 1000.0 * statistics.median(ts)


def _components(ref, ref_opt, ours, ours_opt, train16, train, B, T, seed):
    """Same-kernel check and the step's parts outside the model, timed in isolation (ms)."""
    import torch
    from seqrmt.nanogpt import sample_batch

    gen = torch.Generator().manual_seed(seed)
    x, y = _reference_batch(train16, B, T, gen)
    ops_ref, ops_ours = _aten_ops(ref, ref, x, y), _aten_ops(ours, ours._forward, x, y)
    diff = {k: (ops_ref.get(k, 0), ops_ours.get(k, 0)) for k in sorted(set(ops_ref) | set(ops_ours))
            if ops_ref.get(k, 0) != ops_ours.get(k, 0)}
    p_ref, p_ours = list(ref.parameters()), list(ours.parameters())
    parts = {"batch": (_median_ms(lambda: _reference_batch(train16, B, T, gen)),
                       _median_ms(lambda: sample_batch(train, B, T, gen))),
             "clip": (_median_ms(lambda: torch.nn.utils.clip_grad_norm_(p_ref, 1.0)),
                      _median_ms(lambda: torch.nn.utils.clip_grad_norm_(p_ours, 1.0, foreach=True))),
             "adamw": (_median_ms(ref_opt.step), _median_ms(ours_opt.step))}
    print(f"\nforward + backward: {sum(ops_ref.values())} ATen calls (nanoGPT), {sum(ops_ours.values())} "
          f"(seqrmt.nanogpt); operators whose counts differ: {diff or 'none'}")
    for name, (a, b) in parts.items():
        print(f"{name:6s}: nanoGPT {a:6.3f} ms, seqrmt.nanogpt {b:6.3f} ms")
    saved = sum(a - b for a, b in parts.values())
    print(f"outside the model seqrmt.nanogpt saves {saved:.2f} ms per step")
    return {"aten_calls": [sum(ops_ref.values()), sum(ops_ours.values())], "aten_count_differences": diff,
            "parts_ms": parts, "saved_ms": saved}


def paired(reference, rounds, chunk, threads, seed=0):
    """Alternate chunks of training steps of nanoGPT's model and of ``seqrmt.nanogpt`` in one process.

    Both models (nanoGPT's ``model.py`` imported from the checkout ``reference``, and
    :class:`seqrmt.nanogpt.GPT`) have the benchmark architecture and train on the Shakespeare
    training split. Each round runs ``chunk`` steps of one, then ``chunk`` of the other (the
    order alternating between rounds); the first two steps of each chunk are dropped. Machine
    noise (other processes, frequency changes) then hits both alike, and the per-round ratio of
    median step times is a paired comparison.
    """
    import numpy as np
    import torch
    from seqrmt.data import shakespeare_dataset
    from seqrmt.nanogpt import GPTConfig, TrainConfig, build_gpt, train_gpt
    from seqrmt.nanogpt.train import _make_optimizer

    torch.set_num_threads(threads)
    sys.path.insert(0, os.path.abspath(reference))
    import model as ref_model  # nanoGPT's model.py

    ds = shakespeare_dataset()
    train16 = np.asarray(ds.train, dtype=np.uint16)
    V, T, B = ds.vocab_size, 128, 32
    torch.manual_seed(seed)
    ref = ref_model.GPT(ref_model.GPTConfig(block_size=T, vocab_size=V, n_layer=4, n_head=4, n_embd=64,
                                            dropout=0.0, bias=False))
    ref_opt = ref.configure_optimizers(0.1, 1e-3, (0.9, 0.99), "cpu")
    ours = build_gpt(GPTConfig(vocab_size=V, block_size=T), seed=seed, device="cpu")
    cfg = TrainConfig(batch_size=B, max_iters=chunk, lr=1e-3, min_lr=1e-4, warmup_iters=0,
                      weight_decay=0.1, betas=(0.9, 0.99), grad_clip=1.0, verbose=False, log_interval=0)
    gen = torch.Generator().manual_seed(seed)
    ref.train()
    rows = []
    for r in range(rounds):
        out = {}
        for who in (("ref", "ours") if r % 2 == 0 else ("ours", "ref")):
            if who == "ref":
                out[who] = _reference_steps(ref, ref_opt, train16, chunk, B, T, 1.0, gen)[2:]
            else:
                cfg.seed = seed + r
                out[who] = list(train_gpt(ours, ds.train, config=cfg).iter_ms[2:])
        rows.append((float(np.median(out["ref"])), float(np.median(out["ours"]))))
        print(f"round {r:2d}: nanoGPT {rows[-1][0]:6.1f} ms/step, seqrmt.nanogpt {rows[-1][1]:6.1f} ms/step, "
              f"ratio {rows[-1][1] / rows[-1][0]:.3f}", flush=True)
    rows = np.array(rows)
    ratio = rows[:, 1] / rows[:, 0]
    boot = np.random.default_rng(0).choice(ratio, (10_000, ratio.size))
    lo, hi = np.quantile(np.median(boot, axis=1), [0.025, 0.975])
    summary = {"rounds": rounds, "chunk": chunk, "threads": threads, "ref_ms": float(np.median(rows[:, 0])),
               "ours_ms": float(np.median(rows[:, 1])), "ratio_median": float(np.median(ratio)),
               "ratio_ci95": [float(lo), float(hi)], "rounds_ours_faster": int((ratio < 1).sum()),
               "speed_ok": bool(lo <= 1.0), "per_round_ms": rows.tolist()}
    summary["components"] = _components(ref, ref_opt, ours, _make_optimizer(ours, cfg, "cpu"), train16,
                                        torch.as_tensor(ds.train, dtype=torch.long), B, T, seed)
    print(f"\nmedian step: nanoGPT {summary['ref_ms']:.1f} ms, seqrmt.nanogpt {summary['ours_ms']:.1f} ms; "
          f"ratio (seqrmt / nanoGPT) median {summary['ratio_median']:.3f}, 95 % bootstrap CI "
          f"[{lo:.3f}, {hi:.3f}]; seqrmt faster in {summary['rounds_ours_faster']} of {rounds} rounds: "
          f"{'not slower than nanoGPT' if summary['speed_ok'] else 'SLOWER than nanoGPT'}")
    return summary


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--full", action="store_true", help="1000 steps with loss checks (several minutes per run)")
    p.add_argument("--iters", type=int, default=None, help="steps per run (default 100 quick, 1000 full)")
    p.add_argument("--seeds", type=int, nargs="+", default=None, help="seeds (default 0 quick, 0 1 2 full)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--no-constant-lr", action="store_true", help="skip the constant-lr run in --full mode")
    p.add_argument("--out", default=None, help="write all results as JSON")
    p.add_argument("--verbose", action="store_true", help="show the training progress lines")
    p.add_argument("--reference", default=None, metavar="DIR",
                   help="a karpathy/nanoGPT checkout: paired in-process speed comparison with its model.py")
    p.add_argument("--rounds", type=int, default=20, help="paired mode: rounds of alternating chunks")
    p.add_argument("--chunk", type=int, default=12, help="paired mode: steps per chunk")
    args = p.parse_args(argv)
    if args.reference:
        summary = paired(args.reference, args.rounds, args.chunk, args.threads)
        if args.out:
            with open(args.out, "w") as fh:
                json.dump(summary, fh, indent=2)
        return summary
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
               "runs": runs}
    print(f"\nspeed: {ms:.1f} ms/iter, {tps:,.0f} tokens/s (karpathy/nanoGPT measured {REF_MS_PER_ITER:.0f} "
          f"ms/iter on the machine of the original comparison; compare on this machine with --reference)")
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
