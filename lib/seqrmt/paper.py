"""Run a chapter at the papers' size without touching the book: ``python -m seqrmt.paper NOTEBOOK``.

The notebook is executed top to bottom in a fresh Jupyter kernel with ``SEQRMT_SCALE=paper``
(:func:`seqrmt.runtime.preset` then picks the papers' sizes) and written to
``_build/paper/<its path>``; the committed notebook, whose book-size outputs nbval compares, is
never overwritten. The command prints the number of ensemble workers (``--jobs``, else
``SEQRMT_JOBS``, else every available CPU at the paper's size; see :func:`seqrmt.ensemble.n_jobs`),
one line per code cell with its duration, the notebook's own printed output and progress bars as
they stream (``--quiet`` hides them), and the total time::

    python -m seqrmt.paper --jobs 2 \\
        notebooks/part5_frontiers/03_icl_alignment.ipynb
    python -m seqrmt.paper notebooks/part3_ntp_geometry/*.ipynb --timeout 7200

On a cluster, run the same command inside a job; ensembles fan out over ``SEQRMT_JOBS`` processes
of that machine, or over a Dask cluster from inside a notebook (see :mod:`seqrmt.ensemble`).
The exit status is 0 when every notebook ran, 1 when a cell failed or timed out (the partly
executed notebook is still written, with the error in its outputs), 2 for bad arguments.
"""

from __future__ import annotations

import joblib
import argparse
import os
import pathlib
import re
import sys
import time

__all__ = ["run_paper", "main"]

DEFAULT_OUT = pathlib.Path("_build") / "paper"


def _output_path(notebook, out_dir):
    """``out_dir / <notebook's path relative to the working directory>`` (or its name if outside)."""
    src = notebook.resolve()
    try:
        rel = src.relative_to(pathlib.Path.cwd().resolve())
    except ValueError:
        rel = pathlib.Path(src.name)
    out = (out_dir / rel).resolve()
    if out == src:
        raise ValueError(f"out_dir would overwrite the notebook itself ({src}); choose another out_dir")
    return out


def _check_args(timeout, jobs, scale):
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
            raise ValueError(f"timeout must be a positive number of seconds or None, got {timeout!r}")
    if jobs is not None:
        if isinstance(jobs, bool) or not isinstance(jobs, int) or not (jobs >= 1 or jobs == -1):
            raise ValueError(f"jobs must be a positive integer or -1, got {jobs!r}")
    if scale not in ("paper", "book"):
        raise ValueError(f"scale must be 'paper' or 'book', got {scale!r}")


def _format_seconds(s):
    if s < 120:
        return f"{s:.1f} s"
    if s < 7200:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.2f} h"


def cpu_model():
    """The CPU's model name from ``/proc/cpuinfo`` (else :func:`platform.processor`)."""
    import platform

    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _machine():
    """The CPU model, the CPUs this process may use and the GPU, in words (for the run's record)."""


    text = f"{cpu_model()}, {joblib.cpu_count()} CPU(s) available"
    # the NVIDIA driver lists its GPUs here; importing torch just to ask would add ~300 MB to this process
    gpus = pathlib.Path("/proc/driver/nvidia/gpus")
    names = []
    if gpus.is_dir():
        for info in sorted(gpus.glob("*/information")):
            line = next((x for x in info.read_text().splitlines() if x.startswith("Model:")), "Model: GPU")
            names.append(line.split(":", 1)[1].strip())
    return text + (", GPU " + ", ".join(names) if names else ", no GPU")


def _commit(path):
    """The short git commit of the checkout holding ``path`` (``"unknown"`` outside git)."""
    import subprocess

    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=path.resolve().parent,
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "unknown"


