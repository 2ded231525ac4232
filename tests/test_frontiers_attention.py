"""Tests of seqrmt.frontiers.attention against the spec's checkpoints (Part 5 spec, section 2.5)."""

import numpy as np
import pytest

from seqrmt import rmt
from seqrmt.frontiers import attention as at


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


def test_coresolvent_stieltjes_matches_trace_and_fixed_point():
    for c, g in [(0.5, 0.1), (2.0, 0.01), (1.0, 1.0)]:
        m = at.coresolvent_stieltjes(c, g)
        assert m == pytest.approx(1 / (g + c / (1 + m)), rel=1e-12)
    rng = np.random.default_rng(2)
    Z = rng.standard_normal((300, 600))
    eig = np.linalg.eigvalsh(Z.T @ Z / 600)
    assert np.mean(1 / (eig + 0.3)) == pytest.approx(at.coresolvent_stieltjes(0.5, 0.3), abs=5e-3)


def test_ridge_memorisation_error_is_minus_gamma_squared_derivative():
    c, s, g, h = 0.7, 2.0, 0.2, 1e-6

    def quad(gam):  # limit of (1/n) y^T Q y
        m = at.coresolvent_stieltjes(c, gam)
        return m * (1 + m) / (1 + (1 + s) * m)

    fd = -(g**2) * (quad(g + h) - quad(g - h)) / (2 * h)
    assert at.ridge_memorisation_error(c, s, g) == pytest.approx(fd, rel=1e-7)


def test_ridge_memorisation_error_limits():
    # gamma -> 0: (1-c)/(1+s) below interpolation, 0 above; s = 0: gamma^2 (1/n) Tr Q^2
    assert at.ridge_memorisation_error(0.5, 3.0, 1e-9) == pytest.approx(0.125, abs=1e-6)
    assert at.ridge_memorisation_error(2.0, 1.0, 1e-9) < 1e-6
    c, g = 0.5, 0.3
    tau_n = -(at.coresolvent_stieltjes(c, g + 1e-6) - at.coresolvent_stieltjes(c, g - 1e-6)) / 2e-6
    assert at.ridge_memorisation_error(c, 0.0, g) == pytest.approx(g**2 * tau_n, rel=1e-6)
    # large gamma: nothing is fitted
    assert at.ridge_memorisation_error(0.5, 1.0, 1e6) == pytest.approx(1.0, abs=1e-5)


# spec 2.5 (A): n = 1024, (p, s, gamma, theory); tolerance 3 se or 0.01 absolute
RIDGE_ROWS = [(512, 0.0, 1e-3, 0.5000), (512, 1.0, 1e-3, 0.2500), (2048, 1.0, 0.1, 0.0070),
              (1024, 4.0, 0.1, 0.0318), (512, 1.0, 1.0, 0.3886)]


@pytest.mark.parametrize("p, s, gamma, theory", RIDGE_ROWS)
def test_ridge_memorisation_checkpoints(p, s, gamma, theory):
    n, seeds = 1024, 4
    assert at.ridge_memorisation_error(p / n, s, gamma) == pytest.approx(theory, abs=5e-5)
    err = [at.memorisation_error(*at.signal_tokens(n, p, s, rng=k)[:2], gamma) for k in range(seeds)]
    se = np.std(err, ddof=1) / np.sqrt(seeds)
    assert abs(np.mean(err) - theory) <= max(3 * se, 0.01)


def test_attention_kernel_definition_and_low_rank_weight():
    rng = np.random.default_rng(3)
    p, n = 20, 6
    X, u = rng.standard_normal((p, n)), rng.standard_normal(p)
    W = np.eye(p) + 0.7 * np.sqrt(p) * np.outer(u, u) / (u @ u)
    K = at.attention_kernel(X, np.tanh, direction=u, theta=0.7)
    expected = np.tanh(X.T @ W @ X / np.sqrt(p)) / np.sqrt(p)
    np.fill_diagonal(expected, 0.0)
    assert np.allclose(K, expected)
    with pytest.raises(ValueError, match="direction"):
        at.attention_kernel(X, np.tanh, theta=1.0)


# spec 2.5 (B): n = 1000, p = 500, tanh; |Delta g| <= 0.015 and L1 <= 0.1
G_ROWS = [(0.5 + 0.5j, -0.4206 + 0.6347j), (-0.6 + 0.2j, 0.3473 + 1.9574j), (1.5 + 0.2j, -0.4898 + 0.3471j)]


def test_attention_kernel_spectrum_checkpoints():
    n, p = 1000, 500
    _, a1, nu = rmt.hermite_coefficients(np.tanh)
    z = np.array([zz for zz, _ in G_ROWS])
    th = at.attention_kernel_stieltjes(z, n / p, a1, nu)
    assert np.max(np.abs(th - np.array([g for _, g in G_ROWS]))) < 2e-4
    X = np.random.default_rng(4).standard_normal((p, n))
    eig = np.linalg.eigvalsh(at.attention_kernel(X))
    assert np.max(np.abs(rmt.empirical_stieltjes(eig, z) - th)) <= 0.015
    edges = np.linspace(-1.2, 3.2, 41)
    mids = (edges[1:] + edges[:-1]) / 2
    hist, _ = np.histogram(eig, bins=edges, density=True)
    dens = at.attention_kernel_stieltjes(mids + 0.02j, n / p, a1, nu).imag / np.pi
    assert np.sum(np.abs(hist - dens)) * (edges[1] - edges[0]) <= 0.1


def test_gaussian_equivalent_kernel_same_spectrum():
    n, p = 600, 300
    _, a1, nu = rmt.hermite_coefficients(np.tanh)
    X = np.random.default_rng(5).standard_normal((p, n))
    eig = np.linalg.eigvalsh(at.gaussian_equivalent_kernel(X, a1, nu, rng=6))
    z = np.array([0.5 + 0.5j, 1.5 + 0.2j])
    th = at.attention_kernel_stieltjes(z, n / p, a1, nu)
    assert np.max(np.abs(rmt.empirical_stieltjes(eig, z) - th)) <= 0.02


def test_attention_gap_and_reversal_signs():
    # spec 2.5 (C), reduced to 6 seeds: the gap at theta = 0 is positive, the aligned one negative
    n, p, seeds = 512, 256, 6
    u = np.eye(p)[0]
    diffs = {0.0: [], 1.0: []}
    for k in range(seeds):
        X, y, _ = at.signal_tokens(n, p, 1.0, rng=100 + k)
        base = at.memorisation_error(X, y, 0.01)
        for theta in diffs:
            K = at.attention_kernel(X, np.tanh, direction=u, theta=theta)
            diffs[theta].append(at.memorisation_error(X @ K, y, 0.01) - base)
    assert np.mean(diffs[0.0]) == pytest.approx(0.0208, abs=0.012)
    assert np.mean(diffs[1.0]) == pytest.approx(-0.0537, abs=0.015)
