"""Blind set B21, check_bahdanau_step (chapter 7): one step of the Bahdanau decoder."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bahdanau import BahdanauDecoder
from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _scores(decoder: BahdanauDecoder, query: Tensor, memory: Tensor) -> Tensor:
    """``w_v^T tanh(W_q q + W_k s_i)`` for query ``(B, D)``: ``(B, S)``."""
    att = decoder.attention
    feats = torch.tanh(att.W_q(query).unsqueeze(1) + att.W_k(memory))  # (B, S, A)
    return att.w_v(feats).squeeze(-1)  # (B, S)


# ---------------------------------------------------------------- mistakes


def step_new_state_for_output(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, _ = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    # attend again with the fresh state s'_t (Luong) for the output and the weights
    context, weights = decoder.attention(output, memory, memory, mask=src_mask.unsqueeze(1))
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_no_mask(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_mask_inverted(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    pad = ~src_mask  # the padded positions
    context, weights = decoder.attention(query, memory, memory, mask=pad.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_context_not_in_rnn(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, torch.zeros_like(context)], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_softmax_over_batch(decoder, prev, state, memory, src_mask):
    scores = _scores(decoder, last_hidden(state), memory)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    weights = torch.softmax(scores, dim=0)
    context = torch.bmm(weights.unsqueeze(1), memory)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights


def step_softmax_over_size_one_axis(decoder, prev, state, memory, src_mask):
    scores = _scores(decoder, last_hidden(state), memory).unsqueeze(1)  # (B, 1, S)
    scores = scores.masked_fill(~src_mask.unsqueeze(1), float("-inf"))
    weights = torch.softmax(scores, dim=1).nan_to_num(0.0)  # (B, 1, S)
    context = weights @ memory  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_output_concat_swapped(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([context, output], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_returns_output_as_state(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), output, weights.squeeze(1)  # output is the new state


def step_returns_old_state(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, new_state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_score_without_tanh(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    scores = att.w_v(att.W_q(last_hidden(state)).unsqueeze(1) + att.W_k(memory)).squeeze(-1)
    weights = torch.softmax(scores.masked_fill(~src_mask, float("-inf")), dim=-1)
    context = (weights.unsqueeze(-1) * memory).sum(1, keepdim=True)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights


def step_context_mean(decoder, prev, state, memory, src_mask):
    scores = _scores(decoder, last_hidden(state), memory)
    weights = torch.softmax(scores.masked_fill(~src_mask, float("-inf")), dim=-1)
    context = (weights.unsqueeze(-1) * memory).mean(1, keepdim=True)  # weighted average
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights


def step_rnn_input_swapped(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([context, y], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


# ---------------------------------------------------------------- correct variants


def step_by_hand(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    scores = _scores(decoder, last_hidden(state), memory)  # (B, S)
    weights = torch.softmax(scores.masked_fill(~src_mask, float("-inf")), dim=-1)
    context = torch.einsum("bs,bsd->bd", weights, memory)  # (B, D)
    y = decoder.embedding(prev)  # (B, E)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1).unsqueeze(1), state)
    logits = decoder.out(torch.cat([output.squeeze(1), context], dim=-1))
    return logits, state, weights


def step_bmm_context(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = last_hidden(state)[:, None, :]
    _, weights = decoder.attention(query, memory, memory, mask=src_mask[:, None, :])
    context = torch.bmm(weights, memory)  # (B, 1, D)
    rnn_in = torch.cat([decoder.embedding(prev[:, None]), context], dim=2)
    output, new_state = decoder.rnn(rnn_in, state)
    logits = decoder.out(torch.cat([output, context], dim=2))[:, 0]
    return logits, new_state, weights[:, 0]


def step_projected_keys(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    keys = decoder.attention.project_keys(memory)  # W_k s_i, as forward computes once
    h = state[0] if isinstance(state, tuple) else state
    context, weights = decoder.attention(
        h[-1].unsqueeze(1), memory, memory, mask=src_mask.unsqueeze(1), projected_keys=keys
    )
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat((y, context), -1), state)
    logits = decoder.out(torch.cat((output, context), -1)).squeeze(1)
    return logits, state, weights.squeeze(1)


def step_where_weights(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    scores = _scores(decoder, last_hidden(state), memory)
    exp = torch.where(src_mask, torch.exp(scores - scores.max(-1, keepdim=True).values), 0.0)
    weights = exp / exp.sum(-1, keepdim=True)
    context = (weights[..., None] * memory).sum(dim=1)  # (B, D)
    y = decoder.embedding(prev)
    output, state = decoder.rnn(torch.cat([y, context], -1)[:, None], state)
    out_w, out_b = decoder.out.weight, decoder.out.bias
    logits = torch.cat([output[:, 0], context], -1) @ out_w.T + out_b
    return logits, state, weights


CASES = [
    BlindCase(
        CHECK,
        "new_state_for_output_attention",
        step_new_state_for_output,
        "mistake",
        "After the RNN step I attended again with the new state s'_t (Luong's way) and used "
        "that context and those weights for the logits and the return.",
    ),
    BlindCase(CHECK, "no_mask", step_no_mask, "mistake", "I did not pass the source mask."),
    BlindCase(
        CHECK,
        "mask_inverted",
        step_mask_inverted,
        "mistake",
        "I passed ~src_mask, thinking the mask should mark the padding.",
    ),
    BlindCase(
        CHECK,
        "context_not_in_rnn",
        step_context_not_in_rnn,
        "mistake",
        "I fed zeros in the context's place to the RNN (context only used for the logits).",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        step_softmax_over_batch,
        "mistake",
        "Writing the scores by hand as (B, S), I took the softmax over dim=0.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_size_one_axis",
        step_softmax_over_size_one_axis,
        "mistake",
        "I kept the scores (B, 1, S) and took the softmax over dim=1, the query axis of size 1.",
    ),
    BlindCase(
        CHECK,
        "output_concat_swapped",
        step_output_concat_swapped,
        "mistake",
        "I gave out the concatenation [c_t; s'_t] instead of [s'_t; c_t].",
    ),
    BlindCase(
        CHECK,
        "returns_rnn_output_as_state",
        step_returns_output_as_state,
        "mistake",
        "I returned the RNN's output (B, 1, D) as the new state instead of its state (1, B, D).",
    ),
    BlindCase(
        CHECK,
        "returns_old_state",
        step_returns_old_state,
        "mistake",
        "I named the RNN's new state new_state and then returned the old state.",
    ),
    BlindCase(
        CHECK,
        "score_without_tanh",
        step_score_without_tanh,
        "mistake",
        "Writing the score with W_q, W_k and w_v, I forgot the tanh.",
    ),
    BlindCase(
        CHECK,
        "context_mean",
        step_context_mean,
        "mistake",
        "I made the context with .mean(1) over the source positions instead of .sum(1).",
    ),
    BlindCase(
        CHECK,
        "rnn_input_swapped",
        step_rnn_input_swapped,
        "mistake",
        "I fed the RNN [c_t; y_{t-1}] instead of [y_{t-1}; c_t].",
    ),
    BlindCase(
        CHECK,
        "score_by_hand_einsum",
        step_by_hand,
        "correct",
        "The score written with W_q, W_k, w_v; -inf fill and softmax; einsum for the context.",
    ),
    BlindCase(
        CHECK,
        "bmm_context",
        step_bmm_context,
        "correct",
        "decoder.attention for the weights only, context by bmm, [:, None] indexing.",
    ),
    BlindCase(
        CHECK,
        "projected_keys",
        step_projected_keys,
        "correct",
        "Keys projected with project_keys and passed in; the query taken as h[-1] myself.",
    ),
    BlindCase(
        CHECK,
        "where_weights_manual_out",
        step_where_weights,
        "correct",
        "Softmax by hand with torch.where on the mask; logits from out's weight and bias.",
    ),
]
