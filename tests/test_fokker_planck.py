"""Tests of seqrmt.dyson.fokker_planck (Chapter 4, Section 3.5 of the spec)."""

import numpy as np
import pytest

from seqrmt.dyson import fokker_planck as fp
from seqrmt.dyson import rbm

MU2, KAPPA = 9.0, 4.0


def rbm_grid(n=4001):
    return np.linspace(0.0, MU2, n)[1:-1]


def rbm_V(x):
    return rbm.rbm_potential(x, KAPPA, MU2)


@pytest.mark.parametrize("omega,g2", [(1.0, 0.5), (0.3125, 0.01), (2.0, 0.1)])
def test_ornstein_uhlenbeck_spectrum(omega, g2):
    # V = omega x^2 / 2: dx = -(omega/2) x dt + g dB has relaxation rates E_n = n omega / 2.
    width = np.sqrt(g2 / omega)
    x = np.linspace(-12 * width, 12 * width, 3001)
    E, psi = fp.fokker_planck_spectrum(lambda y: 0.5 * omega * y**2, g2, x, 6)
    np.testing.assert_allclose(E, 0.5 * omega * np.arange(6), atol=2e-4 * omega)
    h = x[1] - x[0]
    ps = fp.stationary_density(lambda y: 0.5 * omega * y**2, g2, x)
    assert np.max(np.abs(psi[:, 0] - np.sqrt(ps))) < 1e-4 * np.sqrt(ps).max()
    # orthonormality of the eigenfunctions on the grid
    np.testing.assert_allclose(psi.T @ psi * h, np.eye(6), atol=1e-10)
    # stationary variance g^2 / omega
    assert abs(np.sum(x**2 * ps) * h - g2 / omega) < 1e-6 * g2 / omega


def test_rbm_ground_state_is_sqrt_Ps():
    x = rbm_grid()
    for g2 in (0.01, 0.001):
        E, psi = fp.fokker_planck_spectrum(rbm_V, g2, x, 3)
        ps = fp.stationary_density(rbm_V, g2, x)
        assert abs(E[0]) < 1e-4 * E[1]
        assert np.max(np.abs(psi[:, 0] - np.sqrt(ps))) < 1e-4 * np.sqrt(ps).max()


def test_ground_energy_converges_at_second_order():
    # E_0 = 0 exactly in the continuum; the finite-difference error must shrink ~4x per halving of h.
    errs = [abs(fp.fokker_planck_spectrum(rbm_V, 0.01, rbm_grid(n), 1)[0][0]) for n in (1001, 2001, 4001)]
    ratios = np.array(errs[:-1]) / np.array(errs[1:])
    assert np.all((ratios > 3.0) & (ratios < 5.0)), ratios


def test_rbm_well_states_are_harmonic_at_small_noise():
    # States localised at x* = mu2 - kappa have E_n -> n Omega / 2, Omega = (mu2 - kappa) / kappa^2;
    # states localised at the unstable point x = 0 (Dirichlet end) have E -> c, 2c with c = 1/kappa - 1/mu2.
    x = rbm_grid(8001)
    h = x[1] - x[0]
    E, psi = fp.fokker_planck_spectrum(rbm_V, 1e-4, x, 5)
    mean_x = np.sum(x[:, None] * psi**2, axis=0) * h
    well = mean_x > 2.0
    omega = rbm.rbm_curvature(KAPPA, MU2)
    np.testing.assert_allclose(E[well][:3], omega / 2 * np.arange(3), atol=3e-3 * omega)
    c = 1 / KAPPA - 1 / MU2
    np.testing.assert_allclose(E[~well][:2], c * np.arange(1, 3), rtol=2e-2)


def test_array_and_callable_potentials_agree():
    x = rbm_grid(2001)
    E1, _ = fp.fokker_planck_spectrum(rbm_V, 0.01, x, 4)
    E2, _ = fp.fokker_planck_spectrum(rbm_V(x), 0.01, x, 4)
    np.testing.assert_allclose(E1, E2, atol=1e-4)


