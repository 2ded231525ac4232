"""Logits, embeddings and their geometry (``seqrmt.ntp``): the shared loss and gradients, the closed
forms of the max-margin geometry, the balanced factors and the similarity measures; and the laws of
Part 3 that they serve (the GD rates of the linear model, the UFM reaching the convex path, the
excess loss lambda |L^mm|_*), each checked with a loop written here.
"""

from math import comb

import numpy as np
import pytest

from seqrmt.ntp import (
    NTPData,
    SubspaceF,
    centered_support,
    cosine_similarity,
    in_support_logits,
    k_subset_supports,
    linear_ntp_example,
    logit_path,
    ntp_loss_and_gradients,
    ntp_svm_frobenius,
    offdiagonal_correlation,
    structural_similarity,
    svd_factors,
    w_star,
)


def small_problem(seed=0, V=4, k=2):
    """All k-subsets of [V] as supports, random counts on {1..4}."""
    S = k_subset_supports(V, k)
    return NTPData.from_counts(S * np.random.default_rng(seed).integers(1, 5, S.shape))


def test_loss_and_gradients_against_finite_differences_and_cross_entropy():
    d = small_problem(0)
    rng = np.random.default_rng(5)
    W, H = rng.standard_normal((4, 3)), rng.standard_normal((3, d.m))
    lam, h = 0.3, 1e-6
    f, gW, gH = ntp_loss_and_gradients(W, H, d.P, d.pi, lam)
    penalty = 0.5 * lam * (np.sum(W**2) + np.sum(H**2))
    assert f == pytest.approx(d.cross_entropy(W @ H) - d.entropy() + penalty, abs=1e-12)
    for X, g, which in ((W, gW, 0), (H, gH, 1)):
        fd = np.zeros_like(X)
        for idx in np.ndindex(*X.shape):
            E = np.zeros_like(X)
            E[idx] = h
            plus = (W + E, H) if which == 0 else (W, H + E)
            minus = (W - E, H) if which == 0 else (W, H - E)
            fd[idx] = (ntp_loss_and_gradients(*plus, d.P, d.pi, lam)[0]
                       - ntp_loss_and_gradients(*minus, d.P, d.pi, lam)[0]) / (2 * h)
        np.testing.assert_allclose(g, fd, atol=1e-8)
    # the excess loss stays accurate where CE and H agree to 15 digits
    L_far = np.where(d.S > 0, np.log(np.where(d.S > 0, d.P, 1)), -40.0)
    U, s, Qt = np.linalg.svd(L_far, full_matrices=False)
    gap = ntp_loss_and_gradients(U * s, Qt, d.P, d.pi)[0]
    assert gap == pytest.approx(d.pi @ np.log1p((d.V - d.support_sizes) * np.exp(-40.0)), rel=1e-6)


def test_gd_rates_of_the_linear_model():
    """prop-p3-gd-rates on checkpoint C-3 (eta = 0.2): (CE - H) eta k / |W^mm|^2 -> 1 and
    |P_F W_k - W*| = 9.81e-2, 8.81e-3 at k = 1e3, 1e4 (the 1/k rate)."""
    Hbar, d = linear_ntp_example(0)
    Ws, Wmm, F = w_star(Hbar, d.P), ntp_svm_frobenius(Hbar, d.S), SubspaceF(Hbar, d.S)
    W, eta, out = np.zeros((d.V, Hbar.shape[0])), 0.2, {}
    for k in range(1, 10_001):
        gap, grad, _ = ntp_loss_and_gradients(W, Hbar, d.P, d.pi)
        W = W - eta * grad
        if k in (1000, 10_000):
            out[k] = (ntp_loss_and_gradients(W, Hbar, d.P, d.pi)[0], np.linalg.norm(F.project(W) - Ws))
    assert out[1000][0] == pytest.approx(2.45e-2, rel=0.02)
    assert out[10_000][0] == pytest.approx(2.35e-3, rel=0.02)
    assert out[1000][1] == pytest.approx(9.81e-2, rel=0.02)
    assert out[10_000][1] == pytest.approx(8.81e-3, rel=0.02)
    assert out[10_000][0] * eta * 10_000 / np.sum(Wmm**2) == pytest.approx(1.0, abs=0.05)


