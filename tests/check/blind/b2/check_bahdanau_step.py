"""Blind cases for check_bahdanau_step (chapter 7), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.attention import masked_softmax
from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _scores(decoder, query: Tensor, memory: Tensor) -> Tensor:
    """w_v^T tanh(W_q s' + W_k s_i): query (B, D), memory (B, S, D) -> (B, S)."""
    att = decoder.attention
    return att.w_v(torch.tanh(att.W_q(query).unsqueeze(1) + att.W_k(memory))).squeeze(-1)


def _finish(decoder, prev, state, context):
    y = decoder.embedding(prev).unsqueeze(1)  # (B, 1, E)
    output, state = decoder.rnn(torch.cat([y, context.unsqueeze(1)], dim=-1), state)
    logits = decoder.out(torch.cat([output.squeeze(1), context], dim=-1))
    return logits, state


# ---- mistakes -------------------------------------------------------------------------------


def luong_order(decoder, prev, state, memory, src_mask):
    query = last_hidden(state)
    weights = masked_softmax(_scores(decoder, query, memory), src_mask)
    context = (weights.unsqueeze(-1) * memory).sum(1)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context.unsqueeze(1)], dim=-1), state)
    # then I attended again with the new state, as the attention should use the newest state
    weights = masked_softmax(_scores(decoder, output.squeeze(1), memory), src_mask)
    context = (weights.unsqueeze(-1) * memory).sum(1)
    logits = decoder.out(torch.cat([output.squeeze(1), context], dim=-1))
    return logits, state, weights


def no_mask(decoder, prev, state, memory, src_mask):
    weights = torch.softmax(_scores(decoder, last_hidden(state), memory), dim=-1)
    context = (weights.unsqueeze(-1) * memory).sum(1)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights


def context_not_in_rnn(decoder, prev, state, memory, src_mask):
    weights = masked_softmax(_scores(decoder, last_hidden(state), memory), src_mask)
    context = (weights.unsqueeze(-1) * memory).sum(1)
    y = decoder.embedding(prev).unsqueeze(1)
    zeros = torch.zeros_like(context).unsqueeze(1)  # only y goes in; zeros fill the context slot
    output, state = decoder.rnn(torch.cat([y, zeros], dim=-1), state)
    logits = decoder.out(torch.cat([output.squeeze(1), context], dim=-1))
    return logits, state, weights


def softmax_over_batch(decoder, prev, state, memory, src_mask):
    scores = _scores(decoder, last_hidden(state), memory).masked_fill(~src_mask, float("-inf"))
    weights = torch.softmax(scores, dim=0)
    weights = weights.nan_to_num(0.0)
    context = (weights.unsqueeze(-1) * memory).sum(1)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights


def softmax_over_singleton_axis(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)  # (B, 1, D)
    att = decoder.attention
    scores = att.w_v(torch.tanh(att.W_q(query) + att.W_k(memory)))  # (B, S, 1)
    scores = scores.masked_fill(~src_mask.unsqueeze(-1), float("-inf"))
    weights = torch.softmax(scores, dim=-1)  # the last axis has size 1
    context = (weights * memory).sum(1)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(-1)


def logits_with_old_state(decoder, prev, state, memory, src_mask):
    query = last_hidden(state)
    weights = masked_softmax(_scores(decoder, query, memory), src_mask)
    context = (weights.unsqueeze(-1) * memory).sum(1)
    y = decoder.embedding(prev).unsqueeze(1)
    _, new_state = decoder.rnn(torch.cat([y, context.unsqueeze(1)], dim=-1), state)
    logits = decoder.out(torch.cat([query, context], dim=-1))  # the state I attended with
    return logits, new_state, weights


def logits_without_context(decoder, prev, state, memory, src_mask):
    query = last_hidden(state)
    weights = masked_softmax(_scores(decoder, query, memory), src_mask)
    context = (weights.unsqueeze(-1) * memory).sum(1)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context.unsqueeze(1)], dim=-1), state)
    h = output.squeeze(1)
    logits = decoder.out(torch.cat([h, query], dim=-1))  # previous state where c_t should go
    return logits, state, weights


def mask_inverted(decoder, prev, state, memory, src_mask):
    weights = masked_softmax(_scores(decoder, last_hidden(state), memory), src_mask == 0)
    context = (weights.unsqueeze(-1) * memory).sum(1)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights


