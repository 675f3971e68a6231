"""Blind set B24, check_bahdanau_step (chapter 7): one step of the attention decoder."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bahdanau import BahdanauDecoder
from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _context(decoder: BahdanauDecoder, query: Tensor, memory: Tensor, src_mask: Tensor):
    """c_t and alpha_t for a query (B, D) through chapter 6's module: (B, 1, D), (B, 1, S)."""
    return decoder.attention(query.unsqueeze(1), memory, memory, mask=src_mask.unsqueeze(1))


# ---------------------------------------------------------------- mistakes


def step_luong_query(decoder, prev, state, memory, src_mask):
    c_prev, _ = _context(decoder, last_hidden(state), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, c_prev], dim=-1), state)
    context, weights = _context(decoder, output.squeeze(1), memory, src_mask)  # ask with s'_t
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_no_mask(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_state_into_rnn(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = _context(decoder, last_hidden(state), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, query], dim=-1), state)  # [y; s'_{t-1}]
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_softmax_over_batch(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).squeeze(-1)  # (B, S)
    weights = scores.masked_fill(~src_mask, float("-inf")).softmax(dim=0)
    weights = torch.nan_to_num(weights)
    context = torch.bmm(weights.unsqueeze(1), memory)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights


def step_softmax_size_one_axis(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory)))  # (B, S, 1)
    scores = scores.masked_fill(~src_mask.unsqueeze(-1), float("-inf"))
    weights = torch.nan_to_num(scores.softmax(dim=-1))  # (B, S, 1)
    context = (weights * memory).sum(dim=1, keepdim=True)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(-1)


def step_logits_without_context(decoder, prev, state, memory, src_mask):
    s_prev = last_hidden(state).unsqueeze(1)
    context, weights = _context(decoder, last_hidden(state), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, s_prev], dim=-1))  # [s'_t; s'_{t-1}]
    return logits.squeeze(1), state, weights.squeeze(1)


