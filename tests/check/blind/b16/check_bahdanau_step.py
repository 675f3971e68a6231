"""Blind set B16, check_bahdanau_step (chapter 7): one step of the Bahdanau decoder as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bahdanau import BahdanauDecoder
from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _scores(decoder: BahdanauDecoder, query: Tensor, memory: Tensor) -> Tensor:
    """Additive scores of one query (B, D) against the memory (B, S, D): (B, S)."""
    att = decoder.attention
    features = torch.tanh(att.W_q(query).unsqueeze(1) + att.W_k(memory))  # (B, S, A)
    return att.w_v(features).squeeze(-1)  # (B, S)


def _finish(decoder: BahdanauDecoder, prev: Tensor, state: Tensor, context: Tensor) -> tuple:
    """The right rest of the step, from a context (B, 1, D)."""
    y = decoder.embedding(prev).unsqueeze(1)  # (B, 1, E)
    output, new_state = decoder.rnn(torch.cat([y, context], dim=-1), state)  # (B, 1, D)
    logits = decoder.out(torch.cat([output, context], dim=-1))  # (B, 1, V)
    return logits.squeeze(1), new_state


# ---------------------------------------------------------------- mistakes


def step_query_is_new_state(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    y = decoder.embedding(prev).unsqueeze(1)  # (B, 1, E)
    no_context = memory.new_zeros(memory.shape[0], 1, memory.shape[-1])
    output, new_state = decoder.rnn(torch.cat([y, no_context], dim=-1), state)  # step first
    context, weights = decoder.attention(
        output, memory, memory, mask=src_mask.unsqueeze(1)
    )  # then attend with the new state s'_t
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), new_state, weights.squeeze(1)


def step_no_mask(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory)  # encoder outputs are zero-padded
    logits, new_state = _finish(decoder, prev, state, context)
    return logits, new_state, weights.squeeze(1)


def step_state_instead_of_context(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = last_hidden(state).unsqueeze(1)  # (B, 1, D)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, new_state = decoder.rnn(torch.cat([y, query], dim=-1), state)  # [y; s'_{t-1}]
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), new_state, weights.squeeze(1)


def step_softmax_over_batch(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    scores = _scores(decoder, last_hidden(state), memory)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    weights = torch.softmax(scores, dim=0)  # normalize the scores
    context = (weights.unsqueeze(-1) * memory).sum(dim=1, keepdim=True)  # (B, 1, D)
    logits, new_state = _finish(decoder, prev, state, context)
    return logits, new_state, weights


def step_softmax_over_size_one_axis(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    scores = _scores(decoder, last_hidden(state), memory).unsqueeze(1)  # (B, 1, S)
    scores = scores.masked_fill(~src_mask.unsqueeze(1), float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=1))  # one query: its axis
    context = weights @ memory  # (B, 1, D)
    logits, new_state = _finish(decoder, prev, state, context)
    return logits, new_state, weights.squeeze(1)


def step_logits_without_context(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, new_state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, query], dim=-1))  # the new and the old state
    return logits.squeeze(1), new_state, weights.squeeze(1)


def step_returns_old_state(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_mask_inverted(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    pad = ~src_mask  # the positions to mask out
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=pad.unsqueeze(1))
    logits, new_state = _finish(decoder, prev, state, context)
    return logits, new_state, weights.squeeze(1)


def step_query_last_encoder_state(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = memory[:, -1:]  # (B, 1, D): the encoder's last state asks the question
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    logits, new_state = _finish(decoder, prev, state, context)
    return logits, new_state, weights.squeeze(1)


def step_weights_keep_query_axis(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    logits, new_state = _finish(decoder, prev, state, context)
    return logits, new_state, weights  # (B, 1, S), as attention returns it


# ---------------------------------------------------------------- correct variants


def step_by_hand(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """The score from W_q, W_k and w_v, the masked softmax written out."""
    scores = _scores(decoder, last_hidden(state), memory)  # (B, S)
    scores = scores.masked_fill(~src_mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)  # every source has at least one real token
    context = torch.einsum("bs,bsd->bd", weights, memory).unsqueeze(1)  # (B, 1, D)
    logits, new_state = _finish(decoder, prev, state, context)
    return logits, new_state, weights


def step_projected_keys(
    decoder: BahdanauDecoder,
    prev: Tensor,
    state: Tensor,
    memory: Tensor,
    src_mask: Tensor,
    keys: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    if keys is None:
        keys = decoder.attention.project_keys(memory)  # (B, S, A)
    h = state[0] if isinstance(state, tuple) else state  # (1, B, D), an LSTM's (h, c) too
    s_prev = h[-1]  # (B, D): the last layer
    context, weights = decoder.attention(
        s_prev[:, None, :], memory, memory, mask=src_mask[:, None, :], projected_keys=keys
    )
    emb = decoder.embedding(prev)[:, None, :]
    rnn_out, new_state = decoder.rnn(torch.cat((emb, context), dim=2), state)
    logits = decoder.out(torch.cat((rnn_out, context), dim=2))[:, 0]
    return logits, new_state, weights[:, 0]


def step_bmm_and_where(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    att = decoder.attention
    q = att.W_q(last_hidden(state))  # (B, A)
    scores = att.w_v(torch.tanh(q[:, None] + att.W_k(memory)))[..., 0]  # (B, S)
    scores = torch.where(src_mask, scores, torch.full_like(scores, float("-inf")))
    weights = scores.softmax(dim=1)
    context = torch.bmm(weights[:, None], memory)  # (B, 1, D)
    y = decoder.embedding(prev)[:, None]
    output, new_state = decoder.rnn(torch.cat([y, context], -1), state)
    logits = decoder.out(torch.cat([output[:, 0], context[:, 0]], -1))  # (B, V)
    return logits, new_state, weights


CASES = [
    BlindCase(
        CHECK,
        "query_is_new_state",
        step_query_is_new_state,
        "mistake",
        "I ran the GRU first (with a zero context) and attended with the new state s'_t, "
        "Luong's order.",
    ),
    BlindCase(
        CHECK,
        "no_source_mask",
        step_no_mask,
        "mistake",
        "I called the attention without the mask, thinking the padded encoder states are zero.",
    ),
    BlindCase(
        CHECK,
        "previous_state_fed_instead_of_context",
        step_state_instead_of_context,
        "mistake",
        "I fed [y; s'_{t-1}] into the GRU instead of [y; c_t]; c_t only reaches the logits.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        step_softmax_over_batch,
        "mistake",
        "My scores were (B, S) and I took the softmax over dim=0, the batch.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_axis_of_one",
        step_softmax_over_size_one_axis,
        "mistake",
        "My scores were (B, 1, S) and I took the softmax over dim=1, the single query, so every "
        "weight is 1.",
    ),
    BlindCase(
        CHECK,
        "logits_without_context",
        step_logits_without_context,
        "mistake",
        "I computed the logits from [s'_t; s'_{t-1}] instead of [s'_t; c_t].",
    ),
    BlindCase(
        CHECK,
        "returns_previous_state",
        step_returns_old_state,
        "mistake",
        "I returned the state I was given instead of the GRU's new state.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        step_mask_inverted,
        "mistake",
        "I passed ~src_mask to the attention, thinking the mask marks the positions to hide.",
    ),
    BlindCase(
        CHECK,
        "query_from_last_encoder_position",
        step_query_last_encoder_state,
        "mistake",
        "I used memory[:, -1], the encoder's last column, as the query, which is padding for a "
        "short source and never changes from step to step.",
    ),
    BlindCase(
        CHECK,
        "weights_not_squeezed",
        step_weights_keep_query_axis,
        "mistake",
        "I returned the weights as the attention gives them, (B, 1, S), not (B, S).",
    ),
    BlindCase(
        CHECK,
        "score_by_hand_einsum",
        step_by_hand,
        "correct",
        "The score from W_q, W_k, w_v by hand, finfo.min fill, einsum for the context.",
    ),
    BlindCase(
        CHECK,
        "projected_keys_argument",
        step_projected_keys,
        "correct",
        "An optional keys argument (projected once), the state's last layer h[-1] as the query, [:, None] "
        "indexing instead of unsqueeze.",
    ),
    BlindCase(
        CHECK,
        "bmm_and_where",
        step_bmm_and_where,
        "correct",
        "torch.where with -inf, softmax over dim=1 of (B, S), torch.bmm for the context, the "
        "logits from 2-D tensors.",
    ),
]
