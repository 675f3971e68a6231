"""Blind cases for check_bahdanau_step (chapter 7), written from the chapter's text only."""

from __future__ import annotations

import torch

from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


def _finish(decoder, prev, state, context):
    """The part after the attention: [y; c] into the rnn, logits from [s'_t; c]."""
    y = decoder.embedding(prev).unsqueeze(1)  # (B, 1, E)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)  # (B, 1, D)
    logits = decoder.out(torch.cat([output, context], dim=-1))  # (B, 1, V)
    return logits.squeeze(1), state


def query_is_last_encoder_state(decoder, prev, state, memory, src_mask):
    query = memory[:, -1:, :]  # (B, 1, D): the encoder's last state
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def no_mask(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def mask_inverted(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=~src_mask.unsqueeze(1))
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def mask_not_unsqueezed(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)  # (B, 1, D)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask)  # (B, S) mask
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights.squeeze(1)


def previous_state_into_rnn(decoder, prev, state, memory, src_mask):
    s_prev = last_hidden(state).unsqueeze(1)  # (B, 1, D)
    context, weights = decoder.attention(s_prev, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, s_prev], dim=-1), state)  # [y; s'] not [y; c]
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def output_concat_swapped(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([context, output], dim=-1))  # [c_t; s'_t]
    return logits.squeeze(1), state, weights.squeeze(1)


def logits_from_old_state(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, new_state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, query], dim=-1))  # [s'_t; s'_{t-1}]
    return logits.squeeze(1), new_state, weights.squeeze(1)


def softmax_over_batch(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state))  # (B, A)
    k = att.W_k(memory)  # (B, S, A)
    scores = att.w_v(torch.tanh(q.unsqueeze(1) + k)).squeeze(-1)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    weights = torch.softmax(scores, dim=0)
    context = (weights.unsqueeze(-1) * memory).sum(dim=1, keepdim=True)  # (B, 1, D)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights


def refreshed_with_new_state(decoder, prev, state, memory, src_mask):
    mask = src_mask.unsqueeze(1)
    query = last_hidden(state).unsqueeze(1)
    context, _ = decoder.attention(query, memory, memory, mask=mask)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    # look again with the new state s'_t before predicting
    context, weights = decoder.attention(output, memory, memory, mask=mask)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def forward_order(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    logits, state = _finish(decoder, prev, state, context)
    return logits, weights.squeeze(1), state  # the order of the decoder's forward


def score_by_hand(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    s_prev = last_hidden(state)  # (B, D)
    scores = att.w_v(torch.tanh(att.W_q(s_prev)[:, None, :] + att.W_k(memory))).squeeze(-1)
    weights = torch.softmax(scores.masked_fill(src_mask.logical_not(), float("-inf")), dim=-1)
    context = torch.bmm(weights.unsqueeze(1), memory)  # (B, 1, D)
    y = decoder.embedding(prev)[:, None, :]
    output, new_state = decoder.rnn(torch.cat((y, context), dim=2), state)
    logits = decoder.out(torch.cat((output[:, 0], context[:, 0]), dim=1))  # (B, V)
    return logits, new_state, weights


def precomputed_keys(decoder, prev, state, memory, src_mask, keys=None):
    if keys is None:
        keys = decoder.attention.project_keys(memory)
    query = last_hidden(state)[:, None, :]  # (B, 1, D)
    context, weights = decoder.attention(
        query, memory, memory, mask=src_mask[:, None, :], projected_keys=keys
    )
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights[:, 0]


def einsum_context(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state))  # (B, A)
    feats = torch.tanh(q[:, None] + att.W_k(memory))  # (B, S, A)
    scores = torch.einsum("bsa,a->bs", feats, att.w_v.weight.squeeze(0))
    scores = torch.where(src_mask, scores, torch.full_like(scores, float("-inf")))
    weights = scores.softmax(dim=1)
    context = torch.einsum("bs,bsd->bd", weights, memory).unsqueeze(1)
    logits, state = _finish(decoder, prev, state, context)
    return logits, state, weights


CASES = [
    BlindCase(
        CHECK,
        "query_is_last_encoder_state",
        query_is_last_encoder_state,
        "mistake",
        "I used memory[:, -1], the encoder's last column, as the query instead of the decoder's "
        "previous state s'_{t-1}",
    ),
    BlindCase(
        CHECK,
        "no_mask",
        no_mask,
        "mistake",
        "I called the attention without the source mask, so padding gets weight",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        mask_inverted,
        "mistake",
        "I passed ~src_mask, so the attention looks only at the padding",
    ),
    BlindCase(
        CHECK,
        "mask_not_unsqueezed",
        mask_not_unsqueezed,
        "mistake",
        "I passed src_mask (B, S) as it is, without unsqueeze(1) for the query axis; it only "
        "fits a batch of one",
    ),
    BlindCase(
        CHECK,
        "previous_state_into_rnn",
        previous_state_into_rnn,
        "mistake",
        "I fed [y_{t-1}; s'_{t-1}] into the recurrent layer instead of [y_{t-1}; c_t]",
    ),
    BlindCase(
        CHECK,
        "output_concat_swapped",
        output_concat_swapped,
        "mistake",
        "I built the output layer's input as [c_t; s'_t] instead of [s'_t; c_t]",
    ),
    BlindCase(
        CHECK,
        "logits_from_old_state",
        logits_from_old_state,
        "mistake",
        "the logits come from [s'_t; s'_{t-1}]: I concatenated the query instead of the context",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        softmax_over_batch,
        "mistake",
        "I wrote the score by hand and took the softmax over dim=0, the batch, so the weights "
        "sum to 1 over the batch instead of over the source positions",
    ),
    BlindCase(
        CHECK,
        "refreshed_with_new_state",
        refreshed_with_new_state,
        "mistake",
        "after the rnn step I attended again with the new state s'_t and used that context and "
        "those weights for the logits (Luong's order)",
    ),
    BlindCase(
        CHECK,
        "forward_order",
        forward_order,
        "mistake",
        "I returned (logits, weights, state), the order of the decoder's forward, instead of "
        "(logits, state, weights)",
    ),
    BlindCase(
        CHECK,
        "score_by_hand",
        score_by_hand,
        "correct",
        "I wrote the additive score with W_q, W_k and w_v myself, masked_fill with -inf, and "
        "used bmm for the context",
    ),
    BlindCase(
        CHECK,
        "precomputed_keys",
        precomputed_keys,
        "correct",
        "an extra keys=None argument, projected keys passed to decoder.attention, "
        "src_mask[:, None, :] and weights[:, 0]",
    ),
    BlindCase(
        CHECK,
        "einsum_context",
        einsum_context,
        "correct",
        "einsum for w_v and for the context, torch.where for the mask",
    ),
]
