"""Command line of :mod:`seqrmt.ntp`: ``python -m seqrmt.ntp ufm-runs --out FILE``.

Regenerates the cached UFM runs of Chapter 3.5 (:mod:`seqrmt.ntp.ufm_runs`).
"""

import sys

from .ufm_runs import _main

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] != "ufm-runs":
        sys.exit("usage: python -m seqrmt.ntp ufm-runs [--out FILE] [--seeds N]")
    _main(sys.argv[2:])