@pytest.fixture(scope="module")
def ufm_runs():
    """GD on the UFM (d = 6 >= V = 4) with the shared gradients, and the convex path at the same lambda."""
    d = small_problem(3)
    rng = np.random.default_rng(1)
    out = {}
    for lam in (1e-2, 1e-3):
        W, H = 0.1 * rng.standard_normal((4, 6)), 0.1 * rng.standard_normal((6, d.m))
        for _ in range(30_000):
            f, gW, gH = ntp_loss_and_gradients(W, H, d.P, d.pi, lam)
            W, H = W - 0.5 * gW, H - 0.5 * gH
        out[lam] = (W, H, f, np.sqrt(np.sum(gW**2) + np.sum(gH**2)), logit_path(d.P, d.pi, lam))
    return d, out


@pytest.mark.parametrize("lam", [1e-2, 1e-3])
def test_ufm_gd_reaches_the_convex_path_balanced(ufm_runs, lam):
    """thm-p3-nuclear-variational and prop-p3-balanced at a stationary point of the UFM."""
    d, out = ufm_runs
    W, H, f, gnorm, L = out[lam]
    assert gnorm < 1e-8
    np.testing.assert_allclose(W.T @ W, H @ H.T, atol=1e-8)  # W^T W = H H^T
    assert 0.5 * (np.sum(W**2) + np.sum(H**2)) == pytest.approx(np.linalg.norm(W @ H, "nuc"), rel=1e-8)
    assert np.linalg.norm(W @ H - L) / np.linalg.norm(L) < 1e-3  # the interior-point solver's accuracy
    assert f <= d.cross_entropy(L) - d.entropy() + lam * np.linalg.norm(L, "nuc") + 1e-7


@pytest.mark.parametrize("lam", [1e-2, 1e-3])
def test_excess_loss_identity_and_leading_order(ufm_runs, lam):
    """prop-p3-gap: <-grad CE(L), L> = lam |L|_* exactly at the minimiser, and
    CE - H = lam |L^mm|_* (1 + O(1/rho)) with random counts."""
    d, out = ufm_runs
    W, H = out[lam][:2]
    L = W @ H
    Q = np.exp(L - L.max(0))
    G = (Q / Q.sum(0) - d.P) * d.pi
    assert -np.sum(G * L) == pytest.approx(lam * np.linalg.norm(L, "nuc"), rel=1e-6)
    ratio = (d.cross_entropy(L) - d.entropy()) / (lam * 2 * 3 * np.sqrt(comb(2, 1)) / 2)
    assert abs(ratio - 1) < 0.05  # |L^mm|_* = (V - 1) sqrt(C(V - 2, k - 1)) = 3 sqrt 2


@pytest.mark.parametrize("lam", [1e-2, 1e-3])
def test_excess_loss_exact_for_equal_counts(lam):
    """Equal counts: L_lambda = a L^mm and CE - H = -log(1 - lam |L^mm|_*) exactly (ex-p3-ufm-symmetric)."""
    S = k_subset_supports(4, 2)
    d = NTPData.from_counts(S)
    rng = np.random.default_rng(2)
    W, H = 0.1 * rng.standard_normal((4, 6)), 0.1 * rng.standard_normal((6, 6))
    for _ in range(30_000):
        _, gW, gH = ntp_loss_and_gradients(W, H, d.P, d.pi, lam)
        W, H = W - 0.5 * gW, H - 0.5 * gH
    nuc_mm = 3 * np.sqrt(2)
    assert d.cross_entropy(W @ H) - d.entropy() == pytest.approx(-np.log1p(-lam * nuc_mm), rel=1e-6)
    word_cos = cosine_similarity(W)[~np.eye(4, dtype=bool)]
    np.testing.assert_allclose(word_cos, -1 / 3, atol=1e-6)  # a simplex ETF at every lambda


