"""Tests of seqrmt.frontiers.transfer against the Part 5 spec's [V] checkpoints (sections 4, 5) and invariants."""

import numpy as np
import pytest

from seqrmt import rmt
from seqrmt.frontiers import transfer as T

DEMO = (1000, 200, 100, 1.0, 1.5, 0.3, 1.0, 1.0)
ALIGNED = (2000, 50, 200, 1.5, 1.5, 0.9, 1.0, 1.0)
ANTI = (2000, 50, 200, 2.0, 2.0, -0.8, 1.0, 1.0)


# ------------------------------------------------------------------ L2-SP, closed forms


def test_mp_moments_match_stieltjes_and_derivative():
    for lam, ratio in [(0.1, 0.5), (1.0, 2.0), (3.0, 1.0)]:
        m, m2 = rmt.mp_resolvent_moments(lam, ratio)
        assert m == pytest.approx(rmt.mp_stieltjes(-lam, ratio).real, rel=1e-12)
        h = 1e-5 * lam
        num = (rmt.mp_resolvent_moments(lam - h, ratio)[0] - rmt.mp_resolvent_moments(lam + h, ratio)[0]) / (2 * h)
        assert m2 == pytest.approx(num, rel=1e-6)


def test_penalties_checkpoints():
    # spec 4.5: tau_S* = gamma_s / SNR = 0.25; tau_0* = 1.4750, 0.2500, 0.0574 for rho = 0.5, 1, 1.5
    assert T.source_optimal_penalty(0.5, 2.0) == pytest.approx(0.25)
    for rho, value in [(0.5, 1.4750), (1.0, 0.2500), (1.5, 0.0574)]:
        assert T.transfer_optimal_penalty(rho, 0.5, 2.0) == pytest.approx(value, abs=6e-5)
    assert T.transfer_optimal_penalty(-0.2, 0.5, 2.0) == np.inf


def test_source_optimal_penalty_minimises_source_risk():
    for gamma_s, snr in [(0.3, 0.5), (2.0, 5.0), (0.5, 2.0)]:
        taus = np.geomspace(1e-3, 1e3, 4001)
        a, b, v = T.l2sp_coefficients(taus, gamma_s)
        risk = 1 - 2 * a + b + v / snr
        assert taus[np.argmin(risk)] == pytest.approx(gamma_s / snr, rel=5e-3)


def test_transfer_optimal_penalty_is_a_minimum_and_on_the_right_side():
    for rho in (0.3, 0.7, 1.3, 2.0):
        t0 = T.transfer_optimal_penalty(rho, 0.5, 2.0)
        f0 = T.transfer_objective(t0, rho, 0.5, 2.0)
        grid = np.geomspace(1e-4, 1e4, 2001)
        assert f0 <= T.transfer_objective(grid, rho, 0.5, 2.0).min() + 1e-9
        assert (t0 > 0.25) == (rho < 1)


@pytest.mark.parametrize("gamma_s", [0.3, 2.0])
@pytest.mark.parametrize("snr", [0.5, 5.0])
def test_critical_alignment_is_one_half_at_source_optimum(gamma_s, snr):
    # spec 4.2 point 5, checked at (gamma_s, SNR) in {0.3, 2} x {0.5, 5}
    tau = T.source_optimal_penalty(gamma_s, snr)
    assert T.critical_alignment(tau, gamma_s, snr) == pytest.approx(0.5, abs=1e-10)
    # and the identity a - b - v/SNR = (m - tau m2)(tau - gamma_s/SNR) at any tau
    for t in (0.1, 1.0, 7.0):
        a, b, v = T.l2sp_coefficients(t, gamma_s)
        m, m2 = rmt.mp_resolvent_moments(t, gamma_s)
        assert a - b - v / snr == pytest.approx((m - t * m2) * (t - gamma_s / snr), abs=1e-12)


def test_distance_and_risk_checkpoints():
    # spec 4.5 theory columns (p = 200, n_s = 400, sigma_s^2 = 0.5, rho = 0.5)
    rows = [(0.05, 1.2886, 0.8000, 0.5080), (0.25, 1.0000, 0.6404, 0.4840),
            (1.475, 0.8326, 0.5478, 0.4701), (5.0, 0.8834, 0.5759, 0.4743)]
    for tau, d2, r100, r400 in rows:
        D2 = T.source_distance(tau, 0.5, 1.0, 1.0, 0.5, 0.5)
        assert D2 == pytest.approx(d2, abs=6e-5)
        assert T.target_risk(0.5, 2.0, 0.25, D2) == pytest.approx(r100, abs=6e-5)
        assert T.target_risk(0.2, 0.5, 1.0, D2) == pytest.approx(r400, abs=6e-5)


