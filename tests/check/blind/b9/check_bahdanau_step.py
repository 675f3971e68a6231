"""Blind set B9, check_bahdanau_step (chapter 7): one step of the attention decoder."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"

# ---------------------------------------------------------------- mistakes


def step_luong_query(decoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor):
    mask = src_mask.unsqueeze(1)
    query = last_hidden(state).unsqueeze(1)
    context, _ = decoder.attention(query, memory, memory, mask=mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    # Luong: attend again with the new state, for the output and the weights
    context, weights = decoder.attention(output, memory, memory, mask=mask)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_no_mask(decoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory)  # padding is zeros anyway
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_context_not_in_rnn(decoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    rnn_in = torch.cat([y, torch.zeros_like(context)], dim=-1)  # context only for the output
    output, state = decoder.rnn(rnn_in, state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_softmax_over_batch(decoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).squeeze(-1)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    weights = torch.softmax(scores, dim=0)  # over dim 0
    weights = torch.nan_to_num(weights)
    context = torch.bmm(weights.unsqueeze(1), memory)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights


def step_softmax_over_size_one_axis(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).transpose(1, 2)  # (B, 1, S)
    scores = scores.masked_fill(~src_mask.unsqueeze(1), float("-inf"))
    weights = torch.softmax(scores, dim=1)  # dim=1, after the transpose that axis has size 1
    weights = torch.nan_to_num(weights)
    context = weights @ memory  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_old_state_in_output(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, query], dim=-1))  # s'_{t-1} where c_t belongs
    return logits.squeeze(1), state, weights.squeeze(1)


def step_mask_polarity(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    pad = ~src_mask  # the mask marks the padding
    context, weights = decoder.attention(query, memory, memory, mask=pad.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_returns_output_as_state(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), output, weights.squeeze(1)  # the GRU's output is its state


def step_weights_not_squeezed(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights  # (B, 1, S)


def step_projected_keys_as_values(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    keys = decoder.attention.project_keys(memory)
    context, weights = decoder.attention(query, memory, keys, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_query_last_encoder_state(decoder, prev, state, memory, src_mask):
    lengths = src_mask.sum(1)
    query = memory[torch.arange(len(memory)), lengths - 1].unsqueeze(1)  # last real s_i
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


# ---------------------------------------------------------------- correct variants


def step_manual_scores(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    s_prev = state[-1]  # (B, D): the last layer
    scores = att.w_v(torch.tanh(att.W_q(s_prev).unsqueeze(1) + att.W_k(memory))).squeeze(-1)
    weights = torch.softmax(scores.masked_fill(~src_mask, float("-inf")), dim=-1)  # (B, S)
    context = torch.einsum("bs,bsd->bd", weights, memory)  # (B, D)
    y = decoder.embedding(prev)  # (B, E)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1).unsqueeze(1), state)
    logits = decoder.out(torch.cat([output.squeeze(1), context], dim=-1))
    return logits, state, weights


def step_precomputed_keys(decoder, prev, state, memory, src_mask, keys=None):
    if keys is None:
        keys = decoder.attention.project_keys(memory)
    query = last_hidden(state)[:, None, :]
    context, weights = decoder.attention(
        query, memory, memory, mask=src_mask[:, None, :], projected_keys=keys
    )
    rnn_in = torch.cat([decoder.embedding(prev)[:, None, :], context], dim=2)
    output, new_state = decoder.rnn(rnn_in, state)
    logits = decoder.out(torch.cat([output, context], dim=2))[:, 0]
    return logits, new_state, weights[:, 0]


def step_bmm_context(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    _, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    context = torch.bmm(weights, memory)  # (B, 1, D), the same weighted sum
    y = decoder.embedding(prev.view(-1, 1))  # (B, 1, E)
    output, state = decoder.rnn(torch.cat((y, context), -1), state)
    logits = decoder.out(torch.cat((output, context), -1)).squeeze(1)
    return logits, state, weights.squeeze(1)


def step_state_transposed_query(decoder, prev, state, memory, src_mask):
    query = state.transpose(0, 1)  # (1, B, D) -> (B, 1, D): one layer, one query per row
    context, weights = decoder.attention(query, memory, memory, mask=src_mask[:, None])
    y = decoder.embedding(prev[:, None])  # (B, 1, E)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits[:, 0], state, weights[:, 0]


CASES = [
    BlindCase(
        CHECK,
        "luong_new_state_query",
        step_luong_query,
        "mistake",
        "I attended a second time with the new state s'_t as the query (Luong's order) "
        "and used that context and those weights for the output.",
    ),
    BlindCase(
        CHECK,
        "no_source_mask",
        step_no_mask,
        "mistake",
        "I called the attention without the mask because I thought the encoder's padded "
        "outputs were zeros.",
    ),
    BlindCase(
        CHECK,
        "context_not_fed_to_rnn",
        step_context_not_in_rnn,
        "mistake",
        "I fed [y; 0] to the GRU and used the context only in the output layer.",
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
        step_softmax_over_size_one_axis,
        "mistake",
        "I transposed the scores to (B, 1, S) and took softmax(dim=1), an axis of size "
        "1, so every weight is 1.",
    ),
    BlindCase(
        CHECK,
        "old_state_instead_of_context_in_output",
        step_old_state_in_output,
        "mistake",
        "I fed [s'_t; s'_{t-1}] to the output layer instead of [s'_t; c_t].",
    ),
    BlindCase(
        CHECK,
        "mask_polarity",
        step_mask_polarity,
        "mistake",
        "I passed ~src_mask, thinking the mask marks the padding.",
    ),
    BlindCase(
        CHECK,
        "rnn_output_returned_as_state",
        step_returns_output_as_state,
        "mistake",
        "I returned the GRU's output (B, 1, D) as the new state instead of its state (1, B, D).",
    ),
    BlindCase(
        CHECK,
        "weights_keep_query_axis",
        step_weights_not_squeezed,
        "mistake",
        "I returned the weights as (B, 1, S) without squeezing the query axis.",
    ),
    BlindCase(
        CHECK,
        "projected_keys_as_values",
        step_projected_keys_as_values,
        "mistake",
        "I passed the projected keys W_k s_i as the values, so the context is a mix of "
        "W_k s_i instead of s_i.",
    ),
    BlindCase(
        CHECK,
        "last_encoder_state_as_query",
        step_query_last_encoder_state,
        "mistake",
        "I used the encoder's last real state as the query instead of the decoder's "
        "previous state.",
    ),
    BlindCase(
        CHECK,
        "manual_scores_einsum",
        step_manual_scores,
        "correct",
        "I wrote the score with W_q, W_k and w_v, took the -inf masked softmax and the "
        "context with einsum, working in (B, ...) shapes.",
    ),
    BlindCase(
        CHECK,
        "precomputed_keys_argument",
        step_precomputed_keys,
        "correct",
        "I added an optional keys argument (projected once) and used [:, None] and [:, 0] "
        "instead of unsqueeze and squeeze.",
    ),
    BlindCase(
        CHECK,
        "state_transposed_as_query",
        step_state_transposed_query,
        "correct",
        "I made the query by transposing the (1, B, D) state to (B, 1, D) (one layer) and "
        "embedded prev[:, None] directly.",
    ),
    BlindCase(
        CHECK,
        "bmm_context",
        step_bmm_context,
        "correct",
        "I took only the weights from decoder.attention and computed the context with torch.bmm.",
    ),
]
