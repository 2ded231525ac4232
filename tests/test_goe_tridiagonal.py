"""The tridiagonal (Dumitriu-Edelman) GOE sampler of seqrmt.dyson.goe_eigs samples the same law as the dense one.

Each statistic is compared with its exact value or with the dense sampler through a z-score or a
two-sample test, and each comparison is shown able to fail on a slightly wrong sampler.
"""

import numpy as np
import pytest
from scipy import stats

from seqrmt import rmt
from seqrmt.dyson import universality as U
from seqrmt.runtime import single_threaded_blas


@pytest.fixture(autouse=True)
def _one_blas_thread():
    with single_threaded_blas():
        yield


def _wrong_tridiagonal(n, m, rng, df_shift=1):
    """A tridiagonal sampler with the chi degrees of freedom shifted: not the GOE."""
    rng = np.random.default_rng(rng)
    a = np.sqrt(2.0) * rng.normal(size=(m, n))
    b = np.sqrt(rng.chisquare(np.arange(n - 1, 0, -1) + df_shift, size=(m, n - 1)))
    from scipy.linalg import eigvalsh_tridiagonal

    return np.array([eigvalsh_tridiagonal(a[i], b[i]) for i in range(m)])


def _trace_moment_z(eigs, v=1.0):
    """z-scores of the mean of Tr H^2 and Tr H^4 against their exact GOE values."""
    n = eigs.shape[1]
    exact = {2: n * (n + 1) * v, 4: (2 * n**3 + 5 * n**2 + 5 * n) * v**2}
    z = []
    for k, value in exact.items():
        t = np.sum(eigs**k, axis=1)
        z.append((t.mean() - value) / (t.std(ddof=1) / np.sqrt(t.size)))
    return np.array(z)


@pytest.mark.parametrize("n, m", [(5, 20_000), (20, 5000), (100, 1000)])
def test_tridiagonal_trace_moments_are_exact(n, m):
    eigs = U.goe_eigs(n, m, rng=n, method="tridiagonal")
    assert eigs.shape == (m, n)
    assert np.all(np.diff(eigs, axis=1) >= 0)
    assert np.all(np.abs(_trace_moment_z(eigs)) < 4)
    # the same test rejects a sampler with one chi degree of freedom too many
    assert np.max(np.abs(_trace_moment_z(_wrong_tridiagonal(n, m, n)))) > 4


@pytest.mark.parametrize("n, m", [(5, 4000), (20, 1000), (100, 200)])
def test_tridiagonal_and_dense_spectra_agree_ks(n, m):
    tri = U.goe_eigs(n, m, rng=1, method="tridiagonal").ravel()
    dense = U.goe_eigs(n, m, rng=2, method="dense").ravel()
    # eigenvalues of one matrix repel, so the iid two-sample test is conservative here
    assert stats.ks_2samp(tri, dense).pvalue > 1e-3
    # and it sees a 25 % error in the variance (12 % in the eigenvalues)
    wrong = U.goe_eigs(n, m, rng=1, scale=1.25, method="tridiagonal").ravel()
    assert stats.ks_2samp(wrong, dense).pvalue < 1e-3


def test_tridiagonal_pooled_spectrum_is_the_semicircle():
    n = 1000
    x = U.goe_eigs(n, 8, rng=3, method="tridiagonal").ravel() / np.sqrt(n)
    d = rmt.ks_distance(x, lambda t: rmt.semicircle_cdf(t, 1.0))
    assert d < 0.005
    # a 5 % error in the scale of the eigenvalues is seen
    assert rmt.ks_distance(1.05 * x, lambda t: rmt.semicircle_cdf(t, 1.0)) > 0.01


def _moment_z(a, b):
    """z-scores of the differences of mean and variance between two iid samples."""
    z_mean = (a.mean() - b.mean()) / np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)

    def var_se(x):
        u = x - x.mean()
        return x.var(ddof=1), np.sqrt((np.mean(u**4) - np.mean(u**2) ** 2) / x.size)

    (va, sa), (vb, sb) = var_se(a), var_se(b)
    return z_mean, (va - vb) / np.hypot(sa, sb)


@pytest.mark.parametrize("n, m", [(5, 20_000), (20, 10_000), (100, 2000)])
def test_largest_eigenvalue_mean_and_variance_match_dense(n, m):
    tri = U.goe_eigs(n, m, rng=10 + n, method="tridiagonal")[:, -1]
    dense = U.goe_eigs(n, m, rng=20 + n, method="dense")[:, -1]
    assert np.all(np.abs(_moment_z(tri, dense)) < 4)
    # a 2 % error in the scale shifts the mean of the largest eigenvalue visibly
    assert abs(_moment_z(1.02 * tri, dense)[0]) > 4


def test_auto_picks_dense_below_the_crossover_and_tridiagonal_above():
    n0 = U.GOE_TRIDIAGONAL_MIN_N
    for n in (1, 2, n0 - 1):
        np.testing.assert_array_equal(U.goe_eigs(n, 7, 0), U.goe_eigs(n, 7, 0, method="dense"))
    for n in (n0, 2 * n0):
        np.testing.assert_array_equal(U.goe_eigs(n, 7, 0), U.goe_eigs(n, 7, 0, method="tridiagonal"))


def test_tridiagonal_scale_and_size_one():
    e = U.goe_eigs(1, 50_000, 0, scale=0.3, method="tridiagonal")
    assert e.shape == (50_000, 1)
    assert np.var(e) == pytest.approx(0.6, rel=0.03)  # diagonal variance 2v
    big = U.goe_eigs(3000, 1, 0, method="tridiagonal")  # O(n) memory: no 3000 x 3000 matrix
    assert big.shape == (1, 3000)
    assert np.sum(big**2) / (3000 * 3001) == pytest.approx(1.0, abs=0.01)


def test_method_is_validated():
    with pytest.raises(ValueError, match="method"):
        U.goe_eigs(4, 2, 0, method="householder")
