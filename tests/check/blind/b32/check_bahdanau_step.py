"""Blind set B32, check_bahdanau_step (chapter 7): one step of the Bahdanau decoder."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.attention import masked_softmax
from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _attend(decoder, query: Tensor, memory: Tensor, src_mask: Tensor | None):
    """Right additive attention of one query (B, D) over memory: context (B, D), weights (B, S)."""
    mask = None if src_mask is None else src_mask.unsqueeze(1)
    context, weights = decoder.attention(query.unsqueeze(1), memory, memory, mask=mask)
    return context.squeeze(1), weights.squeeze(1)


def _rest(decoder, prev: Tensor, state, context: Tensor):
    y = decoder.embedding(prev)  # (B, E)
    output, state = decoder.rnn(torch.cat([y, context], -1).unsqueeze(1), state)
    logits = decoder.out(torch.cat([output.squeeze(1), context], -1))
    return logits, state


# ---------------------------------------------------------------- mistakes


def bd_luong_order(decoder, prev, state, memory, src_mask):
    y = decoder.embedding(prev).unsqueeze(1)
    zeros = memory.new_zeros(memory.shape[0], 1, memory.shape[-1])
    output, state = decoder.rnn(torch.cat([y, zeros], -1), state)  # step first, no context yet
    context, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    logits = decoder.out(torch.cat([output.squeeze(1), context], -1))
    return logits, state, weights


def bd_mask_inverted(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state), memory, ~src_mask)  # True = pad
    logits, state = _rest(decoder, prev, state, context)
    return logits, state, weights


def bd_no_mask(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state), memory, None)
    logits, state = _rest(decoder, prev, state, context)
    return logits, state, weights


def bd_rnn_input_swapped(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    y = decoder.embedding(prev)
    output, state = decoder.rnn(torch.cat([context, y], -1).unsqueeze(1), state)  # [c; y]
    logits = decoder.out(torch.cat([output.squeeze(1), context], -1))
    return logits, state, weights


def bd_out_input_swapped(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    y = decoder.embedding(prev)
    output, state = decoder.rnn(torch.cat([y, context], -1).unsqueeze(1), state)
    logits = decoder.out(torch.cat([context, output.squeeze(1)], -1))  # [c; s'] not [s'; c]
    return logits, state, weights


def bd_logits_with_old_state(decoder, prev, state, memory, src_mask):
    query = last_hidden(state)
    context, weights = _attend(decoder, query, memory, src_mask)
    y = decoder.embedding(prev)
    _, state = decoder.rnn(torch.cat([y, context], -1).unsqueeze(1), state)
    logits = decoder.out(torch.cat([query, context], -1))  # s'_{t-1} instead of s'_t
    return logits, state, weights


def bd_query_last_encoder_state(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, memory[:, -1], memory, src_mask)  # the source's end
    logits, state = _rest(decoder, prev, state, context)
    return logits, state, weights


def bd_context_from_projected_keys(decoder, prev, state, memory, src_mask):
    keys = decoder.attention.W_k(memory)  # (B, S, A)
    _, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    context = torch.bmm(weights.unsqueeze(1), keys).squeeze(1)  # mixed W_k s_i, not s_i
    logits, state = _rest(decoder, prev, state, context)
    return logits, state, weights


def bd_weights_unsqueezed(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    logits, state = _rest(decoder, prev, state, context.squeeze(1))
    return logits, state, weights  # (B, 1, S), as attention returns it


def bd_state_squeezed(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    logits, state = _rest(decoder, prev, state, context)
    return logits, last_hidden(state), weights  # (B, D) is easier to handle


def bd_returns_weights_second(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    logits, state = _rest(decoder, prev, state, context)
    return logits, weights, state


def bd_rnn_from_zeros(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    y = decoder.embedding(prev)
    output, state = decoder.rnn(torch.cat([y, context], -1).unsqueeze(1))  # forgot the state
    logits = decoder.out(torch.cat([output.squeeze(1), context], -1))
    return logits, state, weights


def bd_softmax_over_batch(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).squeeze(-1)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=0))  # dim=0 by habit
    context = (weights.unsqueeze(-1) * memory).sum(1)
    logits, state = _rest(decoder, prev, state, context)
    return logits, state, weights


def bd_context_sum_over_sources_unweighted(decoder, prev, state, memory, src_mask):
    _, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    context = (memory * src_mask.unsqueeze(-1)).sum(1) / src_mask.sum(1, keepdim=True)  # mean
    logits, state = _rest(decoder, prev, state, context)
    return logits, state, weights


# ---------------------------------------------------------------- correct variants


def bd_explicit_score(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    s_prev = last_hidden(state)  # (B, D)
    hidden = torch.tanh(att.W_q(s_prev)[:, None, :] + att.W_k(memory))  # (B, S, A)
    scores = att.w_v(hidden)[..., 0]  # (B, S)
    weights = masked_softmax(scores, src_mask)  # (B, S)
    context = torch.einsum("bs,bsd->bd", weights, memory)
    y = decoder.embedding(prev)
    output, new_state = decoder.rnn(torch.cat([y, context], dim=1)[:, None], state)
    logits = decoder.out(torch.cat([output[:, 0], context], dim=1))
    return logits, new_state, weights


def bd_projected_keys(decoder, prev, state, memory, src_mask, keys=None):
    if keys is None:
        keys = decoder.attention.project_keys(memory)
    query = last_hidden(state)[:, None]  # (B, 1, D)
    context, weights = decoder.attention(
        query, memory, memory, mask=src_mask[:, None, :], projected_keys=keys
    )
    y = decoder.embedding(prev[:, None])  # (B, 1, E)
    output, state = decoder.rnn(torch.cat((y, context), -1), state)
    logits = decoder.out(torch.cat((output, context), -1))
    return logits[:, 0], state, weights[:, 0]


def bd_manual_softmax(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).squeeze(2)  # (B, S)
    scores = scores.masked_fill(src_mask.logical_not(), float("-inf"))
    weights = torch.softmax(scores, dim=1)  # every source has a real token
    context = torch.bmm(weights.unsqueeze(1), memory)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=2), state)
    logits = decoder.out(torch.cat([output, context], dim=2)).squeeze(1)
    return logits, state, weights


CASES = [
    BlindCase(
        CHECK,
        "luong_order",
        bd_luong_order,
        "mistake",
        "I ran the RNN first (with a zero context) and attended with the new state s'_t.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        bd_mask_inverted,
        "mistake",
        "I passed ~src_mask, thinking True marks the padding.",
    ),
    BlindCase(
        CHECK, "no_mask", bd_no_mask, "mistake", "I forgot to pass the source mask to attention."
    ),
    BlindCase(
        CHECK,
        "rnn_input_context_first",
        bd_rnn_input_swapped,
        "mistake",
        "I fed the RNN [c_t; y_{t-1}] instead of [y_{t-1}; c_t].",
    ),
    BlindCase(
        CHECK,
        "out_input_context_first",
        bd_out_input_swapped,
        "mistake",
        "I computed the logits from [c_t; s'_t] instead of [s'_t; c_t].",
    ),
    BlindCase(
        CHECK,
        "logits_from_old_state",
        bd_logits_with_old_state,
        "mistake",
        "I computed the logits from the previous state s'_{t-1} (the query) and c_t, not s'_t.",
    ),
    BlindCase(
        CHECK,
        "query_last_encoder_state",
        bd_query_last_encoder_state,
        "mistake",
        "I used the last encoder state memory[:, -1] as the query (padding for short sources).",
    ),
    BlindCase(
        CHECK,
        "context_from_projected_keys",
        bd_context_from_projected_keys,
        "mistake",
        "I mixed the projected keys W_k s_i into the context instead of the states s_i.",
    ),
    BlindCase(
        CHECK,
        "weights_not_squeezed",
        bd_weights_unsqueezed,
        "mistake",
        "I returned the weights as attention gives them, (B, 1, S), not (B, S).",
    ),
    BlindCase(
        CHECK,
        "state_squeezed",
        bd_state_squeezed,
        "mistake",
        "I returned the new state as (B, D) instead of (1, B, D).",
    ),
    BlindCase(
        CHECK,
        "returns_weights_second",
        bd_returns_weights_second,
        "mistake",
        "I returned (logits, weights, state) instead of (logits, state, weights).",
    ),
    BlindCase(
        CHECK,
        "rnn_without_state",
        bd_rnn_from_zeros,
        "mistake",
        "I called decoder.rnn without the previous state, so every step starts from zeros.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        bd_softmax_over_batch,
        "mistake",
        "I wrote the score myself and took the softmax over dim=0, the batch.",
    ),
    BlindCase(
        CHECK,
        "context_plain_mean",
        bd_context_sum_over_sources_unweighted,
        "mistake",
        "I computed the weights but used the plain mean of the real encoder states as c_t.",
    ),
    BlindCase(
        CHECK,
        "explicit_score_einsum",
        bd_explicit_score,
        "correct",
        "The score written with W_q, W_k and w_v, masked_softmax on (B, S), einsum for c_t.",
    ),
    BlindCase(
        CHECK,
        "projected_keys_argument",
        bd_projected_keys,
        "correct",
        "decoder.attention with projected_keys (an optional keys argument), shapes kept (B, 1, .) "
        "until the end.",
    ),
    BlindCase(
        CHECK,
        "manual_softmax_bmm",
        bd_manual_softmax,
        "correct",
        "masked_fill with -inf and a plain softmax over the source axis (no source is empty), "
        "bmm for c_t.",
    ),
]
