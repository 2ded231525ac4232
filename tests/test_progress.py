"""Long library loops report progress on stderr when asked, and print nothing otherwise (issue 19, item 2).

The default (``progress=None``) is off at the book's size and under CI, so the committed notebook
outputs do not change; ``SEQRMT_PROGRESS=1`` or the paper size turns it on.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")


_K = np.diag([1.0, 2.0, 3.0, 4.0])  # a target kernel with every mode below the mass 9


def _rbm_exact():
    from seqrmt.dyson import train_rbm_exact

    return lambda progress: train_rbm_exact(_K, 4, 9.0, 0.1, 10, rng=0, progress=progress)


def _rbm_pcd():
    from seqrmt.dyson import train_rbm_pcd

    return lambda progress: train_rbm_pcd(_K, 4, 9.0, 0.1, 4, 10, 2, rng=0, progress=progress)


LOOPS = {
    "RBM exact-gradient steps": _rbm_exact,
    "RBM PCD updates": _rbm_pcd,
}


@pytest.fixture
def book_size(monkeypatch):
    for var in ("CI", "SEQRMT_PROGRESS", "SEQRMT_SCALE"):
        monkeypatch.delenv(var, raising=False)


@pytest.mark.parametrize("label", sorted(LOOPS))
def test_progress_bar_on_stderr_when_enabled_and_silent_otherwise(label, book_size, capsys, monkeypatch):
    run = LOOPS[label]()
    desc = label.split("(")[-1].rstrip(")")
    run(True)
    out, err = capsys.readouterr()
    assert desc in err and "it/s" in err  # tqdm's text bar, on stderr
    assert desc not in out
    run(False)
    assert capsys.readouterr() == ("", "")
    run(None)  # the default at the book's size: nothing
    assert capsys.readouterr() == ("", "")
    monkeypatch.setenv("SEQRMT_PROGRESS", "1")
    run(None)
    assert desc in capsys.readouterr().err
    monkeypatch.setenv("SEQRMT_PROGRESS", "0")
    monkeypatch.setenv("SEQRMT_SCALE", "paper")
    run(None)
    assert capsys.readouterr().err == ""
    monkeypatch.delenv("SEQRMT_PROGRESS")
    monkeypatch.setenv("CI", "true")  # paper size under CI: still silent
    run(None)
    assert capsys.readouterr().err == ""


def test_progress_does_not_change_results(book_size):
    a, b = _rbm_pcd()(True), _rbm_pcd()(False)
    np.testing.assert_array_equal(a.eigs, b.eigs)
    np.testing.assert_array_equal(_rbm_exact()(True), _rbm_exact()(False))


@pytest.mark.parametrize("bad", ["yes", 1.5])
def test_progress_argument_is_checked(bad, book_size):
    with pytest.raises(ValueError, match="progress"):
        _rbm_exact()(bad)
