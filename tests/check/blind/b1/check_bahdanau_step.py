"""Blind cases for check_bahdanau_step (chapter 7)."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.attention import masked_softmax
from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _finish(decoder, prev, state, context, weights):
    y = decoder.embedding(prev).unsqueeze(1)  # (B, 1, E)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_luong_order(decoder, prev, state, memory, src_mask):
    y = decoder.embedding(prev).unsqueeze(1)
    # runs the rnn first with the old context... there is none, so it uses the mean of the memory
    mean = memory.mean(dim=1, keepdim=True)
    output, state = decoder.rnn(torch.cat([y, mean], dim=-1), state)
    context, weights = decoder.attention(output, memory, memory, mask=src_mask.unsqueeze(1))
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_no_mask(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory)
    return _finish(decoder, prev, state, context, weights)


def bs_concat_order_swapped(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([context, y], dim=-1), state)  # [c_t; y] not [y; c_t]
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_logits_without_context(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, torch.zeros_like(context)], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_softmax_over_batch(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state))  # (B, A)
    scores = att.w_v(torch.tanh(q.unsqueeze(1) + att.W_k(memory))).squeeze(-1)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    weights = torch.softmax(scores, dim=0)  # over the batch
    weights = torch.nan_to_num(weights)
    context = (weights.unsqueeze(-1) * memory).sum(1, keepdim=True)
    return _finish(decoder, prev, state, context, weights)


def bs_softmax_size_one_axis(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory)))  # (B, S, 1)
    scores = scores.masked_fill(~src_mask.unsqueeze(-1), float("-inf"))
    weights = torch.softmax(scores, dim=-1).squeeze(-1)  # softmax over the size-1 axis
    weights = torch.nan_to_num(weights)
    context = (weights.unsqueeze(-1) * memory).sum(1, keepdim=True)
    return _finish(decoder, prev, state, context, weights)


def bs_context_from_mean(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    _, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    m = src_mask.unsqueeze(-1).to(memory.dtype)
    context = ((memory * m).sum(1) / m.sum(1)).unsqueeze(1)  # plain masked mean, weights unused
    return _finish(decoder, prev, state, context, weights)


def bs_returns_output_not_state(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), output, weights.squeeze(1)  # output is (B, 1, D), not (1, B, D)


def bs_slip_two_returns(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    logits, state, _ = _finish(decoder, prev, state, context, weights)
    return logits, state  # forgot the weights


def bs_by_hand(decoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor):
    att = decoder.attention
    s_prev = state[-1]  # (B, D)
    scores = att.w_v(torch.tanh(att.W_q(s_prev)[:, None, :] + att.W_k(memory))).squeeze(
        -1
    )  # (B, S)
    weights = masked_softmax(scores, src_mask)  # (B, S)
    context = torch.bmm(weights.unsqueeze(1), memory)  # (B, 1, D)
    emb = decoder.embedding(prev)[:, None, :]
    output, new_state = decoder.rnn(torch.cat((emb, context), dim=2), state)
    logits = decoder.out(torch.cat((output[:, 0], context[:, 0]), dim=1))
    return logits, new_state, weights


def bs_einsum_keys(decoder, prev, state, memory, src_mask, keys=None):
    att = decoder.attention
    if keys is None:
        keys = att.project_keys(memory)
    query = last_hidden(state)
    context, weights = att(
        query.unsqueeze(1), memory, memory, mask=src_mask[:, None, :], projected_keys=keys
    )
    w = weights[:, 0]  # (B, S)
    ctx = torch.einsum("bs,bsd->bd", w, memory)
    y = decoder.embedding(prev)
    output, new_state = decoder.rnn(torch.cat([y, ctx], -1).unsqueeze(1), state)
    logits = decoder.out(torch.cat([output.squeeze(1), ctx], -1))
    return logits, new_state, w


CASES = [
    BlindCase(
        CHECK,
        "luong_order_new_state_as_query",
        bs_luong_order,
        "mistake",
        "runs the GRU first (with the mean of the memory as context) and uses the new state as the query",
    ),
    BlindCase(
        CHECK,
        "no_source_mask",
        bs_no_mask,
        "mistake",
        "calls decoder.attention without the source mask, so padding gets weight",
    ),
    BlindCase(
        CHECK,
        "context_before_embedding",
        bs_concat_order_swapped,
        "mistake",
        "feeds the GRU [c_t; y_{t-1}] instead of [y_{t-1}; c_t]",
    ),
    BlindCase(
        CHECK,
        "logits_without_context",
        bs_logits_without_context,
        "mistake",
        "computes the logits from [s'_t; 0], leaving the context out",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        bs_softmax_over_batch,
        "mistake",
        "writes the score by hand and takes the softmax over dim=0, the batch",
    ),
    BlindCase(
        CHECK,
        "softmax_over_size_one_axis",
        bs_softmax_size_one_axis,
        "mistake",
        "keeps the scores as (B, S, 1) and takes the softmax over the last axis, of size 1",
    ),
    BlindCase(
        CHECK,
        "context_plain_masked_mean",
        bs_context_from_mean,
        "mistake",
        "computes the weights but uses the plain mean of the real encoder states as the context",
    ),
    BlindCase(
        CHECK,
        "returns_rnn_output_as_state",
        bs_returns_output_not_state,
        "mistake",
        "returns the GRU's output (B, 1, D) as the new state instead of the state (1, B, D)",
    ),
    BlindCase(
        CHECK,
        "slip_returns_two_values",
        bs_slip_two_returns,
        "mistake",
        "returns only (logits, state) and forgets the attention weights",
    ),
    BlindCase(
        CHECK,
        "score_by_hand_bmm",
        bs_by_hand,
        "correct",
        "writes the additive score with W_q, W_k, w_v, calls masked_softmax and gets the context with torch.bmm",
    ),
    BlindCase(
        CHECK,
        "attention_module_einsum_context",
        bs_einsum_keys,
        "correct",
        "takes an optional keys argument, calls decoder.attention and recomputes the context with einsum",
    ),
]
