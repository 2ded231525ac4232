"""The memorisation laws of Chapter 5.2: the resolvent quadratic form (seqrmt.frontiers.attention) and
the closed form of the ridge baseline (seqrmt.rmt.coresolvent_stieltjes, ridge_memorisation_error)."""

import numpy as np
import pytest

from seqrmt import rmt
from seqrmt.frontiers import attention as at


def _tokens(n, p, s, seed):
    """x_i = y_i mu + z_i as columns, |mu|^2 = s, labels +-1 (an independent sampler)."""
    rng = np.random.default_rng(seed)
    y = rng.choice([-1.0, 1.0], size=n)
    X = rng.standard_normal((p, n))
    X[0] += np.sqrt(s) * y
    return X, y


def test_memorisation_error_is_mean_squared_ridge_residual():
    rng = np.random.default_rng(1)
    F, y = rng.standard_normal((7, 12)), rng.standard_normal(12)
    for gamma in (0.05, 1.0):
        n = F.shape[1]
        w = np.linalg.solve(F @ F.T + n * gamma * np.eye(7), F @ y)
        direct = np.mean((y - F.T @ w) ** 2)
        Q = np.linalg.inv(F.T @ F / n + gamma * np.eye(n))
        assert at.memorisation_error(F, y, gamma) == pytest.approx(direct, rel=1e-10)
        assert direct == pytest.approx(gamma**2 * y @ Q @ Q @ y / n, rel=1e-10)
    many = at.memorisation_error(F, y, np.array([0.05, 1.0]))
    assert many[1] == pytest.approx(at.memorisation_error(F, y, 1.0), rel=1e-12)


def test_memorisation_error_with_more_tokens_than_features():
    # q < n: the part of y outside the row space of F is never fitted
    rng = np.random.default_rng(2)
    F, y = rng.standard_normal((3, 10)), rng.standard_normal(10)
    Q = np.linalg.inv(F.T @ F / 10 + 1e-9 * np.eye(10))
    P = F.T @ np.linalg.pinv(F.T)  # projector on the row space
    assert at.memorisation_error(F, y, 1e-9) == pytest.approx(np.sum((y - P @ y) ** 2) / 10, rel=1e-6)
    assert at.memorisation_error(F, y, 0.3) == pytest.approx(
        0.09 * y @ np.linalg.matrix_power(np.linalg.inv(F.T @ F / 10 + 0.3 * np.eye(10)), 2) @ y / 10)
    assert Q.shape == (10, 10)


def test_coresolvent_stieltjes_matches_trace_and_fixed_point():
    for c, g in [(0.5, 0.1), (2.0, 0.01), (1.0, 1.0), (0.99, 1e-9), (50.0, 1e3)]:
        m = rmt.coresolvent_stieltjes(c, g)
        assert m == pytest.approx(1 / (g + c / (1 + m)), rel=1e-12)
    Z = np.random.default_rng(2).standard_normal((300, 600))
    eig = np.linalg.eigvalsh(Z.T @ Z / 600)
    assert np.mean(1 / (eig + 0.3)) == pytest.approx(rmt.coresolvent_stieltjes(0.5, 0.3), abs=5e-3)
    # the same law as Marchenko-Pastur read on the n x n side: Z^T Z / n = c (Z^T Z / p)
    m_mp, _ = rmt.mp_resolvent_moments(0.3 / 0.5, 1 / 0.5)
    assert rmt.coresolvent_stieltjes(0.5, 0.3) == pytest.approx(m_mp / 0.5, rel=1e-10)


def test_ridge_memorisation_error_is_minus_gamma_squared_derivative():
    c, s, g, h = 0.7, 2.0, 0.2, 1e-6

    def quad(gam):  # limit of (1/n) y^T Q y
        m = rmt.coresolvent_stieltjes(c, gam)
        return m * (1 + m) / (1 + (1 + s) * m)

    fd = -(g**2) * (quad(g + h) - quad(g - h)) / (2 * h)
    assert rmt.ridge_memorisation_error(c, s, g) == pytest.approx(fd, rel=1e-7)


def test_ridge_memorisation_error_limits():
    # gamma -> 0: (1-c)/(1+s) below interpolation, 0 above; s = 0: gamma^2 (1/n) Tr Q^2
    assert rmt.ridge_memorisation_error(0.5, 3.0, 1e-9) == pytest.approx(0.125, abs=1e-6)
    assert rmt.ridge_memorisation_error(2.0, 1.0, 1e-9) < 1e-6
    c, g = 0.5, 0.3
    tau_n = -(rmt.coresolvent_stieltjes(c, g + 1e-6) - rmt.coresolvent_stieltjes(c, g - 1e-6)) / 2e-6
    assert rmt.ridge_memorisation_error(c, 0.0, g) == pytest.approx(g**2 * tau_n, rel=1e-6)
    # large gamma: nothing is fitted
    assert rmt.ridge_memorisation_error(0.5, 1.0, 1e6) == pytest.approx(1.0, abs=1e-5)


def test_isotropic_masked_training_error_is_the_ridge_memorisation_error():
    # the bridge 5.1 <-> 5.2: (m - lam m2) / m^2 at ratio gamma equals E_RR(c = gamma, s = 0, lam)
    for gamma, lam in [(0.5, 0.1), (0.5, 1.0), (4 / 3, 1.0), (2.0, 0.3)]:
        m, m2 = rmt.mp_resolvent_moments(lam, gamma)
        assert (m - lam * m2) / m**2 == pytest.approx(rmt.ridge_memorisation_error(gamma, 0.0, lam),
                                                      rel=1e-10)


# spec 2.5 (A): n = 1024, (p, s, gamma, theory); tolerance 3 se or 0.01 absolute
RIDGE_ROWS = [(512, 0.0, 1e-3, 0.5000), (512, 1.0, 1e-3, 0.2500), (2048, 1.0, 0.1, 0.0070),
              (1024, 4.0, 0.1, 0.0318), (512, 1.0, 1.0, 0.3886)]


@pytest.mark.parametrize("p, s, gamma, theory", RIDGE_ROWS)
def test_ridge_memorisation_checkpoints(p, s, gamma, theory):
    n, seeds = 1024, 4
    assert rmt.ridge_memorisation_error(p / n, s, gamma) == pytest.approx(theory, abs=5e-5)
    err = [at.memorisation_error(*_tokens(n, p, s, k), gamma) for k in range(seeds)]
    se = np.std(err, ddof=1) / np.sqrt(seeds)
    assert abs(np.mean(err) - theory) <= max(3 * se, 0.01)