def context_is_mean_of_memory(decoder, prev, state, memory, src_mask):
    weights = masked_softmax(_scores(decoder, last_hidden(state), memory), src_mask)
    real = src_mask.unsqueeze(-1).to(memory.dtype)
    context = (memory * real).sum(1) / real.sum(1)  # the weights only reported, not used
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights


# ---- reader's slip ------------------------------------------------------------------------------


def src_mask_forgotten(decoder, prev, state, memory):
    weights = torch.softmax(_scores(decoder, last_hidden(state), memory), dim=-1)
    context = (weights.unsqueeze(-1) * memory).sum(1)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights


# ---- correct variants ---------------------------------------------------------------------------


def through_attention_module(decoder, prev, state, memory, src_mask):
    query = last_hidden(state)[:, None, :]  # (B, 1, D)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask[:, None, :])
    y = decoder.embedding(prev[:, None])  # (B, 1, E)
    output, new_state = decoder.rnn(torch.cat((y, context), dim=2), state)
    logits = decoder.out(torch.cat((output, context), dim=2))[:, 0]
    return logits, new_state, weights[:, 0]


def bmm_context_own_softmax(decoder, prev, state, memory, src_mask):
    scores = _scores(decoder, last_hidden(state), memory)  # (B, S)
    scores = scores.masked_fill(src_mask.logical_not(), float("-inf"))
    weights = torch.softmax(scores, dim=1)  # every source has a real token
    context = torch.bmm(weights.unsqueeze(1), memory).squeeze(1)  # (B, D)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights


def einsum_and_keys_argument(decoder, prev, state, memory, src_mask, keys=None):
    att = decoder.attention
    if keys is None:
        keys = att.W_k(memory)
    q = att.W_q(last_hidden(state))
    e = torch.einsum("bsa,a->bs", torch.tanh(keys + q[:, None]), att.w_v.weight.squeeze(0))
    weights = masked_softmax(e, src_mask)
    context = torch.einsum("bs,bsd->bd", weights, memory)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights


CASES = [
    BlindCase(
        CHECK,
        "luong_order",
        luong_order,
        "mistake",
        "after the recurrent step I attended again with the new state s'_t and used that context and those weights",
    ),
    BlindCase(
        CHECK,
        "no_mask",
        no_mask,
        "mistake",
        "I took a plain softmax over the source positions and never used src_mask",
    ),
    BlindCase(
        CHECK,
        "context_not_in_rnn",
        context_not_in_rnn,
        "mistake",
        "I fed [y; zeros] to the recurrent layer and used the context only for the logits",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        softmax_over_batch,
        "mistake",
        "I took the softmax of the (B, S) scores over dim 0, the batch",
    ),
    BlindCase(
        CHECK,
        "softmax_over_singleton_axis",
        softmax_over_singleton_axis,
        "mistake",
        "I kept the scores as (B, S, 1) and took the softmax over the last axis, of size 1",
    ),
    BlindCase(
        CHECK,
        "logits_with_old_state",
        logits_with_old_state,
        "mistake",
        "I computed the logits from the previous state s'_{t-1} instead of the new one",
    ),
    BlindCase(
        CHECK,
        "logits_without_context",
        logits_without_context,
        "mistake",
        "I put the previous state where the context belongs in the output layer's input",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        mask_inverted,
        "mistake",
        "I masked with src_mask == 0, so the real tokens are hidden and the padding is seen",
    ),
    BlindCase(
        CHECK,
        "context_is_mean_of_memory",
        context_is_mean_of_memory,
        "mistake",
        "I computed the weights but used the plain mean of the real encoder states as the context",
    ),
    BlindCase(
        CHECK,
        "src_mask_forgotten",
        src_mask_forgotten,
        "mistake",
        "my step function has no src_mask parameter",
    ),
    BlindCase(
        CHECK,
        "through_attention_module",
        through_attention_module,
        "correct",
        "I called decoder.attention with a (B, 1, D) query and a (B, 1, S) mask and kept the time axis of size 1",
    ),
    BlindCase(
        CHECK,
        "bmm_context_own_softmax",
        bmm_context_own_softmax,
        "correct",
        "I scored with W_q, W_k and w_v, masked with -inf myself and built the context with bmm",
    ),
    BlindCase(
        CHECK,
        "einsum_and_keys_argument",
        einsum_and_keys_argument,
        "correct",
        "I wrote the scores and the context with einsum and added an optional precomputed keys argument",
    ),
]
