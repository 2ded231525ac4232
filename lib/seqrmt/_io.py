"""Cached runs as ``.npz`` files whose bytes depend only on their arrays, read back after a hash check."""

from __future__ import annotations

import hashlib
import io
import os
import pathlib
import zipfile

import numpy as np

__all__ = ["write_npz_deterministic", "read_npz_checked"]


def write_npz_deterministic(path, arrays, sort=True):
    """Write ``arrays`` (name -> array) to a compressed ``.npz``; return the file's SHA-256.

    The entries carry a fixed timestamp (and are sorted by name unless ``sort`` is false, the
    order in which the cached GPT runs were written), so the same arrays give the same bytes.
    """
    if not isinstance(arrays, dict) or not arrays:
        raise ValueError("arrays must be a non-empty dict name -> array")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in (sorted(arrays) if sort else arrays):
            data = io.BytesIO()
            np.lib.format.write_array(data, np.ascontiguousarray(arrays[name]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data.getvalue())
    blob = buf.getvalue()
    pathlib.Path(path).write_bytes(blob)
    return hashlib.sha256(blob).hexdigest()


def read_npz_checked(path, sha256=None, regenerate=""):
    """Read an ``.npz`` into a dict of arrays after checking its SHA-256 (skipped when ``sha256`` is falsy).

    ``regenerate`` (how to rebuild the file) is quoted in the error raised on a mismatch.
    """
    if not isinstance(path, (str, os.PathLike)) or not pathlib.Path(path).is_file():
        raise ValueError(f"path must be an existing file, got {path!r}")
    blob = pathlib.Path(path).read_bytes()
    if sha256:
        got = hashlib.sha256(blob).hexdigest()
        if got != str(sha256).lower():
            raise ValueError(f"sha256 of {path} is {got}, expected {sha256}: the file is not the committed one"
                             + (f" ({regenerate})" if regenerate else ""))
    with np.load(io.BytesIO(blob), allow_pickle=False) as z:
        return {k: z[k] for k in z.files}