def test_operator_matches_spectrum():
    x = np.linspace(-3, 3, 401)
    H = fp.fokker_planck_operator(lambda y: y**2, 0.5, x).toarray()
    np.testing.assert_allclose(H, H.T)
    E, psi = fp.fokker_planck_spectrum(lambda y: y**2, 0.5, x, 4)
    np.testing.assert_allclose(np.linalg.eigvalsh(H)[:4], E, atol=1e-10)


def test_potential_derivatives():
    x = np.linspace(0.5, 8.5, 801)
    _, dV, d2V = fp.potential_on_grid(rbm_V, x)
    np.testing.assert_allclose(-dV, rbm.rbm_drift(x, KAPPA, MU2), rtol=2e-4, atol=1e-5)
    d2_exact = -1 / KAPPA + MU2 / (MU2 - x) ** 2
    np.testing.assert_allclose(d2V, d2_exact, rtol=1e-3, atol=1e-5)


def test_value_errors():
    x = np.linspace(-1, 1, 11)
    V = lambda y: y**2  # noqa: E731
    with pytest.raises(ValueError, match="g2"):
        fp.fokker_planck_spectrum(V, 0.0, x, 2)
    with pytest.raises(ValueError, match="n_states"):
        fp.fokker_planck_spectrum(V, 1.0, x, 0)
    with pytest.raises(ValueError, match="n_states"):
        fp.fokker_planck_spectrum(V, 1.0, x, 12)
    with pytest.raises(ValueError, match="x_grid"):
        fp.fokker_planck_spectrum(V, 1.0, np.array([0.0, 0.1, 0.3, 0.4]), 2)
    with pytest.raises(ValueError, match="x_grid"):
        fp.fokker_planck_operator(V, 1.0, np.array([0.0, np.nan, 1.0]))
    with pytest.raises(ValueError, match="V"):
        fp.fokker_planck_spectrum(np.ones(5), 1.0, x, 2)
    with pytest.raises(ValueError, match="V"):
        fp.potential_on_grid(lambda y: np.where(y > 0.95, np.nan, y**2), x)
    with pytest.raises(ValueError, match="g2"):
        fp.stationary_density(V, -1.0, x)
    with pytest.raises(ValueError, match="g2"):
        fp.fokker_planck_potential(V, np.nan, x)


def test_mean_relaxation_ornstein_uhlenbeck():
    # V = omega x^2 / 2: <x>(t) = x0 e^{-omega t / 2}, <x^2>(t) = x0^2 e^{-omega t} + (g2 / omega)(1 - e^{-omega t})
    omega, g2, x0 = 0.5, 0.1, 1.2
    x = np.linspace(-6, 6, 3001)
    t = np.array([0.5, 1.0, 3.0, 10.0])
    V = lambda y: 0.5 * omega * y**2  # noqa: E731
    np.testing.assert_allclose(fp.fokker_planck_mean(V, g2, x, x0, t, 60), x0 * np.exp(-omega * t / 2),
                               atol=2e-4)
    m2 = fp.fokker_planck_mean(V, g2, x, x0, t, 60, f=lambda y: y**2)
    np.testing.assert_allclose(m2, x0**2 * np.exp(-omega * t) + g2 / omega * (1 - np.exp(-omega * t)), atol=2e-4)


def test_mean_relaxation_rbm_against_euler_maruyama():
    # independent check: an Euler-Maruyama ensemble of dx = -V'/2 dt + g dB from x0
    g2, x0 = 0.02, 4.0
    t = np.array([1.0, 4.0, 10.0])
    m = fp.fokker_planck_mean(rbm_V, g2, rbm_grid(3001), x0, t, 60)
    rng = np.random.default_rng(5)
    dt, n_paths = 0.005, 20000
    y = np.full(n_paths, x0)
    out = []
    for n in range(1, int(round(t[-1] / dt)) + 1):
        y = y + 0.5 * rbm.rbm_drift(y, KAPPA, MU2) * dt + np.sqrt(g2 * dt) * rng.standard_normal(n_paths)
        if np.any(np.isclose(n * dt, t)):
            out.append((y.mean(), y.std() / np.sqrt(n_paths)))
    out = np.array(out)
    # Euler bias O(dt) is far below the Monte Carlo error here
    assert np.all(np.abs(m - out[:, 0]) < 4 * out[:, 1] + 1e-3), (m, out)