def test_transfer_decision_independent_of_target():
    # transfer helps iff D^2 < |w1|^2, whatever n_t, sigma_t, lambda
    for tau in (0.05, 1.475):
        D2 = T.source_distance(tau, 0.5, 1.0, 1.0, 0.5, 0.5)
        for lam, gt, s2 in [(0.5, 2.0, 0.25), (0.2, 0.5, 1.0), (3.0, 0.1, 4.0)]:
            helps = T.target_risk(lam, gt, s2, D2) < T.target_risk(lam, gt, s2, 1.0)
            assert helps == (D2 < 1.0)


def test_l2sp_ridge_primal_dual_and_definition():
    rng = np.random.default_rng(0)
    for n, p in [(30, 10), (10, 30)]:
        X = rng.standard_normal((n, p))
        y = rng.standard_normal(n)
        w0 = rng.standard_normal(p)
        w = T.l2sp_ridge(X, y, 0.3, w0)
        grad = -2 * X.T @ (y - X @ w) / n + 2 * 0.3 * (w - w0)
        assert np.abs(grad).max() < 1e-10


def test_simulation_checkpoints_l2sp():
    # spec 4.5 tolerance: D^2 within 0.02, risks within 0.015 (40 seeds at p = 200)
    taus = np.array([0.05, 0.25, 1.475, 5.0])
    targets = [(100, 0.25, 0.5), (400, 1.0, 0.2)]
    res = [T.simulate_l2sp(200, 400, 0.5, taus, targets, 0.5, s) for s in range(40)]
    D2 = np.mean([r[0] for r in res], axis=0)
    R = np.mean([r[1] for r in res], axis=0)
    D2_th = T.source_distance(taus, 0.5, 1.0, 1.0, 0.5, 0.5)
    assert np.abs(D2 - D2_th).max() < 0.02
    th = np.array([[T.target_risk(lam, 200 / nt, s2, np.r_[D2_th, 1.0]) for nt, s2, lam in targets]])
    assert np.abs(R - th[0]).max() < 0.015


# ------------------------------------------------------------------ alpha-LoRA


@pytest.mark.parametrize(
    "setting, rows",
    [
        (DEMO, [(0.0, 0.8946, 0.3835), (1.0, 0.8730, 0.4642)]),
        (ALIGNED, [(0.0, 0.7972, 0.2209), (1.0, 0.8848, 0.5450)]),
        (ANTI, [(0.0, 0.9044, 0.2974), (1.0, 0.6848, 0.1932)]),
    ],
)
def test_alpha_lora_checkpoints(setting, rows):
    mom = T.alpha_lora_moments(*setting)
    for alpha, acc, g2 in rows:
        assert T.alpha_lora_accuracy(alpha, *setting) == pytest.approx(acc, abs=6e-5)
        assert mom.second_moment(alpha) == pytest.approx(g2, abs=6e-5)


def test_alpha_star_checkpoints_and_repository_values():
    # corrected alpha*: 0.0792, 1.6405, -0.9429; repository T_3: 0.0831, 1.8514, -1.1424
    for setting, ours, repo in [(DEMO, 0.0792, 0.0831), (ALIGNED, 1.6405, 1.8514),
                                (ANTI, -0.9429, -1.1424)]:
        assert T.alpha_lora_optimal_alpha(*setting) == pytest.approx(ours, abs=6e-5)
        assert T.alpha_lora_optimal_alpha(*setting, variant="repository") == pytest.approx(
            repo, abs=6e-5)
    # the repository E[g^2] at alpha = 1 (spec table): 0.4623, 0.5376, 0.1831
    for setting, value in [(DEMO, 0.4623), (ALIGNED, 0.5376), (ANTI, 0.1831)]:
        mom = T.alpha_lora_moments(*setting, variant="repository")
        assert mom.second_moment(1.0) == pytest.approx(value, abs=6e-5)


def test_alpha_star_maximises_accuracy():
    for setting in (DEMO, ALIGNED, ANTI):
        a_star = T.alpha_lora_optimal_alpha(*setting)
        grid = a_star + np.linspace(-0.5, 0.5, 201)
        acc = T.alpha_lora_accuracy(grid, *setting)
        assert T.alpha_lora_accuracy(a_star, *setting) >= acc.max() - 1e-12


