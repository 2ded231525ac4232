"""Tests for seqrmt.ntp.geometry (closed forms, W*, projectors, SVD factors, similarities)."""

from math import comb

import numpy as np
import pytest

from seqrmt.ntp.corpus import linear_ntp_example, support_only
from seqrmt.ntp.geometry import (
    SubspaceF,
    centered_support,
    closed_form_context_cosine,
    closed_form_max_margin,
    closed_form_nuclear_norm,
    cosine_similarity,
    gram_matrices,
    in_support_logits,
    k_subset_supports,
    margin,
    block_indicator,
    offdiagonal_correlation,
    partial_correlation,
    normalized_gram,
    project_F,
    project_T,
    structural_similarity,
    support_masks,
    svd_factors,
    w_star,
)


@pytest.mark.parametrize("k", [1, 2])
def test_c2_etf_and_sum_of_support_words(k):
    """C-2: word cosines -1/(V-1) and cos(h_j, sum_{z in S_j} w_z) = 1 (V = 5, tol 1e-8)."""
    V = 5
    S = k_subset_supports(V, k)
    W, H = svd_factors(closed_form_max_margin(V, k))
    Cw = cosine_similarity(W)
    off = ~np.eye(V, dtype=bool)
    np.testing.assert_allclose(Cw[off], -1 / (V - 1), atol=1e-8)
    sums = S.T @ W  # rows: sum of the support words of each context
    cos = np.sum(H.T * sums, axis=1) / np.linalg.norm(H, axis=0) / np.linalg.norm(sums, axis=1)
    np.testing.assert_allclose(cos, 1.0, atol=1e-8)


@pytest.mark.parametrize("V,k", [(5, 1), (5, 2), (6, 3), (7, 2)])
def test_closed_form_spectrum_and_context_cosines(V, k):
    L = closed_form_max_margin(V, k)
    s = np.linalg.svd(L, compute_uv=False)
    c = comb(V - 2, k - 1)
    np.testing.assert_allclose(s[: V - 1], np.sqrt(c), rtol=1e-12)
    assert s.sum() == pytest.approx(closed_form_nuclear_norm(V, k), rel=1e-12)
    S = k_subset_supports(V, k)
    _, H = svd_factors(L)
    np.testing.assert_allclose(cosine_similarity(H.T), closed_form_context_cosine(V, k, S.T @ S), atol=1e-10)
    assert margin(L, S) == pytest.approx(1.0, abs=1e-12)


def test_neural_collapse_k1():
    W, H = svd_factors(closed_form_max_margin(6, 1))
    np.testing.assert_allclose(cosine_similarity(W), cosine_similarity(H.T), atol=1e-10)
    np.testing.assert_allclose(np.sum(W * H.T, axis=1) / np.linalg.norm(W, axis=1) / np.linalg.norm(H, axis=0), 1)


def test_centered_support_feasible_margin_one():
    S = support_only(30, 12, 3, 1)
    St = centered_support(S)
    assert margin(St, S) == pytest.approx(1.0, abs=1e-12)
    assert np.abs(project_T(St, S)).max() < 1e-12  # equal logits on each support


def test_identical_supports_cosine_one():
    S = support_only(20, 10, 2, 2)
    S = np.concatenate([S, S[:, :5]], axis=1)
    _, H = svd_factors(centered_support(S))
    C = cosine_similarity(H.T)
    np.testing.assert_allclose(np.diag(C[:5, 20:]), 1.0, atol=1e-10)


