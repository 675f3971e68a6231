"""Mistakes that share a symptom with another: each was once told the other's name. A verdict on
one of them must describe the symptom and list this slip among its causes (or describe the
difference without naming a cause), never name only the other."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from transformer_tutorial import check
from transformer_tutorial.attention import masked_softmax
from transformer_tutorial.multihead import MultiHeadAttention
from transformer_tutorial.seq2seq import last_hidden
from transformer_tutorial.sequences import BOS_ID, EOS_ID, PAD_ID

from . import Correct, Mistake

# --- attention, scaled twice or on the wrong tensor ---------------------------------------------


def attention_scaled_twice(q, k, v, mask=None):
    q = q / math.sqrt(q.shape[-1])  # scaled once here ...
    w = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1]), mask)  # ... and again
    return w @ v, w


def attention_output_scaled(q, k, v, mask=None):
    w = masked_softmax(q @ k.transpose(-2, -1), mask)
    return w @ v / math.sqrt(q.shape[-1]), w  # the scale on the output, not the scores


def attention_as_list(q, k, v, mask=None):
    w = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return [w @ v, w]  # a list unpacks as a pair does


# --- self-attention -------------------------------------------------------------------------------


class _SelfAttention(nn.Module):
    def __init__(self, d_in, d_k, d_v=None):
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))

    def attend(self, q, k, v, mask, scale):
        w = masked_softmax(q @ k.transpose(-2, -1) * scale, mask)
        return w @ v, w


class QueriesTimesQueries(_SelfAttention):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        return self.attend(q, q, v, mask, 1 / math.sqrt(k.shape[-1]))  # q where k belongs


class MatricesSwapped(_SelfAttention):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_k, x @ self.W_q, x @ self.W_v  # W_q and W_k trade places
        return self.attend(q, k, v, mask, 1 / math.sqrt(q.shape[-1]))


class SelfAttentionScaledTwice(_SelfAttention):
    def forward(self, x, mask=None):
        d_k = self.W_q.shape[1]
        q, k, v = x @ self.W_q / math.sqrt(d_k), x @ self.W_k, x @ self.W_v
        return self.attend(q, k, v, mask, 1 / math.sqrt(d_k))


# --- sequences, Nadaraya-Watson, the LSTM cell, the feed-forward network --------------------------


def mask_one_past(lengths, max_len=None):
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] < lengths[:, None] + 1


def nw_keys_by_queries(queries, keys, values, width=1.0):
    diff = keys.unsqueeze(-1) - queries  # (T_k, T_q)
    w = torch.softmax(-(diff**2) / (2 * width**2), dim=-1).T  # normalised over the queries
    return (w * values).sum(-1), w


def nw_halved_twice(queries, keys, values, width=1.0):
    diff = queries.unsqueeze(-1) - keys
    w = torch.softmax(-0.5 * diff**2 / (2 * width**2), dim=-1)
    return (w * values).sum(-1), w


class LSTMGatesTradePlaces(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.in_proj = nn.Linear(input_size, 4 * hidden_size)
        self.state_proj = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def forward(self, x, state):
        h, c = state
        i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)  # the right order
        c = torch.sigmoid(i) * c + torch.sigmoid(f) * torch.tanh(g)  # i and f trade places
        return torch.sigmoid(o) * torch.tanh(c), c


class FeedForwardDropoutByDefault(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.1):
        super().__init__()
        self.linear1, self.linear2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.linear2(self.dropout(torch.relu(self.linear1(x))))


class MultiheadIntegerScale(MultiHeadAttention):
    """The book's module but for the scale, the integer part of sqrt(Dh)."""

    def forward(self, query, key, value, mask=None):
        q, k, v = (self.split_heads(proj(x)) for proj, x in
                   ((self.q_proj, query), (self.k_proj, key), (self.v_proj, value)))  # fmt: skip
        w = masked_softmax(q @ k.transpose(-2, -1) / int(math.sqrt(self.head_dim)), mask)
        return self.out_proj(self.merge_heads(w @ v))


# --- the teacher-forcing loss ----------------------------------------------------------------------


def tf_ordinary_tokens_only(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long)
    logits, _ = model.decoder(torch.cat([bos, tgt_out[:, :-1]], 1), last_hidden(state), state)
    per_token = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")
    return per_token[(tgt_out != PAD_ID) & (tgt_out != EOS_ID)].mean()  # <eos> left out


