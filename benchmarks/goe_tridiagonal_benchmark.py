"""Time seqrmt.dyson.goe_eigs: dense GOE against the Dumitriu-Edelman tridiagonal model, at one BLAS thread.

For each matrix size n it draws about ``--eigs`` eigenvalues in all (n_matrices = eigs // n, at most
``--entries`` // n**2 dense entries, at least ``--min-matrices``) with ``method="dense"`` and ``method="tridiagonal"`` and reports the best of
``--repeats`` wall times per matrix and their ratio (dense / tridiagonal, > 1: the tridiagonal model is
faster), then the smallest n from which the tridiagonal model wins at every larger n measured: the
crossover that ``_TRIDIAGONAL_MIN_N`` of ``seqrmt/dyson/_universality.py`` records (the switch
of ``method="auto"``). Also times the public
``scipy.linalg.eigvalsh_tridiagonal`` per matrix (same LAPACK routine plus its argument checks).

    OMP_NUM_THREADS=1 python benchmarks/goe_tridiagonal_benchmark.py [--repeats 5]

Run it on a quiet machine: it prints the load average before and after.
"""

import argparse
import os
import time

import numpy as np
from scipy.linalg import eigvalsh_tridiagonal
from threadpoolctl import threadpool_limits

from seqrmt.dyson import goe_eigs
from seqrmt.dyson._universality import _TRIDIAGONAL_MIN_N  # the switch of method="auto"

SIZES = (2, 3, 4, 5, 6, 8, 12, 16, 24, 32, 64, 128, 256, 500, 1000, 2000)


def best_time(f, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


def scipy_public(n, m, rng):
    a = np.sqrt(2.0) * rng.normal(size=(m, n))
    b = np.sqrt(rng.chisquare(np.arange(n - 1, 0, -1), size=(m, n - 1)))
    return [eigvalsh_tridiagonal(a[i], b[i], check_finite=False) for i in range(m)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--eigs", type=int, default=60_000, help="eigenvalues per timing (n_matrices = eigs // n)")
    ap.add_argument("--entries", type=int, default=4_000_000, help="cap on dense matrix entries per timing")
    ap.add_argument("--min-matrices", type=int, default=2)
    args = ap.parse_args()
    threadpool_limits(limits=1)
    rng = np.random.default_rng(0)
    print(f"load average before: {os.getloadavg()}")
    print(f"{'n':>5} {'matrices':>8} {'dense us':>11} {'tridiag us':>11} {'scipy us':>11} {'dense/tri':>9}")
    ratios = {}
    for n in SIZES:
        m = max(args.min_matrices, min(args.eigs // n, args.entries // n**2))
        td = best_time(lambda: goe_eigs(n, m, rng, method="dense"), args.repeats) / m
        tt = best_time(lambda: goe_eigs(n, m, rng, method="tridiagonal"), args.repeats) / m
        ts = best_time(lambda: scipy_public(n, m, rng), args.repeats) / m
        ratios[n] = td / tt
        print(f"{n:5d} {m:8d} {td * 1e6:11.2f} {tt * 1e6:11.2f} {ts * 1e6:11.2f} {td / tt:9.2f}", flush=True)
    wins = [n for n in SIZES if all(ratios[k] > 1 for k in SIZES if k >= n)]
    print(f"tridiagonal faster from n = {wins[0] if wins else None} on "
          f"(_TRIDIAGONAL_MIN_N = {_TRIDIAGONAL_MIN_N})")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
