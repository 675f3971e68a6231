"""Blind set B31, check_bahdanau_step (chapter 7): one step of the attention decoder."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.attention import masked_softmax
from transformer_tutorial.bahdanau import BahdanauDecoder
from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _attend(decoder: BahdanauDecoder, query: Tensor, memory: Tensor, src_mask: Tensor):
    """The right attention: query (B, D) -> context (B, 1, D), weights (B, 1, S)."""
    return decoder.attention(query.unsqueeze(1), memory, memory, mask=src_mask.unsqueeze(1))


def _finish(decoder: BahdanauDecoder, prev: Tensor, state, context: Tensor):
    """The right recurrent step and output layer from a context (B, 1, D)."""
    y = decoder.embedding(prev).unsqueeze(1)  # (B, 1, E)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)  # (B, 1, D)
    logits = decoder.out(torch.cat([output, context], dim=-1)).squeeze(1)  # (B, V)
    return logits, state


# ---------------------------------------------------------------- mistakes


def step_luong_order(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    y = decoder.embedding(prev).unsqueeze(1)
    no_context = memory.new_zeros(memory.shape[0], 1, memory.shape[-1])
    output, state = decoder.rnn(torch.cat([y, no_context], dim=-1), state)  # step first
    context, weights = _attend(decoder, output.squeeze(1), memory, src_mask)  # then ask s'_t
    logits = decoder.out(torch.cat([output, context], dim=-1)).squeeze(1)
    return logits, state, weights.squeeze(1)


def step_no_mask(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    context, weights = decoder.attention(last_hidden(state).unsqueeze(1), memory, memory)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def step_mask_inverted(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    context, weights = _attend(decoder, last_hidden(state), memory, ~src_mask)  # hide the pad
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def step_context_not_in_rnn(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    context, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, torch.zeros_like(context)], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1)).squeeze(1)  # c_t only here
    return logits, state, weights.squeeze(1)


def step_softmax_over_batch(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).squeeze(-1)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    weights = torch.softmax(scores, dim=0)  # dim 0 of my (B, S) scores
    context = torch.bmm(weights.unsqueeze(1), memory)  # (B, 1, D)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights


def step_softmax_over_size_one(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory)))  # (B, S, 1)
    weights = masked_softmax(scores, src_mask.unsqueeze(-1))  # softmax over the last axis
    context = (weights * memory).sum(dim=1, keepdim=True)  # (B, 1, D)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(-1)


def step_logits_without_context(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    context, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, torch.zeros_like(context)], dim=-1))  # s'_t only
    return logits.squeeze(1), state, weights.squeeze(1)


def step_logits_concat_swapped(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    context, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([context, output], dim=-1))  # [c_t; s'_t]
    return logits.squeeze(1), state, weights.squeeze(1)


def step_last_encoder_state_query(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    context, weights = _attend(decoder, memory[:, -1], memory, src_mask)  # s_S asks
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def step_weights_not_squeezed(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    context, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights  # (B, 1, S)


def step_returns_rnn_output(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    context, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1)).squeeze(1)
    return logits, output.squeeze(1), weights.squeeze(1)  # s'_t as (B, D)


def step_returns_old_state(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    context, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    logits, _ = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)  # the state I was given


def step_projected_keys_as_values(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    keys = decoder.attention.project_keys(memory)  # W_k s_i, computed once
    context, weights = decoder.attention(
        last_hidden(state).unsqueeze(1), memory, keys, mask=src_mask.unsqueeze(1)
    )  # values: the projected keys
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def step_mean_context(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    _, weights = _attend(decoder, last_hidden(state), memory, src_mask)
    context = memory.mean(dim=1, keepdim=True)  # c_t: the average encoder state
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


# ---------------------------------------------------------------- correct variants


def step_scores_by_hand(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    att = decoder.attention
    query = last_hidden(state)  # (B, D)
    feats = torch.tanh(att.W_q(query)[:, None, :] + att.W_k(memory))  # (B, S, A)
    scores = att.w_v(feats).squeeze(-1)  # (B, S)
    weights = masked_softmax(scores, src_mask)  # (B, S)
    context = torch.einsum("bs,bsd->bd", weights, memory).unsqueeze(1)  # (B, 1, D)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights


def step_with_cached_keys(
    decoder: BahdanauDecoder,
    prev: Tensor,
    state: Tensor,
    memory: Tensor,
    src_mask: Tensor,
    keys: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    if keys is None:
        keys = decoder.attention.project_keys(memory)
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(
        query, memory, memory, mask=src_mask[:, None, :], projected_keys=keys
    )
    y = decoder.embedding(prev)[:, None]
    out, new_state = decoder.rnn(torch.cat((y, context), -1), state)
    logits = decoder.out(torch.cat((out, context), -1))[:, 0]
    return logits, new_state, weights[:, 0]


def step_bmm_and_new_state_as_output(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).transpose(1, 2)  # (B, 1, S)
    weights = masked_softmax(scores, src_mask.unsqueeze(1))
    context = torch.bmm(weights, memory)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    _, new_state = decoder.rnn(torch.cat([y, context], dim=2), state)
    s_t = last_hidden(new_state).unsqueeze(1)  # the output is the new state
    logits = decoder.out(torch.cat([s_t, context], dim=2)).squeeze(1)
    return logits, new_state, weights.squeeze(1)


def step_float64_attention(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    att = decoder.attention
    dtype = memory.dtype
    q = last_hidden(state).double() @ att.W_q.weight.double().T  # (B, A)
    k = memory.double() @ att.W_k.weight.double().T  # (B, S, A)
    scores = (torch.tanh(q.unsqueeze(1) + k) @ att.w_v.weight.double().T).squeeze(-1)
    weights = masked_softmax(scores, src_mask).to(dtype)  # (B, S)
    context = (weights.unsqueeze(-1) * memory).sum(1, keepdim=True)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights


CASES = [
    BlindCase(
        CHECK,
        "luong_order",
        step_luong_order,
        "mistake",
        "I ran the recurrent step first (with no context) and used the new state s'_t as the "
        "query.",
    ),
    BlindCase(
        CHECK,
        "no_mask",
        step_no_mask,
        "mistake",
        "I called decoder.attention without the source mask.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        step_mask_inverted,
        "mistake",
        "I passed ~src_mask, thinking the mask marks what to hide.",
    ),
    BlindCase(
        CHECK,
        "context_not_in_rnn",
        step_context_not_in_rnn,
        "mistake",
        "I fed zeros in the context's place to the recurrent layer and used c_t only for the "
        "logits.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        step_softmax_over_batch,
        "mistake",
        "I wrote the scores as (B, S) and took the softmax over dim=0, the batch.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_size_one_axis",
        step_softmax_over_size_one,
        "mistake",
        "My scores were (B, S, 1) and the softmax over the last axis made every weight 1.",
    ),
    BlindCase(
        CHECK,
        "logits_without_context",
        step_logits_without_context,
        "mistake",
        "I gave the output layer [s'_t; 0], leaving the context out of the logits.",
    ),
    BlindCase(
        CHECK,
        "logits_concat_swapped",
        step_logits_concat_swapped,
        "mistake",
        "I concatenated [c_t; s'_t] for the output layer instead of [s'_t; c_t].",
    ),
    BlindCase(
        CHECK,
        "last_encoder_state_as_query",
        step_last_encoder_state_query,
        "mistake",
        "I used memory[:, -1], the last encoder column, as the query instead of s'_{t-1}.",
    ),
    BlindCase(
        CHECK,
        "weights_not_squeezed",
        step_weights_not_squeezed,
        "mistake",
        "I returned the weights as (B, 1, S), straight from the attention module.",
    ),
    BlindCase(
        CHECK,
        "returns_rnn_output_as_state",
        step_returns_rnn_output,
        "mistake",
        "I returned the GRU's output (B, D) as the new state instead of its (1, B, D) state.",
    ),
    BlindCase(
        CHECK,
        "returns_old_state",
        step_returns_old_state,
        "mistake",
        "I returned the state I was given instead of the new one.",
    ),
    BlindCase(
        CHECK,
        "projected_keys_as_values",
        step_projected_keys_as_values,
        "mistake",
        "I passed the projected keys W_k s_i as the values, so c_t mixes them and not s_i.",
    ),
    BlindCase(
        CHECK,
        "mean_context",
        step_mean_context,
        "mistake",
        "I computed the weights but used the plain mean of the encoder states as c_t.",
    ),
    BlindCase(
        CHECK,
        "scores_by_hand",
        step_scores_by_hand,
        "correct",
        "The score written with W_q, W_k, w_v; masked_softmax over S; einsum for c_t.",
    ),
    BlindCase(
        CHECK,
        "cached_keys_argument",
        step_with_cached_keys,
        "correct",
        "An optional keys argument (projected keys, computed when None), as in the book.",
    ),
    BlindCase(
        CHECK,
        "bmm_and_new_state",
        step_bmm_and_new_state_as_output,
        "correct",
        "bmm for c_t; the logits read the new state instead of the GRU's output (the same).",
    ),
    BlindCase(
        CHECK,
        "float64_scores",
        step_float64_attention,
        "correct",
        "The scores computed in float64, the weights cast back before mixing.",
    ),
]
