"""Blind set B30, check_bahdanau_step (chapter 7): one step of the attention decoder, as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bahdanau import BahdanauDecoder
from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


# ---------------------------------------------------------------- mistakes


def step_luong_order(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    y = decoder.embedding(prev).unsqueeze(1)  # (B, 1, E)
    blank = torch.zeros_like(memory[:, :1])  # no context yet
    output, state = decoder.rnn(torch.cat([y, blank], dim=-1), state)  # s'_t first
    context, weights = decoder.attention(output, memory, memory, mask=src_mask.unsqueeze(1))
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_no_mask(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = state[-1].unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory)  # padding is zeros anyway
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_mask_inverted(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = state[-1].unsqueeze(1)
    pad = ~src_mask  # the positions to hide
    context, weights = decoder.attention(query, memory, memory, mask=pad.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_previous_state_into_rnn(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = state[-1].unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, query], dim=-1), state)  # [y; s'_{t-1}]
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_softmax_over_batch(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    att = decoder.attention
    q = att.W_q(state[-1]).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).squeeze(-1)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=0))
    context = (weights.unsqueeze(-1) * memory).sum(1, keepdim=True)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights


def step_softmax_over_size_one(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    att = decoder.attention
    q = att.W_q(state[-1]).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory)))  # (B, S, 1)
    scores = scores.masked_fill(~src_mask.unsqueeze(-1), float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1))  # (B, S, 1)
    context = (weights * memory).sum(1, keepdim=True)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(-1)


def step_logits_from_previous_state(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = state[-1].unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, query], dim=-1))  # [s'_t; s'_{t-1}]
    return logits.squeeze(1), state, weights.squeeze(1)


def step_weights_unsqueezed(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = state[-1].unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights  # (B, 1, S)


def step_weights_before_state(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = state[-1].unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), weights.squeeze(1), state


def step_output_as_state(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = state[-1].unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), output, weights.squeeze(1)  # the output is the new state


def step_projected_keys_as_values(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    keys = decoder.attention.project_keys(memory)  # W_k s_i, computed once
    query = state[-1].unsqueeze(1)
    context, weights = decoder.attention(
        query, memory, keys, mask=src_mask.unsqueeze(1), projected_keys=keys
    )
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_query_last_encoder_state(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = memory[:, -1:]  # the encoder's last state asks the question
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_context_order_swapped(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = state[-1].unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([context, output], dim=-1))  # [c_t; s'_t]
    return logits.squeeze(1), state, weights.squeeze(1)


# ---------------------------------------------------------------- correct variants


def step_by_hand(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """The score written with W_q, W_k and w_v; -inf on the padding; bmm for the context."""
    att = decoder.attention
    s_prev = last_hidden(state)  # (B, D)
    feats = torch.tanh(att.W_q(s_prev).unsqueeze(1) + att.W_k(memory))  # (B, S, A)
    scores = att.w_v(feats).squeeze(-1).masked_fill(~src_mask, float("-inf"))  # (B, S)
    alpha = torch.softmax(scores, dim=-1)  # every source has a real token
    context = torch.bmm(alpha.unsqueeze(1), memory)  # (B, 1, D)
    y = decoder.embedding(prev)[:, None, :]
    output, new_state = decoder.rnn(torch.cat((y, context), -1), state)
    logits = decoder.out(torch.cat((output, context), -1))[:, 0]
    return logits, new_state, alpha


def step_einsum_with_keys(
    decoder: BahdanauDecoder,
    prev: Tensor,
    state: Tensor,
    memory: Tensor,
    src_mask: Tensor,
    keys: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Optional precomputed keys; the context as an einsum over the source positions."""
    att = decoder.attention
    keys = att.project_keys(memory) if keys is None else keys
    _, weights = att(
        last_hidden(state)[:, None], memory, memory, src_mask[:, None], projected_keys=keys
    )
    alpha = weights[:, 0]  # (B, S)
    context = torch.einsum("bs,bsd->bd", alpha, memory)  # (B, D)
    y = decoder.embedding(prev)  # (B, E)
    output, new_state = decoder.rnn(torch.cat([y, context], -1).unsqueeze(1), state)
    logits = decoder.out(torch.cat([output[:, 0], context], -1))
    return logits, new_state, alpha


