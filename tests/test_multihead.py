"""Tests of transformer_tutorial.multihead (chapter 9): MultiHeadAttention against
torch.nn.MultiheadAttention (values, per-head weights, gradients, masks), the fused path against
the explicit one, permutation equivariance, masked rows, the project_kv/attend split, errors."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_tutorial.multihead import MultiHeadAttention
from transformer_tutorial.reference import to_torch_multihead


def _pair(d_model: int, num_heads: int, bias: bool = True, seed: int = 0):
    """Our module and nn.MultiheadAttention with the same weights."""
    torch.manual_seed(seed)
    ours = MultiHeadAttention(d_model, num_heads, bias=bias).double()
    ref = to_torch_multihead(ours)
    return ours, ref


def _compare(ours, ref, q, k, v, mask, ref_kwargs, atol=1e-10):
    """Forward and backward through both modules; compare outputs, weights and gradients."""
    inputs = [t.clone().requires_grad_(True) for t in (q, k, v)]
    ref_inputs = [t.clone().requires_grad_(True) for t in (q, k, v)]
    out, weights = ours(*inputs, mask=mask, need_weights=True)
    ref_out, ref_weights = ref(
        *ref_inputs, need_weights=True, average_attn_weights=False, **ref_kwargs
    )
    torch.testing.assert_close(out, ref_out, atol=atol, rtol=0)
    torch.testing.assert_close(weights, ref_weights, atol=atol, rtol=0)
    # A loss that weighs every output element differently, so that gradients are not symmetric.
    w = torch.linspace(-1, 1, out.numel(), dtype=out.dtype).view_as(out)
    (out * w).sum().backward()
    (ref_out * w).sum().backward()
    for a, b in zip(inputs, ref_inputs, strict=True):
        torch.testing.assert_close(a.grad, b.grad, atol=atol, rtol=0)
    ours_grads = {
        "q": ours.q_proj.weight.grad,
        "k": ours.k_proj.weight.grad,
        "v": ours.v_proj.weight.grad,
    }
    D = ours.d_model
    ref_in = ref.in_proj_weight.grad
    torch.testing.assert_close(ours_grads["q"], ref_in[:D], atol=atol, rtol=0)
    torch.testing.assert_close(ours_grads["k"], ref_in[D : 2 * D], atol=atol, rtol=0)
    torch.testing.assert_close(ours_grads["v"], ref_in[2 * D :], atol=atol, rtol=0)
    torch.testing.assert_close(
        ours.out_proj.weight.grad, ref.out_proj.weight.grad, atol=atol, rtol=0
    )
    if ours.q_proj.bias is not None:
        ref_in_b = ref.in_proj_bias.grad
        ours_b = torch.cat([ours.q_proj.bias.grad, ours.k_proj.bias.grad, ours.v_proj.bias.grad])
        torch.testing.assert_close(ours_b, ref_in_b, atol=atol, rtol=0)
        torch.testing.assert_close(
            ours.out_proj.bias.grad, ref.out_proj.bias.grad, atol=atol, rtol=0
        )


def test_shapes_and_parameter_count():
    mha = MultiHeadAttention(d_model=512, num_heads=8)
    assert mha.head_dim == 64
    D = 512
    assert sum(p.numel() for p in mha.parameters()) == 4 * (D * D + D)
    assert sum(p.numel() for p in MultiHeadAttention(512, 8, bias=False).parameters()) == 4 * D * D
    x = torch.randn(2, 7, 512)
    mem = torch.randn(2, 3, 512)
    out, weights = mha(x, mem, mem, need_weights=True)
    assert out.shape == (2, 7, 512)
    assert weights.shape == (2, 8, 7, 3)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 8, 7))
    out2, none = mha(x, mem, mem)
    assert none is None
    torch.testing.assert_close(out, out2)


def test_split_and_merge_heads_are_inverse_and_contiguous_slices():
    mha = MultiHeadAttention(d_model=12, num_heads=3)
    x = torch.randn(2, 5, 12)
    heads = mha.split_heads(x)
    assert heads.shape == (2, 3, 5, 4)
    # head h holds features h*Dh .. (h+1)*Dh - 1
    torch.testing.assert_close(heads[:, 1], x[..., 4:8])
    torch.testing.assert_close(mha.merge_heads(heads), x)


def test_equals_torch_multihead_attention_self_attention_no_mask():
    ours, ref = _pair(16, 4)
    x = torch.randn(3, 6, 16, dtype=torch.double)
    _compare(ours, ref, x, x, x, None, {})


def test_equals_torch_multihead_attention_without_bias_cross_attention():
    ours, ref = _pair(12, 3, bias=False, seed=1)
    q = torch.randn(2, 4, 12, dtype=torch.double)
    kv = torch.randn(2, 7, 12, dtype=torch.double)
    _compare(ours, ref, q, kv, kv, None, {})


def test_equals_torch_multihead_attention_with_key_padding_and_causal_masks():
    B, T, D, H = 3, 6, 16, 4
    ours, ref = _pair(D, H, seed=2)
    x = torch.randn(B, T, D, dtype=torch.double)
    lengths = torch.tensor([6, 4, 1])
    real = torch.arange(T)[None, :] < lengths[:, None]  # (B, T), True = real token
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))  # (T, T), True = may attend
    mask = real[:, None, None, :] & causal  # (B, 1, T, T), our polarity
    # nn.MultiheadAttention: True = NOT allowed, so both masks are negated.
    _compare(ours, ref, x, x, x, mask, {"key_padding_mask": ~real, "attn_mask": ~causal})


def test_equals_torch_with_key_padding_only_cross_attention():
    B, S, T, D, H = 2, 5, 3, 8, 2
    ours, ref = _pair(D, H, seed=3)
    q = torch.randn(B, T, D, dtype=torch.double)
    mem = torch.randn(B, S, D, dtype=torch.double)
    real = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)
    _compare(ours, ref, q, mem, mem, real[:, None, None, :], {"key_padding_mask": ~real})


@settings(max_examples=12, deadline=None)
@given(
    B=st.integers(1, 3),
    T=st.integers(1, 7),
    H=st.sampled_from([1, 2, 4]),
    head_dim=st.integers(1, 4),
    causal=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_equals_torch_property(B, T, H, head_dim, causal, seed):
    D = H * head_dim
    ours, ref = _pair(D, H, seed=seed)
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, T, D, generator=g, dtype=torch.double)
    lengths = torch.randint(1, T + 1, (B,), generator=g)
    real = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    mask = real[:, None, None, :]  # (B, 1, 1, T)
    kwargs = {"key_padding_mask": ~real}
    if causal:
        tril = torch.tril(torch.ones(T, T, dtype=torch.bool))
        mask = mask & tril
        kwargs["attn_mask"] = ~tril
    _compare(ours, ref, x, x, x, mask, kwargs)


def test_fused_equals_explicit_values_and_gradients():
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4).double()
    x = torch.randn(2, 5, 16, dtype=torch.double, requires_grad=True)
    real = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)
    mask = real[:, None, None, :] & torch.tril(torch.ones(5, 5, dtype=torch.bool))
    explicit, _ = mha(x, x, x, mask=mask)
    (g_explicit,) = torch.autograd.grad(explicit.sum(), x)
    fused, weights = mha(x, x, x, mask=mask, fused=True)
    (g_fused,) = torch.autograd.grad(fused.sum(), x)
    assert weights is None
    torch.testing.assert_close(fused, explicit)
    torch.testing.assert_close(g_fused, g_explicit)
    # need_weights with fused=True falls back to the explicit path and returns weights
    out, w = mha(x, x, x, mask=mask, need_weights=True, fused=True)
    torch.testing.assert_close(out, explicit)
    assert w.shape == (2, 4, 5, 5)


@settings(max_examples=15, deadline=None)
@given(
    T=st.integers(2, 8),
    H=st.sampled_from([1, 2, 4]),
    data=st.data(),
)
def test_permutation_equivariance_without_positions(T, H, data):
    """Permuting the input tokens permutes the output of self-attention the same way."""
    seed = data.draw(st.integers(0, 10_000))
    perm = torch.tensor(data.draw(st.permutations(list(range(T)))))
    torch.manual_seed(seed)
    mha = MultiHeadAttention(4 * H, H).double()
    x = torch.randn(2, T, 4 * H, dtype=torch.double)
    out, w = mha(x, x, x, need_weights=True)
    xp = x[:, perm]
    out_p, w_p = mha(xp, xp, xp, need_weights=True)
    torch.testing.assert_close(out_p, out[:, perm])
    torch.testing.assert_close(w_p, w[:, :, perm][:, :, :, perm])


@pytest.mark.parametrize("fused", [False, True])
def test_fully_masked_rows_give_zero_attention_and_no_nan(fused):
    torch.manual_seed(0)
    mha = MultiHeadAttention(8, 2)
    x = torch.randn(2, 4, 8, requires_grad=True)
    mask = torch.ones(2, 1, 4, 4, dtype=torch.bool)
    mask[0, :, 2] = False  # query 2 of sequence 0 sees no key
    out, _ = mha(x, x, x, mask=mask, fused=fused)
    assert not torch.isnan(out).any()
    # With no visible key the head outputs are zero, so only out_proj's bias is left.
    torch.testing.assert_close(out[0, 2], mha.out_proj.bias.expand(8))
    out.sum().backward()
    assert not torch.isnan(x.grad).any()
    assert all(not torch.isnan(p.grad).any() for p in mha.parameters())


def test_project_kv_then_attend_equals_forward_and_supports_a_growing_cache():
    torch.manual_seed(0)
    mha = MultiHeadAttention(12, 3)
    q = torch.randn(2, 3, 12)
    mem = torch.randn(2, 5, 12)
    k, v = mha.project_kv(mem, mem)
    assert k.shape == v.shape == (2, 3, 5, 4)
    mask = torch.tensor([1, 1, 1, 1, 0], dtype=torch.bool)[None, None, None, :]
    a, wa = mha.attend(q, k, v, mask=mask, need_weights=True)
    b, wb = mha(q, mem, mem, mask=mask, need_weights=True)
    torch.testing.assert_close(a, b)
    torch.testing.assert_close(wa, wb)
    # A cache built one step at a time gives the same keys as projecting all at once.
    parts = [mha.project_kv(mem[:, i : i + 1], mem[:, i : i + 1]) for i in range(5)]
    k_cat = torch.cat([p[0] for p in parts], dim=2)
    v_cat = torch.cat([p[1] for p in parts], dim=2)
    torch.testing.assert_close(k_cat, k)
    torch.testing.assert_close(v_cat, v)


def test_dropout_only_in_training():
    torch.manual_seed(0)
    mha = MultiHeadAttention(8, 2, dropout=0.5)
    x = torch.randn(1, 6, 8)
    mha.eval()
    a, _ = mha(x, x, x)
    b, _ = mha(x, x, x)
    torch.testing.assert_close(a, b)
    mha.train()
    c, _ = mha(x, x, x)
    d, _ = mha(x, x, x)
    assert not torch.allclose(c, d)


@pytest.mark.parametrize("d_model,num_heads", [(10, 3), (8, 0), (6, 4)])
def test_error_when_heads_do_not_divide_d_model(d_model, num_heads):
    with pytest.raises(ValueError, match="multiple of num_heads"):
        MultiHeadAttention(d_model, num_heads)


def test_errors_on_wrong_input_ranks_and_sizes():
    mha = MultiHeadAttention(8, 2)
    x = torch.randn(2, 5, 8)
    with pytest.raises(ValueError, match=r"query must have shape \(B, T, d_model=8\)"):
        mha(torch.randn(5, 8), x, x)
    with pytest.raises(ValueError, match="key must have shape"):
        mha(x, torch.randn(2, 5, 4), x)
    with pytest.raises(ValueError, match="value must have shape"):
        mha(x, x, torch.randn(1, 2, 5, 8))
    with pytest.raises(ValueError, match="same batch size and length"):
        mha(x, x, torch.randn(2, 4, 8))
    k, v = mha.project_kv(x, x)
    with pytest.raises(ValueError, match="make them with project_kv"):
        mha.attend(x, k[:, 0], v[:, 0])
    with pytest.raises(ValueError, match="make them with project_kv"):
        mha.attend(x, x, x)


def test_non_boolean_mask_is_rejected():
    mha = MultiHeadAttention(8, 2)
    x = torch.randn(2, 5, 8)
    with pytest.raises(ValueError, match="boolean"):
        mha(x, x, x, mask=torch.ones(2, 1, 1, 5))
