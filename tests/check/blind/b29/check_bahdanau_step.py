"""Blind set B29, check_bahdanau_step (chapter 7): one step of the attention decoder."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bahdanau import BahdanauDecoder

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _finish(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, context: Tensor
) -> tuple[Tensor, Tensor]:
    """From c_t ``(B, 1, D)``: the recurrent step on [y; c_t] and the logits of [s'_t; c_t]."""
    y = decoder.embedding(prev).unsqueeze(1)  # (B, 1, E)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)  # (B, 1, D)
    logits = decoder.out(torch.cat([output, context], dim=-1)).squeeze(1)  # (B, V)
    return logits, state


# ---------------------------------------------------------------- mistakes


def step_requery_with_new_state(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    mask = src_mask.unsqueeze(1)
    context, _ = decoder.attention(state[-1].unsqueeze(1), memory, memory, mask=mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    # the new state knows more, so ask again with it for the output
    context, weights = decoder.attention(output, memory, memory, mask=mask)
    logits = decoder.out(torch.cat([output, context], dim=-1)).squeeze(1)
    return logits, state, weights.squeeze(1)


def step_no_mask(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    context, weights = decoder.attention(state[-1].unsqueeze(1), memory, memory)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def step_mask_inverted(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    pad = src_mask == 0  # the positions to hide
    context, weights = decoder.attention(
        state[-1].unsqueeze(1), memory, memory, mask=pad.unsqueeze(1)
    )
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def step_context_not_in_rnn(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    context, weights = decoder.attention(
        state[-1].unsqueeze(1), memory, memory, mask=src_mask.unsqueeze(1)
    )
    y = decoder.embedding(prev).unsqueeze(1)
    blank = torch.zeros_like(context)  # c_t only goes to the output layer
    output, state = decoder.rnn(torch.cat([y, blank], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1)).squeeze(1)
    return logits, state, weights.squeeze(1)


def step_logits_from_old_state(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = state[-1].unsqueeze(1)  # (B, 1, D)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, query], dim=-1)).squeeze(1)  # [s'_t; s'_{t-1}]
    return logits, state, weights.squeeze(1)


def step_query_last_encoder_state(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = memory[:, -1:]  # (B, 1, D): the encoder's last state asks the question
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def step_state_squeezed(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    context, weights = decoder.attention(
        state[-1].unsqueeze(1), memory, memory, mask=src_mask.unsqueeze(1)
    )
    logits, state = _finish(decoder, prev, state, context)
    return logits, state.squeeze(0), weights.squeeze(1)  # the new state as (B, D)


def step_weights_keep_query_axis(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    context, weights = decoder.attention(
        state[-1].unsqueeze(1), memory, memory, mask=src_mask.unsqueeze(1)
    )
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights  # (B, 1, S)


def step_concat_order_swapped(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    context, weights = decoder.attention(
        state[-1].unsqueeze(1), memory, memory, mask=src_mask.unsqueeze(1)
    )
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([context, y], dim=-1), state)  # [c_t; y]
    logits = decoder.out(torch.cat([output, context], dim=-1)).squeeze(1)
    return logits, state, weights.squeeze(1)


def step_plot_weights_unmasked(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    att = decoder.attention
    query = state[-1].unsqueeze(1)
    context, _ = att(query, memory, memory, mask=src_mask.unsqueeze(1))
    scores = att.w_v(torch.tanh(att.W_q(query).unsqueeze(2) + att.W_k(memory).unsqueeze(1)))
    weights = torch.softmax(scores.squeeze(-1), dim=-1)  # recomputed to return for the plot
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def step_score_without_tanh(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    att = decoder.attention
    q = att.W_q(state[-1]).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(q + att.W_k(memory)).squeeze(-1)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    context = torch.bmm(weights.unsqueeze(1), memory)  # (B, 1, D)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights


def step_softmax_over_batch(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    att = decoder.attention
    q = att.W_q(state[-1]).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).squeeze(-1)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    weights = torch.softmax(scores, dim=0)
    context = torch.bmm(weights.unsqueeze(1), memory)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights


def step_mask_not_unsqueezed(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    context, weights = decoder.attention(state[-1].unsqueeze(1), memory, memory, mask=src_mask)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


# ---------------------------------------------------------------- correct variants


def step_score_by_hand(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """The score written with W_q, W_k and w_v; softmax over the source; bmm for c_t."""
    att = decoder.attention
    query = state[-1]  # (B, D): s'_{t-1}
    hidden = torch.tanh(att.W_q(query).unsqueeze(1) + att.W_k(memory))  # (B, S, A)
    scores = att.w_v(hidden).squeeze(-1)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)  # an empty source gives zeros
    context = torch.bmm(weights.unsqueeze(1), memory)  # (B, 1, D)
    y = decoder.embedding(prev)  # (B, E)
    output, new_state = decoder.rnn(torch.cat([y, context.squeeze(1)], dim=-1).unsqueeze(1), state)
    logits = decoder.out(torch.cat([output.squeeze(1), context.squeeze(1)], dim=-1))
    return logits, new_state, weights


def step_projected_keys_first(
    decoder: BahdanauDecoder,
    prev: Tensor,
    state: Tensor,
    memory: Tensor,
    src_mask: Tensor,
    keys: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """W_k s_i computed once (or passed in) and handed to the attention module."""
    if keys is None:
        keys = decoder.attention.project_keys(memory)  # (B, S, A)
    query = state[-1][:, None, :]
    context, weights = decoder.attention(
        query, memory, memory, mask=src_mask[:, None, :], projected_keys=keys
    )
    logits, new_state = _finish(decoder, prev, state, context)
    return logits, new_state, weights[:, 0]


def step_einsum(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """einsum for the score and the context; torch.where for the mask."""
    att = decoder.attention
    q = att.W_q(state[-1])  # (B, A)
    hidden = torch.tanh(q[:, None, :] + att.W_k(memory))  # (B, S, A)
    scores = torch.einsum("bsa,a->bs", hidden, att.w_v.weight[0])
    scores = torch.where(src_mask, scores, torch.full_like(scores, float("-inf")))
    weights = torch.nan_to_num(scores.softmax(dim=1), nan=0.0)
    context = torch.einsum("bs,bsd->bd", weights, memory)[:, None, :]  # (B, 1, D)
    logits, new_state = _finish(decoder, prev, state, context)
    return logits, new_state, weights


CASES = [
    BlindCase(
        CHECK,
        "requery_with_new_state",
        step_requery_with_new_state,
        "mistake",
        "After the recurrent step I asked attention again with the new state s'_t and used that "
        "context and those weights for the output.",
    ),
    BlindCase(
        CHECK,
        "no_mask",
        step_no_mask,
        "mistake",
        "I called decoder.attention without the mask, so padded source positions get weight.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        step_mask_inverted,
        "mistake",
        "I passed src_mask == 0 as the mask, thinking the mask marks what to hide.",
    ),
    BlindCase(
        CHECK,
        "context_not_in_rnn",
        step_context_not_in_rnn,
        "mistake",
        "I fed [y; zeros] to the recurrent layer and used c_t only for the logits.",
    ),
    BlindCase(
        CHECK,
        "logits_from_old_state",
        step_logits_from_old_state,
        "mistake",
        "For the logits I concatenated the new state with the query s'_{t-1} instead of with c_t.",
    ),
    BlindCase(
        CHECK,
        "query_is_encoder_last_state",
        step_query_last_encoder_state,
        "mistake",
        "I used memory[:, -1], the encoder's last column, as the query instead of the decoder "
        "state.",
    ),
    BlindCase(
        CHECK,
        "state_returned_b_d",
        step_state_squeezed,
        "mistake",
        "I returned the new state squeezed to (B, D) instead of (1, B, D).",
    ),
    BlindCase(
        CHECK,
        "weights_b_1_s",
        step_weights_keep_query_axis,
        "mistake",
        "I returned the weights as the attention gave them, (B, 1, S), not (B, S).",
    ),
    BlindCase(
        CHECK,
        "rnn_input_c_then_y",
        step_concat_order_swapped,
        "mistake",
        "I fed [c_t; y_{t-1}] to the recurrent layer instead of [y_{t-1}; c_t].",
    ),
    BlindCase(
        CHECK,
        "returned_weights_unmasked",
        step_plot_weights_unmasked,
        "mistake",
        "The context is right, but the weights I return were recomputed for the plot without "
        "the mask.",
    ),
    BlindCase(
        CHECK,
        "score_without_tanh",
        step_score_without_tanh,
        "mistake",
        "I wrote the score by hand as w_v(W_q s + W_k h) and forgot the tanh.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        step_softmax_over_batch,
        "mistake",
        "My (B, S) scores went through softmax(dim=0), which normalizes over the batch.",
    ),
    BlindCase(
        CHECK,
        "mask_without_query_axis",
        step_mask_not_unsqueezed,
        "mistake",
        "I passed src_mask (B, S) to the attention as it is, without the query axis.",
    ),
    BlindCase(
        CHECK,
        "score_by_hand_bmm",
        step_score_by_hand,
        "correct",
        "The score written with W_q, W_k and w_v, the softmax over the source (NaN of an empty "
        "source turned into 0), bmm for c_t.",
    ),
    BlindCase(
        CHECK,
        "projected_keys_argument",
        step_projected_keys_first,
        "correct",
        "An optional keys argument; W_k s_i is projected once and passed as projected_keys.",
    ),
    BlindCase(
        CHECK,
        "einsum_where",
        step_einsum,
        "correct",
        "einsum for the score and the context, torch.where for the mask.",
    ),
]
