"""Blind set B22, check_bahdanau_step (chapter 7): one step of the Bahdanau decoder as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.attention import masked_softmax
from transformer_tutorial.bahdanau import BahdanauDecoder
from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _attend(decoder: BahdanauDecoder, query: Tensor, memory: Tensor, src_mask: Tensor):
    """The right attention call: query (B, D) -> context (B, 1, D), weights (B, 1, S)."""
    return decoder.attention(query.unsqueeze(1), memory, memory, mask=src_mask.unsqueeze(1))


def _finish(decoder: BahdanauDecoder, prev: Tensor, state, context: Tensor, weights: Tensor):
    y = decoder.embedding(prev).unsqueeze(1)  # (B, 1, E)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


# ---------------------------------------------------------------- mistakes


def step_luong_order(decoder, prev, state, memory, src_mask):
    y = decoder.embedding(prev).unsqueeze(1)
    no_context = torch.zeros_like(memory[:, :1])  # c_t does not exist yet
    output, state = decoder.rnn(torch.cat([y, no_context], dim=-1), state)
    context, weights = _attend(decoder, output.squeeze(1), memory, src_mask)  # query = s'_t
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_no_mask(decoder, prev, state, memory, src_mask):
    context, weights = decoder.attention(last_hidden(state).unsqueeze(1), memory, memory)
    return _finish(decoder, prev, state, context, weights)


def step_inverted_mask(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state), memory, ~src_mask)  # True = pad
    return _finish(decoder, prev, state, context, weights)


def step_state_instead_of_context(decoder, prev, state, memory, src_mask):
    query = last_hidden(state)
    context, weights = _attend(decoder, query, memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, new_state = decoder.rnn(torch.cat([y, query.unsqueeze(1)], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), new_state, weights.squeeze(1)


def step_softmax_over_batch(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).squeeze(-1)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    weights = torch.softmax(scores, dim=0)  # dim 0
    weights = torch.nan_to_num(weights)
    context = (weights.unsqueeze(-1) * memory).sum(1, keepdim=True)
    return _finish(decoder, prev, state, context, weights)


def step_softmax_over_size_one(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)
    scores = att.w_v(torch.tanh(q + att.W_k(memory)))  # (B, S, 1), kept the last axis
    scores = scores.masked_fill(~src_mask.unsqueeze(-1), float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1)).squeeze(-1)  # (B, S)
    context = (weights.unsqueeze(-1) * memory).sum(1, keepdim=True)
    return _finish(decoder, prev, state, context, weights)


def step_logits_without_context(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, torch.zeros_like(context)], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_last_encoder_state_query(decoder, prev, state, memory, src_mask):
    query = memory[:, -1]  # the encoder's final state asks the question
    context, weights = _attend(decoder, query, memory, src_mask)
    return _finish(decoder, prev, state, context, weights)


def step_rnn_input_order(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([context, y], dim=-1), state)  # [c_t; y]
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_out_input_order(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([context, output], dim=-1))  # [c_t; s'_t]
    return logits.squeeze(1), state, weights.squeeze(1)


def step_returns_output_as_state(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), output, weights.squeeze(1)  # output (B, 1, D) as the new state


def step_projected_keys_as_values(decoder, prev, state, memory, src_mask):
    keys = decoder.attention.project_keys(memory)  # W_k s_i
    context, weights = decoder.attention(
        last_hidden(state).unsqueeze(1),
        memory,
        keys,
        mask=src_mask.unsqueeze(1),
        projected_keys=keys,
    )
    return _finish(decoder, prev, state, context, weights)


# ---------------------------------------------------------------- correct variants


def step_by_hand(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    s_prev = state[0][-1] if isinstance(state, tuple) else state[-1]  # (B, D)
    scores = att.w_v(torch.tanh(att.W_q(s_prev)[:, None, :] + att.W_k(memory))).squeeze(-1)
    weights = masked_softmax(scores, src_mask)  # (B, S)
    context = torch.bmm(weights.unsqueeze(1), memory)  # (B, 1, D)
    y = decoder.embedding(prev)[:, None]
    output, new_state = decoder.rnn(torch.cat((y, context), -1), state)
    logits = decoder.out(torch.cat((output[:, 0], context[:, 0]), -1))
    return logits, new_state, weights


def step_einsum_where(decoder, prev, state, memory, src_mask, keys=None):
    att = decoder.attention
    keys = att.W_k(memory) if keys is None else keys
    q = att.W_q(last_hidden(state))  # (B, A)
    scores = torch.einsum("bsa,a->bs", torch.tanh(q.unsqueeze(1) + keys), att.w_v.weight[0])
    scores = torch.where(src_mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
    weights = torch.softmax(scores, dim=-1)  # every source has at least one real token
    context = torch.einsum("bs,bsd->bd", weights, memory)
    y = decoder.embedding(prev)
    output, new_state = decoder.rnn(torch.cat([y, context], dim=-1).unsqueeze(1), state)
    logits = decoder.out(torch.cat([output.squeeze(1), context], dim=-1))
    return logits, new_state, weights


def step_module_call(decoder, prev, state, memory, src_mask):
    query = last_hidden(state)[:, None, :]
    context, weights = decoder.attention(query, memory, memory, src_mask[:, None, :])
    x = torch.cat([decoder.embedding(prev[:, None]), context], dim=2)
    output, state = decoder.rnn(x, state)
    return decoder.out(torch.cat([output, context], dim=2))[:, 0], state, weights[:, 0]


CASES = [
    BlindCase(
        CHECK,
        "luong_order",
        step_luong_order,
        "mistake",
        "I ran the RNN first (with a zero context) and used the new state as the query.",
    ),
    BlindCase(
        CHECK, "no_mask", step_no_mask, "mistake", "I called the attention without the source mask."
    ),
    BlindCase(
        CHECK,
        "inverted_mask",
        step_inverted_mask,
        "mistake",
        "I passed ~src_mask, thinking True marks padding.",
    ),
    BlindCase(
        CHECK,
        "state_instead_of_context",
        step_state_instead_of_context,
        "mistake",
        "I fed [y; s'_{t-1}] to the RNN instead of [y; c_t].",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        step_softmax_over_batch,
        "mistake",
        "I wrote the scores by hand and took the softmax over dim 0.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_size_one",
        step_softmax_over_size_one,
        "mistake",
        "My scores kept a trailing axis of size 1 and I took the softmax over it.",
    ),
    BlindCase(
        CHECK,
        "logits_without_context",
        step_logits_without_context,
        "mistake",
        "I put zeros where c_t goes in the input of out.",
    ),
    BlindCase(
        CHECK,
        "last_encoder_state_query",
        step_last_encoder_state_query,
        "mistake",
        "I used the last encoder state memory[:, -1] as the query.",
    ),
    BlindCase(
        CHECK,
        "rnn_input_order",
        step_rnn_input_order,
        "mistake",
        "I concatenated [c_t; y] instead of [y; c_t] for the RNN.",
    ),
    BlindCase(
        CHECK,
        "out_input_order",
        step_out_input_order,
        "mistake",
        "I concatenated [c_t; s'_t] instead of [s'_t; c_t] for the logits.",
    ),
    BlindCase(
        CHECK,
        "returns_output_as_state",
        step_returns_output_as_state,
        "mistake",
        "I returned the RNN's output (B, 1, D) as the new state.",
    ),
    BlindCase(
        CHECK,
        "projected_keys_as_values",
        step_projected_keys_as_values,
        "mistake",
        "I passed the projected keys W_k s_i as the values.",
    ),
    BlindCase(
        CHECK,
        "by_hand",
        step_by_hand,
        "correct",
        "Scores written with W_q, W_k, w_v, the chapter's masked_softmax and bmm.",
    ),
    BlindCase(
        CHECK,
        "einsum_where",
        step_einsum_where,
        "correct",
        "einsum and torch.where with -inf, an optional keys argument.",
    ),
    BlindCase(
        CHECK,
        "module_call",
        step_module_call,
        "correct",
        "decoder.attention with the mask as a positional argument, indexing instead of squeeze.",
    ),
]
