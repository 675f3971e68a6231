"""Blind set B23, check_bahdanau_step (chapter 7): one step of the attention decoder, by readers."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _attend(decoder, query: Tensor, memory: Tensor, src_mask: Tensor) -> tuple[Tensor, Tensor]:
    """The chapter-6 module, used as the chapter allows: context (B, 1, D), weights (B, 1, S)."""
    return decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))


# ---------------------------------------------------------------- mistakes


def step_luong_query(decoder, prev, state, memory, src_mask):
    y = decoder.embedding(prev).unsqueeze(1)  # (B, 1, E)
    context, _ = _attend(decoder, last_hidden(state).unsqueeze(1), memory, src_mask)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)  # s'_t
    context, weights = _attend(decoder, output, memory, src_mask)  # s'_t asks for the output
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_no_mask(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory)  # every source position
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_query_into_rnn(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)  # (B, 1, D)
    context, weights = _attend(decoder, query, memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, query], dim=-1), state)  # [y_{t-1}; s'_{t-1}]
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_softmax_over_batch(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    s = last_hidden(state)  # (B, D)
    e = att.w_v(torch.tanh(att.W_q(s).unsqueeze(1) + att.W_k(memory))).squeeze(-1)  # (B, S)
    e = e.masked_fill(~src_mask, float("-inf"))
    weights = torch.softmax(e, dim=0).nan_to_num(0.0)
    context = torch.bmm(weights.unsqueeze(1), memory)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights


def step_softmax_size_one_axis(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    e = att.w_v(torch.tanh(q + att.W_k(memory))).transpose(1, 2)  # (B, 1, S)
    e = e.masked_fill(~src_mask.unsqueeze(1), float("-inf"))
    weights = torch.softmax(e, dim=1).nan_to_num(0.0)  # (B, 1, S)
    context = weights @ memory  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_logits_fixed_context(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state).unsqueeze(1), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    c = memory[:, -1:]  # (B, 1, D): the encoder's last state, as in chapter 4
    logits = decoder.out(torch.cat([output, c], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_logits_old_state(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = _attend(decoder, query, memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([query, context], dim=-1))  # from s'_{t-1} and c_t
    return logits.squeeze(1), state, weights.squeeze(1)


def step_context_first_in_rnn(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state).unsqueeze(1), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([context, y], dim=-1), state)  # [c_t; y_{t-1}]
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_context_first_in_out(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state).unsqueeze(1), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([context, output], dim=-1))  # [c_t; s'_t]
    return logits.squeeze(1), state, weights.squeeze(1)


def step_returns_rnn_output(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state).unsqueeze(1), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), output, weights.squeeze(1)  # the new state s'_t


def step_returns_old_state(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state).unsqueeze(1), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, new_state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_weights_not_squeezed(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state).unsqueeze(1), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights  # (B, 1, S)


def step_mask_not_unsqueezed(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask)  # (B, S)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


# ---------------------------------------------------------------- correct variants


def step_by_hand(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    s_prev = last_hidden(state)  # (B, D)
    features = torch.tanh(att.W_q(s_prev)[:, None, :] + att.W_k(memory))  # (B, S, A)
    e = att.w_v(features)[..., 0].masked_fill(~src_mask, float("-inf"))  # (B, S)
    has_key = src_mask.any(-1, keepdim=True)
    weights = e.masked_fill(~has_key, 0.0).softmax(dim=-1) * has_key  # (B, S)
    context = torch.einsum("bs,bsd->bd", weights, memory)  # (B, D)
    x = torch.cat([decoder.embedding(prev), context], dim=-1).unsqueeze(1)  # (B, 1, E + D)
    output, new_state = decoder.rnn(x, state)
    logits = decoder.out(torch.cat([output[:, 0], context], dim=-1))  # (B, V)
    return logits, new_state, weights


def step_projected_keys(decoder, prev, state, memory, src_mask):
    keys = decoder.attention.project_keys(memory)  # W_k s_i
    context, weights = decoder.attention(
        last_hidden(state)[:, None], memory, memory, mask=src_mask[:, None], projected_keys=keys
    )
    rnn_in = torch.cat([decoder.embedding(prev[:, None]), context], dim=2)
    output, state = decoder.rnn(rnn_in, state)
    logits = decoder.out(torch.cat([output, context], dim=2))[:, 0]
    return logits, state, weights[:, 0]


def step_split_out_weight(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state).unsqueeze(1), memory, src_mask)
    context, weights = context.squeeze(1), weights.squeeze(1)  # (B, D), (B, S)
    y = decoder.embedding(prev)  # (B, E)
    output, state = decoder.rnn(torch.cat([y, context], dim=1).unsqueeze(1), state)
    D = context.shape[-1]
    W, b = decoder.out.weight, decoder.out.bias  # (V, 2D): the s' half, then the c half
    logits = F.linear(output.squeeze(1), W[:, :D]) + F.linear(context, W[:, D:], b)
    return logits, state, weights


CASES = [
    BlindCase(
        CHECK,
        "luong_query",
        step_luong_query,
        "mistake",
        "I ran the RNN first and let the new state s'_t ask for the context of the output",
    ),
    BlindCase(
        CHECK, "no_mask", step_no_mask, "mistake", "I called the attention without the source mask"
    ),
    BlindCase(
        CHECK,
        "query_into_rnn",
        step_query_into_rnn,
        "mistake",
        "I concatenated the query s'_{t-1} with y instead of the context c_t",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        step_softmax_over_batch,
        "mistake",
        "I wrote the scores (B, S) by hand and took the softmax over dim=0",
    ),
    BlindCase(
        CHECK,
        "softmax_size_one_axis",
        step_softmax_size_one_axis,
        "mistake",
        "my scores were (B, 1, S) and I took the softmax over dim=1",
    ),
    BlindCase(
        CHECK,
        "logits_fixed_context",
        step_logits_fixed_context,
        "mistake",
        "for the logits I kept chapter 4's c = memory[:, -1] instead of c_t",
    ),
    BlindCase(
        CHECK,
        "logits_old_state",
        step_logits_old_state,
        "mistake",
        "I built the logits from [s'_{t-1}; c_t], the query, not the new state",
    ),
    BlindCase(
        CHECK,
        "context_first_in_rnn",
        step_context_first_in_rnn,
        "mistake",
        "I fed the RNN [c_t; y_{t-1}] instead of [y_{t-1}; c_t]",
    ),
    BlindCase(
        CHECK,
        "context_first_in_out",
        step_context_first_in_out,
        "mistake",
        "I fed out [c_t; s'_t] instead of [s'_t; c_t]",
    ),
    BlindCase(
        CHECK,
        "returns_rnn_output",
        step_returns_rnn_output,
        "mistake",
        "I returned the RNN's output (B, 1, D) as the new state",
    ),
    BlindCase(
        CHECK,
        "returns_old_state",
        step_returns_old_state,
        "mistake",
        "I returned the state I was given instead of the RNN's new one",
    ),
    BlindCase(
        CHECK,
        "weights_not_squeezed",
        step_weights_not_squeezed,
        "mistake",
        "I returned the weights as (B, 1, S)",
    ),
    BlindCase(
        CHECK,
        "mask_not_unsqueezed",
        step_mask_not_unsqueezed,
        "mistake",
        "I passed src_mask (B, S) to the attention without the query axis",
    ),
    BlindCase(
        CHECK,
        "by_hand",
        step_by_hand,
        "correct",
        "the score by hand with W_q, W_k, w_v, an einsum for c_t, a guard for empty rows",
    ),
    BlindCase(
        CHECK,
        "projected_keys",
        step_projected_keys,
        "correct",
        "decoder.attention with projected_keys computed first, indexing with None",
    ),
    BlindCase(
        CHECK,
        "split_out_weight",
        step_split_out_weight,
        "correct",
        "the logits as two F.linear on the halves of out.weight",
    ),
]
