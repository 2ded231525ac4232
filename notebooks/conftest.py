"""nbval configuration: numeric-aware output comparison, no stderr, timings and memory.

Output comparison. nbval compares each cell's new outputs with the committed
ones. Here text outputs are compared by ``compare_text`` (``tests/numeric_text.py``):
the text outside numbers must match exactly, and each number must match to one
unit in its last printed digit, or within the tolerance the cell declares in
its metadata (key ``"tolerance"``, with a mandatory ``"reason"``: kept for the
few deterministic prints that differ between CPUs by more than a last digit).

A cell that calls ``check(...)`` (:func:`seqrmt.stats.check`) is judged by its
checks: its printed text is compared, its numbers are not. Those are the
statistical lines, whose numbers change with the seed; the check next to them
states the agreement, in standard errors or an absolute bound, and raises when
it fails, for the committed seeds and for shifted ones. Run with
``SEQRMT_SEED_OFFSET=1`` to re-draw every seed (the realisation check of CI).

The kernel's wall time is the sum of the call-phase durations of its cells; the
peak memory is the kernel process's high-water mark of resident memory (VmHWM,
Linux only). The controller writes ``notebooks/notebook_timings.json``
(seconds per notebook) and ``notebooks/notebook_memory.json`` (peak MB per
notebook); ``python scripts/timings.py write`` turns them into the pages of ``book/appendix/``.

BLAS threads. The notebooks run two at a time (one per core of the CI machine,
through pytest-xdist), so each kernel gets one BLAS thread unless the caller
set ``OMP_NUM_THREADS``/``OPENBLAS_NUM_THREADS``/``MKL_NUM_THREADS`` itself.
Two kernels with multithreaded OpenBLAS on two cores oversubscribe them, and
OpenBLAS's spinning threads then make a notebook up to ten times slower.
The kernels inherit this process's environment.
"""

from __future__ import annotations

import json
import os
import pathlib
from collections import defaultdict

import re
import sys

from nbval.plugin import IPyNbCell, transform_streams_for_comparison

from seqrmt.runtime import seed_offset

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
from numeric_text import Tolerance, compare_text, parse_tolerance  # noqa: E402

# a call of check(...) on a line that is not a comment: the cell is judged by its checks
CHECK_CALL = re.compile(r"^(?!\s*#).*(?<![\w.])check\(", re.M)
# every number of such a cell may change with the seed
ANY_NUMBER = Tolerance(abs=float("inf"), reason="judged by the cell's check(...) lines")

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

TIMINGS_FILE = pathlib.Path(__file__).with_name("notebook_timings.json")
MEMORY_FILE = pathlib.Path(__file__).with_name("notebook_memory.json")
_seconds: dict[str, float] = {}
_peak_mb: dict[str, float] = {}


def pytest_collectstart(collector):
    """Do not compare stderr (warnings, progress bars) in notebooks."""
    path = getattr(collector, "path", None)
    if path is not None and path.suffix == ".ipynb":
        collector.skip_compare += ("stderr",)


def _flatten(cell, outputs, skip_compare):
    """nbval's grouping of outputs by key (stream name or MIME type), sanitised."""
    grouped = defaultdict(list)
    for output in transform_streams_for_comparison(outputs):
        for key, value in output.items():
            if key in skip_compare:
                continue
            if key == "data":
                for mime, data in value.items():
                    if mime not in skip_compare:
                        grouped[mime].append(cell.sanitize(data))
            else:
                grouped[key].append(cell.sanitize(value))
    return grouped


def _numeric_compare_outputs(self, test, ref, skip_compare=None):
    """Replacement for ``IPyNbCell.compare_outputs``: numbers within tolerance."""
    skip_compare = skip_compare or self.parent.skip_compare
    self.comparison_traceback = []
    try:
        rules = parse_tolerance(self.cell.metadata.get("tolerance"))
    except (TypeError, ValueError) as exc:
        self.comparison_traceback.append(f"invalid tolerance metadata: {exc}")
        return False
    if CHECK_CALL.search(self.cell.source):
        rules = [ANY_NUMBER]
    new, old = _flatten(self, test, skip_compare), _flatten(self, ref, skip_compare)
    if set(new) != set(old):
        self.comparison_traceback.append(
            f"output fields differ: reference {sorted(old)}, new {sorted(new)}")
        return False
    for key, ref_values in old.items():
        test_values = new[key]
        if len(test_values) != len(ref_values):
            self.comparison_traceback.append(
                f"{key}: {len(ref_values)} reference outputs, {len(test_values)} new")
            return False
        for ref_out, test_out in zip(ref_values, test_values):
            if isinstance(ref_out, str) and isinstance(test_out, str):
                problems = compare_text(ref_out, test_out, rules)
            else:
                problems = [] if ref_out == test_out else ["non-text output differs"]
            if problems:
                self.comparison_traceback.append(f"mismatch in {key!r}:")
                self.comparison_traceback.extend(f"  {p}" for p in problems)
                self.comparison_traceback.append("reference output:\n" + str(ref_out))
                self.comparison_traceback.append("new output:\n" + str(test_out))
                return False
    return True


IPyNbCell.compare_outputs = _numeric_compare_outputs


def _kernel_peak_mb(item):
    """Peak resident memory (MB) of the kernel running ``item``'s notebook, or None."""
    kernel = getattr(getattr(item, "parent", None), "kernel", None)
    try:
        pid = kernel.km.provisioner.pid
        text = pathlib.Path(f"/proc/{pid}/status").read_text()
    except (AttributeError, OSError, TypeError):
        return None
    for line in text.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024.0
    return None


def pytest_runtest_teardown(item, nextitem):
    """After each cell, read the kernel's memory high-water mark (workers and serial runs)."""
    peak = _kernel_peak_mb(item)
    if peak is not None:
        item.user_properties.append(("kernel_peak_mb", peak))


def pytest_runtest_logreport(report):
    """Accumulate call-phase durations and peak memory per notebook (the controller sees all)."""
    name = report.nodeid.split("::")[0]
    if not name.endswith(".ipynb"):
        return
    if report.when == "call":
        _seconds[name] = _seconds.get(name, 0.0) + report.duration
    for key, value in getattr(report, "user_properties", []):
        if key == "kernel_peak_mb":
            _peak_mb[name] = max(_peak_mb.get(name, 0.0), float(value))


def pytest_sessionfinish(session, exitstatus):
    """Write the JSON file once, on the controller (xdist workers have ``workerinput``)."""
    if hasattr(session.config, "workerinput") or not _seconds:
        return
    if seed_offset() != 0:  # the realisation check does not overwrite the book's timings
        return
    seconds = {name: round(secs, 2) for name, secs in sorted(_seconds.items())}
    TIMINGS_FILE.write_text(json.dumps(seconds, indent=2) + "\n")
    memory = {name: round(mb) for name, mb in sorted(_peak_mb.items())}
    MEMORY_FILE.write_text(json.dumps(memory, indent=2) + "\n")
