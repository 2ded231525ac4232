"""Tests for seqrmt.ntp.ufm: the unconstrained-features model trained by gradient descent."""

import numpy as np
import pytest

from seqrmt import ntp
from seqrmt.ntp import ufm
from seqrmt import ConvergenceError


def small_problem(seed=0, V=4, k=2):
    """All k-subsets of [V] as supports, random counts on {1..4} (numpy only)."""
    rng = np.random.default_rng(seed)
    S = ntp.k_subset_supports(V, k)
    counts = S * rng.integers(1, 5, S.shape)
    return counts / counts.sum(0), counts.sum(0) / counts.sum()


@pytest.fixture(scope="module")
def trained():
    """GD on the UFM (d = 6 >= V = 4) and the convex logit solution at the same lambda."""
    P, pi = small_problem(3)
    out = {}
    for lam in (1e-2, 1e-3):
        L = ntp.logit_path(P, pi, lam)
        run = ufm.train_ufm(P, pi, d=6, lam=lam, eta=0.5, max_iter=30_000, rng=1, L_target=L)
        out[lam] = (L, run)
    return P, pi, out


def test_gradients_match_finite_differences():
    P, pi = small_problem(0)
    rng = np.random.default_rng(5)
    W, H = rng.standard_normal((4, 3)), rng.standard_normal((3, P.shape[1]))
    lam, h = 0.3, 1e-6
    f, gW, gH = ufm.ufm_loss_and_gradients(W, H, P, pi, lam)
    penalty = 0.5 * lam * (np.sum(W**2) + np.sum(H**2))
    assert f == pytest.approx(ntp.ntp_cross_entropy(W @ H, P, pi) - ntp.ntp_entropy(P, pi) + penalty, abs=1e-12)
    for X, g, which in ((W, gW, 0), (H, gH, 1)):
        fd = np.zeros_like(X)
        for idx in np.ndindex(*X.shape):
            E = np.zeros_like(X)
            E[idx] = h
            args_p = (W + E, H) if which == 0 else (W, H + E)
            args_m = (W - E, H) if which == 0 else (W, H - E)
            fd[idx] = (ufm.ufm_loss_and_gradients(*args_p, P, pi, lam)[0]
                       - ufm.ufm_loss_and_gradients(*args_m, P, pi, lam)[0]) / (2 * h)
        np.testing.assert_allclose(g, fd, atol=1e-8)


@pytest.mark.parametrize("lam", [1e-2, 1e-3])
def test_gd_reaches_convex_logit_solution(trained, lam):
    L, run = trained[2][lam]
    cmp = ufm.compare_with_logits(run.W, run.H, L)
    assert cmp.cosine > 1 - 1e-6
    assert cmp.rel_error < 1e-3  # limited by the accuracy of the cvxpy solution
    assert cmp.penalty == pytest.approx(cmp.nuclear, rel=1e-4)  # (|W|^2 + |H|^2)/2 = |L|_*
    assert run.grad_norm[-1] < 1e-8
    assert run.cos_target[-1] == pytest.approx(cmp.cosine, abs=1e-12)


def test_gd_objective_not_above_convex_objective(trained):
    """GD's objective equals the convex optimum CE(L) + lam |L|_* (to the solver's accuracy)."""
    P, pi, out = trained
    H0 = ntp.ntp_entropy(P, pi)
    for lam, (L, run) in out.items():
        convex = ntp.ntp_cross_entropy(L, P, pi) - H0 + lam * np.linalg.svd(L, compute_uv=False).sum()
        assert run.objective[-1] <= convex + 1e-7
        assert run.objective[-1] == pytest.approx(convex, rel=1e-5)


def test_balancedness_vanishes(trained):
    for lam, (L, run) in trained[2].items():
        scalar, matrix = ufm.balancedness(run.W, run.H)
        assert abs(scalar) < 1e-8 and matrix < 1e-8
        assert abs(run.balancedness[0]) > 0.01  # the random initialisation is not balanced
        np.testing.assert_allclose(run.balancedness[-1], scalar, atol=1e-10)


