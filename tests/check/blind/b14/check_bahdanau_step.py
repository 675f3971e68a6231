"""Blind set B14, check_bahdanau_step (chapter 7): one step of the attention decoder."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.attention import masked_softmax
from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _finish(decoder, prev, state, context):
    """From the context (B, 1, D): run the GRU on [y; c] and the output layer on [s'; c]."""
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state


# ---------------------------------------------------------------- mistakes


def bd_luong_query(decoder, prev, state, memory, src_mask):
    y = decoder.embedding(prev).unsqueeze(1)
    zeros = torch.zeros_like(memory[:, :1])
    output, new_state = decoder.rnn(torch.cat([y, zeros], dim=-1), state)  # step first
    context, w = decoder.attention(output, memory, memory, mask=src_mask.unsqueeze(1))
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), new_state, w.squeeze(1)


def bd_no_mask(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, w = decoder.attention(query, memory, memory)  # padding is zeros anyway
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, w.squeeze(1)


def bd_mask_polarity(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, w = decoder.attention(query, memory, memory, mask=~src_mask.unsqueeze(1))
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, w.squeeze(1)


def bd_state_instead_of_context(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, w = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, query], dim=-1), state)  # the GRU gets s'_{t-1}
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, w.squeeze(1)


def bd_softmax_over_batch(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).squeeze(-1)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    w = torch.softmax(scores, dim=0)  # over the batch
    w = torch.nan_to_num(w)
    context = (w.unsqueeze(-1) * memory).sum(dim=1, keepdim=True)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, w


def bd_softmax_size_one(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)
    scores = att.w_v(torch.tanh(q + att.W_k(memory)))  # (B, S, 1)
    scores = scores.masked_fill(~src_mask.unsqueeze(-1), float("-inf"))
    w = torch.nan_to_num(torch.softmax(scores, dim=-1)).squeeze(-1)  # softmax over the last axis
    context = torch.bmm(w.unsqueeze(1), memory)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, w


def bd_logits_without_context(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, w = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, output], dim=-1))  # out needs 2D inputs
    return logits.squeeze(1), state, w.squeeze(1)


def bd_logits_cat_swapped(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, w = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([context, output], dim=-1))  # [c_t; s'_t]
    return logits.squeeze(1), state, w.squeeze(1)


def bd_returns_output(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, w = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), output, w.squeeze(1)  # the GRU's output is its new state


def bd_mean_memory_query(decoder, prev, state, memory, src_mask):
    m = src_mask.unsqueeze(-1).to(memory.dtype)
    query = ((memory * m).sum(1) / m.sum(1)).unsqueeze(1)  # the source summary asks
    context, w = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, w.squeeze(1)


def bd_weights_unsqueezed(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, w = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, w  # (B, 1, S), as attention returned it


# ---------------------------------------------------------------- correct variants


def bd_by_hand(decoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor):
    att = decoder.attention
    q = att.W_q(last_hidden(state))[:, None, :]  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).squeeze(-1)  # (B, S)
    weights = masked_softmax(scores, src_mask)  # (B, S)
    context = torch.einsum("bs,bsd->bd", weights, memory)[:, None, :]  # (B, 1, D)
    y = decoder.embedding(prev)[:, None, :]
    output, new_state = decoder.rnn(torch.cat((y, context), dim=2), state)
    logits = decoder.out(torch.cat((output, context), dim=2))[:, 0]
    return logits, new_state, weights


def bd_projected_keys(decoder, prev, state, memory, src_mask, keys: Tensor | None = None):
    if keys is None:
        keys = decoder.attention.project_keys(memory)
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(
        query, memory, memory, mask=src_mask[:, None, :], projected_keys=keys
    )
    y = decoder.embedding(prev.view(-1, 1))  # (B, 1, E)
    output, state = decoder.rnn(torch.cat([y, context], -1), state)
    return decoder.out(torch.cat([output, context], -1)).squeeze(1), state, weights[:, 0]


def bd_bmm_context(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    _, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    context = torch.bmm(weights, memory)  # (B, 1, D), the same sum written out
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output.squeeze(1), context.squeeze(1)], dim=-1))
    return logits, state, weights.squeeze(1)


CASES = [
    BlindCase(
        CHECK,
        "luong_query",
        bd_luong_query,
        "mistake",
        "I ran the GRU first (with a zero context) and used the new state s'_t as the query.",
    ),
    BlindCase(
        CHECK,
        "no_mask",
        bd_no_mask,
        "mistake",
        "I did not pass the source mask, thinking the padded states are zeros.",
    ),
    BlindCase(
        CHECK,
        "mask_polarity",
        bd_mask_polarity,
        "mistake",
        "I passed ~src_mask, treating True as padding.",
    ),
    BlindCase(
        CHECK,
        "state_instead_of_context",
        bd_state_instead_of_context,
        "mistake",
        "I fed [y; s'_{t-1}] to the GRU instead of [y; c_t].",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        bd_softmax_over_batch,
        "mistake",
        "Writing the score by hand, I took the softmax over dim=0, the batch.",
    ),
    BlindCase(
        CHECK,
        "softmax_size_one",
        bd_softmax_size_one,
        "mistake",
        "I kept the scores (B, S, 1) and took the softmax over the last axis, of size 1.",
    ),
    BlindCase(
        CHECK,
        "logits_without_context",
        bd_logits_without_context,
        "mistake",
        "I fed [s'_t; s'_t] to out, leaving the context out of the logits.",
    ),
    BlindCase(
        CHECK,
        "logits_cat_swapped",
        bd_logits_cat_swapped,
        "mistake",
        "I concatenated [c_t; s'_t] for the output layer instead of [s'_t; c_t].",
    ),
    BlindCase(
        CHECK,
        "returns_output",
        bd_returns_output,
        "mistake",
        "I returned the GRU's output (B, 1, D) as the new state instead of its state.",
    ),
    BlindCase(
        CHECK,
        "mean_memory_query",
        bd_mean_memory_query,
        "mistake",
        "I used the mean of the real encoder states as the query.",
    ),
    BlindCase(
        CHECK,
        "weights_unsqueezed",
        bd_weights_unsqueezed,
        "mistake",
        "I returned the weights (B, 1, S) as the attention module gave them.",
    ),
    BlindCase(
        CHECK,
        "by_hand",
        bd_by_hand,
        "correct",
        "The score written with W_q, W_k and w_v, the book's masked_softmax, einsum.",
    ),
    BlindCase(
        CHECK,
        "projected_keys",
        bd_projected_keys,
        "correct",
        "An extra keys argument defaulting to None, computed with project_keys.",
    ),
    BlindCase(
        CHECK,
        "bmm_context",
        bd_bmm_context,
        "correct",
        "The context recomputed as bmm(weights, memory); squeezed before out.",
    ),
]
