"""``python -m seqrmt.nanogpt``: see :mod:`seqrmt.nanogpt.cli`."""

import sys

from .cli import main

main(sys.argv[1:])
