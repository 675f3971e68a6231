"""The translator's cheaper dropout masks: the same distribution as nn.Dropout's."""

import math

import pytest
import torch
from torch import nn

from transformer_tutorial.transformer import Transformer, TransformerConfig
from transformer_tutorial.translator.dropout import (
    PackedDropout,
    packed_keep_mask,
    use_packed_dropout,
)


@pytest.mark.parametrize("p", [0.05, 0.1, 0.3, 0.5])
def test_drop_fraction_and_scale(p):
    torch.manual_seed(0)
    n = 1_000_003  # not a multiple of four: the last 64-bit number is used in part
    mask = packed_keep_mask(torch.ones(n), p)
    p_rounded = round(p * 65536) / 65536
    dropped = (mask == 0).double().mean().item()
    sigma = math.sqrt(p_rounded * (1 - p_rounded) / n)
    assert abs(dropped - p_rounded) < 5 * sigma  # a binomial count, within five sigma
    kept = mask[mask != 0]
    assert torch.all(kept == kept[0]) and kept[0].item() == pytest.approx(1 / (1 - p_rounded))
    assert abs(mask.double().mean().item() - 1) < 5 * sigma / (1 - p_rounded)  # E[out] = x


def test_neighbouring_elements_are_independent():
    # The four quarters of one random number must not be correlated: compare each element's
    # drop with its neighbour's (the same 64-bit number for three neighbours in four).
    torch.manual_seed(1)
    n, p = 2_000_000, 0.3
    dropped = packed_keep_mask(torch.ones(n), p) == 0
    both = (dropped[:-1] & dropped[1:]).double().mean().item()
    p_rounded = round(p * 65536) / 65536
    assert abs(both - p_rounded**2) < 5 * math.sqrt(p_rounded**2 * (1 - p_rounded**2) / n)


def test_forward_backward_like_dropout():
    torch.manual_seed(2)
    x = torch.randn(64, 17, 128, requires_grad=True)
    layer = PackedDropout(0.1).train()
    y = layer(x)
    assert y.shape == x.shape and y.dtype == x.dtype
    scale = 65536 / (65536 - round(0.1 * 65536))
    kept = y != 0
    assert torch.allclose(y[kept], x[kept] * scale)
    y.sum().backward()  # the gradient flows through the kept elements only, scaled the same
    assert torch.allclose(x.grad, kept.float() * scale)


def test_eval_mode_and_zero_p_are_identity():
    x = torch.randn(8, 5, 16)
    assert torch.equal(PackedDropout(0.1).eval()(x), x)
    assert torch.equal(PackedDropout(0.0).train()(x), x)


def test_same_seed_same_mask_other_seed_other_mask():
    x = torch.ones(4096)
    layer = PackedDropout(0.1).train()
    torch.manual_seed(3)
    a = layer(x)
    torch.manual_seed(3)
    b = layer(x)
    torch.manual_seed(4)
    c = layer(x)
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_keeps_low_precision_dtype():
    x = torch.randn(32, 64).to(torch.bfloat16)
    assert PackedDropout(0.2).train()(x).dtype == torch.bfloat16


@pytest.mark.parametrize("p", [-0.1, 1.0, 0.999999])
def test_probability_out_of_range_is_refused(p):
    with pytest.raises(ValueError, match="dropout probability|rounds to 1"):
        packed_keep_mask(torch.ones(8), p)


def test_use_packed_dropout_replaces_every_dropout_module_and_keeps_weights():
    config = TransformerConfig(
        src_vocab_size=50, tgt_vocab_size=50, d_model=16, num_heads=2,
        num_encoder_layers=2, num_decoder_layers=1, d_ff=32, dropout=0.2, max_len=32,
    )  # fmt: skip
    torch.manual_seed(5)
    model = Transformer(config).eval()
    before = [m for m in model.modules() if type(m) is nn.Dropout]
    src, tgt = torch.randint(4, 50, (3, 7)), torch.randint(4, 50, (3, 6))
    expected = model(src, tgt)
    assert use_packed_dropout(model) == len(before) > 0
    assert not any(type(m) is nn.Dropout for m in model.modules())
    assert all(m.p == 0.2 for m in model.modules() if isinstance(m, PackedDropout))
    assert torch.equal(model(src, tgt), expected)  # eval mode: no dropout, same weights
    model.train()
    assert not torch.equal(model(src, tgt), model(src, tgt))  # training: random masks
