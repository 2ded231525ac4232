"""Time the vectorised nuclear-norm NTP-SVM* (seqrmt.ntp.ntp_svm_nuclear) at m = 400, V = 104.

Supports from the Section 5.3 generator of the Part 3 specification (``block_supports`` below,
seed 0, 12 classes; checkpoint C-8) and from the TinyStories-like corpus (seqrmt.ntp.tinystories_like,
seed 0). Reports the wall time (including cvxpy compilation) and the C-8 values: ||L^mm||_*,
||S~||_*, cos(L^mm, S~) and the smallest margin. Requirement: under 10 s on two CPU cores.

    .venv/bin/python benchmarks/ntp_svm_benchmark.py [--repeats 3] [--no-dedup]
"""

import argparse
import time

import numpy as np

from seqrmt.ntp import centered_support, ntp_svm_nuclear, tinystories_like


def nuc(L):
    return float(np.linalg.svd(L, compute_uv=False).sum())


def margin(L, S):
    """Smallest in-support minus off-support logit over all contexts."""
    S = S.astype(bool)
    return float(np.min(np.where(S, L, np.inf).min(0) - np.where(~S, L, -np.inf).max(0)))


def block_supports(m, V, n_class, seed):
    """Section 5.3 of the specification: per context a class, 2-6 of its tokens, and with
    probability 0.3 one random token, drawn in this order from default_rng(seed)."""
    rng = np.random.default_rng(seed)
    classes = np.array_split(np.arange(V), n_class)
    S = np.zeros((V, m), dtype=np.int64)
    for j in range(m):
        cls = classes[rng.integers(n_class)]
        toks = list(rng.choice(cls, size=min(rng.integers(2, 7), len(cls)), replace=False))
        if rng.random() < 0.3:
            toks.append(rng.integers(V))
        S[np.unique(toks), j] = 1
    return S


def run(name, S, repeats, dedup):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        L = ntp_svm_nuclear(S, deduplicate=dedup)
        times.append(time.perf_counter() - t0)
    St = centered_support(S)
    cos = float(np.sum(L * St) / np.linalg.norm(L) / np.linalg.norm(St))
    print(f"{name}: V={S.shape[0]} m={S.shape[1]} distinct supports={len(np.unique(S.T, axis=0))}")
    print(f"  time: median {np.median(times):.2f} s, min {min(times):.2f} s over {repeats} run(s)")
    print(f"  ||L^mm||_* = {nuc(L):.2f}, ||S~||_* = {nuc(St):.2f}, cos(L^mm, S~) = {cos:.4f}, "
          f"min margin = {margin(L, S):.4f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-dedup", action="store_true", help="solve over all m columns")
    args = ap.parse_args()
    dedup = not args.no_dedup
    run("C-8 block_supports(400, 104, 12, seed 0)", block_supports(400, 104, 12, 0), args.repeats, dedup)
    print("  spec C-8: 360.96, 361.83, cosine 0.9936; about 8 s")
    run("tinystories_like(seed 0)", tinystories_like(0).data.S, args.repeats, dedup)


if __name__ == "__main__":
    main()
