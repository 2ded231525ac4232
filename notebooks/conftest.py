"""nbval configuration: ignore stderr, record each notebook's wall time and peak memory.

The kernel's wall time is the sum of the call-phase durations of its cells; the
peak memory is the kernel process's high-water mark of resident memory (VmHWM,
Linux only). The controller writes ``notebooks/notebook_timings.json``
(seconds per notebook) and ``notebooks/notebook_memory.json`` (peak MB per
notebook); ``scripts/write_timings.py`` turns them into ``book/appendix/timings.md``.
"""

from __future__ import annotations

import json
import pathlib

TIMINGS_FILE = pathlib.Path(__file__).with_name("notebook_timings.json")
MEMORY_FILE = pathlib.Path(__file__).with_name("notebook_memory.json")
_seconds: dict[str, float] = {}
_peak_mb: dict[str, float] = {}


def pytest_collectstart(collector):
    """Do not compare stderr (warnings, progress bars) in notebooks."""
    path = getattr(collector, "path", None)
    if path is not None and path.suffix == ".ipynb":
        collector.skip_compare += ("stderr",)


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
    seconds = {name: round(secs, 2) for name, secs in sorted(_seconds.items())}
    TIMINGS_FILE.write_text(json.dumps(seconds, indent=2) + "\n")
    memory = {name: round(mb) for name, mb in sorted(_peak_mb.items())}
    MEMORY_FILE.write_text(json.dumps(memory, indent=2) + "\n")