def test_t3_components_checkpoint():
    # spec 5.3 components: corrected T_3 = 0.1442 / 0.1204, repository 0.1369 / 0.1104
    big_aligned = (8000, 200, 800, 1.5, 1.5, 0.9, 1.0, 1.0)
    big_anti = (8000, 200, 800, 2.0, 2.0, -0.8, 1.0, 1.0)
    assert T.alpha_lora_t3(*big_aligned) == pytest.approx(0.1442, abs=6e-5)
    assert T.alpha_lora_t3(*big_anti) == pytest.approx(0.1204, abs=6e-5)
    assert T.alpha_lora_t3(*big_aligned, variant="repository") == pytest.approx(0.1369, abs=6e-5)
    assert T.alpha_lora_t3(*big_anti, variant="repository") == pytest.approx(0.1104, abs=6e-5)


def test_alpha_lora_reduces_to_plain_ridge_at_alpha_zero_and_beta_zero():
    # beta = 0: the source carries no information, m1 = T2 = 0 and alpha* = 0 is not defined
    mom = T.alpha_lora_moments(2000, 50, 200, 1.5, 1.5, 0.0, 1.0, 1.0)
    assert mom.m1 == 0.0 and mom.T2 == 0.0


def test_alpha_lora_simulation_checkpoint():
    # spec 5.3 tolerance: accuracy within 0.005 (60 seeds at the aligned setting, se ~ 0.0015)
    alphas = np.array([0.0, 1.0, T.alpha_lora_optimal_alpha(*ALIGNED)])
    acc = np.mean([T.simulate_alpha_lora(*ALIGNED, alphas, s)[0] for s in range(60)], axis=0)
    th = T.alpha_lora_accuracy(alphas, *ALIGNED)
    assert np.abs(acc - th).max() < 0.005


def test_t3_simulation_separates_corrected_from_repository():
    # the alpha^2 coefficient measured per draw: corrected within 3 se, repository > 5 se away
    for setting in (ALIGNED, ANTI):
        t3 = np.array([T.simulate_alpha_lora(*setting, [0.0], s)[2] for s in range(150)])
        se = t3.std(ddof=1) / np.sqrt(len(t3))
        assert abs(t3.mean() - T.alpha_lora_t3(*setting)) < 3 * se
        assert abs(t3.mean() - T.alpha_lora_t3(*setting, variant="repository")) > 5 * se


def test_source_norm_theory_matches_simulation():
    # ||w_tilde||^2 -> W_2 (spec: 0.1301 vs MC 0.1300 +- 0.0002 at N = 8000, p = 800)
    rng = np.random.default_rng(5)
    N, p, mu = 4000, 400, 1.5
    vals = []
    for _ in range(4):
        ys = rng.choice([-1.0, 1.0], size=N)
        Xs = rng.standard_normal((N, p))
        Xs[:, 0] += mu * ys
        w = T.l2sp_ridge(Xs, ys, 1.0)
        vals.append(w @ w)
    assert np.mean(vals) == pytest.approx(T.alpha_lora_source_norm_sq(N, p, mu, 1.0), abs=0.003)
    assert T.alpha_lora_source_norm_sq(8000, 800, 1.5, 1.0) == pytest.approx(0.1301, abs=6e-5)


def test_source_norm_is_the_derivative_form_and_the_code_form_is_low():
    # W_2 = h(m) - E_RR / gamma_pre equals d/dgamma [(gamma + 1/(1+delta_R)) / lambda_R]
    # (the spec's form, by central difference); review: 0.38731 at (p/N, gamma_pre) = (0.8, 0.3)
    from seqrmt import rmt

    def derivative_form(c, g0, mu):
        def f(g):
            dR = rmt.ridge_delta(c, g)
            return (g + 1.0 / (1.0 + dR)) / (mu**2 + 1.0 + g * (1.0 + dR))
        return (f(g0 * (1 + 1e-5)) - f(g0 * (1 - 1e-5))) / (2e-5 * g0)

    for N, p, mu, g in [(8000, 800, 1.5, 1.0), (2000, 200, 2.0, 1.0), (1000, 800, 1.0, 0.3)]:
        assert T.alpha_lora_source_norm_sq(N, p, mu, g) == pytest.approx(
            derivative_form(p / N, g, mu), rel=1e-7)
    assert T.alpha_lora_source_norm_sq(1000, 800, 1.0, 0.3) == pytest.approx(0.38731, abs=1e-5)
    code = T.alpha_lora_source_norm_sq(1000, 800, 1.0, 0.3, variant="repository")
    assert 1 - code / 0.38731 == pytest.approx(0.43, abs=0.01)  # 43 % low


