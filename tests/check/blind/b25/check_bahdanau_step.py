"""Blind set B25, check_bahdanau_step (chapter 7): one step of the attention decoder."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _rest(decoder, prev: Tensor, state, context: Tensor) -> tuple[Tensor, object]:
    """The right recurrent step and logits from a context (B, 1, D)."""
    y = decoder.embedding(prev).unsqueeze(1)  # (B, 1, E)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)  # (B, 1, D)
    logits = decoder.out(torch.cat([output, context], dim=-1))  # (B, 1, V)
    return logits.squeeze(1), state


def _attend(decoder, query: Tensor, memory: Tensor, src_mask: Tensor) -> tuple[Tensor, Tensor]:
    """The right attention of a query (B, D) over memory: context (B, 1, D), weights (B, 1, S)."""
    return decoder.attention(query.unsqueeze(1), memory, memory, mask=src_mask.unsqueeze(1))


# ---------------------------------------------------------------- mistakes


def step_new_state_for_output(decoder, prev, state, memory, src_mask):
    context, _ = _attend(decoder, last_hidden(state), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    context, weights = _attend(decoder, output.squeeze(1), memory, src_mask)  # attend again
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_no_mask(decoder, prev, state, memory, src_mask):
    context, weights = decoder.attention(last_hidden(state).unsqueeze(1), memory, memory)
    logits, state = _rest(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def step_mean_of_memory_into_rnn(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    summary = memory.mean(dim=1, keepdim=True)  # chapter 4's fixed context
    output, state = decoder.rnn(torch.cat([y, summary], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_query_into_rnn(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)  # (B, 1, D)
    context, weights = _attend(decoder, query.squeeze(1), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, query], dim=-1), state)  # [y; s'_{t-1}]
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_softmax_over_batch(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).squeeze(-1)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=0))
    context = (weights.unsqueeze(-1) * memory).sum(dim=1, keepdim=True)  # (B, 1, D)
    logits, state = _rest(decoder, prev, state, context)
    return logits, state, weights


def step_softmax_over_size_one_axis(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory)))  # (B, S, 1)
    scores = scores.masked_fill(~src_mask.unsqueeze(-1), float("-inf"))
    weights = torch.softmax(scores, dim=-1)  # over the last axis, as always
    context = (weights * memory).sum(dim=1, keepdim=True)
    logits, state = _rest(decoder, prev, state, context)
    return logits, state, weights.squeeze(-1)


def step_logits_without_context(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, output], dim=-1))  # out wants 2 D, the state twice
    return logits.squeeze(1), state, weights.squeeze(1)


def step_concat_order_swapped(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([context, output], dim=-1))  # [c_t; s'_t]
    return logits.squeeze(1), state, weights.squeeze(1)


def step_weights_not_squeezed(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    logits, state = _rest(decoder, prev, state, context)
    return logits, state, weights  # (B, 1, S)


def step_mask_inverted(decoder, prev, state, memory, src_mask):
    pad = ~src_mask  # True = padding
    context, weights = _attend(decoder, last_hidden(state), memory, pad)
    logits, state = _rest(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def step_last_encoder_state_as_query(decoder, prev, state, memory, src_mask):
    query = memory[:, -1]  # the encoder's last state asks the question
    context, weights = _attend(decoder, query, memory, src_mask)
    logits, state = _rest(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def step_returns_rnn_output(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), output, weights.squeeze(1)  # the output is the new state


def step_rnn_from_zeros(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1))  # state left out
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_context_from_projected_keys(decoder, prev, state, memory, src_mask):
    keys = decoder.attention.project_keys(memory)  # (B, S, A), computed once
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(
        query, memory, keys, mask=src_mask.unsqueeze(1), projected_keys=keys
    )  # the projected keys also as the values
    logits, state = _rest(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


# ---------------------------------------------------------------- correct variants


def step_score_written_out(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    s_prev = last_hidden(state)  # (B, D)
    scores = att.w_v(torch.tanh(att.W_q(s_prev)[:, None, :] + att.W_k(memory)))[..., 0]  # (B, S)
    weights = torch.softmax(scores.masked_fill(~src_mask, float("-inf")), dim=-1)
    context = torch.einsum("bs,bsd->bd", weights, memory)  # c_t
    y = decoder.embedding(prev)
    output, new_state = decoder.rnn(torch.cat([y, context], dim=-1).unsqueeze(1), state)
    logits = decoder.out(torch.cat([output[:, 0], context], dim=-1))
    return logits, new_state, weights


def step_with_keys_argument(decoder, prev, state, memory, src_mask, keys=None):
    if keys is None:
        keys = decoder.attention.project_keys(memory)
    query = last_hidden(state)[:, None]
    context, weights = decoder.attention(
        query, memory, memory, mask=src_mask[:, None, :], projected_keys=keys
    )
    embedded = decoder.embedding(prev[:, None])  # (B, 1, E)
    rnn_in = torch.cat((embedded, context), dim=2)
    output, state = decoder.rnn(rnn_in, state)
    logits = decoder.out(torch.cat((output, context), dim=2))[:, 0]
    return logits, state, weights[:, 0]


def step_bmm_context(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).transpose(1, 2)  # (B, 1, S)
    low = torch.finfo(scores.dtype).min
    scores = torch.where(src_mask.unsqueeze(1), scores, torch.full_like(scores, low))
    weights = scores.softmax(-1)  # (B, 1, S)
    context = torch.bmm(weights, memory)  # (B, 1, D)
    logits, state = _rest(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


CASES = [
    BlindCase(
        CHECK,
        "new_state_attends_for_output",
        step_new_state_for_output,
        "mistake",
        "After the recurrent step I attended again with the new state s'_t and used that context "
        "for the logits, mixing Luong's order into Bahdanau's.",
    ),
    BlindCase(
        CHECK,
        "no_mask",
        step_no_mask,
        "mistake",
        "I called decoder.attention without the mask, so padding gets weight.",
    ),
    BlindCase(
        CHECK,
        "mean_of_memory_into_rnn",
        step_mean_of_memory_into_rnn,
        "mistake",
        "I fed the mean of the encoder states into the recurrent layer, as chapter 4's fixed c, "
        "and used c_t only for the logits.",
    ),
    BlindCase(
        CHECK,
        "previous_state_into_rnn",
        step_query_into_rnn,
        "mistake",
        "I concatenated the query s'_{t-1} with the embedding for the recurrent layer instead "
        "of the context c_t.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        step_softmax_over_batch,
        "mistake",
        "Writing the score myself, I took the softmax over dim=0 of the (B, S) scores.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_size_one_axis",
        step_softmax_over_size_one_axis,
        "mistake",
        "I kept w_v's (B, S, 1) output and took the softmax over the last axis, of size 1.",
    ),
    BlindCase(
        CHECK,
        "logits_without_context",
        step_logits_without_context,
        "mistake",
        "I built the logits from [s'_t; s'_t], the new state twice, instead of [s'_t; c_t].",
    ),
    BlindCase(
        CHECK,
        "logits_concat_swapped",
        step_concat_order_swapped,
        "mistake",
        "I concatenated [c_t; s'_t] for the output layer instead of [s'_t; c_t].",
    ),
    BlindCase(
        CHECK,
        "weights_not_squeezed",
        step_weights_not_squeezed,
        "mistake",
        "I returned the weights as attention gave them, (B, 1, S), not (B, S).",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        step_mask_inverted,
        "mistake",
        "I passed ~src_mask as the mask, thinking the attention wants True at the padding.",
    ),
    BlindCase(
        CHECK,
        "encoder_last_state_as_query",
        step_last_encoder_state_as_query,
        "mistake",
        "I used the encoder's last state memory[:, -1] as the query instead of s'_{t-1}.",
    ),
    BlindCase(
        CHECK,
        "returns_rnn_output_as_state",
        step_returns_rnn_output,
        "mistake",
        "I returned the recurrent layer's output (B, 1, D) as the new state instead of its "
        "state (1, B, D).",
    ),
    BlindCase(
        CHECK,
        "rnn_without_state",
        step_rnn_from_zeros,
        "mistake",
        "I called decoder.rnn without the previous state, so it starts from zeros every step.",
    ),
    BlindCase(
        CHECK,
        "projected_keys_as_values",
        step_context_from_projected_keys,
        "mistake",
        "I passed the projected keys W_k s as the values, so c_t mixes W_k s_i instead of s_i.",
    ),
    BlindCase(
        CHECK,
        "score_written_out",
        step_score_written_out,
        "correct",
        "The score written with W_q, W_k and w_v, a -inf fill (every source has a real token), "
        "einsum for c_t.",
    ),
    BlindCase(
        CHECK,
        "keys_argument",
        step_with_keys_argument,
        "correct",
        "decoder.attention with the projected keys computed once, an optional keys argument, and "
        "[:, None] indexing instead of unsqueeze.",
    ),
    BlindCase(
        CHECK,
        "bmm_context",
        step_bmm_context,
        "correct",
        "Scores with the dtype's lowest number as the fill, torch.bmm for the context.",
    ),
]
