"""Tests of seqrmt.nanogpt.key_spectra: the committed training runs and their regeneration."""

import hashlib
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from seqrmt import data  # noqa: E402
from seqrmt.nanogpt import GPTConfig, build_gpt, head_weights, validation_loss  # noqa: E402
from seqrmt.nanogpt import key_spectra as ks  # noqa: E402

TEXT = "to be or not to be, that is the question; whether 'tis nobler in the mind. " * 30


def _tiny_dataset():
    tok = data.CharTokenizer(TEXT)
    return data.CharDataset(*data.train_val_split(tok.encode(TEXT)), tok)


@pytest.fixture(scope="module")
def committed():
    return ks.load_key_spectra()


def test_committed_file_hash_and_layout(committed):
    assert hashlib.sha256(ks.KEY_SPECTRA_FILE.read_bytes()).hexdigest() == ks.KEY_SPECTRA_SHA256
    assert ks.KEY_SPECTRA_FILE.stat().st_size < 5 * 2**20
    r = committed
    assert r.seeds.tolist() == [0, 1, 2]
    assert r.steps.tolist() == list(ks.DEFAULT_STEPS)
    assert r.keys.shape == (3, len(ks.DEFAULT_STEPS), 4, 4, 16, 64) and r.keys.dtype == np.float32
    assert r.val_loss.shape == (3, len(ks.DEFAULT_STEPS))
    assert r.config["train"]["max_iters"] == 5000 and r.config["model"]["vocab_size"] == 77
    # training lowers the validation loss from about log 77 to well below the bigram loss
    assert np.all(np.abs(r.val_loss[:, 0] - np.log(77)) < 0.3)
    assert np.all(r.val_loss[:, -1] < 2.0)


def test_committed_initial_keys_are_the_seeded_initialisation(committed):
    """Step 0 of every run is exactly build_gpt(seed=s) of the recorded configuration."""
    cfg = GPTConfig(**committed.config["model"])
    for i, seed in enumerate(committed.seeds):
        init = head_weights(build_gpt(cfg, seed=int(seed), device="cpu"), "key")
        np.testing.assert_array_equal(committed.keys[i, 0], init.astype(np.float32))


def test_committed_final_state_matches_keys_and_loss(committed):
    model = committed.model()
    np.testing.assert_array_equal(committed.keys[0, -1], head_weights(model, "key").astype(np.float32))
    try:
        ds = data.shakespeare_dataset()
    except data.ShakespeareUnavailableError as exc:
        pytest.skip(str(exc)[:80])
    assert validation_loss(model, ds.val, batch_size=512) == pytest.approx(committed.val_loss[0, -1], abs=1e-5)


def test_save_reproduces_the_committed_bytes(committed, tmp_path):
    # save (seqrmt._io.write_npz_deterministic, entries in the committed order) writes the
    # committed runs back byte for byte: a regeneration that trains to the same arrays gives the
    # committed file and hash
    assert committed.save(tmp_path / "again.npz") == ks.KEY_SPECTRA_SHA256
    with pytest.raises(ValueError, match="sha256"):
        ks.load_key_spectra(sha256="")
    with pytest.raises(FileNotFoundError):
        ks.load_key_spectra(tmp_path / "missing.npz")


def test_eigenvalues_are_gram_spectra(committed):
    e = committed.eigenvalues()
    assert e.shape == (3, len(ks.DEFAULT_STEPS), 16, 16)
    k = committed.keys[1, 2, 3, 1].astype(float)
    np.testing.assert_allclose(e[1, 2, 13], np.linalg.eigvalsh(k @ k.T), rtol=1e-10)


