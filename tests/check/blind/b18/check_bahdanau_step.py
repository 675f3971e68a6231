"""Blind set B18, check_bahdanau_step (chapter 7): one step of the attention decoder as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


# ---------------------------------------------------------------- mistakes


def step_no_mask(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)  # (B, 1, D)
    context, weights = decoder.attention(query, memory, memory)  # the encoder zeroed the padding
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_mask_inverted(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    pad = ~src_mask  # True where the source is padding
    context, weights = decoder.attention(query, memory, memory, mask=pad.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_softmax_over_batch(decoder, prev, state, memory, src_mask):
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


def step_softmax_over_size_one_axis(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).squeeze(-1).unsqueeze(1)  # (B, 1, S)
    scores = scores.masked_fill(~src_mask.unsqueeze(1), float("-inf"))
    weights = torch.softmax(scores, dim=1)  # over the query axis of (B, 1, S)
    weights = weights.masked_fill(~src_mask.unsqueeze(1), 0.0)
    context = weights @ memory  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_attention_refreshed_with_new_state(decoder, prev, state, memory, src_mask):
    mask = src_mask.unsqueeze(1)
    context, _ = decoder.attention(last_hidden(state).unsqueeze(1), memory, memory, mask=mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    # the output should attend with the state it has just made
    context, weights = decoder.attention(output, memory, memory, mask=mask)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_rnn_input_swapped(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([context, y], dim=-1), state)  # [c_t; y_{t-1}]
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_out_input_swapped(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([context, output], dim=-1))  # [c_t; s'_t]
    return logits.squeeze(1), state, weights.squeeze(1)


def step_logits_from_old_state(decoder, prev, state, memory, src_mask):
    s_prev = last_hidden(state).unsqueeze(1)  # (B, 1, D)
    context, weights = decoder.attention(s_prev, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    _, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([s_prev, context], dim=-1))  # [s'; c_t]
    return logits.squeeze(1), state, weights.squeeze(1)


def step_query_from_encoder(decoder, prev, state, memory, src_mask):
    B = memory.shape[0]
    lengths = src_mask.sum(dim=1)
    query = memory[torch.arange(B), lengths - 1].unsqueeze(1)  # the encoder's last real state
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_weights_not_squeezed(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights  # (B, 1, S), as attention returns them


def step_returns_output_as_state(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), output, weights.squeeze(1)  # the output is the new state s'_t


# ---------------------------------------------------------------- correct variants


def step_manual_scores(
    decoder, prev: Tensor, state, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """The score written with W_q, W_k and w_v; bmm for the context."""
    att = decoder.attention
    s_prev = last_hidden(state)  # (B, D)
    features = torch.tanh(att.W_q(s_prev)[:, None, :] + att.W_k(memory))  # (B, S, A)
    scores = att.w_v(features)[..., 0].masked_fill(~src_mask, float("-inf"))  # (B, S)
    alpha = torch.softmax(scores, dim=-1)
    c = torch.bmm(alpha.unsqueeze(1), memory)  # (B, 1, D)
    y = decoder.embedding(prev)[:, None]  # (B, 1, E)
    output, new_state = decoder.rnn(torch.cat((y, c), dim=2), state)
    logits = decoder.out(torch.cat((output, c), dim=2))[:, 0]
    return logits, new_state, alpha


def step_projected_keys_einsum(decoder, prev, state, memory, src_mask, keys=None):
    """Projected keys passed to the attention (optional keys argument); einsum for the logits."""
    if keys is None:
        keys = decoder.attention.project_keys(memory)
    query = last_hidden(state)[:, None, :]
    context, weights = decoder.attention(
        query, memory, memory, mask=src_mask[:, None, :], projected_keys=keys
    )
    x = torch.cat([decoder.embedding(prev[:, None]), context], dim=-1)
    output, state = decoder.rnn(x, state)
    features = torch.cat([output, context], dim=-1)[:, 0]  # (B, 2D)
    logits = torch.einsum("bi,vi->bv", features, decoder.out.weight) + decoder.out.bias
    return logits, state, weights[:, 0]


def step_gru_cell_style(decoder, prev, state, memory, src_mask):
    """Weights by the module, the context as a weighted sum over the source axis, one-step
    sequences made with view."""
    B, S, D = memory.shape
    query = last_hidden(state).view(B, 1, D)
    _, weights = decoder.attention(query, memory, memory, mask=src_mask.view(B, 1, S))
    weights = weights.view(B, S)
    context = (weights.unsqueeze(-1) * memory).sum(dim=1)  # (B, D)
    y = decoder.embedding(prev)  # (B, E)
    output, state = decoder.rnn(torch.cat([y, context], dim=1).unsqueeze(1), state)
    logits = decoder.out(torch.cat([output.squeeze(1), context], dim=1))
    return logits, state, weights


CASES = [
    BlindCase(
        CHECK,
        "no_mask",
        step_no_mask,
        "mistake",
        "I called the attention without the source mask, thinking the encoder's zeros at the "
        "padding were enough.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        step_mask_inverted,
        "mistake",
        "I passed ~src_mask, True at the padding, as the mask.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        step_softmax_over_batch,
        "mistake",
        "I wrote the score by hand on (B, S) scores and took the softmax over dim=0, the batch.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_size_one_axis",
        step_softmax_over_size_one_axis,
        "mistake",
        "I took the softmax over dim=1 of the (B, 1, S) scores, an axis of size 1.",
    ),
    BlindCase(
        CHECK,
        "attention_refreshed_with_new_state",
        step_attention_refreshed_with_new_state,
        "mistake",
        "After the recurrent step I attended again with the new state s'_t and used that "
        "context and those weights for the logits (Luong's order).",
    ),
    BlindCase(
        CHECK,
        "rnn_input_context_first",
        step_rnn_input_swapped,
        "mistake",
        "I fed the recurrent layer [c_t; y_{t-1}] instead of [y_{t-1}; c_t].",
    ),
    BlindCase(
        CHECK,
        "out_input_context_first",
        step_out_input_swapped,
        "mistake",
        "I computed the logits from [c_t; s'_t] instead of [s'_t; c_t].",
    ),
    BlindCase(
        CHECK,
        "logits_from_old_state",
        step_logits_from_old_state,
        "mistake",
        "I computed the logits from the previous state s'_{t-1} (the query) and c_t, not from "
        "the new state.",
    ),
    BlindCase(
        CHECK,
        "query_from_encoder",
        step_query_from_encoder,
        "mistake",
        "I used the encoder's last real state as the query instead of the decoder's state.",
    ),
    BlindCase(
        CHECK,
        "weights_not_squeezed",
        step_weights_not_squeezed,
        "mistake",
        "I returned the weights as the attention gives them, (B, 1, S), not (B, S).",
    ),
    BlindCase(
        CHECK,
        "returns_output_as_state",
        step_returns_output_as_state,
        "mistake",
        "I returned the recurrent layer's output (B, 1, D) as the new state instead of its "
        "state (1, B, D).",
    ),
    BlindCase(
        CHECK,
        "manual_scores",
        step_manual_scores,
        "correct",
        "The score written out with W_q, W_k and w_v, masked_fill and softmax, bmm for c_t.",
    ),
    BlindCase(
        CHECK,
        "projected_keys_einsum",
        step_projected_keys_einsum,
        "correct",
        "An optional keys argument passed as projected_keys; the output layer applied with einsum.",
    ),
    BlindCase(
        CHECK,
        "weighted_sum_with_view",
        step_gru_cell_style,
        "correct",
        "Weights from the module, the context as a weighted sum over the source axis, shapes "
        "made with view.",
    ),
]
