"""Tests of transformer_tutorial.masks (chapter 12)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from transformer_tutorial.attention import masked_softmax
from transformer_tutorial.masks import causal_mask, decoder_self_mask, key_padding_mask
from transformer_tutorial.multihead import MultiHeadAttention
from transformer_tutorial.reference import to_torch_multihead
from transformer_tutorial.sequences import padding_mask

PAD = 0


def test_causal_mask_values_and_shape():
    mask = causal_mask(4)
    assert mask.dtype == torch.bool and mask.shape == (4, 4)
    expected = torch.tensor(
        [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]], dtype=torch.bool
    )
    assert torch.equal(mask, expected)
    assert causal_mask(0).shape == (0, 0)


@pytest.mark.parametrize("T", [1, 2, 5, 9])
def test_causal_mask_is_the_opposite_polarity_of_pytorch(T):
    # nn.Transformer's float mask has -inf where attention is blocked (True = blocked in bool form).
    blocked = nn.Transformer.generate_square_subsequent_mask(T) == float("-inf")
    assert torch.equal(causal_mask(T), ~blocked)


def test_key_padding_mask():
    tokens = torch.tensor([[5, 6, 7, PAD], [8, PAD, PAD, PAD]])
    mask = key_padding_mask(tokens, PAD)
    assert mask.shape == (2, 1, 1, 4) and mask.dtype == torch.bool
    assert mask[:, 0, 0].tolist() == [[True, True, True, False], [True, False, False, False]]
    with pytest.raises(ValueError, match=r"\(B, S\)"):
        key_padding_mask(tokens[0], PAD)


@settings(max_examples=30, deadline=None)
@given(lengths=st.lists(st.integers(1, 7), min_size=1, max_size=4), extra=st.integers(0, 3))
def test_decoder_self_mask_is_padding_and_causal(lengths, extra):
    T = max(lengths) + extra
    tokens = torch.full((len(lengths), T), PAD)
    for b, n in enumerate(lengths):
        tokens[b, :n] = torch.arange(1, n + 1)
    mask = decoder_self_mask(tokens, PAD)
    assert mask.shape == (len(lengths), 1, T, T)
    for b, n in enumerate(lengths):
        for t in range(T):
            for s in range(T):
                assert mask[b, 0, t, s].item() == (s <= t and s < n)


def test_masks_follow_the_device_of_their_input():
    tokens = torch.tensor([[1, 2, PAD]], device="meta")
    assert decoder_self_mask(tokens, PAD).device.type == "meta"
    assert causal_mask(3, device="meta").device.type == "meta"


# --- Property tests on the real multi-head attention (chapter 9) -----------------------------------


D, H = 8, 2


def _mha(seed: int) -> MultiHeadAttention:
    torch.manual_seed(seed)
    return MultiHeadAttention(D, H).eval()


@settings(max_examples=25, deadline=None)
@given(
    B=st.integers(1, 3),
    T=st.integers(2, 9),
    data=st.data(),
    seed=st.integers(0, 1000),
    fused=st.booleans(),
)
def test_changing_a_future_token_never_changes_earlier_outputs(B, T, data, seed, fused):
    t0 = data.draw(st.integers(1, T - 1), label="first changed position")
    lengths = data.draw(st.lists(st.integers(1, T), min_size=B, max_size=B), label="lengths")
    mha = _mha(seed)
    gen = torch.Generator().manual_seed(seed)
    tokens = torch.randint(1, 50, (B, T), generator=gen)
    for b, n in enumerate(lengths):
        tokens[b, n:] = PAD
    x = torch.randn(B, T, D, generator=gen)
    changed = x.clone()
    changed[:, t0:] = torch.randn(B, T - t0, D, generator=gen)
    changed_tokens = tokens.clone()
    changed_tokens[:, t0:] = torch.randint(0, 50, (B, T - t0), generator=gen)  # may add padding
    with torch.no_grad():
        out, _ = mha(x, x, x, mask=decoder_self_mask(tokens, PAD), fused=fused)
        out2, _ = mha(
            changed, changed, changed, mask=decoder_self_mask(changed_tokens, PAD), fused=fused
        )
    torch.testing.assert_close(out[:, :t0], out2[:, :t0], atol=1e-5, rtol=1e-5)


@settings(max_examples=25, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 6), min_size=1, max_size=3),
    extra=st.integers(1, 5),
    seed=st.integers(0, 1000),
    fused=st.booleans(),
)
def test_adding_padding_never_changes_outputs_at_real_positions(lengths, extra, seed, fused):
    mha = _mha(seed)
    gen = torch.Generator().manual_seed(seed)
    B, T = len(lengths), max(lengths)
    x = torch.randn(B, T, D, generator=gen)
    garbage = 50 * torch.randn(B, extra, D, generator=gen)  # what sits in the padding is irrelevant
    x_long = torch.cat([x, garbage], dim=1)  # (B, T + extra, D)
    lengths_t = torch.tensor(lengths)
    real = padding_mask(lengths_t, max_len=T)  # (B, T)
    with torch.no_grad():
        # encoder self-attention
        out, _ = mha(x, x, x, mask=real[:, None, None, :], fused=fused)
        long_mask = padding_mask(lengths_t, max_len=T + extra)[:, None, None, :]
        out_long, _ = mha(x_long, x_long, x_long, mask=long_mask, fused=fused)
        torch.testing.assert_close(out[real], out_long[:, :T][real], atol=1e-5, rtol=1e-5)
        # cross-attention: decoder queries against a padded source
        queries = torch.randn(B, 3, D, generator=gen)
        cross, _ = mha(queries, x, x, mask=real[:, None, None, :], fused=fused)
        cross_long, _ = mha(queries, x_long, x_long, mask=long_mask, fused=fused)
        torch.testing.assert_close(cross, cross_long, atol=1e-5, rtol=1e-5)


@settings(max_examples=25, deadline=None)
@given(
    T=st.integers(1, 7),
    left_pad=st.integers(0, 7),
    seed=st.integers(0, 1000),
    fused=st.booleans(),
)
def test_fully_masked_rows_never_produce_nan(T, left_pad, seed, fused):
    """Left padding + causal mask leaves the first queries nothing to see; an empty sentence too."""
    mha = _mha(seed).train()  # gradients and the training path
    gen = torch.Generator().manual_seed(seed)
    n_pad = min(left_pad, T)
    tokens = torch.randint(1, 50, (2, T), generator=gen)
    tokens[0, :n_pad] = PAD  # left padding
    tokens[1] = PAD  # an empty sentence
    mask = decoder_self_mask(tokens, PAD)
    assert not mask[1].any()
    x = torch.randn(2, T, D, generator=gen, requires_grad=True)
    out, _ = mha(x, x, x, mask=mask, fused=fused)
    out.pow(2).sum().backward()
    assert torch.isfinite(out).all()
    assert torch.isfinite(x.grad).all()
    assert all(torch.isfinite(p.grad).all() for p in mha.parameters())
    # A query with no visible key gathers nothing: its output is the output projection's bias.
    empty_rows = ~mask.any(-1)[:, 0]  # (2, T)
    bias = mha.out_proj.bias.detach().expand(int(empty_rows.sum()), D)
    torch.testing.assert_close(out.detach()[empty_rows], bias)


def test_our_mask_equals_nn_multiheadattention_with_the_inverted_mask():
    torch.manual_seed(0)
    ours = MultiHeadAttention(D, H).eval()
    theirs = to_torch_multihead(ours).eval()
    tgt = torch.tensor([[5, 6, 7, PAD, PAD], [5, 6, 7, 8, 9]])
    src = torch.tensor([[1, 2, PAD], [3, 4, 5]])
    x, memory = torch.randn(2, 5, D), torch.randn(2, 3, D)
    with torch.no_grad():
        out, _ = ours(x, x, x, mask=decoder_self_mask(tgt, PAD))
        ref, _ = theirs(x, x, x, attn_mask=~causal_mask(5), key_padding_mask=tgt == PAD)
        torch.testing.assert_close(out, ref, atol=1e-6, rtol=1e-5)
        cross, _ = ours(x, memory, memory, mask=key_padding_mask(src, PAD))
        cross_ref, _ = theirs(x, memory, memory, key_padding_mask=src == PAD)
        torch.testing.assert_close(cross, cross_ref, atol=1e-6, rtol=1e-5)


def test_causal_mask_matches_the_additive_upper_triangular_form():
    torch.manual_seed(0)
    scores = torch.randn(2, 3, 6, 6)
    additive = torch.triu(torch.full((6, 6), float("-inf")), diagonal=1)
    torch.testing.assert_close(
        masked_softmax(scores, causal_mask(6)), torch.softmax(scores + additive, dim=-1)
    )
