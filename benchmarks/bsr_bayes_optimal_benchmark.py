"""Time the Bayes-optimal error curves of Chapter 2 (target: a 40-point curve in under 10 s).

Runs, for several (beta, rho, Delta), a 40-point curve of alpha in [0.01, 1.5] twice: once with the
vectorised :func:`seqrmt.bsr.bayes_optimal_curve` and once as 40 separate calls of
:func:`seqrmt.bsr.bayes_optimal` (each with a cold cache), and prints the wall times.

Usage::

    python benchmarks/bsr_bayes_optimal_benchmark.py
"""

import time

import numpy as np

from seqrmt.bsr import bayes_optimal, bayes_optimal_curve, theory

SETTINGS = [(1.0, 0.2, 0.0), (5.0, 0.1, 0.0), (1.0, 0.5, 0.1), (np.inf, 0.05, 0.0), (2.0, 2.0, 0.1)]
TARGET_S = 10.0


def _clear_caches():
    for name in dir(theory):
        fn = getattr(theory, name)
        if hasattr(fn, "cache_clear"):
            fn.cache_clear()


def main():
    alphas = np.linspace(0.01, 1.5, 40)
    worst = 0.0
    for beta, rho, delta in SETTINGS:
        _clear_caches()
        t0 = time.perf_counter()
        curve = bayes_optimal_curve(alphas, beta, rho, delta)
        t_curve = time.perf_counter() - t0
        _clear_caches()
        t0 = time.perf_counter()
        single = np.array([bayes_optimal(a, beta, rho, delta).mmse for a in alphas])
        t_single = time.perf_counter() - t0
        gap = np.max(np.abs(single - curve.mmse))
        worst = max(worst, t_curve, t_single)
        print(f"beta={beta:<4} rho={rho:<4} delta={delta:<3}: curve {t_curve:6.2f} s, "
              f"40 single calls {t_single:6.2f} s, max |difference| {gap:.1e}")
    verdict = "OK" if worst < TARGET_S else "TOO SLOW"
    print(f"slowest 40-point curve: {worst:.2f} s (target {TARGET_S:.0f} s): {verdict}")


if __name__ == "__main__":
    main()
