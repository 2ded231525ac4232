"""Time the nuclear-norm NTP-SVM* (seqrmt.ntp.ntp_svm_nuclear) at V = 104: ADMM against SCS.

Supports from the Section 5.3 generator of the Part 3 specification (``block_supports`` below,
seed 0, 12 classes, m = 400; checkpoint C-8), from the TinyStories-like corpus
(seqrmt.ntp.tinystories_like, seed 0) and the corpus of Chapter 3.4 (m = 240, seed 304: 182
distinct supports). For each solver: the CPU time on one BLAS thread (cvxpy's compilation
included), the relative error of ||L||_* against a reference (ADMM at tol 1e-11, itself checked
against Clarabel in tests/test_ntp_programs.py), the largest violation of the constraints, and the
C-8 values ||L^mm||_*, ||S~||_*, cos(L^mm, S~). Requirement: under 5 s on one core.

    .venv/bin/python benchmarks/ntp_svm_benchmark.py [--repeats 3] [--no-dedup]
"""

import argparse
import time

import numpy as np

from seqrmt.ntp import centered_support, ntp_svm_nuclear, tinystories_like
from seqrmt.runtime import notebook_rng, single_threaded_blas


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


def violation(L, S):
    """Largest violation of the constraints: unequal in-support logits, or a margin below one."""
    on = S.astype(bool)
    top = L.max(axis=0, where=on, initial=-np.inf)
    return float(max(np.abs(np.where(on, L - top, 0)).max(), 1 - margin(L, S)))


def run(name, S, repeats, dedup, solvers=("ADMM", "SCS")):
    St = centered_support(S)
    ref = nuc(ntp_svm_nuclear(S, solver="ADMM", tol=1e-11, max_iter=20000, deduplicate=dedup))
    print(f"{name}: V={S.shape[0]} m={S.shape[1]} distinct supports={len(np.unique(S.T, axis=0))}")
    for solver in solvers:
        times = []
        for _ in range(repeats):
            t0 = time.process_time()
            with single_threaded_blas():
                L = ntp_svm_nuclear(S, solver=solver, deduplicate=dedup)
            times.append(time.process_time() - t0)
        cos = float(np.sum(L * St) / np.linalg.norm(L) / np.linalg.norm(St))
        print(f"  {solver:4s}: CPU median {np.median(times):.2f} s, min {min(times):.2f} s over {repeats} run(s); "
              f"|L|_* rel. error {abs(nuc(L) - ref) / ref:.1e}, constraint violation {max(violation(L, S), 0):.1e}")
        print(f"        ||L^mm||_* = {nuc(L):.2f}, ||S~||_* = {nuc(St):.2f}, cos(L^mm, S~) = {cos:.4f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-dedup", action="store_true", help="solve over all m columns")
    args = ap.parse_args()
    dedup = not args.no_dedup
    run("C-8 block_supports(400, 104, 12, seed 0)", block_supports(400, 104, 12, 0), args.repeats, dedup)
    print("  spec C-8: 360.96, 361.83, cosine 0.9936")
    run("tinystories_like(seed 0)", tinystories_like(0).data.S, args.repeats, dedup)
    run("Chapter 3.4: tinystories_like(notebook_rng(304), m=240)",
        tinystories_like(notebook_rng(304), m=240).data.S, args.repeats, dedup)


if __name__ == "__main__":
    main()
