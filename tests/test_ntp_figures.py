"""Tests for seqrmt.ntp.figures (cosine heat maps, measured-against-formula scatter)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from seqrmt.ntp.figures import cosine_heatmap, scatter_vs_formula  # noqa: E402


def test_cosine_heatmap_fixed_range_and_ticks():
    fig, (a, b) = plt.subplots(1, 2)
    C = np.array([[1.0, 0.3], [0.3, 1.0]])  # range [0.3, 1]: the colour limits must stay [-1, 1]
    im = cosine_heatmap(a, C, "x", "y", title="t")
    assert im.get_clim() == (-1.0, 1.0)
    np.testing.assert_array_equal(im.get_array(), C)
    assert (a.get_xlabel(), a.get_ylabel(), a.get_title()) == ("x", "y", "t")
    cosine_heatmap(b, C, ticks=False)
    assert len(b.get_xticks()) == 0 and len(b.get_yticks()) == 0
    plt.close(fig)


def test_cosine_heatmap_rejects_bad_input():
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="C must be square"):
        cosine_heatmap(ax, np.ones((2, 3)))
    with pytest.raises(ValueError, match="ax"):
        cosine_heatmap("axes", np.eye(2))
    with pytest.raises(ValueError, match="title"):
        cosine_heatmap(ax, np.eye(2), title=3)
    plt.close(fig)


def test_scatter_vs_formula_groups_and_identity_line():
    fig, ax = plt.subplots()
    f = [np.arange(4.0).reshape(2, 2), np.array([0.5])]
    y = [np.arange(4.0).reshape(2, 2) + 1e-3, np.array([0.4])]
    lines = scatter_vs_formula(ax, f, y, labels=["a", "b"])
    assert len(lines) == 2
    np.testing.assert_array_equal(lines[0].get_xdata(), [0, 1, 2, 3])  # flattened
    np.testing.assert_array_equal(lines[1].get_ydata(), [0.4])
    labels = [h.get_label() for h in ax.get_legend_handles_labels()[0]]
    assert labels == ["a", "b", "formula"]
    with pytest.raises(ValueError, match=r"measured\[0\]"):
        scatter_vs_formula(ax, [[1.0, 2.0]], [[1.0]])
    with pytest.raises(ValueError, match="labels"):
        scatter_vs_formula(ax, [[1.0]], [[1.0]], labels=["a", "b"])
    plt.close(fig)


def test_logit_path_panels_draw_the_decomposition():
    from seqrmt.ntp.figures import logit_path_panels

    fig, axes = plt.subplots(1, 3)
    lams = np.array([1e-1, 1e-2, 1e-3])
    dec = {"rho": np.array([1.0, 3.0, 5.0]), "nuclear": np.array([2.0, 6.0, 10.0]),
           "cos_raw": np.array([0.9, 0.99, 0.999]), "cos_centred": np.array([0.95, 0.995, 0.9995]),
           "dist_T": np.array([1e-1, 1e-2, 1e-3])}
    logit_path_panels(axes, lams, dec, 2.0)
    x = np.log(1 / lams)
    np.testing.assert_allclose(axes[0].lines[0].get_ydata(), dec["rho"])
    np.testing.assert_allclose(axes[0].lines[1].get_ydata(), dec["nuclear"] / 2.0)
    np.testing.assert_allclose(axes[0].lines[2].get_ydata(), x + 5.0 - x[-1])  # unit slope
    np.testing.assert_allclose(axes[1].lines[0].get_ydata(), 1 - dec["cos_raw"])
    np.testing.assert_allclose(axes[2].lines[1].get_ydata(), 1e-2 * lams / 1e-2)  # through point 2
    with pytest.raises(ValueError, match="decomposition"):
        logit_path_panels(axes, lams, {"rho": dec["rho"]}, 2.0)
    with pytest.raises(ValueError, match="axes"):
        logit_path_panels(axes[:2], lams, dec, 2.0)
    plt.close(fig)


def test_ufm_training_panels_imbalance_prediction():
    from seqrmt.ntp.figures import ufm_training_panels
    from seqrmt.ntp.ufm import train_ufm

    P = np.array([[0.5, 0.0], [0.5, 1.0]])
    run = train_ufm(P, [0.5, 0.5], d=2, lam=0.1, eta=0.5, max_iter=50, rng=0,
                    L_target=np.array([[1.0, -1.0], [-1.0, 1.0]]))
    fig, axes = plt.subplots(1, 3)
    ufm_training_panels(axes, {0.1: run}, {0.1: 0.0})
    t = run.steps[1:]
    np.testing.assert_allclose(axes[0].lines[0].get_ydata(), np.abs(run.objective[1:]))
    np.testing.assert_allclose(axes[1].lines[1].get_ydata(),
                               np.abs(run.balancedness[0]) * np.exp(-2 * 0.1 * 0.5 * t))
    np.testing.assert_allclose(axes[2].lines[0].get_ydata(), 1 - run.cos_target[1:])
    with pytest.raises(ValueError, match="optimum"):
        ufm_training_panels(axes, {0.1: run}, {0.2: 0.0})
    plt.close(fig)


def test_embedding_norm_panel_draws_frobenius_norms():
    from seqrmt.ntp.figures import embedding_norm_panel

    fig, ax = plt.subplots()
    rng = np.random.default_rng(0)
    Ws, Hs = rng.standard_normal((3, 4, 2)), rng.standard_normal((3, 2, 5))
    lines = embedding_norm_panel(ax, [("A", np.array([0, 1, 2]), Ws, Hs)])
    np.testing.assert_allclose(lines[0].get_ydata(), [np.linalg.norm(Ws[1]), np.linalg.norm(Ws[2])])
    np.testing.assert_allclose(lines[1].get_ydata(), [np.linalg.norm(Hs[1]), np.linalg.norm(Hs[2])])
    assert lines[1].get_linestyle() == "--"
    with pytest.raises(ValueError, match="models"):
        embedding_norm_panel(ax, [("A", np.array([0, 1]), Ws, Hs)])  # 2 times, 3 snapshots
    plt.close(fig)


def test_similarity_trajectory_panel_curves_and_yardstick():
    from seqrmt.ntp.figures import similarity_trajectory_panel

    fig, ax = plt.subplots()
    traj = {"word_mm": np.array([0.1, 0.5, 0.8]), "word_S": np.array([0.2, 0.6, 0.9])}
    lines = similarity_trajectory_panel(ax, [("TF", np.array([0, 1, 10]), traj)], "word", 0.7)
    np.testing.assert_allclose(lines[0].get_ydata(), [0.5, 0.8])
    np.testing.assert_allclose(lines[1].get_ydata(), [0.6, 0.9])
    np.testing.assert_allclose(lines[2].get_ydata(), [0.7, 0.7])  # yardstick
    with pytest.raises(ValueError, match="kind"):
        similarity_trajectory_panel(ax, [("TF", np.array([0, 1, 10]), traj)], "ctx2", 0.7)
    with pytest.raises(ValueError, match="trajectory"):
        similarity_trajectory_panel(ax, [("TF", np.array([0, 1, 10]), traj)], "ctx", 0.7)
    plt.close(fig)