def test_word_cosines_form_simplex_etf_for_complete_k_subsets():
    """Uniform next-token distributions on all k-subsets: word cosines are -1/(V-1)."""
    for V, k in ((4, 2), (5, 2)):
        S = ntp.k_subset_supports(V, k)
        P = S / k
        pi = np.full(S.shape[1], 1 / S.shape[1])
        run = ufm.train_ufm(P, pi, d=V + 1, lam=1e-2, max_iter=20_000, rng=2, record_at=[20_000])
        cos = ntp.cosine_similarity(run.W)
        off = cos[~np.eye(V, dtype=bool)]
        np.testing.assert_allclose(off, -1 / (V - 1), atol=1e-6)


def test_snapshots_and_adam():
    P, pi = small_problem(4)
    run = ufm.train_ufm(P, pi, d=5, lam=1e-2, max_iter=200, rng=0, record_at=[0, 10, 200], store=True)
    assert run.steps.tolist() == [0, 10, 200]
    assert len(run.snapshots["L"]) == 3
    np.testing.assert_allclose(run.snapshots["L"][-1], run.W @ run.H)
    np.testing.assert_allclose(run.snapshots["W"][0].std(), 0.1, rtol=0.5)
    assert np.all(np.diff(run.objective) < 0)
    adam = ufm.train_ufm(P, pi, d=5, lam=1e-2, eta=0.01, max_iter=2000, rng=0, optimizer="adam",
                         record_at=[0, 2000])
    assert adam.objective[-1] < 0.5 * adam.objective[0]
    f32 = ufm.train_ufm(P, pi, d=5, lam=1e-2, max_iter=200, rng=0, record_at=[200], dtype=np.float32)
    np.testing.assert_allclose(f32.W, run.W, atol=1e-4)


def test_explicit_init_and_same_seed_reproduces():
    P, pi = small_problem(6)
    a = ufm.train_ufm(P, pi, d=4, lam=0.1, max_iter=50, rng=7, record_at=[50])
    b = ufm.train_ufm(P, pi, d=4, lam=0.1, max_iter=50, rng=np.random.default_rng(7), record_at=[50])
    np.testing.assert_array_equal(a.W, b.W)
    W0, H0 = np.full((4, 4), 0.1), np.full((4, P.shape[1]), 0.1)
    c = ufm.train_ufm(P, pi, d=4, lam=0.1, max_iter=1, W0=W0, H0=H0, record_at=[1])
    _, gW, gH = ufm.ufm_loss_and_gradients(W0, H0, P, pi, 0.1)
    np.testing.assert_allclose(c.W, W0 - 0.5 * gW)
    np.testing.assert_allclose(c.H, H0 - 0.5 * gH)


def test_convergence_and_divergence_errors():
    P, pi = small_problem(7)
    with pytest.raises(ConvergenceError):
        ufm.train_ufm(P, pi, d=4, lam=1e-3, max_iter=20, rng=0, tol=1e-12)
    run = ufm.train_ufm(P, pi, d=4, lam=0.1, max_iter=20_000, rng=0, tol=1e-6,
                        record_at=np.arange(0, 20_001, 100))
    assert run.grad_norm[-1] < 1e-6 and run.steps[-1] < 20_000
    with np.errstate(all="ignore"), pytest.raises(FloatingPointError):
        ufm.train_ufm(P, pi, d=4, lam=1e-3, eta=1e200, max_iter=300, rng=0)


