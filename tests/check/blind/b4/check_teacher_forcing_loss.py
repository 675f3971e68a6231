"""Blind cases for check_teacher_forcing_loss (chapter 4), written from the chapter's text only."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from transformer_tutorial.seq2seq import last_hidden
from transformer_tutorial.sequences import BOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shift(tgt_out):
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=tgt_out.dtype, device=tgt_out.device)
    return torch.cat([bos, tgt_out[:, :-1]], dim=1)


def _logits(model, src, src_lengths, tgt_in):
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return logits


def _mean_ce(logits, targets):
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), ignore_index=PAD_ID)


def unshifted_inputs(model, src, src_lengths, tgt_out):
    return _mean_ce(_logits(model, src, src_lengths, tgt_out), tgt_out)


def language_model_shift(model, src, src_lengths, tgt_out):
    tgt_in, targets = tgt_out[:, :-1], tgt_out[:, 1:]
    return _mean_ce(_logits(model, src, src_lengths, tgt_in), targets)


def padding_in_the_mean(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))


def context_from_last_column(model, src, src_lengths, tgt_out):
    outputs, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), outputs[:, -1], state)
    return _mean_ce(logits, tgt_out)


def decoder_from_zeros(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    if isinstance(state, tuple):
        start = tuple(torch.zeros_like(s) for s in state)
    else:
        start = torch.zeros_like(state)
    logits, _ = model.decoder(_shift(tgt_out), context, start)
    return _mean_ce(logits, tgt_out)


def sum_over_batch_size(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    V = logits.shape[-1]
    total = F.cross_entropy(
        logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID, reduction="sum"
    )
    return total / tgt_out.shape[0]


def mean_of_sentence_means(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    per_token = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    per_sentence = (per_token * real).sum(1) / real.sum(1)
    return per_sentence.mean()


def cross_entropy_over_classes_axis(model, src, src_lengths, tgt_out):
    bos = torch.full_like(tgt_out[:, :1], BOS_ID)
    tgt_in = torch.cat((bos, tgt_out[:, :-1]), dim=1)
    outputs, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)  # (B, T, V)
    return F.cross_entropy(logits.permute(0, 2, 1), tgt_out, ignore_index=PAD_ID)


def log_softmax_by_hand(model, src, src_lengths, tgt_out, pad_id=PAD_ID):
    tgt_in = tgt_out.roll(1, dims=1)
    tgt_in[:, 0] = BOS_ID
    logits = _logits(model, src, src_lengths, tgt_in)
    log_probs = logits.log_softmax(dim=-1)
    picked = log_probs.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out != pad_id
    return -(picked * real).sum() / real.sum()


CASES = [
    BlindCase(
        CHECK,
        "unshifted_inputs",
        unshifted_inputs,
        "mistake",
        "I fed tgt_out itself to the decoder as its inputs",
    ),
    BlindCase(
        CHECK,
        "language_model_shift",
        language_model_shift,
        "mistake",
        "I shifted as in chapter 2's language model: inputs tgt_out[:, :-1], targets tgt_out[:, 1:]",
    ),
    BlindCase(
        CHECK,
        "padding_in_the_mean",
        padding_in_the_mean,
        "mistake",
        "I called F.cross_entropy without ignore_index, so padding counts",
    ),
    BlindCase(
        CHECK,
        "context_from_last_column",
        context_from_last_column,
        "mistake",
        "I took c as outputs[:, -1], the encoder's last column",
    ),
    BlindCase(
        CHECK,
        "decoder_from_zeros",
        decoder_from_zeros,
        "mistake",
        "I passed c as the context but started the decoder from a zero state",
    ),
    BlindCase(
        CHECK,
        "sum_over_batch_size",
        sum_over_batch_size,
        "mistake",
        "I summed the token losses and divided by the number of sentences",
    ),
    BlindCase(
        CHECK,
        "mean_of_sentence_means",
        mean_of_sentence_means,
        "mistake",
        "I averaged each sentence's real tokens, then averaged the sentences",
    ),
    BlindCase(
        CHECK,
        "cross_entropy_over_classes_axis",
        cross_entropy_over_classes_axis,
        "correct",
        "F.cross_entropy on logits permuted to (B, V, T), with ignore_index",
    ),
    BlindCase(
        CHECK,
        "log_softmax_by_hand",
        log_softmax_by_hand,
        "correct",
        "inputs by roll and writing <bos>; log_softmax, gather and a masked mean by hand",
    ),
]
