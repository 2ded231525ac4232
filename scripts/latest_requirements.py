#!/usr/bin/env python
"""requirements.txt without its version pins: the weekly check's "newest releases" install.

Usage::

    python scripts/latest_requirements.py requirements.txt > /tmp/requirements-latest.txt
    pip install --upgrade --upgrade-strategy eager -r /tmp/requirements-latest.txt

Every ``name==version`` becomes ``name`` (environment markers, options such as
``--extra-index-url`` and ``-e .`` are kept), so pip installs the newest release of the
numerics, the test tools and the library's own dependencies. The section
``# --- the book ...`` keeps its pins: it is the Jupyter Book 1 / Sphinx 7 stack, whose newest
releases are a different program (Jupyter Book 2), not a newer version of the same one; the
weekly job runs the tests and every notebook, which do not need it. PyTorch's local version
(``2.13.0+cpu``) goes with the pin; pip then prefers the ``+cpu`` build of the newest release
from the CPU index, as it sorts above the plain one.
"""

from __future__ import annotations

import pathlib
import re
import sys

# a requirement line: name[extras]==version, then markers or a comment
PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?)\s*==\s*[^\s;#]+(?P<rest>.*)$")
KEEP_PINNED = re.compile(r"^#\s*---\s*the book\b", re.I)
SECTION = re.compile(r"^#\s*---")


def unpinned(text: str) -> str:
    """The requirements ``text`` with the pins removed outside the book's section."""
    out, keep = [], False
    for line in text.splitlines():
        if SECTION.match(line):
            keep = bool(KEEP_PINNED.match(line))
        m = PIN.match(line.strip())
        if m and not keep:
            rest = m.group("rest").strip()
            line = m.group("name") + (f" {rest}" if rest else "")
        out.append(line)
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    path = pathlib.Path(argv[0] if argv else "requirements.txt")
    sys.stdout.write(unpinned(path.read_text(encoding="utf-8")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
