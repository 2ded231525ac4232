"""Tests of seqrmt.dyson.teacher_student: checkpoint D-1, the width formula, quenched data, a brute-force run."""

import numpy as np
import pytest
from scipy import stats

from seqrmt.dyson import teacher_student as T
from seqrmt.dyson import universality as U
from seqrmt.runtime import single_threaded_blas


@pytest.fixture(autouse=True)
def _one_blas_thread():
    with single_threaded_blas():
        yield


@pytest.fixture(scope="module")
def d1():
    return T.teacher_student_ensemble(0.1, 16, 0.1, n_seeds=2000, rng=2024, n_steps=400)


def test_checkpoint_D1(d1):
    """D-1 at the spec's size (2000 seeds) and 400 steps, against the spec's numbers with its 3% tolerance.

    The spec's numbers come from other random draws: the relative SE of a width from 2000 pairs is
    about 1.3%, of <S> 1.2%, of <s^2> 1.5%, so 3% is 2-2.5 SE of the difference; with this seed the
    values are stable (the theory comparison below uses SE-based tolerances).
    """
    f = d1.final
    assert f.shape == (2000, 2)
    x0, sigma = U.fit_two_mode(f)
    S = f[:, 0] - f[:, 1]
    s = S / S.mean()
    assert sigma == pytest.approx(0.00795, rel=0.03)
    assert T.teacher_student_width(0.1, 16, 0.1, method="leading") == pytest.approx(0.00791, abs=5e-6)
    assert T.teacher_student_width(0.1, 16, 0.1) == pytest.approx(0.00811, abs=5e-6)
    assert x0 == pytest.approx(2.000, abs=5e-4)
    assert S.mean() == pytest.approx(0.01426, rel=0.03)
    assert S.mean() == pytest.approx(np.sqrt(np.pi) * sigma, rel=0.03)
    assert np.mean(s**2) == pytest.approx(1.2625, rel=0.03)
    assert np.mean(s**2) == pytest.approx(4 / np.pi, rel=0.03)
    assert stats.kstest(s, U.wigner_surmise_cdf).pvalue > 0.01
    assert U.binder_cumulant(f) == pytest.approx(-4 / 27, abs=0.03)  # SE ~ 0.008


def test_trajectory_records(d1):
    assert d1.steps[0] == 0 and d1.steps[-1] == 400
    assert d1.trajectory.shape == (d1.steps.size, 2000, 2)
    np.testing.assert_array_equal(d1.trajectory[-1], d1.final)
    assert np.all(d1.trajectory[:, :, 0] >= d1.trajectory[:, :, 1])  # sorted decreasingly
    assert d1.trajectory[0].mean() < 0.3  # starts near zero (init scale 0.1)
    np.testing.assert_allclose(np.linalg.svd(d1.weights, compute_uv=False), d1.final)


@pytest.mark.parametrize("lr,batch,eps", [(0.1, 16, 0.1), (0.4, 16, 0.1), (0.2, 4, 0.05), (0.05, 8, 0.1)])
def test_width_against_theory(lr, batch, eps):
    """The pooled-variance width matches the exact stationary second moments within 4 SE."""
    n = 8000
    f = T.teacher_student_ensemble(lr, batch, eps, n_seeds=n, rng=int(1000 * lr + batch), n_steps=400).final
    sigma = np.sqrt(2 * f.var() / 3)
    # SE of a variance estimate from n dependent pairs ~ sqrt(2(1+kurt-ish)/2n); 1.1/sqrt(n) on sigma
    se = 1.1 / np.sqrt(n) * sigma
    assert sigma == pytest.approx(T.teacher_student_width(lr, batch, eps, method="exact"), abs=4 * se)
    S = (f[:, 0] - f[:, 1]).mean()
    assert S == pytest.approx(np.sqrt(np.pi) * T.teacher_student_width(lr, batch, eps, method="exact"), rel=0.03)


def test_exact_width_reduces_to_ar1():
    """Without Wishart fluctuations (batch -> infinity at fixed lr eps^2 / batch) exact -> AR(1)."""
    big = 10**7
    eps = 0.1 * np.sqrt(big / 16)
    assert T.teacher_student_width(0.3, big, eps, "exact") == pytest.approx(
        T.teacher_student_width(0.3, big, eps, "ar1"), rel=1e-5)
    # linear scaling: the leading width depends on lr / batch only
    assert T.teacher_student_width(0.1, 16, 0.1, "leading") == T.teacher_student_width(0.2, 32, 0.1, "leading")