def step_where_and_indexing(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """The query taken as the last layer by index, the weights via where()."""
    att = decoder.attention
    h = state[0] if isinstance(state, tuple) else state  # (layers, B, D)
    q = att.W_q(h[h.shape[0] - 1])[:, None, :]
    scores = att.w_v(torch.tanh(q + att.W_k(memory)))[..., 0]
    scores = torch.where(src_mask, scores, torch.full_like(scores, -torch.inf))
    alpha = scores.softmax(dim=1)
    context = (alpha[..., None] * memory).sum(dim=1, keepdim=True)
    emb = decoder.embedding(prev.view(-1, 1))  # (B, 1, E)
    output, new_state = decoder.rnn(torch.cat([emb, context], dim=2), state)
    logits = decoder.out(torch.cat([output, context], dim=2)).squeeze(1)
    return logits, new_state, alpha


CASES = [
    BlindCase(
        CHECK,
        "luong_order",
        step_luong_order,
        "mistake",
        "I ran the recurrent layer first (with a zero context) and used the new state s'_t "
        "as the query.",
    ),
    BlindCase(
        CHECK,
        "no_mask",
        step_no_mask,
        "mistake",
        "I did not pass the source mask, thinking the padded states are zeros anyway.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        step_mask_inverted,
        "mistake",
        "I passed ~src_mask, the padding positions, as the mask.",
    ),
    BlindCase(
        CHECK,
        "previous_state_into_rnn",
        step_previous_state_into_rnn,
        "mistake",
        "I fed [y; s'_{t-1}] into the recurrent layer instead of [y; c_t].",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        step_softmax_over_batch,
        "mistake",
        "I wrote the scores by hand as (B, S) and took the softmax with dim=0.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_size_one",
        step_softmax_over_size_one,
        "mistake",
        "My scores kept w_v's trailing axis (B, S, 1) and I took the softmax over it.",
    ),
    BlindCase(
        CHECK,
        "logits_from_previous_state",
        step_logits_from_previous_state,
        "mistake",
        "I built the logits from [s'_t; s'_{t-1}], leaving the context out.",
    ),
    BlindCase(
        CHECK,
        "weights_not_squeezed",
        step_weights_unsqueezed,
        "mistake",
        "I returned the weights as (B, 1, S), as the attention gives them.",
    ),
    BlindCase(
        CHECK,
        "returns_weights_before_state",
        step_weights_before_state,
        "mistake",
        "I return (logits, weights, state) instead of (logits, state, weights).",
    ),
    BlindCase(
        CHECK,
        "output_returned_as_state",
        step_output_as_state,
        "mistake",
        "I returned the GRU's output (B, 1, D) as the new state instead of its state (1, B, D).",
    ),
    BlindCase(
        CHECK,
        "projected_keys_as_values",
        step_projected_keys_as_values,
        "mistake",
        "I passed the projected keys W_k s_i as the values too, so the context mixes them "
        "instead of the encoder states.",
    ),
    BlindCase(
        CHECK,
        "query_is_last_encoder_state",
        step_query_last_encoder_state,
        "mistake",
        "I used memory[:, -1], the encoder's last state, as the query instead of s'_{t-1}.",
    ),
    BlindCase(
        CHECK,
        "context_first_in_logits",
        step_context_order_swapped,
        "mistake",
        "I concatenated [c_t; s'_t] for the output layer, the other order.",
    ),
    BlindCase(
        CHECK,
        "score_by_hand",
        step_by_hand,
        "correct",
        "The score written with W_q, W_k, w_v; -inf on the padding; bmm for the context.",
    ),
    BlindCase(
        CHECK,
        "einsum_and_keys",
        step_einsum_with_keys,
        "correct",
        "An optional keys argument; the context as an einsum over the source positions.",
    ),
    BlindCase(
        CHECK,
        "where_and_indexing",
        step_where_and_indexing,
        "correct",
        "The last layer picked by index, torch.where for the mask, embeddings of prev viewed "
        "as (B, 1).",
    ),
]
