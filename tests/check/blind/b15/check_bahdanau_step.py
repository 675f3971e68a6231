"""Blind set B15, check_bahdanau_step (chapter 7): one step of the attention decoder."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _scores(decoder, query: Tensor, memory: Tensor) -> Tensor:
    att = decoder.attention
    return att.w_v(torch.tanh(att.W_q(query)[:, None] + att.W_k(memory))).squeeze(-1)  # (B, S)


def _finish(decoder, prev, state, context):
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state


# ---------------------------------------------------------------- mistakes


def step_luong(decoder, prev, state, memory, src_mask):
    y = decoder.embedding(prev).unsqueeze(1)
    zeros = torch.zeros_like(memory[:, :1])  # no context yet
    output, state = decoder.rnn(torch.cat([y, zeros], dim=-1), state)
    context, w = decoder.attention(output, memory, memory, mask=src_mask.unsqueeze(1))
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, w.squeeze(1)


def step_no_mask(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, w = decoder.attention(query, memory, memory)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, w.squeeze(1)


def step_context_not_in_rnn(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, w = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, torch.zeros_like(context)], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, w.squeeze(1)


def step_softmax_batch(decoder, prev, state, memory, src_mask):
    scores = _scores(decoder, last_hidden(state), memory).masked_fill(~src_mask, float("-inf"))
    w = torch.softmax(scores, dim=0)
    context = (w.unsqueeze(-1) * memory).sum(1, keepdim=True)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, w


def step_softmax_size_one(decoder, prev, state, memory, src_mask):
    scores = _scores(decoder, last_hidden(state), memory)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf")).unsqueeze(-1)  # (B, S, 1)
    w = torch.nan_to_num(torch.softmax(scores, dim=-1)).squeeze(-1)
    context = (w.unsqueeze(-1) * memory).sum(1, keepdim=True)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, w


def step_logits_old_state(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, w = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    _, new_state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([query, context], dim=-1))  # s'_{t-1}, not s'_t
    return logits.squeeze(1), new_state, w.squeeze(1)


def step_logits_no_context(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, w = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, torch.zeros_like(context)], dim=-1))
    return logits.squeeze(1), state, w.squeeze(1)


def step_mask_polarity(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, w = decoder.attention(query, memory, memory, mask=~src_mask.unsqueeze(1))
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, w.squeeze(1)


def step_returns_output(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, w = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), output, w.squeeze(1)  # the output (B, 1, D) as the state


def step_weights_unsqueezed(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, w = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, w  # (B, 1, S)


def step_query_last_memory(decoder, prev, state, memory, src_mask):
    query = memory[:, -1:]  # the encoder's last state as the question
    context, w = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, w.squeeze(1)


# ---------------------------------------------------------------- correct variants


def step_manual_scores(decoder, prev, state, memory, src_mask):
    """The score written with W_q, W_k and w_v; bmm for the context."""
    scores = _scores(decoder, last_hidden(state), memory)
    w = torch.softmax(scores.masked_fill(~src_mask, float("-inf")), dim=-1)
    context = torch.bmm(w.unsqueeze(1), memory)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, w


def step_projected_keys(decoder, prev, state, memory, src_mask):
    """Keys projected once with project_keys and passed to the attention."""
    keys = decoder.attention.project_keys(memory)
    query = state[-1].unsqueeze(1)
    context, w = decoder.attention(
        query, memory, memory, mask=src_mask[:, None, :], projected_keys=keys
    )
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, w[:, 0]


def step_einsum(decoder, prev, state, memory, src_mask):
    """einsum for the context; rnn input and output concatenations written with torch.cat."""
    scores = _scores(decoder, last_hidden(state), memory)
    w = scores.masked_fill(src_mask.logical_not(), float("-inf")).softmax(-1)
    context = torch.einsum("bs,bsd->bd", w, memory)
    y = decoder.embedding(prev)
    output, state = decoder.rnn(torch.cat([y, context], -1).unsqueeze(1), state)
    logits = decoder.out(torch.cat([output[:, 0], context], -1))
    return logits, state, w


CASES = [
    BlindCase(
        CHECK,
        "luong_order",
        step_luong,
        "mistake",
        "I ran the RNN first (zeros for the context) and asked with the new state s'_t.",
    ),
    BlindCase(
        CHECK,
        "no_mask",
        step_no_mask,
        "mistake",
        "I did not pass the source mask, so padding gets weight.",
    ),
    BlindCase(
        CHECK,
        "context_not_in_rnn",
        step_context_not_in_rnn,
        "mistake",
        "I fed zeros instead of c_t to the RNN; only the logits see the context.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        step_softmax_batch,
        "mistake",
        "I took the softmax of the (B, S) scores over dim=0, the batch.",
    ),
    BlindCase(
        CHECK,
        "softmax_axis_size_one",
        step_softmax_size_one,
        "mistake",
        "My scores were (B, S, 1) and I took the softmax over the last axis (size 1).",
    ),
    BlindCase(
        CHECK,
        "logits_from_old_state",
        step_logits_old_state,
        "mistake",
        "I computed the logits from [s'_{t-1}; c_t] instead of [s'_t; c_t].",
    ),
    BlindCase(
        CHECK,
        "logits_without_context",
        step_logits_no_context,
        "mistake",
        "I put zeros in place of c_t in the logits' input.",
    ),
    BlindCase(
        CHECK,
        "mask_polarity",
        step_mask_polarity,
        "mistake",
        "I passed ~src_mask, thinking True marks padding.",
    ),
    BlindCase(
        CHECK,
        "returns_rnn_output",
        step_returns_output,
        "mistake",
        "I returned the RNN's output (B, 1, D) as the new state instead of (1, B, D).",
    ),
    BlindCase(
        CHECK,
        "weights_not_squeezed",
        step_weights_unsqueezed,
        "mistake",
        "I returned the weights as (B, 1, S).",
    ),
    BlindCase(
        CHECK,
        "query_from_encoder",
        step_query_last_memory,
        "mistake",
        "I used the encoder's last state memory[:, -1] as the query.",
    ),
    BlindCase(
        CHECK,
        "manual_scores_bmm",
        step_manual_scores,
        "correct",
        "Score written with W_q, W_k, w_v; masked_fill -inf; bmm for the context.",
    ),
    BlindCase(
        CHECK,
        "projected_keys",
        step_projected_keys,
        "correct",
        "project_keys passed as projected_keys; query as state[-1].",
    ),
    BlindCase(
        CHECK,
        "einsum_context",
        step_einsum,
        "correct",
        "einsum for the context, concatenations on (B, ·) then unsqueeze.",
    ),
]
