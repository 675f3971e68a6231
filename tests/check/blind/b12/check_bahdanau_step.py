"""Blind set B12, check_bahdanau_step (chapter 7): one step of the attention decoder."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.attention import masked_softmax
from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _finish(decoder, prev, state, context):
    """Given c_t (B, 1, D): the recurrent step and the logits, as the book does."""
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state


def _scores(decoder, query: Tensor, memory: Tensor) -> Tensor:
    att = decoder.attention
    return att.w_v(torch.tanh(att.W_q(query) + att.W_k(memory))).squeeze(-1)  # (B, S)


# ---------------------------------------------------------------- mistakes


def bd_luong_order(decoder, prev, state, memory, src_mask):
    y = decoder.embedding(prev).unsqueeze(1)
    zeros = torch.zeros_like(memory[:, :1])
    output, state = decoder.rnn(torch.cat([y, zeros], dim=-1), state)  # step first
    context, weights = decoder.attention(output, memory, memory, mask=src_mask.unsqueeze(1))
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bd_no_mask(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def bd_state_into_rnn(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, new_state = decoder.rnn(torch.cat([y, query], dim=-1), state)  # [y; s'_{t-1}]
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), new_state, weights.squeeze(1)


def bd_softmax_over_batch(decoder, prev, state, memory, src_mask):
    scores = _scores(decoder, last_hidden(state).unsqueeze(1), memory)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    weights = torch.nan_to_num(scores.softmax(dim=0))  # (B, S)
    context = (weights.unsqueeze(-1) * memory).sum(1, keepdim=True)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights


def bd_softmax_size_one(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    scores = _scores(decoder, query, memory).unsqueeze(1)  # (B, 1, S)
    scores = scores.masked_fill(~src_mask.unsqueeze(1), float("-inf"))
    weights = torch.nan_to_num(scores.softmax(dim=1))  # over the query axis
    context = weights @ memory
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def bd_logits_without_context(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, query], dim=-1))  # [s'_t; s'_{t-1}]
    return logits.squeeze(1), state, weights.squeeze(1)


def bd_mask_inverted(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    pad = (~src_mask).unsqueeze(1)  # True at padding, as nn.MultiheadAttention
    context, weights = decoder.attention(query, memory, memory, mask=pad)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def bd_encoder_query(decoder, prev, state, memory, src_mask):
    query = memory[:, -1:]  # the encoder's last state asks the question
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def bd_weights_not_squeezed(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights  # (B, 1, S)


def bd_returns_output(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), output, weights.squeeze(1)  # the output is the new state


# ---------------------------------------------------------------- correct variants


def bd_manual_scores(decoder, prev, state, memory, src_mask):
    scores = _scores(decoder, last_hidden(state).unsqueeze(1), memory)  # (B, S)
    weights = masked_softmax(scores, src_mask)
    context = torch.bmm(weights.unsqueeze(1), memory)  # (B, 1, D)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights


def bd_projected_keys(decoder, prev, state, memory, src_mask, keys=None):
    att = decoder.attention
    keys = att.project_keys(memory) if keys is None else keys
    query = state[-1][:, None, :]
    context, weights = att(query, memory, memory, mask=src_mask[:, None, :], projected_keys=keys)
    y = decoder.embedding(prev)[:, None, :]
    rnn_in = torch.cat((y, context), dim=2)
    output, new_state = decoder.rnn(rnn_in, state)
    logits = decoder.out(torch.cat((output, context), dim=2))[:, 0]
    return logits, new_state, weights[:, 0]


def bd_einsum_where(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    s = last_hidden(state)  # (B, D)
    e = torch.tanh(att.W_q(s)[:, None] + att.W_k(memory))  # (B, S, A)
    scores = torch.einsum("bsa,a->bs", e, att.w_v.weight[0])
    scores = torch.where(src_mask, scores, torch.full_like(scores, float("-inf")))
    weights = torch.softmax(scores, dim=-1)
    context = torch.einsum("bs,bsd->bd", weights, memory).unsqueeze(1)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights


CASES = [
    BlindCase(
        CHECK,
        "luong_order",
        bd_luong_order,
        "mistake",
        "I ran the recurrent step first (with a zero context) and used the new state "
        "s'_t as the query.",
    ),
    BlindCase(
        CHECK, "no_mask", bd_no_mask, "mistake", "I called the attention without the source mask."
    ),
    BlindCase(
        CHECK,
        "state_instead_of_context",
        bd_state_into_rnn,
        "mistake",
        "I fed [y; s'_{t-1}] into the recurrent layer instead of [y; c_t].",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        bd_softmax_over_batch,
        "mistake",
        "I wrote the scores by hand and took the softmax over dim=0, the batch.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_size_one",
        bd_softmax_size_one,
        "mistake",
        "My scores were (B, 1, S) and I took the softmax over dim=1, so every weight is 1.",
    ),
    BlindCase(
        CHECK,
        "logits_without_context",
        bd_logits_without_context,
        "mistake",
        "I built the logits from [s'_t; s'_{t-1}] instead of [s'_t; c_t].",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        bd_mask_inverted,
        "mistake",
        "I passed ~src_mask to the attention, True at the padding.",
    ),
    BlindCase(
        CHECK,
        "encoder_state_as_query",
        bd_encoder_query,
        "mistake",
        "I used the encoder's last state memory[:, -1] as the query.",
    ),
    BlindCase(
        CHECK,
        "weights_not_squeezed",
        bd_weights_not_squeezed,
        "mistake",
        "I returned the weights as (B, 1, S) instead of (B, S).",
    ),
    BlindCase(
        CHECK,
        "returns_output_as_state",
        bd_returns_output,
        "mistake",
        "I returned the GRU's output (B, 1, D) as the new state instead of (1, B, D).",
    ),
    BlindCase(
        CHECK,
        "manual_scores_bmm",
        bd_manual_scores,
        "correct",
        "Scores from W_q, W_k and w_v by hand, the book's masked_softmax, bmm for c_t.",
    ),
    BlindCase(
        CHECK,
        "projected_keys_option",
        bd_projected_keys,
        "correct",
        "decoder.attention with projected keys; an optional keys argument; indexing "
        "with None and [:, 0] instead of unsqueeze and squeeze.",
    ),
    BlindCase(
        CHECK,
        "einsum_where",
        bd_einsum_where,
        "correct",
        "einsum for scores and context, torch.where for the mask (every source has a real token).",
    ),
]
