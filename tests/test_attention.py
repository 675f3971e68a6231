"""Tests of transformer_tutorial.attention (chapter 6): masked softmax, scaled dot-product
attention (explicit and fused), additive attention."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_tutorial.attention import (
    AdditiveAttention,
    attention,
    fused_attention,
    masked_softmax,
)

FAST = settings(max_examples=40, deadline=None)


def _inputs(seed: int, B=2, H=3, Tq=4, Tk=5, Dk=8, Dv=6, grad=False):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(B, H, Tq, Dk, generator=g, dtype=torch.float64)
    k = torch.randn(B, H, Tk, Dk, generator=g, dtype=torch.float64)
    v = torch.randn(B, H, Tk, Dv, generator=g, dtype=torch.float64)
    return [t.requires_grad_(grad) for t in (q, k, v)]


def _random_mask(seed: int, shape, p_true=0.6, every_row_visible=False):
    g = torch.Generator().manual_seed(seed)
    mask = torch.rand(shape, generator=g) < p_true
    if every_row_visible:
        # guarantee one visible key per row: key j = seed mod T_k is always visible
        mask[..., seed % shape[-1]] = True
    return mask


# ---------------------------------------------------------------- masked_softmax


def test_masked_softmax_without_mask_is_softmax():
    scores = torch.randn(3, 4, 7)
    assert torch.allclose(masked_softmax(scores), torch.softmax(scores, dim=-1))


def test_masked_softmax_known_values():
    scores = torch.tensor([[1.0, 2.0, 3.0, 4.0]])
    mask = torch.tensor([[True, True, False, False]])
    expected = torch.tensor([[1 / (1 + math.e), math.e / (1 + math.e), 0.0, 0.0]])
    assert torch.allclose(masked_softmax(scores, mask), expected)


@FAST
@given(seed=st.integers(0, 10_000), p_true=st.floats(0.0, 1.0))
def test_masked_softmax_properties(seed, p_true):
    g = torch.Generator().manual_seed(seed)
    scores = (10 * torch.randn(2, 3, 4, 6, generator=g, dtype=torch.float64)).requires_grad_()
    mask = _random_mask(seed, (2, 3, 4, 6), p_true)
    weights = masked_softmax(scores, mask)
    assert torch.isfinite(weights).all()
    assert (weights >= 0).all()
    # masked keys get exactly zero weight (not just small)
    assert (weights[~mask] == 0).all()
    visible = mask.any(-1)
    sums = weights.sum(-1)
    assert torch.allclose(sums[visible], torch.ones_like(sums[visible]))
    assert (sums[~visible] == 0).all()
    # gradients are finite, and zero for masked scores and for fully masked rows
    (weights * torch.randn(weights.shape, generator=g, dtype=torch.float64)).sum().backward()
    assert torch.isfinite(scores.grad).all()
    assert (scores.grad[~mask] == 0).all()


def test_fully_masked_row_gives_zeros_and_zero_gradient():
    scores = torch.randn(2, 3, requires_grad=True)
    mask = torch.tensor([[True, False, True], [False, False, False]])
    weights = masked_softmax(scores, mask)
    assert torch.equal(weights[1], torch.zeros(3))
    weights.pow(2).sum().backward()
    assert torch.isfinite(scores.grad).all()
    assert torch.equal(scores.grad[1], torch.zeros(3))


def test_masked_softmax_broadcasts_padding_and_causal_masks():
    scores = torch.randn(2, 4, 5, 5)  # (B, H, T, T)
    pad = torch.tensor([[True] * 5, [True] * 3 + [False] * 2]).view(2, 1, 1, 5)
    causal = torch.ones(5, 5, dtype=torch.bool).tril()
    w = masked_softmax(scores, pad & causal)
    assert w.shape == scores.shape
    assert (w[1, :, :, 3:] == 0).all()
    assert (w.triu(diagonal=1) == 0).all()


def test_masked_softmax_error_paths():
    scores = torch.randn(2, 4, 5)
    with pytest.raises(ValueError, match="boolean"):
        masked_softmax(scores, torch.ones(2, 4, 5))
    with pytest.raises(ValueError, match="does not broadcast"):
        masked_softmax(scores, torch.ones(3, 1, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match="does not broadcast"):
        # broadcastable the other way round only (would enlarge the scores): refused
        masked_softmax(scores, torch.ones(7, 2, 4, 5, dtype=torch.bool))
    # the padding shape suggested has as many axes as the scores: (B, 1, T_k) for (B, T_q, T_k)
    with pytest.raises(ValueError, match=r"give it shape \(B, 1, T_k\) for padding"):
        masked_softmax(scores, torch.ones(2, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"give it shape \(B, 1, 1, T_k\) for padding"):
        masked_softmax(scores[:, None], torch.ones(2, 4, dtype=torch.bool))


# ---------------------------------------------------------------- attention


def test_attention_matches_the_formula_and_shapes():
    q, k, v = _inputs(0, Dk=8)
    out, weights = attention(q, k, v)
    expected_w = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(8), dim=-1)
    assert weights.shape == (2, 3, 4, 5) and out.shape == (2, 3, 4, 6)
    assert torch.allclose(weights, expected_w)
    assert torch.allclose(out, expected_w @ v)


def test_attention_scale_argument():
    q, k, v = _inputs(1)
    _, w1 = attention(q, k, v, scale=1.0)
    assert torch.allclose(w1, torch.softmax(q @ k.transpose(-1, -2), dim=-1))


def _mask_kinds(seed, B, H, Tq, Tk):
    yield None
    yield _random_mask(seed, (B, 1, 1, Tk), every_row_visible=True)  # padding
    if Tq == Tk:
        yield torch.ones(Tq, Tk, dtype=torch.bool).tril()  # causal
    yield _random_mask(seed + 1, (B, H, Tq, Tk), every_row_visible=True)  # random pattern


@FAST
@given(
    seed=st.integers(0, 10_000),
    Tq=st.integers(1, 6),
    Tk=st.integers(1, 6),
    Dk=st.sampled_from([1, 4, 16]),
)
def test_attention_equals_torch_sdpa_values_and_gradients(seed, Tq, Tk, Dk):
    for mask in _mask_kinds(seed, 2, 3, Tq, Tk):
        q, k, v = _inputs(seed, Tq=Tq, Tk=Tk, Dk=Dk, grad=True)
        q2, k2, v2 = (t.detach().clone().requires_grad_() for t in (q, k, v))
        ours, _ = attention(q, k, v, mask)
        ref = F.scaled_dot_product_attention(q2, k2, v2, attn_mask=mask)
        assert torch.allclose(ours, ref, atol=1e-10)
        grad_out = torch.randn_like(ours)
        ours.backward(grad_out)
        ref.backward(grad_out)
        for a, b in ((q, q2), (k, k2), (v, v2)):
            assert torch.allclose(a.grad, b.grad, atol=1e-10)


def test_attention_equals_torch_sdpa_is_causal():
    q, k, v = _inputs(3, Tq=5, Tk=5)
    ours, _ = attention(q, k, v, torch.ones(5, 5, dtype=torch.bool).tril())
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert torch.allclose(ours, ref, atol=1e-12)


@FAST
@given(seed=st.integers(0, 10_000), p_true=st.floats(0.0, 1.0))
def test_fused_equals_explicit_with_any_mask(seed, p_true):
    """Including rows with no visible key: both give zeros there, with finite gradients."""
    mask = _random_mask(seed, (2, 3, 4, 5), p_true)
    q, k, v = _inputs(seed, grad=True)
    q2, k2, v2 = (t.detach().clone().requires_grad_() for t in (q, k, v))
    ours, _ = attention(q, k, v, mask)
    fused = fused_attention(q2, k2, v2, mask)
    assert torch.allclose(ours, fused, atol=1e-10)
    assert (fused[~mask.any(-1)] == 0).all()
    grad_out = torch.randn_like(ours)
    ours.backward(grad_out)
    fused.backward(grad_out)
    for a, b in ((q, q2), (k, k2), (v, v2)):
        assert torch.isfinite(b.grad).all()
        assert torch.allclose(a.grad, b.grad, atol=1e-10)


@FAST
@given(seed=st.integers(0, 10_000), p_true=st.floats(0.1, 0.9))
def test_values_at_masked_keys_never_change_the_output(seed, p_true):
    q, k, v = _inputs(seed)
    mask = _random_mask(seed, (2, 1, 1, 5), p_true)  # padding-style: same keys hidden per batch
    hidden_keys = ~mask[:, 0, 0, :]  # (B, T_k)
    k2, v2 = k.clone(), v.clone()
    g = torch.Generator().manual_seed(seed + 7)
    k2[hidden_keys.unsqueeze(1).expand(-1, 3, -1)] = 1e3 * torch.randn(
        int(hidden_keys.sum()) * 3, 8, generator=g, dtype=k.dtype
    )
    v2[hidden_keys.unsqueeze(1).expand(-1, 3, -1)] = 1e3 * torch.randn(
        int(hidden_keys.sum()) * 3, 6, generator=g, dtype=v.dtype
    )
    for fn in (lambda *a: attention(*a)[0], fused_attention):
        assert torch.allclose(fn(q, k, v, mask), fn(q, k2, v2, mask), atol=1e-10)


def test_fully_masked_query_gives_zero_output_and_finite_gradients():
    q, k, v = _inputs(4, grad=True)
    mask = torch.ones(4, 5, dtype=torch.bool)
    mask[2] = False  # query 2 sees nothing
    for fn in (lambda *a: attention(*a)[0], fused_attention):
        for t in (q, k, v):
            t.grad = None
        out = fn(q, k, v, mask)
        assert (out[..., 2, :] == 0).all()
        out.sum().backward()
        assert all(torch.isfinite(t.grad).all() for t in (q, k, v))
        assert (q.grad[..., 2, :] == 0).all()


def test_attention_dropout():
    q, k, v = _inputs(5)
    out, weights = attention(q, k, v, dropout_p=1.0)
    assert (out == 0).all()  # every weight dropped
    assert torch.allclose(weights.sum(-1), torch.ones(2, 3, 4, dtype=weights.dtype))
    torch.manual_seed(0)
    out_half, _ = attention(q, k, v, dropout_p=0.5)
    assert not torch.allclose(out_half, attention(q, k, v)[0])


def test_fused_dropout_changes_the_output_only_when_asked():
    q, k, v = _inputs(6)
    torch.manual_seed(0)
    assert torch.allclose(fused_attention(q, k, v), attention(q, k, v)[0])
    assert not torch.allclose(fused_attention(q, k, v, dropout_p=0.5), attention(q, k, v)[0])


def test_attention_error_paths():
    q, k, v = _inputs(7)
    for fn in (attention, fused_attention):
        with pytest.raises(ValueError, match="same last dimension"):
            fn(q, k[..., :3], v)
        with pytest.raises(ValueError, match="every key needs its value"):
            fn(q, k, v[..., :2, :])
        with pytest.raises(ValueError, match="boolean"):
            fn(q, k, v, torch.ones(4, 5))
        with pytest.raises(ValueError, match="does not broadcast"):
            fn(q, k, v, torch.ones(4, 4, dtype=torch.bool))


# ---------------------------------------------------------------- AdditiveAttention


def test_additive_attention_matches_a_loop():
    torch.manual_seed(0)
    attn = AdditiveAttention(query_dim=3, key_dim=4, hidden_dim=5)
    queries, keys, values = torch.randn(2, 3, 3), torch.randn(2, 6, 4), torch.randn(2, 6, 2)
    out, weights = attn(queries, keys, values)
    assert out.shape == (2, 3, 2) and weights.shape == (2, 3, 6)
    scores = torch.empty(2, 3, 6)
    for b in range(2):
        for i in range(3):
            for j in range(6):
                hidden = torch.tanh(attn.W_q.weight @ queries[b, i] + attn.W_k.weight @ keys[b, j])
                scores[b, i, j] = attn.w_v.weight[0] @ hidden
    expected = torch.softmax(scores, dim=-1)
    assert torch.allclose(weights, expected, atol=1e-6)
    assert torch.allclose(out, expected @ values, atol=1e-6)


def test_additive_attention_masking_and_gradients():
    torch.manual_seed(1)
    attn = AdditiveAttention(query_dim=4, key_dim=4, hidden_dim=8)
    queries, keys, values = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 7)
    mask = torch.tensor([[True] * 5, [True, True, False, False, False]]).view(2, 1, 5)
    out, weights = attn(queries, keys, values, mask)
    assert (weights[1, :, 2:] == 0).all()
    assert torch.allclose(weights.sum(-1), torch.ones(2, 3))
    # padded keys cannot influence the result
    values2 = values.clone()
    values2[1, 2:] = 100.0
    keys2 = keys.clone()
    keys2[1, 2:] = -100.0
    out2, _ = attn(queries, keys2, values2, mask)
    assert torch.allclose(out, out2)
    out.sum().backward()
    assert all(torch.isfinite(p.grad).all() and p.grad.abs().sum() > 0 for p in attn.parameters())


def test_additive_attention_errors_and_dropout():
    attn = AdditiveAttention(query_dim=4, key_dim=3, hidden_dim=8, dropout=1.0)
    with pytest.raises(ValueError, match="expects queries"):
        attn(torch.randn(1, 2, 3), torch.randn(1, 5, 3), torch.randn(1, 5, 2))
    with pytest.raises(ValueError, match="every key needs its value"):
        attn(torch.randn(1, 2, 4), torch.randn(1, 5, 3), torch.randn(1, 4, 2))
    queries, keys, values = torch.randn(1, 2, 4), torch.randn(1, 5, 3), torch.randn(1, 5, 2)
    out, _ = attn(queries, keys, values)
    assert (out == 0).all()  # training mode, p = 1: every weight dropped
    attn.eval()
    out, _ = attn(queries, keys, values)
    assert (out != 0).any()


def test_additive_attention_with_precomputed_keys_is_the_same_function():
    torch.manual_seed(2)
    attn = AdditiveAttention(query_dim=4, key_dim=3, hidden_dim=6)
    queries, keys, values = torch.randn(2, 3, 4), torch.randn(2, 5, 3), torch.randn(2, 5, 2)
    mask = torch.tensor([[True] * 5, [True, True, True, False, False]]).view(2, 1, 5)
    projected = attn.project_keys(keys)
    assert projected.shape == (2, 5, 6)
    out, weights = attn(queries, keys, values, mask)
    out2, weights2 = attn(queries, keys, values, mask, projected_keys=projected)
    assert torch.equal(out, out2) and torch.equal(weights, weights2)
    with pytest.raises(ValueError, match="projected_keys"):
        attn(queries, keys, values, projected_keys=projected[..., :5])