@pytest.mark.parametrize("setting", [DEMO, ALIGNED, ANTI])
def test_code_t3_is_the_general_formula_with_the_wrong_source_norm(setting):
    # The authors' T_3 for an arbitrary source classifier, written with s = mu_beta . w_tilde and
    # W = ||w_tilde||^2: (g(1+dQ))^2/h [(s/lQ)^2 + (1-h) W/eta + (1-h) s^2 (mb2/lQ - 2)/(eta lQ)].
    # At s = beta mu^2 / lambda_R and the correct W_2 it is the corrected T_3; with the code's
    # closed form for ||w_tilde||^2 it is the code's ridge-specific T_3: the bug is that closed form.
    from seqrmt import rmt

    N, n, p, mu, mu_o, beta, g_pre, g = setting
    eta = p / n
    dQ, dR = rmt.ridge_delta(eta, g), rmt.ridge_delta(p / N, g_pre)
    h = 1 - eta / (1 + g * (1 + dQ)) ** 2
    mb2 = beta**2 * mu**2 + (1 - beta**2) * mu_o**2
    lQ, lR = mb2 + 1 + g * (1 + dQ), mu**2 + 1 + g_pre * (1 + dR)
    s = beta * mu**2 / lR

    def general(W):
        return (g * (1 + dQ)) ** 2 / h * ((s / lQ) ** 2 + (1 - h) * W / eta
                                          + (1 - h) * s**2 * (mb2 / lQ - 2) / (eta * lQ))

    for variant in ("corrected", "repository"):
        W = T.alpha_lora_source_norm_sq(N, p, mu, g_pre, variant=variant)
        assert general(W) == pytest.approx(T.alpha_lora_t3(*setting, variant=variant), rel=1e-9)


def test_validation():
    with pytest.raises(ValueError, match="beta"):
        T.alpha_lora_moments(100, 50, 20, 1.0, 1.0, 1.5, 1.0, 1.0)
    with pytest.raises(ValueError, match="variant"):
        T.alpha_lora_t3(100, 50, 20, 1.0, 1.0, 0.5, 1.0, 1.0, variant="paper")
    with pytest.raises(ValueError, match="w_prior"):
        T.l2sp_ridge(np.eye(3), np.ones(3), 1.0, np.ones(2))
    with pytest.raises(ValueError, match="targets"):
        T.simulate_l2sp(10, 20, 0.5, [0.1], [(10, 0.5)], 0.5, 0)


# ------------------------------------------------------------------ notebook drivers and reports


def test_l2sp_experiment_equals_the_loop_of_realisations():
    targets = [(30, 0.25, 0.5), (60, 1.0, 0.2)]
    D2, R = T.l2sp_experiment(20, 40, 0.5, [0.1, 1.0], targets, 0.5, 3, np.random.default_rng(7))
    gens = np.random.default_rng(7).spawn(3)  # realisation k: the k-th child generator
    for k in range(3):
        d2, r = T.simulate_l2sp(20, 40, 0.5, [0.1, 1.0], targets, 0.5, gens[k])
        np.testing.assert_array_equal(D2[k], d2)
        np.testing.assert_array_equal(R[k], r)
    with pytest.raises(ValueError, match="n_seeds"):
        T.l2sp_experiment(20, 40, 0.5, [0.1], targets, 0.5, 1, 0)


def test_l2sp_theory_matches_closed_forms_and_simulation():
    targets = [(100, 0.25, 0.5), (400, 1.0, 0.2)]
    d2, risk = T.l2sp_theory(200, 400, 0.5, [0.05, 0.25], targets, 0.5)
    assert d2[1] == pytest.approx(1.0) and d2[-1] == 1.0  # D^2(tau_S*) = |w1|^2 at rho = 1/2
    assert d2[0] == pytest.approx(1.289, abs=1e-3)  # the notebook's table
    for i, (n_t, s2, lam) in enumerate(targets):
        np.testing.assert_allclose(risk[i], T.target_risk(lam, 200 / n_t, s2, d2))
    assert risk[0, -1] == pytest.approx(risk[0, 1])  # D^2 = |w1|^2: transfer neither helps nor hurts
    assert T.l2sp_theory(10, 20, 0.5, [1.0], targets[:1], 1.5)[0][-1] == pytest.approx(2.25)
    D2, R = T.l2sp_experiment(200, 400, 0.5, [0.05, 0.25], targets, 0.5, 4, 1)
    assert np.all(np.abs(D2.mean(0) - d2[:2]) < 0.1)
    assert np.all(np.abs(R.mean(0) - risk) < 0.1)