@pytest.mark.parametrize("k", [1, 2])
def test_c2_etf_and_sum_of_support_words(k):
    """C-2: word cosines -1/(V-1) and cos(h_j, sum of its support words) = 1 (V = 5)."""
    S = k_subset_supports(5, k)
    W, H = svd_factors(centered_support(S))
    np.testing.assert_allclose(cosine_similarity(W)[~np.eye(5, dtype=bool)], -0.25, atol=1e-8)
    sums = S.T @ W
    cos = np.sum(H.T * sums, 1) / np.linalg.norm(H, axis=0) / np.linalg.norm(sums, axis=1)
    np.testing.assert_allclose(cos, 1.0, atol=1e-8)


@pytest.mark.parametrize("V,k", [(5, 1), (5, 2), (6, 3), (7, 2)])
def test_closed_form_spectrum_and_context_cosines(V, k):
    """thm-p3-closed-form and thm-p3-etf: V - 1 singular values sqrt(C(V-2, k-1)) and
    cos(h_j, h_j') = (V |S_j & S_j'| - k^2) / (k (V - k))."""
    S = k_subset_supports(V, k)
    L = centered_support(S)
    np.testing.assert_allclose(np.linalg.svd(L, compute_uv=False)[:V - 1], np.sqrt(comb(V - 2, k - 1)), rtol=1e-12)
    _, H = svd_factors(L)
    np.testing.assert_allclose(cosine_similarity(H.T), (V * (S.T @ S) - k**2) / (k * (V - k)), atol=1e-10)


def test_neural_collapse_k1_and_margin_one():
    S = k_subset_supports(6, 1)
    W, H = svd_factors(centered_support(S))
    np.testing.assert_allclose(cosine_similarity(W), cosine_similarity(H.T), atol=1e-10)
    np.testing.assert_allclose(np.sum(W * H.T, 1) / np.linalg.norm(W, axis=1) / np.linalg.norm(H, axis=0), 1)
    St = centered_support(np.random.default_rng(0).integers(0, 2, (12, 30)) | np.eye(12, 30, dtype=int))
    on = St == St.max(0)
    assert np.allclose(np.where(on, St, np.inf).min(0) - np.where(~on, St, -np.inf).max(0), 1.0)


def test_in_support_logits_reproduce_the_log_odds():
    d = small_problem(4, V=5, k=3)
    L = in_support_logits(d.P)
    Q = np.exp(L) * d.S
    np.testing.assert_allclose(Q / Q.sum(0), d.P, atol=1e-12)  # restricted softmax = p_j
    np.testing.assert_allclose((L * d.S).sum(0), 0, atol=1e-12)  # centred on each support
    assert np.all(L[d.S == 0] == 0)


def test_factors_are_balanced_and_grams_are_square_roots():
    L = np.random.default_rng(0).standard_normal((5, 7))
    W, H = svd_factors(L)
    np.testing.assert_allclose(W @ H, L, atol=1e-12)
    np.testing.assert_allclose(W.T @ W, H @ H.T, atol=1e-12)
    U, s, Qt = np.linalg.svd(L, full_matrices=False)
    np.testing.assert_allclose(W @ W.T, (U * s) @ U.T, atol=1e-10)  # (L L^T)^{1/2}
    np.testing.assert_allclose(H.T @ H, (Qt.T * s) @ Qt, atol=1e-10)  # (L^T L)^{1/2}
    np.testing.assert_allclose(cosine_similarity([[3.0, 4.0], [0.0, 0.0], [-6.0, -8.0]]),
                               [[1, 0, -1], [0, 0, 0], [-1, 0, 1]])
    with pytest.raises(ValueError, match="L"):
        svd_factors(np.zeros((2, 2)))


