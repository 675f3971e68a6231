"""Blind set B33, check_bahdanau_step (chapter 7): one step of the attention decoder as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _attend(decoder, query: Tensor, memory: Tensor, src_mask: Tensor) -> tuple[Tensor, Tensor]:
    """decoder.attention with s'_{t-1} as the query: context (B, 1, D), weights (B, 1, S)."""
    return decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))


def _finish(decoder, prev: Tensor, state, context: Tensor) -> tuple[Tensor, object, Tensor]:
    """The right recurrent step and logits, given a context (B, 1, D)."""
    y = decoder.embedding(prev).unsqueeze(1)  # (B, 1, E)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)  # (B, 1, D)
    logits = decoder.out(torch.cat([output, context], dim=-1)).squeeze(1)  # (B, V)
    return logits, state, output


# ---------------------------------------------------------------- mistakes


def step_luong_order(decoder, prev, state, memory, src_mask):
    y = decoder.embedding(prev).unsqueeze(1)  # (B, 1, E)
    no_context = torch.zeros_like(memory[:, :1])  # (B, 1, D): c_t is not known yet
    output, state = decoder.rnn(torch.cat([y, no_context], dim=-1), state)
    context, weights = _attend(decoder, output, memory, src_mask)  # the new state asks
    logits = decoder.out(torch.cat([output, context], dim=-1)).squeeze(1)
    return logits, state, weights.squeeze(1)


