"""Monte Carlo drivers give every realisation its own generator (seqrmt.ensemble).

For each driver: the result is bit-identical with one and two workers, and realisation ``i``
equals an independent computation with the ``i``-th spawned generator, built from the public
one-draw samplers (so a driver that went back to sharing one stream would fail).
"""

import numpy as np
import pytest

from seqrmt._validation import check_seed
from seqrmt.ensemble import spawn_generators


def _same(a, b):
    """Bit-identical arrays (or nested tuples/lists of arrays)."""
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return np.array_equal(np.asarray(a), np.asarray(b))


# ------------------------------------------------------------------------------- the root helper
def test_root_accepts_seeds_sequences_generators_and_none():
    g = np.random.default_rng(1)
    ss = np.random.SeedSequence(2)
    assert check_seed(3) == 3 and check_seed(g) is g and check_seed(ss) is ss
    assert isinstance(check_seed(None), np.random.SeedSequence)
    for bad, match in ((-1, "non-negative"), (1.5, "rng"), (True, "rng"), ("0", "rng")):
        with pytest.raises(ValueError, match=match):
            check_seed(bad)




# ------------------------------------------------------------------------------------ dyson
def test_dyson_brownian_motion_one_generator_per_matrix(monkeypatch):
    from seqrmt import dyson
    from seqrmt.dyson import _sgd

    h0 = np.stack([np.diag([0.0, 1.0, 2.0]), np.eye(3), np.zeros((3, 3))])
    t, e = dyson.dyson_brownian_motion(h0, 1.0, 7, rng=5, theta=0.5, s=0.7)
    a = np.exp(-0.5 / 7)  # the exact OU step
    b = 0.7 * np.sqrt(-np.expm1(-2 * 0.5 / 7) / (2 * 0.5))
    for i, g in enumerate(spawn_generators(5, 3)):
        h, ref = h0[i], [np.linalg.eigvalsh(h0[i])]
        for _ in range(7):  # matrix i: its own stream, step after step
            z = g.standard_normal((3, 3))
            h = a * h + b / np.sqrt(2.0) * (z + z.T)
            ref.append(np.linalg.eigvalsh(h))
        np.testing.assert_allclose(e[:, i], np.array(ref), rtol=1e-12, atol=1e-12)
    # a path does not depend on the size of the batch
    np.testing.assert_array_equal(dyson.dyson_brownian_motion(h0[:2], 1.0, 7, rng=5, theta=0.5,
                                                              s=0.7)[1], e[:, :2])
    # blocks of steps bound the memory, not the numbers
    monkeypatch.setattr(_sgd, "_NOISE_BLOCK", 20)
    np.testing.assert_array_equal(dyson.dyson_brownian_motion(h0, 1.0, 7, rng=5, theta=0.5, s=0.7)[1], e)