def test_w_star_and_projector():
    Hbar, d = linear_ntp_example(0)
    F = SubspaceF(Hbar, d.S)
    Ws = w_star(Hbar, d.P)
    assert np.linalg.norm(Ws) == pytest.approx(1.0061, abs=1e-4)  # C-3
    # W* solves the log-odds equations on every support pair
    L = Ws @ Hbar
    for j in range(d.m):
        z = np.flatnonzero(d.S[:, j])
        diff = L[z, j][:, None] - L[z, j][None, :]
        lo = np.log(d.P[z, j])[:, None] - np.log(d.P[z, j])[None, :]
        np.testing.assert_allclose(diff, lo, atol=1e-10)
    # W* lies in F; the projector is idempotent and orthogonal
    np.testing.assert_allclose(F.project(Ws), Ws, atol=1e-12)
    rng = np.random.default_rng(0)
    X = rng.standard_normal(Ws.shape)
    np.testing.assert_allclose(F.project(F.project(X)), F.project(X), atol=1e-12)
    assert abs(np.sum(F.project(X) * F.perp(X))) < 1e-10
    np.testing.assert_allclose(project_F(X, Hbar, d.S), F.project(X), atol=1e-12)
    assert F.dim == d.S.sum() - d.m  # independent rows when d > m (Lemma 1)
    # in the UFM case (Hbar = I) W* is the in-support logit matrix
    np.testing.assert_allclose(w_star(np.eye(d.m), d.P), in_support_logits(d.P), atol=1e-12)


def test_structural_similarity_hand_computation():
    A = np.array([[1.0, 2.0], [3.0, 5.0]])
    B = np.array([[2.0, 1.0], [0.0, 4.0]])
    # means 2.75 and 1.75; deviations a = (-1.75, -0.75, 0.25, 2.25), b = (0.25, -0.75, -1.75, 2.25)
    cov = (-1.75 * 0.25 + 0.75 * 0.75 - 0.25 * 1.75 + 2.25 * 2.25) / 4  # ddof = 0
    sa = np.sqrt((1.75**2 + 0.75**2 + 0.25**2 + 2.25**2) / 3)  # ddof = 1
    sb = np.sqrt((0.25**2 + 0.75**2 + 1.75**2 + 2.25**2) / 3)
    want = (cov + 1e-5) / (sa * sb + 1e-5)
    assert structural_similarity(A, B) == pytest.approx(want, rel=1e-14)
    assert structural_similarity(A, A) == pytest.approx(0.75, rel=1e-5)  # ddof mismatch: 3/4


def test_grams_and_cosines():
    L = closed_form_max_margin(5, 2)
    GW, GH = gram_matrices(L)
    LLt = L @ L.T
    w, Q = np.linalg.eigh(LLt)
    half = (Q * np.sqrt(np.clip(w, 0, None))) @ Q.T  # (L L^T)^{1/2}
    np.testing.assert_allclose(GW, half / np.linalg.norm(half), atol=1e-10)
    assert GH.shape == (10, 10) and np.linalg.norm(GH) == pytest.approx(1.0)
    w, Q = np.linalg.eigh(L.T @ L)
    half = (Q * np.sqrt(np.clip(w, 0, None))) @ Q.T  # (L^T L)^{1/2}
    np.testing.assert_allclose(GH, half / np.linalg.norm(half), atol=1e-10)
    W, H = svd_factors(L)
    np.testing.assert_allclose(W @ H, L, atol=1e-12)  # L = W H: contexts are the columns of H
    A = np.array([[3.0, 4.0], [0.0, 0.0], [-6.0, -8.0]])
    C = cosine_similarity(A)
    np.testing.assert_allclose(C, [[1, 0, -1], [0, 0, 0], [-1, 0, 1]])
    assert np.linalg.norm(normalized_gram(A)) == pytest.approx(1.0)


def test_masks_and_project_T():
    S = np.array([[0, 1], [1, 1], [1, 0]])
    a, E, O = support_masks(S)
    assert a.tolist() == [1, 0]
    assert E.astype(int).tolist() == [[0, 0], [0, 1], [1, 0]]
    assert (O == (S == 0)).all()
    L = np.array([[9.0, 1.0], [2.0, 3.0], [4.0, 7.0]])
    np.testing.assert_allclose(project_T(L, S), [[0, -1], [-1, 1], [1, 0]])


