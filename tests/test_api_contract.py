"""The bad-input contract of :mod:`seqrmt`, checked for every public callable.

Every name in the ``__all__`` of every public module (and every public method of a public class)
must either have a VALID example call in ``REGISTRY`` or be listed in ``EXEMPT`` with a reason;
``test_registry_is_complete`` fails when a new public callable is added without one.

From each valid example the bad inputs are derived automatically, one argument at a time, from the
type of the valid value (see ``_variants``): NaN, inf, strings, floats where integers are expected,
absurd sizes (``10**12``), empty arrays, NaN/inf entries, float token ids, out-of-range token ids,
non-callables where a function is expected, unknown option names. "Must" variants have to raise a
``ValueError`` or ``TypeError`` whose message names the argument; "may" variants (negative or zero
numbers, an extra array axis, shifted integer arrays) may also succeed, but then must return no NaN.
Every call runs under a time guard. ``LinAlgError``, ``IndexError``, ``MemoryError``,
``ZeroDivisionError``, solver and torch ``RuntimeError`` s never count as a proper error.

A registry entry is ``key: dict(valid keyword arguments)``; ``_self`` gives the instance of a
method (a zero-argument factory), ``_ok`` the ``"arg:variant"`` pairs (``"arg:*"`` for all of
them) that are legitimately accepted, with the reason in a comment.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import inspect
import pkgutil
import re
import signal
import warnings
from functools import lru_cache

import numpy as np
import pytest

import seqrmt

torch = pytest.importorskip("torch")
cvxpy = pytest.importorskip("cvxpy")

import seqrmt.bsr  # noqa: E402  (the registry's lambdas reach the modules as seqrmt.<module>)
import seqrmt.data  # noqa: E402
import seqrmt.dyson  # noqa: E402
import seqrmt.frontiers.attention  # noqa: E402
import seqrmt.lgm  # noqa: E402
import seqrmt.models.char_gpt  # noqa: E402
import seqrmt.models.llama_small  # noqa: E402
import seqrmt.ntp  # noqa: E402
import seqrmt.rmt  # noqa: E402

BIG = 10**12
# The time guard counts the CPU time of this process (ITIMER_PROF), which other processes on a loaded
# machine do not inflate: a wall-clock limit of 10 s failed a correct call at load average 12 on two
# cores. A wall-clock backstop catches a call that waits without computing.
TIME_LIMIT_S = 10.0  # CPU seconds per call
FIRST_CALL_LIMIT_S = 60.0  # a first call may import lazily (torch.optim pulls in sympy)
WALL_BACKSTOP_S = 300.0  # wall seconds per call, far above any correct call under load


# ---------------------------------------------------------------------------
# Valid example calls
# ---------------------------------------------------------------------------


def _ntp_small():
    from seqrmt.ntp import NTPData

    return NTPData.from_counts([[2, 0], [2, 1], [0, 3]])


def _char_gpt():
    from seqrmt.models.char_gpt import CharGPT

    torch.manual_seed(0)
    return CharGPT(5, block_size=8, n_layer=1, n_head=1, n_embd=8)


def _bsr(n=40, d=4, L=4, r=1):
    from seqrmt.bsr import sample_bsr

    return sample_bsr(n, d, L, r, 0.0, rng=0)


def _subspace():
    from seqrmt.ntp import SubspaceF

    return SubspaceF(np.eye(2), [[1, 1], [1, 0], [0, 1]])


def _lora_moments():
    from seqrmt.frontiers.transfer import alpha_lora_moments

    return alpha_lora_moments(1000, 200, 100, 1.0, 1.5, 0.3, 1.0, 1.0)


_P2 = np.array([[0.5, 1.0], [0.5, 0.0]])
_P32 = np.array([[0.5, 0.2], [0.5, 0.0], [0.0, 0.8]])
_S32 = np.array([[1, 1], [1, 0], [0, 1]])
_A2 = np.array([[1.0, 2.0], [3.0, 4.0]])
_GOE = np.sort(np.random.default_rng(0).normal(size=(5, 6)), axis=1)
_SPD2 = np.array([[2.0, 0.5], [0.5, 1.0]])


_C44 = np.array([[1.0, 0.9, 0.1, 0.2], [0.9, 1.0, 0.3, 0.0], [0.1, 0.3, 1.0, 0.8], [0.2, 0.0, 0.8, 1.0]])
_Z44 = np.array([[1.0, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]])


def _axes(n=None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.close("all")
    return plt.subplots()[1] if n is None else list(plt.subplots(1, n)[1])


def _sq(x):
    return x**2


REGISTRY = {
    # ---------------------------------------------------------------- rmt
    "rmt.mp_edges": dict(ratio=0.5, var=1.0),
    "rmt.mp_density": dict(x=np.array([0.5, 1.0]), ratio=0.5, var=1.0, _ok="x:neg x:zero x:ndim"),
    "rmt.mp_cdf": dict(x=np.array([0.5, 1.0]), ratio=0.5, var=1.0, _ok="x:neg x:zero x:ndim"),
    "rmt.mp_stieltjes": dict(z=np.array([-1.0 + 0.5j]), ratio=0.5, var=1.0, _ok="z:*"),
    "rmt.semicircle_density": dict(x=np.array([0.0, 0.5]), var=1.0, _ok="x:neg x:zero x:ndim"),
    "rmt.semicircle_cdf": dict(x=np.array([0.0, 0.5]), var=1.0, _ok="x:neg x:zero x:ndim"),
    "rmt.semicircle_stieltjes": dict(z=np.array([1.0 + 1.0j]), var=1.0, _ok="z:*"),
    "rmt.empirical_stieltjes": dict(eigs=np.array([1.0, 2.0]), z=np.array([1.0j]),
                                    _ok="eigs:neg eigs:zero eigs:ndim z:*"),
    "rmt.sample_covariance_eigs": dict(d=4, n=8, rng=0, entries="rademacher"),
    "rmt.solve_delta": dict(population_eigs=np.ones(4), n=8.0, z=0.1),  # real n: only d/n enters
    "rmt.mp_resolvent_moments": dict(lam=1.0, ratio=0.5),
    "rmt.deterministic_equivalent_stieltjes": dict(population_eigs=np.ones(4), n=8,
                                                   w=np.array([1.0 + 0.1j]), _ok="w:*"),
    "rmt.ridge_delta": dict(eta=0.5, gamma=0.1),
    "rmt.ridge_tau": dict(eta=0.5, gamma=0.1),
    "rmt.ridge_equivalent": dict(eta=1.5, gamma=0.5),
    "rmt.ks_distance": dict(samples=np.zeros(4), cdf=lambda x: (x >= 0).astype(float),
                            _ok="samples:neg samples:zero samples:ndim"),
    # rmt.ridge_resolvent_de (appended for Chapter 5.1, masked regression)
    "rmt.ridge_resolvent_de": dict(Sigma=np.array([[1.0, 0.5], [0.5, 1.0]]), n=5, lam=0.1),
    # ---------------------------------------------------------------- frontiers (Part 5): the laws
    "frontiers.masked.masked_ridge_theory": dict(Sigma=np.eye(3), n=5, lam=0.1),
    "frontiers.masked.spiked_masked_top": dict(theta=2.0, gamma=0.5, lam=0.5,
                                               _ok="theta:zero"),  # no spike: the bulk edge
    "frontiers.attention.memorisation_error": dict(F=np.arange(12.0).reshape(3, 4),
                                                   y=np.array([1.0, -1.0, 1.0, 1.0]), gamma=0.1),
    "frontiers.icl.icl_error": dict(C_train=np.eye(4), C_test=np.eye(4), alpha=1.0, kappa=1.0,
                                    tau=2.0, rho=0.1, _ok="rho:zero"),
    "frontiers.transfer.l2sp_coefficients": dict(tau=0.25, gamma_s=0.5),
    "frontiers.transfer.target_risk": dict(lam=0.5, gamma_t=2.0, sigma_t2=0.25, distance_sq=1.0,
                                           _ok="sigma_t2:zero distance_sq:zero"),
    "frontiers.transfer.transfer_optimal_penalty": dict(rho=0.5, gamma_s=0.5, snr=2.0,
                                                        _ok="rho:*"),  # rho <= 0 gives inf
    "frontiers.transfer.alpha_lora_moments": dict(N=1000, n=200, p=100, mu=1.0, mu_orth=1.5,
                                                  beta=0.3, gamma_pre=1.0, gamma=1.0,
                                                  variant="corrected", _ok="mu_orth:zero beta:*"),
    "frontiers.transfer.alpha_lora_source_norm_sq": dict(N=1000, p=100, mu=1.0, gamma_pre=1.0,
                                                          variant="corrected"),
    "frontiers.transfer.AlphaLoRAMoments.mean": dict(_self=_lora_moments, alpha=0.5,
                                                     _ok="alpha:*"),  # any real rescaling
    "frontiers.transfer.AlphaLoRAMoments.second_moment": dict(_self=_lora_moments, alpha=0.5,
                                                              _ok="alpha:*"),
    "frontiers.transfer.AlphaLoRAMoments.accuracy": dict(_self=_lora_moments, alpha=0.5,
                                                         _ok="alpha:*"),
    "frontiers.features.mixture_data": dict(n=6, p=4, mean_norm=2.0, rng=0),
    "frontiers.features.relu_kernel": dict(X=np.arange(1.0, 13.0).reshape(3, 4) / 10),
    "frontiers.features.random_features_training_error": dict(
        Phi=np.eye(3) + 0.1, y=np.array([1.0, -1.0, 1.0]), n_features=4, gamma=0.5),
    "frontiers.pls.two_view_data": dict(n=5, p=3, q=4, t_x=1.0, t_y=2.0, rng=0),
    "frontiers.pls.pls_spike": dict(t_x=1.0, t_y=1.0, c_x=0.5, c_y=0.75,
                                    _ok="t_x:zero t_y:zero"),  # one-sided or no signal
    # rmt additions for Chapter 5 (helper P5b)
    "rmt.coresolvent_stieltjes": dict(ratio=0.5, gamma=0.1),
    "rmt.ridge_memorisation_error": dict(ratio=0.5, snr=1.0, gamma=0.1, _ok="snr:zero"),
    "rmt.hermite_coefficients": dict(f=np.tanh, n_nodes=20),
    "rmt.semicircle_free_convolution": dict(stieltjes=lambda w: 1.0 / (1.0 - w), var=1.0,
                                            z=np.array([0.3 + 0.5j])),
    # ---------------------------------------------------------------- lgm
    "lgm.softmax_distributions": dict(k=3, c=4, rho=0.9, rng=0),
    "lgm.expected_softmax_sq_norm": dict(k=3, rho=0.9, n_nodes=10),
    "lgm.context_theory": dict(P=np.full((3, 4), 1 / 3), weights=np.ones(4), d=8, n=50,
                               gamma=1.0),
    "lgm.simulate_context_model": dict(P=np.full((3, 4), 1 / 3), weights=np.ones(4), d=6, n=20,
                                       rng=0, counts="multinomial"),
    "lgm.mixture_theory": dict(M=np.eye(3)[:, :2], pi=np.array([0.5, 0.5]), P=_P2, n=20,
                               gamma=0.5),
    "lgm.mixture_optimal_ridge": dict(M=np.eye(6)[:, :2], pi=np.array([0.5, 0.5]), P=_P2, n=20),
    # ---------------------------------------------------------------- runtime, stats
    "runtime.preset": dict(book=2, paper=5, _ok="book:* paper:*"),  # any values, returned as is
    "stats.loglog_fit": dict(x=np.array([1.0, 10.0, 100.0]), y=np.array([1.0, 0.1, 0.01]),
                             y_se=np.array([0.1, 0.01, 0.001])),
    "stats.mean_se": dict(samples=np.array([1.0, 2.0, 4.0]), axis=0),
    "stats.check": dict(value=1.0, reference=1.0, se=0.1, k=4.0, why="a check",
                        # a value or reference that disagrees fails the check (CheckError): that
                        # is the function's purpose, not a validation gap
                        _ok="value:* reference:neg reference:zero"),
    "runtime.notebook_seed": dict(seed=3),
    "runtime.notebook_rng": dict(seed=3),
    "runtime.glue": dict(name="x", value=1.5, display=False, _ok="value:*"),  # any value is glued
    "runtime.fit_threads": dict(threads=1),
    # ---------------------------------------------------------------- ensemble
    "ensemble.n_jobs": dict(jobs=1),
    "ensemble.progress_enabled": dict(progress=False),
    "ensemble.progress_bar": dict(iterable=[1, 2], enabled=False, _ok="iterable:*"),  # any iterable
    "ensemble.spawn_generators": dict(seed=0, n=2),
    "ensemble.run_ensemble": dict(func=np.random.Generator.random, n=2, seed=0, jobs=1),
    "plotting.subplots": dict(nrows=1, ncols=2, row_height=3.0),
    # ---------------------------------------------------------------- dyson, models.char_gpt, data
    # ---------------------------------------------------------------- dyson
    "dyson.wigner_surmise": dict(s=np.array([0.5, 1.0]), _ok="s:neg s:zero s:ndim"),
    "dyson.two_mode_density": dict(x=np.array([2.0]), x0=2.0, sigma=0.3,
                                   _ok="x:neg x:zero x:ndim x0:neg x0:zero"),
    "dyson.fit_two_mode": dict(samples=lambda: seqrmt.dyson.goe_eigs(2, 200, 0) + 1.0,
                               _ok="samples:neg samples:zero"),
    "dyson.binder_cumulant": dict(samples=np.random.default_rng(0).normal(size=50),
                                  _ok="samples:neg samples:ndim"),
    "dyson.goe_binder_cumulant": dict(n=2),
    "dyson.goe_eigs": dict(n=3, n_matrices=5, rng=0, scale=1.0, method="tridiagonal"),
    "dyson.unfolded_spacings": dict(eigs=np.array([[0.1, 0.2, 0.4, 0.7]]),
                                    cdf=lambda x: x, drop_edges=0, _ok="eigs:neg"),
    "dyson.spacing_ratios": dict(eigs=np.array([0.0, 1.0, 3.0, 3.5]), _ok="eigs:neg eigs:ndim"),
    "dyson.dyson_brownian_motion": dict(h0=np.zeros((3, 3)), t_max=1.0, n_steps=10, rng=0),
    "dyson.teacher_student_ensemble": dict(lr=0.1, batch=4, eps=0.1, n_seeds=5,
                                           rng=0, n_steps=5, n_batches=10),
    "dyson.teacher_student_width": dict(lr=0.1, batch=16, eps=0.1, method="ar1"),
    "dyson.teacher_student_binder": dict(lr=0.1, batch=16),
    "dyson.rbm_stationary_variance": dict(kappa=np.array([4.0, 8.0]), mu2=9.0, lr=0.1, batch=16),
    "dyson.rbm_learning_bias": dict(kappa=np.array([4.0, 8.0]), mu2=9.0, lr=0.1, batch=16),
    "dyson.rbm_learned_spectrum": dict(kappa=np.array([4.0, 8.0, 10.0]), n_h=2, mu2=9.0),
    "dyson.rbm_learned_mass": dict(kappa=np.array([4.0, 8.0, 10.0]), n_h=1),
    "dyson.train_rbm_exact": dict(K_target=np.diag([1.0, 2.0, 3.0, 4.0]), n_h=4, mu2=9.0, lr=0.1,
                                  steps=10, rng=0, _ok="K_target:neg K_target:zero"),
    "dyson.train_rbm_pcd": dict(K_target=np.diag([1.0, 2.0, 3.0, 4.0]), n_h=4, mu2=9.0, lr=0.1,
                                batch=4, steps=5, n_seeds=2, rng=0, _ok="K_target:neg K_target:zero"),
    "dyson.fokker_planck_spectrum": dict(V=_sq, g2=0.5, x_grid=np.linspace(-4, 4, 41),
                                         n_states=3, _ok="x_grid:neg"),
    "dyson.fit_mp_bulk": dict(eigs=lambda: np.linalg.eigvalsh(
        (lambda k: k @ k.transpose(0, 2, 1))(np.random.default_rng(0).uniform(-1, 1, (4, 16, 64)))),
        ratio=0.25, _ok="eigs:ndim"),
    # ---------------------------------------------------------------- models.char_gpt
    "models.char_gpt.CharGPT": dict(vocab_size=5, block_size=8, n_layer=1, n_head=1, n_embd=8),
    "models.char_gpt.CharGPT.key_matrices": dict(_self=lambda: _char_gpt()),
    "models.char_gpt.validation_loss": dict(model=_char_gpt, tokens=lambda: torch.arange(40) % 5,
                                            batch_size=4),
    # ---------------------------------------------------------------- data
    "data.build_shakespeare": dict(source=lambda: _gut_folder()),
    "runtime.scale": dict(),
    # ---------------------------------------------------------------- bsr
    "bsr.sample_bsr": dict(n=20, d=4, L=3, r=1, delta=0.0, rng=0),
    "bsr.sv_density": dict(x=np.array([0.5, 3.0]), beta=2.0, rho=0.2, zeta=0.3,
                           _ok="x:neg x:zero x:ndim"),
    "bsr.sv_quadrature": dict(beta=2.0, rho=0.2, zeta=0.3, n_nodes=20),
    "bsr.sv_hilbert": dict(x=np.array([0.5, 1.2]), beta=2.0, rho=0.2, zeta=0.3,
                           _ok="x:neg x:zero x:ndim"),
    "bsr.rie_denoise": dict(Y=np.random.default_rng(0).normal(size=(6, 8)), zeta=0.3, rho=0.3,
                            _ok="Y:neg Y:zero"),
    "bsr.denoising_mmse": dict(beta=1.0, rho=0.5, zeta=0.5, _ok="beta:inf"),
    "bsr.denoising_mmse_large_beta": dict(rho=0.2, zeta=1.0),
    # beta = inf is the documented large-aspect-ratio limit of the bsr theory functions
    "bsr.alpha_bar": dict(alpha=0.36, beta=1.0, rho=0.2, _ok="beta:inf"),
    "bsr.alpha_pr": dict(beta=1.0, rho=0.2, _ok="beta:inf"),
    "bsr.alpha_mnne": dict(beta=1.0, rho=0.2, tol=1e-13, max_iter=200),
    "bsr.svt_risk": dict(lam=np.array([0.0, 0.9]), beta=1.0, rho=0.2),
    "bsr.ridge_error": dict(alpha=0.5, delta=0.1, lam=1.0),
    "bsr.bo_free_entropy": dict(zeta=0.7, alpha=0.5, beta=1.0, rho=0.5, delta=0.0, n_grid=40,
                                _ok="beta:inf"),
    "bsr.bayes_optimal": dict(alpha=0.5, beta=1.0, rho=0.5, delta=0.0, tol=1e-12, max_iter=200,
                              _ok="beta:inf"),  # beta = inf: the limit
    "bsr.bayes_optimal_curve": dict(alphas=np.array([0.2, 0.3]), beta=1.0, rho=0.2, tol=1e-10,
                                    max_iter=200, _ok="beta:inf"),
    "bsr.low_rank_bayes_optimal": dict(abar=0.75, beta=1.0, delta=0.1, tol=1e-12, max_iter=200),
    "bsr.gamp_state_evolution": dict(alpha=0.5, beta=1.0, rho=0.5, delta=0.0, n_iter=5),
    "bsr.gamp_rie": dict(X=lambda: _bsr(60, 5, 5, 1).X, y=lambda: _bsr(60, 5, 5, 1).y, rho=0.2,
                         delta=0.01, max_iter=5, on_failure="warn",
                         _ok="X:neg X:zero y:neg y:zero"),
    "bsr.min_nuclear_norm": dict(X=lambda: _bsr(20, 3, 3, 1).X, y=lambda: _bsr(20, 3, 3, 1).y,
                                 solver="SCS",
                                 # well-formed but infeasible data: its documented
                                 # RuntimeError (solver status in the message)
                                 _ok="X:neg X:zero X:const y:neg y:zero y:const"),
    # the symmetric variant (notebook 2.3: the quadratic network)
    "bsr.symmetric_stieltjes": dict(z=np.array([0.5 + 0.3j]), kappa=0.5, zeta=0.3, _ok="z:*"),
    "bsr.symmetric_mmse": dict(kappa=0.5, zeta=0.3),
    "bsr.quadratic_network_alpha_pr": dict(kappa=0.5),
    "bsr.quadratic_network_bayes_optimal": dict(alphas=np.array([0.1, 0.2]), kappa=0.5, delta=0.0,
                                                tol=1e-10, max_iter=200),
    # ---------------------------------------------------------------- ntp
    "ntp.NTPData": dict(S=_S32, P=_P32, pi=np.array([0.5, 0.5])),
    "ntp.NTPData.from_counts": dict(counts=np.array([[2, 0], [2, 1], [0, 3]])),
    "ntp.NTPData.from_corpus": dict(lines=["the cat sat", "the cat ran"], context_length=2),
    "ntp.NTPData.from_pairs": dict(pairs=[("a", "x"), ("a", "y"), ("b", "x")]),
    "ntp.NTPData.entropy": dict(_self=_ntp_small),
    "ntp.NTPData.cross_entropy": dict(_self=_ntp_small, logits=np.zeros((3, 2)),
                                      _ok="logits:neg logits:zero"),
    "ntp.tinystories_like": dict(rng=0, m=30, max_count=3),
    "ntp.linear_ntp_example": dict(rng=0, d=6, m=5, V=4, k=2, max_count=3),
    "ntp.SubspaceF": dict(Hbar=np.eye(2), S=_S32, _ok="Hbar:neg Hbar:zero"),
    "ntp.SubspaceF.project": dict(_self=_subspace, W=np.arange(6.0).reshape(3, 2), _ok="W:neg W:zero"),
    "ntp.SubspaceF.perp": dict(_self=_subspace, W=np.arange(6.0).reshape(3, 2), _ok="W:neg W:zero"),
    "ntp.SubspaceF.log_odds": dict(_self=_subspace, P=_P32),
    "ntp.w_star": dict(Hbar=np.eye(2), P=_P32, _ok="Hbar:neg Hbar:zero"),
    "ntp.is_compatible": dict(Hbar=np.eye(3), P=np.array([[0.5, 0.2, 0.6], [0.5, 0.8, 0.4]]),
                              _ok="Hbar:neg Hbar:zero"),
    "ntp.is_separable": dict(Hbar=np.eye(3), S=np.array([[1, 0, 1], [0, 1, 1], [0, 0, 0]]),
                             solver="CLARABEL", _ok="Hbar:neg Hbar:zero"),
    "ntp.ntp_svm_frobenius": dict(Hbar=np.eye(2), S=np.array([[1, 0], [0, 1], [0, 0]]),
                                  solver="CLARABEL", _ok="Hbar:neg Hbar:zero"),
    "ntp.mixture_svm_asymptotics": dict(r=2.0, delta=0.5, tol=1e-12, max_iter=100,
                                        _ok="r:zero"),  # r = 0: no signal, Gardner's capacity
    "ntp.ntp_svm_nuclear": dict(S=np.eye(3, dtype=int), solver="ADMM", tol=1e-8, max_iter=500),
    "ntp.logit_path": dict(P=np.array([[0.5, 0.0], [0.5, 0.0], [0.0, 1.0]]),
                           pi=np.array([0.5, 0.5]), lam=1e-2, solver="CLARABEL"),
    "ntp.in_support_logits": dict(P=_P2),
    "ntp.centered_support": dict(S=np.array([[1, 0], [0, 1]])),
    "ntp.k_subset_supports": dict(V=4, k=2),
    "ntp.svd_factors": dict(L=_A2, _ok="L:neg"),
    "ntp.ntp_loss_and_gradients": dict(W=np.ones((2, 3)), H=np.ones((3, 2)), P=_P2, pi=np.array([0.5, 0.5]),
                                       lam=0.01, _ok="W:neg W:zero H:neg H:zero lam:zero"),
    "ntp.cosine_similarity": dict(A=_A2, _ok="A:neg"),
    "ntp.structural_similarity": dict(A=_A2, B=2 * _A2, _ok="A:neg A:zero B:neg B:zero C:zero"),
    "ntp.offdiagonal_correlation": dict(A=_C44, B=np.array([[1.0, 0.7, 0.2, 0.1], [0.7, 1.0, 0.4, 0.1],
                                                            [0.2, 0.4, 1.0, 0.9], [0.1, 0.1, 0.9, 1.0]]),
                                        given=_Z44, _ok="A:neg A:zero B:neg B:zero given:neg given:zero"),
    # ---------------------------------------------------------------- models.llama_small
    "models.llama_small.LlamaConfig": dict(vocab_size=9, out_vocab_size=7, n_layer=1, n_head=2, head_dim=4,
                                           n_embd=8, mlp_hidden=16),
    "models.llama_small.LlamaSmall": dict(config=lambda: seqrmt.models.llama_small.LlamaConfig(9, 7, n_layer=1)),
}


def _gut_folder():
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp())
    (folder / "a_gut.txt").write_text("hello")
    (folder / "sonnets_gut.txt").write_text("poem")
    return folder


# The book's plotting helpers check their Axes and numeric options (issue 19, item 8).
REGISTRY.update({
    "plotting.hist_vs_density": dict(ax=lambda: _axes(), samples=np.array([0.1, 0.5, 0.9, 0.4]),
                                     x=np.array([0.0, 0.5, 1.0]), density=np.array([1.0, 1.0, 1.0]),
                                     bins=4, hist_range=(0.0, 1.0), atom=(0.0, 0.5)),
    "plotting.curve_vs_mc": dict(ax=lambda: _axes(), x=np.array([0.0, 1.0]), y_theory=np.array([0.0, 1.0]),
                                 x_mc=np.array([0.5]), y_mc=np.array([0.4]), y_err=np.array([0.1]),
                                 theory_label="theory", marker="o",
                                 _ok="marker:choice"),  # matplotlib parses the format string itself
    "plotting.mean_spread": dict(ax=lambda: _axes(), truth=np.array([0.2, 0.8]),
                                 theory_mean=np.array([0.25, 0.75]), theory_sd=np.array([0.1, 0.1]),
                                 mc_mean=np.array([0.2, 0.8]), mc_sd=np.array([0.1, 0.1]), n_sd=2.0),
})


# Public callables without a fuzzed example call, and why.
EXEMPT = {
    # result containers: built by library functions from checked inputs, plain records
    **dict.fromkeys([
        "lgm.ContextTheory", "lgm.MixtureTheory", "ntp.TinyStoriesLike",
        # Chapter 5.1 (masked regression)
        "rmt.RidgeResolventDE", "frontiers.masked.MaskedRidgeTheory",
    ], "result container (a record filled by library functions)"),
    # frontiers result containers (Part 5)
    **dict.fromkeys([
        "frontiers.features.RandomFeaturesEquivalent", "frontiers.pls.PLSSpike",
        "frontiers.icl.ICLError", "frontiers.transfer.AlphaLoRAMoments",
    ], "result container (a record filled by library functions)"),
    "frontiers.transfer.AlphaLoRAMoments.optimal_alpha": "no arguments (a method of the record)",
    # exception types
    **dict.fromkeys([
        "ConvergenceError", "stats.CheckError",
        "data.ShakespeareUnavailableError",
    ], "exception type"),
    # no arguments to validate
    "runtime.single_threaded_blas": "context manager without arguments",
    "plotting.use_book_style": "no arguments",
    "plotting.book_style": "context manager without arguments",
    # network / whole corpus
    "data.shakespeare": "downloads or reads the full corpus (tests/test_data.py)",
    # the model's forward pass, as in nanoGPT: its ids are not checked on every training step (a
    # range check would synchronise a GPU each step); torch raises IndexError for an id out of
    # range; the constructor and validation_loss check theirs (tests/test_models_char_gpt.py)
    "models.char_gpt.CharGPT.forward": "the training step's hot path; see the comment above",
    "runtime.write_npz_deterministic": "writes a file (tests/test_runtime_stats.py: bytes and bad arguments)",
    "runtime.seed_offset": "no arguments (reads SEQRMT_SEED_OFFSET; tests/test_runtime_stats.py)",
    # matplotlib
    # torch device: depends on the machine
    "runtime.torch_device": "machine-dependent (CUDA); validated by tests/test_runtime_stats.py",
    # network / whole corpus
    # torch modules: forward and hidden_states are the training loop's hot path (a host sync to check
    # token ids would stall the GPU); the config is validated when the model is built
    "models.llama_small.LlamaSmall.forward": "torch module method on token-id tensors (tests/test_llama_small.py)",
    "models.llama_small.LlamaSmall.context_embeddings": "torch module method on token-id tensors "
                                                        "(tests/test_llama_small.py)",
    "models.llama_small.LlamaSmall.hidden_states": "torch module method on token-id tensors "
                                                   "(tests/test_llama_small.py)",
}


# ---------------------------------------------------------------------------
# Discovery
# ---------------------------------------------------------------------------


def _public_modules():
    names = ["seqrmt"]
    for info in pkgutil.walk_packages(seqrmt.__path__, "seqrmt."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return [importlib.import_module(n) for n in names]


def _key(module, name, attr=None):
    """The registry key: the public path without ``seqrmt.`` (``bsr.gamp_rie``, ``bsr.BSRData.x``)."""
    key = f"{module.__name__}.{name}".removeprefix("seqrmt.").removeprefix("seqrmt")
    key = key.lstrip(".")
    return key if attr is None else f"{key}.{attr}"


@lru_cache(maxsize=None)
def public_callables():
    """``key -> (owner, attribute name, is_method)`` for every public callable."""
    out = {}
    for mod in _public_modules():
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name, None)  # seqrmt.__all__ names modules that are not imported
            if obj is None or inspect.ismodule(obj) or not callable(obj) or not obj.__module__.startswith("seqrmt"):
                continue
            out[_key(mod, name)] = (mod, name, False)
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if attr.startswith("_") or isinstance(member, property):
                        continue
                    if isinstance(member, (classmethod, staticmethod)) or inspect.isfunction(member):
                        out[_key(mod, name, attr)] = (obj, attr, not isinstance(
                            member, (classmethod, staticmethod)))
    return out


# ---------------------------------------------------------------------------
# Bad variants
# ---------------------------------------------------------------------------


def _array_variants(a):
    """``(id, value, must_raise)`` for an array argument."""
    a = np.asarray(a)
    out = [("empty", a.reshape(-1)[:0], True), ("ndim", a[None], False), ("strs", "abc", True),
           ("const", np.full_like(a, a.flat[0]), False)]
    if np.issubdtype(a.dtype, np.integer) and a.dtype != bool:
        out += [("float", a + 0.5, True), ("neg", a - a.max() - 1, False),
                ("huge", a + 10**6, False)]
    if np.issubdtype(a.dtype, np.inexact) or np.issubdtype(a.dtype, np.integer):
        for tag, bad in (("nan", np.nan), ("inf", np.inf)):
            b = a.astype(complex if np.iscomplexobj(a) else float).copy()
            b.flat[0] = bad
            out.append((tag, b, True))
    if np.issubdtype(a.dtype, np.floating):
        out += [("neg", -np.abs(a) - 1.0, False), ("zero", np.zeros_like(a), False)]
    return out


def _tensor_variants(t):
    out = [("empty", t.reshape(-1)[:0], True), ("ndim", t[None], False), ("strs", "abc", True)]
    if not t.is_floating_point():
        out += [("float", t.double() + 0.5, True), ("neg", t - t.max() - 1, True),
                ("oov", t + 10**6, True)]
    return out


def _variants(value):
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, (int, np.integer)):
        return [("nan", float("nan"), True), ("str", "abc", True), ("float", value + 0.5, True),
                ("big", BIG, False), ("neg", -1, False), ("zero", 0, False)]
    if isinstance(value, (float, np.floating)):
        return [("nan", float("nan"), True), ("inf", float("inf"), True), ("str", "abc", True),
                ("neg", -1.0, False), ("zero", 0.0, False)]
    if isinstance(value, str):
        return [("choice", "no-such-choice", False), ("int", 3, True)]
    if torch.is_tensor(value):
        return _tensor_variants(value)
    if isinstance(value, (np.ndarray, list)):
        return _array_variants(value) if np.asarray(value).dtype != object else [("int", 3, True)]
    if inspect.isfunction(value):
        return [("notcallable", 1.0, True)]
    if isinstance(value, tuple):
        return [("short", value[:1], True)]
    return [("wrongtype", "abc", True)]


def _meta(key):
    spec = dict(REGISTRY[key])
    ok = set(spec.pop("_ok", "").split())
    factory = spec.pop("_self", None)
    return spec, ok, factory


_FACTORIES = {_ntp_small, _char_gpt, _subspace}


def _is_factory(value):
    return inspect.isfunction(value) and (value in _FACTORIES or (
        value.__name__ == "<lambda>" and not inspect.signature(value).parameters))


@lru_cache(maxsize=None)
def _valid(key):
    spec, ok, factory = _meta(key)
    return {k: (v() if _is_factory(v) else v) for k, v in spec.items()}, ok, factory


def _cases():
    for key in sorted(REGISTRY):
        kwargs, ok, _ = _valid(key)
        for arg, value in kwargs.items():
            for tag, bad, must in _variants(value):
                if f"{arg}:*" in ok or f"{arg}:{tag}" in ok:
                    continue
                yield pytest.param(key, arg, tag, bad, must, id=f"{key}-{arg}-{tag}")


# ---------------------------------------------------------------------------
# Calling
# ---------------------------------------------------------------------------


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    if signum == signal.SIGPROF:
        raise _Timeout(f"call used more than its CPU-time limit (TIME_LIMIT_S = {TIME_LIMIT_S} s)")
    raise _Timeout(f"call did not return within the wall-clock backstop of {WALL_BACKSTOP_S} s")


class _time_guard:
    """Raise :class:`_Timeout` in the block after ``limit`` CPU seconds or ``WALL_BACKSTOP_S`` wall seconds."""

    def __init__(self, limit):
        self.limit = limit

    def __enter__(self):
        self.old = {sig: signal.signal(sig, _alarm) for sig in (signal.SIGPROF, signal.SIGALRM)}
        signal.setitimer(signal.ITIMER_PROF, self.limit)
        signal.setitimer(signal.ITIMER_REAL, max(WALL_BACKSTOP_S, self.limit))

    def __exit__(self, *exc):
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        for sig, handler in self.old.items():
            signal.signal(sig, handler)


def _target(key):
    owner, attr, is_method = public_callables()[key]
    if not is_method:
        return getattr(owner, attr)
    _, _, factory = _valid(key)
    return getattr(factory(), attr)


def _call(key, limit=TIME_LIMIT_S, **override):
    kwargs, _, _ = _valid(key)
    kwargs = {k: copy.deepcopy(v) for k, v in kwargs.items()}
    kwargs.update(override)
    fn = _target(key)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny models: threads only add overhead on a loaded machine
    try:
        with _time_guard(limit), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(**kwargs)
    finally:
        torch.set_num_threads(threads)


def _has_nan(x, depth=0):
    if depth > 4 or x is None or isinstance(x, (str, bytes, bool)):
        return False
    if torch.is_tensor(x):
        return bool(x.is_floating_point() and torch.isnan(x).any())
    if isinstance(x, (float, complex, np.floating, np.complexfloating)):
        return bool(np.isnan(x))
    if isinstance(x, np.ndarray):
        return bool(np.issubdtype(x.dtype, np.inexact) and np.isnan(x).any())
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return any(_has_nan(getattr(x, f.name), depth + 1) for f in dataclasses.fields(x))
    if isinstance(x, tuple):
        return any(_has_nan(v, depth + 1) for v in x)
    if isinstance(x, dict):
        return any(_has_nan(v, depth + 1) for v in x.values())
    return False


_NOT_VALIDATION = (np.linalg.LinAlgError,)  # subclasses of ValueError that are not our checks
_DOMAIN_ERRORS = (seqrmt.ConvergenceError,)


def _names(msg, name):
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", msg) is not None


@lru_cache(maxsize=None)
def _baseline_nan(key):
    return _has_nan(_call(key, limit=FIRST_CALL_LIMIT_S))


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------


def test_registry_is_complete():
    """Every public callable has a valid example call or a documented exemption."""
    public = set(public_callables())
    missing = sorted(public - set(REGISTRY) - set(EXEMPT))
    stale = sorted((set(REGISTRY) | set(EXEMPT)) - public)
    assert not missing, f"public callables without an entry in REGISTRY or EXEMPT: {missing}"
    assert not stale, f"REGISTRY/EXEMPT entries that are not public callables: {stale}"
    assert not set(REGISTRY) & set(EXEMPT)


@pytest.mark.parametrize("key", sorted(REGISTRY))
def test_valid_example(key):
    """The registry's example call succeeds (so the bad variants test the argument, not the call)."""
    _baseline_nan(key)


