"""Blind set B6, check_bahdanau_step (chapter 7): one step of the attention decoder."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bahdanau import BahdanauDecoder

from .. import BlindCase

CHECK = "check_bahdanau_step"


# ---------------------------------------------------------------- mistakes


def step_luong_order(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    y = decoder.embedding(prev).unsqueeze(1)  # (B, 1, E)
    no_context = memory.new_zeros(memory.shape[0], 1, memory.shape[2])
    output, state = decoder.rnn(torch.cat([y, no_context], dim=-1), state)  # step first
    context, weights = decoder.attention(output, memory, memory, mask=src_mask.unsqueeze(1))
    logits = decoder.out(torch.cat([output, context], dim=-1))  # then attend with s'_t
    return logits.squeeze(1), state, weights.squeeze(1)


def step_no_mask(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = state[-1].unsqueeze(1)  # (B, 1, D)
    context, weights = decoder.attention(query, memory, memory)  # padding is zeros anyway
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_state_into_rnn(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = state[-1].unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, query], dim=-1), state)  # the RNN reads [y; s']
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_softmax_over_batch(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    att = decoder.attention
    q = att.W_q(state[-1])  # (B, A)
    k = att.W_k(memory)  # (B, S, A)
    scores = att.w_v(torch.tanh(q[:, None, :] + k)).squeeze(-1)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    weights = torch.softmax(scores, dim=0)
    context = (weights.unsqueeze(-1) * memory).sum(1, keepdim=True)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights


def step_logits_context_first(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = state[-1].unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([context, output], dim=-1))  # [c_t; s'_t]
    return logits.squeeze(1), state, weights.squeeze(1)


def step_mask_inverted(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = state[-1].unsqueeze(1)
    pad = ~src_mask  # the padding is what we mask
    context, weights = decoder.attention(query, memory, memory, mask=pad.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_returns_last_hidden(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = state[-1].unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, new_state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), output.squeeze(1), weights.squeeze(1)  # s'_t as (B, D)


def step_squeeze_all(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = state.squeeze().unsqueeze(1)  # (1, B, D) -> (B, D) -> (B, 1, D)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(), state, weights.squeeze()


def step_mask_not_unsqueezed(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = state[-1].unsqueeze(1)  # (B, 1, D)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask)  # (B, S)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_logits_from_old_state(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = state[-1].unsqueeze(1)  # s'_{t-1}
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    _, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([query, context], dim=-1))  # the state that asked
    return logits.squeeze(1), state, weights.squeeze(1)


# ---------------------------------------------------------------- correct variants


def step_scores_by_hand(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """The additive score written with W_q, W_k, w_v; the context as a batched matmul."""
    att = decoder.attention
    s_prev = state[-1]  # (B, D)
    e = att.w_v(torch.tanh(att.W_q(s_prev).unsqueeze(1) + att.W_k(memory))).squeeze(-1)  # (B, S)
    alpha = torch.softmax(e.masked_fill(~src_mask, float("-inf")), dim=-1)  # (B, S)
    c = torch.bmm(alpha.unsqueeze(1), memory)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)  # (B, 1, E)
    out, new_state = decoder.rnn(torch.cat((y, c), dim=2), state)
    logits = decoder.out(torch.cat((out, c), dim=2)).squeeze(1)
    return logits, new_state, alpha


def step_projected_keys_einsum(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """decoder.attention with the keys projected first; the context recomputed by einsum."""
    keys = decoder.attention.project_keys(memory)
    query = state[-1][:, None, :]
    _, weights = decoder.attention(
        query, memory, memory, mask=src_mask[:, None, :], projected_keys=keys
    )
    alpha = weights[:, 0, :]  # (B, S)
    context = torch.einsum("bs,bsd->bd", alpha, memory)  # (B, D)
    y = decoder.embedding(prev)  # (B, E)
    rnn_in = torch.cat([y, context], dim=-1)[:, None, :]
    output, new_state = decoder.rnn(rnn_in, state)
    logits = decoder.out(torch.cat([output[:, 0], context], dim=-1))
    return logits, new_state, alpha


def step_new_state_from_returned_state(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """The logits read s'_t from the returned state instead of the RNN's output."""
    context, weights = decoder.attention(
        state[-1].unsqueeze(1), memory, memory, mask=src_mask.unsqueeze(1)
    )
    y = decoder.embedding(prev).unsqueeze(1)
    _, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    s_t = state[-1].unsqueeze(1)  # (B, 1, D), the same numbers as the output of a 1-layer GRU
    logits = decoder.out(torch.cat([s_t, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


CASES = [
    BlindCase(
        CHECK,
        "luong_order",
        step_luong_order,
        "mistake",
        "I ran the GRU first (with a zero context) and then attended with the new state s'_t "
        "as the query, as in Luong's attention.",
    ),
    BlindCase(
        CHECK,
        "no_mask",
        step_no_mask,
        "mistake",
        "I called the attention without the source mask, thinking the padded encoder states "
        "are zeros anyway.",
    ),
    BlindCase(
        CHECK,
        "state_fed_instead_of_context",
        step_state_into_rnn,
        "mistake",
        "I fed [y_{t-1}; s'_{t-1}] into the GRU instead of [y_{t-1}; c_t], so the context "
        "never reaches the recurrent layer.",
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
        "logits_context_first",
        step_logits_context_first,
        "mistake",
        "I gave the output layer [c_t; s'_t] instead of [s'_t; c_t].",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        step_mask_inverted,
        "mistake",
        "I passed ~src_mask to the attention, thinking the mask marks what to hide.",
    ),
    BlindCase(
        CHECK,
        "returns_state_as_b_d",
        step_returns_last_hidden,
        "mistake",
        "I returned the GRU's output squeezed to (B, D) as the new state instead of the "
        "(1, B, D) state.",
    ),
    BlindCase(
        CHECK,
        "squeeze_drops_batch",
        step_squeeze_all,
        "mistake",
        "I used state.squeeze() and logits.squeeze(), which also drop the batch axis when B = 1.",
    ),
    BlindCase(
        CHECK,
        "mask_not_unsqueezed",
        step_mask_not_unsqueezed,
        "mistake",
        "I passed src_mask (B, S) straight to the attention, whose scores are (B, 1, S), "
        "without unsqueezing it.",
    ),
    BlindCase(
        CHECK,
        "logits_from_previous_state",
        step_logits_from_old_state,
        "mistake",
        "I computed the logits from [s'_{t-1}; c_t], the state that asked, instead of the new "
        "state s'_t.",
    ),
    BlindCase(
        CHECK,
        "scores_by_hand_bmm",
        step_scores_by_hand,
        "correct",
        "The additive score written with W_q, W_k and w_v, the masked softmax over S, and the "
        "context by bmm.",
    ),
    BlindCase(
        CHECK,
        "projected_keys_einsum",
        step_projected_keys_einsum,
        "correct",
        "decoder.attention with projected_keys passed in, then the context recomputed from the "
        "weights with einsum and the step done on (B, D) tensors.",
    ),
    BlindCase(
        CHECK,
        "logits_from_returned_state",
        step_new_state_from_returned_state,
        "correct",
        "The output layer reads s'_t from the returned state (its last layer) instead of the "
        "GRU's output.",
    ),
]
