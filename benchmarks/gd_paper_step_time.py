"""Time of one gradient step of one student in 2.6's paper-size run (d = 100), on one core.

    taskset -c 0 python benchmarks/gd_paper_step_time.py

Runs ``bsr.gd_on_independent_data`` with the paper's d = 100, alpha = 0.3, rho = 0.2 for 200 and
400 steps (one data set, one student, no early stop) and prints the difference per step: the set-up
cost cancels. 2.6's paper preset trains 64 students for at most 50,000 steps, so the paper-size
cell costs at most 64 x 50,000 x (this time).
"""

import time

import numpy as np
import torch

from seqrmt import bsr

torch.set_num_threads(1)
d, alpha, rho = 100, 0.3, 0.2
times = {}
for steps in (200, 400):
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    bsr.gd_on_independent_data(1, int(alpha * d * d), d, d, int(rho * d), rng=rng, n_students=1,
                               init="prior", lr=0.1, max_steps=steps, tol=1e-30, record_every=50)
    times[steps] = time.perf_counter() - t0
per_step = (times[400] - times[200]) / 200
print(f"d = {d}: {1000 * per_step:.1f} ms per step per student; paper cell at most "
      f"{64 * 50_000 * per_step / 3600:.1f} h on this core")
