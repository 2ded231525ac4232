"""The PLS-SVD law of Chapter 5.5 (seqrmt.frontiers.pls.pls_spike, closed form): the spec's checkpoints
(section 7.4), the transforms against the empirical noise, an independent route for one-sided signals,
and simulations of the two views."""

import numpy as np
import pytest

from seqrmt.frontiers import pls


def _pls_svd(X, Y):
    U, sv, Vt = np.linalg.svd(X.T @ Y / X.shape[0], full_matrices=False)
    return sv[0], U[:, 0], Vt[0]


def _pca_overlap(t, c):
    return (1 - c / t**2) / (1 + c / t) if t > np.sqrt(c) else 0.0


def test_noise_edge_and_threshold():
    noise = pls.pls_spike(0.0, 0.0, 0.5, 0.75)
    assert not noise.detected and noise.singular_value == noise.edge
    assert noise.edge == pytest.approx(1.8990, abs=2e-4)  # spec 7.4
    # spec prints 1.4297 (a quadrature); the closed form, and 1600-node quadrature, give 1.42886
    assert noise.threshold == pytest.approx(1.4289, abs=2e-4)
    theta_c = (-1.25 + np.sqrt(1.25**2 - 4 * (0.375 - noise.threshold))) / 2
    assert theta_c == pytest.approx(0.577, abs=1e-3) and theta_c < np.sqrt(0.5)


def test_transforms_against_the_empirical_noise():
    # in the parameter t: z^2 = (1+t)(t+cx)(t+cy)/t, phi_L = (t+cx)/(cx z), phi_R = (t+cy)/(cy z)
    cx, cy = 0.5, 0.75
    rng = np.random.default_rng(0)
    n, p, q = 800, 400, 600
    sv = np.linalg.svd(rng.standard_normal((n, p)).T @ rng.standard_normal((n, q)) / n, compute_uv=False)
    for t in (0.02, 0.1):
        z = np.sqrt((1 + t) * (t + cx) * (t + cy) / t)
        phi_l, phi_r = (t + cx) / (cx * z), (t + cy) / (cy * z)
        assert p * phi_l - q * phi_r == pytest.approx((p - q) / z, rel=1e-12)
        assert np.sum(z / (z * z - sv**2)) / p == pytest.approx(phi_l, rel=5e-3)
        assert (np.sum(z / (z * z - sv**2)) + (q - p) / z) / q == pytest.approx(phi_r, rel=5e-3)
    # and the edge is the largest singular value of the noise, up to Tracy-Widom fluctuations
    assert sv[0] == pytest.approx(pls.pls_spike(0, 0, cx, cy).edge, abs=0.05)


def test_threshold_formula_and_continuity():
    # sigma^2 just above and below 1 / D(b+): detected or not, the overlaps vanish at the threshold
    cx, cy = 0.5, 0.75
    T = pls.pls_spike(0, 0, cx, cy).threshold
    theta_c = (-(cx + cy) + np.sqrt((cx - cy) ** 2 + 4 * T)) / 2  # (t + cx)(t + cy) = T
    above, below = (pls.pls_spike(theta_c * f, theta_c * f, cx, cy) for f in (1 + 1e-7, 1 - 1e-7))
    assert above.detected and not below.detected
    assert above.overlap_u < 1e-5 and above.singular_value == pytest.approx(above.edge, abs=1e-3)


def test_below_threshold_and_pca():
    sp = pls.pls_spike(0.2, 0.2, 0.5, 0.75)
    assert not sp.detected and sp.overlap_u == 0.0


def test_overlaps_increase_with_signal():
    a, b = pls.pls_spike(1.0, 1.0, 0.5, 0.75), pls.pls_spike(2.0, 2.0, 0.5, 0.75)
    assert a.overlap_u < b.overlap_u < 1 and a.singular_value < b.singular_value


# spec 7.4: n = 800, p = 400, q = 600; (t_x, t_y, s1, <u_hat,u>^2, <v_hat,v>^2)
PLS_ROWS = [(1.0, 1.0, 2.0683, 0.4411, 0.3466), (2.0, 2.0, 2.8737, 0.7273, 0.6383),
            (0.5, 3.0, 2.2940, 0.4000, 0.6013)]


@pytest.mark.parametrize("t_x, t_y, s1, ou, ov", PLS_ROWS)
def test_pls_checkpoints(t_x, t_y, s1, ou, ov):
    sp = pls.pls_spike(t_x, t_y, 0.5, 0.75)
    assert (sp.singular_value, sp.overlap_u, sp.overlap_v) == pytest.approx((s1, ou, ov), abs=2e-4)
    rng = np.random.default_rng(7)
    mc = np.array([[r[0], (r[1] @ u) ** 2, (r[2] @ v) ** 2]
                   for X, Y, u, v in (pls.two_view_data(800, 400, 600, t_x, t_y, rng) for _ in range(12))
                   for r in [_pls_svd(X, Y)]])
    mean, se = mc.mean(0), mc.std(0, ddof=1) / np.sqrt(len(mc))
    assert abs(mean[0] - s1) <= 0.04  # spec tolerance (1 % downward finite-size bias)
    # spec: within 0.03; near the threshold, (1, 1), 12 draws give se ~ 0.02, hence 3 se
    assert abs(mean[1] - ou) <= max(0.03, 3 * se[1]) and abs(mean[2] - ov) <= max(0.03, 3 * se[2])