# --- decoding -------------------------------------------------------------------------------------


@torch.no_grad()
def greedy_pad_on_positions(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad, memory = model.config.pad_id, model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)  # (B, t, V)
        logits[:, pad] = -math.inf  # meant the vocabulary axis, hits a position
        step = logits[:, -1].argmax(-1).masked_fill(done, pad)
        ys = torch.cat([ys, step[:, None]], 1)
        done |= step == eos_id
        if done.all():
            break
    return ys[:, 1:]


def top_p_unnormalised(logits, p):
    probs, order = logits.exp().sort(-1, descending=True)  # exp, never divided by the sum
    keep_sorted = probs.cumsum(-1) - probs < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, -math.inf)


def mask_tokens_half_of_rest(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8,
                             random_prob=0.1):  # fmt: skip
    """Hugging Face's split: [MASK] with mask_prob, then half of the rest random."""
    special = torch.tensor(sorted(vocab.special_ids))
    chosen = (torch.rand(tokens.shape, generator=generator) < select_prob) & ~torch.isin(
        tokens, special
    )
    labels = torch.where(chosen, tokens, -100)
    masked = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    rest = chosen & ~masked & (torch.rand(tokens.shape, generator=generator) < 0.5)
    ordinary = torch.tensor([i for i in range(vocab.vocab_size) if i not in vocab.special_ids])
    drawn = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(masked, vocab.mask_id, torch.where(rest, drawn, tokens))
    return inputs, labels


A, SA, NW = check.check_attention, check.check_self_attention, check.check_nadaraya_watson
MISTAKES = [
    Mistake(A, "audit-attention-scaled-twice", attention_scaled_twice, "sqrt(d_k) twice",
            mistake="attention-by-dk"),
    Mistake(A, "audit-attention-output-scaled", attention_output_scaled, "applied to the output",
            mistake="attention-unscaled"),
    Mistake(SA, "audit-self-attn-q-q", QueriesTimesQueries, "q stands where k belongs",
            mistake="self-attn-one-matrix"),
    Mistake(SA, "audit-self-attn-matrices-swapped", MatricesSwapped,
            "made with each other's matrices", mistake="self-attn-k-times-q"),
    Mistake(SA, "audit-self-attn-scaled-twice", SelfAttentionScaledTwice, "sqrt(d_k) twice",
            mistake="self-attn-scaled-by-dk"),
    Mistake(check.check_padding_mask, "audit-mask-one-past", mask_one_past,
            "nor `position < length + 1`", mistake="mask-off-by-one"),
    Mistake(NW, "audit-nw-keys-by-queries", nw_keys_by_queries, "laid out (T_k, T_q)",
            mistake="nw-softmax-over-queries"),
    Mistake(NW, "audit-nw-halved-twice", nw_halved_twice, "the half taken twice",
            mistake="nw-two-squared"),
    Mistake(check.check_lstm_cell, "audit-lstm-formula-swap", LSTMGatesTradePlaces,
            "in each other's place in that formula", mistake="lstm-gates-i-f-swapped"),
    Mistake(check.check_feed_forward, "audit-ffn-dropout-by-default", FeedForwardDropoutByDefault,
            "defaults to 0.1"),
    Mistake(check.check_multihead, "audit-multihead-integer-scale", MultiheadIntegerScale,
            "out differs"),
    Mistake(check.check_teacher_forcing_loss, "audit-tf-ordinary-only", tf_ordinary_tokens_only,
            "left it out of the loss's mask", mistake="tf-eos-not-trained"),
    Mistake(check.check_greedy_decode, "audit-greedy-pad-on-positions", greedy_pad_on_positions,
            "on the vocabulary axis", mistake="greedy-pad-as-word"),
    Mistake(check.check_top_p, "audit-top-p-unnormalised", top_p_unnormalised,
            "never divided by their sum", mistake="top-p-overflow"),
    Mistake(check.check_mask_tokens, "audit-bert-half-of-rest", mask_tokens_half_of_rest,
            "where about 50% and 29% are expected"),
]  # fmt: skip

CORRECT = [Correct(A, "audit-attention-as-list", attention_as_list)]
