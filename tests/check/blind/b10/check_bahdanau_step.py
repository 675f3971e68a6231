"""Blind set B10, check_bahdanau_step (chapter 7): one step of the Bahdanau decoder as readers
write it, with the decoder's layers in the place of ``self``."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bahdanau import BahdanauDecoder

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _attend(decoder: BahdanauDecoder, query: Tensor, memory: Tensor, src_mask: Tensor):
    """The right context and weights for a query ``(B, D)``: ``(B, 1, D)``, ``(B, 1, S)``."""
    return decoder.attention(query.unsqueeze(1), memory, memory, mask=src_mask.unsqueeze(1))


# ---------------------------------------------------------------- mistakes


def step_luong_query(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    y = decoder.embedding(prev).unsqueeze(1)  # (B, 1, E)
    old_context, _ = _attend(decoder, state[-1], memory, src_mask)
    output, new_state = decoder.rnn(torch.cat([y, old_context], dim=-1), state)
    context, weights = _attend(decoder, new_state[-1], memory, src_mask)  # ask with s'_t
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), new_state, weights.squeeze(1)


def step_no_mask(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = state[-1].unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory)  # (B, 1, D), (B, 1, S)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_mask_inverted(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    pad = ~src_mask  # the positions to block
    context, weights = decoder.attention(state[-1].unsqueeze(1), memory, memory, mask=pad[:, None])
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_state_fed_as_context(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = state[-1].unsqueeze(1)  # (B, 1, D)
    context, weights = _attend(decoder, state[-1], memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, query], dim=-1), state)  # [y; s'_{t-1}]
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_rnn_input_order(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    context, weights = _attend(decoder, state[-1], memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([context, y], dim=-1), state)  # [c_t; y_{t-1}]
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_logits_order(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    context, weights = _attend(decoder, state[-1], memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([context, output], dim=-1))  # [c_t; s'_t]
    return logits.squeeze(1), state, weights.squeeze(1)


def step_logits_without_context(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = state[-1].unsqueeze(1)
    context, weights = _attend(decoder, state[-1], memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, query], dim=-1))  # [s'_t; s'_{t-1}]
    return logits.squeeze(1), state, weights.squeeze(1)


def step_softmax_over_batch(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    att = decoder.attention
    q = att.W_q(state[-1]).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).squeeze(-1)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    weights = torch.softmax(scores, dim=0)
    weights = torch.nan_to_num(weights)
    context = torch.bmm(weights.unsqueeze(1), memory)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights


def step_softmax_over_size_one_axis(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    att = decoder.attention
    q = att.W_q(state.transpose(0, 1))  # (B, 1, A)
    scores = att.w_v(torch.tanh(q.unsqueeze(2) + att.W_k(memory).unsqueeze(1))).squeeze(-1)
    scores = scores.masked_fill(~src_mask.unsqueeze(1), float("-inf"))  # (B, 1, S)
    weights = torch.softmax(scores, dim=1)
    context = weights @ memory  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_returns_old_state(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    context, weights = _attend(decoder, state[-1], memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, new_state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_state_from_output(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    context, weights = _attend(decoder, state[-1], memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), output.squeeze(1), weights.squeeze(1)  # the new state (B, D)


def step_weights_not_squeezed(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    context, weights = _attend(decoder, state[-1], memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights  # (B, 1, S), as attention returned it


# ---------------------------------------------------------------- correct variants


def step_transpose_query(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = state.transpose(0, 1)  # (1, B, D) -> (B, 1, D): one layer
    keys = decoder.attention.project_keys(memory)
    context, weights = decoder.attention(
        query, memory, memory, mask=src_mask[:, None, :], projected_keys=keys
    )
    rnn_in = torch.cat((decoder.embedding(prev[:, None]), context), dim=2)
    output, new_state = decoder.rnn(rnn_in, state)
    logits = decoder.out(torch.cat((output, context), dim=2))[:, 0]
    return logits, new_state, weights[:, 0]


def step_by_hand(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """The score written with W_q, W_k and w_v; the masked softmax and the context by hand."""
    att = decoder.attention
    s_prev = state[-1]  # (B, D)
    e = att.w_v(torch.tanh(att.W_q(s_prev)[:, None, :] + att.W_k(memory))).squeeze(-1)  # (B, S)
    e = e.masked_fill(~src_mask, float("-inf"))
    alpha = torch.softmax(e, dim=-1)  # every source has a real token
    c = torch.einsum("bs,bsd->bd", alpha, memory)  # (B, D)
    y = decoder.embedding(prev)  # (B, E)
    output, new_state = decoder.rnn(torch.cat([y, c], dim=-1).unsqueeze(1), state)
    logits = decoder.out(torch.cat([output.squeeze(1), c], dim=-1))
    return logits, new_state, alpha


def step_gru_cell_view(
    decoder: BahdanauDecoder,
    prev: Tensor,
    state: Tensor,
    memory: Tensor,
    src_mask: Tensor,
    keys: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """An extra optional keys argument; the context from a batched matrix product."""
    query = state.permute(1, 0, 2)[:, -1:]  # (B, 1, D)
    _, weights = decoder.attention(
        query, memory, memory, mask=src_mask.unsqueeze(-2), projected_keys=keys
    )
    context = torch.bmm(weights, memory)  # (B, 1, D)
    y = decoder.embedding(prev).view(prev.shape[0], 1, -1)
    output, state = decoder.rnn(torch.cat([y, context], -1), state)
    logits = decoder.out(torch.cat([output, context], -1))
    return logits.view(prev.shape[0], -1), state, weights.view(prev.shape[0], -1)


CASES = [
    BlindCase(
        CHECK,
        "luong_new_state_query",
        step_luong_query,
        "mistake",
        "I ran the GRU first (with a context from the old state) and then asked the attention "
        "again with the new state s'_t, returning those weights and using that context for "
        "the logits.",
    ),
    BlindCase(
        CHECK,
        "no_mask",
        step_no_mask,
        "mistake",
        "I called decoder.attention without the mask.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        step_mask_inverted,
        "mistake",
        "I passed ~src_mask, thinking the mask marks the positions to block.",
    ),
    BlindCase(
        CHECK,
        "state_fed_instead_of_context",
        step_state_fed_as_context,
        "mistake",
        "I fed [y; s'_{t-1}] to the GRU instead of [y; c_t].",
    ),
    BlindCase(
        CHECK,
        "rnn_input_order",
        step_rnn_input_order,
        "mistake",
        "I concatenated the GRU's input as [c_t; y_{t-1}] instead of [y_{t-1}; c_t].",
    ),
    BlindCase(
        CHECK,
        "logits_input_order",
        step_logits_order,
        "mistake",
        "I gave the output layer [c_t; s'_t] instead of [s'_t; c_t].",
    ),
    BlindCase(
        CHECK,
        "logits_without_context",
        step_logits_without_context,
        "mistake",
        "I gave the output layer [s'_t; s'_{t-1}], the previous state in place of c_t.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        step_softmax_over_batch,
        "mistake",
        "I wrote the score by hand as (B, S) and took the softmax over dim=0, the batch.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_size_one_axis",
        step_softmax_over_size_one_axis,
        "mistake",
        "I kept the scores as (B, 1, S) and took the softmax over dim=1, an axis of size 1, so "
        "every weight is 1.",
    ),
    BlindCase(
        CHECK,
        "returns_old_state",
        step_returns_old_state,
        "mistake",
        "I named the GRU's result new_state but returned state, the previous one.",
    ),
    BlindCase(
        CHECK,
        "state_as_output_squeezed",
        step_state_from_output,
        "mistake",
        "I returned the GRU's output squeezed to (B, D) as the new state instead of (1, B, D).",
    ),
    BlindCase(
        CHECK,
        "weights_not_squeezed",
        step_weights_not_squeezed,
        "mistake",
        "I returned the weights as (B, 1, S), as attention gave them, not (B, S).",
    ),
    BlindCase(
        CHECK,
        "transpose_query_projected_keys",
        step_transpose_query,
        "correct",
        "state.transpose(0, 1) as the query, project_keys passed to the attention, indexing "
        "[:, 0] instead of squeeze.",
    ),
    BlindCase(
        CHECK,
        "score_by_hand",
        step_by_hand,
        "correct",
        "The additive score from W_q, W_k and w_v by hand, the softmax over the source, the "
        "context by einsum.",
    ),
    BlindCase(
        CHECK,
        "bmm_context_optional_keys",
        step_gru_cell_view,
        "correct",
        "The context as bmm(weights, memory); an extra optional keys argument; view instead "
        "of squeeze.",
    ),
]
