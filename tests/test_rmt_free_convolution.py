"""Tests of rmt.hermite_coefficients and rmt.semicircle_free_convolution (appended for Chapter 5)."""

import numpy as np
import pytest
from scipy import integrate

from seqrmt import rmt
from seqrmt.utils import ConvergenceError


def test_hermite_coefficients_polynomials_exact():
    # f = x^3: a0 = 0, a1 = E x^4 = 3, nu = E x^6 = 15
    a0, a1, nu = rmt.hermite_coefficients(lambda x: x**3, n_nodes=10)
    assert (a0, a1, nu) == pytest.approx((0.0, 3.0, 15.0), abs=1e-10)
    # f = x^2 - 1 (second Hermite polynomial): a0 = a1 = 0, nu = 2
    assert rmt.hermite_coefficients(lambda x: x**2 - 1, 10) == pytest.approx((0, 0, 2), abs=1e-10)


def test_hermite_coefficients_tanh_against_integral():
    phi = lambda x: np.exp(-x * x / 2) / np.sqrt(2 * np.pi)  # noqa: E731
    a1 = integrate.quad(lambda x: x * np.tanh(x) * phi(x), -np.inf, np.inf)[0]
    nu = integrate.quad(lambda x: np.tanh(x) ** 2 * phi(x), -np.inf, np.inf)[0]
    a0_h, a1_h, nu_h = rmt.hermite_coefficients(np.tanh)
    assert abs(a0_h) < 1e-12
    assert a1_h == pytest.approx(a1, abs=1e-8) and nu_h == pytest.approx(nu, abs=1e-8)
    assert (round(a1_h, 4), round(nu_h, 4)) == (0.6057, 0.3943)  # spec 2.2(B)


def test_hermite_coefficients_relu_closed_form():
    a0, a1, nu = rmt.hermite_coefficients(lambda x: np.maximum(x, 0.0), n_nodes=250)
    assert a0 == pytest.approx(1 / np.sqrt(2 * np.pi), abs=1e-3)
    assert a1 == pytest.approx(0.5, abs=1e-8) and nu == pytest.approx(0.5, abs=1e-8)


def test_hermite_coefficients_rejects_bad_input():
    with pytest.raises(ValueError, match="n_nodes"):
        rmt.hermite_coefficients(np.tanh, n_nodes=1000)
    with pytest.raises(ValueError, match="f"):
        rmt.hermite_coefficients(lambda x: np.zeros(3))


@pytest.mark.parametrize("z", [0.3 + 0.5j, -2.5 + 0.01j, 4.0 + 1.0j])
def test_free_convolution_of_two_semicircles(z):
    g = rmt.semicircle_free_convolution(lambda w: rmt.semicircle_stieltjes(w, 1.5), 0.5, np.array([z]))
    assert abs(g[0] - rmt.semicircle_stieltjes(np.array([z]), 2.0)[0]) < 1e-8


def test_free_convolution_with_point_mass_is_shifted_semicircle():
    # mu_A = delta_1: the result is the semicircle centred at 1
    z = np.array([1.2 + 0.3j, -0.5 + 0.05j])
    g = rmt.semicircle_free_convolution(lambda w: 1.0 / (1.0 - w), 1.0, z)
    assert np.max(np.abs(g - rmt.semicircle_stieltjes(z - 1.0, 1.0))) < 1e-8


def test_free_convolution_mp_density_integrates_to_one_and_matches_matrix():
    rng = np.random.default_rng(0)
    p, n = 400, 800
    Z = rng.standard_normal((p, n))
    H = rng.standard_normal((p, p))
    M = Z @ Z.T / n + (H + H.T) / np.sqrt(2 * p) * np.sqrt(0.3)
    z = np.array([1.0 + 0.2j, 0.2 + 0.2j, 2.5 + 0.2j])
    emp = rmt.empirical_stieltjes(np.linalg.eigvalsh(M), z)
    th = rmt.semicircle_free_convolution(lambda w: rmt.mp_stieltjes(w, 0.5), 0.3, z)
    assert np.max(np.abs(emp - th)) < 0.02
    x = np.linspace(-2.0, 4.5, 3001)
    dens = rmt.semicircle_free_convolution(lambda w: rmt.mp_stieltjes(w, 0.5), 0.3, x + 1e-3j).imag / np.pi
    assert np.min(dens) > -1e-12
    assert np.trapezoid(dens, x) == pytest.approx(1.0, abs=5e-3)


def test_free_convolution_raises_without_convergence():
    with pytest.raises(ConvergenceError):
        rmt.semicircle_free_convolution(lambda w: rmt.mp_stieltjes(w, 0.5), 0.3, np.array([0.2 + 1e-3j]),
                                        max_iter=2)


def test_free_convolution_rejects_lower_half_plane():
    with pytest.raises(ValueError, match="z"):
        rmt.semicircle_free_convolution(lambda w: 1.0 / (1.0 - w), 1.0, np.array([1.0 - 0.1j]))
