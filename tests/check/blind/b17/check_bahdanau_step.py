"""Blind set B17, check_bahdanau_step (chapter 7): one step of the Bahdanau decoder as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.attention import masked_softmax

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _scores(decoder, query: Tensor, memory: Tensor) -> Tensor:
    """Additive scores of queries (B, D) against memory (B, S, D), shape (B, S)."""
    att = decoder.attention
    hidden = torch.tanh(att.W_q(query).unsqueeze(1) + att.W_k(memory))  # (B, S, A)
    return att.w_v(hidden).squeeze(-1)  # (B, S)


# ---------------------------------------------------------------- mistakes


def step_luong_order(decoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor):
    y = decoder.embedding(prev).unsqueeze(1)  # (B, 1, E)
    no_context = memory.new_zeros(memory.shape[0], 1, memory.shape[-1])  # c_t is not known yet
    output, state = decoder.rnn(torch.cat([y, no_context], dim=-1), state)  # s'_t first
    context, weights = decoder.attention(output, memory, memory, mask=src_mask.unsqueeze(1))
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_no_mask(decoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor):
    query = state[-1].unsqueeze(1)  # (B, 1, D)
    context, weights = decoder.attention(query, memory, memory)  # padding outputs are zeros
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_mask_inverted(decoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor):
    query = state[-1].unsqueeze(1)
    pad = ~src_mask  # True where the source is padding
    context, weights = decoder.attention(query, memory, memory, mask=pad.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_state_fed_not_context(
    decoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
):
    query = state[-1].unsqueeze(1)  # (B, 1, D)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, query], dim=-1), state)  # [y; s'_{t-1}]
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_softmax_over_batch(decoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor):
    scores = _scores(decoder, state[-1], memory)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    weights = torch.softmax(scores, dim=0)
    weights = torch.nan_to_num(weights)
    context = (weights.unsqueeze(-1) * memory).sum(dim=1, keepdim=True)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights


def step_softmax_size_one_axis(
    decoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
):
    scores = _scores(decoder, state[-1], memory).unsqueeze(1)  # (B, 1, S)
    scores = scores.masked_fill(~src_mask.unsqueeze(1), float("-inf"))
    weights = torch.softmax(scores, dim=1)  # dim 1: the source axis of memory (B, S, D)
    weights = torch.nan_to_num(weights)
    context = weights @ memory  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_logits_with_old_state(
    decoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
):
    query = state[-1].unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, query], dim=-1))  # new and previous state
    return logits.squeeze(1), state, weights.squeeze(1)


def step_weights_not_squeezed(
    decoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
):
    query = state[-1].unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights  # (B, 1, S), as the attention returns them


def step_returns_output(decoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor):
    query = state[-1].unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), output, weights.squeeze(1)  # output and state hold s'_t alike


def step_context_from_keys(decoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor):
    keys = decoder.attention.project_keys(memory)  # (B, S, A)
    scores = _scores(decoder, state[-1], memory)
    weights = masked_softmax(scores, src_mask)  # (B, S)
    context = torch.bmm(weights.unsqueeze(1), keys)  # the weighted sum of the keys
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights


def step_mean_context(decoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor):
    query = state[-1].unsqueeze(1)
    _, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    real = src_mask.unsqueeze(-1).to(memory.dtype)
    context = ((memory * real).sum(1) / real.sum(1)).unsqueeze(1)  # average of the real states
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


# ---------------------------------------------------------------- correct variants


def step_by_hand(decoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor):
    """The score written with W_q, W_k and w_v; the masked softmax of chapter 6."""
    s_prev = state[0] if isinstance(state, tuple) else state  # (1, B, D)
    scores = _scores(decoder, s_prev[-1], memory)  # (B, S)
    weights = masked_softmax(scores, src_mask)  # (B, S)
    context = torch.einsum("bs,bsd->bd", weights, memory)  # (B, D)
    y = decoder.embedding(prev)  # (B, E)
    output, new_state = decoder.rnn(torch.cat([y, context], dim=-1).unsqueeze(1), state)
    logits = decoder.out(torch.cat([output.squeeze(1), context], dim=-1))  # (B, V)
    return logits, new_state, weights


def step_projected_keys(decoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor):
    """Keys projected once with project_keys, the mask as (B, 1, S), bmm-free indexing."""
    keys = decoder.attention.project_keys(memory)
    query = state[-1][:, None, :]
    context, weights = decoder.attention(
        query, memory, memory, mask=src_mask[:, None, :], projected_keys=keys
    )
    y = decoder.embedding(prev)[:, None, :]
    rnn_in = torch.cat((y, context), dim=2)
    output, state = decoder.rnn(rnn_in, state)
    logits = decoder.out(torch.cat((output, context), dim=2))[:, 0]
    return logits, state, weights[:, 0]


def step_where_softmax(decoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor):
    """softmax with torch.where, context via bmm, the new state taken from the GRU's output."""
    scores = _scores(decoder, state.squeeze(0), memory)  # (B, S)
    scores = torch.where(src_mask, scores, torch.full_like(scores, float("-inf")))
    weights = torch.softmax(scores, dim=-1)  # every source has at least one real token
    context = torch.bmm(weights.unsqueeze(1), memory)  # (B, 1, D)
    y = decoder.embedding(prev.unsqueeze(1))  # (B, 1, E)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    new_state = output.transpose(0, 1).contiguous()  # (1, B, D): one GRU layer
    logits = decoder.out(torch.cat([output, context], dim=-1)).squeeze(1)
    return logits, new_state, weights