def run_paper(notebook, out_dir=DEFAULT_OUT, timeout=None, jobs=None, kernel_name=None, stream=True,
              scale="paper", log=None):
    """Execute ``notebook`` at the papers' size into ``out_dir``, reporting progress on ``log``.

    Parameters
    ----------
    notebook : str or path-like
        The ``.ipynb`` file to run (read only).
    out_dir : str or path-like
        Folder of the executed copy, which keeps the notebook's path relative to the working
        directory (default ``_build/paper``). It may not resolve to the notebook itself.
    timeout : float or None
        Limit per cell in seconds (``None``: none).
    jobs : int or None
        Ensemble workers, exported as ``SEQRMT_JOBS`` to the kernel (``-1``: every CPU; ``None``:
        ``SEQRMT_JOBS`` if set, else every available CPU at the paper's size).
    kernel_name : str or None
        Jupyter kernel (default: the notebook's own).
    stream : bool
        Echo the notebook's printed output and progress bars to ``log`` as they arrive.
    scale : {"paper", "book"}
        ``SEQRMT_SCALE`` of the run (``"book"`` only to time the default size the same way).
    log : file-like, optional
        Where progress goes (default ``sys.stderr``).

    Returns
    -------
    dict
        ``notebook``, ``output`` (paths), ``seconds`` (total), ``cells`` (a list of
        ``(cell index, seconds)`` per executed code cell), ``jobs`` (the worker count),
        ``scale`` and ``error`` (``None`` or the error message).
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError

    from .ensemble import JOBS_VARIABLE, n_jobs


    _check_args(timeout, jobs, scale)
    log = sys.stderr if log is None else log
    src = pathlib.Path(notebook)
    if src.suffix != ".ipynb" or not src.is_file():
        raise ValueError(f"notebook must be an existing .ipynb file, got {str(notebook)!r}")
    out = _output_path(src, pathlib.Path(out_dir))
    nb = nbformat.read(src, as_version=4)

    saved = {k: os.environ.get(k) for k in ("SEQRMT_SCALE", JOBS_VARIABLE)}
    os.environ["SEQRMT_SCALE"] = scale
    if jobs is not None:
        os.environ[JOBS_VARIABLE] = str(jobs)
    try:
        workers = n_jobs()
        source = (f"{JOBS_VARIABLE}={os.environ[JOBS_VARIABLE]}" if os.environ.get(JOBS_VARIABLE)
                  else f"default at {scale} size; --jobs or {JOBS_VARIABLE} to change")
        n_code = sum(c.cell_type == "code" for c in nb.cells)
        print(f"[seqrmt.paper] {src} at SEQRMT_SCALE={scale}: {n_code} code cells -> {out}", file=log)
        print(f"[seqrmt.paper] ensemble workers: {workers} ({source}); CPUs available: {joblib.cpu_count()}",
              file=log, flush=True)
        cells, state = [], {"done": 0, "t0": None}

        def on_start(cell, cell_index):
            state["done"] += 1
            state["t0"] = time.perf_counter()
            first = next((line for line in cell.source.splitlines() if line.strip()), "")[:60]
            print(f"[seqrmt.paper] cell {state['done']}/{n_code} (#{cell_index}): {first}", file=log, flush=True)

        def on_done(cell, cell_index, execute_reply):
            dt = time.perf_counter() - state["t0"]
            cells.append((cell_index, dt))
            print(f"[seqrmt.paper]   done in {_format_seconds(dt)}", file=log, flush=True)

        class _Client(NotebookClient):
            def output(self, outs, msg, display_id, cell_index):
                if stream and msg["msg_type"] == "stream":
                    log.write(msg["content"]["text"])
                    log.flush()
                return super().output(outs, msg, display_id, cell_index)

        client = _Client(nb, timeout=timeout, kernel_name=kernel_name or "",
                         resources={"metadata": {"path": str(src.resolve().parent)}},
                         on_cell_execute=on_start, on_cell_executed=on_done)
        error = None
        started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        t0 = time.perf_counter()
        try:
            client.execute()
        except (CellExecutionError, CellTimeoutError) as exc:
            text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).strip()  # no terminal colours
            error = text.splitlines()[-1] if text else type(exc).__name__
        total = time.perf_counter() - t0
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    nb.metadata["seqrmt_paper"] = {"scale": scale, "jobs": workers, "seconds": round(total, 1),
                                   "error": error, "date": started, "machine": _machine(),
                                   "command": f"python -m seqrmt.paper --jobs {workers} {src}",
                                   "commit": _commit(src)}
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out)
    status = "FAILED: " + error if error else "finished"
    exact = f" ({total:.1f} s)" if total >= 120 else ""
    print(f"[seqrmt.paper] {status} in {_format_seconds(total)}{exact} with {workers} worker(s); "
          f"written to {out}", file=log, flush=True)
    return {"notebook": str(src), "output": str(out), "seconds": total, "cells": cells, "jobs": workers,
            "scale": scale, "error": error}


def _jobs_arg(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer or -1, got {text!r}") from None
    if value < 1 and value != -1:
        raise argparse.ArgumentTypeError(f"must be a positive integer or -1, got {value}")
    return value


def _timeout_arg(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be positive, got {value}")
    return value


def main(argv=None):
    """The command line: ``python -m seqrmt.paper NOTEBOOK [NOTEBOOK ...] [options]``; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m seqrmt.paper",
        description="Execute notebooks at the papers' size (SEQRMT_SCALE=paper) into _build/paper/, "
                    "never in place, with progress, the worker count and the time taken.")
    parser.add_argument("notebooks", nargs="+", metavar="NOTEBOOK", help=".ipynb files to run")
    parser.add_argument("--jobs", type=_jobs_arg, default=None,
                        help="ensemble workers (SEQRMT_JOBS; -1: all CPUs; default: SEQRMT_JOBS or all CPUs)")
    parser.add_argument("--timeout", type=_timeout_arg, default=None,
                        help="limit per cell in seconds (default: none)")
    parser.add_argument("--out-dir", default=str(DEFAULT_OUT), help="output folder (default: _build/paper)")
    parser.add_argument("--kernel", default=None, help="Jupyter kernel name (default: the notebook's)")
    parser.add_argument("--quiet", action="store_true", help="do not echo the notebooks' output")
    parser.add_argument("--scale", choices=("paper", "book"), default="paper", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    results = []
    for nb in args.notebooks:
        try:
            results.append(run_paper(nb, args.out_dir, args.timeout, args.jobs, args.kernel,
                                     stream=not args.quiet, scale=args.scale))
        except ValueError as exc:
            print(f"[seqrmt.paper] error: {exc}", file=sys.stderr)
            return 2
    if len(results) > 1:
        print("[seqrmt.paper] summary:", file=sys.stderr)
        for r in results:
            state = "FAILED" if r["error"] else "ok"
            print(f"  {state:6s} {_format_seconds(r['seconds']):>9s}  {r['notebook']}", file=sys.stderr)
    return 1 if any(r["error"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
