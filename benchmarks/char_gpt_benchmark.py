"""Paired speed and quality benchmark: seqrmt.models.char_gpt against karpathy/nanoGPT's model.py.

    python benchmarks/char_gpt_benchmark.py --reference PATH [--rounds 84] [--chunk 12] [--threads 2]

``PATH`` is a karpathy/nanoGPT checkout (or its ``model.py``); nothing of it is copied into this
repository. Three models of 4 layers x 4 heads x width 64 with a context of 128 characters are
trained by this script's own loop, the same for all: batches of 32 windows of the Shakespeare
training split (the same batches, in the same order, for each), AdamW (learning rate 1e-3
constant, betas (0.9, 0.99), weight decay 0.1 on matrices, PyTorch's fused CPU kernel), gradient
clipping at 1.0, float32, no ``torch.compile``:

* ``char_gpt``: ours, the GPT of Chapter 4.5 (ReLU, untied output layer with a bias, no
  query/key/value bias, PyTorch's default initialisation);
* ``nanoGPT``: nanoGPT's ``GPT`` as it is (``bias=True``: GELU, tied embeddings, a bias on the
  query/key/value map, its N(0, 0.02) initialisation);
* ``nanoGPT-matched``: nanoGPT's ``GPT`` changed after construction to our architecture (ReLU,
  an untied output layer with a bias, no query/key/value bias, PyTorch's default initialisation):
  the same network as ours, same parameter count, written by nanoGPT. Against it the speed
  ratio compares implementations, and the two loss curves must agree within their seed spread.

Pairing: each round trains ``chunk`` steps of each model, the order rotating between rounds, and
the first two steps of each chunk are dropped. Other processes and frequency changes then slow
all alike, and the per-round ratio of median step times is a paired measurement; the script
prints every round, the median ratio with a bootstrap interval, and the loss of every model on
the whole validation split (non-overlapping windows of 128) every ``--eval-every`` rounds
(outside the timed steps) and after ``rounds x chunk`` steps. Speed passes when the median
tokens/s ratio is at least 1.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pathlib
import time

import numpy as np
import torch
import torch.nn.functional as F

from seqrmt.data import shakespeare
from seqrmt.models.char_gpt import CharGPT

B, T = 32, 128  # batch of 32 windows of 128 characters: 4096 tokens per step


def nanogpt_module(path):
    """Import nanoGPT's ``model.py`` from a checkout (or the file itself)."""
    path = pathlib.Path(path)
    path = path / "model.py" if path.is_dir() else path
    spec = importlib.util.spec_from_file_location("nanogpt_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def matched(ng, V, seed):
    """nanoGPT's GPT changed to our architecture after construction (see the module docstring)."""
    torch.manual_seed(seed)
    model = ng.GPT(ng.GPTConfig(block_size=T, vocab_size=V, n_layer=4, n_head=4, n_embd=64, dropout=0.0,
                                bias=True))
    for block in model.transformer.h:
        block.mlp.gelu = torch.nn.ReLU()
        block.attn.c_attn.bias = None  # F.linear without a bias, as our c_attn
    model.transformer.wte = torch.nn.Embedding(V, 64)  # untied from lm_head
    model.lm_head = torch.nn.Linear(64, V)  # with a bias
    for m in model.modules():  # PyTorch's default initialisation (LayerNorms are ones and zeros)
        if isinstance(m, (torch.nn.Linear, torch.nn.Embedding)):
            m.reset_parameters()
    return model


def optimizer(model):
    """AdamW as above, built the same way for both models."""
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.dim() >= 2]  # weight decay on matrices and embeddings only
    rest = [p for p in params if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                             lr=1e-3, betas=(0.9, 0.99), fused=True)


def steps(model, opt, data, gen, n):
    """``n`` training steps; the wall milliseconds of each (batch, forward, backward, update)."""
    ms = []
    for _ in range(n):
        t0 = time.perf_counter()
        idx = torch.randint(len(data) - T, (B,), generator=gen)[:, None] + torch.arange(T)
        _, loss = model(data[idx], data[idx + 1])  # (B, T) windows and their next characters
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        loss.item()  # as a training loop that logs its loss would
        ms.append(1000.0 * (time.perf_counter() - t0))
    return ms


