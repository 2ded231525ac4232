"""Tests of seqrmt.ntp.transformer: full-batch NTP training of the nano-GPT and its recorded geometry."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from seqrmt.nanogpt import GPTConfig
from seqrmt.ntp import NTPData, cosine_similarity, log_spaced_steps, structural_similarity
from seqrmt.ntp import transformer as tf


@pytest.fixture(autouse=True)
def _one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def tiny_problem(m=12, V=7, T=4, vocab_in=9, seed=0):
    """Random contexts of T tokens with supports of 2-3 next tokens and counts in {1, ..., 4}."""
    rng = np.random.default_rng(seed)
    ctx = rng.integers(vocab_in, size=(m, T))
    ctx[:, -1] = np.arange(m) % vocab_in  # distinct enough: different last tokens
    ctx[:, 0] = np.arange(m) // vocab_in
    counts = np.zeros((V, m), dtype=int)
    for j in range(m):
        supp = rng.choice(V, size=int(rng.integers(2, 4)), replace=False)
        counts[supp, j] = rng.integers(1, 5, size=supp.size)
    cfg = GPTConfig.llama(vocab_in, out_vocab_size=V, n_layer=1, n_embd=16, n_head=2, head_dim=8, mlp_hidden=32,
                          block_size=T)
    return NTPData.from_counts(counts), ctx, cfg


def test_loss_decreases_towards_the_entropy_and_shapes():
    data, ctx, cfg = tiny_problem()
    res = tf.train_ntp_transformer(data, ctx, cfg, epochs=300, lr=1e-2)
    H = data.entropy()
    assert res.loss.shape == (301,)
    assert res.loss[0] - H > 0.5  # about log V - H at initialisation
    assert res.loss[-1] - H < 0.02 * (res.loss[0] - H)
    assert np.all(res.loss >= H - 1e-6)  # CE = H + KL >= H
    np.testing.assert_array_equal(res.epochs, np.concatenate([[0], log_spaced_steps(300)]))
    k = res.epochs.size
    assert res.W.shape == (k, 7, 16) and res.H.shape == (k, 16, 12) and res.logits.shape == (k, 7, 12)


def test_recorded_loss_is_the_ntp_cross_entropy_of_the_recorded_logits():
    data, ctx, cfg = tiny_problem(seed=1)
    res = tf.train_ntp_transformer(data, ctx, cfg, epochs=40, lr=1e-2, record=[0, 7, 40])
    for i, t in enumerate(res.epochs):
        np.testing.assert_allclose(res.logits[i], res.W[i] @ res.H[i], rtol=1e-5, atol=1e-5)
        assert res.loss[t] == pytest.approx(data.cross_entropy(res.logits[i]), rel=1e-5)


def test_loss_is_the_summed_sample_cross_entropy_over_n():
    """sum_j pi_j CE(p_j, q_j) equals the sum of -log q_{z_i} over all n samples divided by n."""
    data, ctx, cfg = tiny_problem(seed=2)
    res = tf.train_ntp_transformer(data, ctx, cfg, epochs=5, lr=1e-2, record=[5])
    j_idx, z_idx = [], []
    for j in range(data.m):
        for z in np.flatnonzero(data.counts[:, j]):
            j_idx += [j] * int(data.counts[z, j])
            z_idx += [z] * int(data.counts[z, j])
    assert len(j_idx) == data.n
    with torch.no_grad():
        logits = res.model(torch.as_tensor(ctx[j_idx]))[0][:, -1]  # (n, V): one row per sample
        per_sample = F.cross_entropy(logits, torch.as_tensor(z_idx), reduction="sum").item() / data.n
    assert res.loss[5] == pytest.approx(per_sample, rel=1e-5)


def test_H_is_the_last_position_hidden_state_and_W_the_head():
    data, ctx, cfg = tiny_problem(seed=3)
    res = tf.train_ntp_transformer(data, ctx, cfg, epochs=10, lr=1e-2, record=[10])
    with torch.no_grad():
        h = res.model.hidden_states(torch.as_tensor(ctx))[:, -1].double().numpy()
    np.testing.assert_allclose(res.H[-1], h.T, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(res.W[-1], res.model.lm_head.weight.detach().double().numpy())


def test_cpu_training_is_reproducible_under_a_seed():
    data, ctx, cfg = tiny_problem(seed=4)
    runs = [tf.train_ntp_transformer(data, ctx, cfg, epochs=20, lr=1e-2, seed=s) for s in (7, 7, 8)]
    np.testing.assert_array_equal(runs[0].loss, runs[1].loss)
    np.testing.assert_array_equal(runs[0].H, runs[1].H)
    assert not np.allclose(runs[0].W[0], runs[2].W[0])


def test_milestones_scale_the_learning_rate():
    data, ctx, cfg = tiny_problem(seed=5)
    frozen = tf.train_ntp_transformer(data, ctx, cfg, epochs=20, lr=1e-2, milestones=(2,), gamma=1e-8,
                                      record=[0, 2, 20])
    assert not np.allclose(frozen.W[0], frozen.W[1])  # two full steps
    np.testing.assert_allclose(frozen.W[2], frozen.W[1], atol=1e-7)  # then lr = 1e-10
    moving = tf.train_ntp_transformer(data, ctx, cfg, epochs=20, lr=1e-2, record=[0, 2, 20])
    np.testing.assert_array_equal(moving.W[1], frozen.W[1])
    assert np.abs(moving.W[2] - moving.W[1]).max() > 1e-3


def test_weight_decay_shrinks_the_weights():
    data, ctx, cfg = tiny_problem(seed=6)
    kw = dict(epochs=30, lr=1e-2, record=[30])
    plain = tf.train_ntp_transformer(data, ctx, cfg, weight_decay=0.0, **kw)
    decayed = tf.train_ntp_transformer(data, ctx, cfg, weight_decay=5.0, **kw)
    assert np.linalg.norm(decayed.W[-1]) < np.linalg.norm(plain.W[-1])


def test_structural_trajectory_matches_direct_computation():
    rng = np.random.default_rng(0)
    Ws, Hs = rng.standard_normal((3, 5, 4)), rng.standard_normal((3, 4, 6))
    CW, CH = cosine_similarity(rng.standard_normal((5, 3))), cosine_similarity(rng.standard_normal((6, 3)))
    out = tf.structural_trajectory(Ws, Hs, {"w": ("W", CW), "h": ("H", CH), "self": ("W", cosine_similarity(Ws[1]))})
    for t in range(3):
        assert out["w"][t] == pytest.approx(structural_similarity(cosine_similarity(Ws[t]), CW), rel=1e-12)
        assert out["h"][t] == pytest.approx(structural_similarity(cosine_similarity(Hs[t].T), CH), rel=1e-12)
    n = 25  # identical matrices: (n - 1) / n, the ddof mismatch of the authors' formula
    assert out["self"][1] == pytest.approx((n - 1) / n, rel=1e-4)  # C = 1e-5 shifts it slightly
    assert out["self"][0] < 0.9


def test_structural_trajectory_offdiagonal_and_partial_metrics():
    from seqrmt.ntp.geometry import block_indicator, offdiagonal_correlation, partial_correlation

    rng = np.random.default_rng(1)
    Ws, Hs = rng.standard_normal((2, 6, 4)), rng.standard_normal((2, 4, 7))
    CW, CH = cosine_similarity(rng.standard_normal((6, 3))), cosine_similarity(rng.standard_normal((7, 3)))
    targets = {"w": ("W", CW), "h": ("H", CH)}
    blocks = {"W": block_indicator([0, 0, 1, 1, 2, 2]), "H": block_indicator([0, 0, 0, 1, 1, 2, 2])}
    off = tf.structural_trajectory(Ws, Hs, targets, metric="offdiag")
    part = tf.structural_trajectory(Ws, Hs, targets, metric="partial", blocks=blocks)
    for t in range(2):
        assert off["w"][t] == pytest.approx(offdiagonal_correlation(cosine_similarity(Ws[t]), CW), abs=1e-14)
        assert off["h"][t] == pytest.approx(offdiagonal_correlation(cosine_similarity(Hs[t].T), CH), abs=1e-14)
        assert part["h"][t] == pytest.approx(
            partial_correlation(cosine_similarity(Hs[t].T), CH, blocks["H"]), abs=1e-14)
    with pytest.raises(ValueError, match="metric"):
        tf.structural_trajectory(Ws, Hs, targets, metric="pearson")
    with pytest.raises(ValueError, match="blocks"):
        tf.structural_trajectory(Ws, Hs, targets, metric="partial")
    with pytest.raises(ValueError, match="blocks"):
        tf.structural_trajectory(Ws, Hs, targets, metric="partial", blocks={"W": blocks["W"]})


def test_errors():
    data, ctx, cfg = tiny_problem()
    kw = dict(epochs=2)
    with pytest.raises(ValueError, match="data"):
        tf.train_ntp_transformer(data.P, ctx, cfg, **kw)
    with pytest.raises(ValueError, match="config"):
        tf.train_ntp_transformer(data, ctx, {"n_embd": 16}, **kw)
    with pytest.raises(ValueError, match="contexts"):
        tf.train_ntp_transformer(data, ctx[:-1], cfg, **kw)
    with pytest.raises(ValueError, match="contexts"):
        tf.train_ntp_transformer(data, ctx + 100, cfg, **kw)
    with pytest.raises(ValueError, match="contexts"):
        tf.train_ntp_transformer(data, ctx.astype(float), cfg, **kw)
    with pytest.raises(ValueError, match="config predicts"):
        tf.train_ntp_transformer(data, ctx, GPTConfig.llama(9, out_vocab_size=8, n_layer=1, block_size=4), **kw)
    with pytest.raises(ValueError, match="epochs"):
        tf.train_ntp_transformer(data, ctx, cfg, epochs=0)
    with pytest.raises(ValueError, match="lr"):
        tf.train_ntp_transformer(data, ctx, cfg, lr=-1.0, **kw)
    with pytest.raises(ValueError, match="weight_decay"):
        tf.train_ntp_transformer(data, ctx, cfg, weight_decay=np.nan, **kw)
    with pytest.raises(ValueError, match="gamma"):
        tf.train_ntp_transformer(data, ctx, cfg, gamma=0.0, **kw)
    with pytest.raises(ValueError, match="milestones"):
        tf.train_ntp_transformer(data, ctx, cfg, milestones=(0,), **kw)
    with pytest.raises(ValueError, match="record"):
        tf.train_ntp_transformer(data, ctx, cfg, record=[3], **kw)
    with pytest.raises(ValueError, match="device"):
        tf.train_ntp_transformer(data, ctx, cfg, device="tpu9", **kw)
    W = np.ones((2, 3, 4))
    with pytest.raises(ValueError, match="Hs"):
        tf.structural_trajectory(W, np.ones((3, 5, 4)), {"a": ("W", np.eye(3))})
    with pytest.raises(ValueError, match="targets"):
        tf.structural_trajectory(W, W, {})
    with pytest.raises(ValueError, match="kind"):
        tf.structural_trajectory(W, W, {"a": ("X", np.eye(3))})
    with pytest.raises(ValueError, match="targets"):
        tf.structural_trajectory(W, W, {"a": ("W", np.eye(4))})


# --- geometry_scores and seed_table (notebook 3.5 drivers) ---


def test_geometry_scores_against_independent_computation():
    from seqrmt.ntp.corpus import support_only
    from seqrmt.ntp import geometry as g
    from seqrmt.ntp.transformer import geometry_scores

    S = support_only(12, 8, 2, 0)
    L_mm = g.centered_support(S)
    rng = np.random.default_rng(0)
    W, H = rng.standard_normal((8, 5)), rng.standard_normal((5, 12))
    L = W @ H
    L_in = np.zeros_like(L_mm)
    Wm, Hm = g.svd_factors(L_mm)
    targets = {"word_mm": ("W", g.cosine_similarity(Wm)), "ctx_mm": ("H", g.cosine_similarity(Hm.T))}
    Zw = g.block_indicator(np.arange(8) % 2)
    Zh = g.block_indicator(np.arange(12) % 3)
    out = geometry_scores(W, H, L, targets, {"W": Zw, "H": Zh}, L_in, L_mm)
    Cw, Ch = g.cosine_similarity(W), g.cosine_similarity(H.T)
    assert out["ssim/word_mm"] == pytest.approx(g.structural_similarity(Cw, targets["word_mm"][1]))
    assert out["offdiag/ctx_mm"] == pytest.approx(g.offdiagonal_correlation(Ch, targets["ctx_mm"][1]))
    assert out["partial/word_mm"] == pytest.approx(g.partial_correlation(Cw, targets["word_mm"][1], Zw))
    assert out["cos"] == pytest.approx(np.sum(L * L_mm) / np.linalg.norm(L) / np.linalg.norm(L_mm))
    assert out["rho"] == pytest.approx(np.sum(L * L_mm) / np.sum(L_mm**2))
    assert len(out) == 3 * 2 + 3


def test_seed_table_mean_and_sample_sd():
    from seqrmt.ntp.transformer import seed_table

    res = {"transformer": {"a": np.array([1.0, 2.0, 3.0])}, "UFM": {"a": np.array([0.5, 0.5, 0.5])}}
    lines = seed_table(res, [("row a", "a", 2)], title="(3 seeds)").splitlines()
    # the label column is as wide as the longest label or title, plus one
    assert lines[0] == f"{'(3 seeds)':10s}  {'transformer':>13s}  {'UFM':>13s}"
    assert lines[1] == f"{'row a':10s}  2.00 +- 1.00  0.50 +- 0.00"  # SD with ddof = 1
    with pytest.raises(ValueError, match="no score"):
        seed_table(res, [("row b", "b", 2)])
    with pytest.raises(ValueError, match="two seeds"):
        seed_table({"A": {"a": np.array([1.0])}}, [("a", "a", 2)])