def test_value_errors():
    P, pi = small_problem(8)
    V, m = P.shape
    W, H = np.ones((V, 3)), np.ones((3, m))
    with pytest.raises(ValueError, match="lam"):
        ufm.train_ufm(P, pi, d=4, lam=0.0)
    with pytest.raises(ValueError, match="lam"):
        ufm.ufm_loss_and_gradients(W, H, P, pi, -1.0)
    with pytest.raises(ValueError, match="d"):
        ufm.train_ufm(P, pi, d=0, lam=0.1)
    with pytest.raises(ValueError, match="pi"):
        ufm.train_ufm(P, pi[:-1] / pi[:-1].sum(), d=4, lam=0.1)
    bad = P.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="P"):
        ufm.train_ufm(bad, pi, d=4, lam=0.1)
    with pytest.raises(ValueError, match="H"):
        ufm.ufm_loss_and_gradients(W, H[:, :-1], P, pi, 0.1)
    with pytest.raises(ValueError, match="W"):
        ufm.ufm_loss_and_gradients(W[:-1], H, P, pi, 0.1)
    with pytest.raises(ValueError, match="optimizer"):
        ufm.train_ufm(P, pi, d=4, lam=0.1, optimizer="sgd")
    with pytest.raises(ValueError, match="W0"):
        ufm.train_ufm(P, pi, d=4, lam=0.1, W0=np.ones((V, 4)))
    with pytest.raises(ValueError, match="H0"):
        ufm.train_ufm(P, pi, d=4, lam=0.1, W0=np.ones((V, 4)), H0=np.ones((3, m)))
    with pytest.raises(ValueError, match="L_target"):
        ufm.train_ufm(P, pi, d=4, lam=0.1, L_target=np.ones((V, m + 1)))
    with pytest.raises(ValueError, match="record_at"):
        ufm.train_ufm(P, pi, d=4, lam=0.1, max_iter=10, record_at=[-1, 5])
    with pytest.raises(ValueError, match="dtype"):
        ufm.train_ufm(P, pi, d=4, lam=0.1, dtype=np.int64)
    with pytest.raises(ValueError, match="H"):
        ufm.balancedness(W, np.ones((2, m)))
    with pytest.raises(ValueError, match="L"):
        ufm.compare_with_logits(W, H, np.zeros((V, m)))
    with pytest.raises(ValueError, match="L"):
        ufm.compare_with_logits(W, H, np.ones((V + 1, m)))


@pytest.mark.parametrize("lam", [1e-2, 1e-3])
def test_entropy_gap_prediction_exact_for_equal_counts(lam):
    """Equal counts on all 2-subsets of [4]: L_lam = a L_mm and CE - H = -log(1 - lam |L_mm|_*) exactly."""
    S = ntp.k_subset_supports(4, 2)
    P, pi = S / 2.0, np.full(S.shape[1], 1 / S.shape[1])
    run = ufm.train_ufm(P, pi, d=6, lam=lam, eta=0.5, max_iter=30_000, rng=2)
    assert run.grad_norm[-1] < 1e-8
    pred = ufm.entropy_gap_prediction(ntp.closed_form_max_margin(4, 2), lam)
    assert pred == pytest.approx(lam * ntp.closed_form_nuclear_norm(4, 2), rel=1e-12)
    assert run.ce_gap[-1] == pytest.approx(-np.log1p(-pred), rel=1e-6)
    assert run.ce_gap[-1] / pred == pytest.approx(1.0, abs=lam * 4)


@pytest.mark.parametrize("lam", [1e-2, 1e-3])
def test_entropy_gap_first_order_identity_and_random_counts(trained, lam):
    """<-grad CE(L), L> = lam |L|_* at the minimiser; with random counts CE - H ~ lam |L_mm|_* to O(1/rho)."""
    P, pi, out = trained
    _, run = out[lam]
    L = run.W @ run.H
    Q = np.exp(L - L.max(0))
    Q /= Q.sum(0)
    G = (Q - P) * pi
    nuc = np.linalg.svd(L, compute_uv=False).sum()
    assert -np.sum(G * L) == pytest.approx(lam * nuc, rel=1e-6)
    L_mm = ntp.ntp_svm_nuclear((P > 0).astype(int))
    ratio = run.ce_gap[-1] / ufm.entropy_gap_prediction(L_mm, lam)
    assert abs(ratio - 1) < 0.05  # measured 1.024 and 1.001; the bound on the correction is O(1/rho)


def test_entropy_gap_prediction_value_errors():
    with pytest.raises(ValueError, match="lam"):
        ufm.entropy_gap_prediction(np.eye(2), 0.0)
    with pytest.raises(ValueError, match="L_mm"):
        ufm.entropy_gap_prediction(np.zeros((2, 2)), 1e-3)


# --- path_decomposition and path_offset_estimate (notebook 3.3 drivers) ---


