"""The free-area Marchenko-Pastur fit of seqrmt.dyson (checkpoints D-6, D-6b of the Part 4 spec)."""

import numpy as np
import pytest
from scipy import integrate

from seqrmt import dyson, rmt
from seqrmt.runtime import single_threaded_blas

X_PLUS = 0.75  # bulk edge of MP(r = 1/4, s^2 = 1/3)


@pytest.fixture(autouse=True)
def _one_blas_thread():
    with single_threaded_blas():
        yield


def init_key_eigs(rng, n=320):
    """Gram eigenvalues of 16 x 64 key matrices with PyTorch's default U(-1/8, 1/8) entries."""
    k = rng.uniform(-1 / 8, 1 / 8, size=(n, 16, 64))
    return np.linalg.eigvalsh(k @ k.transpose(0, 2, 1))


def test_d6_mp_at_pytorch_init():
    eigs = init_key_eigs(np.random.default_rng(6))
    assert abs(eigs.mean() - 1 / 3) < 4 * eigs.mean(axis=1).std() / np.sqrt(320)  # 64 / 192
    area, var = dyson.fit_mp_bulk(eigs, 0.25)
    assert area == pytest.approx(0.993, rel=0.02) and var == pytest.approx(0.3355, rel=0.02)


@pytest.mark.parametrize("frac,expected", [(0.15, 0.856), (0.20, 0.816), (0.25, 0.767)])
def test_d6b_bulk_area_with_a_pareto_tail(frac, expected):
    """D-6 plus a Pareto(1.5) tail of weight frac above x_+; 80 bins on [0, 1.2 x_+]."""
    rng = np.random.default_rng(0)
    bulk = init_key_eigs(rng).ravel()
    tail = X_PLUS * (1 + rng.pareto(1.5, size=int(round(frac / (1 - frac) * bulk.size))))
    area, var = dyson.fit_mp_bulk(np.concatenate([bulk, tail]), 0.25, bins=80, range=(0, 1.2 * X_PLUS))
    assert area == pytest.approx(expected, abs=0.02) and area == pytest.approx(1 - frac, abs=0.03)
    assert var == pytest.approx(1 / 3, rel=0.1)
    # n_total counts eigenvalues outside the histogram's range too: the same fit, area scaled
    a2, v2 = dyson.fit_mp_bulk(bulk, 0.25, bins=80, range=(0, 1.2 * X_PLUS), n_total=bulk.size + tail.size)
    assert a2 == pytest.approx(area, abs=0.03)
    with pytest.raises(ValueError, match="n_total"):
        dyson.fit_mp_bulk(bulk, 0.25, n_total=bulk.size - 1)


def test_fit_recovers_a_scaled_bulk_and_is_the_least_squares_optimum():
    rng = np.random.default_rng(3)
    g = rng.standard_normal((400, 16, 64)) * 0.3  # s^2 = 64 * 0.09 = 5.76
    eigs = np.linalg.eigvalsh(g @ g.transpose(0, 2, 1))
    area, var = dyson.fit_mp_bulk(eigs, 0.25)
    assert var == pytest.approx(5.76, rel=0.02) and area == pytest.approx(1.0, abs=0.03)
    # an independent evaluation of the residual: nothing on a fine grid around the fit is lower
    counts, edges = np.histogram(eigs.ravel(), bins="fd")
    hist = counts / (eigs.size * np.diff(edges))

    def rss(s2):
        f = np.array([integrate.quad(lambda t: rmt.mp_density(np.array([t]), 0.25, s2)[0], a, b)[0]
                      for a, b in zip(edges[:-1], edges[1:])]) / np.diff(edges)
        a = min(f @ hist / (f @ f), 1.0)
        return np.sum((hist - a * f) ** 2), a

    best, a = rss(var)
    assert a == pytest.approx(area, rel=1e-6)
    assert all(rss(s2)[0] >= best - 1e-10 for s2 in var * np.linspace(0.9, 1.1, 21))
    assert dyson.fit_mp_bulk(3 * eigs, 0.25)[1] == pytest.approx(3 * var, rel=1e-6)  # equivariant


def test_fit_refuses_bad_spectra():
    for bad, name in [(np.array([1.0, 1.0]), "eigs"), (np.array([-1.0, 2.0]), "eigs")]:
        with pytest.raises(ValueError, match=name):
            dyson.fit_mp_bulk(bad, 0.25)
    with pytest.raises(ValueError, match="ratio"):
        dyson.fit_mp_bulk(np.array([1.0, 2.0]), 2.0)
