"""Tests of seqrmt.runtime, seqrmt.stats (check, mean_se, loglog_fit) and seqrmt.plotting."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from seqrmt import plotting, runtime, stats  # noqa: E402
from seqrmt._validation import as_generator  # noqa: E402


def test_as_generator():
    g = np.random.default_rng(0)
    assert as_generator(g) is g
    a, b = as_generator(5), as_generator(5)
    assert a.standard_normal() == b.standard_normal()
    assert isinstance(as_generator(None), np.random.Generator)
    with pytest.raises(ValueError, match="rng"):
        as_generator("seed")
    with pytest.raises(ValueError, match="rng"):
        as_generator(-1)


def test_scale_and_preset(monkeypatch):
    monkeypatch.delenv("SEQRMT_SCALE", raising=False)
    assert runtime.scale() == "book" and runtime.preset(book=1, paper=2) == 1
    monkeypatch.setenv("SEQRMT_SCALE", "paper")
    assert runtime.scale() == "paper" and runtime.preset(book=1, paper=2) == 2
    monkeypatch.setenv("SEQRMT_SCALE", "huge")
    with pytest.raises(ValueError, match="SEQRMT_SCALE"):
        runtime.scale()


def test_single_threaded_blas_limits_threads():
    from threadpoolctl import threadpool_info

    with runtime.single_threaded_blas():
        blas = [p for p in threadpool_info() if p["user_api"] == "blas"]
        assert all(p["num_threads"] == 1 for p in blas)


def test_torch_device():
    torch = pytest.importorskip("torch")
    dev = runtime.torch_device()
    assert dev.type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert runtime.torch_device("cpu").type == "cpu"
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="cuda"):
            runtime.torch_device("cuda")
    with pytest.raises(ValueError, match="device"):
        runtime.torch_device("not-a-device")


def test_loglog_fit_without_error_bars_uses_the_residuals():
    x = np.array([10.0, 100.0, 1000.0, 10000.0])
    slope, se = stats.loglog_fit(x, 3 * x**-0.5)
    assert slope == pytest.approx(-0.5) and se == pytest.approx(0.0, abs=1e-12)
    # residual standard error against statsmodels-free OLS: numpy's polyfit covariance
    y = 3 * x**-0.5 * np.exp([0.1, -0.05, 0.02, -0.07])
    slope, se = stats.loglog_fit(x, y)
    p, cov = np.polyfit(np.log(x), np.log(y), 1, cov="unscaled")
    resid = np.log(y) - np.polyval(p, np.log(x))
    assert slope == pytest.approx(p[0]) and se == pytest.approx(np.sqrt(cov[0, 0] * resid @ resid / 2))
    with pytest.raises(ValueError, match="y"):
        stats.loglog_fit(x, [1.0, -1.0, 2.0, 1.0])
    with pytest.raises(ValueError, match="three points"):
        stats.loglog_fit(x[:2], [1.0, 2.0])


def test_loglog_fit_slope_and_se_against_monte_carlo():
    x = np.array([100.0, 200.0, 400.0, 800.0, 1600.0])
    p, _ = stats.loglog_fit(x, 3 * x**-0.5, 0.01 * np.ones(5))
    assert p == pytest.approx(-0.5, abs=1e-12)
    rng, rel, y0 = np.random.default_rng(0), 0.05, x**-1.0
    slopes = [stats.loglog_fit(x, y0 * (1 + rel * rng.standard_normal(5)), rel * y0)[0] for _ in range(4000)]
    _, se = stats.loglog_fit(x, y0, rel * y0)
    assert np.std(slopes) == pytest.approx(se, rel=0.05)
    with pytest.raises(ValueError, match="x"):
        stats.loglog_fit([1.0, 1.0], [1.0, 2.0], [0.1, 0.1])
    with pytest.raises(ValueError, match="y_se"):
        stats.loglog_fit([1.0, 2.0], [1.0, 2.0], [0.1, -0.1])


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
    from seqrmt.runtime import notebook_rng, notebook_seed, seed_offset

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

    from seqrmt.stats import mean_se

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

    from seqrmt.stats import mean_se

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
    """No module of seqrmt computes a standard error by hand: they call stats.mean_se."""
    import pathlib
    import re

    import seqrmt

    pattern = re.compile(r"def _mean_se|std\([^)]*\)\s*/\s*np\.sqrt")
    root = pathlib.Path(seqrmt.__file__).parent
    hits = [f"{p.relative_to(root)}:{i}" for p in sorted(root.rglob("*.py")) if p.name != "stats.py"
            for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert hits == []


def test_glue_stores_python_numbers(monkeypatch):
    """NumPy scalars become Python numbers (the book's {glue:text} formats them)."""
    import sys
    import types

    from seqrmt.runtime import glue

    seen = {}
    fake = types.ModuleType("myst_nb")
    fake.glue = lambda name, value, display=True: seen.update({name: (value, display)})
    monkeypatch.setitem(sys.modules, "myst_nb", fake)
    glue("a", np.float64(0.25))
    glue("b", np.array(3), display=True)
    assert seen == {"a": (0.25, False), "b": (3, True)}
    assert type(seen["a"][0]) is float and type(seen["b"][0]) is int
    with pytest.raises(ValueError, match="name"):
        glue("", 1.0)
    with pytest.raises(ValueError, match="display"):
        glue("c", 1.0, display="no")


def test_glue_without_myst_nb_is_a_no_op(monkeypatch):
    import sys

    from seqrmt.runtime import glue

    monkeypatch.setitem(sys.modules, "myst_nb", None)  # import fails
    assert glue("a", 1.0) is None


# ---------------------------------------------------------------------------------------------
# check: the one-line agreement test of the notebooks


def test_check_passes_and_prints_the_distance_in_standard_errors(capsys):
    stats.check(0.352, 0.353, se=0.009, why="mean of 8 data sets")
    out = capsys.readouterr().out
    assert out.startswith("✓ 0.352 against 0.353: 0.11 SE apart, within 4 SE (mean of 8 data sets)")


def test_check_fails_beyond_k_standard_errors():
    with pytest.raises(stats.CheckError, match="4.1 SE apart, beyond 4 SE"):
        stats.check(0.087, 0.026, se=0.015, why="8 data sets")
    stats.check(0.087, 0.026, se=0.015, k=5, why="8 data sets")  # within 5 SE


def test_check_elementwise_bounds_and_the_worst_element(capsys):
    value, ref, se = np.array([1.0, 2.0, 3.3]), np.array([1.0, 2.1, 3.0]), np.array([0.1, 0.1, 0.1])
    stats.check(value, ref, se=se, why="three means")
    assert "at most 3 SE apart" in capsys.readouterr().out
    with pytest.raises(stats.CheckError):
        stats.check(value, ref, se=se, k=2.9, why="three means")
    # the bound is elementwise: a large error bar on one element does not excuse another
    with pytest.raises(stats.CheckError):
        stats.check([0.0, 1.0], [0.5, 0.0], se=[1.0, 0.1], why="two points")


def test_check_absolute_relative_and_combined_bounds(capsys):
    stats.check(1.0 + 4e-7, 1.0, atol=1e-6, why="solver tolerance")
    assert "|difference| 4e-07 ≤ 1e-06" in capsys.readouterr().out
    with pytest.raises(stats.CheckError, match=">"):
        stats.check(1.0 + 2e-6, 1.0, atol=1e-6, why="solver tolerance")
    stats.check(101.0, 100.0, rtol=0.02, why="two percent")
    with pytest.raises(stats.CheckError):
        stats.check(103.0, 100.0, rtol=0.02, why="two percent")
    # k SE plus a systematic bound: 0.05 + 4 * 0.01 = 0.09
    stats.check(0.58, 0.5, se=0.01, atol=0.05, why="finite-size bias and noise")
    with pytest.raises(stats.CheckError):
        stats.check(0.6, 0.5, se=0.01, atol=0.05, why="finite-size bias and noise")
    stats.check(160, 160, atol=0, why="exact count")
    with pytest.raises(stats.CheckError):
        stats.check(159, 160, atol=0, why="exact count")


def test_check_fails_on_nan_and_rejects_bad_arguments():
    with pytest.raises(stats.CheckError, match="NaN"):
        stats.check(np.nan, 1.0, atol=1.0, why="a failed run")
    with pytest.raises(ValueError, match="why"):
        stats.check(1.0, 1.0, atol=0.1, why="")
    with pytest.raises(ValueError, match="se, atol or rtol"):
        stats.check(1.0, 1.0, why="no bound")
    with pytest.raises(ValueError, match="se"):
        stats.check(1.0, 1.0, se=-0.1, why="negative error bar")
    with pytest.raises(ValueError, match="k"):
        stats.check(1.0, 1.0, se=0.1, k=0, why="no standard errors")
    with pytest.raises(ValueError, match="atol"):
        stats.check(1.0, 1.0, atol=np.inf, why="infinite bound")
    with pytest.raises(ValueError, match="reference"):
        stats.check(1.0, np.nan, atol=0.1, why="bad reference")


def test_check_is_an_assertion():
    """nbval reports a failed check as an error output, and pytest.raises(AssertionError) sees it."""
    assert issubclass(stats.CheckError, AssertionError)


def test_write_npz_deterministic_same_arrays_same_bytes(tmp_path):
    from seqrmt.runtime import write_npz_deterministic

    arrays = {"b": np.arange(5.0), "a": np.eye(2, dtype=np.float32)}
    sha = write_npz_deterministic(tmp_path / "1.npz", arrays)
    assert write_npz_deterministic(tmp_path / "2.npz", dict(reversed(arrays.items()))) == sha  # sorted
    assert (tmp_path / "1.npz").read_bytes() == (tmp_path / "2.npz").read_bytes()
    assert write_npz_deterministic(tmp_path / "3.npz", arrays, sort=False) != sha  # dict order
    with np.load(tmp_path / "1.npz") as z:
        assert z.files == ["a", "b"] and np.array_equal(z["b"], arrays["b"])
    with pytest.raises(ValueError, match="arrays"):
        write_npz_deterministic(tmp_path / "4.npz", {})
    with pytest.raises(TypeError, match="path"):
        write_npz_deterministic(3, arrays)