def _outcome(key, arg, bad):
    """``(exception or None, result)`` of the call with ``arg=bad`` (tracebacks dropped)."""
    try:
        return None, _call(key, **{arg: bad})
    except Exception as exc:  # noqa: BLE001 - classified by the caller
        return exc.with_traceback(None), None


@pytest.mark.parametrize("key, arg, tag, bad, must", list(_cases()))
def test_bad_input(key, arg, tag, bad, must):
    baseline_nan = _baseline_nan(key)
    exc, out = _outcome(key, arg, bad)
    where = f"{key}({arg}={tag})"
    if exc is None:
        assert not must, f"{where} was accepted; expected a ValueError naming {arg!r}"
        assert baseline_nan or not _has_nan(out), f"{where} returned NaN"
        return
    if not must and isinstance(exc, _DOMAIN_ERRORS):
        return  # documented error for well-formed input that has no solution
    if isinstance(exc, _NOT_VALIDATION) or not isinstance(exc, (ValueError, TypeError)):
        pytest.fail(f"{where}: {type(exc).__name__} instead of ValueError/TypeError: {exc}",
                    pytrace=False)
    params = [*inspect.signature(_target(key)).parameters, *_valid(key)[0]]  # + **kwargs names
    wanted = [arg] if must else params
    assert any(_names(str(exc), p) for p in wanted), (
        f"{where} raised {type(exc).__name__} without naming {arg!r}: {exc}")


