"""Tests for seqrmt.ntp.svm (NTP-SVM, NTP-SVM*, feasibility, logit path)."""

import numpy as np
import pytest

from seqrmt.ntp.corpus import linear_ntp_example, support_only
from seqrmt.ntp.data import NTPData
from seqrmt.ntp.geometry import (
    centered_support,
    closed_form_max_margin,
    closed_form_nuclear_norm,
    in_support_logits,
    k_subset_supports,
    margin,
    project_T,
    w_star,
)
from seqrmt.ntp.svm import (
    InfeasibleProgramError,
    is_compatible,
    is_separable,
    logit_path,
    ntp_svm_frobenius,
    ntp_svm_nuclear,
)


def nuc(L):
    return np.linalg.svd(L, compute_uv=False).sum()


@pytest.fixture(scope="module")
def c3():
    Hbar, d = linear_ntp_example(0)
    return Hbar, d, w_star(Hbar, d.P), ntp_svm_frobenius(Hbar, d.S)


def test_c3_norms(c3):
    """C-3: ||W*||_F = 1.0061, ||W^mm||_F = 2.1576 (tol 1e-4)."""
    Hbar, d, Ws, Wm = c3
    assert np.linalg.norm(Ws) == pytest.approx(1.0061, abs=1e-4)
    assert np.linalg.norm(Wm) == pytest.approx(2.1576, abs=1e-4)
    # W^mm satisfies the constraints with margin 1 (active) and equal in-support logits
    L = Wm @ Hbar
    assert margin(L, d.S) == pytest.approx(1.0, abs=1e-6)
    assert np.abs(project_T(L, d.S)).max() < 1e-6


def test_c4_ce_along_direction(c3):
    """C-4: CE(W* + R W^mm) - H = 0.6465, 4.97e-3, 3.28e-5, 1.47e-9 for R = 0, 5, 10, 20 (2%)."""
    Hbar, d, Ws, Wm = c3
    expected = {0: 0.6465, 5: 4.97e-3, 10: 3.28e-5, 20: 1.47e-9}
    H = d.entropy()
    for R, want in expected.items():
        assert d.cross_entropy((Ws + R * Wm) @ Hbar) - H == pytest.approx(want, rel=0.02)


def test_frobenius_not_spectral(c3):
    """Correction 4: our W^mm is the Frobenius minimiser: any feasible perturbation increases ||W||_F."""
    Hbar, d, Ws, Wm = c3
    # a feasible direction: scaling up by 1.1 is feasible and strictly larger
    assert np.linalg.norm(1.1 * Wm) > np.linalg.norm(Wm)
    # KKT: W^mm lies in the span of the constraint gradients (e_a - e_v) h_j^T, i.e. W^mm = G Hbar^T
    # (rows of W^mm lie in the 20-dimensional column space of Hbar inside R^30); a spectral-norm
    # minimiser has no reason to.
    Gt, *_ = np.linalg.lstsq(Hbar, Wm.T, rcond=None)
    np.testing.assert_allclose(Hbar @ Gt, Wm.T, atol=1e-6)


def test_feasibility_checks():
    Hbar, d = linear_ntp_example(0)
    assert is_compatible(Hbar, d.P) and is_separable(Hbar, d.S)  # d = 30 > m = 20
    Hs, ds = linear_ntp_example(1, d=3, m=20)  # d small: both fail
    assert not is_compatible(Hs, ds.P)
    assert not is_separable(Hs, ds.S)
    with pytest.raises(InfeasibleProgramError, match="infeasible"):
        ntp_svm_frobenius(Hs, ds.S)


def test_c1_closed_form_vs_cvxpy():
    """C-1: (V, k) = (5, 2), Clarabel: ||L^mm||_* = 4 sqrt(3), L^mm = (I - 11^T/5) S (rel 1e-6)."""
    S = k_subset_supports(5, 2)
    L = ntp_svm_nuclear(S, solver="CLARABEL")
    L0 = closed_form_max_margin(5, 2)
    assert np.linalg.norm(L - L0) / np.linalg.norm(L0) < 1e-6
    assert nuc(L) == pytest.approx(4 * np.sqrt(3), rel=1e-6)
    s = np.linalg.svd(L, compute_uv=False)
    np.testing.assert_allclose(s[:4], np.sqrt(3), rtol=1e-6)
    assert s[4] < 1e-6


