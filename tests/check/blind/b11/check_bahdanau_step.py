"""Blind set B11, check_bahdanau_step (chapter 7): one step of the attention decoder as readers
write it, with ``decoder`` in the place of ``self``."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


# ---------------------------------------------------------------- mistakes


def step_luong_order(decoder, prev: Tensor, state, memory: Tensor, src_mask: Tensor):
    y = decoder.embedding(prev).unsqueeze(1)  # (B, 1, E)
    blank = memory.new_zeros(memory.shape[0], 1, memory.shape[-1])
    output, state = decoder.rnn(torch.cat([y, blank], dim=-1), state)  # first the new state
    context, weights = decoder.attention(output, memory, memory, mask=src_mask.unsqueeze(1))
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_no_mask(decoder, prev: Tensor, state, memory: Tensor, src_mask: Tensor):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_mask_inverted(decoder, prev: Tensor, state, memory: Tensor, src_mask: Tensor):
    query = last_hidden(state).unsqueeze(1)
    pad = src_mask == 0
    context, weights = decoder.attention(query, memory, memory, mask=pad.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_context_not_in_rnn(decoder, prev: Tensor, state, memory: Tensor, src_mask: Tensor):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    rnn_in = torch.cat([y, torch.zeros_like(context)], dim=-1)  # the context goes to out only
    output, state = decoder.rnn(rnn_in, state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_softmax_over_batch(decoder, prev: Tensor, state, memory: Tensor, src_mask: Tensor):
    att = decoder.attention
    q = att.W_q(last_hidden(state))  # (B, A)
    scores = att.w_v(torch.tanh(q.unsqueeze(1) + att.W_k(memory))).squeeze(-1)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    weights = torch.softmax(scores, dim=0)
    weights = torch.nan_to_num(weights)
    context = (weights.unsqueeze(-1) * memory).sum(1, keepdim=True)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights


def step_softmax_over_size_one(decoder, prev: Tensor, state, memory: Tensor, src_mask: Tensor):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q.unsqueeze(2) + att.W_k(memory).unsqueeze(1))).squeeze(-1)
    scores = scores.masked_fill(~src_mask.unsqueeze(1), float("-inf"))  # (B, 1, S)
    weights = torch.softmax(scores, dim=1)  # over the steps
    context = weights @ memory  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_logits_without_context(decoder, prev: Tensor, state, memory: Tensor, src_mask: Tensor):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, torch.zeros_like(context)], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_last_source_state_query(decoder, prev: Tensor, state, memory: Tensor, src_mask: Tensor):
    query = memory[:, -1:]  # the encoder's last state asks the question
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_context_first(decoder, prev: Tensor, state, memory: Tensor, src_mask: Tensor):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([context, y], dim=-1), state)  # [c_t; y_{t-1}]
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_out_order_swapped(decoder, prev: Tensor, state, memory: Tensor, src_mask: Tensor):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([context, output], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_rnn_from_zero(decoder, prev: Tensor, state, memory: Tensor, src_mask: Tensor):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1))  # the state went into the query
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_returns_output(decoder, prev: Tensor, state, memory: Tensor, src_mask: Tensor):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), output, weights  # output is the new state s'_t


# ---------------------------------------------------------------- correct variants


def step_manual_score(decoder, prev: Tensor, state, memory: Tensor, src_mask: Tensor):
    att = decoder.attention
    s_prev = last_hidden(state)  # (B, D)
    feats = torch.tanh(att.W_q(s_prev)[:, None, :] + att.W_k(memory))  # (B, S, A)
    scores = att.w_v(feats)[..., 0]  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    alpha = scores.softmax(dim=-1)  # every source has a real token
    c = torch.einsum("bs,bsd->bd", alpha, memory)  # (B, D)
    y = decoder.embedding(prev)  # (B, E)
    output, new_state = decoder.rnn(torch.cat([y, c], dim=1)[:, None, :], state)
    logits = decoder.out(torch.cat([output[:, 0], c], dim=1))
    return logits, new_state, alpha


def step_projected_keys(
    decoder, prev: Tensor, state, memory: Tensor, src_mask: Tensor, keys: Tensor | None = None
):
    if keys is None:
        keys = decoder.attention.project_keys(memory)
    query = last_hidden(state)[:, None]
    context, weights = decoder.attention(
        query, memory, memory, mask=src_mask[:, None, :], projected_keys=keys
    )
    inp = torch.cat((decoder.embedding(prev[:, None]), context), dim=2)
    output, state = decoder.rnn(inp, state)
    logits = decoder.out(torch.cat((output, context), dim=2))
    return logits[:, 0], state, weights[:, 0]


def step_where_mask(decoder, prev: Tensor, state, memory: Tensor, src_mask: Tensor):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).squeeze(2)  # (B, S)
    neg = torch.full_like(scores, float("-inf"))
    weights = torch.softmax(torch.where(src_mask, scores, neg), dim=1)
    context = torch.bmm(weights.unsqueeze(1), memory)  # (B, 1, D)
    y = decoder.embedding(prev).view(prev.shape[0], 1, -1)
    output, state = decoder.rnn(torch.cat([y, context], -1), state)
    logits = decoder.out(torch.cat([output, context], -1)).squeeze(1)
    return logits, state, weights


CASES = [
    BlindCase(
        CHECK,
        "luong_order",
        step_luong_order,
        "mistake",
        "I ran the recurrent layer first (with zeros where the context goes) and used the new "
        "state s'_t as the query.",
    ),
    BlindCase(
        CHECK,
        "no_mask",
        step_no_mask,
        "mistake",
        "I called the attention without the source mask.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        step_mask_inverted,
        "mistake",
        "I passed src_mask == 0 as the mask, thinking it must mark the padding.",
    ),
    BlindCase(
        CHECK,
        "context_not_in_rnn",
        step_context_not_in_rnn,
        "mistake",
        "I gave the recurrent layer zeros in the context's place; the context only reaches "
        "the logits.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        step_softmax_over_batch,
        "mistake",
        "I wrote the scores as (B, S) and took softmax(dim=0), over the batch.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_size_one_axis",
        step_softmax_over_size_one,
        "mistake",
        "I kept the scores as (B, 1, S) and took softmax(dim=1), an axis of size 1.",
    ),
    BlindCase(
        CHECK,
        "logits_without_context",
        step_logits_without_context,
        "mistake",
        "I gave out zeros in the context's place, so the logits come from s'_t alone.",
    ),
    BlindCase(
        CHECK,
        "encoder_last_state_as_query",
        step_last_source_state_query,
        "mistake",
        "I used the encoder's last state memory[:, -1] as the query, as c was in chapter 4.",
    ),
    BlindCase(
        CHECK,
        "context_before_embedding",
        step_context_first,
        "mistake",
        "I concatenated [c_t; y_{t-1}] for the recurrent layer, the wrong order.",
    ),
    BlindCase(
        CHECK,
        "out_input_order_swapped",
        step_out_order_swapped,
        "mistake",
        "I fed out with [c_t; s'_t] instead of [s'_t; c_t].",
    ),
    BlindCase(
        CHECK,
        "rnn_without_state",
        step_rnn_from_zero,
        "mistake",
        "I did not pass the state to the recurrent layer, since it had been used as the query.",
    ),
    BlindCase(
        CHECK,
        "returns_rnn_output_as_state",
        step_returns_output,
        "mistake",
        "I returned the GRU's output (B, 1, D) as the new state and left the weights (B, 1, S).",
    ),
    BlindCase(
        CHECK,
        "manual_score_einsum",
        step_manual_score,
        "correct",
        "The score written with W_q, W_k and w_v on (B, S) tensors, einsum for the context.",
    ),
    BlindCase(
        CHECK,
        "optional_projected_keys",
        step_projected_keys,
        "correct",
        "An extra keys=None argument for precomputed projected keys, passed to the attention.",
    ),
    BlindCase(
        CHECK,
        "where_and_bmm",
        step_where_mask,
        "correct",
        "torch.where for the mask, bmm for the context, view for the embedding.",
    ),
]