# ---------------------------------------------------------------------------
# Regressions of the gaps found by the held-back fuzz (issue 9, item 4)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [torch.tensor([0, 5] * 20), torch.tensor([0, -1] * 20),  # out of vocab
                                 torch.tensor([0.0, 1.0] * 20), np.arange(40) % 5])   # not long ids
def test_char_gpt_validation_tokens_are_checked(bad):
    from seqrmt.models.char_gpt import validation_loss

    with pytest.raises(ValueError, match="tokens"):
        validation_loss(_char_gpt(), bad)


def test_mp_bulk_fit_of_degenerate_spectra():
    from seqrmt.dyson import fit_mp_bulk

    with pytest.raises(ValueError, match="eigs"):
        fit_mp_bulk(np.full(100, 0.3), 0.25)  # used to give A = 3108, tail weight -3107
    rng = np.random.default_rng(3)
    for eigs in (rng.uniform(0.2, 0.21, 200), np.r_[rng.uniform(0, 1, 50), np.full(50, 0.5)]):
        assert 0 < fit_mp_bulk(eigs, 0.25)[0] <= 1


@pytest.mark.parametrize("call", [
    lambda m: seqrmt.bsr.alpha_mnne(1.0, 0.2, max_iter=m),
    lambda m: seqrmt.bsr.bayes_optimal(0.5, 1.0, 0.5, max_iter=m),
    lambda m: seqrmt.bsr.bayes_optimal_curve([0.2, 0.3], 1.0, 0.2, max_iter=m),
    lambda m: seqrmt.bsr.low_rank_bayes_optimal(0.75, 1.0, 0.1, max_iter=m),
])
@pytest.mark.parametrize("max_iter", [0, -3, 2.5, "10", BIG])
def test_brent_solvers_check_max_iter(call, max_iter):
    with pytest.raises(ValueError, match="max_iter"):
        call(max_iter)


