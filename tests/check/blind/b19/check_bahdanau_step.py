"""Blind set B19, check_bahdanau_step (chapter 7): one step of the attention decoder."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.bahdanau import BahdanauDecoder
from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


# ---------------------------------------------------------------- mistakes


def step_luong_query(decoder: BahdanauDecoder, prev, state, memory, src_mask):
    y = decoder.embedding(prev).unsqueeze(1)  # (B, 1, E)
    c_old, _ = decoder.attention(last_hidden(state).unsqueeze(1), memory, memory, src_mask[:, None])
    output, state = decoder.rnn(torch.cat([y, c_old], dim=-1), state)  # (B, 1, D)
    # the new state asks the question for the context of this step
    context, weights = decoder.attention(output, memory, memory, mask=src_mask.unsqueeze(1))
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_no_mask(decoder: BahdanauDecoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory)  # every position, padding too
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_mask_inverted(decoder: BahdanauDecoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    pad = ~src_mask  # True at the padding, which is what must be masked
    context, weights = decoder.attention(query, memory, memory, mask=pad.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_context_not_in_rnn(decoder: BahdanauDecoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    rnn_in = torch.cat([y, torch.zeros_like(context)], dim=-1)  # the context goes to the output
    output, state = decoder.rnn(rnn_in, state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_softmax_over_batch(decoder: BahdanauDecoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state))  # (B, A)
    scores = att.w_v(torch.tanh(q.unsqueeze(1) + att.W_k(memory))).squeeze(-1)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    weights = torch.softmax(scores, dim=0)
    weights = torch.nan_to_num(weights)
    context = torch.bmm(weights.unsqueeze(1), memory)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights


def step_softmax_size_one(decoder: BahdanauDecoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).transpose(1, 2)  # (B, 1, S)
    scores = scores.masked_fill(~src_mask.unsqueeze(1), float("-inf"))
    weights = torch.softmax(scores, dim=1)  # dim 1, the one after the batch
    weights = torch.nan_to_num(weights)
    context = weights @ memory  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_logits_old_state(decoder: BahdanauDecoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, query], dim=-1))  # [s'_t; s'_{t-1}]
    return logits.squeeze(1), state, weights.squeeze(1)


def step_weights_unsqueezed(decoder: BahdanauDecoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights  # (B, 1, S) as attention returned it


def step_returns_output(decoder: BahdanauDecoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), output.squeeze(1), weights.squeeze(1)  # s'_t as (B, D)


def step_context_of_keys(decoder: BahdanauDecoder, prev, state, memory, src_mask):
    keys = decoder.attention.W_k(memory)  # (B, S, A), A = D here
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(
        query, memory, keys, mask=src_mask.unsqueeze(1), projected_keys=keys
    )  # sums the projected keys, not the states
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_concat_swapped(decoder: BahdanauDecoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([context, y], dim=-1), state)  # [c_t; y_{t-1}]
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


# ---------------------------------------------------------------- correct variants


def step_by_hand(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """The additive score written with W_q, W_k and w_v; masked_fill and bmm."""
    att = decoder.attention
    q = att.W_q(state[-1])  # (B, A)
    scores = att.w_v(torch.tanh(att.W_k(memory) + q[:, None, :])).squeeze(-1)  # (B, S)
    weights = scores.masked_fill(~src_mask, float("-inf")).softmax(dim=-1)  # (B, S)
    context = torch.bmm(weights.unsqueeze(1), memory)  # (B, 1, D)
    y = decoder.embedding(prev)[:, None]  # (B, 1, E)
    output, new_state = decoder.rnn(torch.cat((y, context), dim=2), state)
    logits = decoder.out(torch.cat((output, context), dim=2))[:, 0]
    return logits, new_state, weights


def step_transposed_state(decoder, prev, state, memory, src_mask, keys=None):
    """The query as state.transpose(0, 1); einsum for the context; an optional keys argument."""
    query = state.transpose(0, 1)  # (B, 1, D)
    _, weights = decoder.attention(query, memory, memory, src_mask[:, None, :], keys)
    weights = weights[:, 0]  # (B, S)
    context = torch.einsum("bs,bsd->bd", weights, memory)  # (B, D)
    y = decoder.embedding(prev)  # (B, E)
    output, state = decoder.rnn(torch.cat([y, context], -1).unsqueeze(1), state)
    logits = F.linear(torch.cat([output[:, 0], context], -1), decoder.out.weight, decoder.out.bias)
    return logits, state, weights


def step_where_weights(decoder, prev, state, memory, src_mask):
    """The mask made into (B, 1, S) with view; outputs squeezed with [:, -1]."""
    B, S = src_mask.shape
    context, weights = decoder.attention(
        last_hidden(state).view(B, 1, -1), memory, memory, src_mask.view(B, 1, S)
    )
    emb = decoder.embedding(prev.view(B, 1))  # (B, 1, E)
    output, new_state = decoder.rnn(torch.cat([emb, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))[:, -1]
    return logits, new_state, weights[:, -1]


CASES = [
    BlindCase(
        CHECK,
        "luong_query",
        step_luong_query,
        "mistake",
        "I ran the RNN first and used the new state s'_t as the query for this step's context.",
    ),
    BlindCase(
        CHECK, "no_mask", step_no_mask, "mistake", "I did not pass the source mask to attention."
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        step_mask_inverted,
        "mistake",
        "I passed ~src_mask, True at the padding.",
    ),
    BlindCase(
        CHECK,
        "context_not_in_rnn",
        step_context_not_in_rnn,
        "mistake",
        "I fed the RNN only the embedding (zeros for the context), using c_t just for the logits.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        step_softmax_over_batch,
        "mistake",
        "I wrote the scores (B, S) by hand and took the softmax over dim=0.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_size_one_axis",
        step_softmax_size_one,
        "mistake",
        "My scores were (B, 1, S) and I took the softmax over dim=1, the axis of size 1.",
    ),
    BlindCase(
        CHECK,
        "logits_without_context",
        step_logits_old_state,
        "mistake",
        "I built the logits from [s'_t; s'_{t-1}] instead of [s'_t; c_t].",
    ),
    BlindCase(
        CHECK,
        "weights_not_squeezed",
        step_weights_unsqueezed,
        "mistake",
        "I returned the weights as (B, 1, S), as the attention module gave them.",
    ),
    BlindCase(
        CHECK,
        "returns_output_as_state",
        step_returns_output,
        "mistake",
        "I returned the RNN's output (B, D) as the new state instead of its state (1, B, D).",
    ),
    BlindCase(
        CHECK,
        "context_of_projected_keys",
        step_context_of_keys,
        "mistake",
        "I passed the projected keys W_k s_i as the values, so c_t sums them.",
    ),
    BlindCase(
        CHECK,
        "concat_swapped",
        step_concat_swapped,
        "mistake",
        "I fed the RNN [c_t; y_{t-1}] instead of [y_{t-1}; c_t].",
    ),
    BlindCase(
        CHECK,
        "score_by_hand",
        step_by_hand,
        "correct",
        "The additive score from W_q, W_k and w_v by hand, masked_fill with -inf, bmm.",
    ),
    BlindCase(
        CHECK,
        "transposed_state_einsum",
        step_transposed_state,
        "correct",
        "The query as state.transpose(0, 1), einsum for c_t, F.linear for the logits, an "
        "optional keys argument.",
    ),
    BlindCase(
        CHECK,
        "view_shapes",
        step_where_weights,
        "correct",
        "Shapes made with view and [:, -1] instead of unsqueeze and squeeze.",
    ),
]