def test_mean_value_errors():
    x = np.linspace(-1, 1, 101)
    V = lambda y: y**2  # noqa: E731
    with pytest.raises(ValueError, match="x0"):
        fp.fokker_planck_mean(V, 1.0, x, 2.0, [1.0])
    with pytest.raises(ValueError, match="x0"):
        fp.fokker_planck_mean(V, 1e-3, x, 0.9, [1.0])
    with pytest.raises(ValueError, match="times"):
        fp.fokker_planck_mean(V, 1.0, x, 0.0, [-1.0])
    with pytest.raises(ValueError, match="f"):
        fp.fokker_planck_mean(V, 1.0, x, 0.0, [1.0], f=lambda y: 1.0)


# ---------------------------------------------------------------- helpers added for short notebook cells
def test_mean_position_and_density_moments_of_a_gaussian():
    x = np.linspace(-6, 8, 2801)
    p = fp.stationary_density(lambda y: (y - 1.0) ** 2 / 2, 0.3, x)  # N(1, 0.3)
    m, v = fp.density_moments(p, x)
    assert m == pytest.approx(1.0, abs=1e-8) and v == pytest.approx(0.3, rel=1e-6)
    psi = np.sqrt(p)[:, None] * np.ones(3)  # normalised: sum psi^2 h = 1
    np.testing.assert_allclose(fp.mean_position(psi, x), 1.0, atol=1e-8)
    with pytest.raises(ValueError, match="psi"):
        fp.mean_position(psi[:-1], x)
    with pytest.raises(ValueError, match="p"):
        fp.density_moments(-p, x)


def test_decay_rate_of_ou_relaxation():
    """<x>(t) of an Ornstein-Uhlenbeck process, from the spectral sum, decays at rate E_1 = 1."""
    x = np.linspace(-5, 5, 2001)
    t = np.linspace(0, 6, 61)
    m = fp.fokker_planck_mean(lambda y: y**2, 0.5, x, 1.0, t, n_states=30)  # x0 exp(-t)
    assert fp.decay_rate(t, -m, 0.0, (1, 5)) == pytest.approx(1.0, rel=1e-4)
    with pytest.raises(ValueError, match="window"):
        fp.decay_rate(t, -m, 0.0, (1, 1.05))  # a single time inside
    with pytest.raises(ValueError, match="y_inf"):
        fp.decay_rate(t, m, 0.0, (1, 5))


def test_ensemble_decay_rate_equals_inline_jackknife():
    from seqrmt.dyson import universality as U

    rng = np.random.default_rng(10)
    t = np.linspace(0, 30, 76)
    y = 2 - 1.5 * np.exp(-0.3 * t)[:, None] + 0.05 * rng.normal(size=(76, 80))
    rate, se = fp.ensemble_decay_rate(t, y, (2, 12), n_late=16, n_groups=20)

    def inline(rows):
        m = rows.mean(axis=0)
        win = (t >= 2) & (t <= 12)
        return -np.polyfit(t[win], np.log(m[-16:].mean() - m[win]), 1)[0]

    ref = U.jackknife(y.T, inline, n_groups=20)
    np.testing.assert_allclose([rate, se], ref, rtol=1e-10)
    assert abs(rate - 0.3) < 5 * se
    with pytest.raises(ValueError, match="samples"):
        fp.ensemble_decay_rate(t, y[:-1], (2, 12))


def test_plot_levels_draws_potential_and_levels():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = np.linspace(-4, 4, 401)
    E, _ = fp.fokker_planck_spectrum(lambda y: y**2, 0.5, x, 3)
    fig, ax = plt.subplots()
    fp.plot_levels(ax, lambda y: y**2, 0.5, x, E)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), fp.fokker_planck_potential(lambda y: y**2, 0.5, x))
    assert [line.get_ydata()[0] for line in ax.lines[1:]] == pytest.approx(list(E))
    plt.close(fig)
