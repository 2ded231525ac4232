"""The linear and convex programs of Part 3 (``seqrmt.ntp``): W*, the subspace F, compatibility,
separability, the Frobenius NTP-SVM, the nuclear-norm NTP-SVM* and the logit-space path.

Checkpoints C-1, C-3, C-4 and C-8 are those of the Part 3 specification.
"""

from math import comb

import cvxpy as cp
import numpy as np
import pytest

from seqrmt import ConvergenceError
from seqrmt.ntp import (
    NTPData,
    SubspaceF,
    centered_support,
    in_support_logits,
    is_compatible,
    is_separable,
    k_subset_supports,
    linear_ntp_example,
    logit_path,
    ntp_svm_frobenius,
    ntp_svm_nuclear,
    svd_factors,
    w_star,
)
from seqrmt.ntp._programs import _project_margins


def nuc(L):
    return np.linalg.svd(L, compute_uv=False).sum()


def margin(L, S):
    """Smallest in-support minus off-support logit over all contexts."""
    S = S.astype(bool)
    return np.min(np.where(S, L, np.inf).min(0) - np.where(~S, L, -np.inf).max(0))


def block_supports(m, V, n_class, seed):
    """The support-only generator of the specification (Section 5.3): classes of tokens, 2-6 per context."""
    rng = np.random.default_rng(seed)
    classes = np.array_split(np.arange(V), n_class)
    S = np.zeros((V, m), dtype=np.int64)
    for j in range(m):
        cls = classes[rng.integers(n_class)]
        toks = list(rng.choice(cls, size=min(rng.integers(2, 7), len(cls)), replace=False))
        if rng.random() < 0.3:
            toks.append(rng.integers(V))
        S[np.unique(toks), j] = 1
    return S


@pytest.fixture(scope="module")
def c3():
    Hbar, d = linear_ntp_example(0)
    return Hbar, d, w_star(Hbar, d.P), ntp_svm_frobenius(Hbar, d.S)


def test_c3_norms_and_constraints(c3):
    """C-3: |W*|_F = 1.0061, |W^mm|_F = 2.1576; W^mm has margin one and equal in-support logits."""
    Hbar, d, Ws, Wm = c3
    assert np.linalg.norm(Ws) == pytest.approx(1.0061, abs=1e-4)
    assert np.linalg.norm(Wm) == pytest.approx(2.1576, abs=1e-4)
    L = Wm @ Hbar
    assert margin(L, d.S) == pytest.approx(1.0, abs=1e-6)
    in_support = np.where(d.S > 0, L, np.nan)
    assert np.nanmax(np.nanmax(in_support, 0) - np.nanmin(in_support, 0)) < 1e-6


def test_c4_loss_along_the_ray(c3):
    """C-4: CE(W* + R W^mm) - H = 0.6465, 4.97e-3, 3.28e-5, 1.47e-9 for R = 0, 5, 10, 20."""
    Hbar, d, Ws, Wm = c3
    for R, want in {0: 0.6465, 5: 4.97e-3, 10: 3.28e-5, 20: 1.47e-9}.items():
        assert d.cross_entropy((Ws + R * Wm) @ Hbar) - d.entropy() == pytest.approx(want, rel=0.02)


def test_frobenius_not_spectral(c3):
    """Correction 4: the KKT condition of the Frobenius problem puts the rows of W^mm in the span of
    the embeddings (W^mm = G Hbar^T); a spectral-norm minimiser has no reason to."""
    Hbar, d, Ws, Wm = c3
    Gt = np.linalg.lstsq(Hbar, Wm.T, rcond=None)[0]
    np.testing.assert_allclose(Hbar @ Gt, Wm.T, atol=1e-6)


def test_w_star_solves_the_log_odds_inside_F(c3):
    Hbar, d, Ws, _ = c3
    L = Ws @ Hbar
    for j in range(d.m):
        z = np.flatnonzero(d.S[:, j])
        np.testing.assert_allclose(L[z, j][:, None] - L[z, j][None, :],
                                   np.log(d.P[z, j])[:, None] - np.log(d.P[z, j])[None, :], atol=1e-10)
    F = SubspaceF(Hbar, d.S)
    np.testing.assert_allclose(F.project(Ws), Ws, atol=1e-12)
    X = np.random.default_rng(0).standard_normal(Ws.shape)
    np.testing.assert_allclose(F.project(F.project(X)), F.project(X), atol=1e-12)  # a projector
    assert abs(np.sum(F.project(X) * F.perp(X))) < 1e-10  # orthogonal
    assert F.basis.shape[1] == d.S.sum() - d.m  # independent equations when d > m (Lemma 1)
    # W^mm lies in F-perp: the margins do not touch the in-support differences
    assert np.linalg.norm(F.project(c3[3])) < 1e-6
    # with free embeddings (Hbar = I) W* is the in-support logit matrix L_in
    np.testing.assert_allclose(w_star(np.eye(d.m), d.P), in_support_logits(d.P), atol=1e-12)


