"""Blind cases for check_bahdanau_step (chapter 7), written from the chapter's text only."""

from __future__ import annotations

import torch

from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _finish(decoder, prev, state, context):
    """Embed, run the recurrent layer on [y; c], logits from [s'; c] (all (B, 1, .))."""
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state


def no_mask(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def mask_inverted(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    pad = ~src_mask  # True where padding, to be masked
    context, weights = decoder.attention(query, memory, memory, mask=pad.unsqueeze(1))
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def context_before_embedding(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([context, y], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def context_first_in_logits(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([context, output], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def weights_not_squeezed(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights  # (B, 1, S) as attention returns it


def softmax_on_query_axis(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    k = att.W_k(memory)  # (B, S, A)
    scores = att.w_v(torch.tanh(q + k)).transpose(1, 2)  # (B, 1, S)
    scores = scores.masked_fill(~src_mask.unsqueeze(1), float("-inf"))
    weights = torch.softmax(scores, dim=1)
    context = weights @ memory  # (B, 1, D)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def projected_keys_as_values(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    keys = att.project_keys(memory)  # W_k s_i, (B, S, A)
    query = last_hidden(state).unsqueeze(1)
    context, weights = att(query, memory, keys, mask=src_mask.unsqueeze(1), projected_keys=keys)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def scores_by_hand(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    s_prev = last_hidden(state)  # (B, D)
    features = torch.tanh(att.W_q(s_prev)[:, None, :] + att.W_k(memory))  # (B, S, A)
    scores = att.w_v(features).squeeze(-1)  # (B, S)
    weights = torch.softmax(scores.masked_fill(~src_mask, float("-inf")), dim=-1)  # (B, S)
    context = torch.einsum("bs,bsd->bd", weights, memory)  # (B, D)
    y = decoder.embedding(prev)  # (B, E)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1).unsqueeze(1), state)
    logits = decoder.out(torch.cat([output.squeeze(1), context], dim=-1))
    return logits, state, weights


def precomputed_keys(decoder, prev, state, memory, src_mask, keys=None):
    if keys is None:
        keys = decoder.attention.project_keys(memory)
    query = last_hidden(state)[:, None]
    mask = src_mask[:, None, :]
    context, weights = decoder.attention(query, memory, memory, mask=mask, projected_keys=keys)
    y = decoder.embedding(prev[:, None])  # (B, 1, E)
    output, new_state = decoder.rnn(torch.cat((y, context), dim=2), state)
    logits = decoder.out(torch.cat((output, context), dim=2))[:, 0]
    return logits, new_state, weights[:, 0]


CASES = [
    BlindCase(
        CHECK,
        "no_mask",
        no_mask,
        "mistake",
        "I called decoder.attention without the source mask",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        mask_inverted,
        "mistake",
        "I passed ~src_mask, thinking the attention wants True at the padding",
    ),
    BlindCase(
        CHECK,
        "context_before_embedding",
        context_before_embedding,
        "mistake",
        "I fed [c_t; y_{t-1}] to the recurrent layer instead of [y_{t-1}; c_t]",
    ),
    BlindCase(
        CHECK,
        "context_first_in_logits",
        context_first_in_logits,
        "mistake",
        "I computed the logits from [c_t; s'_t] instead of [s'_t; c_t]",
    ),
    BlindCase(
        CHECK,
        "weights_not_squeezed",
        weights_not_squeezed,
        "mistake",
        "I returned the weights as attention gives them, (B, 1, S)",
    ),
    BlindCase(
        CHECK,
        "softmax_on_query_axis",
        softmax_on_query_axis,
        "mistake",
        "I wrote the scores by hand as (B, 1, S) and took softmax(dim=1)",
    ),
    BlindCase(
        CHECK,
        "projected_keys_as_values",
        projected_keys_as_values,
        "mistake",
        "I computed W_k s_i once and passed it as the values too, so c_t mixes projected keys",
    ),
    BlindCase(
        CHECK,
        "scores_by_hand",
        scores_by_hand,
        "correct",
        "I wrote the additive score with W_q, W_k, w_v on (B, S) and an einsum context",
    ),
    BlindCase(
        CHECK,
        "precomputed_keys",
        precomputed_keys,
        "correct",
        "I pass projected_keys to the attention, with an optional keys argument like the book's",
    ),
]