def test_validation_errors():
    with pytest.raises(ValueError, match="S"):
        support_masks([[1, 0], [0, 0]])
    with pytest.raises(ValueError, match="P"):
        in_support_logits([[0.5], [0.6]])
    with pytest.raises(ValueError, match="P"):
        in_support_logits([[np.nan], [0.6]])
    with pytest.raises(ValueError, match="Hbar"):
        SubspaceF(np.ones((3, 4)), np.eye(3))
    with pytest.raises(ValueError, match="W"):
        SubspaceF(np.eye(2), np.eye(2)).project(np.ones((3, 3)))
    Hs, ds = linear_ntp_example(1, d=2, m=10)
    with pytest.raises(ValueError, match="compatible"):
        w_star(Hs, ds.P)
    with pytest.raises(ValueError, match="k"):
        k_subset_supports(3, 4)
    with pytest.raises(ValueError, match="V"):
        k_subset_supports(0, 1)
    with pytest.raises(ValueError, match="k"):
        closed_form_nuclear_norm(4, 4)
    with pytest.raises(ValueError, match="overlap"):
        closed_form_context_cosine(5, 2, 3)
    with pytest.raises(ValueError, match="L"):
        svd_factors(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="tol"):
        svd_factors(np.eye(2), tol=0)
    with pytest.raises(ValueError, match="B"):
        structural_similarity(np.eye(2), np.eye(3))
    with pytest.raises(ValueError, match="A"):
        cosine_similarity([[np.nan]])
    with pytest.raises(ValueError, match="L"):
        margin(np.eye(3), np.eye(2))


def test_block_indicator_and_offdiagonal_correlation():
    Z = block_indicator([0, 1, 0, 2])
    assert Z.tolist() == [[1, 0, 1, 0], [0, 1, 0, 0], [1, 0, 1, 0], [0, 0, 0, 1]]
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((2, 6, 6))
    off = ~np.eye(6, dtype=bool)
    assert offdiagonal_correlation(A, B) == pytest.approx(np.corrcoef(A[off], B[off])[0, 1], abs=1e-14)
    # the diagonal is ignored: changing it changes the all-entry similarity, not this one
    A2 = A + 10 * np.eye(6)
    assert offdiagonal_correlation(A2, B) == pytest.approx(offdiagonal_correlation(A, B), abs=1e-14)
    assert structural_similarity(A2, B) != pytest.approx(structural_similarity(A, B), abs=1e-3)
    # two unrelated cosine matrices: the unit diagonal inflates the all-entry similarity
    C1 = cosine_similarity(rng.standard_normal((40, 200)))
    C2 = cosine_similarity(rng.standard_normal((40, 200)))
    assert structural_similarity(C1, C2) > 0.5 > 0.1 > abs(offdiagonal_correlation(C1, C2))


def test_partial_correlation_against_formula_and_null():
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 4, 60)
    Z = block_indicator(labels)
    sym = lambda X: (X + X.T) / 2  # noqa: E731
    E1, E2, E3 = (sym(rng.standard_normal((60, 60))) for _ in range(3))
    A, B = Z + 0.5 * E1 + 0.3 * E3, 2 * Z + 0.5 * E2 + 0.3 * E3
    off = ~np.eye(60, dtype=bool)
    r = np.corrcoef([A[off], B[off], Z[off]])
    formula = (r[0, 1] - r[0, 2] * r[1, 2]) / np.sqrt((1 - r[0, 2] ** 2) * (1 - r[1, 2] ** 2))
    p = partial_correlation(A, B, Z)
    assert p == pytest.approx(formula, abs=1e-12)
    # the shared part E3 carries 0.09 / (0.25 + 0.09) of each residual variance
    assert p == pytest.approx(0.09 / 0.34, abs=0.03)
    assert offdiagonal_correlation(A, B) > p + 0.3
    # no shared part beyond the blocks: the partial correlation is near zero (SE ~ 1/sqrt(1770))
    assert abs(partial_correlation(Z + E1, Z + E2, Z)) < 0.1


def test_similarity_yardstick_value_errors():
    with pytest.raises(ValueError, match="labels"):
        block_indicator([0])
    with pytest.raises(ValueError, match="A"):
        offdiagonal_correlation(np.eye(3), np.ones((3, 3)) + np.eye(3))
    with pytest.raises(ValueError, match="B"):
        offdiagonal_correlation(np.arange(9.0).reshape(3, 3), np.eye(4))
    Z = block_indicator([0, 0, 1, 1])
    with pytest.raises(ValueError, match="affine"):
        partial_correlation(Z, 2 * Z + 1, Z)