def test_brute_force_per_sample_algorithm():
    """Independent implementation of the spec's algorithm (explicit inputs and noise matrices, quenched)."""
    rng = np.random.default_rng(11)
    n, nb, B, lr, eps = 3000, 50, 4, 0.2, 0.1
    x = rng.normal(size=(n, nb, B, 2))
    m = rng.normal(scale=eps, size=(n, nb, B, 2, 2))
    a = np.tril(m) + np.swapaxes(np.tril(m, -1), -1, -2)
    a[..., [0, 1], [0, 1]] *= np.sqrt(2)
    C = np.einsum("snbi,snbj->snij", x, x) / B
    abar = a.mean(axis=2)
    W = rng.normal(scale=0.1, size=(n, 2, 2))
    for step in range(200):  # four epochs over the same 50 batches
        b = step % nb
        W = W + lr * ((2 * np.eye(2) - W) @ C[:, b] + abar[:, b])
    ref = np.linalg.svd(W, compute_uv=False)
    lib = T.teacher_student_ensemble(lr, B, eps, n_seeds=n, rng=12, n_steps=200, n_batches=nb).final
    s_ref, s_lib = np.sqrt(2 * ref.var() / 3), np.sqrt(2 * lib.var() / 3)
    se = 1.1 / np.sqrt(n) * s_ref * np.sqrt(2)
    assert s_lib == pytest.approx(s_ref, abs=4 * se)
    assert lib.mean() == pytest.approx(ref.mean(), abs=4 * s_ref / np.sqrt(n))


def test_closed_form_singular_values_match_svd():
    W = np.random.default_rng(14).normal(size=(1000, 2, 2))
    np.testing.assert_allclose(T._svals(W), np.linalg.svd(W, compute_uv=False), atol=1e-13)


def test_wishart_batch_statistics():
    rng = np.random.default_rng(13)
    C = T._wishart_means(rng, (200_000,), 8)
    np.testing.assert_allclose(C.mean(axis=0), np.eye(2), atol=0.01)
    assert C[:, 0, 0].var() == pytest.approx(2 / 8, rel=0.02)
    assert C[:, 1, 1].var() == pytest.approx(2 / 8, rel=0.02)
    assert C[:, 0, 1].var() == pytest.approx(1 / 8, rel=0.02)
    C1 = T._wishart_means(rng, (10,), 1)  # batch 1: rank one
    np.testing.assert_allclose(np.linalg.det(C1), 0, atol=1e-12)


def test_quenched_data_repeat_each_epoch():
    """Same seed, same run (data drawn once); a different epoch length changes which batches repeat."""
    a = T.teacher_student_ensemble(0.3, 4, 0.1, n_seeds=5, rng=3, n_steps=30, n_batches=10).final
    b = T.teacher_student_ensemble(0.3, 4, 0.1, n_seeds=5, rng=3, n_steps=30, n_batches=10).final
    c = T.teacher_student_ensemble(0.3, 4, 0.1, n_seeds=5, rng=3, n_steps=30, n_batches=30).final
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_validation_errors_name_the_argument():
    with pytest.raises(ValueError, match="lr"):
        T.teacher_student_ensemble(0.0, 16, 0.1, 10)
    with pytest.raises(ValueError, match="lr"):
        T.teacher_student_ensemble(2.5, 16, 0.1, 10)
    with pytest.raises(ValueError, match="lr"):
        T.teacher_student_ensemble(np.nan, 16, 0.1, 10)
    with pytest.raises(ValueError, match="batch"):
        T.teacher_student_ensemble(0.1, 0, 0.1, 10)
    with pytest.raises(ValueError, match="batch"):
        T.teacher_student_ensemble(0.1, 2.5, 0.1, 10)
    with pytest.raises(ValueError, match="eps"):
        T.teacher_student_ensemble(0.1, 16, -0.1, 10)
    with pytest.raises(ValueError, match="n_seeds"):
        T.teacher_student_ensemble(0.1, 16, 0.1, 0)
    with pytest.raises(ValueError, match="n_steps"):
        T.teacher_student_ensemble(0.1, 16, 0.1, 10, n_steps=0)
    with pytest.raises(ValueError, match="record_every"):
        T.teacher_student_ensemble(0.1, 16, 0.1, 10, record_every=0)
    with pytest.raises(ValueError, match="method"):
        T.teacher_student_width(0.1, 16, 0.1, method="bogus")
    with pytest.raises(ValueError, match="lr"):
        T.teacher_student_width(-0.1, 16, 0.1)
    with pytest.raises(ValueError, match="eps"):
        T.teacher_student_width(0.1, 16, np.inf)


