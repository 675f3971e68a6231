"""Mistakes in the masked softmax, scaled dot-product, multi-head and additive attention
(chapters 6 and 9)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from transformer_tutorial import check
from transformer_tutorial.attention import AdditiveAttention, attention, masked_softmax
from transformer_tutorial.multihead import MultiHeadAttention

from . import Correct, Mistake

# --- masked softmax ---------------------------------------------------------------------------


def softmax_by_hand(scores, mask):
    """Correct, written differently: subtract the row maximum, exponentiate, zero, divide."""
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.expand_as(scores)
    shifted = scores - scores.masked_fill(~mask, -1e300).amax(-1, keepdim=True).clamp_min(-1e300)
    e = torch.where(mask, shifted.clamp_max(0).exp(), torch.zeros_like(scores))
    total = e.sum(-1, keepdim=True)
    return torch.where(total > 0, e / total.clamp_min(1e-300), torch.zeros_like(e))


def softmax_in_float32(scores, mask):
    """Right to float32's precision, but float32 for float64 scores: the dtype is lowered."""
    return masked_softmax(scores.float(), mask)


def softmax_wrong_axis(scores, mask):
    if mask is None:
        return masked_softmax(scores.transpose(-1, -2), None).transpose(-1, -2)
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-2).nan_to_num()


def softmax_nan_rows(scores, mask):
    return torch.softmax(scores if mask is None else scores.masked_fill(~mask, -math.inf), -1)


def softmax_flipped(scores, mask):
    return masked_softmax(scores, None if mask is None else ~mask)


def softmax_ignores_mask(scores, mask):
    return torch.softmax(scores, dim=-1)


def softmax_minus_1e9(scores, mask):
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    return torch.softmax(scores, dim=-1)


def softmax_then_zero(scores, mask):
    weights = torch.softmax(scores, dim=-1)
    return weights if mask is None else weights * mask


def softmax_averaged(scores, mask):
    """The right masked softmax, then divided by the number of keys each query sees."""
    weights = masked_softmax(scores, mask)
    seen = torch.ones_like(scores) if mask is None else mask.expand_as(scores).to(scores)
    return weights / seen.sum(-1, keepdim=True).clamp_min(1)


def softmax_times_mask(scores, mask):
    return torch.softmax(scores if mask is None else scores * mask, dim=-1)


def softmax_nan_to_num(scores, mask):
    if mask is not None:
        scores = scores.masked_fill(~mask, -math.inf)
    return torch.softmax(scores, dim=-1).nan_to_num(0.0)


# --- scaled dot-product attention ------------------------------------------------------------


def attention_by_hand(q, k, v, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", q, k) / k.shape[-1] ** 0.5
    weights = softmax_by_hand(scores, mask)
    return torch.einsum("...qk,...kd->...qd", weights, v), weights


def attention_sdpa(q, k, v, mask=None):
    """Correct: PyTorch's fused kernel for out, the weights computed beside it."""
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    weights = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return out, weights


def attention_in_float32(q, k, v, mask=None):
    return attention(q.float(), k.float(), v.float(), mask)


def attention_unscaled(q, k, v, mask=None):
    return attention(q, k, v, mask=mask, scale=1.0)


def attention_sqrt_dv(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])
    weights = masked_softmax(scores, mask)
    return weights @ v, weights


def attention_by_dk(q, k, v, mask=None):
    weights = masked_softmax(q @ k.transpose(-2, -1) / k.shape[-1], mask)
    return weights @ v, weights


def attention_scales_weights(q, k, v, mask=None):
    weights = masked_softmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def attention_wrong_axis(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, -math.inf)
    weights = torch.softmax(scores, dim=-2).nan_to_num()
    return weights @ v, weights


def attention_flipped(q, k, v, mask=None):
    return attention(q, k, v, mask=None if mask is None else ~mask)


def attention_out_without_v(q, k, v, mask=None):
    out, weights = attention(q, k, v, mask=mask)
    return out * 2, weights


