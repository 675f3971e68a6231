"""Blind set B7, check_bahdanau_step (chapter 7): one step of the attention decoder."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bahdanau import BahdanauDecoder
from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _attend(decoder: BahdanauDecoder, query: Tensor, memory: Tensor, src_mask: Tensor):
    """The additive attention of s'_{t-1} over the memory, done right: (B, 1, D), (B, 1, S)."""
    return decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))


# ---------------------------------------------------------------- mistakes


def bs_concat_order(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state).unsqueeze(1), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([context, y], dim=-1), state)  # [c_t; y_{t-1}]
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_readout_order(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state).unsqueeze(1), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([context, output], dim=-1))  # [c_t; s'_t]
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_mask_polarity(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=~src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_mask_without_query_axis(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)  # (B, 1, D)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask)  # (B, S)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_state_not_passed(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state).unsqueeze(1), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1))  # the GRU keeps its state?
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_output_as_state(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state).unsqueeze(1), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)  # (B, 1, D)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), output, weights.squeeze(1)  # the output is the new state


def bs_weights_not_squeezed(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state).unsqueeze(1), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights  # (B, 1, S)


def bs_state_squeezed(decoder, prev, state, memory, src_mask):
    query = state.squeeze().unsqueeze(1)  # (1, B, D) -> (B, D) -> (B, 1, D)
    context, weights = _attend(decoder, query, memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_context_mean(decoder, prev, state, memory, src_mask):
    _, weights = _attend(decoder, last_hidden(state).unsqueeze(1), memory, src_mask)
    context = (weights.transpose(1, 2) * memory).mean(dim=1, keepdim=True)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_projected_values(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    keys = decoder.attention.project_keys(memory)  # W_k s_i, computed once
    context, weights = decoder.attention(
        query, memory, keys, mask=src_mask.unsqueeze(1), projected_keys=keys
    )  # keys passed as the values too
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_query_from_memory_end(decoder, prev, state, memory, src_mask):
    query = memory[:, -1:]  # the encoder's last state asks the question
    context, weights = _attend(decoder, query, memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_softmax_no_renormalize(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).squeeze(-1)  # (B, S)
    weights = scores.softmax(dim=-1) * src_mask  # padding weighted 0
    context = torch.bmm(weights.unsqueeze(1), memory)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights


# ---------------------------------------------------------------- correct variants


def bs_scores_by_hand(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(state[-1]).unsqueeze(1)  # (B, 1, A); state[-1] is the last layer for a GRU
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).squeeze(-1)  # (B, S)
    weights = scores.masked_fill(~src_mask, float("-inf")).softmax(dim=-1)  # every row has a key
    context = (weights.unsqueeze(-1) * memory).sum(dim=1, keepdim=True)  # (B, 1, D)
    y = decoder.embedding(prev)[:, None, :]
    output, new_state = decoder.rnn(torch.cat((y, context), dim=2), state)
    logits = decoder.out(torch.cat((output, context), dim=2))[:, 0]
    return logits, new_state, weights


def bs_with_keys_arg(decoder, prev, state, memory, src_mask, keys=None):
    """The chapter's optional precomputed keys, and the context by bmm."""
    if keys is None:
        keys = decoder.attention.project_keys(memory)
    query = last_hidden(state)[:, None]
    _, weights = decoder.attention(
        query, memory, memory, mask=src_mask[:, None, :], projected_keys=keys
    )
    context = torch.bmm(weights, memory)  # (B, 1, S) @ (B, S, D)
    step_in = torch.cat([decoder.embedding(prev[:, None]), context], dim=-1)
    output, state = decoder.rnn(step_in, state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits[:, -1], state, weights[:, 0]


def bs_rnn_output_via_state(decoder, prev, state, memory, src_mask):
    context, weights = _attend(decoder, last_hidden(state).unsqueeze(1), memory, src_mask)
    y = decoder.embedding(prev).unsqueeze(1)
    _, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    s_t = last_hidden(state).unsqueeze(1)  # one layer, one step: the output is the new state
    logits = decoder.out(torch.cat([s_t, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_einsum_context(decoder, prev, state, memory, src_mask):
    s_prev = last_hidden(state)  # (B, D)
    context, weights = decoder.attention(s_prev[:, None, :], memory, memory, src_mask[:, None])
    weights = weights[:, 0]  # (B, S)
    context = torch.einsum("bs,bsd->bd", weights, memory)[:, None]  # the same c_t, recomputed
    y = decoder.embedding(prev[:, None])  # (B, 1, E)
    output, new_state = decoder.rnn(torch.cat([y, context], -1), state)
    logits = decoder.out(torch.cat([output, context], -1)).squeeze(1)
    return logits, new_state, weights


CASES = [
    BlindCase(
        check=CHECK,
        name="rnn_input_context_first",
        code=bs_concat_order,
        kind="mistake",
        what="I fed the recurrent layer [c_t; y_{t-1}] instead of [y_{t-1}; c_t].",
    ),
    BlindCase(
        check=CHECK,
        name="readout_context_first",
        code=bs_readout_order,
        kind="mistake",
        what="I computed the logits from [c_t; s'_t] instead of [s'_t; c_t].",
    ),
    BlindCase(
        check=CHECK,
        name="mask_inverted",
        code=bs_mask_polarity,
        kind="mistake",
        what="I passed ~src_mask to the attention, thinking True marks the padding.",
    ),
    BlindCase(
        check=CHECK,
        name="mask_without_query_axis",
        code=bs_mask_without_query_axis,
        kind="mistake",
        what="I passed src_mask (B, S) to the attention as it is, without the query axis "
        "(B, 1, S); it only fits when B = 1.",
    ),
    BlindCase(
        check=CHECK,
        name="state_not_passed_to_rnn",
        code=bs_state_not_passed,
        kind="mistake",
        what="I called decoder.rnn(inputs) without the previous state, so every step starts "
        "the GRU from zeros.",
    ),
    BlindCase(
        check=CHECK,
        name="rnn_output_returned_as_state",
        code=bs_output_as_state,
        kind="mistake",
        what="I returned the GRU's output (B, 1, D) as the new state instead of its state "
        "(1, B, D).",
    ),
    BlindCase(
        check=CHECK,
        name="weights_keep_query_axis",
        code=bs_weights_not_squeezed,
        kind="mistake",
        what="I returned the attention weights as (B, 1, S), forgetting to squeeze the query axis.",
    ),
    BlindCase(
        check=CHECK,
        name="state_squeezed_without_dim",
        code=bs_state_squeezed,
        kind="mistake",
        what="I took the query as state.squeeze(), which also drops the batch axis when B = 1.",
    ),
    BlindCase(
        check=CHECK,
        name="context_mean_not_sum",
        code=bs_context_mean,
        kind="mistake",
        what="I built the context as the mean over the source positions of alpha_i s_i "
        "instead of their sum.",
    ),
    BlindCase(
        check=CHECK,
        name="projected_keys_as_values",
        code=bs_projected_values,
        kind="mistake",
        what="I passed the projected keys W_k s_i as the values too, so the context is a mix of "
        "projected keys instead of encoder states.",
    ),
    BlindCase(
        check=CHECK,
        name="query_is_last_encoder_state",
        code=bs_query_from_memory_end,
        kind="mistake",
        what="I used the encoder's last column memory[:, -1] as the query instead of the "
        "decoder's previous state.",
    ),
    BlindCase(
        check=CHECK,
        name="softmax_times_mask",
        code=bs_softmax_no_renormalize,
        kind="mistake",
        what="I wrote the scores by hand, took the softmax over all source positions and "
        "multiplied by the mask afterwards, without renormalizing.",
    ),
    BlindCase(
        check=CHECK,
        name="scores_by_hand",
        code=bs_scores_by_hand,
        kind="correct",
        what="I wrote the additive score with W_q, W_k and w_v by hand, used state[-1] as "
        "s'_{t-1}, and summed alpha_i s_i with broadcasting.",
    ),
    BlindCase(
        check=CHECK,
        name="keys_arg_and_bmm_context",
        code=bs_with_keys_arg,
        kind="correct",
        what="I accepted optional precomputed keys (default None) and recomputed the context "
        "from the returned weights with bmm.",
    ),
    BlindCase(
        check=CHECK,
        name="readout_from_new_state",
        code=bs_rnn_output_via_state,
        kind="correct",
        what="I took s'_t for the read-out from the returned state (one layer, one step) "
        "instead of the GRU's output.",
    ),
    BlindCase(
        check=CHECK,
        name="einsum_context",
        code=bs_einsum_context,
        kind="correct",
        what="I embedded prev[:, None] directly and recomputed c_t from the weights with "
        "einsum('bs,bsd->bd').",
    ),
]