# ---------------------------------------------------------------- drivers added for short notebook cells
def test_scan_equals_inline_loop():
    """Each setting runs on its own child generator: a row does not depend on the other settings."""
    from seqrmt.ensemble import spawn_generators
    from seqrmt.stats import mean_se

    grid = [(0.1, 16, 0.1), (0.3, 8, 0.05)]
    tab = T.teacher_student_scan(grid, 300, rng=np.random.default_rng(9), n_steps=200)
    gens = spawn_generators(np.random.default_rng(9), len(grid))
    for row, (a, b, e), rng in zip(tab, grid, gens):
        f = T.teacher_student_ensemble(a, b, e, n_seeds=300, rng=rng, n_steps=200).final
        S = f[:, 0] - f[:, 1]
        ref = (*U.two_mode_width(f), *mean_se(S),
               T.teacher_student_width(a, b, e, "leading"), T.teacher_student_width(a, b, e, "exact"))
        np.testing.assert_allclose(row, ref, rtol=1e-12)
    # the measured width agrees with the exact prediction (5 SE)
    assert np.all(np.abs(tab[:, 0] - tab[:, 5]) < 5 * tab[:, 1])
    # the first setting alone gives the first row: the others do not change its draws
    alone = T.teacher_student_scan(grid[:1], 300, rng=np.random.default_rng(9), n_steps=200)
    np.testing.assert_array_equal(alone, tab[:1])
    with pytest.raises(ValueError, match="settings"):
        T.teacher_student_scan([(0.1, 16)], 10, rng=0)
    with pytest.raises(ValueError, match="settings: lr"):
        T.teacher_student_scan([(3.0, 16, 0.1)], 10, rng=0)


def test_plot_singular_value_paths():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run = T.teacher_student_ensemble(0.1, 16, 0.1, n_seeds=3, rng=0, n_steps=200, record_every=10)
    fig, ax = plt.subplots()
    T.plot_singular_value_paths(ax, run, start=100, member=1)
    upper, lower = ax.lines
    late = run.steps >= 100
    np.testing.assert_allclose(upper.get_ydata(), run.trajectory[late, 1, 0] - 2)
    np.testing.assert_allclose(lower.get_xdata(), run.steps[late])
    with pytest.raises(ValueError, match="member"):
        T.plot_singular_value_paths(ax, run, member=3)
    with pytest.raises(ValueError, match="result"):
        T.plot_singular_value_paths(ax, run.final)
    plt.close(fig)


def test_plot_width_scan_and_ratio():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tab = T.teacher_student_scan([(0.1, 16, 0.1), (0.2, 16, 0.1), (0.1, 8, 0.1)], 50, rng=0, n_steps=100)
    fig, axes = plt.subplots(1, 3)
    T.plot_width_scan(axes[:2], tab, {"a": slice(0, 2), "b": [2]}, line_max=0.03)
    exact_line, identity = [ln for ln in axes[0].lines if ln.get_label() in ("exact width", "identity")]
    np.testing.assert_allclose(exact_line.get_ydata(), tab[:, 5])
    np.testing.assert_allclose(identity.get_xdata(), [0, 0.03])
    with pytest.raises(ValueError, match="scan"):
        T.plot_width_scan(axes[:2], tab[:, :5], {"a": slice(0, 2)})
    ax = T.plot_width_ratio(axes[2], [0.1, 0.2], [1.0, 1.05], [0.01, 0.02], [1.03, 1.06])
    ar1 = [ln for ln in ax.lines if ln.get_label().startswith("AR(1)")][0]
    a = ar1.get_xdata()
    np.testing.assert_allclose(ar1.get_ydata(), [T.teacher_student_width(x, 16, 0.1, "ar1")
                                                 / T.teacher_student_width(x, 16, 0.1, "leading") for x in a])
    with pytest.raises(ValueError, match="ratio"):
        T.plot_width_ratio(axes[2], [0.1, 0.2], [1.0], [0.01, 0.02], [1.03, 1.06])
    plt.close(fig)