def attention_minus_1e9(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    weights = scores.softmax(-1)
    return weights @ v, weights


def attention_unguarded(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    weights = F.softmax(scores, dim=-1)
    return weights @ v, weights


def attention_returns_weights_first(q, k, v, mask=None):
    out, weights = attention(q, k, v, mask)
    return weights, out


def attention_k_times_q(q, k, v, mask=None):
    weights = torch.softmax(k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return weights.transpose(-2, -1) @ v, weights


def attention_nan_to_num(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, -math.inf)
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights


def attention_detached_weights(q, k, v, mask=None):
    out, weights = attention(q, k, v, mask)
    return weights.detach() @ v, weights


def softmax_additive_nan_to_num(scores, mask):
    """Right values: an additive mask (0 or -inf), NaN rows zeroed after the softmax; but the
    NaN of a fully masked row flows back through the addition into the gradient."""
    if mask is not None:
        scores = scores + torch.zeros_like(scores).masked_fill(~mask, -math.inf)
    return torch.softmax(scores, dim=-1).nan_to_num(0.0)


def softmax_detached(scores, mask):
    return masked_softmax(scores, mask).detach()


def attention_without_mask(q, k, v, mask=None):
    return attention(q, k, v)


def attention_weights_before_mask(q, k, v, mask=None):
    """The output is masked; the weights returned (kept for plotting) are not."""
    return attention(q, k, v, mask)[0], attention(q, k, v)[1]


# --- multi-head attention ---------------------------------------------------------------------


class HeadsReversed(MultiHeadAttention):
    def merge_heads(self, x):
        return super().merge_heads(x.flip(1))


class SplitDhFirst(MultiHeadAttention):
    def split_heads(self, x):
        B, T, D = x.shape
        return x.view(B, T, self.head_dim, self.num_heads).permute(0, 3, 1, 2)

    def merge_heads(self, x):
        B, H, T, Dh = x.shape
        return x.permute(0, 2, 3, 1).reshape(B, T, H * Dh)


class SplitWithoutTranspose(MultiHeadAttention):
    def split_heads(self, x):
        B, T, D = x.shape
        return x.reshape(B, self.num_heads, T, self.head_dim)  # (B, H, T, Dh), positions mixed


class MergeWithoutTranspose(MultiHeadAttention):
    def merge_heads(self, x):
        B, H, T, Dh = x.shape
        return x.reshape(B, T, H * Dh)


class MergeByView(MultiHeadAttention):
    def merge_heads(self, x):
        B, H, T, Dh = x.shape
        return x.transpose(1, 2).view(B, T, H * Dh)


class ScaledBySqrtD(MultiHeadAttention):
    def attend(self, query, k, v, mask=None, need_weights=False, fused=False):
        q = self.split_heads(self.q_proj(query)) * (self.head_dim / self.d_model) ** 0.5
        out, weights = attention(q, k, v, mask)
        return self.out_proj(self.merge_heads(out)), weights


class MultiHeadUnscaled(MultiHeadAttention):
    def attend(self, query, k, v, mask=None, need_weights=False, fused=False):
        q = self.split_heads(self.q_proj(query))
        out, weights = attention(q, k, v, mask, scale=1.0)
        return self.out_proj(self.merge_heads(out)), weights


class MaskFlipped(MultiHeadAttention):
    def forward(self, query, key, value, mask=None, **kwargs):
        return super().forward(query, key, value, mask=None if mask is None else ~mask)


class MaskIgnored(MultiHeadAttention):
    def forward(self, query, key, value, mask=None, **kwargs):
        return super().forward(query, key, value)


class MultiHeadMinus1e9(MultiHeadAttention):
    def attend(self, query, k, v, mask=None, need_weights=False, fused=False):
        q = self.split_heads(self.q_proj(query))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        out = scores.softmax(-1) @ v
        return self.out_proj(self.merge_heads(out)), None


class MultiHeadNoOutProj(MultiHeadAttention):
    def attend(self, query, k, v, mask=None, need_weights=False, fused=False):
        out, _ = attention(self.split_heads(self.q_proj(query)), k, v, mask)
        return self.merge_heads(out), None


class ValuesThroughKProj(MultiHeadAttention):
    def project_kv(self, key, value):
        return self.split_heads(self.k_proj(key)), self.split_heads(self.k_proj(value))


class MultiHeadByLoop(nn.Module):
    """Correct, written differently: one head at a time, then concatenate."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.dh = num_heads, d_model // num_heads
        self.q_proj, self.k_proj = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.v_proj, self.out_proj = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        heads = []
        for h in range(self.h):
            cols = slice(h * self.dh, (h + 1) * self.dh)
            m = None if mask is None else mask[:, 0]  # (B, T_q or 1, T_k)
            heads.append(attention(q[..., cols], k[..., cols], v[..., cols], mask=m)[0])
        return self.out_proj(torch.cat(heads, dim=-1))


class MultiHeadEinsum(nn.Module):
    """Correct, written differently: einsum over named axes, PyTorch's fused kernel."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.q_proj, self.k_proj = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.v_proj, self.out_proj = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        B, T, D = query.shape
        q = self.q_proj(query).unflatten(-1, (self.h, -1))  # (B, T, H, Dh)
        k = self.k_proj(key).unflatten(-1, (self.h, -1))
        v = self.v_proj(value).unflatten(-1, (self.h, -1))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(q.shape[-1])
        weights = masked_softmax(scores, mask)
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v)
        return self.out_proj(out.reshape(B, T, D)), weights


class MultiHeadSDPA(MultiHeadAttention):
    """Correct: the book's module on PyTorch's fused kernel."""

    def forward(self, query, key, value, mask=None):
        k, v = self.project_kv(key, value)
        q = self.split_heads(self.q_proj(query))
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.out_proj(self.merge_heads(out))


# --- additive attention ---------------------------------------------------------------------------


def additive_with(score):
    class Additive(AdditiveAttention):
        def forward(self, queries, keys, values, mask=None, projected_keys=None):
            pre = self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)
            weights = score(self, pre, mask)
            return weights @ values, weights

    return Additive


def right_additive(m, pre, mask):
    return masked_softmax(m.w_v(torch.tanh(pre)).squeeze(-1), mask)


class AdditiveByLoop(nn.Module):
    """Correct, written differently: one query at a time."""

    def __init__(self, query_dim, key_dim, hidden_dim):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, queries, keys, values, mask=None):
        rows = []
        for t in range(queries.shape[1]):
            feats = torch.tanh(self.W_q(queries[:, t : t + 1]) + self.W_k(keys))  # (B, T_k, h)
            rows.append(self.w_v(feats).squeeze(-1))  # (B, T_k)
        weights = masked_softmax(torch.stack(rows, dim=1), mask)  # (B, T_q, T_k)
        return torch.bmm(weights, values), weights