def test_compatibility_and_separability():
    Hbar, d = linear_ntp_example(0)
    assert is_compatible(Hbar, d.P) and is_separable(Hbar, d.S)  # d = 30 > m = 20
    Hs, ds = linear_ntp_example(1, d=3, m=20)  # 3 (V - 1) = 21 < 60 log-odds equations
    assert not is_compatible(Hs, ds.P) and not is_separable(Hs, ds.S)
    with pytest.raises(ValueError, match="separable"):
        ntp_svm_frobenius(Hs, ds.S)
    with pytest.raises(ValueError, match="compatible"):
        w_star(Hs, ds.P)


def test_non_separable_but_partially_separable_has_no_minimiser():
    """W1 of the review: V = 3, d = 1, h = (1, 1), S_1 = {1}, S_2 = {2}: compatible, not separable,
    yet the loss decreases to log 2 along w_3 -> -infinity and is never attained."""
    Hbar = np.ones((1, 2))
    d = NTPData.from_counts([[1, 0], [0, 1], [0, 0]])
    assert is_compatible(Hbar, d.P) and not is_separable(Hbar, d.S)
    gaps = [d.cross_entropy(np.array([[0.0], [0.0], [-c]]) @ Hbar) for c in (0, 5, 10, 20, 40)]
    assert np.all(np.diff(gaps) < 0) and gaps[-1] - np.log(2) < 1e-15 + 1e-12
    assert gaps[-2] > np.log(2)


def test_c1_closed_form():
    """C-1: (V, k) = (5, 2), Clarabel: L^mm = (I - 11^T/5) S, |L^mm|_* = 4 sqrt 3 (rel 1e-6)."""
    S = k_subset_supports(5, 2)
    L = ntp_svm_nuclear(S, solver="CLARABEL")
    np.testing.assert_allclose(L, centered_support(S), atol=1e-6)
    assert nuc(L) == pytest.approx(4 * np.sqrt(3), rel=1e-6)
    np.testing.assert_allclose(np.linalg.svd(L, compute_uv=False)[:4], np.sqrt(3), rtol=1e-6)


@pytest.mark.parametrize("V,k", [(4, 1), (5, 3), (6, 2), (6, 3)])
def test_closed_form_for_complete_supports(V, k):
    """thm-p3-closed-form: S~ solves NTP-SVM*, with |L^mm|_* = (V - 1) sqrt(C(V-2, k-1))."""
    S = k_subset_supports(V, k)
    L = ntp_svm_nuclear(S, solver="CLARABEL")
    np.testing.assert_allclose(L, centered_support(S), atol=1e-6)
    assert nuc(L) == pytest.approx((V - 1) * np.sqrt(comb(V - 2, k - 1)), rel=1e-6)


def test_lmm_depends_only_on_the_supports_and_the_sandwich():
    S = block_supports(12, 6, 2, 3)
    L_ref = ntp_svm_nuclear(S, deduplicate=False)
    rng = np.random.default_rng(4)
    for _ in range(2):  # other probabilities, same supports
        assert nuc(ntp_svm_nuclear(NTPData.from_counts(S * rng.integers(1, 5, S.shape)).S)) == \
            pytest.approx(nuc(L_ref), rel=1e-6)
    L = ntp_svm_nuclear(S)  # the reduced program over distinct supports
    assert nuc(L) == pytest.approx(nuc(L_ref), rel=1e-6)
    assert margin(L, S) == pytest.approx(1.0, abs=1e-6)
    St = centered_support(S)  # feasible, margin one: |S~|_F^2 / |S~|_2 <= |L^mm|_* <= |S~|_*
    assert np.sum(St**2) / np.linalg.norm(St, 2) - 1e-6 <= nuc(L) <= nuc(St) + 1e-6


