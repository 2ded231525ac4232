"""Tests of seqrmt.models.char_gpt: sizes, initial law, the forward pass, validation_loss, and that
the cached runs of Chapter 4.5 come from this file (its initialisation and, with the corpus, the
first training steps of scripts/char_gpt_runs.py, bit for bit)."""

import importlib.util
import io
import pathlib
from importlib import resources

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from seqrmt.models.char_gpt import CharGPT, validation_loss  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED = pathlib.Path("/work/shared/data/shakespeare_corpus.txt")


def _runs():
    blob = (resources.files("seqrmt.models") / "char_gpt_runs.npz").read_bytes()
    return dict(np.load(io.BytesIO(blob)))


@pytest.mark.parametrize("sizes", [dict(vocab_size=77), dict(vocab_size=65),
                                   dict(vocab_size=5, block_size=8, n_layer=2, n_head=2, n_embd=8)])
def test_parameter_count(sizes):
    V, T, L, C = (sizes.get(k, d) for k, d in (("vocab_size", 0), ("block_size", 32), ("n_layer", 4),
                                                ("n_embd", 64)))
    n = sum(p.numel() for p in CharGPT(**sizes).parameters())
    assert n == L * (12 * C * C + 10 * C) + T * C + 2 * C + 2 * V * C + V
    if sizes == dict(vocab_size=77):
        assert n == 201_344 + 129 * 77


def test_initial_key_law():
    """Entries uniform on [-1/8, 1/8] (PyTorch's default for Linear(64, 16)): variance 1/192."""
    torch.manual_seed(0)
    keys = torch.cat([CharGPT(77).key_matrices().reshape(-1) for _ in range(5)]).double()
    assert keys.abs().max() <= 1 / 8
    assert abs(keys.var().item() * 192 - 1) < 0.02  # 81,920 entries: SE of the ratio 0.004


def test_key_matrices_are_the_heads_key_rows_detached():
    model = CharGPT(11)
    k = model.key_matrices()
    assert k.shape == (4, 4, 16, 64) and not k.requires_grad
    assert torch.equal(k[2, 3], model.blocks[2].attn.c_attn[64 + 3 * 16: 64 + 4 * 16])


def test_c_attn_is_the_lectures_per_head_maps_as_drawn():
    """Under one seed, c_attn holds what the lecture's per-head Linear(C, hs, bias=False) maps,
    created head by head as key, query, value, would draw, and c_proj what follows them."""
    from seqrmt.models.char_gpt import CausalSelfAttention

    torch.manual_seed(3)
    attn = CausalSelfAttention(32, 4)
    torch.manual_seed(3)
    heads = [{kind: torch.nn.Linear(32, 8, bias=False) for kind in ("key", "query", "value")}
             for _ in range(4)]
    proj = torch.nn.Linear(32, 32)
    for h, maps in enumerate(heads):
        for third, kind in enumerate(("query", "key", "value")):
            rows = attn.c_attn[third * 32 + h * 8: third * 32 + (h + 1) * 8]
            assert torch.equal(rows, maps[kind].weight), (h, kind)
    assert torch.equal(attn.c_proj.weight, proj.weight) and torch.equal(attn.c_proj.bias, proj.bias)


def test_forward_shapes_loss_and_causality():
    torch.manual_seed(0)
    model = CharGPT(7, block_size=8, n_layer=2, n_head=2, n_embd=16)
    idx = torch.randint(7, (3, 8))
    logits, loss = model(idx, idx)
    assert logits.shape == (3, 8, 7) and model(idx)[1] is None
    assert torch.allclose(loss, torch.nn.functional.cross_entropy(logits.reshape(-1, 7), idx.reshape(-1)))
    changed = idx.clone()
    changed[:, 5:] = (changed[:, 5:] + 1) % 7  # the future does not reach the past
    assert torch.allclose(model(changed)[0][:, :5], logits[:, :5], atol=1e-6)
    with pytest.raises(ValueError, match="block_size"):
        model(torch.zeros(1, 9, dtype=torch.long))


def test_one_product_equals_separate_heads():
    """forward computes every head with one product: the same as attending head by head."""
    torch.manual_seed(1)
    model = CharGPT(5, block_size=6, n_layer=1, n_head=2, n_embd=8)
    attn = model.blocks[0].attn
    x = torch.randn(2, 6, 8)
    mask = torch.ones(6, 6).tril().bool()
    outs = []
    for h in range(2):
        q, k, v = (x @ attn.c_attn[t * 8 + 4 * h: t * 8 + 4 * (h + 1)].T for t in range(3))
        w = (q @ k.transpose(1, 2) / 2.0).masked_fill(~mask, float("-inf")).softmax(-1)  # hs = 4
        outs.append(w @ v)
    assert torch.allclose(attn(x), attn.c_proj(torch.cat(outs, -1)), atol=1e-6)


def test_validation_loss():
    torch.manual_seed(0)
    model = CharGPT(5, block_size=8, n_layer=1, n_head=1, n_embd=8)
    tokens = torch.randint(5, (100,))
    loss = validation_loss(model, tokens)
    # 12 full windows of 8 (a last partial window dropped), every position scored once
    x, y = tokens[:96].view(12, 8), tokens[1:97].view(12, 8)
    with torch.no_grad():
        direct = model(x, y)[1].item()
    assert loss == pytest.approx(direct, rel=1e-6)
    assert validation_loss(model, tokens, batch_size=1) == pytest.approx(loss, rel=1e-6)
    assert model.training  # evaluation mode only during the call
    with pytest.raises(ValueError, match="tokens"):
        validation_loss(model, tokens[:8])
    with pytest.raises(ValueError, match="model"):
        validation_loss(torch.nn.Linear(2, 2), tokens)


@pytest.mark.parametrize("kw, name", [(dict(vocab_size=0), "vocab_size"), (dict(n_layer=2.0), "n_layer"),
                                      (dict(n_head=3), "n_head"), (dict(block_size=True), "block_size"),
                                      (dict(n_embd=2**20), "n_embd")])
def test_constructor_checks_its_sizes(kw, name):
    with pytest.raises(ValueError, match=name):
        CharGPT(**{"vocab_size": 5, **kw})


def test_cached_runs_start_from_this_initialisation():
    """Step 0 of every cached run is CharGPT(V) built under torch.manual_seed(seed)."""
    runs = _runs()
    assert runs["keys"].shape == (3, 9, 4, 4, 16, 64)
    for r, seed in enumerate(runs["seeds"]):
        torch.manual_seed(int(seed))
        np.testing.assert_array_equal(CharGPT(77).key_matrices().numpy(), runs["keys"][r, 0])


@pytest.mark.skipif(not SHARED.is_file(), reason="reference corpus only on the development machine")
def test_cached_runs_first_steps_bit_for_bit():
    """The loop of scripts/char_gpt_runs.py, 10 steps of seed 0, gives the cached keys and loss."""
    spec = importlib.util.spec_from_file_location("char_gpt_runs", ROOT / "scripts" / "char_gpt_runs.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    text = SHARED.read_text()
    stoi = {c: i for i, c in enumerate(sorted(set(text)))}
    tokens = torch.tensor([stoi[c] for c in text])
    n = int(0.9 * len(tokens))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        keys, losses, _ = script.train(0, 10, (0, 10), tokens[:n], tokens[n:], len(stoi))
    finally:
        torch.set_num_threads(threads)
    runs = _runs()
    np.testing.assert_allclose(keys, runs["keys"][0, :2], rtol=0, atol=1e-6)  # equal on its machine
    np.testing.assert_allclose(losses, runs["val_loss"][0, :2], rtol=0, atol=1e-6)