def additive_out_from_keys(m, pre, mask):
    return right_additive(m, pre, mask)


class AdditiveOutFromKeys(AdditiveAttention):
    def forward(self, queries, keys, values, mask=None, projected_keys=None):
        _, weights = super().forward(queries, keys, values, mask)
        return weights @ keys, weights


class AdditiveWeightsFirst(AdditiveAttention):
    def forward(self, queries, keys, values, mask=None, projected_keys=None):
        out, weights = super().forward(queries, keys, values, mask)
        return weights, out


class AdditiveWeightsBeforeMask(AdditiveAttention):
    def forward(self, queries, keys, values, mask=None, projected_keys=None):
        out, _ = super().forward(queries, keys, values, mask)
        return out, super().forward(queries, keys, values)[1]  # the weights before the mask


def _flip(mask):
    return None if mask is None else ~mask


def _fill(pre_scores, mask, value):
    return pre_scores if mask is None else pre_scores.masked_fill(~mask, value)


def softmax_without_max(scores, mask):
    """exp of the raw scores: fine for small ones, inf / inf = NaN for large ones."""
    e = scores.exp() if mask is None else scores.exp() * mask
    return e / (e.sum(-1, keepdim=True) + 1e-300)


A, MHA, ADD, SOFT = (
    check.check_attention,
    check.check_multihead,
    check.check_additive_attention,
    check.check_masked_softmax,
)

