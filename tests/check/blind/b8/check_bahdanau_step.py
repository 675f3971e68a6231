"""Blind set B8, check_bahdanau_step (chapter 7): one step of the attention decoder."""

from __future__ import annotations

import torch

from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


# ---------------------------------------------------------------- mistakes


def new_state_as_output_query(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, _ = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    # Luong: attend again with the new state and use that context for the output
    context, weights = decoder.attention(output, memory, memory, mask=src_mask.unsqueeze(1))
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def no_source_mask(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def mask_inverted(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    pad = ~src_mask  # "mask out" the positions marked True
    context, weights = decoder.attention(query, memory, memory, mask=pad.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def state_fed_instead_of_context(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, query], dim=-1), state)  # query, not context
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def softmax_over_batch(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).squeeze(-1)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=0))
    context = (weights.unsqueeze(-1) * memory).sum(1, keepdim=True)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights


def softmax_over_singleton_axis(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory)))  # (B, S, 1)
    scores = scores.masked_fill(~src_mask.unsqueeze(-1), float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1))  # the last axis has size 1
    context = (weights * memory).sum(1, keepdim=True)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(-1)


def logits_concat_order_swapped(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([context, output], dim=-1))  # [c_t; s'_t]
    return logits.squeeze(1), state, weights.squeeze(1)


def logits_from_state_twice(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, query], dim=-1))  # the old state, not c_t
    return logits.squeeze(1), state, weights.squeeze(1)


def last_encoder_state_as_query(decoder, prev, state, memory, src_mask):
    query = memory[:, -1:]  # (B, 1, D): the encoder's last position
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def returns_old_state(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def weights_keep_query_axis(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights  # (B, 1, S)


def embedding_unsqueezed_at_0(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(0)  # (1, B, E): only lines up when B == 1
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


# ---------------------------------------------------------------- correct variants


def scores_by_hand(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    s_prev = state[0] if isinstance(state, tuple) else state  # (1, B, D)
    q = att.W_q(s_prev[-1])  # (B, A)
    scores = att.w_v(torch.tanh(q[:, None, :] + att.W_k(memory))).squeeze(-1)  # (B, S)
    weights = torch.softmax(scores.masked_fill(~src_mask, float("-inf")), dim=-1)
    context = torch.einsum("bs,bsd->bd", weights, memory)  # (B, D)
    y = decoder.embedding(prev)  # (B, E)
    rnn_in = torch.cat([y, context], dim=-1).unsqueeze(1)  # (B, 1, E + D)
    output, new_state = decoder.rnn(rnn_in, state)
    logits = decoder.out(torch.cat([output[:, 0], context], dim=-1))
    return logits, new_state, weights


def projected_keys_once(decoder, prev, state, memory, src_mask):
    keys = decoder.attention.project_keys(memory)  # (B, S, A)
    query = last_hidden(state)[:, None]
    context, weights = decoder.attention(
        query, memory, memory, mask=src_mask[:, None, :], projected_keys=keys
    )
    y = decoder.embedding(prev[:, None])  # (B, 1, E)
    output, state = decoder.rnn(torch.cat((y, context), dim=2), state)
    logits = decoder.out(torch.cat((output, context), dim=2))[:, 0]
    return logits, state, weights[:, 0]


def bool_mask_as_bmm(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    _, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    context = torch.bmm(weights, memory)  # (B, 1, D), recomputed from the weights
    y = decoder.embedding(prev).view(prev.shape[0], 1, -1)
    output, state = decoder.rnn(torch.cat([y, context], -1), state)
    logits = decoder.out(torch.cat([output, context], -1)).squeeze(1)
    return logits, state, weights.squeeze(1)


CASES = [
    BlindCase(
        CHECK,
        "new_state_as_output_query",
        new_state_as_output_query,
        "mistake",
        "after the RNN step I attended again with the new state s'_t (Luong style) and "
        "used that context and those weights for the output",
    ),
    BlindCase(
        CHECK,
        "no_source_mask",
        no_source_mask,
        "mistake",
        "I called decoder.attention without the mask, so padding gets weight",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        mask_inverted,
        "mistake",
        "I passed ~src_mask, thinking the attention wants the padding positions",
    ),
    BlindCase(
        CHECK,
        "state_fed_instead_of_context",
        state_fed_instead_of_context,
        "mistake",
        "I concatenated the embedding with the previous state (the query) instead of the "
        "context c_t as the RNN input",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        softmax_over_batch,
        "mistake",
        "I wrote the scores by hand as (B, S) and took softmax(dim=0), over the batch",
    ),
    BlindCase(
        CHECK,
        "softmax_over_singleton_axis",
        softmax_over_singleton_axis,
        "mistake",
        "my scores were (B, S, 1) and I took the softmax over dim=-1, an axis of size 1",
    ),
    BlindCase(
        CHECK,
        "logits_concat_order_swapped",
        logits_concat_order_swapped,
        "mistake",
        "I fed out() with [c_t; s'_t] instead of [s'_t; c_t]",
    ),
    BlindCase(
        CHECK,
        "logits_from_state_twice",
        logits_from_state_twice,
        "mistake",
        "for the logits I concatenated s'_t with the query s'_{t-1} instead of c_t",
    ),
    BlindCase(
        CHECK,
        "last_encoder_state_as_query",
        last_encoder_state_as_query,
        "mistake",
        "I used the encoder's last position memory[:, -1] as the query",
    ),
    BlindCase(
        CHECK,
        "returns_old_state",
        returns_old_state,
        "mistake",
        "I returned the incoming state instead of the RNN's new state",
    ),
    BlindCase(
        CHECK,
        "weights_keep_query_axis",
        weights_keep_query_axis,
        "mistake",
        "I returned the weights as (B, 1, S), forgetting to squeeze the query axis",
    ),
    BlindCase(
        CHECK,
        "embedding_unsqueezed_at_0",
        embedding_unsqueezed_at_0,
        "mistake",
        "I unsqueezed the embedding at dim 0 (time-first habit), which only fits when B == 1",
    ),
    BlindCase(
        CHECK,
        "scores_by_hand",
        scores_by_hand,
        "correct",
        "scores written with W_q, W_k, w_v, einsum for the context, 2-D logits",
    ),
    BlindCase(
        CHECK,
        "projected_keys_once",
        projected_keys_once,
        "correct",
        "keys projected with project_keys and passed in; None-indexing instead of unsqueeze",
    ),
    BlindCase(
        CHECK,
        "bool_mask_as_bmm",
        bool_mask_as_bmm,
        "correct",
        "context recomputed as bmm(weights, memory); embedding reshaped with view",
    ),
]
