"""Tests of rmt.hermite_coefficients and rmt.semicircle_free_convolution (appended for Chapter 5)."""

import numpy as np
import pytest
from scipy import integrate

from seqrmt import rmt
from seqrmt import ConvergenceError


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


A0_RELU = 1 / np.sqrt(2 * np.pi)  # E max(xi, 0) = E |xi| / 2


@pytest.mark.parametrize("n_nodes", [20, 101, 250])
@pytest.mark.parametrize("f, exact", [
    (lambda x: np.maximum(x, 0.0), (A0_RELU, 0.5, 0.5)),  # a1 = E xi^2 1[xi>0], nu = E xi^2 1[xi>0]
    (lambda x: np.maximum(x, 0.0) - A0_RELU, (0.0, 0.5, 0.5 - A0_RELU**2)),  # centred (5.2)
    (np.abs, (2 * A0_RELU, 0.0, 1.0)),
    (lambda x: np.where(x > 0, x, 0.1 * x), (0.9 * A0_RELU, 0.55, 0.505)),  # leaky ReLU
    (np.sign, (0.0, 2 * A0_RELU, 1.0)),  # a jump at 0
], ids=["relu", "centred-relu", "abs", "leaky-relu", "sign"])
def test_hermite_coefficients_kink_at_zero_closed_forms(f, exact, n_nodes):
    # the closed forms of E f, E xi f, E f^2 for piecewise-linear f with a kink (or jump) at 0;
    # a Gauss-Hermite rule on the whole line is off by 1e-3 to 1e-2 here (the old method)
    assert rmt.hermite_coefficients(f, n_nodes) == pytest.approx(exact, abs=1e-11)


def test_hermite_coefficients_smooth_closed_form():
    # f = exp: E e^xi = e^(1/2), E xi e^xi = e^(1/2), E e^(2 xi) = e^2
    exact = (np.exp(0.5), np.exp(0.5), np.exp(2.0))
    assert rmt.hermite_coefficients(np.exp) == pytest.approx(exact, rel=1e-13)
    # f = cos(x): E cos = e^(-1/2), E xi cos = 0, E cos^2 = (1 + e^(-2)) / 2
    exact = (np.exp(-0.5), 0.0, (1 + np.exp(-2.0)) / 2)
    assert rmt.hermite_coefficients(np.cos, 30) == pytest.approx(exact, abs=1e-13)


def test_half_line_rule_integrates_half_gaussian_moments():
    # int_0^inf x^k phi(x) dx = 2^(k/2 - 1) Gamma((k + 1) / 2) / sqrt(pi), exact for k < 2 n
    from scipy.special import gamma

    for n in (5, 40):
        x, w = rmt._half_line_gauss_rule(n)
        assert np.all(x > 0) and np.all(w > 0) and np.all(np.diff(x) > 0)
        for k in range(2 * n):
            exact = 2 ** (k / 2 - 1) * gamma((k + 1) / 2) / np.sqrt(np.pi)
            assert w @ x**k == pytest.approx(exact, rel=1e-12), (n, k)


def test_hermite_coefficients_kink_away_from_zero_converges():
    # hard tanh (kinks at +-1): only algebraic convergence, as the docstring says
    f = lambda x: np.clip(x, -1.0, 1.0)  # noqa: E731
    phi = lambda x: np.exp(-x * x / 2) / np.sqrt(2 * np.pi)  # noqa: E731
    nu = 2 * (integrate.quad(lambda x: x**2 * phi(x), 0, 1)[0] + integrate.quad(phi, 1, np.inf)[0])
    errors = [abs(rmt.hermite_coefficients(f, n)[2] - nu) for n in (20, 101, 250)]
    assert errors[2] < errors[1] < errors[0] and 1e-5 < errors[1] < 1e-3


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