@torch.no_grad()
def val_loss(model, data):
    """Mean cross-entropy over non-overlapping windows of the whole validation split."""
    n = (len(data) - 1) // T
    x, y = data[: n * T].view(n, T), data[1: n * T + 1].view(n, T)
    model.eval()
    total = 0.0
    for s in range(0, n, 256):
        logits, _ = model(x[s:s + 256], y[s:s + 256])  # nanoGPT returns all logits given targets
        total += F.cross_entropy(logits.flatten(0, 1), y[s:s + 256].flatten(), reduction="sum").item()
    model.train()
    return total / (n * T)


def paired(reference, rounds, chunk, threads, seed=0, eval_every=21):
    torch.set_num_threads(threads)
    text = shakespeare()
    stoi = {c: i for i, c in enumerate(sorted(set(text)))}
    tokens = torch.tensor([stoi[c] for c in text])
    n = int(0.9 * len(tokens))
    train, val = tokens[:n], tokens[n:]
    V = len(stoi)
    ng = nanogpt_module(reference)
    torch.manual_seed(seed)
    ref = ng.GPT(ng.GPTConfig(block_size=T, vocab_size=V, n_layer=4, n_head=4, n_embd=64, dropout=0.0,
                              bias=True))
    torch.manual_seed(seed)
    ours = CharGPT(V, block_size=T)
    nets = {"char_gpt": ours, "nanoGPT": ref, "nanoGPT-matched": matched(ng, V, seed)}
    models = {name: (m, optimizer(m), torch.Generator().manual_seed(seed)) for name, m in nets.items()}
    names = list(models)
    print("parameters: " + ", ".join(f"{k} {sum(p.numel() for p in m.parameters()):,}" for k, m in nets.items())
          + f"; {threads} threads, load average {os.getloadavg()[0]:.1f}", flush=True)
    rows, curve = [], []
    for r in range(rounds):
        if r % eval_every == 0:  # the loss curves, outside the timed steps
            curve.append([r * chunk] + [val_loss(m, val) for m in nets.values()])
        med = {}
        for name in names[r % 3:] + names[:r % 3]:  # the order rotates between rounds
            model, opt, gen = models[name]
            med[name] = float(np.median(steps(model, opt, train, gen, chunk)[2:]))
        rows.append([med[n] for n in names])
        print(f"round {r:3d}: " + ", ".join(f"{n} {t:6.1f}" for n, t in zip(names, rows[-1]))
              + " ms/step", flush=True)
    rows = np.array(rows)
    curve.append([rounds * chunk] + [val_loss(m, val) for m in nets.values()])
    summary = {"rounds": rounds, "chunk": chunk, "threads": threads, "seed": seed, "steps_each": rounds * chunk,
               "models": names, "median_ms": dict(zip(names, np.median(rows, axis=0).tolist())),
               "val_loss_curve": curve, "load_average_end": os.getloadavg()[0], "per_round_ms": rows.tolist()}
    print()
    for k, ref_name in ((1, "nanoGPT"), (2, "nanoGPT-matched")):
        speedup = rows[:, k] / rows[:, 0]  # char_gpt tokens/s over the reference's, per round
        boot = np.random.default_rng(0).choice(speedup, (10_000, speedup.size))
        lo, hi = np.quantile(np.median(boot, axis=1), [0.025, 0.975])
        summary[f"speedup_vs_{ref_name}"] = {"median": float(np.median(speedup)), "ci95": [float(lo), float(hi)],
                                             "rounds_char_gpt_faster": int((speedup > 1).sum())}
        print(f"tokens/s char_gpt / {ref_name}: median {np.median(speedup):.3f}, 95 % bootstrap CI "
              f"[{lo:.3f}, {hi:.3f}], char_gpt faster in {int((speedup > 1).sum())} of {rounds} rounds")
    print("median ms/step: " + ", ".join(f"{n} {t:.1f}" for n, t in summary["median_ms"].items()))
    for step, *losses in curve:
        print(f"validation loss after {step:4d} steps: "
              + ", ".join(f"{n} {x:.4f}" for n, x in zip(names, losses)))
    return summary


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--reference", required=True, metavar="PATH", help="karpathy/nanoGPT checkout or model.py")
    p.add_argument("--rounds", type=int, default=84, help="rounds of alternating chunks (84 x 12 = 1008 steps)")
    p.add_argument("--chunk", type=int, default=12, help="steps per chunk")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval-every", type=int, default=21, help="rounds between validation losses")
    p.add_argument("--out", default=None, help="write the summary and every round as JSON")
    args = p.parse_args(argv)
    summary = paired(args.reference, args.rounds, args.chunk, args.threads, args.seed, args.eval_every)
    if args.out:
        pathlib.Path(args.out).write_text(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