MISTAKES = [
    Mistake(SOFT, "softmax-overflow", softmax_without_max, "exp(score) overflows to inf"),
    Mistake(SOFT, "softmax-wrong-axis", softmax_wrong_axis, "the softmax ran over the wrong axis"),
    Mistake(SOFT, "softmax-nan-rows", softmax_nan_rows, "your weights contain NaN"),
    Mistake(SOFT, "softmax-flipped", softmax_flipped, "mask polarity"),
    Mistake(SOFT, "softmax-ignores-mask", softmax_ignores_mask, "the mask is not used"),
    Mistake(SOFT, "softmax-minus-1e9", softmax_minus_1e9, "(-1e9) instead of -inf"),
    Mistake(SOFT, "softmax-then-zero", softmax_then_zero, "zero the masked weights after"),
    Mistake(SOFT, "softmax-divided-by-keys", softmax_averaged, "divided by that number once more"),
    Mistake(SOFT, "softmax-times-mask", softmax_times_mask, "multiplying the scores by the mask"),
    Mistake(A, "attention-unscaled", attention_unscaled, "without the division by sqrt(d_k)"),
    Mistake(A, "attention-sqrt-dv", attention_sqrt_dv, "by sqrt(d_v)"),
    Mistake(
        A,
        "attention-sqrt-tk",
        lambda q, k, v, mask=None: attention(q, k, v, mask, scale=k.shape[-2] ** -0.5),
        "the number of keys",
    ),
    Mistake(A, "attention-by-dk", attention_by_dk, "not once by its square root"),
    Mistake(A, "attention-scales-weights", attention_scales_weights, "after the softmax"),
    Mistake(
        A,
        "attention-wrong-axis",
        attention_wrong_axis,
        "the softmax ran over the wrong axis",
        mistake="softmax-wrong-axis",
    ),
    Mistake(A, "attention-flipped", attention_flipped, "mask polarity", mistake="softmax-flipped"),
    Mistake(A, "attention-out-without-v", attention_out_without_v, "out = weights @ v"),
    Mistake(
        A,
        "attention-one-result",
        lambda q, k, v, mask=None: attention(q, k, v, mask)[0],
        "return a pair",
    ),  # fmt: skip
    Mistake(
        A,
        "attention-minus-1e9",
        attention_minus_1e9,
        "attends to them all uniformly",
        mistake="softmax-minus-1e9",
    ),
    Mistake(
        A,
        "attention-unguarded",
        attention_unguarded,
        "your weights contain NaN",
        mistake="softmax-nan-rows",
    ),
    Mistake(
        A,
        "attention-weights-first",
        attention_returns_weights_first,
        "(weights, out)",
        mistake="pair-reversed",
    ),
    Mistake(A, "attention-k-times-q", attention_k_times_q, "not k @ q^T"),
    Mistake(
        A,
        "attention-no-mask",
        attention_without_mask,
        "the mask is not used",
        mistake="softmax-ignores-mask",
    ),
    Mistake(
        A,
        "attention-weights-unmasked",
        attention_weights_before_mask,
        "the weights you return are the softmax before the mask",
        mistake="self-attn-weights-unmasked",
    ),
    Mistake(
        A,
        "attention-detached-weights",
        attention_detached_weights,
        "no gradient reaches q",
        mistake="gradient-detached",
    ),  # fmt: skip
    Mistake(SOFT, "softmax-detached", softmax_detached, "no gradient reaches the scores"),
    Mistake(SOFT, "softmax-nan-gradient", softmax_additive_nan_to_num, "the gradient has NaN"),
    Mistake(A, "attention-not-a-function", MultiHeadAttention, "expects a function"),
    Mistake(
        A,
        "attention-no-mask-argument",
        lambda q, k, v: attention(q, k, v),
        "unexpected keyword argument 'mask'",
    ),  # fmt: skip
    Mistake(MHA, "multihead-heads-reversed", HeadsReversed, "concatenated in the wrong order"),
    Mistake(MHA, "multihead-split-dh-first", SplitDhFirst, "(Dh, H) instead of (H, Dh)"),
    Mistake(
        MHA, "multihead-split-no-transpose", SplitWithoutTranspose, "straight as (B, H, T, Dh)"
    ),  # fmt: skip
    Mistake(
        MHA, "multihead-merge-no-transpose", MergeWithoutTranspose, "straight to (B, T, D)"
    ),  # fmt: skip
    Mistake(MHA, "multihead-merge-by-view", MergeByView, "use .reshape"),
    Mistake(MHA, "multihead-sqrt-d", ScaledBySqrtD, "sqrt(D), not sqrt(Dh)"),
    Mistake(
        MHA, "multihead-unscaled", MultiHeadUnscaled, "forgot to divide the scores by sqrt(Dh)"
    ),
    Mistake(MHA, "multihead-mask-flipped", MaskFlipped, "mask polarity"),
    Mistake(MHA, "multihead-mask-ignored", MaskIgnored, "the mask is not used"),
    Mistake(
        MHA,
        "multihead-minus-1e9",
        MultiHeadMinus1e9,
        "attends to them all uniformly",
        mistake="softmax-minus-1e9",
    ),
    Mistake(MHA, "multihead-no-out-proj", MultiHeadNoOutProj, "out_proj is not applied"),
    Mistake(MHA, "multihead-v-through-k-proj", ValuesThroughKProj, "values go through k_proj"),
    Mistake(MHA, "multihead-instance", MultiHeadAttention(16, 4), "pass `MultiHeadAttention`"),
    Mistake(
        ADD,
        "additive-no-tanh",
        additive_with(lambda m, pre, mask: masked_softmax(m.w_v(pre).squeeze(-1), mask)),
        "no tanh between",
    ),  # fmt: skip
    Mistake(
        ADD,
        "additive-tanh-after-w_v",
        additive_with(
            lambda m, pre, mask: masked_softmax(torch.tanh(m.w_v(pre)).squeeze(-1), mask)
        ),
        "the tanh comes after w_v",
    ),  # fmt: skip
    Mistake(
        ADD,
        "additive-relu",
        additive_with(lambda m, pre, mask: masked_softmax(m.w_v(pre.relu()).squeeze(-1), mask)),
        "squashes with ReLU",
    ),  # fmt: skip
    Mistake(
        ADD,
        "additive-no-w_v",
        additive_with(lambda m, pre, mask: masked_softmax(pre.tanh().sum(-1), mask)),
        "w_v is not used",
    ),  # fmt: skip
    Mistake(
        ADD,
        "additive-mask-flipped",
        additive_with(lambda m, pre, mask: right_additive(m, pre, _flip(mask))),
        "mask polarity",
        mistake="softmax-flipped",
    ),  # fmt: skip
    Mistake(
        ADD,
        "additive-wrong-axis",
        additive_with(
            lambda m, pre, mask: torch.softmax(m.w_v(torch.tanh(pre)).squeeze(-1), dim=-2)
        ),
        "wrong axis",
        mistake="softmax-wrong-axis",
    ),  # fmt: skip
    Mistake(
        ADD,
        "additive-minus-1e9",
        additive_with(
            lambda m, pre, mask: torch.softmax(
                _fill(m.w_v(torch.tanh(pre)).squeeze(-1), mask, -1e9), dim=-1
            )
        ),
        "attends to them all uniformly",
        mistake="softmax-minus-1e9",
    ),  # fmt: skip
    Mistake(
        ADD,
        "additive-unguarded",
        additive_with(
            lambda m, pre, mask: torch.softmax(
                _fill(m.w_v(torch.tanh(pre)).squeeze(-1), mask, -math.inf), dim=-1
            )
        ),
        "your weights contain NaN",
        mistake="softmax-nan-rows",
    ),  # fmt: skip
    Mistake(ADD, "additive-out-from-keys", AdditiveOutFromKeys, "out has the keys' size"),
    Mistake(
        ADD,
        "additive-weights-first",
        AdditiveWeightsFirst,
        "you return (weights, out)",
        mistake="pair-reversed",
    ),
    Mistake(
        ADD,
        "additive-weights-unmasked",
        AdditiveWeightsBeforeMask,
        "the weights you return are the softmax before the mask",
        mistake="self-attn-weights-unmasked",
    ),
]

MISTAKES += [  # correct until B31: since then a result keeps its inputs' float dtype
    Mistake(SOFT, "softmax-float32", softmax_in_float32, "has dtype float32",
            mistake="dtype-lowered"),
    Mistake(A, "attention-float32", attention_in_float32, "has dtype float32",
            mistake="dtype-lowered"),
]  # fmt: skip

CORRECT = [
    Correct(SOFT, "softmax-package", masked_softmax),
    Correct(SOFT, "softmax-by-hand", softmax_by_hand),
    Correct(A, "attention-package", attention),
    Correct(A, "attention-einsum", attention_by_hand),
    Correct(A, "attention-sdpa", attention_sdpa),
    Correct(MHA, "multihead-package", MultiHeadAttention),
    Correct(MHA, "multihead-loop", MultiHeadByLoop),
    Correct(MHA, "multihead-einsum", MultiHeadEinsum),
    Correct(MHA, "multihead-sdpa", MultiHeadSDPA),
    Correct(ADD, "additive-package", AdditiveAttention),
    Correct(ADD, "additive-by-hand", additive_with(right_additive)),
    Correct(ADD, "additive-loop", AdditiveByLoop),
]
