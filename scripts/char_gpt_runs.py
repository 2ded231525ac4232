"""Regenerate the cached training runs of Chapter 4.5, ``lib/seqrmt/models/char_gpt_runs.npz``.

    python scripts/char_gpt_runs.py [--out PATH] [--steps 5000] [--seeds 0 1 2]

Trains :class:`seqrmt.models.char_gpt.CharGPT` once per seed with the loop that notebook 4.5
shows (AdamW, learning rate 1e-3 constant, betas (0.9, 0.999), weight decay 0.01 on matrices
only, batches of 16 windows of 32 characters, no clipping, no dropout; the seed fixes the
initialisation and the batches), and saves, at the snapshot steps, the 16 key matrices and the
loss on the whole validation split, plus the final weights of the first seed. The ``.npz`` is
written with fixed zip timestamps, so the same runs give the same bytes: with the defaults and
one thread, on the machine class that made the committed file, the SHA-256 printed at the end
equals the one notebook 4.5 checks. Another CPU or PyTorch build may round
differently and then gives a statistically equivalent file with another hash. About ten
minutes of one core.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import torch

from seqrmt.runtime import write_npz_deterministic
from seqrmt.data import shakespeare
from seqrmt.models.char_gpt import CharGPT, validation_loss

SNAPSHOTS = (0, 10, 30, 100, 300, 1000, 2000, 3000, 5000)
# the model in the run record: CharGPT's sizes (its defaults, the talk's model)
MODEL_RECORD = {"class": "seqrmt.models.char_gpt.CharGPT", "block_size": 32, "n_embd": 64, "n_head": 4,
                "n_layer": 4}


def train(seed, steps, snapshots, train_tokens, val_tokens, vocab_size):
    """One run: key matrices and validation loss at ``snapshots``, and the final model."""
    torch.manual_seed(seed)
    model = CharGPT(vocab_size)
    matrices = [p for p in model.parameters() if p.dim() >= 2]  # weight decay on these only
    others = [p for p in model.parameters() if p.dim() < 2]  # biases and LayerNorm gains
    opt = torch.optim.AdamW([{"params": matrices, "weight_decay": 0.01},
                             {"params": others, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.999), fused=True)
    batches = torch.Generator().manual_seed(seed)
    keys, losses = [], []
    for step in range(steps + 1):
        if step in snapshots:
            keys.append(model.key_matrices().numpy().copy())
            losses.append(validation_loss(model, val_tokens))
        if step == steps:
            return np.stack(keys), losses, model
        start = torch.randint(len(train_tokens) - 32, (16,), generator=batches)
        chunk = train_tokens[start[:, None] + torch.arange(33)]  # (16, 33) windows
        _, loss = model(chunk[:, :-1], chunk[:, 1:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default="lib/seqrmt/models/char_gpt_runs.npz")
    p.add_argument("--steps", type=int, default=5000)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    text = shakespeare()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}  # character -> token id
    tokens = torch.tensor([stoi[c] for c in text])
    n = int(0.9 * len(tokens))  # first 90 % for training
    train_tokens, val_tokens = tokens[:n], tokens[n:]
    snapshots = sorted({s for s in SNAPSHOTS if s < args.steps} | {args.steps})
    keys, losses, state = [], [], {}
    for seed in args.seeds:
        k, loss, model = train(seed, args.steps, snapshots, train_tokens, val_tokens, len(chars))
        keys.append(k)
        losses.append(loss)
        state = state or {name: v.numpy().copy() for name, v in model.state_dict().items()}
        print(f"seed {seed}: validation loss {loss[-1]:.4f} after {args.steps} steps", flush=True)
    record = {"model": dict(MODEL_RECORD, vocab_size=len(chars)),
              "train": {"batch_size": 16, "betas": [0.9, 0.999], "grad_clip": 0.0, "lr": 0.001,
                        "max_iters": args.steps, "schedule": "constant", "weight_decay": 0.01}}
    arrays = {"seeds": np.array(args.seeds), "steps": np.array(snapshots), "keys": np.stack(keys),
              "val_loss": np.array(losses),
              "config": np.frombuffer(json.dumps(record, sort_keys=True).encode(), np.uint8)}
    arrays.update({f"state/{name}": v for name, v in state.items()})
    sha = write_npz_deterministic(args.out, arrays, sort=False)  # entries in this order
    print(f"wrote {args.out}, sha256 {sha}")


if __name__ == "__main__":
    main()
