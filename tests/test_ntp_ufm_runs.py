"""Tests of seqrmt.ntp.ufm_runs: the cached converged UFM runs of Chapter 3.5."""

import hashlib

import numpy as np
import pytest

from seqrmt import ntp
from seqrmt.ntp import ufm_runs
from seqrmt.ntp.transformer import geometry_scores
from seqrmt import ConvergenceError


@pytest.fixture(scope="module")
def small():
    corpus = ntp.tinystories_like(np.random.default_rng(1), m=30)
    return corpus, ntp.ntp_svm_nuclear(corpus.data.S)


def test_committed_file_hash_corpus_and_shapes():
    runs = ufm_runs.load_ufm_runs(ufm_runs.default_corpus().data)
    blob = ufm_runs.UFM_RUNS_FILE.read_bytes()
    assert hashlib.sha256(blob).hexdigest() == ufm_runs.UFM_RUNS_SHA256
    assert len(blob) < 2_000_000
    for opt in ("gd", "adamw"):
        r = runs.runs[opt]
        R, S = r["grad_norm"].shape
        assert R >= 5 and r["scores"].shape == (R, S, len(runs.score_names))
        assert r["W"].dtype == np.float16 and r["W"].shape[1:] == (104, 128)
    gd = runs.runs["gd"]
    assert np.all(np.diff(gd["steps"]) > 0) and np.all(gd["steps"][1:] == 2 * gd["steps"][:-1])


def test_committed_runs_meet_the_stopping_rule_and_scores_recompute():
    corpus = ufm_runs.default_corpus()
    runs = ufm_runs.load_ufm_runs(corpus.data)
    tol = runs.config["gd"]["tol"]
    sc = runs.runs["gd"]["scores"]
    change = np.abs(sc[:, -1] - sc[:, -2])
    scale = np.where(np.array(runs.score_names) == "rho", np.abs(sc[:, -2]), 1.0)
    assert np.all(change < tol * scale)
    assert np.any(np.abs(sc[:, -2] - sc[:, -3]) >= tol * scale)  # the rule had not held before
    # the stored final scores are those of the stored (float16) factors
    L_mm = ntp.ntp_svm_nuclear(corpus.data.S)
    targets, blocks, L_in = ufm_runs.geometry_targets(corpus, L_mm)
    W, H = runs.factors("gd", 1)
    again = geometry_scores(W, H, W @ H, targets, blocks, L_in, L_mm)
    stored = dict(zip(runs.score_names, sc[1, -1]))
    for k, v in again.items():
        assert abs(v - stored[k]) < 1e-3, k  # the SVM solution may differ slightly across machines


def test_small_runs_save_load_roundtrip_and_determinism(small, tmp_path):
    corpus, L_mm = small
    kw = dict(seeds=2, gd=dict(first=100, tol=1.0, max_iter=1000), adamw=dict(steps=200, milestones=(100,)))
    a = ufm_runs.ufm_geometry_runs(corpus, L_mm, **kw)
    b = ufm_runs.ufm_geometry_runs(corpus, L_mm, **kw)
    ha, hb = a.save(tmp_path / "a.npz"), b.save(tmp_path / "b.npz")
    assert ha == hb  # same runs, same bytes
    back = ufm_runs.load_ufm_runs(corpus.data, path=tmp_path / "a.npz", sha256=ha)
    assert back.score_names == a.score_names
    for opt in ("gd", "adamw"):
        for key, val in a.runs[opt].items():
            assert np.array_equal(back.runs[opt][key], val)
    assert a.runs["gd"]["steps"].tolist() == [100, 200]
    assert a.runs["adamw"]["steps"][-1] == 200
    # scores at the checkpoints equal those of an independent run of train_ufm
    g = ntp.train_ufm(corpus.data.P, corpus.data.pi, d=128, lam=1e-4, eta=corpus.data.m / 20, max_iter=200,
                      record_at=[200], dtype=np.float32,
                      rng=__import__("seqrmt").ensemble.spawn_generators(0, 2)[0])
    assert np.allclose(g.W.astype(np.float16), a.runs["gd"]["W"][0])


def test_errors(small, tmp_path):
    corpus, L_mm = small
    with pytest.raises(ValueError, match="optimizers"):
        ufm_runs.ufm_geometry_runs(corpus, L_mm, seeds=1, optimizers=("sgd",))
    with pytest.raises(ValueError, match="seeds"):
        ufm_runs.ufm_geometry_runs(corpus, L_mm, seeds=0)
    with pytest.raises(ConvergenceError, match="moves"):
        ufm_runs.ufm_geometry_runs(corpus, L_mm, seeds=1, optimizers=("gd",),
                                   gd=dict(first=10, tol=1e-12, max_iter=40))
    with pytest.raises(ValueError, match="sha256"):
        ufm_runs.load_ufm_runs(sha256="0" * 64)
    with pytest.raises(ValueError, match="another corpus"):
        ufm_runs.load_ufm_runs(corpus.data)
