"""Tests of transformer_tutorial.positional (chapter 10)."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_tutorial.multihead import MultiHeadAttention
from transformer_tutorial.positional import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    sinusoidal_encoding,
)


def test_sinusoidal_matches_the_paper_formula_elementwise():
    max_len, d = 50, 16
    pe = sinusoidal_encoding(max_len, d)
    assert pe.shape == (max_len, d) and pe.dtype == torch.float32
    for i in (0, 1, 7, 49):
        for j in range(d // 2):
            angle = i / 10000 ** (2 * j / d)
            assert pe[i, 2 * j].item() == pytest.approx(math.sin(angle), abs=1e-6)
            assert pe[i, 2 * j + 1].item() == pytest.approx(math.cos(angle), abs=1e-6)


def test_sinusoidal_pairs_lie_on_the_unit_circle():
    pe = sinusoidal_encoding(200, 32)
    radius = pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2
    torch.testing.assert_close(radius, torch.ones_like(radius))


@settings(max_examples=30, deadline=None)
@given(i=st.integers(0, 400), k=st.integers(-100, 100), half=st.integers(1, 16))
def test_shift_by_k_is_a_rotation_independent_of_position(i, k, half):
    """PE[i + k] = R(k) PE[i] with R(k) block-diagonal 2x2 rotations by angle k * w_j."""
    d = 2 * half
    if i + k < 0:
        k = -i
    pe = sinusoidal_encoding(600, d).double()
    w = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (D/2,)
    c, s = torch.cos(k * w), torch.sin(k * w)
    sin_i, cos_i = pe[i, 0::2], pe[i, 1::2]
    # sin(a + b) = sin a cos b + cos a sin b ; cos(a + b) = cos a cos b - sin a sin b
    rotated = torch.empty(d, dtype=torch.float64)
    rotated[0::2] = c * sin_i + s * cos_i
    rotated[1::2] = -s * sin_i + c * cos_i
    torch.testing.assert_close(rotated, pe[i + k], atol=1e-5, rtol=0)


def test_dot_product_depends_only_on_offset():
    pe = sinusoidal_encoding(300, 64).double()
    for k in (0, 1, 5, 40):
        dots = (pe[: 300 - k] * pe[k:]).sum(-1)  # PE_i . PE_{i+k} for every i
        torch.testing.assert_close(dots, torch.full_like(dots, dots[0].item()), atol=1e-4, rtol=0)
    assert (pe[0] @ pe[0]).item() == pytest.approx(32.0)


def test_sinusoidal_module_adds_rows_with_offset():
    module = SinusoidalPositionalEncoding(8, max_len=20)
    x = torch.randn(2, 5, 8)
    torch.testing.assert_close(module(x), x + sinusoidal_encoding(20, 8)[:5])
    torch.testing.assert_close(module(x, offset=3), x + sinusoidal_encoding(20, 8)[3:8])
    # Step-by-step decoding: adding one row at a time equals adding the block.
    steps = torch.cat([module(x[:, t : t + 1], offset=t) for t in range(5)], dim=1)
    torch.testing.assert_close(steps, module(x))


def test_sinusoidal_module_has_no_parameters_and_no_checkpoint_state():
    module = SinusoidalPositionalEncoding(8, max_len=20)
    assert list(module.parameters()) == []
    assert "pe" not in module.state_dict()
    assert (
        module.to(torch.float64)(torch.zeros(1, 2, 8, dtype=torch.float64)).dtype == torch.float64
    )


def test_learned_module_adds_embedding_rows():
    torch.manual_seed(0)
    module = LearnedPositionalEmbedding(10, 4)
    x = torch.randn(3, 6, 4)
    torch.testing.assert_close(module(x), x + module.embedding.weight[:6])
    torch.testing.assert_close(module(x[:, :2], offset=4), x[:, :2] + module.embedding.weight[4:6])
    out = module(x).sum()
    out.backward()
    assert module.embedding.weight.grad[:6].abs().sum() > 0
    assert module.embedding.weight.grad[6:].abs().sum() == 0  # positions 6..9 unused


@pytest.mark.parametrize(
    "make",
    [
        lambda: SinusoidalPositionalEncoding(4, max_len=128),
        lambda: LearnedPositionalEmbedding(128, 4),
    ],
    ids=["sinusoidal", "learned"],
)
def test_the_128_vs_129_question_raises_a_clear_error(make):
    module = make()
    module(torch.zeros(1, 128, 4))  # 128 positions fit
    with pytest.raises(ValueError, match="max_len=128"):
        module(torch.zeros(1, 129, 4))
    with pytest.raises(ValueError, match="max_len=128"):
        module(torch.zeros(1, 1, 4), offset=128)
    with pytest.raises(ValueError, match=r"\(B, T, 4\)"):
        module(torch.zeros(1, 3, 5))
    with pytest.raises(ValueError, match="offset"):
        module(torch.zeros(1, 3, 4), offset=-1)


def test_sinusoidal_formula_extends_to_any_length():
    # The formula has no table size: a longer table agrees with a shorter one on shared rows.
    torch.testing.assert_close(sinusoidal_encoding(129, 8)[:128], sinusoidal_encoding(128, 8))
    assert SinusoidalPositionalEncoding(4, max_len=129)(torch.zeros(1, 129, 4)).shape == (1, 129, 4)


def test_sinusoidal_rejects_odd_width():
    with pytest.raises(ValueError, match="even"):
        sinusoidal_encoding(10, 5)


# --- Self-attention without positions is permutation-equivariant; positions break the tie ----------


@settings(max_examples=20, deadline=None)
@given(T=st.integers(2, 8), seed=st.integers(0, 1000))
def test_self_attention_without_positions_is_permutation_equivariant(T, seed):
    torch.manual_seed(seed)
    mha = MultiHeadAttention(8, 2).eval()
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(2, T, 8, generator=gen)
    perm = torch.randperm(T, generator=gen)
    with torch.no_grad():
        out, _ = mha(x, x, x)
        out_perm, _ = mha(x[:, perm], x[:, perm], x[:, perm])
    torch.testing.assert_close(out_perm, out[:, perm], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize(
    "positions",
    [lambda: SinusoidalPositionalEncoding(8, 16), lambda: LearnedPositionalEmbedding(16, 8)],
    ids=["sinusoidal", "learned"],
)
def test_positions_tell_two_identical_tokens_apart(positions):
    """'A can can store food': without positions both 'can's get the same output; with them, not."""
    torch.manual_seed(0)
    embed, mha, pos = torch.nn.Embedding(5, 8), MultiHeadAttention(8, 2).eval(), positions()
    if isinstance(pos, LearnedPositionalEmbedding):
        torch.nn.init.normal_(pos.embedding.weight)  # a trained table is not near zero
    tokens = torch.tensor([[0, 1, 1, 2, 3]])
    with torch.no_grad():
        x = embed(tokens)
        plain, _ = mha(x, x, x)
        xp = pos(x)
        placed, _ = mha(xp, xp, xp)
    torch.testing.assert_close(plain[0, 1], plain[0, 2])
    assert (placed[0, 1] - placed[0, 2]).abs().max() > 1e-3