CASES = [
    BlindCase(
        CHECK,
        "luong_order",
        step_luong_order,
        "mistake",
        "I ran the GRU first (with a zero context, since c_t was not known yet) and attended "
        "with the new state s'_t, as in Luong's decoder.",
    ),
    BlindCase(
        CHECK,
        "no_mask",
        step_no_mask,
        "mistake",
        "I called the attention without the mask, trusting the padded encoder outputs to be zeros.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        step_mask_inverted,
        "mistake",
        "I passed ~src_mask, the padding, as the attention mask.",
    ),
    BlindCase(
        CHECK,
        "state_fed_not_context",
        step_state_fed_not_context,
        "mistake",
        "I fed [y; s'_{t-1}] into the GRU instead of [y; c_t]; the context only reaches the logits.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        step_softmax_over_batch,
        "mistake",
        "I wrote the scores as (B, S) by hand and took the softmax over dim=0, the batch.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_size_one_axis",
        step_softmax_size_one_axis,
        "mistake",
        "I took the softmax of the (B, 1, S) scores over dim=1, the axis of size 1, so every "
        "weight is 1.",
    ),
    BlindCase(
        CHECK,
        "logits_without_context",
        step_logits_with_old_state,
        "mistake",
        "I computed the logits from [s'_t; s'_{t-1}] instead of [s'_t; c_t].",
    ),
    BlindCase(
        CHECK,
        "weights_not_squeezed",
        step_weights_not_squeezed,
        "mistake",
        "I returned the weights as (B, 1, S), the shape the attention gives, not (B, S).",
    ),
    BlindCase(
        CHECK,
        "returns_gru_output_as_state",
        step_returns_output,
        "mistake",
        "I returned the GRU's output (B, 1, D) as the new state instead of its state (1, B, D).",
    ),
    BlindCase(
        CHECK,
        "context_from_projected_keys",
        step_context_from_keys,
        "mistake",
        "I took the weighted sum of the projected keys W_k s_i instead of the encoder states s_i.",
    ),
    BlindCase(
        CHECK,
        "context_is_mean",
        step_mean_context,
        "mistake",
        "I computed the weights but used the average of the real encoder states as the context.",
    ),
    BlindCase(
        CHECK,
        "score_by_hand",
        step_by_hand,
        "correct",
        "The score written with W_q, W_k and w_v, chapter 6's masked_softmax, einsum for the "
        "context, tensors kept (B, ...) until the GRU.",
    ),
    BlindCase(
        CHECK,
        "projected_keys_once",
        step_projected_keys,
        "correct",
        "decoder.attention with projected_keys from project_keys, None-indexing instead of "
        "unsqueeze.",
    ),
    BlindCase(
        CHECK,
        "where_softmax_bmm",
        step_where_softmax,
        "correct",
        "A torch.where softmax (every source has a real token), bmm for the context, and the new "
        "state read from the one-layer GRU's output.",
    ),
]