# ------------------------------------------------------------------ one-sided signals (issue 22 item 5)


def _nested_bbp(t, c_sig, c_other):
    """One-sided limits (s1, overlap) from an independent route: with no signal in the other view,
    S S^T = c_other Sigma^{1/2} W Sigma^{1/2}, W white Wishart of ratio c_sig / c_other and
    Sigma = X^T X / n a spiked sample covariance (outlier l = (1+t)(1+c/t), overlap with u the PCA
    formula). Baik-Silverstein: the outlier is psi(l) = l + c' l int t/(l-t) dMP_c(t), and its
    eigenvector overlap with Sigma's top eigenvector is l psi'(l)/psi(l)."""
    ell, cp = (1 + t) * (1 + c_sig / t), c_sig / c_other

    def psi(x):  # closed-form Marchenko-Pastur Stieltjes transform of ratio c_sig at x > edge
        g = (x - 1 + c_sig - np.sqrt((x - 1 - c_sig) ** 2 - 4 * c_sig)) / (2 * c_sig * x)
        return x + cp * x * (-1 + x * g)

    h = 1e-6 * ell
    dpsi = (psi(ell + h) - psi(ell - h)) / (2 * h)
    return np.sqrt(c_other * psi(ell)), _pca_overlap(t, c_sig) * ell * dpsi / psi(ell)


@pytest.mark.parametrize("t_x, t_y", [(4.0, 0.0), (0.0, 4.0)])
def test_one_sided_signal_is_detected(t_x, t_y):
    """Signal in one view only: still an outlier and a non-zero overlap on that side (the old
    code returned 'not detected' with both overlaps 0 whenever t_x t_y = 0)."""
    c_x, c_y = 0.5, 0.75
    sp = pls.pls_spike(t_x, t_y, c_x, c_y)
    assert sp.detected and (t_x + c_x) * (t_y + c_y) > sp.threshold
    signal_x = t_y == 0.0
    s1_ind, ov_ind = _nested_bbp(t_x, c_x, c_y) if signal_x else _nested_bbp(t_y, c_y, c_x)
    mine, other = (sp.overlap_u, sp.overlap_v) if signal_x else (sp.overlap_v, sp.overlap_u)
    assert (sp.singular_value, mine, other) == pytest.approx((s1_ind, ov_ind, 0.0), abs=1e-7)
    rng = np.random.default_rng(3)
    mc = []
    for _ in range(30):
        X, Y, u, v = pls.two_view_data(800, 400, 600, t_x, t_y, rng)
        s1, u_hat, v_hat = _pls_svd(X, Y)
        mc.append([s1, (u_hat @ u) ** 2, (v_hat @ v) ** 2])
    mc = np.array(mc)
    mean, se = mc.mean(0), mc.std(0, ddof=1) / np.sqrt(len(mc))
    theory = np.array([sp.singular_value, sp.overlap_u, sp.overlap_v])
    # 4 se of 30 draws, plus 1 % for the downward finite-size bias of s1 at n = 800 (spec 7.4);
    # the no-signal side: overlap of a random unit vector, O(1/n), below 0.01
    assert abs(mean[0] - theory[0]) <= 4 * se[0] + 0.01 * theory[0]
    k = 1 if signal_x else 2
    assert abs(mean[k] - theory[k]) <= 4 * se[k]
    assert mean[3 - k] < 0.01 and theory[3 - k] == 0.0


def test_closed_form_equals_the_silverstein_quadrature():
    # the book's earlier route: m_L solves w = -1/m + int t/(1 + cx t m) dH(t), H = MP(cy) on n points;
    # phi_L(z) = -z m_L(z^2). Check the closed form's z(t), phi_L(t) on that equation by quadrature.
    cx, cy = 0.5, 0.75
    lo, hi = (1 - np.sqrt(cy)) ** 2, (1 + np.sqrt(cy)) ** 2
    x, w = np.polynomial.legendre.leggauss(400)
    phi = np.pi * (x + 1) / 2
    tt = (hi + lo) / 2 - (hi - lo) / 2 * np.cos(phi)
    ww = (np.pi / 2) * w * ((hi - lo) / 2 * np.sin(phi)) ** 2 / (2 * np.pi * tt)
    for t in (0.01, 0.05, 0.2):
        z2 = (1 + t) * (t + cx) * (t + cy) / t
        m = -(t + cx) / (cx * z2)  # m_L = -phi_L / z
        rhs = -1 / m + np.sum(ww * tt / (1 + cx * tt * m))  # the atom of H at 0 adds 0 * ... = 0
        assert rhs == pytest.approx(z2, rel=1e-10)
