"""Blind set B28, check_bahdanau_step (chapter 7): one step of the attention decoder as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _context(decoder, state, memory: Tensor, src_mask: Tensor) -> tuple[Tensor, Tensor]:
    """c_t and alpha_t from s'_{t-1}, right: (B, 1, D) and (B, 1, S)."""
    query = last_hidden(state).unsqueeze(1)
    return decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))


# ---------------------------------------------------------------- mistakes


def step_mask_not_unsqueezed(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)  # (B, 1, D)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask)  # (B, S) mask
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_mask_inverted(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    pad = ~src_mask  # the padding positions, to be masked out
    context, weights = decoder.attention(query, memory, memory, mask=pad.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_context_first_in_input(decoder, prev, state, memory, src_mask):
    context, weights = _context(decoder, state, memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([context, y], dim=-1), state)  # [c_t; y_{t-1}]
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_logits_context_first(decoder, prev, state, memory, src_mask):
    context, weights = _context(decoder, state, memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([context, output], dim=-1))  # [c_t; s'_t]
    return logits.squeeze(1), state, weights.squeeze(1)


def step_returns_old_state(decoder, prev, state, memory, src_mask):
    context, weights = _context(decoder, state, memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, new_state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_output_as_state(decoder, prev, state, memory, src_mask):
    context, weights = _context(decoder, state, memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), output, weights.squeeze(1)  # output is s'_t


def step_rnn_from_zeros(decoder, prev, state, memory, src_mask):
    context, weights = _context(decoder, state, memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1))  # the state went to attention
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_weights_not_squeezed(decoder, prev, state, memory, src_mask):
    context, weights = _context(decoder, state, memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights  # (B, 1, S)


def step_context_from_projected_keys(decoder, prev, state, memory, src_mask):
    keys = decoder.attention.project_keys(memory)  # W_k s_i, computed once
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(
        query, memory, keys, mask=src_mask.unsqueeze(1), projected_keys=keys
    )  # the projected keys as the values too
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_probabilities(decoder, prev, state, memory, src_mask):
    context, weights = _context(decoder, state, memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1).softmax(dim=-1), state, weights.squeeze(1)  # the next-token probs


def step_scores_times_mask(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).squeeze(-1)  # (B, S)
    weights = torch.softmax(scores * src_mask, dim=-1)  # padded positions score 0
    context = (weights.unsqueeze(-1) * memory).sum(dim=1, keepdim=True)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights


def step_context_detached(decoder, prev, state, memory, src_mask):
    context, weights = _context(decoder, state, memory, src_mask)
    context = context.detach()  # the context is an input of the rnn, not a parameter
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


# ---------------------------------------------------------------- correct variants


def step_by_hand(decoder, prev, state, memory, src_mask):
    """The score written with W_q, W_k and w_v; -inf at the padding; bmm for the context."""
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).squeeze(-1)  # (B, S)
    weights = scores.masked_fill(~src_mask, float("-inf")).softmax(dim=-1)  # (B, S)
    context = torch.bmm(weights.unsqueeze(1), memory)  # (B, 1, D)
    y = decoder.embedding(prev)[:, None, :]
    output, new_state = decoder.rnn(torch.cat((y, context), dim=2), state)
    logits = decoder.out(torch.cat((output, context), dim=2))[:, 0]
    return logits, new_state, weights


def step_transposed_state(decoder, prev, state, memory, src_mask, keys=None):
    """The query as state.transpose(0, 1); precomputed keys accepted as an extra argument."""
    query = state.transpose(0, 1)  # (1, B, D) -> (B, 1, D)
    mask = src_mask[:, None, :]
    context, weights = decoder.attention(query, memory, memory, mask, projected_keys=keys)
    rnn_in = torch.cat([decoder.embedding(prev[:, None]), context], dim=-1)
    output, state = decoder.rnn(rnn_in, state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits[:, 0], state, weights[:, 0]


def step_weighted_sum(decoder, prev, state, memory, src_mask):
    """The attention module for the weights only; the context as an explicit weighted sum."""
    query = last_hidden(state)[:, None]
    _, alpha = decoder.attention(query, memory, memory, mask=src_mask[:, None])
    alpha = alpha[:, 0]  # (B, S)
    c = (alpha[..., None] * memory).sum(dim=1)  # (B, D): sum_i alpha_ti s_i
    y = decoder.embedding(prev)  # (B, E)
    output, new_state = decoder.rnn(torch.cat([y, c], dim=-1)[:, None], state)
    logits = decoder.out(torch.cat([output[:, 0], c], dim=-1))
    return logits, new_state, alpha


CASES = [
    BlindCase(
        CHECK,
        "mask_not_unsqueezed",
        step_mask_not_unsqueezed,
        "mistake",
        "I passed src_mask (B, S) to the attention as it is, without the query axis.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        step_mask_inverted,
        "mistake",
        "I passed ~src_mask, the padding positions, thinking the mask says what to hide.",
    ),
    BlindCase(
        CHECK,
        "rnn_input_context_first",
        step_context_first_in_input,
        "mistake",
        "I fed the recurrent layer [c_t; y_{t-1}] instead of [y_{t-1}; c_t].",
    ),
    BlindCase(
        CHECK,
        "logits_context_first",
        step_logits_context_first,
        "mistake",
        "I computed the logits from [c_t; s'_t] instead of [s'_t; c_t].",
    ),
    BlindCase(
        CHECK,
        "returns_previous_state",
        step_returns_old_state,
        "mistake",
        "I called the new state new_state but returned state, the previous one.",
    ),
    BlindCase(
        CHECK,
        "output_returned_as_state",
        step_output_as_state,
        "mistake",
        "I returned the recurrent layer's output (B, 1, D) as the new state instead of its "
        "state (1, B, D).",
    ),
    BlindCase(
        CHECK,
        "rnn_without_state",
        step_rnn_from_zeros,
        "mistake",
        "I forgot to pass the state to the recurrent layer, so it starts from zeros.",
    ),
    BlindCase(
        CHECK,
        "weights_not_squeezed",
        step_weights_not_squeezed,
        "mistake",
        "I returned the weights as (B, 1, S), as the attention gives them.",
    ),
    BlindCase(
        CHECK,
        "values_are_projected_keys",
        step_context_from_projected_keys,
        "mistake",
        "I passed the projected keys W_k s_i as the values too, so the context is a sum of "
        "projected keys.",
    ),
    BlindCase(
        CHECK,
        "returns_probabilities",
        step_probabilities,
        "mistake",
        "I applied a softmax to the logits before returning them.",
    ),
    BlindCase(
        CHECK,
        "scores_times_mask",
        step_scores_times_mask,
        "mistake",
        "I wrote the score by hand and multiplied it by src_mask, so padded positions score 0 "
        "and still get weight.",
    ),
    BlindCase(
        CHECK,
        "context_detached",
        step_context_detached,
        "mistake",
        "I detached the context before feeding it to the recurrent layer, so no gradient "
        "reaches the attention.",
    ),
    BlindCase(
        CHECK,
        "score_by_hand",
        step_by_hand,
        "correct",
        "The score written with W_q, W_k and w_v, -inf at the padding, torch.bmm for the context.",
    ),
    BlindCase(
        CHECK,
        "state_transposed_as_query",
        step_transposed_state,
        "correct",
        "The query as state.transpose(0, 1); an extra keys argument that defaults to None.",
    ),
    BlindCase(
        CHECK,
        "explicit_weighted_sum",
        step_weighted_sum,
        "correct",
        "The weights from the attention module, the context summed by hand, the recurrent "
        "layer fed a (B, 1, E + D) input.",
    ),
]
