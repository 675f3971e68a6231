"""Chapter 7, "Your turn": ``bahdanau_step(decoder, prev, state, memory, src_mask)``.

``alpha_t`` = additive attention of ``s'_{t-1}`` over ``memory`` ``(B, S, D)``, masked where
``src_mask`` ``(B, S)`` is False; ``c_t = sum_i alpha_ti s_i``;
``s'_t = rnn([y_{t-1}; c_t], s'_{t-1})``; logits ``out([s'_t; c_t])``. Returns logits ``(B, V)``,
the new state ``(1, B, D)`` and the weights ``(B, S)``.
"""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.attention import masked_softmax
from transformer_tutorial.bahdanau import BahdanauDecoder
from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


# --- mistakes ---------------------------------------------------------------------------------


def mask_without_query_axis(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = last_hidden(state).unsqueeze(1)  # (B, 1, D)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask)  # mask (B, S)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def context_before_embedding(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([context, y], dim=-1), state)  # [c_t; y]
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def logits_from_context_then_state(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([context, output], dim=-1))  # [c_t; s'_t]
    return logits.squeeze(1), state, weights.squeeze(1)


def rnn_restarted_from_zeros(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1))  # the state is not passed in
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def weights_keep_query_axis(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights  # (B, 1, S)


def output_returned_as_state(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), output, weights.squeeze(1)  # output (B, 1, D) is the new state


def mask_inverted(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = last_hidden(state).unsqueeze(1)
    pad = ~src_mask  # the mask marks the padding to hide
    context, weights = decoder.attention(query, memory, memory, mask=pad.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def padding_zeroed_in_memory(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    memory = memory * src_mask.unsqueeze(-1)  # padded states set to 0, so they cannot matter
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory)  # no mask needed any more
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def logits_from_previous_state(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = last_hidden(state).unsqueeze(1)  # s'_{t-1}
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    _, new_state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([query, context], dim=-1))  # [s'_{t-1}; c_t]
    return logits.squeeze(1), new_state, weights.squeeze(1)


def context_summed_over_batch(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = last_hidden(state).unsqueeze(1)
    _, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    alpha = weights.squeeze(1)  # (B, S)
    context = torch.einsum("bs,bsd->d", alpha, memory).expand(len(prev), 1, -1)  # sum over b too
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, alpha


# --- correct variants -------------------------------------------------------------------------


def through_the_attention_module(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = last_hidden(state)[:, None, :]  # (B, 1, D)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask[:, None, :])
    y = decoder.embedding(prev)[:, None, :]  # (B, 1, E)
    output, new_state = decoder.rnn(torch.cat((y, context), dim=2), state)
    logits = decoder.out(torch.cat((output, context), dim=2))[:, 0]
    return logits, new_state, weights[:, 0]


def score_written_out(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    attn = decoder.attention
    s_prev = state.permute(1, 0, 2)  # (1, B, D) -> (B, 1, D) for a one-layer GRU
    features = torch.tanh(attn.W_q(s_prev) + attn.W_k(memory))  # (B, S, A)
    scores = attn.w_v(features).squeeze(-1)  # (B, S)
    alpha = masked_softmax(scores, src_mask)  # (B, S)
    context = torch.bmm(alpha.unsqueeze(1), memory)  # (B, 1, D)
    rnn_in = torch.cat([decoder.embedding(prev).unsqueeze(1), context], dim=-1)
    output, new_state = decoder.rnn(rnn_in, state)
    logits = decoder.out(torch.cat([output.squeeze(1), context.squeeze(1)], dim=-1))
    return logits, new_state, alpha


def weights_by_hand_context_by_sum(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    attn = decoder.attention
    q = attn.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = attn.w_v(torch.tanh(q + attn.project_keys(memory))).squeeze(-1)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    alpha = torch.softmax(scores, dim=-1)  # every source has at least one real token
    context = (alpha.unsqueeze(-1) * memory).sum(dim=1, keepdim=True)  # (B, 1, D)
    y = decoder.embedding(prev.view(-1, 1))  # (B, 1, E)
    output, new_state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1)).squeeze(1)
    return logits, new_state, alpha


CASES = [
    BlindCase(
        CHECK,
        "mask_without_query_axis",
        mask_without_query_axis,
        "mistake",
        "I passed src_mask (B, S) to the attention as it is, without the query axis (B, 1, S).",
    ),
    BlindCase(
        CHECK,
        "context_before_embedding",
        context_before_embedding,
        "mistake",
        "I fed the recurrent layer [c_t; y_{t-1}] instead of [y_{t-1}; c_t].",
    ),
    BlindCase(
        CHECK,
        "logits_from_context_then_state",
        logits_from_context_then_state,
        "mistake",
        "I gave the output layer [c_t; s'_t] instead of [s'_t; c_t].",
    ),
    BlindCase(
        CHECK,
        "rnn_restarted_from_zeros",
        rnn_restarted_from_zeros,
        "mistake",
        "I called decoder.rnn without passing the previous state, so it starts from zeros.",
    ),
    BlindCase(
        CHECK,
        "weights_keep_query_axis",
        weights_keep_query_axis,
        "mistake",
        "I returned the weights as (B, 1, S), forgetting to squeeze the query axis.",
    ),
    BlindCase(
        CHECK,
        "output_returned_as_state",
        output_returned_as_state,
        "mistake",
        "I returned the GRU's output (B, 1, D) as the new state instead of its hidden state "
        "(1, B, D).",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        mask_inverted,
        "mistake",
        "I passed ~src_mask to the attention, thinking the mask marks what to hide.",
    ),
    BlindCase(
        CHECK,
        "padding_zeroed_in_memory",
        padding_zeroed_in_memory,
        "mistake",
        "I zeroed the padded encoder states and attended without a mask, but a zero key still "
        "gets a nonzero weight.",
    ),
    BlindCase(
        CHECK,
        "logits_from_previous_state",
        logits_from_previous_state,
        "mistake",
        "I computed the logits from [s'_{t-1}; c_t], the old state I used as the query, instead "
        "of the new one.",
    ),
    BlindCase(
        CHECK,
        "context_summed_over_batch",
        context_summed_over_batch,
        "mistake",
        "My einsum 'bs,bsd->d' also summed over the batch, so every row gets the same context.",
    ),
    BlindCase(
        CHECK,
        "through_the_attention_module",
        through_the_attention_module,
        "correct",
        "I used decoder.attention with None-indexing instead of unsqueeze and took [:, 0] "
        "instead of squeeze.",
    ),
    BlindCase(
        CHECK,
        "score_written_out",
        score_written_out,
        "correct",
        "I wrote the score with W_q, W_k and w_v myself, took the query with permute, and used "
        "bmm for the context.",
    ),
    BlindCase(
        CHECK,
        "weights_by_hand_context_by_sum",
        weights_by_hand_context_by_sum,
        "correct",
        "I filled the padding with -inf before a plain softmax (every source has a real token) "
        "and summed alpha * memory for the context.",
    ),
]