# --- embedding_cosines, support_word_alignment, nuclear_norm_bounds, n_distinct_supports ---


def test_embedding_cosines_equal_gram_square_roots():
    from seqrmt.ntp.geometry import embedding_cosines

    L = np.random.default_rng(0).standard_normal((5, 7))
    Cw, Ch = embedding_cosines(L)
    U, s, Vt = np.linalg.svd(L, full_matrices=False)
    GW = (U * s) @ U.T  # (L L^T)^{1/2}
    GH = (Vt.T * s) @ Vt  # (L^T L)^{1/2}
    for C, G in ((Cw, GW), (Ch, GH)):
        d = np.sqrt(np.diag(G))
        np.testing.assert_allclose(C, G / np.outer(d, d), atol=1e-10)


def test_support_word_alignment_independent_and_k1():
    from seqrmt.ntp.geometry import support_word_alignment

    rng = np.random.default_rng(1)
    W, H = rng.standard_normal((6, 3)), rng.standard_normal((3, 4))
    S = support_only(4, 6, 2, 2)
    a = support_word_alignment(W, H, S)
    for j in range(4):
        v = W[S[:, j] == 1].sum(axis=0)
        assert a[j] == pytest.approx(v @ H[:, j] / np.linalg.norm(v) / np.linalg.norm(H[:, j]))
    Wc, Hc = svd_factors(closed_form_max_margin(6, 1))  # neural collapse: h_j parallel to w_j
    np.testing.assert_allclose(support_word_alignment(Wc, Hc, np.eye(6, dtype=int)), 1.0, atol=1e-10)
    with pytest.raises(ValueError, match="H"):
        support_word_alignment(W, H[:, :3], S)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nuclear_norm_bounds_sandwich(seed):
    from seqrmt.ntp.geometry import nuclear_norm_bounds
    from seqrmt.ntp.svm import ntp_svm_nuclear

    S = support_only(20, 8, 2, seed)
    lo, hi = nuclear_norm_bounds(S)
    St = centered_support(S)
    assert hi == pytest.approx(np.linalg.norm(St, "nuc"))
    assert lo == pytest.approx(np.sum(St**2) / np.linalg.norm(St, 2))
    nuc = np.linalg.norm(ntp_svm_nuclear(S, solver="CLARABEL"), "nuc")
    assert lo - 1e-6 <= nuc <= hi + 1e-6
    with pytest.raises(ValueError, match="off-support"):
        nuclear_norm_bounds(np.ones((3, 2), dtype=int))


def test_n_distinct_supports():
    from seqrmt.ntp.geometry import n_distinct_supports

    S = k_subset_supports(5, 2)
    assert n_distinct_supports(S) == 10
    assert n_distinct_supports(np.concatenate([S, S[:, :3]], axis=1)) == 10


def test_max_margin_coefficient_recovers_rho():
    from seqrmt.ntp.geometry import max_margin_coefficient

    S = k_subset_supports(5, 2)
    L_mm = closed_form_max_margin(5, 2)
    P = S * np.random.default_rng(2).integers(1, 5, S.shape)
    L_in = in_support_logits(P / P.sum(0))
    # L_in lies in T, L_mm in T-perp: <L_in, L_mm> = 0, so rho is recovered exactly
    assert max_margin_coefficient(L_in + 7.5 * L_mm, L_in, L_mm) == pytest.approx(7.5, rel=1e-12)
    R = np.random.default_rng(3).standard_normal(S.shape)
    R -= np.sum(R * L_mm) / np.sum(L_mm**2) * L_mm  # orthogonal remainder
    assert max_margin_coefficient(L_in + 2.0 * L_mm + R, L_in, L_mm) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="L_mm"):
        max_margin_coefficient(L_in, L_in, np.zeros_like(L_in))
