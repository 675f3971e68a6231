"""Blind set B7, check_additive_attention (chapter 6): score = w_v^T tanh(W_q q + W_k k)."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_additive_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, so that each mistake below is the only thing wrong."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    """The three bias-free layers under the chapter's names."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)


# ---------------------------------------------------------------- mistakes


class AddReLU(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = torch.relu(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = _masked_softmax(self.w_v(feats).squeeze(-1), mask)
        return weights @ values, weights


class AddWithBiases(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)  # nn.Linear's default bias
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, queries, keys, values, mask=None):
        feats = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = _masked_softmax(self.w_v(feats).squeeze(-1), mask)
        return weights @ values, weights


class AddSwappedUnsqueeze(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(1)  # (B, 1, T_q, h)
        k = self.W_k(keys).unsqueeze(2)  # (B, T_k, 1, h)
        weights = _masked_softmax(self.w_v(torch.tanh(q + k)).squeeze(-1), mask)
        return weights @ values, weights


class AddSoftmaxDimOne(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = self.w_v(feats).squeeze(-1)  # (B, T_q, T_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=1))
        return weights @ values, weights


class AddSqueezeAll(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = self.w_v(feats).squeeze()  # drop the trailing 1
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddScaledLikeDot(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = self.w_v(feats).squeeze(-1) / math.sqrt(self.w_v.in_features)
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddSumInsteadOfWv(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = _masked_softmax(feats.sum(-1), mask)  # one number per pair
        return weights @ values, weights


class AddProjectedValues(_Base):
    def forward(self, queries, keys, values, mask=None):
        k = self.W_k(keys)
        feats = torch.tanh(self.W_q(queries).unsqueeze(2) + k.unsqueeze(1))
        weights = _masked_softmax(self.w_v(feats).squeeze(-1), mask)
        return weights @ k, weights  # the projected keys mixed


class AddMaskIgnored(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = torch.softmax(self.w_v(feats).squeeze(-1), dim=-1)  # mask for later
        return weights @ values, weights


class AddMaskedScoreZero(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = self.w_v(feats).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, 0.0)  # padding contributes nothing
        weights = torch.softmax(scores, dim=-1)
        return weights @ values, weights


class AddTanhOfSum(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = torch.tanh(self.W_q(queries)).unsqueeze(2)
        k = torch.tanh(self.W_k(keys)).unsqueeze(1)
        weights = _masked_softmax(self.w_v(q + k).squeeze(-1), mask)  # tanh of each side
        return weights @ values, weights


class AddSwappedLayers(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = torch.tanh(self.W_k(queries).unsqueeze(2) + self.W_q(keys).unsqueeze(1))
        weights = _masked_softmax(self.w_v(feats).squeeze(-1), mask)
        return weights @ values, weights


# ---------------------------------------------------------------- correct variants


class AddEinsum(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries)[:, :, None, :]  # (B, T_q, 1, h)
        k = self.W_k(keys)[:, None, :, :]  # (B, 1, T_k, h)
        scores = torch.einsum("bqkh,h->bqk", torch.tanh(q + k), self.w_v.weight[0])
        weights = _masked_softmax(scores, mask)
        return torch.einsum("bqk,bkd->bqd", weights, values), weights


class AddLoopOverQueries(_Base):
    def forward(self, queries, keys, values, mask=None):
        k = self.W_k(keys)  # computed once, (B, T_k, h)
        outs, all_weights = [], []
        for t in range(queries.shape[1]):
            q = self.W_q(queries[:, t : t + 1])  # (B, 1, h)
            scores = self.w_v(torch.tanh(q + k)).squeeze(-1)  # (B, T_k)
            m = None if mask is None else mask.expand(scores.shape[0], queries.shape[1], -1)[:, t]
            w = _masked_softmax(scores, m)  # (B, T_k)
            outs.append((w.unsqueeze(-1) * values).sum(1))
            all_weights.append(w)
        return torch.stack(outs, 1), torch.stack(all_weights, 1)


class AddExpandCat(_Base):
    def forward(self, queries, keys, values, mask=None, projected_keys=None):
        """With the chapter's optional projected_keys."""
        B, T_q, _ = queries.shape
        T_k = keys.shape[1]
        k = self.W_k(keys) if projected_keys is None else projected_keys
        q = self.W_q(queries).unsqueeze(2).expand(B, T_q, T_k, -1)
        scores = self.w_v(torch.tanh(q + k.unsqueeze(1).expand(B, T_q, T_k, -1))).squeeze(3)
        if mask is not None:
            visible = mask.expand(B, T_q, T_k)
            empty = ~visible.any(-1, keepdim=True)
            scores = scores.masked_fill(~visible, -math.inf).masked_fill(empty, 0)
            weights = scores.softmax(-1).masked_fill(empty, 0)
        else:
            weights = scores.softmax(-1)
        return torch.bmm(weights, values), weights


class AddFloat64(_Base):
    def forward(self, queries, keys, values, mask=None):
        dtype = queries.dtype
        feats = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        w = self.w_v.weight.double()  # (1, h)
        scores = (feats.double() @ w.T).squeeze(-1)  # (B, T_q, T_k) in float64
        weights = _masked_softmax(scores, mask)
        return (weights @ values.double()).to(dtype), weights.to(dtype)


CASES = [
    BlindCase(
        check=CHECK,
        name="relu_instead_of_tanh",
        code=AddReLU,
        kind="mistake",
        what="I used ReLU instead of tanh on W_q q + W_k k.",
    ),
    BlindCase(
        check=CHECK,
        name="biases_on_wq_wk",
        code=AddWithBiases,
        kind="mistake",
        what="I left nn.Linear's default bias on W_q and W_k (only w_v is bias-free).",
    ),
    BlindCase(
        check=CHECK,
        name="unsqueeze_axes_swapped",
        code=AddSwappedUnsqueeze,
        kind="mistake",
        what="I gave the queries the key axis at the wrong place (W_q q unsqueeze(1), W_k k "
        "unsqueeze(2)), so the scores come out (B, T_k, T_q).",
    ),
    BlindCase(
        check=CHECK,
        name="softmax_over_queries",
        code=AddSoftmaxDimOne,
        kind="mistake",
        what="I took the softmax over dim=1 of the (B, T_q, T_k) scores, the queries, and "
        "cleaned NaNs with nan_to_num.",
    ),
    BlindCase(
        check=CHECK,
        name="squeeze_without_dim",
        code=AddSqueezeAll,
        kind="mistake",
        what="I dropped w_v's trailing axis with .squeeze() without a dim, which also drops "
        "the batch or query axis when B = 1 or T_q = 1.",
    ),
    BlindCase(
        check=CHECK,
        name="scaled_by_sqrt_hidden",
        code=AddScaledLikeDot,
        kind="mistake",
        what="I divided the additive scores by sqrt(hidden_dim), as scaled dot-product "
        "attention does.",
    ),
    BlindCase(
        check=CHECK,
        name="sum_over_hidden_no_wv",
        code=AddSumInsteadOfWv,
        kind="mistake",
        what="I reduced tanh(W_q q + W_k k) to one number by summing over the hidden axis "
        "instead of applying w_v.",
    ),
    BlindCase(
        check=CHECK,
        name="mixes_projected_keys",
        code=AddProjectedValues,
        kind="mistake",
        what="I returned weights @ W_k(keys), the projected keys, instead of weights @ values.",
    ),
    BlindCase(
        check=CHECK,
        name="mask_ignored",
        code=AddMaskIgnored,
        kind="mistake",
        what="I accepted mask but never used it.",
    ),
    BlindCase(
        check=CHECK,
        name="masked_scores_zero",
        code=AddMaskedScoreZero,
        kind="mistake",
        what="I set the masked scores to 0 instead of -inf, thinking a zero score means no weight.",
    ),
    BlindCase(
        check=CHECK,
        name="tanh_on_each_side",
        code=AddTanhOfSum,
        kind="mistake",
        what="I applied tanh to W_q q and to W_k k separately and added afterwards, instead of "
        "tanh of the sum.",
    ),
    BlindCase(
        check=CHECK,
        name="w_q_and_w_k_swapped",
        code=AddSwappedLayers,
        kind="mistake",
        what="I projected the queries with W_k and the keys with W_q.",
    ),
    BlindCase(
        check=CHECK,
        name="einsum_with_wv_vector",
        code=AddEinsum,
        kind="correct",
        what="I reduced the hidden axis with einsum against w_v.weight[0] and mixed the values "
        "with einsum.",
    ),
    BlindCase(
        check=CHECK,
        name="loop_over_queries",
        code=AddLoopOverQueries,
        kind="correct",
        what="I projected the keys once and looped over the queries one at a time, as the "
        "Bahdanau decoder does.",
    ),
    BlindCase(
        check=CHECK,
        name="expand_and_bmm_projected_keys_arg",
        code=AddExpandCat,
        kind="correct",
        what="I expanded both sides to (B, T_q, T_k, h) explicitly, used bmm for the output and "
        "accepted an optional projected_keys like the chapter's module.",
    ),
    BlindCase(
        check=CHECK,
        name="float64_softmax",
        code=AddFloat64,
        kind="correct",
        what="I did the w_v reduction, the softmax and the mixing in float64 and cast back.",
    ),
]
