"""Tests of the encoder-decoder Transformer (chapter 13): against torch.nn.Transformer with copied
weights (values and gradients, post-norm and pre-norm), causal and padding properties, the key/value
cache, shared and tied embeddings, the parameter-count formula, and the errors people see."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_tutorial.reference import TorchTransformer, matching_parameters
from transformer_tutorial.transformer import (
    Decoder,
    DecoderLayer,
    Encoder,
    EncoderLayer,
    KVCache,
    Transformer,
    TransformerConfig,
    base_config,
    big_config,
    count_parameters,
    small_config,
)

PAD = 0


pytestmark = pytest.mark.usefixtures("one_thread")  # see conftest.py


def tiny_config(**overrides) -> TransformerConfig:
    config = TransformerConfig(
        src_vocab_size=23,
        tgt_vocab_size=29,
        d_model=16,
        num_heads=4,
        num_encoder_layers=2,
        num_decoder_layers=2,
        d_ff=32,
        dropout=0.0,
        max_len=24,
        pad_id=PAD,
    )
    return dataclasses.replace(config, **overrides)


def make_model(seed: int = 0, **overrides) -> Transformer:
    torch.manual_seed(seed)
    return Transformer(tiny_config(**overrides))


def padded_batch(seed: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    """Source and target batches with right padding of different lengths (no empty rows)."""
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(1, 23, (3, 7), generator=g)
    tgt = torch.randint(1, 29, (3, 6), generator=g)
    src[0, 4:] = PAD
    src[2, 6:] = PAD
    tgt[1, 3:] = PAD
    tgt[2, 5:] = PAD
    return src, tgt


def formula(c: TransformerConfig) -> int:
    """The parameter count derived in chapter 13 (sinusoidal positions, bias-free output)."""
    D, F = c.d_model, c.d_ff
    mha = 4 * (D * D + D)
    ffn = 2 * D * F + F + D
    enc = c.num_encoder_layers * (mha + ffn + 2 * 2 * D)
    dec = c.num_decoder_layers * (2 * mha + ffn + 3 * 2 * D)
    final_norms = 2 * 2 * D if c.norm_first else 0
    emb = c.src_vocab_size * D + (0 if c.share_embeddings else c.tgt_vocab_size * D)
    out = 0 if c.tie_output else c.tgt_vocab_size * D
    pos = 2 * c.max_len * D if c.learned_positions else 0
    return enc + dec + final_norms + emb + out + pos


# --- reference: torch.nn.Transformer with copied weights ------------------------------------


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_equals_torch_transformer_values_and_gradients(norm_first):
    model = make_model(norm_first=norm_first)
    twin = TorchTransformer(model)
    ref = twin.stacks
    model.train(), ref.train()  # dropout is 0; train mode keeps torch's ordinary code path
    src, tgt = padded_batch()
    weights = torch.randn(3, 6, 29, generator=torch.Generator().manual_seed(2))

    ours = model(src, tgt)
    (ours * weights).sum().backward()
    ours_emb_grad = model.src_embed.embedding.weight.grad.clone()
    model.zero_grad()

    theirs = twin(src, tgt)
    torch.testing.assert_close(ours, theirs, atol=1e-5, rtol=1e-5)
    (theirs * weights).sum().backward()
    theirs_emb_grad = model.src_embed.embedding.weight.grad.clone()
    torch.testing.assert_close(ours_emb_grad, theirs_emb_grad, atol=1e-5, rtol=1e-5)

    # Gradients of the stacks: ours were zeroed above, so recompute them once more.
    model.zero_grad()
    (model(src, tgt) * weights).sum().backward()
    pairs = matching_parameters(model, ref)
    assert len(pairs) == len(list(ref.parameters())), "every nn.Transformer parameter is paired"
    for name, our_params, their_param in pairs:
        ours_grad = torch.cat([p.grad for p in our_params])
        torch.testing.assert_close(ours_grad, their_param.grad, atol=1e-5, rtol=1e-5, msg=name)


def test_post_norm_reference_extra_final_norm():
    """nn.Transformer adds a LayerNorm after each stack even in post-norm mode. Freshly made
    (gain 1, bias 0) it changes nothing, since LayerNorm(LayerNorm(x)) = LayerNorm(x) up to eps;
    once its gain and bias move (training), the outputs differ -- hence the identity norms."""
    model = make_model()
    twin = TorchTransformer(model)
    ref = twin.stacks
    src, tgt = padded_batch()
    ours = model(src, tgt)
    ref.encoder.norm = torch.nn.LayerNorm(16)
    ref.decoder.norm = torch.nn.LayerNorm(16)
    torch.testing.assert_close(ours, twin(src, tgt), atol=1e-4, rtol=1e-4)
    with torch.no_grad():
        ref.decoder.norm.weight.uniform_(0.5, 1.5)
        ref.decoder.norm.bias.uniform_(-0.5, 0.5)
    assert not torch.allclose(ours, twin(src, tgt), atol=1e-2)


def test_copied_weights_are_equal():
    model = make_model(norm_first=True)
    ref = TorchTransformer(model).stacks
    for name, ours, theirs in matching_parameters(model, ref):
        assert torch.equal(torch.cat([p.detach() for p in ours]), theirs.detach()), name


def test_fused_attention_gives_the_same_logits():
    model = make_model()
    fused = Transformer(tiny_config(fused_attention=True))
    fused.load_state_dict(model.state_dict())
    src, tgt = padded_batch()
    torch.testing.assert_close(model(src, tgt), fused(src, tgt), atol=1e-5, rtol=1e-5)


# --- properties: causal and padding ---------------------------------------------------------


@settings(max_examples=15, deadline=None)
@given(
    j=st.integers(min_value=1, max_value=5),
    new_token=st.integers(min_value=1, max_value=28),
    norm_first=st.booleans(),
)
def test_changing_target_token_j_never_changes_earlier_logits(j, new_token, norm_first):
    model = make_model(norm_first=norm_first).eval()
    src, tgt = padded_batch()
    tgt = tgt.clone()
    tgt[tgt == PAD] = 5  # no padding here: every position is real
    changed = tgt.clone()
    changed[:, j] = new_token
    with torch.no_grad():
        before, after = model(src, tgt), model(src, changed)
    torch.testing.assert_close(before[:, :j], after[:, :j], atol=1e-5, rtol=1e-5)


@settings(max_examples=15, deadline=None)
@given(extra_src=st.integers(0, 5), extra_tgt=st.integers(0, 5), norm_first=st.booleans())
def test_adding_padding_never_changes_logits_at_real_positions(extra_src, extra_tgt, norm_first):
    model = make_model(norm_first=norm_first).eval()
    src, tgt = padded_batch()
    padded_src = torch.cat([src, torch.full((3, extra_src), PAD)], dim=1)
    padded_tgt = torch.cat([tgt, torch.full((3, extra_tgt), PAD)], dim=1)
    with torch.no_grad():
        before = model(src, tgt)
        after = model(padded_src, padded_tgt)
    real = tgt != PAD
    torch.testing.assert_close(before[real], after[:, : tgt.shape[1]][real], atol=1e-5, rtol=1e-5)


def test_a_sentence_alone_equals_the_same_sentence_in_a_padded_batch():
    model = make_model().eval()
    src, tgt = padded_batch()
    with torch.no_grad():
        batch = model(src, tgt)
        alone = model(src[:1, :4], tgt[:1])
    torch.testing.assert_close(batch[:1], alone, atol=1e-5, rtol=1e-5)


# --- the key/value cache --------------------------------------------------------------------


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
@pytest.mark.parametrize("chunk", [1, 2])
def test_cached_decoding_equals_recomputing_the_prefix(norm_first, chunk):
    model = make_model(norm_first=norm_first).eval()
    src, tgt = padded_batch()
    with torch.no_grad():
        full = model(src, tgt)
        memory = model.encode(src)
        cache = model.new_cache()
        steps = [
            model.decode(tgt[:, t : t + chunk], memory, src, cache) for t in range(0, 6, chunk)
        ]
    assert cache.length == 6 and cache.layers[0].length == 6
    assert cache.layers[0].self_k.shape == (3, 4, 16, 4)  # (B, H, capacity, Dh)
    assert cache.layers[0].cross_k.shape == (3, 4, 7, 4)  # (B, H, S, Dh)
    torch.testing.assert_close(torch.cat(steps, dim=1), full, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("capacity", [1, 2, 5])
def test_a_full_cache_grows_and_keeps_what_it_held(capacity):
    model = make_model().eval()
    src, tgt = padded_batch()
    with torch.no_grad():
        full = model(src, tgt)
        memory = model.encode(src)
        cache = model.new_cache(capacity)
        steps = [model.decode(tgt[:, t : t + 1], memory, src, cache) for t in range(6)]
    assert cache.layers[0].self_k.shape[2] >= 6
    torch.testing.assert_close(torch.cat(steps, dim=1), full, atol=1e-5, rtol=1e-5)


def test_a_cached_step_writes_in_place():
    model = make_model().eval()
    src, tgt = padded_batch()
    with torch.no_grad():
        memory = model.encode(src)
        cache = model.new_cache(8)
        model.decode(tgt[:, :1], memory, src, cache)
        buffers = [layer.self_k.data_ptr() for layer in cache.layers]
        for t in range(1, 6):
            model.decode(tgt[:, t : t + 1], memory, src, cache)
    assert [layer.self_k.data_ptr() for layer in cache.layers] == buffers, "no copy per step"


def test_padding_fed_to_a_cached_decoder_is_masked():
    model = make_model().eval()
    src, tgt = padded_batch()
    tgt = tgt.clone()
    tgt[0, 2] = PAD  # a padded position in the middle: later queries must not see it
    with torch.no_grad():
        full = model(src, tgt)
        memory = model.encode(src)
        cache = model.new_cache()
        steps = [model.decode(tgt[:, t : t + 1], memory, src, cache) for t in range(6)]
    assert cache.has_padding
    real = tgt != PAD
    torch.testing.assert_close(torch.cat(steps, dim=1)[real], full[real], atol=1e-5, rtol=1e-5)


def test_last_only_projects_the_last_position():
    model = make_model().eval()
    src, tgt = padded_batch()
    with torch.no_grad():
        memory = model.encode(src)
        full = model.decode(tgt, memory, src)
        last = model.decode(tgt, memory, src, last_only=True)
    assert last.shape == (3, 1, 29)
    torch.testing.assert_close(last, full[:, -1:], atol=1e-6, rtol=1e-6)


def test_cache_reorder_follows_the_batch_rows():
    model = make_model().eval()
    src, tgt = padded_batch()
    index = torch.tensor([2, 0, 0])
    with torch.no_grad():
        memory = model.encode(src)
        cache = model.new_cache()
        model.decode(tgt[:, :3], memory, src, cache)
        cache.reorder(index)
        last = model.decode(tgt[index, 3:4], memory[index], src[index], cache)
        expected = model(src[index], tgt[index, :4])[:, 3:4]
    torch.testing.assert_close(last, expected, atol=1e-5, rtol=1e-5)


def test_empty_cache():
    cache = KVCache.empty(3)
    assert cache.length == 0 and len(cache.layers) == 3


# --- embeddings and parameter count ---------------------------------------------------------


def test_shared_and_tied_embeddings_share_storage():
    model = make_model(src_vocab_size=29, share_embeddings=True, tie_output=True)
    weight = model.src_embed.embedding.weight
    assert model.tgt_embed.embedding.weight is weight
    assert model.output.weight is weight
    assert model.output.weight.data_ptr() == weight.data_ptr()
    untied = make_model(tie_output=False)
    assert untied.output.weight.data_ptr() != untied.tgt_embed.embedding.weight.data_ptr()
    assert untied.src_embed is not untied.tgt_embed


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"norm_first": True},
        {"tie_output": False},
        {"src_vocab_size": 29, "share_embeddings": True},
        {"learned_positions": True},
        {"num_encoder_layers": 3, "num_decoder_layers": 1},
    ],
)
def test_parameter_count_formula(overrides):
    model = make_model(**overrides)
    assert count_parameters(model) == formula(model.config)


def test_base_and_big_parameter_counts():
    with torch.device("meta"):
        base = Transformer(base_config())
        big = Transformer(big_config())
    assert count_parameters(base) == formula(base.config) == 63_082_496
    assert count_parameters(big) == formula(big.config) == 214_245_376


def test_trainable_only_counts():
    model = make_model()
    model.output.weight.requires_grad_(False)  # tied: freezes the target embedding too
    assert count_parameters(model, trainable_only=True) == count_parameters(model) - 29 * 16


def test_stacks_and_layers_shapes():
    c = tiny_config(norm_first=True)
    x = torch.randn(2, 5, 16)
    mem = torch.randn(2, 7, 16)
    assert EncoderLayer(16, 4, 32, 0.0).forward(x).shape == (2, 5, 16)
    assert DecoderLayer(16, 4, 32, 0.0).forward(x, mem).shape == (2, 5, 16)
    assert Encoder(c)(x).shape == (2, 5, 16)
    assert Decoder(c)(x, mem).shape == (2, 5, 16)
    assert Encoder(c).norm is not None and Encoder(tiny_config()).norm is None


def test_small_config():
    c = small_config(100, 120)
    assert (c.d_model, c.num_encoder_layers, c.share_embeddings) == (256, 3, False)


# --- errors for people ----------------------------------------------------------------------


def test_bad_configs_raise_clear_errors():
    with pytest.raises(ValueError, match="divisible by num_heads"):
        tiny_config(d_model=18, num_heads=4)
    with pytest.raises(ValueError, match="share_embeddings"):
        tiny_config(share_embeddings=True)  # 23 != 29
    with pytest.raises(ValueError, match="dropout"):
        tiny_config(dropout=1.5)
    with pytest.raises(ValueError, match="pad_id"):
        tiny_config(pad_id=40)


def test_too_long_sequences_raise_clear_errors():
    model = make_model()
    src = torch.ones(1, 25, dtype=torch.long)
    with pytest.raises(ValueError, match="max_len"):
        model.encode(src)
    memory = model.encode(src[:, :5])
    with pytest.raises(ValueError, match="max_len"):
        model.decode(torch.ones(1, 25, dtype=torch.long), memory, src[:, :5])
    cache = model.new_cache()
    model.decode(torch.ones(1, 24, dtype=torch.long), memory, src[:, :5], cache)
    with pytest.raises(ValueError, match="max_len"):
        model.decode(torch.ones(1, 1, dtype=torch.long), memory, src[:, :5], cache)
    cache = model.new_cache()  # a prefix fed again after the cache took it: the cache is said
    model.decode(torch.ones(1, 20, dtype=torch.long), memory, src[:, :5], cache)
    with pytest.raises(ValueError, match="the cache already holds 20 positions"):
        model.decode(torch.ones(1, 21, dtype=torch.long), memory, src[:, :5], cache)


def test_wrong_inputs_raise_clear_errors():
    model = make_model()
    with pytest.raises(ValueError, match="unsqueeze"):
        model.encode(torch.ones(5, dtype=torch.long))
    with pytest.raises(ValueError, match="integer token ids"):
        model.encode(torch.ones(1, 5))
    memory = model.encode(torch.ones(2, 5, dtype=torch.long))
    with pytest.raises(ValueError, match="do not fit together"):
        model.decode(torch.ones(3, 2, dtype=torch.long), memory, torch.ones(2, 5, dtype=torch.long))


@pytest.mark.parametrize("fused", [False, True])
def test_attention_weights_are_every_map_of_the_pass(fused: bool) -> None:
    torch.manual_seed(0)
    config = tiny_config(fused_attention=fused, dropout=0.1)
    model = Transformer(config).train()
    src = torch.tensor([[5, 6, 7, 0], [8, 9, 0, 0]])  # padded with pad_id 0
    tgt = torch.tensor([[1, 4, 5], [1, 6, 0]])
    maps = model.attention_weights(src, tgt)
    assert model.training  # the mode is given back
    B, H = 2, config.num_heads
    assert [w.shape for w in maps.encoder_self] == [(B, H, 4, 4)] * config.num_encoder_layers
    assert [w.shape for w in maps.decoder_self] == [(B, H, 3, 3)] * config.num_decoder_layers
    assert [w.shape for w in maps.cross] == [(B, H, 3, 4)] * config.num_decoder_layers
    for w in [*maps.encoder_self, *maps.decoder_self, *maps.cross]:
        torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:-1]))
    for w in [*maps.encoder_self, *maps.cross]:  # padding keys get no weight
        assert w[0, ..., 3].abs().max() == 0 and w[1, ..., 2:].abs().max() == 0
    for w in maps.decoder_self:  # nor do future positions
        assert torch.triu(w, diagonal=1).abs().max() == 0
    # The maps belong to the same computation as the logits: the pass with weights changes nothing.
    model.eval()
    with torch.no_grad():
        torch.testing.assert_close(model(src, tgt), model.decode(tgt, model.encode(src), src))
    # Blocks see the same inputs as in a normal pass: the last encoder map, recomputed by hand.
    with torch.no_grad():
        x = model.src_positions(model.src_embed(src))
        mask = (src != 0)[:, None, None, :]
        for layer in model.encoder.layers[:-1]:
            x = layer(x, mask)
        last = model.encoder.layers[-1]
        h = last.norm1(x) if config.norm_first else x
        _, expected = last.self_attn(h, h, h, mask=mask, need_weights=True)
    torch.testing.assert_close(maps.encoder_self[-1], expected)