def test_path_decomposition_against_inline_loop():
    from seqrmt.ntp.data import NTPData
    from seqrmt.ntp.geometry import in_support_logits, k_subset_supports, project_T
    from seqrmt.ntp.linear import frobenius_cosine
    from seqrmt.ntp.svm import logit_path, ntp_svm_nuclear
    from seqrmt.ntp.ufm import path_decomposition

    S = k_subset_supports(4, 2)
    data = NTPData.from_counts(S * np.random.default_rng(0).integers(1, 5, S.shape))
    L_in, L_mm = in_support_logits(data.P), ntp_svm_nuclear(data.S)
    lams = [1e-1, 1e-3]
    path = [logit_path(data.P, data.pi, lam) for lam in lams]
    dec = path_decomposition(path, L_in, L_mm, data.S)
    for i, L in enumerate(path):  # the notebook's former inline loop
        assert dec["rho"][i] == pytest.approx(np.sum((L - L_in) * L_mm) / np.sum(L_mm**2))
        assert dec["nuclear"][i] == pytest.approx(np.linalg.norm(L, "nuc"))
        assert dec["cos_raw"][i] == pytest.approx(frobenius_cosine(L, L_mm))
        assert dec["cos_centred"][i] == pytest.approx(frobenius_cosine(L - L_in, L_mm))
        assert dec["dist_T"][i] == pytest.approx(np.linalg.norm(project_T(L, data.S) - L_in))
    assert dec["rho"][1] > dec["rho"][0] + 3  # grows like ln(1/lambda): ln(100) = 4.6
    with pytest.raises(ValueError, match="path"):
        path_decomposition([], L_in, L_mm, data.S)


def test_path_offset_estimate_against_inline_formula():
    from seqrmt.ntp.data import NTPData
    from seqrmt.ntp.geometry import closed_form_max_margin, in_support_logits, k_subset_supports
    from seqrmt.ntp.ufm import path_offset_estimate

    S = k_subset_supports(5, 2)
    data = NTPData.from_counts(S * np.random.default_rng(1).integers(1, 5, S.shape))
    L_mm = closed_form_max_margin(5, 2)
    E_in = np.exp(in_support_logits(data.P))
    C = data.pi @ ((E_in * (data.S == 0)).sum(0) / (E_in * data.S).sum(0))
    expected = np.log(C / np.linalg.norm(L_mm, "nuc"))
    assert path_offset_estimate(data.P, data.pi, L_mm) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="L_mm"):
        path_offset_estimate(data.P, data.pi, np.zeros_like(L_mm))


def test_adamw_and_milestones_match_torch():
    """optimizer="adamw" with milestones is torch.optim.AdamW with MultiStepLR, step for step."""
    torch = pytest.importorskip("torch")
    P = np.array([[0.5, 1.0, 0.0], [0.5, 0.0, 0.3], [0.0, 0.0, 0.7]])
    pi = np.array([0.2, 0.5, 0.3])
    gen = np.random.default_rng(3)
    W0, H0 = gen.standard_normal((3, 4)), gen.standard_normal((4, 3))
    lam, eta, steps = 0.05, 0.01, 25
    run = ufm.train_ufm(P, pi, d=4, lam=lam, eta=eta, max_iter=steps, W0=W0, H0=H0,
                        optimizer="adamw", milestones=(10, 20), gamma=0.5, record_at=[steps])
    W = torch.tensor(W0, requires_grad=True)
    H = torch.tensor(H0, requires_grad=True)
    opt = torch.optim.AdamW([W, H], lr=eta, weight_decay=lam)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[10, 20], gamma=0.5)
    Pt, pit = torch.tensor(P), torch.tensor(pi)
    for _ in range(steps):
        opt.zero_grad()
        logq = torch.log_softmax(W @ H, dim=0)
        loss = -(pit * (Pt * torch.where(Pt > 0, logq, 0.0)).sum(0)).sum()
        loss.backward()
        opt.step()
        sched.step()
    assert np.allclose(run.W, W.detach().numpy(), atol=1e-12)
    assert np.allclose(run.H, H.detach().numpy(), atol=1e-12)
    # a milestone that never triggers changes nothing; gamma must be positive
    same = ufm.train_ufm(P, pi, d=4, lam=lam, eta=eta, max_iter=steps, W0=W0, H0=H0,
                         optimizer="adamw", milestones=(10, 20, 99), gamma=0.5, record_at=[steps])
    assert np.array_equal(same.W, run.W)
    with pytest.raises(ValueError, match="gamma"):
        ufm.train_ufm(P, pi, d=4, lam=lam, max_iter=2, rng=0, gamma=0.0)
    with pytest.raises(ValueError, match="milestones"):
        ufm.train_ufm(P, pi, d=4, lam=lam, max_iter=2, rng=0, milestones=(0.5,))