def step_no_mask(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory)  # padding is zeros anyway
    logits, state, _ = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def step_state_instead_of_context(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)  # (B, 1, D)
    context, weights = _attend(decoder, query, memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, new_state = decoder.rnn(torch.cat([y, query], dim=-1), state)  # [y; s'_{t-1}]
    logits = decoder.out(torch.cat([output, context], dim=-1)).squeeze(1)
    return logits, new_state, weights.squeeze(1)


def step_softmax_over_batch(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    query = last_hidden(state)  # (B, D)
    scores = att.w_v(torch.tanh(att.W_q(query).unsqueeze(1) + att.W_k(memory))).squeeze(-1)
    scores = scores.masked_fill(~src_mask, float("-inf"))  # (B, S)
    weights = torch.softmax(scores, dim=0)
    context = (weights.unsqueeze(-1) * memory).sum(dim=1, keepdim=True)  # (B, 1, D)
    logits, state, _ = _finish(decoder, prev, state, context)
    return logits, state, weights


def step_softmax_size_one_axis(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    query = last_hidden(state).unsqueeze(1)  # (B, 1, D)
    feats = torch.tanh(att.W_q(query) + att.W_k(memory))  # (B, S, A)
    scores = att.w_v(feats)  # (B, S, 1)
    scores = scores.masked_fill(~src_mask.unsqueeze(-1), float("-inf"))
    weights = torch.softmax(scores, dim=-1)  # softmax over the last axis, as always
    context = (weights * memory).sum(dim=1, keepdim=True)  # (B, 1, D)
    logits, state, _ = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(-1)


def step_logits_with_old_state(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = _attend(decoder, query, memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, new_state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, query], dim=-1)).squeeze(1)  # [s'_t; s'_{t-1}]
    return logits, new_state, weights.squeeze(1)


def step_mask_inverted(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = _attend(decoder, query, memory, ~src_mask)  # mask out the padding
    logits, state, _ = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def step_state_as_query(decoder, prev, state, memory, src_mask):
    context, weights = decoder.attention(state, memory, memory, mask=src_mask.unsqueeze(1))
    logits, state, _ = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def step_weights_not_squeezed(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = _attend(decoder, query, memory, src_mask)
    logits, state, _ = _finish(decoder, prev, state, context)
    return logits, state, weights  # (B, 1, S)


def step_returns_output_as_state(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = _attend(decoder, query, memory, src_mask)
    logits, _, output = _finish(decoder, prev, state, context)
    return logits, output, weights.squeeze(1)  # output is s'_t


def step_context_first_in_logits(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = _attend(decoder, query, memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([context, output], dim=-1)).squeeze(1)  # [c_t; s'_t]
    return logits, state, weights.squeeze(1)


def step_score_without_tanh(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    query = last_hidden(state).unsqueeze(1)  # (B, 1, D)
    scores = att.w_v(att.W_q(query) + att.W_k(memory)).squeeze(-1)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    weights = scores.softmax(dim=-1)
    context = torch.bmm(weights.unsqueeze(1), memory)  # (B, 1, D)
    logits, state, _ = _finish(decoder, prev, state, context)
    return logits, state, weights


def step_mask_not_unsqueezed(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask)  # (B, S)
    logits, state, _ = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


# ---------------------------------------------------------------- correct variants


def step_by_hand(decoder, prev, state, memory, src_mask):
    """The score written with W_q, W_k and w_v; -inf on padding; context with bmm."""
    att = decoder.attention
    s_prev = last_hidden(state)  # (B, D)
    e = att.w_v(torch.tanh(att.W_q(s_prev)[:, None, :] + att.W_k(memory))).squeeze(-1)  # (B, S)
    alpha = e.masked_fill(~src_mask, float("-inf")).softmax(dim=-1)  # every source has a token
    c = torch.bmm(alpha.unsqueeze(1), memory)  # (B, 1, D)
    y = decoder.embedding(prev)[:, None]  # (B, 1, E)
    out, new_state = decoder.rnn(torch.cat((y, c), dim=2), state)
    logits = decoder.out(torch.cat((out, c), dim=2))[:, 0]  # (B, V)
    return logits, new_state, alpha


def step_projected_keys(decoder, prev, state, memory, src_mask):
    """decoder.attention with the keys projected first and passed as projected_keys."""
    keys = decoder.attention.project_keys(memory)
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(
        query, memory, memory, mask=src_mask[:, None, :], projected_keys=keys
    )
    y = decoder.embedding(prev.unsqueeze(1))  # (B, 1, E)
    rnn_out, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([rnn_out.squeeze(1), context.squeeze(1)], dim=-1))
    return logits, state, weights[:, 0]


def step_einsum_context(decoder, prev, state, memory, src_mask):
    """Weights from decoder.attention, context rebuilt as an einsum of weights and states."""
    h = state[0] if isinstance(state, tuple) else state  # (1, B, D)
    _, weights = decoder.attention(h[-1].unsqueeze(1), memory, memory, mask=src_mask.unsqueeze(1))
    alpha = weights.squeeze(1)  # (B, S)
    context = torch.einsum("bs,bsd->bd", alpha, memory).unsqueeze(1)  # (B, 1, D)
    logits, state, _ = _finish(decoder, prev, state, context)
    return logits, state, alpha


CASES = [
    BlindCase(
        CHECK,
        "luong_order",
        step_luong_order,
        "mistake",
        "I ran the recurrent layer first (with a zero context) and used the new state as the "
        "query.",
    ),
    BlindCase(
        CHECK,
        "no_mask",
        step_no_mask,
        "mistake",
        "I called decoder.attention without the mask, since the encoder's padded outputs are "
        "zeros.",
    ),
    BlindCase(
        CHECK,
        "state_instead_of_context",
        step_state_instead_of_context,
        "mistake",
        "I fed [y; s'_{t-1}] to the recurrent layer instead of [y; c_t].",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        step_softmax_over_batch,
        "mistake",
        "I wrote the score myself and took the softmax over dim=0 of the (B, S) scores.",
    ),
    BlindCase(
        CHECK,
        "softmax_size_one_axis",
        step_softmax_size_one_axis,
        "mistake",
        "My scores came out as (B, S, 1) and I took the softmax over the last axis as usual.",
    ),
    BlindCase(
        CHECK,
        "logits_with_old_state",
        step_logits_with_old_state,
        "mistake",
        "I computed the logits from [s'_t; s'_{t-1}] instead of [s'_t; c_t].",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        step_mask_inverted,
        "mistake",
        "I passed ~src_mask to mask out the padding.",
    ),
    BlindCase(
        CHECK,
        "state_as_query",
        step_state_as_query,
        "mistake",
        "I passed the (1, B, D) state straight in as the query, without last_hidden and unsqueeze.",
    ),
    BlindCase(
        CHECK,
        "weights_not_squeezed",
        step_weights_not_squeezed,
        "mistake",
        "I returned the weights as they come from the attention, (B, 1, S).",
    ),
    BlindCase(
        CHECK,
        "returns_output_as_state",
        step_returns_output_as_state,
        "mistake",
        "I returned the recurrent layer's output (B, 1, D) as the new state.",
    ),
    BlindCase(
        CHECK,
        "context_first_in_logits",
        step_context_first_in_logits,
        "mistake",
        "I concatenated [c_t; s'_t] for the output layer instead of [s'_t; c_t].",
    ),
    BlindCase(
        CHECK,
        "score_without_tanh",
        step_score_without_tanh,
        "mistake",
        "I wrote the score as w_v(W_q s' + W_k s_i) and forgot the tanh.",
    ),
    BlindCase(
        CHECK,
        "mask_not_unsqueezed",
        step_mask_not_unsqueezed,
        "mistake",
        "I passed src_mask (B, S) as the mask without adding the query axis.",
    ),
    BlindCase(
        CHECK,
        "by_hand",
        step_by_hand,
        "correct",
        "The score written out with W_q, W_k and w_v, -inf on the padding, bmm for the context.",
    ),
    BlindCase(
        CHECK,
        "projected_keys",
        step_projected_keys,
        "correct",
        "project_keys first, passed to decoder.attention as projected_keys; squeezes before "
        "the output layer.",
    ),
    BlindCase(
        CHECK,
        "einsum_context",
        step_einsum_context,
        "correct",
        "Only the weights taken from decoder.attention; the context rebuilt with an einsum.",
    ),
]