def test_k_subsets_are_counted_before_enumeration():
    from seqrmt.ntp import k_subset_supports

    with pytest.raises(ValueError, match="V, k"):
        _call_with_limit(k_subset_supports, 60, 30)  # C(60, 30) = 1.2e17 columns


def _call_with_limit(f, *args):
    with _time_guard(TIME_LIMIT_S):
        return f(*args)


def test_small_fixes():
    from seqrmt.lgm import context_theory
    from seqrmt.ntp import ntp_svm_frobenius

    with pytest.raises(ValueError, match=r"\bP\b"):  # used to leak an IndexError
        _subspace().log_odds(np.array([[0.5, 0.5], [0.5, 0.5]]))
    with pytest.raises(ValueError, match="solver"):  # used to be reported as "not separable?"
        ntp_svm_frobenius(np.eye(2), [[1, 0], [0, 1]], solver="NO_SUCH_SOLVER")
    with pytest.raises(ValueError, match=r"\bP\b"):  # columns of P must be distributions
        context_theory(np.array([[0.5, 2.0], [0.1, 0.0]]), np.ones(2), 2, 10, 0.1)


@pytest.mark.parametrize("call, name", [
    (lambda: seqrmt.dyson.goe_eigs(BIG, 2), "n"),
    (lambda: seqrmt.rmt.sample_covariance_eigs(4, BIG), "n"),
    (lambda: seqrmt.bsr.sample_bsr(BIG, 4, 4, 1, 0.0), "n"),
    (lambda: seqrmt.lgm.softmax_distributions(BIG, 3, 0.5), "k"),
])
def test_absurd_sizes_are_refused_before_allocation(call, name):
    with pytest.raises(ValueError, match=rf"\b{name}\b.*MAX_SIZE"):
        call()


def test_time_guard_counts_cpu_time_not_waiting():
    """The guard stops a call that computes too long, not one that waits (as on a loaded machine)."""
    import time

    with _time_guard(0.3):
        time.sleep(0.6)  # 0.6 s of wall time, almost no CPU time: passes
    with pytest.raises(_Timeout, match="CPU"):
        with _time_guard(0.3):
            t0 = time.process_time()
            while time.process_time() - t0 < 5.0:
                pass
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
