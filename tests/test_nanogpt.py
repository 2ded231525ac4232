"""Tests of seqrmt.nanogpt: checkpoint D-7 (parameter counts), layouts, training, determinism, CLI."""

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from seqrmt import nanogpt as ng

TINY = dict(vocab_size=11, block_size=16, n_layer=2, n_head=2, n_embd=16)


@pytest.fixture(autouse=True)
def _one_thread():
    """Tiny models: one thread is fastest and immune to spin-waiting when cores are shared."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def pattern_tokens(n=3000, vocab=11):
    """A learnable sequence: a fixed random permutation of the ``vocab`` symbols, repeated."""
    cycle = np.random.default_rng(0).permutation(vocab)
    return np.resize(cycle, n).astype(np.int64)


# ---------------------------------------------------------------- D-7
@pytest.mark.parametrize("vocab,expected", [(65, 209_729), (77, 211_277)])
def test_d7_parameter_count_of_the_talks_model(vocab, expected):
    model = ng.GPT(ng.GPTConfig.aarts(vocab_size=vocab))
    assert model.num_parameters() == expected == 201_344 + 129 * vocab
    assert sum(p.numel() for p in model.state_dict().values()) == expected  # nothing hidden or shared
    head = model.blocks[0].attn.heads[0]
    assert tuple(head.key.weight.shape) == (16, 64) and head.key.bias is None


def test_tied_nanogpt_count_is_closed_form():
    cfg = ng.GPTConfig(vocab_size=77, block_size=128, n_layer=4, n_head=4, n_embd=64)
    C, L, V = 64, 4, 77
    per_block = 2 * C + 3 * C * C + C * C + 8 * C * C  # two LayerNorm weights, qkv, proj, MLP (no biases)
    assert ng.GPT(cfg).num_parameters() == V * C + 128 * C + L * per_block + C


def test_pytorch_init_variance_of_key_matrices():
    """Correction 4: Linear(64, 16) default init is U(-1/8, 1/8), variance 1/192 (not 1/64)."""
    keys = ng.head_weights(ng.build_gpt(ng.GPTConfig.aarts(77), seed=3, device="cpu"), "key")
    assert keys.shape == (4, 4, 16, 64)
    assert np.abs(keys).max() <= 1 / 8
    rel_se = np.sqrt(0.8 / keys.size)  # relative SE of a sample variance of uniforms (kurtosis 1.8)
    assert keys.var() * 192 == pytest.approx(1.0, abs=4 * rel_se)


def test_fused_and_per_head_layouts_compute_the_same_function():
    per_head = ng.build_gpt(ng.GPTConfig(**TINY, qkv_layout="per_head"), seed=0, device="cpu")
    fused = ng.build_gpt(ng.GPTConfig(**TINY), seed=1, device="cpu")
    state = {}
    for name, tensor in fused.state_dict().items():
        if "c_attn" not in name:
            state[name] = per_head.state_dict()[name]
    for i, block in enumerate(per_head.blocks):
        state[f"blocks.{i}.attn.c_attn.weight"] = block.attn.qkv_params()[0].detach()
    fused.load_state_dict(state)
    idx = torch.randint(11, (3, 16), generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(fused(idx)[0], per_head(idx)[0], rtol=1e-5, atol=1e-6)
    for kind in ("query", "key", "value"):
        np.testing.assert_array_equal(ng.head_weights(fused, kind), ng.head_weights(per_head, kind))
    # per-head extraction reads the right Linear maps
    k = ng.head_weights(per_head, "key")
    np.testing.assert_array_equal(k[1, 0], per_head.blocks[1].attn.heads[0].key.weight.detach().double().numpy())
    # fused extraction: head h of the keys is rows C + h*hs ... C + (h+1)*hs of c_attn
    w = fused.blocks[0].attn.c_attn.weight.detach().double().numpy()
    np.testing.assert_array_equal(ng.head_weights(fused, "key")[0, 1], w[16 + 8:16 + 16])


def test_attention_is_causal():
    model = ng.build_gpt(ng.GPTConfig(**TINY), seed=0, device="cpu")
    idx = torch.randint(11, (1, 16), generator=torch.Generator().manual_seed(1))
    changed = idx.clone()
    changed[0, 10:] = (changed[0, 10:] + 1) % 11
    torch.testing.assert_close(model(idx)[0][:, :10], model(changed)[0][:, :10])


# ---------------------------------------------------------------- forward, generate, validation loss
def test_forward_generate_shapes():
    model = ng.build_gpt(ng.GPTConfig(**TINY, dropout=0.1, bias=True), seed=0, device="cpu")
    idx = torch.zeros(4, 5, dtype=torch.long)
    logits, loss = model(idx, idx)
    assert tuple(logits.shape) == (4, 5, 11)
    assert 1.0 < loss.item() < 4.0
    out = model.generate(idx[:, :2], 30, generator=torch.Generator().manual_seed(0), top_k=3)
    assert tuple(out.shape) == (4, 32) and out.dtype == torch.long
    again = model.generate(idx[:, :2], 30, generator=torch.Generator().manual_seed(0), top_k=3)
    assert torch.equal(out, again) and model.training  # reproducible, mode restored


def test_validation_loss_matches_window_by_window_computation():
    model = ng.build_gpt(ng.GPTConfig(**TINY), seed=0, device="cpu")
    tokens = pattern_tokens(500)
    T, n_win = 16, (500 - 1) // 16
    windows = [(tokens[None, i * T:(i + 1) * T], tokens[None, i * T + 1:(i + 1) * T + 1]) for i in range(n_win)]
    with torch.no_grad():
        per_window = [model(torch.tensor(x), torch.tensor(y))[1] for x, y in windows]
    expected = float(torch.stack(per_window).mean())
    assert ng.validation_loss(model, tokens, batch_size=7) == pytest.approx(expected, rel=1e-5)
    assert ng.validation_loss(model, torch.tensor(tokens), block_size=8) > 0


def test_lr_schedule():
    cfg = ng.TrainConfig(max_iters=1000, lr=1e-3, min_lr=1e-4, warmup_iters=100)
    assert ng.lr_at(0, cfg) == pytest.approx(1e-3 / 101)
    assert ng.lr_at(100, cfg) == pytest.approx(1e-3)
    assert ng.lr_at(550, cfg) == pytest.approx(5.5e-4)
    assert ng.lr_at(5000, cfg) == pytest.approx(1e-4)
    lrs = [ng.lr_at(i, cfg) for i in range(100, 1000)]
    assert np.all(np.diff(lrs) <= 0)
    const = ng.TrainConfig(schedule="constant", lr=3e-4)
    assert ng.lr_at(0, const) == ng.lr_at(999, const) == 3e-4


def test_sample_batch_windows():
    data = torch.arange(1000)
    x, y = ng.sample_batch(data, 64, 16, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (64, 16)
    assert torch.equal(y[:, :-1], x[:, 1:]) and torch.equal(x[:, 1:] - x[:, :-1], torch.ones(64, 15, dtype=torch.long))
    assert int(y.max()) <= 999


# ---------------------------------------------------------------- training
def _tiny_run(seed=0, **kw):
    model = ng.build_gpt(ng.GPTConfig(**TINY), seed=seed, device="cpu")
    tokens = pattern_tokens()
    cfg = ng.TrainConfig(batch_size=8, max_iters=40, lr=1e-2, min_lr=1e-3, warmup_iters=2, seed=seed,
                         snapshot_iters=(0, 20, 40), snapshot_kinds=("key", "value"), verbose=False,
                         log_interval=10, **kw)
    return model, ng.train_gpt(model, tokens[:2500], tokens[2500:], cfg)


def test_training_reduces_loss_and_snapshots():
    model, res = _tiny_run(eval_interval=20, eval_iters=4)
    tokens = pattern_tokens()
    assert res.log[0][1] == pytest.approx(np.log(11), abs=0.3)
    assert res.log[-1][1] < 0.5 * res.log[0][1]
    assert ng.validation_loss(model, tokens[2500:]) < 0.5 * np.log(11)
    assert [e[0] for e in res.evals] == [0, 20, 40]
    assert res.evals[-1][2] < 0.5 * res.evals[0][2]
    assert set(res.snapshots) == {"key", "value"} and sorted(res.snapshots["key"]) == [0, 20, 40]
    assert res.snapshots["value"][40].shape == (2, 2, 8, 16)
    np.testing.assert_array_equal(res.snapshots["key"][40], ng.head_weights(model, "key"))
    assert not np.allclose(res.snapshots["key"][0], res.snapshots["key"][40])
    assert res.iter_ms.shape == (40,) and np.all(res.iter_ms > 0)
    assert res.tokens_per_second() == pytest.approx(8 * 16 / (res.median_ms() / 1000))


def test_cpu_training_is_reproducible_under_a_seed():
    _, a = _tiny_run(seed=4)
    _, b = _tiny_run(seed=4)
    _, c = _tiny_run(seed=5)
    assert a.log == b.log
    np.testing.assert_array_equal(a.snapshots["key"][40], b.snapshots["key"][40])
    assert a.log != c.log


def test_progress_lines(capsys):
    model = ng.build_gpt(ng.GPTConfig(**TINY), seed=0, device="cpu")
    ng.train_gpt(model, pattern_tokens(), config=ng.TrainConfig(batch_size=4, max_iters=5, log_interval=2))
    lines = capsys.readouterr().out.strip().splitlines()
    assert [ln.split(":")[0] for ln in lines] == ["iter     0", "iter     2", "iter     4"]


def test_device_switch():
    model = ng.build_gpt(ng.GPTConfig(**TINY), seed=0, device="cpu")
    assert next(model.parameters()).device.type == "cpu"
    res = ng.train_gpt(model, pattern_tokens(), config=ng.TrainConfig(batch_size=4, max_iters=2, device="cpu",
                                                                      verbose=False))
    assert res.iter_ms.size == 2
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="cuda"):
            ng.build_gpt(ng.GPTConfig(**TINY), device="cuda")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_training_runs():
    model = ng.build_gpt(ng.GPTConfig(**TINY), seed=0, device="cuda")
    cfg = ng.TrainConfig(batch_size=8, max_iters=20, verbose=False, snapshot_iters=(20,))
    res = ng.train_gpt(model, pattern_tokens(), config=cfg)
    assert next(model.parameters()).is_cuda and res.snapshots["key"][20].shape == (2, 2, 8, 16)
    assert np.isfinite(ng.validation_loss(model, pattern_tokens(500)))


# ---------------------------------------------------------------- command line
def test_command_line(tmp_path):
    text = tmp_path / "corpus.txt"
    text.write_text("the quick brown fox jumps over the lazy dog. " * 200)
    out = tmp_path / "out.json"
    args = ["--n-layer", "1", "--n-head", "2", "--n-embd", "16", "--block-size", "16", "--batch-size", "8",
            "--max-iters", "12", "--warmup-iters", "2", "--device", "cpu", "--seed", "0", "--data", str(text),
            "--no-verify", "--json", str(out), "--quiet", "--eval-interval", "6", "--eval-iters", "2"]
    result = ng.main(args)
    saved = json.loads(out.read_text())
    for key in ("n_params", "ms_per_iter", "tokens_per_s", "final_val_loss"):
        assert saved[key] == pytest.approx(result[key])
    assert saved["tokens_per_s"] == pytest.approx(8 * 16 / (saved["ms_per_iter"] / 1000))
    assert saved["train"]["betas"] == [0.9, 0.99] and saved["model"]["vocab_size"] == 28
    assert ng.main(args + ["--constant-lr"])["train"]["schedule"] == "constant"


def test_module_is_runnable():
    proc = subprocess.run([sys.executable, "-m", "seqrmt.nanogpt", "--help"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and "--max-iters" in proc.stdout


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize("bad", [dict(n_embd=15), dict(n_head=0), dict(block_size=-1), dict(vocab_size=2.5),
                                 dict(dropout=1.0), dict(dropout=-0.1), dict(qkv_layout="split"),
                                 dict(activation="tanh"), dict(init="xavier"), dict(bias=1),
                                 dict(qkv_bias="no")])
def test_config_errors(bad):
    with pytest.raises(ValueError):
        ng.GPTConfig(**{**TINY, **bad})


@pytest.mark.parametrize("bad,match", [(dict(lr=0.0), "lr"), (dict(lr=-1e-3), "lr"), (dict(min_lr=1.0), "min_lr"),
                                       (dict(batch_size=0), "batch_size"), (dict(max_iters=-1), "max_iters"),
                                       (dict(schedule="linear"), "schedule"), (dict(betas=(0.9, 1.0)), "betas"),
                                       (dict(grad_clip=-1.0), "grad_clip"), (dict(weight_decay=np.nan), "weight_decay"),
                                       (dict(snapshot_iters=(2000,)), "snapshot_iters"),
                                       (dict(snapshot_kinds=("keys",)), "snapshot_kinds")])
def test_train_config_errors(bad, match):
    with pytest.raises(ValueError, match=match):
        ng.TrainConfig(**bad)


def test_argument_errors():
    model = ng.build_gpt(ng.GPTConfig(**TINY), seed=0, device="cpu")
    with pytest.raises(ValueError, match="block_size"):
        model(torch.zeros(1, 17, dtype=torch.long))
    with pytest.raises(ValueError, match="kind"):
        ng.head_weights(model, "keys")
    with pytest.raises(ValueError, match="model"):
        ng.head_weights(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="config"):
        ng.GPT({"n_embd": 64})
    with pytest.raises(ValueError, match="seed"):
        ng.build_gpt(ng.GPTConfig(**TINY), seed=-1)
    with pytest.raises(ValueError, match="device"):
        ng.build_gpt(ng.GPTConfig(**TINY), device="tpu9")
    with pytest.raises(ValueError, match="temperature"):
        model.generate(torch.zeros(1, 1, dtype=torch.long), 2, temperature=0.0)
    with pytest.raises(ValueError, match="max_new_tokens"):
        model.generate(torch.zeros(1, 1, dtype=torch.long), -1)
    with pytest.raises(ValueError, match="data"):
        ng.sample_batch(torch.arange(10), 2, 10)
    with pytest.raises(ValueError, match="block_size"):
        ng.validation_loss(model, pattern_tokens(), block_size=32)
    with pytest.raises(ValueError, match="tokens"):
        ng.validation_loss(model, np.arange(10))
    with pytest.raises(ValueError, match="vocabulary"):
        ng.train_gpt(model, np.arange(100), config=ng.TrainConfig(max_iters=1, verbose=False))
    with pytest.raises(ValueError, match="val_tokens"):
        ng.train_gpt(model, pattern_tokens(), config=ng.TrainConfig(max_iters=1, eval_interval=1, verbose=False))
    with pytest.raises(ValueError, match="train_tokens"):
        ng.train_gpt(model, np.ones((3, 3), dtype=int))
    with pytest.raises(ValueError, match="it"):
        ng.lr_at(-1, ng.TrainConfig())


# ---------------------------------------------------------------- Chapter 3 options (Llama-style model)
LLAMA_TINY = dict(n_layer=2, n_embd=16, n_head=3, head_dim=4, mlp_hidden=24, block_size=8)


def llama_count(V_in, V_out, d, L, nh, hs, F, block=0):
    """Parameters of GPTConfig.llama: embeddings, per block two RMSNorm weights, qkv, wo, SwiGLU; final norm; head."""
    A = nh * hs
    return V_in * d + block * d + L * (2 * d + 3 * A * d + A * d + 3 * d * F) + d + V_out * d


def test_paper_transformer_parameter_count():
    cfg = ng.GPTConfig.llama(140, out_vocab_size=100)
    assert (cfg.n_layer, cfg.n_embd, cfg.n_head, cfg.head_size, cfg.attn_width, cfg.hidden_width) == (4, 128, 6, 20,
                                                                                                         120, 512)
    model = ng.GPT(cfg)
    assert model.num_parameters() == llama_count(140, 100, 128, 4, 6, 20, 512)
    assert model.wpe is None and not any("wpe" in name for name, _ in model.named_parameters())
    assert tuple(model.lm_head.weight.shape) == (100, 128) and model.lm_head.bias is None
    assert model.lm_head.weight.data_ptr() != model.wte.weight.data_ptr()
    attn = model.blocks[0].attn
    assert tuple(attn.c_attn.weight.shape) == (360, 128) and tuple(attn.c_proj.weight.shape) == (128, 120)
    assert isinstance(model.blocks[0].ln_1, torch.nn.RMSNorm) and model.ln_f.eps == 1e-5
    assert ng.head_weights(model, "value").shape == (4, 6, 20, 128)


@pytest.mark.parametrize("opts,extra", [
    (dict(pos_embedding="learned"), 8 * 16),  # learned positions add block_size * d
    (dict(norm="layernorm"), 0),  # LayerNorm without bias has the same weight count as RMSNorm
    (dict(activation="gelu"), -2 * 16 * 24),  # two maps instead of three
])
def test_llama_variant_parameter_counts(opts, extra):
    cfg = ng.GPTConfig.llama(13, out_vocab_size=7, **{**LLAMA_TINY, **opts})
    assert ng.GPT(cfg).num_parameters() == llama_count(13, 7, 16, 2, 3, 4, 24) + extra


def test_new_defaults_keep_nanogpt_unchanged():
    cfg = ng.GPTConfig(**TINY)
    assert (cfg.pos_embedding, cfg.norm, cfg.head_size, cfg.hidden_width, cfg.n_out) == ("learned", "layernorm", 8,
                                                                                         64, 11)
    model = ng.GPT(cfg)
    assert isinstance(model.ln_f, torch.nn.LayerNorm) and model.wpe is not None
    assert not hasattr(model.blocks[0].mlp, "c_up")


def test_llama_init_scales_wo_and_w3():
    L = 4
    model = ng.build_gpt(ng.GPTConfig.llama(50, out_vocab_size=40, n_layer=L), seed=0, device="cpu")
    std = {name: float(p.detach().std()) for name, p in model.named_parameters()}
    small = 0.02 / np.sqrt(2 * L)
    for name, s in std.items():
        if name.endswith(("attn.c_proj.weight", "mlp.c_up.weight")):
            assert s == pytest.approx(small, rel=0.05), name
        elif name.endswith(("c_attn.weight", "c_fc.weight", "mlp.c_proj.weight", "wte.weight", "lm_head.weight")):
            assert s == pytest.approx(0.02, rel=0.05), name
        else:  # RMSNorm weights start at one
            assert "ln" in name and s == 0.0


def test_swiglu_mlp_formula():
    model = ng.build_gpt(ng.GPTConfig.llama(13, **LLAMA_TINY), seed=1, device="cpu")
    mlp = model.blocks[0].mlp
    x = torch.randn(2, 3, 16, generator=torch.Generator().manual_seed(0))
    w1, w3, w2 = mlp.c_fc.weight, mlp.c_up.weight, mlp.c_proj.weight
    expected = (torch.nn.functional.silu(x @ w1.T) * (x @ w3.T)) @ w2.T
    torch.testing.assert_close(mlp(x), expected)


def test_rmsnorm_formula():
    model = ng.build_gpt(ng.GPTConfig.llama(13, **LLAMA_TINY), seed=1, device="cpu")
    x = torch.randn(4, 16, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(model.ln_f(x), x / torch.sqrt((x ** 2).mean(-1, keepdim=True) + 1e-5))


def test_hidden_states_give_the_forward_logits():
    model = ng.build_gpt(ng.GPTConfig.llama(13, out_vocab_size=7, **LLAMA_TINY), seed=2, device="cpu")
    idx = torch.randint(13, (5, 6), generator=torch.Generator().manual_seed(0))
    h = model.hidden_states(idx)
    logits, _ = model(idx)
    assert tuple(h.shape) == (5, 6, 16) and tuple(logits.shape) == (5, 6, 7)
    torch.testing.assert_close(model.lm_head(h), logits)
    torch.testing.assert_close(h[:, -1] @ model.lm_head.weight.T, logits[:, -1])
    # RMSNorm with unit weights: mean square ms / (ms + eps) of the pre-norm state, just below one
    ms = h.detach().pow(2).mean(-1)
    assert bool(((ms > 0.9) & (ms <= 1.0)).all())


def test_without_positions_one_layer_ignores_the_order_of_the_prefix():
    """One causal layer without positions: the last output depends on the prefix as a multiset only."""
    idx = torch.randint(13, (4, 6), generator=torch.Generator().manual_seed(3))
    perm = torch.tensor([3, 0, 4, 1, 2, 5])  # shuffles the first five tokens, keeps the last
    for pos, same in (("none", True), ("learned", False)):
        cfg = ng.GPTConfig.llama(13, **{**LLAMA_TINY, "n_layer": 1, "pos_embedding": pos})
        model = ng.build_gpt(cfg, seed=0, device="cpu")
        a, b = model(idx)[0][:, -1], model(idx[:, perm])[0][:, -1]
        assert torch.allclose(a, b, atol=1e-5) == same
    # with two layers the causal mask lets the model tell positions apart even without encodings
    model = ng.build_gpt(ng.GPTConfig.llama(13, **LLAMA_TINY), seed=0, device="cpu")
    assert not torch.allclose(model(idx)[0][:, -1], model(idx[:, perm])[0][:, -1], atol=1e-5)


def test_aarts_and_nanogpt_counts_unchanged_by_new_fields():
    assert ng.GPT(ng.GPTConfig.aarts(65)).num_parameters() == 209_729
    cfg = ng.GPTConfig(**TINY, head_dim=4)  # narrower heads: attention width 8 instead of 16
    C, A, L, V = 16, 8, 2, 11
    per_block = 2 * C + 3 * A * C + A * C + 8 * C * C
    assert ng.GPT(cfg).num_parameters() == V * C + 16 * C + L * per_block + C


@pytest.mark.parametrize("bad", [dict(pos_embedding="rope"), dict(norm="batch"), dict(activation="geglu"),
                                 dict(init="llama2"), dict(head_dim=0), dict(mlp_hidden=-4),
                                 dict(out_vocab_size=5), dict(out_vocab_size=2.0)])
def test_new_option_errors(bad):
    with pytest.raises(ValueError, match=next(iter(bad)).split("_")[0]):
        ng.GPTConfig(**{**TINY, **bad})


def test_hidden_states_errors():
    model = ng.build_gpt(ng.GPTConfig.llama(13, **LLAMA_TINY), seed=0, device="cpu")
    with pytest.raises(ValueError, match="idx"):
        model.hidden_states(torch.zeros(3, dtype=torch.long))
    with pytest.raises(ValueError, match="block_size"):
        model.hidden_states(torch.zeros(1, 9, dtype=torch.long))
