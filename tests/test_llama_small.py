"""The small LLaMA-style model of Part 3 (``seqrmt.models.llama_small``).

``data/llama_small_reference.npz`` was written by the configurable model this file replaced,
``seqrmt.nanogpt.GPT`` with ``GPTConfig.llama(9, out_vocab_size=7, n_layer=2, n_head=3,
head_dim=4, n_embd=16, mlp_hidden=24)`` built with seed 3, its RMSNorm gains perturbed by
``0.1 N(0, 1)``: its parameters in order (``param00`` ...), token ids ``idx`` (5 x 6), and its
``logits`` and final normalised ``hidden`` states. Loading the same weights into the new file must
give the same outputs, so Chapter 3.5 trains the same network as before.
"""

import math
import pathlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from seqrmt.models.llama_small import LlamaConfig, LlamaSmall  # noqa: E402

REFERENCE = pathlib.Path(__file__).with_name("data") / "llama_small_reference.npz"


def _model(seed=0, **kw):
    torch.manual_seed(seed)
    return LlamaSmall(LlamaConfig(**{"vocab_size": 9, "out_vocab_size": 7, **kw}))


def test_same_outputs_as_the_former_configurable_model_for_the_same_weights():
    ref = np.load(REFERENCE)
    model = _model(n_layer=2, n_head=3, head_dim=4, n_embd=16, mlp_hidden=24)
    params = list(model.parameters())
    assert len(params) == sum(k.startswith("param") for k in ref.files)
    with torch.no_grad():
        for i, p in enumerate(params):  # same parameters, in the same order
            w = torch.as_tensor(ref[f"param{i:02d}"])
            assert w.shape == p.shape
            p.copy_(w)
        idx = torch.as_tensor(ref["idx"])
        np.testing.assert_allclose(model.hidden_states(idx).numpy(), ref["hidden"], rtol=0, atol=1e-6)
        np.testing.assert_allclose(model(idx).numpy(), ref["logits"], rtol=0, atol=1e-6)


def test_parameter_count_and_shapes():
    cfg = LlamaConfig(vocab_size=50, out_vocab_size=30)
    model = LlamaSmall(cfg)
    C, A, F, L = 128, 120, 512, 4
    per_block = 2 * C + 3 * A * C + A * C + 3 * C * F  # two gains, qkv, wo, w1 w2 w3
    expected = 50 * C + L * per_block + C + 30 * C
    assert sum(p.numel() for p in model.parameters()) == expected
    idx = torch.randint(0, 50, (4, 5))
    assert model.hidden_states(idx).shape == (4, 5, C)
    assert model(idx).shape == (4, 5, 30)  # the output vocabulary is not the input one


def test_initialisation_is_llama2c():
    model = _model(1, vocab_size=400, out_vocab_size=300, n_layer=4)
    std = {n: float(p.std()) for n, p in model.named_parameters() if p.ndim == 2}
    small = 0.02 / math.sqrt(2 * 4)
    for name, s in std.items():
        target = small if name.endswith(("attn.c_proj.weight", "mlp.c_up.weight")) else 0.02
        assert abs(s / target - 1) < 0.05, (name, s, target)
    assert all(torch.equal(p, torch.ones_like(p)) for p in model.parameters() if p.ndim == 1)


def test_causal_and_without_positions():
    model = _model(2, n_layer=1)
    idx = torch.randint(0, 9, (3, 5), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        h = model.hidden_states(idx)
        later = idx.clone()
        later[:, -1] = (later[:, -1] + 1) % 9  # a later token cannot change earlier positions
        assert torch.equal(model.hidden_states(later)[:, :-1], h[:, :-1])
        # one layer and no positions: the last state sees its prefix as a multiset
        perm = [2, 0, 3, 1, 4]
        torch.testing.assert_close(model.hidden_states(idx[:, perm])[:, -1], h[:, -1])
        two = _model(2, n_layer=2)
        assert not torch.allclose(two.hidden_states(idx[:, perm])[:, -1], two.hidden_states(idx)[:, -1])


def test_final_states_are_rms_normalised():
    model = _model(3)
    idx = torch.randint(0, 9, (4, 3))
    with torch.no_grad():
        x = model.wte(idx)
        for block in model.blocks:
            x = block(x)
        # RMSNorm with unit gains and llama's eps: x / sqrt(mean(x^2) + 1e-5)
        expected = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)
        torch.testing.assert_close(model.hidden_states(idx), expected)


@pytest.mark.parametrize("bad", [dict(n_layer=0), dict(head_dim=2.5), dict(vocab_size="9")])
def test_config_validates_sizes(bad):
    with pytest.raises((ValueError, TypeError), match=next(iter(bad))):
        LlamaConfig(**{"vocab_size": 9, "out_vocab_size": 7, **bad})


def test_model_wants_a_config():
    with pytest.raises(TypeError, match="config"):
        LlamaSmall({"vocab_size": 9})


@pytest.mark.parametrize("n_layer", [1, 2, 3])
def test_context_embeddings_are_the_last_hidden_states(n_layer):
    # the shortcut of the last block (query, projection and MLP at the last position only) must give
    # the same vectors and the same gradients as the full forward pass read at the last position
    model = _model(5, n_layer=n_layer, n_head=3, head_dim=4, n_embd=16, mlp_hidden=24)
    idx = torch.randint(0, 9, (6, 5), generator=torch.Generator().manual_seed(1))
    h_full = model.hidden_states(idx)[:, -1]
    h_last = model.context_embeddings(idx)
    assert h_last.shape == (6, 16)
    torch.testing.assert_close(h_last, h_full, rtol=0, atol=2e-6)
    w = torch.randn(6, 16, generator=torch.Generator().manual_seed(2))
    g_full = torch.autograd.grad((w * h_full).sum(), list(model.parameters()), allow_unused=True)
    g_last = torch.autograd.grad((w * h_last).sum(), list(model.parameters()), allow_unused=True)
    for a, b in zip(g_full, g_last):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)
    # and it is not a copy of something else: another context's state differs
    assert (model.context_embeddings(idx.flip(0)) - h_last).abs().max() > 1e-3