def step_weights_not_squeezed(decoder, prev, state, memory, src_mask):
    context, weights = _context(decoder, last_hidden(state), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights  # (B, 1, S)


def step_mask_inverted(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=(src_mask == 0).unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_returns_output_as_state(decoder, prev, state, memory, src_mask):
    context, weights = _context(decoder, last_hidden(state), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), output, weights.squeeze(1)  # the GRU's output is its state


def step_encoder_last_as_query(decoder, prev, state, memory, src_mask):
    context, weights = _context(decoder, memory[:, -1], memory, src_mask)  # s_S asks
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_order_like_forward(decoder, prev, state, memory, src_mask):
    context, weights = _context(decoder, last_hidden(state), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), weights.squeeze(1), state  # as forward returns them


def step_log_probs(decoder, prev, state, memory, src_mask):
    context, weights = _context(decoder, last_hidden(state), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1).log_softmax(-1), state, weights.squeeze(1)


# ---------------------------------------------------------------- correct variants


def step_by_hand(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state))  # (B, A): s'_{t-1}
    k = att.W_k(memory)  # (B, S, A)
    scores = att.w_v(torch.tanh(k + q[:, None, :])).squeeze(-1)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    context = torch.einsum("bs,bsd->bd", weights, memory)  # (B, D)
    y = decoder.embedding(prev)  # (B, E)
    rnn_in = torch.cat([y, context], dim=-1).unsqueeze(1)  # (B, 1, E + D)
    output, new_state = decoder.rnn(rnn_in, state)
    logits = decoder.out(torch.cat([output[:, 0], context], dim=-1))  # (B, V)
    return logits, new_state, weights


def step_transposed_state(decoder, prev, state, memory, src_mask):
    h = state[0] if isinstance(state, tuple) else state  # (1, B, D), or an LSTM's (h, c)
    query = h[-1:].transpose(0, 1)  # (B, 1, D)
    keys = decoder.attention.project_keys(memory)  # computed once here, passed in
    context, weights = decoder.attention(
        query, memory, memory, mask=src_mask[:, None, :], projected_keys=keys
    )
    inputs = torch.cat((decoder.embedding(prev[:, None]), context), dim=2)
    output, state = decoder.rnn(inputs, state)
    logits = decoder.out(torch.cat((output, context), dim=2))[:, 0]
    return logits, state, weights[:, 0]


def step_bmm_logsumexp(decoder, prev, state, memory, src_mask, keys=None):
    att = decoder.attention
    keys = att.W_k(memory) if keys is None else keys
    q = att.W_q(last_hidden(state)).unsqueeze(1)
    scores = (torch.tanh(q + keys) @ att.w_v.weight.T).squeeze(-1)  # (B, S)
    visible = scores.masked_fill(src_mask.logical_not(), float("-inf"))
    weights = (visible - visible.logsumexp(dim=1, keepdim=True)).exp()
    context = torch.bmm(weights[:, None], memory)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, new_state = decoder.rnn(torch.cat([y, context], -1), state)
    logits = decoder.out(torch.cat([output, context], -1)).squeeze(1)
    return logits, new_state, weights


CASES = [
    BlindCase(
        CHECK,
        "luong_query",
        step_luong_query,
        "mistake",
        "I ran the RNN first and attended with the new state s'_t; the logits and weights come "
        "from that second attention.",
    ),
    BlindCase(
        CHECK,
        "no_mask",
        step_no_mask,
        "mistake",
        "I called decoder.attention without the source mask.",
    ),
    BlindCase(
        CHECK,
        "previous_state_into_rnn",
        step_state_into_rnn,
        "mistake",
        "I fed [y_{t-1}; s'_{t-1}] into the RNN instead of [y_{t-1}; c_t].",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        step_softmax_over_batch,
        "mistake",
        "I wrote the scores by hand as (B, S) and took the softmax over dim=0, the batch.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_size_one_axis",
        step_softmax_size_one_axis,
        "mistake",
        "My scores kept w_v's axis of size 1, (B, S, 1), and the softmax ran over it.",
    ),
    BlindCase(
        CHECK,
        "logits_without_context",
        step_logits_without_context,
        "mistake",
        "I computed the logits from [s'_t; s'_{t-1}] instead of [s'_t; c_t].",
    ),
    BlindCase(
        CHECK,
        "weights_not_squeezed",
        step_weights_not_squeezed,
        "mistake",
        "I returned the weights as (B, 1, S), forgetting to squeeze the query axis.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        step_mask_inverted,
        "mistake",
        "I passed src_mask == 0 as the mask, thinking the attention wants True at padding.",
    ),
    BlindCase(
        CHECK,
        "output_returned_as_state",
        step_returns_output_as_state,
        "mistake",
        "I returned the GRU's output (B, 1, D) as the new state instead of its state (1, B, D).",
    ),
    BlindCase(
        CHECK,
        "encoder_last_state_as_query",
        step_encoder_last_as_query,
        "mistake",
        "I used the encoder's last state memory[:, -1] as the query instead of s'_{t-1}.",
    ),
    BlindCase(
        CHECK,
        "returns_in_forward_order",
        step_order_like_forward,
        "mistake",
        "I return (logits, weights, state), the order of forward, not (logits, state, weights).",
    ),
    BlindCase(
        CHECK,
        "log_probabilities",
        step_log_probs,
        "mistake",
        "I returned log_softmax of the logits instead of the logits.",
    ),
    BlindCase(
        CHECK,
        "scores_by_hand_einsum",
        step_by_hand,
        "correct",
        "The score written with W_q, W_k and w_v by hand, plain -inf masked softmax, einsum for "
        "c_t.",
    ),
    BlindCase(
        CHECK,
        "state_transposed_projected_keys",
        step_transposed_state,
        "correct",
        "The query as state[-1:].transpose(0, 1); project_keys passed to the attention; "
        "indexing instead of squeeze.",
    ),
    BlindCase(
        CHECK,
        "bmm_logsumexp_optional_keys",
        step_bmm_logsumexp,
        "correct",
        "w_v as a matmul, weights by logsumexp, c_t by bmm; an optional keys argument as in the "
        "book.",
    ),
]
