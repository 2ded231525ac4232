"""seqrmt.ensemble: spawned generators, joblib workers, a local Dask cluster."""

import os

import numpy as np
import pytest

import joblib

from seqrmt import ensemble, rmt, runtime


def _largest_eig(rng, d, n):
    """One realisation: the largest sample-covariance eigenvalue (library sampler)."""
    return rmt.sample_covariance_eigs(d, n, rng=rng).max()


def _draws(**kw):
    return np.array(ensemble.run_ensemble(_largest_eig, 6, seed=11, args=(30, 60), **kw))


def test_children_depend_only_on_seed_and_index():
    a = ensemble.spawn_generators(3, 2)
    b = ensemble.spawn_generators(3, 5)
    assert a[1].random() == b[1].random()
    c = ensemble.spawn_generators(4, 2)
    assert a[0].random() != c[0].random()
    # the children are the SeedSequence children, nothing else
    ref = np.random.default_rng(np.random.SeedSequence(3).spawn(2)[1])
    assert ensemble.spawn_generators(3, 2)[1].random() == ref.random()


def test_one_and_two_workers_bit_identical():
    serial = _draws(jobs=1)
    parallel = _draws(jobs=2)
    assert serial.dtype == parallel.dtype
    assert np.array_equal(serial, parallel)
    # a realisation does not depend on how many there are
    more = np.array(ensemble.run_ensemble(_largest_eig, 9, seed=11, args=(30, 60), jobs=2))
    assert np.array_equal(more[:6], serial)


def test_dask_backend_bit_identical():
    distributed = pytest.importorskip("distributed")
    from joblib import parallel_config

    serial = _draws(jobs=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, host="127.0.0.1") as cluster:
        with distributed.Client(cluster):
            with parallel_config(backend="dask"):
                on_dask = _draws(jobs=2)
    assert np.array_equal(serial, on_dask)


def test_generator_root_and_results_in_order():
    out = ensemble.run_ensemble(lambda rng, k: (k, rng.integers(1000)), 4, seed=np.random.default_rng(0),
                                args=(7,), jobs=1)
    assert [k for k, _ in out] == [7] * 4
    assert len({v for _, v in out}) > 1  # independent children, not one stream reused


def test_n_jobs_defaults(monkeypatch):
    monkeypatch.delenv(ensemble.JOBS_VARIABLE, raising=False)
    monkeypatch.setenv("SEQRMT_SCALE", "book")
    assert ensemble.n_jobs() == 1
    monkeypatch.setenv("SEQRMT_SCALE", "paper")
    assert ensemble.n_jobs() == joblib.cpu_count()
    monkeypatch.setenv(ensemble.JOBS_VARIABLE, "2")
    assert ensemble.n_jobs() == 2
    monkeypatch.setenv(ensemble.JOBS_VARIABLE, "two")
    with pytest.raises(ValueError, match="SEQRMT_JOBS"):
        ensemble.n_jobs()


@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "2"])
def test_n_jobs_rejects(bad):
    with pytest.raises(ValueError, match="jobs"):
        ensemble.n_jobs(bad)


def test_run_ensemble_validates():
    with pytest.raises(ValueError, match="func"):
        ensemble.run_ensemble(3, 2, seed=0)
    with pytest.raises(ValueError, match="n must"):
        ensemble.run_ensemble(_largest_eig, 0, seed=0)
    with pytest.raises(ValueError, match="seed"):
        ensemble.run_ensemble(_largest_eig, 2, seed=-1)
    with pytest.raises(ValueError, match="seed"):
        ensemble.run_ensemble(_largest_eig, 2, seed=1.5)
    with pytest.raises(ValueError, match="args"):
        ensemble.run_ensemble(_largest_eig, 2, seed=0, args=[30, 60])
    with pytest.raises(ValueError, match="kwargs"):
        ensemble.run_ensemble(_largest_eig, 2, seed=0, kwargs=3)


def test_progress_default_off_in_ci_and_at_book_size(monkeypatch):
    monkeypatch.delenv(ensemble.PROGRESS_VARIABLE, raising=False)
    monkeypatch.setenv("SEQRMT_SCALE", "paper")
    monkeypatch.setenv("CI", "true")
    assert not ensemble.progress_enabled()
    monkeypatch.delenv("CI")
    assert ensemble.progress_enabled()
    monkeypatch.setenv("SEQRMT_SCALE", "book")
    assert not ensemble.progress_enabled()
    monkeypatch.setenv(ensemble.PROGRESS_VARIABLE, "1")
    assert ensemble.progress_enabled()
    monkeypatch.setenv(ensemble.PROGRESS_VARIABLE, "yes")
    with pytest.raises(ValueError, match="SEQRMT_PROGRESS"):
        ensemble.progress_enabled()
    with pytest.raises(ValueError, match="progress"):
        ensemble.progress_enabled("on")


def test_progress_bar_wraps_with_tqdm(capsys):
    out = list(ensemble.progress_bar(range(5), desc="draws", enabled=True))
    assert out == list(range(5))
    assert "draws" in capsys.readouterr().err


def test_joblib_cpu_count_respects_affinity():
    """The CPUs a worker pool may use (replaces the former available_cpus): affinity and quota."""
    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("no affinity on this platform")
    assert 1 <= joblib.cpu_count() <= len(os.sched_getaffinity(0))


def test_fit_threads_limits_blas(monkeypatch):
    from threadpoolctl import threadpool_info, threadpool_limits

    with threadpool_limits(limits=None):
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
        assert runtime.fit_threads() == 1
        blas = [p for p in threadpool_info() if p["user_api"] == "blas"]
        assert blas and all(p["num_threads"] == 1 for p in blas)
    with pytest.raises(ValueError, match="threads"):
        runtime.fit_threads(0)
