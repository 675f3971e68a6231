"""Blind set B26, check_bahdanau_step (chapter 7): one step of the attention decoder as readers
write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from transformer_tutorial.bahdanau import BahdanauDecoder
from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _masked_softmax(scores: Tensor, mask: Tensor) -> Tensor:
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- mistakes


def step_query_from_encoder(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = memory[:, -1:]  # the encoder's last state asks the question
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_context_from_projected_keys(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    keys = decoder.attention.W_k(memory)  # W_k s_i, the keys
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, keys, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_rnn_input_order(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([context, y], dim=-1), state)  # [c_t; y_{t-1}]
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_out_input_order(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([context, output], dim=-1))  # context first
    return logits.squeeze(1), state, weights.squeeze(1)


def step_returns_rnn_output(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), output, weights.squeeze(1)  # the output is the new state


def step_weights_not_squeezed(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights  # (B, 1, S)


def step_mask_inverted(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    pad = ~src_mask  # True where the padding is, to block it
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=pad.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_mask_unsqueezed_last(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(-1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_rnn_without_state(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1))  # the query carried the state
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_dot_product_scores(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = last_hidden(state).unsqueeze(1)  # (B, 1, D), same size as the memory
    scores = query @ memory.transpose(1, 2) / math.sqrt(memory.shape[-1])  # (B, 1, S)
    weights = _masked_softmax(scores, src_mask.unsqueeze(1))
    context = weights @ memory
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def step_logits_from_query(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    _, new_state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([query, context], dim=-1))  # the state that asked
    return logits.squeeze(1), new_state, weights.squeeze(1)


# ---------------------------------------------------------------- correct variants


def step_score_by_hand(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    att = decoder.attention
    s_prev = last_hidden(state)  # (B, D)
    hidden = torch.tanh(att.W_q(s_prev)[:, None, :] + att.W_k(memory))  # (B, S, A)
    scores = att.w_v(hidden)[..., 0]  # (B, S)
    weights = _masked_softmax(scores, src_mask)  # (B, S)
    context = torch.einsum("bs,bsd->bd", weights, memory)  # (B, D)
    y = decoder.embedding(prev)  # (B, E)
    rnn_in = torch.cat([y, context], dim=-1).unsqueeze(1)
    output, new_state = decoder.rnn(rnn_in, state)
    logits = decoder.out(torch.cat([output[:, 0], context], dim=-1))
    return logits, new_state, weights


def step_projected_keys_bmm(
    decoder: BahdanauDecoder,
    prev: Tensor,
    state: Tensor,
    memory: Tensor,
    src_mask: Tensor,
    keys: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    if keys is None:
        keys = decoder.attention.project_keys(memory)
    query = last_hidden(state)[:, None]
    _, weights = decoder.attention(
        query, memory, memory, mask=src_mask[:, None, :], projected_keys=keys
    )
    context = torch.bmm(weights, memory)  # (B, 1, D)
    y = decoder.embedding(prev[:, None])  # (B, 1, E)
    output, state = decoder.rnn(torch.cat((y, context), 2), state)
    logits = decoder.out(torch.cat((output, context), 2))[:, 0]
    return logits, state, weights[:, 0]


def step_weights_loop(
    decoder: BahdanauDecoder, prev: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    att = decoder.attention
    q = att.W_q(last_hidden(state))  # (B, A)
    rows = []
    for b in range(memory.shape[0]):
        real = src_mask[b]
        s = att.w_v(torch.tanh(q[b] + att.W_k(memory[b, real]))).squeeze(-1)  # real keys only
        w = memory.new_zeros(memory.shape[1])
        w[real] = torch.softmax(s, dim=0)
        rows.append(w)
    weights = torch.stack(rows)  # (B, S)
    context = (weights.unsqueeze(-1) * memory).sum(1, keepdim=True)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1)).squeeze(1)
    return logits, state, weights


CASES = [
    BlindCase(
        CHECK,
        "query_from_encoder",
        step_query_from_encoder,
        "mistake",
        "I used the encoder's last state memory[:, -1] as the query.",
    ),
    BlindCase(
        CHECK,
        "context_from_projected_keys",
        step_context_from_projected_keys,
        "mistake",
        "I passed W_k(memory) as the values, so the context is a sum of projected keys.",
    ),
    BlindCase(
        CHECK,
        "rnn_input_context_first",
        step_rnn_input_order,
        "mistake",
        "I fed the recurrent layer [c_t; y_{t-1}] instead of [y_{t-1}; c_t].",
    ),
    BlindCase(
        CHECK,
        "out_input_context_first",
        step_out_input_order,
        "mistake",
        "I computed the logits from [c_t; s'_t] instead of [s'_t; c_t].",
    ),
    BlindCase(
        CHECK,
        "returns_rnn_output_as_state",
        step_returns_rnn_output,
        "mistake",
        "I returned the rnn's output (B, 1, D) as the new state instead of its state (1, B, D).",
    ),
    BlindCase(
        CHECK,
        "weights_not_squeezed",
        step_weights_not_squeezed,
        "mistake",
        "I returned the weights as (B, 1, S), without squeezing the query axis.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        step_mask_inverted,
        "mistake",
        "I passed ~src_mask, True on the padding, thinking the mask says what to block.",
    ),
    BlindCase(
        CHECK,
        "mask_unsqueezed_last",
        step_mask_unsqueezed_last,
        "mistake",
        "I gave the mask its extra axis at the end, src_mask.unsqueeze(-1), not at 1.",
    ),
    BlindCase(
        CHECK,
        "rnn_called_without_state",
        step_rnn_without_state,
        "mistake",
        "I called decoder.rnn without the previous state.",
    ),
    BlindCase(
        CHECK,
        "dot_product_scores",
        step_dot_product_scores,
        "mistake",
        "Since the query and the keys have the same size I scored with a scaled dot product "
        "instead of decoder.attention.",
    ),
    BlindCase(
        CHECK,
        "logits_from_previous_state",
        step_logits_from_query,
        "mistake",
        "I computed the logits from [s'_{t-1}; c_t], the query, instead of the new state.",
    ),
    BlindCase(
        CHECK,
        "score_by_hand_einsum",
        step_score_by_hand,
        "correct",
        "The score written with W_q, W_k and w_v, the context with einsum, the logits on 2-D "
        "tensors.",
    ),
    BlindCase(
        CHECK,
        "projected_keys_and_bmm",
        step_projected_keys_bmm,
        "correct",
        "An optional keys argument (default None, computed with project_keys), the context "
        "from torch.bmm of the weights and the memory.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_real_positions_loop",
        step_weights_loop,
        "correct",
        "A loop over the batch that scores only the real source positions and leaves zeros at "
        "the padding.",
    ),
]