def test_runs_are_deterministic_and_roundtrip(tmp_path):
    ds = _tiny_dataset()
    a = ks.train_key_spectra(ds, seeds=(3, 4), max_iters=3, steps=(0, 1))
    b = ks.train_key_spectra(ds, seeds=(3, 4), max_iters=3, steps=(0, 1))
    ha, hb = a.save(tmp_path / "a.npz"), b.save(tmp_path / "b.npz")
    assert ha == hb
    r = ks.load_key_spectra(tmp_path / "a.npz", sha256=ha)
    np.testing.assert_array_equal(r.keys, a.keys)
    np.testing.assert_array_equal(r.val_loss, a.val_loss)
    assert r.steps.tolist() == [0, 1, 3] and r.config == a.config
    # the seeds are independent: a run of seed 4 alone repeats the second run exactly
    c = ks.train_key_spectra(ds, seeds=(4,), max_iters=3, steps=(0, 1))
    np.testing.assert_array_equal(c.keys[0], a.keys[1])
    # the stored final state reproduces the final loss
    assert validation_loss(r.model(), ds.val, batch_size=512) == pytest.approx(r.val_loss[0, -1], abs=1e-6)


def test_wrong_hash_and_bad_arguments(tmp_path):
    ds = _tiny_dataset()
    run = ks.train_key_spectra(ds, seeds=(0,), max_iters=1, steps=(0,))
    run.save(tmp_path / "r.npz")
    with pytest.raises(ValueError, match="sha256"):
        ks.load_key_spectra(tmp_path / "r.npz", sha256="0" * 64)
    with pytest.raises(ValueError, match="steps"):
        ks.train_key_spectra(ds, seeds=(0,), max_iters=2, steps=(5,))
    with pytest.raises(ValueError, match="dataset"):
        ks.train_key_spectra(np.arange(10))
    with pytest.raises(ValueError, match="state"):
        ks.KeySpectraRuns(run.seeds, run.steps, run.keys, run.val_loss, run.config).model()


def test_cli_key_spectra(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXT)
    out = tmp_path / "runs.npz"
    proc = subprocess.run([sys.executable, "-m", "seqrmt.nanogpt", "key-spectra", "--seeds", "1", "--max-iters",
                           "2", "--steps", "0", "--data", str(corpus), "--no-verify", "--out", str(out)],
                          capture_output=True, text=True, timeout=600, check=True)
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    assert digest in proc.stdout
    assert ks.load_key_spectra(out, sha256=digest).steps.tolist() == [0, 2]


def _walk_runs(increments, lr=1e-3):
    keys = np.cumsum(increments, axis=1)
    steps = np.arange(0, keys.shape[1], 100)
    return ks.KeySpectraRuns(seeds=np.arange(keys.shape[0]), steps=steps, keys=keys[:, steps],
                             val_loss=np.zeros((keys.shape[0], steps.size)),
                             config={"train": {"lr": lr}, "model": {}})


def test_key_random_walk_tells_diffusive_from_ballistic():
    rng = np.random.default_rng(0)
    shape = (2, 501, 1, 2, 16, 64)
    walk = ks.key_random_walk(_walk_runs(1e-3 * rng.choice([-1.0, 1.0], size=shape)), min_step=100)
    np.testing.assert_allclose(walk.diffusive, 1.0, atol=0.03)
    assert np.all(walk.ballistic < 0.15)
    np.testing.assert_allclose(walk.predicted_growth, 64 * walk.rms**2)
    steady = ks.key_random_walk(_walk_runs(np.full(shape, 1e-3)), min_step=100)
    np.testing.assert_allclose(steady.ballistic, 1.0)
    with pytest.raises(ValueError, match="min_step"):
        ks.key_random_walk(_walk_runs(np.zeros(shape)), min_step=450)


def test_committed_keys_move_like_a_random_walk(committed):
    """After step 1000 the entries move by about lr per step in a random direction (not steadily)."""
    walk = ks.key_random_walk(committed, min_step=1000)
    assert walk.start.tolist() == [1000, 2000, 3000] and walk.lr == 1e-3
    assert np.all((walk.diffusive > 0.5) & (walk.diffusive < 1.5))
    assert np.all(walk.ballistic < 0.05)