@pytest.mark.parametrize("V,k", [(4, 1), (5, 1), (5, 3), (6, 2), (6, 3)])
def test_nuclear_norm_formula_complete_subsets(V, k):
    L = ntp_svm_nuclear(k_subset_supports(V, k))
    assert nuc(L) == pytest.approx(closed_form_nuclear_norm(V, k), rel=1e-6)
    np.testing.assert_allclose(L, closed_form_max_margin(V, k), atol=1e-6)


def test_lmm_depends_only_on_support_and_dedup():
    S = support_only(12, 6, 2, 3)
    rng = np.random.default_rng(4)
    L_ref = ntp_svm_nuclear(S, deduplicate=False)
    for _ in range(2):
        counts = S * rng.integers(1, 5, size=S.shape)
        d = NTPData.from_counts(counts)
        L = ntp_svm_nuclear(d.S)
        assert nuc(L) == pytest.approx(nuc(L_ref), rel=1e-6)
    # the deduplicated program reaches the same optimum and equal supports give equal columns
    L = ntp_svm_nuclear(S)
    assert nuc(L) == pytest.approx(nuc(L_ref), rel=1e-6)
    assert margin(L, S) == pytest.approx(1.0, abs=1e-6)
    # S-tilde is feasible, so the optimum is below its nuclear norm
    assert nuc(L) <= nuc(centered_support(S)) + 1e-6


def test_c8_reduced_size_scs_vs_clarabel():
    """C-8, reduced cost (runs by default): SCS (the m = 400 solver) agrees with Clarabel and the
    centred support is a close proxy on the same kind of supports."""
    S = support_only(30, 16, 4, 0)
    L_scs = ntp_svm_nuclear(S, solver="SCS")
    L_cl = ntp_svm_nuclear(S, solver="CLARABEL")
    St = centered_support(S)
    assert nuc(L_scs) == pytest.approx(nuc(L_cl), rel=2e-4)
    assert nuc(L_cl) <= nuc(St) + 1e-6
    cos = np.sum(L_cl * St) / np.linalg.norm(L_cl) / np.linalg.norm(St)
    assert cos > 0.98
    assert margin(L_cl, S) == pytest.approx(1.0, abs=1e-6)


@pytest.mark.slow
def test_c8_support_only_full_size():
    """C-8: m = 400, V = 104, SCS: ||L^mm||_* = 360.96 <= ||S~||_* = 361.83, cos = 0.9936."""
    S = support_only(400, 104, 12, 0)
    L = ntp_svm_nuclear(S)
    St = centered_support(S)
    cos = np.sum(L * St) / np.linalg.norm(L) / np.linalg.norm(St)
    assert cos > 0.99 and cos == pytest.approx(0.9936, abs=2e-4)
    assert nuc(St) == pytest.approx(361.83, abs=0.01)
    assert nuc(L) == pytest.approx(360.96, abs=0.05)  # SCS accuracy ~1e-4 relative
    assert nuc(L) <= nuc(St)
    assert margin(L, S) > 1 - 1e-3


def test_logit_path_sparse_plus_low_rank():
    """L_lambda ~ L_in + rho L_mm with rho = ln(1/lambda) + O(1); P_T(L_lambda) -> L_in."""
    S = k_subset_supports(4, 2)
    rng = np.random.default_rng(5)
    d = NTPData.from_counts(S * rng.integers(1, 5, size=S.shape))
    Lin, Lmm = in_support_logits(d.P), ntp_svm_nuclear(d.S)
    out = []
    for lam in (1e-3, 1e-5):
        L = logit_path(d.P, d.pi, lam)
        rho = np.sum((L - Lin) * Lmm) / np.sum(Lmm**2)
        out.append((np.linalg.norm(project_T(L, d.S) - Lin), rho))
    assert out[1][0] < out[0][0] < 0.5
    assert out[1][1] - out[0][1] == pytest.approx(2 * np.log(10), rel=0.05)


