"""Tests of seqrmt.utils and seqrmt.plotting."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from seqrmt import plotting, utils  # noqa: E402


def test_as_generator():
    g = np.random.default_rng(0)
    assert utils.as_generator(g) is g
    a, b = utils.as_generator(5), utils.as_generator(5)
    assert a.standard_normal() == b.standard_normal()
    assert isinstance(utils.as_generator(None), np.random.Generator)
    with pytest.raises(ValueError, match="rng"):
        utils.as_generator("seed")
    with pytest.raises(ValueError, match="rng"):
        utils.as_generator(-1)


def test_scale_and_preset(monkeypatch):
    monkeypatch.delenv("SEQRMT_SCALE", raising=False)
    assert utils.scale() == "book" and utils.preset(book=1, paper=2) == 1
    monkeypatch.setenv("SEQRMT_SCALE", "paper")
    assert utils.scale() == "paper" and utils.preset(book=1, paper=2) == 2
    monkeypatch.setenv("SEQRMT_SCALE", "huge")
    with pytest.raises(ValueError, match="SEQRMT_SCALE"):
        utils.scale()


def test_single_threaded_blas_limits_threads():
    from threadpoolctl import threadpool_info

    with utils.single_threaded_blas():
        blas = [p for p in threadpool_info() if p["user_api"] == "blas"]
        assert all(p["num_threads"] == 1 for p in blas)


def test_torch_device():
    torch = pytest.importorskip("torch")
    dev = utils.torch_device()
    assert dev.type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert utils.torch_device("cpu").type == "cpu"
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="cuda"):
            utils.torch_device("cuda")
    with pytest.raises(ValueError, match="device"):
        utils.torch_device("not-a-device")


def test_loglog_slope():
    x = np.array([10.0, 100.0, 1000.0])
    assert utils.loglog_slope(x, 3 * x**-0.5) == pytest.approx(-0.5)
    with pytest.raises(ValueError, match="y"):
        utils.loglog_slope(x, [1.0, -1.0, 2.0])


def test_plotting_helpers():
    with plotting.book_style():
        fig, ax = plt.subplots()
        assert fig.get_facecolor()[:3] == (1.0, 1.0, 1.0) and fig.get_facecolor()[3] == 1.0
        x = np.linspace(0, 1, 20)
        plotting.hist_vs_density(ax, np.random.default_rng(0).uniform(size=100), x, np.ones(20), atom=(0.0, 0.3))
        assert len(ax.patches) > 0 and len(ax.lines) >= 1
        plotting.curve_vs_mc(ax, x, x, x[::5], x[::5], 0.1 * np.ones(4))
        with pytest.raises(ValueError, match="density"):
            plotting.hist_vs_density(ax, [0.1], x, np.ones(3))
        plotting.mean_spread(ax, [0.2, 0.8], [0.1, 0.5], [0.05, 0.05], [0.1, 0.5], [0.06, 0.05], labels=["a", "b"])
        assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b"]
        with pytest.raises(ValueError, match="mc_sd"):
            plotting.mean_spread(ax, [0.2, 0.8], [0.1, 0.5], [0.05, 0.05], [0.1, 0.5], [0.06])
        with pytest.raises(ValueError, match="y_err"):
            plotting.curve_vs_mc(ax, x, x, x[::5], x[::5], np.ones(3))
        plt.close(fig)


def test_notebook_seed_is_shifted_by_the_environment(monkeypatch):
    from seqrmt.utils import notebook_rng, notebook_seed, seed_offset

    monkeypatch.delenv("SEQRMT_SEED_OFFSET", raising=False)
    assert seed_offset() == 0 and notebook_seed(101) == 101
    monkeypatch.setenv("SEQRMT_SEED_OFFSET", "3")
    assert notebook_seed(101) == 104
    assert notebook_rng(101).integers(1 << 30) == np.random.default_rng(104).integers(1 << 30)
    for bad in ("-1", "one", "1.5"):
        monkeypatch.setenv("SEQRMT_SEED_OFFSET", bad)
        with pytest.raises(ValueError, match="SEQRMT_SEED_OFFSET"):
            seed_offset()
    monkeypatch.delenv("SEQRMT_SEED_OFFSET")
    for bad in (-1, 1.0, True, "7"):
        with pytest.raises(ValueError, match="seed"):
            notebook_seed(bad)


def test_subplots_fit_the_column():
    import matplotlib.pyplot as plt

    from seqrmt import plotting

    fig, axes = plotting.subplots(2, 2)
    assert tuple(fig.get_size_inches()) == (plotting.COLUMN_WIDTH, 2 * plotting.ROW_HEIGHT)
    assert axes.shape == (2, 2)
    plt.close(fig)
    for kwargs in ({"ncols": 4}, {"nrows": 0}, {"row_height": 0.1}, {"figsize": (12, 3)}):
        with pytest.raises(ValueError):
            plotting.subplots(**kwargs)


def test_mean_se_closed_form_and_scipy():
    from scipy import stats

    from seqrmt.utils import mean_se

    x = np.array([[1.0, 0.0], [3.0, 0.0], [5.0, 3.0]])
    m, se = mean_se(x)
    np.testing.assert_allclose(m, [3.0, 1.0])
    np.testing.assert_allclose(se, [2.0 / np.sqrt(3), 1.0])
    y = np.random.default_rng(7).normal(size=(30, 3))
    np.testing.assert_allclose(mean_se(y)[1], stats.sem(y, axis=0))
    m1, se1 = mean_se([1.0, 2.0, 3.0, 6.0])
    assert isinstance(m1, float) and m1 == 3.0 and se1 == pytest.approx(np.sqrt(14 / 3) / 2)
    with pytest.raises(ValueError, match="samples"):
        mean_se([1.0])


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_mean_se_along_any_axis_is_scipy_sem(axis):
    from scipy import stats

    from seqrmt.utils import mean_se

    y = np.random.default_rng(axis + 3).normal(size=(4, 5, 6))
    m, se = mean_se(y, axis=axis)
    np.testing.assert_allclose(m, y.mean(axis=axis), rtol=1e-14)
    np.testing.assert_allclose(se, stats.sem(y, axis=axis), rtol=1e-14)  # ddof=1
    assert not np.allclose(se, stats.sem(y, axis=axis, ddof=0))  # the test sees a ddof slip
    with pytest.raises(ValueError, match="axis"):
        mean_se(y, axis=3)
    with pytest.raises(ValueError, match="axis"):
        mean_se(y, axis=1.0)
    with pytest.raises(ValueError, match="samples"):
        mean_se(np.ones((1, 3)), axis=0)


def test_library_has_one_standard_error_helper():
    """No module of seqrmt computes a standard error by hand: they call utils.mean_se."""
    import pathlib
    import re

    import seqrmt

    pattern = re.compile(r"def _mean_se|std\([^)]*\)\s*/\s*np\.sqrt")
    root = pathlib.Path(seqrmt.__file__).parent
    hits = [f"{p.relative_to(root)}:{i}" for p in sorted(root.rglob("*.py")) if p.name != "utils.py"
            for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert hits == []


def test_glue_stores_python_numbers(monkeypatch):
    """NumPy scalars become Python numbers (the book's {glue:text} formats them)."""
    import sys
    import types

    from seqrmt.utils import glue

    seen = {}
    fake = types.ModuleType("myst_nb")
    fake.glue = lambda name, value, display=True: seen.update({name: (value, display)})
    monkeypatch.setitem(sys.modules, "myst_nb", fake)
    glue("a", np.float64(0.25), display=False)
    glue("b", np.array(3))
    assert seen == {"a": (0.25, False), "b": (3, True)}
    assert type(seen["a"][0]) is float and type(seen["b"][0]) is int
    with pytest.raises(ValueError, match="name"):
        glue("", 1.0)
    with pytest.raises(ValueError, match="display"):
        glue("c", 1.0, display="no")


def test_glue_without_myst_nb_is_a_no_op(monkeypatch):
    import sys

    from seqrmt.utils import glue

    monkeypatch.setitem(sys.modules, "myst_nb", None)  # import fails
    assert glue("a", 1.0) is None