def test_subspace_collapse_without_the_reduction():
    """thm-p3-subspace-collapse: contexts with equal supports get parallel max-margin embeddings."""
    S = block_supports(12, 8, 2, 0)
    S_dup = np.concatenate([S, S[:, :4]], axis=1)
    L_full = ntp_svm_nuclear(S_dup, solver="CLARABEL", deduplicate=False)
    H = svd_factors(L_full)[1]
    cos = np.sum(H[:, :4] * H[:, 12:], 0) / np.linalg.norm(H[:, :4], axis=0) / np.linalg.norm(H[:, 12:], axis=0)
    np.testing.assert_allclose(cos, 1.0, atol=1e-6)
    assert nuc(L_full) == pytest.approx(nuc(ntp_svm_nuclear(S_dup)), rel=1e-6)


def test_c8_reduced_size_scs_against_clarabel():
    S = block_supports(30, 16, 4, 0)
    L_scs, L_cl = ntp_svm_nuclear(S, solver="SCS"), ntp_svm_nuclear(S, solver="CLARABEL")
    St = centered_support(S)
    assert nuc(L_scs) == pytest.approx(nuc(L_cl), rel=2e-4)
    assert nuc(L_cl) <= nuc(St) + 1e-6
    assert np.sum(L_cl * St) / np.linalg.norm(L_cl) / np.linalg.norm(St) > 0.98


@pytest.mark.slow
def test_c8_full_size():
    """C-8: m = 400, V = 104 (ADMM): |L^mm|_* = 360.96 <= |S~|_* = 361.83, cos = 0.9936."""
    S = block_supports(400, 104, 12, 0)
    L, St = ntp_svm_nuclear(S), centered_support(S)
    assert np.sum(L * St) / np.linalg.norm(L) / np.linalg.norm(St) == pytest.approx(0.9936, abs=2e-4)
    assert nuc(St) == pytest.approx(361.83, abs=0.01)
    assert nuc(L) == pytest.approx(360.96, abs=0.05)
    assert margin(L, S) > 1 - 1e-12