def test_structural_similarity_hand_computation():
    A = np.array([[1.0, 2.0], [3.0, 5.0]])
    B = np.array([[2.0, 1.0], [0.0, 4.0]])
    cov = (-1.75 * 0.25 + 0.75 * 0.75 - 0.25 * 1.75 + 2.25 * 2.25) / 4  # ddof = 0
    sa = np.sqrt((1.75**2 + 0.75**2 + 0.25**2 + 2.25**2) / 3)  # ddof = 1
    sb = np.sqrt((0.25**2 + 0.75**2 + 1.75**2 + 2.25**2) / 3)
    assert structural_similarity(A, B) == pytest.approx((cov + 1e-5) / (sa * sb + 1e-5), rel=1e-14)
    assert structural_similarity(A, A) == pytest.approx(0.75, rel=1e-5)  # the ddof mismatch: (N - 1)/N


def test_offdiagonal_correlation_ignores_the_diagonal():
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((2, 6, 6))
    off = ~np.eye(6, dtype=bool)
    assert offdiagonal_correlation(A, B) == pytest.approx(np.corrcoef(A[off], B[off])[0, 1], abs=1e-14)
    assert offdiagonal_correlation(A + 10 * np.eye(6), B) == pytest.approx(offdiagonal_correlation(A, B), abs=1e-14)
    # two unrelated cosine matrices: the unit diagonal inflates the all-entry similarity
    C1, C2 = (cosine_similarity(rng.standard_normal((40, 200))) for _ in range(2))
    assert structural_similarity(C1, C2) > 0.5 > 0.1 > abs(offdiagonal_correlation(C1, C2))


def test_partial_correlation_against_the_formula_and_a_null():
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 4, 60)
    Z = (labels[:, None] == labels[None, :]).astype(float)
    E1, E2, E3 = ((X + X.T) / 2 for X in rng.standard_normal((3, 60, 60)))
    A, B = Z + 0.5 * E1 + 0.3 * E3, 2 * Z + 0.5 * E2 + 0.3 * E3
    off = ~np.eye(60, dtype=bool)
    r = np.corrcoef([A[off], B[off], Z[off]])
    formula = (r[0, 1] - r[0, 2] * r[1, 2]) / np.sqrt((1 - r[0, 2] ** 2) * (1 - r[1, 2] ** 2))
    p = offdiagonal_correlation(A, B, given=Z)
    assert p == pytest.approx(formula, abs=1e-12)
    assert p == pytest.approx(0.09 / 0.34, abs=0.03)  # the shared part E3: 0.09 of 0.25 + 0.09
    assert offdiagonal_correlation(A, B) > p + 0.3
    assert abs(offdiagonal_correlation(Z + E1, Z + E2, given=Z)) < 0.1  # SE about 1/sqrt(1770)


def test_validation_errors():
    P = np.array([[0.5, 1.0], [0.5, 0.0]])
    with pytest.raises(ValueError, match="lam"):
        ntp_loss_and_gradients(np.eye(2), np.eye(2), P, [0.5, 0.5], lam=-1.0)
    with pytest.raises(ValueError, match="H"):
        ntp_loss_and_gradients(np.eye(2), np.eye(3), P, [0.5, 0.5])
    with pytest.raises(ValueError, match="pi"):
        ntp_loss_and_gradients(np.eye(2), np.eye(2), P, [0.5, 0.6])
    with pytest.raises(ValueError, match="A"):
        offdiagonal_correlation(np.eye(3), np.ones((3, 3)) + np.eye(3))
    with pytest.raises(ValueError, match="B"):
        offdiagonal_correlation(np.arange(9.0).reshape(3, 3), np.eye(4))
    Z = np.kron(np.eye(2), np.ones((2, 2)))
    with pytest.raises(ValueError, match="affine"):
        offdiagonal_correlation(Z, 2 * Z + 1, given=Z)
    with pytest.raises(ValueError, match="k"):
        k_subset_supports(3, 4)
    with pytest.raises(ValueError, match="S"):
        centered_support([[1, 2]])
