"""What the CPU offers for seqrmt.nanogpt's training step, each option timed against float32 eager.

    taskset -c 0 python benchmarks/nanogpt_cpu_options.py [--threads 1]

The benchmark model of ``nanogpt_benchmark.py`` (4 layers x 4 heads x 64, block 128, batch 32) trains
40 steps with each option; the median step time (first 5 steps dropped), the first step's time and
the loss after 40 steps are printed. Options: ``fp32`` (the default), ``compile``
(``torch.compile`` of the forward), ``bf16`` (``torch.autocast("cpu", torch.bfloat16)``),
``bf16mm`` (oneDNN bf16 matmul for float32 tensors). Then one layer's attention, forward and
backward, with the flash kernel, the math kernel and an explicit masked softmax.
Results of 2026-11-27 are in ``benchmarks/README.md``.
"""

import argparse
import statistics
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from seqrmt.data import shakespeare_dataset
from seqrmt.nanogpt import GPTConfig, TrainConfig, build_gpt, sample_batch
from seqrmt.nanogpt.train import _make_optimizer


def train_step_times(option, train, vocab, n=40, T=128, B=32):
    torch.backends.mkldnn.matmul.fp32_precision = "bf16" if option == "bf16mm" else "ieee"
    m = build_gpt(GPTConfig(vocab_size=vocab, block_size=T), seed=0, device="cpu")
    cfg = TrainConfig(batch_size=B, max_iters=n, lr=1e-3, weight_decay=0.1, betas=(0.9, 0.99),
                      grad_clip=1.0, verbose=False, log_interval=0)
    opt, params = _make_optimizer(m, cfg, "cpu"), list(m.parameters())
    forward = torch.compile(m._forward) if option == "compile" else m._forward
    gen, ts = torch.Generator().manual_seed(0), []
    for _ in range(n):
        t0 = time.perf_counter()
        x, y = sample_batch(train, B, T, gen)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=option == "bf16"):
            _, loss = forward(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0, foreach=True)
        opt.step()
        ts.append(time.perf_counter() - t0)
    torch.backends.mkldnn.matmul.fp32_precision = "ieee"
    print(f"{option:8s} median {1000 * statistics.median(ts[5:]):7.1f} ms, first step "
          f"{1000 * ts[0]:8.1f} ms, loss after {n} steps {loss.item():.4f}", flush=True)


def attention_times(B=32, H=4, T=128, D=16, n=30):
    q, k, v = (torch.randn(B, H, T, D, requires_grad=True) for _ in range(3))
    mask = torch.full((T, T), float("-inf")).triu(1)

    def flash():
        F.scaled_dot_product_attention(q, k, v, is_causal=True).sum().backward()

    def math():
        with sdpa_kernel(SDPBackend.MATH):
            F.scaled_dot_product_attention(q, k, v, is_causal=True).sum().backward()

    def explicit():
        att = (q @ k.transpose(-2, -1)) * D**-0.5 + mask
        (torch.softmax(att, -1) @ v).sum().backward()

    for f in (flash, math, explicit):
        ts = []
        for _ in range(n):
            t0 = time.perf_counter()
            f()
            ts.append(time.perf_counter() - t0)
        print(f"attention {f.__name__:8s} {1000 * statistics.median(ts[3:]):6.2f} ms (forward + backward)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    ds = shakespeare_dataset()
    train = torch.as_tensor(ds.train, dtype=torch.long)
    for option in ("fp32", "compile", "fp32", "bf16", "bf16mm"):
        train_step_times(option, train, ds.vocab_size)
    attention_times()


if __name__ == "__main__":
    main()
