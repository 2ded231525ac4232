"""Time of one gradient step of 2.6's paper-size run (d = 100, 64 students), CPU or GPU.

    taskset -c 0 python benchmarks/gd_paper_step_time.py          # one CPU core
    python benchmarks/gd_paper_step_time.py cuda                  # a GPU

Loads the notebook's own training loop (``train``, ``data_sets``, ``tensors``, ``students`` of
notebooks/part2_bilinear_regression/06_gradient_descent.ipynb), draws the paper's data set (d = 100,
alpha = 0.3, rho = 0.2) and 64 prior-initialised students, and times 100 and 300 steps (no early
stop): the difference per step cancels the set-up. The paper preset runs at most 50,000 steps, so
the paper-size cell costs at most 50,000 x (this time).
"""

import ast
import json
import pathlib
import sys
import time

import numpy as np
import torch

from seqrmt import bsr

device = torch.device(sys.argv[1] if len(sys.argv) > 1 else "cpu")
if device.type == "cpu":
    torch.set_num_threads(1)
nb = pathlib.Path(__file__).parents[1] / "notebooks/part2_bilinear_regression/06_gradient_descent.ipynb"
scope = {"np": np, "torch": torch, "bsr": bsr, "device": device}
for cell in json.loads(nb.read_text())["cells"]:
    src = "".join(cell["source"])
    if cell["cell_type"] == "code" and "%pip" not in src:
        defs = [n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef)
                and n.name in ("train", "data_sets", "tensors", "students")]
        exec(compile(ast.Module(body=defs, type_ignores=[]), str(nb), "exec"), scope)

rng = np.random.default_rng(0)
d, alpha, rho, K = 100, 0.3, 0.2, 64
F, y, S_true = scope["tensors"](scope["data_sets"](rng, 1, int(alpha * d * d), d, d, int(rho * d)))
U, V = scope["students"](rng, 1, K, d, d, int(rho * d), 1.0)
times = {}
for steps in (100, 300):
    if device.type == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    scope["train"](F, y, S_true, U, V, steps=steps, every=100, tol=0.0)
    if device.type == "cuda":
        torch.cuda.synchronize()
    times[steps] = time.perf_counter() - t0
per_step = (times[300] - times[100]) / 200
print(f"d = {d}, {K} students on {device}: {1000 * per_step:.2f} ms per step; paper cell "
      f"(50,000 steps) at most {50_000 * per_step / 60:.1f} min")