def test_l2sp_table_numbers_are_the_means_and_errors():
    rng = np.random.default_rng(0)
    D2, R = rng.random((5, 2)), rng.random((5, 1, 3))
    d2_th, r_th = np.array([0.4, 0.6, 1.0]), np.array([[0.5, 0.5, 0.5]])
    text = T.l2sp_table([0.1, 2.0], [(50, 0.5, 0.5)], D2, R, d2_th, r_th)
    lines = text.splitlines()
    assert len(lines) == 3 * 2 + 1
    se = D2.std(0, ddof=1) / np.sqrt(5)
    assert lines[0] == f"tau = 0.100  D^2 0.400 | {D2[:, 0].mean():.3f} ± {se[0]:.3f}"
    assert lines[4] == "no transfer  D^2 1 (= |w1|^2)"
    rm, rs = R.mean(0), R.std(0, ddof=1) / np.sqrt(5)
    assert lines[5] == f"    risk, n_t = 50: 0.500 | {rm[0, 2]:.3f} ± {rs[0, 2]:.3f}"
    z = np.r_[(D2.mean(0) - d2_th[:2]) / se, ((rm - r_th) / rs).ravel()]
    assert lines[-1] == f"largest |MC - theory|: {np.abs(z).max():.1f} se"
    with pytest.raises(ValueError, match="risk"):
        T.l2sp_table([0.1, 2.0], [(50, 0.5, 0.5)], D2, R[:, :, :2], d2_th, r_th)


def test_alpha_lora_experiment_equals_the_loop_and_report_agrees():
    s, alphas = DEMO, np.array([0.0, 1.0])
    a = [T.alpha_lora_optimal_alpha(*s, variant=v) for v in ("corrected", "repository")]
    alphas = np.r_[alphas, a]
    acc, t3 = T.alpha_lora_experiment(*s, alphas, 3, np.random.default_rng(3))
    gens = np.random.default_rng(3).spawn(3)
    for k in range(3):
        a_k, _, t_k = T.simulate_alpha_lora(*s, alphas, gens[k])
        np.testing.assert_array_equal(acc[k], a_k)
        assert t3[k] == t_k
    lines = T.alpha_lora_report(s, alphas, acc, t3).splitlines()
    assert lines[0] == f"alpha* = {a[0]:.3f} (repository T3: {a[1]:.3f})"
    m, se = acc[:, 1].mean(), acc[:, 1].std(ddof=1) / np.sqrt(3)
    th = T.alpha_lora_accuracy(1.0, *s)
    assert lines[3] == f"  alpha =  1.000: accuracy {th:.4f} | {m:.4f} ± {se:.4f}"
    assert lines[4] == f"      gap {(m - th) / se:+.1f} se"
    d = acc[:, 2] - acc[:, 3]
    assert lines[-1].endswith(f"{d.mean():+.5f} ± {d.std(ddof=1) / np.sqrt(3):.5f}")
    with pytest.raises(ValueError, match="alphas"):  # the optima must have been simulated
        T.alpha_lora_report(s, alphas[:2], acc[:, :2], t3)


def test_plot_helpers_draw_the_theory():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, bx, cx) = plt.subplots(1, 3)
    T.plot_transfer_region(ax, 0.5, 2.0)
    rho_c = T.critical_alignment(np.geomspace(0.01, 100, 200), 0.5, 2.0)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), rho_c)
    assert ax.lines[-1].get_ydata()[0] == pytest.approx(0.5)  # rho_c(tau_S*) = 1/2
    risks = {0.4: np.random.default_rng(0).random((3, 2, 2))}
    T.plot_l2sp_learning_curves(bx, 20, 40, 0.5, 0.25, [50, 100], 0.5, 0.5, risks)
    n_grid = bx.lines[0].get_xdata()
    d2 = T.source_distance(0.25, 0.5, 1.0, 1.0, 0.4, 0.5)
    np.testing.assert_allclose(bx.lines[0].get_ydata(), T.target_risk(0.5, 20 / n_grid, 0.5, d2))
    with pytest.raises(ValueError, match="risks"):
        T.plot_l2sp_learning_curves(bx, 20, 40, 0.5, 0.25, [50], 0.5, 0.5, risks)
    acc = np.random.default_rng(1).random((3, 2))
    T.plot_alpha_lora(cx, DEMO, [0.0, 1.0], acc)
    fine = cx.lines[0].get_xdata()
    np.testing.assert_allclose(cx.lines[0].get_ydata(), T.alpha_lora_accuracy(fine, *DEMO))
    with pytest.raises(ValueError, match="setting"):
        T.plot_alpha_lora(cx, DEMO[:7], [0.0, 1.0], acc)
    plt.close(fig)
