"""Blind set B27, check_bahdanau_step (chapter 7): one step of the attention decoder as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _attend(decoder, query: Tensor, memory: Tensor, src_mask: Tensor) -> tuple[Tensor, Tensor]:
    """Right attention of a query (B, 1, D): context (B, 1, D) and weights (B, 1, S)."""
    return decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))


# ---------------------------------------------------------------- mistakes


def step_rnn_input_order_swapped(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, state[-1].unsqueeze(1), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([context, y], dim=-1), state)  # [c_t; y_{t-1}]
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_logit_input_order_swapped(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, state[-1].unsqueeze(1), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([context, output], dim=-1))  # [c_t; s'_t]
    return logits.squeeze(1), state, weights.squeeze(1)


def step_mask_not_unsqueezed(decoder, prev, state, memory, src_mask):
    query = state[-1].unsqueeze(1)  # (B, 1, D)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_weights_not_squeezed(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, state[-1].unsqueeze(1), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights  # (B, 1, S) as attention returns them


def step_output_as_state(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, state[-1].unsqueeze(1), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), output, weights.squeeze(1)  # the GRU's output is its new state


def step_rnn_without_state(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, state[-1].unsqueeze(1), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1))
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_manual_score_no_tanh(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(state[-1]).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(q + att.W_k(memory)).squeeze(-1)  # (B, S)
    weights = torch.softmax(scores.masked_fill(~src_mask, float("-inf")), dim=-1)
    context = (weights.unsqueeze(-1) * memory).sum(dim=1, keepdim=True)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights


def step_manual_query_not_unsqueezed(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(state[-1])  # (B, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).squeeze(-1)  # (B, S)
    weights = torch.softmax(scores.masked_fill(~src_mask, float("-inf")), dim=-1)
    context = torch.bmm(weights.unsqueeze(1), memory)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights


def step_manual_mask_polarity(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(state[-1]).unsqueeze(1)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).squeeze(-1)
    weights = torch.softmax(scores.masked_fill(src_mask, float("-inf")), dim=-1)  # hide the mask
    context = torch.bmm(weights.unsqueeze(1), memory)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights


def step_context_mean_of_memory(decoder, prev, state, memory, src_mask):
    _, weights = _attend(decoder, state[-1].unsqueeze(1), memory, src_mask)
    real = src_mask.unsqueeze(-1).float()
    context = ((memory * real).sum(1) / real.sum(1)).unsqueeze(1)  # the average source state
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_returns_probabilities(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, state[-1].unsqueeze(1), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1).softmax(-1), state, weights.squeeze(1)  # the next-token distribution


def step_query_is_first_memory(decoder, prev, state, memory, src_mask):
    query = memory[:, :1]  # the encoder's first state asks the question
    context, weights = _attend(decoder, query, memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


# ---------------------------------------------------------------- correct variants


def step_manual_where_bmm(decoder, prev, state, memory, src_mask):
    """The score written with W_q, W_k and w_v; context with bmm."""
    att = decoder.attention
    s_prev = state[-1]  # (B, D): the last layer of the previous state
    hidden = torch.tanh(att.W_q(s_prev)[:, None, :] + att.W_k(memory))  # (B, S, A)
    scores = att.w_v(hidden)[..., 0]  # (B, S)
    scores = torch.where(src_mask, scores, torch.full_like(scores, float("-inf")))
    weights = torch.softmax(scores, dim=1)
    context = torch.bmm(weights[:, None, :], memory)  # (B, 1, D)
    y = decoder.embedding(prev)[:, None, :]
    output, new_state = decoder.rnn(torch.cat((y, context), dim=2), state)
    logits = decoder.out(torch.cat((output, context), dim=2))[:, 0]
    return logits, new_state, weights


def step_projected_keys_einsum(decoder, prev, state, memory, src_mask):
    """Keys projected once with project_keys; the context with einsum."""
    keys = decoder.attention.project_keys(memory)
    query = state[-1].unsqueeze(1)
    _, weights = decoder.attention(
        query, memory, memory, mask=src_mask[:, None, :], projected_keys=keys
    )
    weights = weights.squeeze(1)  # (B, S)
    context = torch.einsum("bs,bsd->bd", weights, memory)  # (B, D)
    x = torch.cat([decoder.embedding(prev), context], dim=-1).unsqueeze(1)  # (B, 1, E + D)
    output, state = decoder.rnn(x, state)
    logits = decoder.out(torch.cat([output.squeeze(1), context], dim=-1))
    return logits, state, weights


def step_gru_cell_view(decoder, prev, state, memory, src_mask):
    """The context from the attention module, the rest written with explicit shapes."""
    B = prev.shape[0]
    context, weights = decoder.attention(
        state[-1].view(B, 1, -1), memory, memory, src_mask.view(B, 1, -1)
    )
    step_input = torch.cat([decoder.embedding(prev.view(B, 1)), context], dim=-1)
    output, new_state = decoder.rnn(step_input, state)
    logits = decoder.out(torch.cat([output, context], dim=-1)).view(B, -1)
    return logits, new_state, weights.view(B, -1)


CASES = [
    BlindCase(
        CHECK,
        "rnn_input_context_first",
        step_rnn_input_order_swapped,
        "mistake",
        "I fed the GRU [c_t; y_{t-1}] instead of [y_{t-1}; c_t].",
    ),
    BlindCase(
        CHECK,
        "logit_input_context_first",
        step_logit_input_order_swapped,
        "mistake",
        "I built the logits from [c_t; s'_t] instead of [s'_t; c_t].",
    ),
    BlindCase(
        CHECK,
        "mask_not_unsqueezed",
        step_mask_not_unsqueezed,
        "mistake",
        "I passed src_mask (B, S) straight to the attention, without the query axis.",
    ),
    BlindCase(
        CHECK,
        "weights_not_squeezed",
        step_weights_not_squeezed,
        "mistake",
        "I returned the weights as the attention gives them, (B, 1, S), not (B, S).",
    ),
    BlindCase(
        CHECK,
        "gru_output_as_state",
        step_output_as_state,
        "mistake",
        "I returned the GRU's output (B, 1, D) as the new state instead of its state (1, B, D).",
    ),
    BlindCase(
        CHECK,
        "rnn_called_without_state",
        step_rnn_without_state,
        "mistake",
        "I called decoder.rnn without the previous state, so every step starts from zeros.",
    ),
    BlindCase(
        CHECK,
        "manual_score_without_tanh",
        step_manual_score_no_tanh,
        "mistake",
        "Writing the score by hand I left out the tanh: w_v(W_q s + W_k h).",
    ),
    BlindCase(
        CHECK,
        "manual_query_not_unsqueezed",
        step_manual_query_not_unsqueezed,
        "mistake",
        "Writing the score by hand I added W_q s (B, A) to W_k h (B, S, A) without unsqueezing "
        "the query.",
    ),
    BlindCase(
        CHECK,
        "manual_mask_polarity",
        step_manual_mask_polarity,
        "mistake",
        "I filled -inf where src_mask is True, reading it as 'masked out'.",
    ),
    BlindCase(
        CHECK,
        "context_is_average_state",
        step_context_mean_of_memory,
        "mistake",
        "I computed the weights but fed the mean of the real encoder states as the context.",
    ),
    BlindCase(
        CHECK,
        "returns_probabilities",
        step_returns_probabilities,
        "mistake",
        "I returned the softmax of the logits, the next-token probabilities.",
    ),
    BlindCase(
        CHECK,
        "query_from_memory",
        step_query_is_first_memory,
        "mistake",
        "I used the encoder's first state as the query instead of the decoder's state.",
    ),
    BlindCase(
        CHECK,
        "manual_score_where_bmm",
        step_manual_where_bmm,
        "correct",
        "The score written with W_q, W_k and w_v, masked with torch.where; context with bmm.",
    ),
    BlindCase(
        CHECK,
        "projected_keys_einsum",
        step_projected_keys_einsum,
        "correct",
        "project_keys passed to the attention as projected_keys; the context re-summed with "
        "einsum; everything 2-D until the GRU.",
    ),
    BlindCase(
        CHECK,
        "explicit_views",
        step_gru_cell_view,
        "correct",
        "The attention module with the mask passed by position; views with B instead of "
        "unsqueeze and squeeze.",
    ),
]
