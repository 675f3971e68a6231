"""Tests of transformer_tutorial.masks (chapter 12)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from transformer_tutorial.masks import causal_mask, decoder_self_mask, key_padding_mask

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