def _column_qp(Y, S, r):
    """The projection onto the constraints as a cvxpy QP (Clarabel, tight tolerances)."""
    on = S.astype(bool)
    X, a = cp.Variable(Y.shape), cp.Variable(Y.shape[1])
    (iz, jz), (iv, jv) = np.nonzero(on), np.nonzero(~on)
    cons = [X[iz, jz] == a[jz], X[iv, jv] <= a[jv] - r[jv]]
    cp.Problem(cp.Minimize(cp.sum_squares(X - Y)), cons).solve(
        solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return X.value


def test_projection_onto_the_margin_constraints_is_exact():
    """The ADMM's Y-step against a QP solver, and its KKT conditions, on random columns."""
    rng = np.random.default_rng(6)
    V, m = 9, 40
    S = (rng.random((V, m)) < 0.3).astype(int)
    S[rng.integers(V, size=m), np.arange(m)] = 1
    S[:, 0] = 1  # a full support: no margin constraint, the column becomes its mean
    r = rng.uniform(0.5, 2.0, m)
    Y = 2 * rng.standard_normal((V, m))
    Y[:3, 1] = Y[3, 1]  # ties among the t_v
    P = _project_margins(Y, S.astype(bool), r)
    np.testing.assert_allclose(P, _column_qp(Y, S, r), atol=1e-7)
    # KKT: P in C; Y - P = Z with column sums zero (a is free), Z_v >= 0 off the support and
    # zero where the margin is slack (complementary slackness)
    on = S > 0
    a = P.max(axis=0, where=on, initial=-np.inf)
    assert np.abs(np.where(on, P - a, 0)).max() < 1e-12
    assert np.max(np.where(on, -np.inf, P - (a - r))) < 1e-12
    Z = Y - P
    np.testing.assert_allclose(Z.sum(axis=0), 0, atol=1e-12)
    assert Z[~on].min() > -1e-12
    slack = ~on & (P < a - r - 1e-9)
    assert np.abs(Z[slack]).max() < 1e-12
    assert np.allclose(P[:, 0], Y[:, 0].mean())
    np.testing.assert_allclose(_project_margins(P, on, r), P, atol=1e-12)  # a projection


@pytest.mark.parametrize("S", [block_supports(12, 6, 2, 3), block_supports(30, 16, 4, 0),
                               block_supports(24, 14, 3, 1)], ids=["small", "medium", "medium2"])
def test_admm_against_clarabel(S):
    """solver="ADMM" solves the same program: objective and solution to the tolerance, exactly feasible."""
    L = ntp_svm_nuclear(S, solver="ADMM", tol=1e-9)
    L_cl = ntp_svm_nuclear(S, solver="CLARABEL")
    assert nuc(L) == pytest.approx(nuc(L_cl), rel=1e-7)
    np.testing.assert_allclose(L, L_cl, atol=1e-4)
    on = S > 0
    a = L.max(axis=0, where=on, initial=-np.inf)
    assert np.abs(np.where(on, L - a, 0)).max() < 1e-12  # equal in-support logits
    assert margin(L, S) == pytest.approx(1.0, abs=1e-12)  # margins >= 1, exactly (the last step projects)
    # the default tolerance: the objective within 1e-6 (relative)
    assert nuc(ntp_svm_nuclear(S, solver="ADMM")) == pytest.approx(nuc(L_cl), rel=1e-6)


@pytest.mark.parametrize("V,k", [(4, 1), (5, 2), (6, 3)])
def test_admm_closed_form(V, k):
    """thm-p3-closed-form and the polar certificate (S~ optimal for incomplete supports too)."""
    for S in (k_subset_supports(V, k), k_subset_supports(V, k)[:, 1:]):
        np.testing.assert_allclose(ntp_svm_nuclear(S, solver="ADMM", tol=1e-10), centered_support(S), atol=1e-7)


def test_admm_full_supports():
    """No off-support entry: no margin to keep, the minimum is L = 0."""
    S = np.array([[1, 1, 0], [1, 1, 1]])
    L = ntp_svm_nuclear(S[:, :2], solver="ADMM")
    np.testing.assert_array_equal(L, 0.0)
    np.testing.assert_allclose(ntp_svm_nuclear(S, solver="ADMM", tol=1e-10), centered_support(S), atol=1e-8)


def test_admm_does_not_converge_in_one_iteration():
    with pytest.raises(ConvergenceError, match="ADMM"):
        ntp_svm_nuclear(block_supports(30, 16, 4, 0), solver="ADMM", max_iter=1)
    with pytest.raises(TypeError, match="options"):
        ntp_svm_nuclear(k_subset_supports(4, 1), solver="ADMM", verbose=True)


def test_logit_path_sparse_plus_low_rank():
    """prop-p3-path: L_lambda ~ L_in + rho L_mm, rho = ln(1/lambda) + O(1); P_T(L_lambda) -> L_in."""
    S = k_subset_supports(4, 2)
    d = NTPData.from_counts(S * np.random.default_rng(5).integers(1, 5, size=S.shape))
    L_in, L_mm = in_support_logits(d.P), ntp_svm_nuclear(d.S)
    out = []
    for lam in (1e-3, 1e-5):
        L = logit_path(d.P, d.pi, lam)
        mean = (L * S).sum(0) / S.sum(0)
        out.append((np.linalg.norm(np.where(S > 0, L - mean, 0) - L_in), np.sum((L - L_in) * L_mm) / np.sum(L_mm**2)))
    assert out[1][0] < out[0][0] < 0.5
    assert out[1][1] - out[0][1] == pytest.approx(2 * np.log(10), rel=0.05)


def test_validation_errors():
    S = k_subset_supports(3, 1)
    with pytest.raises(ValueError, match="lam"):
        logit_path(S / 1.0, np.ones(3) / 3, 0.0)
    with pytest.raises(ValueError, match="pi"):
        logit_path(S / 1.0, np.ones(3) / 2, 0.1)
    with pytest.raises(ValueError, match="P"):
        logit_path(S * 0.5, np.ones(3) / 3, 0.1)
    with pytest.raises(ValueError, match="S"):
        ntp_svm_nuclear([[1, 0], [0, 0]])
    with pytest.raises(ValueError, match="S"):
        ntp_svm_nuclear([[1, 2], [0, 1]])
    with pytest.raises(ValueError, match="solver"):
        ntp_svm_nuclear(S, solver="NOPE")
    with pytest.raises(ValueError, match="tol"):
        ntp_svm_nuclear(S, solver="ADMM", tol=0.0)
    with pytest.raises(ValueError, match="max_iter"):
        ntp_svm_nuclear(S, solver="ADMM", max_iter=0)
    with pytest.raises(ValueError, match="Hbar"):
        ntp_svm_frobenius(np.ones((2, 4)), S)
    with pytest.raises(ValueError, match="Hbar"):
        is_separable(np.full((2, 3), np.nan), S)
    with pytest.raises(ValueError, match="P"):
        is_compatible(np.eye(3), [[0.5, 1, 1], [0.4, 0, 0]])
    F = SubspaceF(np.eye(3), S)
    with pytest.raises(ValueError, match="W"):
        F.project(np.ones((2, 3)))
    with pytest.raises(ValueError, match="P"):
        F.log_odds(np.ones((3, 2)) / 3)
