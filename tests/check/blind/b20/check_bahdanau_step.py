"""Blind set B20, check_bahdanau_step (chapter 7): one step of the Bahdanau decoder as readers
write it."""

from __future__ import annotations

import torch

from transformer_tutorial.seq2seq import last_hidden

from .. import BlindCase

CHECK = "check_bahdanau_step"


# ---------------------------------------------------------------- mistakes


def bs_new_state_query(decoder, prev, state, memory, src_mask):
    y = decoder.embedding(prev).unsqueeze(1)  # (B, 1, E)
    query = last_hidden(state).unsqueeze(1)
    context, _ = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    # the output layer should look with the new state: attend again from s'_t
    context, weights = decoder.attention(output, memory, memory, mask=src_mask.unsqueeze(1))
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_no_mask(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory)  # padding is zeros anyway
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_mask_inverted(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    pad = ~src_mask  # the padding positions
    context, weights = decoder.attention(query, memory, memory, mask=pad.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_state_into_rnn(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)  # (B, 1, D)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, new_state = decoder.rnn(torch.cat([y, query], dim=-1), state)  # [y; s'_{t-1}]
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), new_state, weights.squeeze(1)


def bs_concat_order(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([context, y], dim=-1), state)  # [c_t; y_{t-1}]
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_logits_order(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([context, output], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_logits_old_state(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    _, new_state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([query, context], dim=-1))  # [s'; c_t]
    return logits.squeeze(1), new_state, weights.squeeze(1)


def bs_softmax_over_batch(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory))).squeeze(-1)  # (B, S)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    weights = torch.softmax(scores, dim=0)
    context = torch.bmm(weights.unsqueeze(1), memory)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights


def bs_softmax_size_one(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    q = att.W_q(last_hidden(state)).unsqueeze(1)  # (B, 1, A)
    scores = att.w_v(torch.tanh(q + att.W_k(memory)))  # (B, S, 1)
    scores = scores.masked_fill(~src_mask.unsqueeze(-1), float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num()  # (B, S, 1)
    context = (weights * memory).sum(1, keepdim=True)  # (B, 1, D)
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(-1)


def bs_last_encoder_query(decoder, prev, state, memory, src_mask):
    lengths = src_mask.sum(1)
    query = memory[torch.arange(len(memory)), lengths - 1].unsqueeze(1)  # s_S asks
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


def bs_returns_old_state(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, _ = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)  # state goes on to the next step


def bs_weights_not_squeezed(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights  # (B, 1, S)


def bs_mean_memory_context(decoder, prev, state, memory, src_mask):
    query = last_hidden(state).unsqueeze(1)
    _, weights = decoder.attention(query, memory, memory, mask=src_mask.unsqueeze(1))
    context = memory.mean(dim=1, keepdim=True)  # c_t: the summary of the source
    y = decoder.embedding(prev).unsqueeze(1)
    output, state = decoder.rnn(torch.cat([y, context], dim=-1), state)
    logits = decoder.out(torch.cat([output, context], dim=-1))
    return logits.squeeze(1), state, weights.squeeze(1)


# ---------------------------------------------------------------- correct variants


def bs_manual_score(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    s_prev = last_hidden(state)  # (B, D)
    feats = torch.tanh(att.W_q(s_prev)[:, None, :] + att.W_k(memory))  # (B, S, A)
    scores = att.w_v(feats)[..., 0].masked_fill(~src_mask, float("-inf"))  # (B, S)
    alpha = scores.softmax(dim=-1)
    c = torch.einsum("bs,bsd->bd", alpha, memory)  # (B, D)
    y = decoder.embedding(prev)  # (B, E)
    out, new_state = decoder.rnn(torch.cat([y, c], dim=-1).unsqueeze(1), state)
    logits = decoder.out(torch.cat([out[:, 0], c], dim=-1))
    return logits, new_state, alpha


def bs_projected_keys(decoder, prev, state, memory, src_mask):
    keys = decoder.attention.project_keys(memory)
    h = state[0] if isinstance(state, tuple) else state  # (1, B, D)
    query = h[-1:].transpose(0, 1)  # (B, 1, D)
    context, weights = decoder.attention(
        query, memory, memory, mask=src_mask[:, None, :], projected_keys=keys
    )
    emb = decoder.embedding(prev.view(-1, 1))  # (B, 1, E)
    out, state = decoder.rnn(torch.cat((emb, context), 2), state)
    return decoder.out(torch.cat((out, context), 2))[:, 0], state, weights[:, 0]


def bs_bmm_context(decoder, prev, state, memory, src_mask):
    query = last_hidden(state)[:, None]
    _, alpha = decoder.attention(query, memory, memory, src_mask.unsqueeze(-2))  # (B, 1, S)
    context = torch.bmm(alpha, memory)  # c_t = sum_i alpha_ti s_i
    rnn_in = torch.cat([decoder.embedding(prev)[:, None], context], dim=-1)
    output, new_state = decoder.rnn(rnn_in, state)
    logits = decoder.out(torch.cat([output, context], dim=-1)).squeeze(1)
    return logits, new_state, alpha.squeeze(1)


CASES = [
    BlindCase(
        CHECK,
        "attend_again_with_new_state",
        bs_new_state_query,
        "mistake",
        "After the RNN I attended again from the new state s'_t and used that context.",
    ),
    BlindCase(CHECK, "no_mask", bs_no_mask, "mistake", "I did not pass the source mask."),
    BlindCase(
        CHECK,
        "mask_inverted",
        bs_mask_inverted,
        "mistake",
        "I passed ~src_mask, thinking the mask marks padding.",
    ),
    BlindCase(
        CHECK,
        "state_instead_of_context_in_rnn",
        bs_state_into_rnn,
        "mistake",
        "I fed [y; s'_{t-1}] into the RNN instead of [y; c_t].",
    ),
    BlindCase(
        CHECK,
        "rnn_input_order",
        bs_concat_order,
        "mistake",
        "I concatenated [c_t; y] for the RNN input instead of [y; c_t].",
    ),
    BlindCase(
        CHECK,
        "logits_input_order",
        bs_logits_order,
        "mistake",
        "I concatenated [c_t; s'_t] for the output layer.",
    ),
    BlindCase(
        CHECK,
        "logits_from_old_state",
        bs_logits_old_state,
        "mistake",
        "I fed the previous state, not the new one, to the output layer.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        bs_softmax_over_batch,
        "mistake",
        "Writing the score myself, I took the softmax over dim=0.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_size_one",
        bs_softmax_size_one,
        "mistake",
        "My scores were (B, S, 1) and I took the softmax over the last axis.",
    ),
    BlindCase(
        CHECK,
        "encoder_state_as_query",
        bs_last_encoder_query,
        "mistake",
        "I used the encoder's last real state as the query.",
    ),
    BlindCase(
        CHECK,
        "returns_previous_state",
        bs_returns_old_state,
        "mistake",
        "I returned the state I was given instead of the RNN's new state.",
    ),
    BlindCase(
        CHECK,
        "weights_B_1_S",
        bs_weights_not_squeezed,
        "mistake",
        "I returned the weights as (B, 1, S).",
    ),
    BlindCase(
        CHECK,
        "mean_context",
        bs_mean_memory_context,
        "mistake",
        "I used the mean of the encoder states as c_t.",
    ),
    BlindCase(
        CHECK,
        "manual_score_einsum",
        bs_manual_score,
        "correct",
        "The score written with W_q, W_k, w_v; softmax; einsum for c_t; (B, E) shapes.",
    ),
    BlindCase(
        CHECK,
        "projected_keys",
        bs_projected_keys,
        "correct",
        "project_keys first and passed as projected_keys; query from h[-1:].transpose(0, 1).",
    ),
    BlindCase(
        CHECK,
        "bmm_context",
        bs_bmm_context,
        "correct",
        "Only the weights of decoder.attention, then c_t = bmm(alpha, memory).",
    ),
]