def test_validation_errors():
    S = k_subset_supports(3, 1)
    with pytest.raises(ValueError, match="lam"):
        logit_path(S / 1.0, np.ones(3) / 3, 0.0)
    with pytest.raises(ValueError, match="lam"):
        logit_path(S / 1.0, np.ones(3) / 3, -1.0)
    with pytest.raises(ValueError, match="pi"):
        logit_path(S / 1.0, np.ones(3) / 2, 0.1)
    with pytest.raises(ValueError, match="P"):
        logit_path(S * 0.5, np.ones(3) / 3, 0.1)
    with pytest.raises(ValueError, match="S"):
        ntp_svm_nuclear([[1, 0], [0, 0]])
    with pytest.raises(ValueError, match="S"):
        ntp_svm_nuclear([[1, 2], [0, 1]])
    with pytest.raises(ValueError, match="Hbar"):
        ntp_svm_frobenius(np.ones((2, 4)), S)
    with pytest.raises(ValueError, match="Hbar"):
        is_separable(np.full((2, 3), np.nan), S)
    with pytest.raises(ValueError, match="P"):
        is_compatible(np.eye(3), [[0.5, 1, 1], [0.4, 0, 0]])


# --- complete_support_solution and duplicated_context_collapse (notebook 3.4 drivers) ---


@pytest.mark.parametrize("V,k", [(4, 1), (5, 2), (6, 3)])
def test_complete_support_solution_matches_closed_forms(V, k):
    from seqrmt.ntp.geometry import closed_form_context_cosine, cosine_similarity, svd_factors
    from seqrmt.ntp.svm import complete_support_solution

    sol = complete_support_solution(V, k, solver="CLARABEL")
    S = k_subset_supports(V, k)
    np.testing.assert_array_equal(sol.S, S)
    # independent recomputation of the old notebook loop
    L = ntp_svm_nuclear(S, solver="CLARABEL")
    np.testing.assert_allclose(sol.L, L, atol=1e-12)
    assert sol.max_error == pytest.approx(np.abs(L - closed_form_max_margin(V, k)).max(), abs=1e-12)
    assert sol.max_error < 1e-8
    assert sol.nuclear == pytest.approx(closed_form_nuclear_norm(V, k), rel=1e-8)
    assert sol.nuclear_theory == closed_form_nuclear_norm(V, k)
    off = ~np.eye(V, dtype=bool)
    np.testing.assert_allclose(sol.word_cosines[off], -1 / (V - 1), atol=1e-8)  # simplex ETF
    np.testing.assert_allclose(sol.context_cosines, closed_form_context_cosine(V, k, S.T @ S), atol=1e-8)
    np.testing.assert_allclose(sol.support_word_alignment, 1.0, atol=1e-8)
    W, H = svd_factors(L)
    np.testing.assert_allclose(sol.context_cosines, cosine_similarity(H.T), atol=1e-12)


def test_complete_support_solution_rejects_k_ge_V():
    from seqrmt.ntp.svm import complete_support_solution

    with pytest.raises(ValueError, match="k"):
        complete_support_solution(4, 4)
    with pytest.raises(ValueError, match="V"):
        complete_support_solution(1, 1)


@pytest.mark.filterwarnings("error::UserWarning")  # the 1e-6 checks need an accurate solve
def test_duplicated_context_collapse_against_inline_computation():
    from seqrmt.ntp.geometry import cosine_similarity, svd_factors
    from seqrmt.ntp.svm import duplicated_context_collapse

    # seed 0: Clarabel solves this instance to full accuracy (seed 3 ends "optimal_inaccurate",
    # though still within 1e-7 of the reduced program)
    S = support_only(12, 8, 2, 0)
    cos, nf, nr = duplicated_context_collapse(S, n_dup=4)
    S_dup = np.concatenate([S, S[:, :4]], axis=1)
    L_full = ntp_svm_nuclear(S_dup, solver="CLARABEL", deduplicate=False)
    H = svd_factors(L_full)[1]
    np.testing.assert_allclose(cos, np.diag(cosine_similarity(H.T)[:4, 12:]), atol=1e-12)
    np.testing.assert_allclose(cos, 1.0, atol=1e-6)  # subspace collapse
    assert nf == pytest.approx(np.linalg.norm(L_full, "nuc"), rel=1e-12)
    assert nf == pytest.approx(nr, rel=1e-6)  # the reduced program has the same optimum
    with pytest.raises(ValueError, match="n_dup"):
        duplicated_context_collapse(S, n_dup=13)
