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
