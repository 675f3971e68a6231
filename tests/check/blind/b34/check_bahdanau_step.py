"""Blind set B34, check_bahdanau_step (chapter 7): one step of the Bahdanau decoder by readers."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _attend(decoder, query: Tensor, memory: Tensor, src_mask: Tensor | None):
    mask = None if src_mask is None else src_mask.unsqueeze(1)
    return decoder.attention(query, memory, memory, mask=mask)  # (B, 1, D), (B, 1, S)


# ---------------------------------------------------------------- mistakes


def bs_luong_order(decoder, prev, state, memory, src_mask):
    y = decoder.embedding(prev).unsqueeze(1)
    zeros = torch.zeros_like(memory[:, :1])
    output, state = decoder.rnn(torch.cat([y, zeros], dim=-1), state)  # state first
    context, weights = _attend(decoder, output, memory, src_mask)  # then attend with s'_t
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_no_mask(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = _attend(decoder, query, memory, None)  # padding is zeros anyway
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_mask_inverted(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = _attend(decoder, query, memory, ~src_mask)  # True marks padding
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_context_not_in_rnn(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = _attend(decoder, query, memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    rnn_in = torch.cat([y, torch.zeros_like(context)], dim=-1)  # context only for the output
    output, state = decoder.rnn(rnn_in, state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_logits_no_context(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = _attend(decoder, query, memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, torch.zeros_like(context)], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_softmax_over_batch(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    query = last_hidden(state)  # (B, D)
    f = torch.tanh(att.W_q(query).unsqueeze(1) + att.W_k(memory))  # (B, S, A)
    scores = att.w_v(f).squeeze(-1).masked_fill(~src_mask, float("-inf"))  # (B, S)
    weights = scores.softmax(dim=0)  # the first axis
    weights = torch.nan_to_num(weights)
    context = (weights.unsqueeze(-1) * memory).sum(1, keepdim=True)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights


def bs_softmax_size_one(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    query = last_hidden(state)
    f = torch.tanh(att.W_q(query).unsqueeze(1) + att.W_k(memory))  # (B, S, A)
    scores = att.w_v(f)  # (B, S, 1)
    scores = scores.masked_fill(~src_mask.unsqueeze(-1), float("-inf"))
    weights = torch.nan_to_num(scores.softmax(dim=-1)).squeeze(-1)  # over the last axis
    context = (weights.unsqueeze(-1) * memory).sum(1, keepdim=True)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights


def bs_state_as_query(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, state, memory, src_mask)  # state is the query
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_context_order_swapped(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = _attend(decoder, query, memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([context, output], dim=-1))  # [c_t; s'_t]
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_mean_context(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    _, weights = _attend(decoder, query, memory, src_mask)
    real = src_mask.unsqueeze(-1).to(memory.dtype)
    context = ((memory * real).sum(1) / real.sum(1)).unsqueeze(1)  # average of the real states
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_returns_old_state(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = _attend(decoder, query, memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, new_state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)  # returned the state I was given


def bs_weights_unsqueezed(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = _attend(decoder, query, memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits, state, weights  # (B, 1, V) and (B, 1, S)


# ---------------------------------------------------------------- correct variants


def bs_by_hand(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    s_prev = last_hidden(state)  # (B, D)
    f = torch.tanh(att.W_q(s_prev)[:, None, :] + att.W_k(memory))  # (B, S, A)
    scores = att.w_v(f)[..., 0].masked_fill(~src_mask, float("-inf"))  # (B, S)
    weights = torch.softmax(scores, dim=-1)
    context = torch.bmm(weights.unsqueeze(1), memory)  # (B, 1, D)
    y = decoder.embedding(prev)[:, None]
    output, new_state = decoder.rnn(torch.cat((y, context), dim=2), state)
    logits = decoder.out(torch.cat((output[:, 0], context[:, 0]), dim=-1))
    return logits, new_state, weights


def bs_projected_keys(decoder, prev, state, memory, src_mask):
    keys = decoder.attention.project_keys(memory)
    query = state[-1].unsqueeze(1)  # last layer of (1, B, D)
    context, weights = decoder.attention(
        query, memory, memory, mask=src_mask[:, None, :], projected_keys=keys
    )
    y = decoder.embedding(prev.unsqueeze(1))
    output, state = decoder.rnn(torch.cat([y, context], -1), state)
    logits = decoder.out(torch.cat([output, context], -1)).squeeze(1)
    return logits, state, weights.squeeze(1)


def bs_einsum_context(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    _, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    weights = weights.squeeze(1)  # (B, S)
    context = torch.einsum("bs,bsd->bd", weights, memory).unsqueeze(1)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output.squeeze(1), context.squeeze(1)], dim=-1))
    return logits, state, weights


CASES = [
    BlindCase(
        CHECK,
        "luong_order",
        bs_luong_order,
        "mistake",
        "I ran the RNN first and used the new state s'_t as the query",
    ),
    BlindCase(
        CHECK,
        "no_source_mask",
        bs_no_mask,
        "mistake",
        "I did not pass the mask since the encoder's padding outputs are zeros",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        bs_mask_inverted,
        "mistake",
        "I passed ~src_mask, thinking True marks the padding",
    ),
    BlindCase(
        CHECK,
        "context_not_fed",
        bs_context_not_in_rnn,
        "mistake",
        "I fed only the embedding to the RNN (zeros for the context part)",
    ),
    BlindCase(
        CHECK,
        "logits_without_context",
        bs_logits_no_context,
        "mistake",
        "I computed the logits from the new state only",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        bs_softmax_over_batch,
        "mistake",
        "I wrote the scores by hand as (B, S) and took the softmax over dim=0",
    ),
    BlindCase(
        CHECK,
        "softmax_over_size_one",
        bs_softmax_size_one,
        "mistake",
        "I kept w_v's last axis of size 1 and took the softmax over it",
    ),
    BlindCase(
        CHECK,
        "state_as_query",
        bs_state_as_query,
        "mistake",
        "I passed the state (1, B, D) as the query without taking its last layer",
    ),
    BlindCase(
        CHECK,
        "out_input_swapped",
        bs_context_order_swapped,
        "mistake",
        "I concatenated [c_t; s'_t] for the output layer instead of [s'_t; c_t]",
    ),
    BlindCase(
        CHECK,
        "mean_context",
        bs_mean_context,
        "mistake",
        "I used the average of the real encoder states as the context",
    ),
    BlindCase(
        CHECK,
        "old_state_returned",
        bs_returns_old_state,
        "mistake",
        "I returned the state I was given instead of the RNN's new state",
    ),
    BlindCase(
        CHECK,
        "kept_time_axis",
        bs_weights_unsqueezed,
        "mistake",
        "I returned the logits (B, 1, V) and weights (B, 1, S) without squeezing",
    ),
    BlindCase(
        CHECK,
        "by_hand_bmm",
        bs_by_hand,
        "correct",
        "I wrote the additive score with W_q, W_k, w_v and used bmm for the context",
    ),
    BlindCase(
        CHECK,
        "projected_keys",
        bs_projected_keys,
        "correct",
        "I precomputed the projected keys and took state[-1] as the query",
    ),
    BlindCase(
        CHECK,
        "einsum_context",
        bs_einsum_context,
        "correct",
        "I took only the weights from the attention and built c_t with einsum",
    ),
]
