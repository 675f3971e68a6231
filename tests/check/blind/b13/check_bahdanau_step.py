"""Blind set B13, check_bahdanau_step (chapter 7): one step of the attention decoder."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bahdanau import BahdanauDecoder
from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _rest(decoder, prev, state, context, weights):
    """The right recurrence and logits, given a context (B, 1, D) and weights."""
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights


# ---------------------------------------------------------------- mistakes


def bd_luong_query(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple:
    y = decoder.embedding(prev).unsqueeze(1)
    old_ctx, _ = decoder.attention(
        last_hidden(state).unsqueeze(1), memory, memory, mask=src_mask.unsqueeze(1)
    )
    output, state = decoder.rnn(torch.cat([y, old_ctx], dim=-1), state)
    context, weights = decoder.attention(output, memory, memory, mask=src_mask.unsqueeze(1))
    logits = decoder.out(torch.cat([output, context], dim=-1))  # attention of the new state
    return logits.squeeze(1), state, weights.squeeze(1)


def bd_no_mask(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple:
    context, weights = decoder.attention(last_hidden(state).unsqueeze(1), memory, memory)
    return _rest(decoder, prev, state, context, weights.squeeze(1))


def bd_no_context_in_rnn(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple:
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, torch.zeros_like(context)], -1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))  # context only at the output
    return logits.squeeze(1), state, weights.squeeze(1)


def _scores(decoder, state, memory):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    return att.w_v(torch.tanh(q + att.W_k(memory))).squeeze(-1)  # (B, S)


def bd_softmax_over_batch(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple:
    scores = _scores(decoder, state, memory).masked_fill(~src_mask, float("-inf"))
    weights = torch.softmax(scores, dim=0)
    context = (weights.unsqueeze(-1) * memory).sum(1, keepdim=True)
    return _rest(decoder, prev, state, context, weights)


def bd_softmax_size_1(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple:
    scores = _scores(decoder, state, memory).masked_fill(~src_mask, float("-inf"))
    weights = torch.softmax(scores.unsqueeze(1), dim=1)  # (B, 1, S), softmax over the 1
    context = weights @ memory
    return _rest(decoder, prev, state, torch.nan_to_num(context), torch.nan_to_num(weights[:, 0]))


def bd_logits_without_context(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple:
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, torch.zeros_like(context)], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bd_mask_inverted(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple:
    pad = ~src_mask  # the positions to hide
    context, weights = decoder.attention(
        last_hidden(state).unsqueeze(1), memory, memory, mask=pad.unsqueeze(1)
    )
    return _rest(decoder, prev, state, context, weights.squeeze(1))


def bd_last_source_state_query(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple:
    query = memory[:, -1:]  # the encoder's last state asks the question
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    return _rest(decoder, prev, state, context, weights.squeeze(1))


def bd_returns_output(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple:
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), output, weights.squeeze(1)  # output (B, 1, D) as the new state


def bd_weights_not_squeezed(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple:
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    return _rest(decoder, prev, state, context, weights)  # (B, 1, S)


def bd_context_from_keys(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple:
    keys = decoder.attention.project_keys(memory)  # computed once, used for both
    context, weights = decoder.attention(
        last_hidden(state).unsqueeze(1),
        memory,
        keys,
        mask=src_mask.unsqueeze(1),
        projected_keys=keys,
    )
    return _rest(decoder, prev, state, context, weights.squeeze(1))


# ---------------------------------------------------------------- correct variants


def bd_manual_score(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple:
    scores = _scores(decoder, state, memory).masked_fill(~src_mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)  # (B, S): every source has a real token
    context = torch.bmm(weights.unsqueeze(1), memory)  # (B, 1, D)
    return _rest(decoder, prev, state, context, weights)


def bd_projected_keys(
    decoder: BahdanauDecoder,
    prev: Tensor,
    state: Tensor,
    memory: Tensor,
    src_mask: Tensor,
    keys: Tensor | None = None,
) -> tuple:
    if keys is None:
        keys = decoder.attention.project_keys(memory)
    s_prev = last_hidden(state)[:, None, :]
    context, weights = decoder.attention(s_prev, memory, memory, src_mask[:, None, :], keys)
    emb = decoder.embedding(prev[:, None])
    out, new_state = decoder.rnn(torch.cat((emb, context), 2), state)
    return decoder.out(torch.cat((out, context), 2))[:, 0], new_state, weights[:, 0]


def bd_flat_tensors(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple:
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    context, weights = context.squeeze(1), weights.squeeze(1)  # (B, D), (B, S)
    y = decoder.embedding(prev)  # (B, E)
    output, state = decoder.rnn(torch.cat([y, context], dim=1).unsqueeze(1), state)
    logits = decoder.out(torch.cat([output.squeeze(1), context], dim=1))
    return logits, state, weights


CASES = [
    BlindCase(
        CHECK,
        "luong_query",
        bd_luong_query,
        "mistake",
        "I ran the RNN first and used the new state s'_t as the attention query.",
    ),
    BlindCase(
        CHECK, "no_mask", bd_no_mask, "mistake", "I called the attention without the source mask."
    ),
    BlindCase(
        CHECK,
        "context_not_in_rnn",
        bd_no_context_in_rnn,
        "mistake",
        "I fed zeros instead of c_t into the RNN and used c_t only for the logits.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        bd_softmax_over_batch,
        "mistake",
        "I computed the (B, S) scores by hand and took the softmax over dim=0.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_size_1",
        bd_softmax_size_1,
        "mistake",
        "I took the softmax over dim=1 of the (B, 1, S) scores, an axis of size 1.",
    ),
    BlindCase(
        CHECK,
        "logits_without_context",
        bd_logits_without_context,
        "mistake",
        "I computed the logits from s'_t alone (zeros in the context's place).",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        bd_mask_inverted,
        "mistake",
        "I passed ~src_mask, thinking the mask marks what to hide.",
    ),
    BlindCase(
        CHECK,
        "encoder_last_as_query",
        bd_last_source_state_query,
        "mistake",
        "I used the encoder's last state memory[:, -1] as the query.",
    ),
    BlindCase(
        CHECK,
        "returns_rnn_output",
        bd_returns_output,
        "mistake",
        "I returned the RNN's output (B, 1, D) instead of its state (1, B, D).",
    ),
    BlindCase(
        CHECK,
        "weights_not_squeezed",
        bd_weights_not_squeezed,
        "mistake",
        "I returned the weights as (B, 1, S).",
    ),
    BlindCase(
        CHECK,
        "values_are_projected_keys",
        bd_context_from_keys,
        "mistake",
        "I passed the projected keys as the values, so the context mixes W_k s_i.",
    ),
    BlindCase(
        CHECK,
        "manual_score_bmm",
        bd_manual_score,
        "correct",
        "The score written with W_q, W_k and w_v; softmax over S; bmm for the context.",
    ),
    BlindCase(
        CHECK,
        "projected_keys_arg",
        bd_projected_keys,
        "correct",
        "An optional keys argument (projected once), indexing instead of squeeze.",
    ),
    BlindCase(
        CHECK,
        "flat_tensors",
        bd_flat_tensors,
        "correct",
        "Context and embeddings squeezed to 2-D, the time axis added only for the RNN.",
    ),
]
