"""Tests of transformer_tutorial.feedforward (chapter 11)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from transformer_tutorial.feedforward import PositionwiseFeedForward


def _grads(module: nn.Module) -> list[torch.Tensor]:
    return [p.grad.clone() for p in module.parameters()]


def test_equals_pytorch_sequential_values_and_gradients():
    torch.manual_seed(0)
    ffn = PositionwiseFeedForward(6, 10)
    ref = nn.Sequential(nn.Linear(6, 10), nn.ReLU(), nn.Linear(10, 6))
    ref[0].load_state_dict(ffn.linear1.state_dict())
    ref[2].load_state_dict(ffn.linear2.state_dict())
    x = torch.randn(3, 5, 6, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_(True)
    out, out_ref = ffn(x), ref(x_ref)
    torch.testing.assert_close(out, out_ref)
    weight = torch.randn_like(out)
    (out * weight).sum().backward()
    (out_ref * weight).sum().backward()
    torch.testing.assert_close(x.grad, x_ref.grad)
    for g, g_ref in zip(_grads(ffn), _grads(ref), strict=True):
        torch.testing.assert_close(g, g_ref)


def test_equals_the_feed_forward_block_of_nn_transformer_encoder_layer():
    torch.manual_seed(1)
    layer = nn.TransformerEncoderLayer(
        8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True
    )
    ffn = PositionwiseFeedForward(8, 16)
    ffn.linear1.load_state_dict(layer.linear1.state_dict())
    ffn.linear2.load_state_dict(layer.linear2.state_dict())
    x = torch.randn(2, 4, 8)
    expected = layer.linear2(layer.dropout(layer.activation(layer.linear1(x))))
    torch.testing.assert_close(ffn(x), expected)


def test_equals_a_kernel_size_one_convolution():
    torch.manual_seed(2)
    ffn = PositionwiseFeedForward(6, 12)
    conv1 = nn.Conv1d(6, 12, kernel_size=1)
    conv2 = nn.Conv1d(12, 6, kernel_size=1)
    with torch.no_grad():
        conv1.weight.copy_(ffn.linear1.weight.unsqueeze(-1))
        conv1.bias.copy_(ffn.linear1.bias)
        conv2.weight.copy_(ffn.linear2.weight.unsqueeze(-1))
        conv2.bias.copy_(ffn.linear2.bias)
    x = torch.randn(2, 7, 6)  # (B, T, D)
    conv_out = conv2(torch.relu(conv1(x.transpose(1, 2)))).transpose(1, 2)  # channels = D
    torch.testing.assert_close(ffn(x), conv_out, atol=1e-6, rtol=1e-5)


@settings(max_examples=25, deadline=None)
@given(T=st.integers(1, 8), seed=st.integers(0, 10_000))
def test_position_wise_each_position_alone_and_permutation_equivariant(T, seed):
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    ffn = PositionwiseFeedForward(4, 8)
    x = torch.randn(2, T, 4, generator=gen)
    out = ffn(x)
    for t in range(T):  # one position at a time gives the same vector
        torch.testing.assert_close(out[:, t], ffn(x[:, t]))
    perm = torch.randperm(T, generator=gen)
    torch.testing.assert_close(ffn(x[:, perm]), out[:, perm])


def test_dropout_only_in_training():
    torch.manual_seed(3)
    ffn = PositionwiseFeedForward(4, 64, dropout=0.5)
    x = torch.randn(2, 3, 4)
    ffn.eval()
    torch.testing.assert_close(ffn(x), ffn(x))
    ffn.train()
    assert not torch.allclose(ffn(x), ffn(x))


def test_wrong_width_raises():
    with pytest.raises(ValueError, match="d_model=4"):
        PositionwiseFeedForward(4, 8)(torch.zeros(2, 3, 5))
