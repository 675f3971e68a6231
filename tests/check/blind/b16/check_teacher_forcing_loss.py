"""Blind set B16, check_teacher_forcing_loss (chapter 4): the teacher-forced loss of a Seq2Seq as
readers write it from the encoder and decoder."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import BOS_ID, PAD_ID, Seq2Seq, last_hidden

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shift_right(tgt_out: Tensor) -> Tensor:
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=tgt_out.dtype, device=tgt_out.device)
    return torch.cat([bos, tgt_out[:, :-1]], dim=1)  # (B, T)


def _token_loss(logits: Tensor, targets: Tensor) -> Tensor:
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=PAD_ID)


def _zeros_like_state(state):
    if isinstance(state, tuple):
        return tuple(torch.zeros_like(s) for s in state)
    return torch.zeros_like(state)


# ---------------------------------------------------------------- mistakes


def tf_not_shifted(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_out, last_hidden(state), state)  # the targets as inputs
    return _token_loss(logits, tgt_out)


def tf_language_model_shift(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    tgt_in, targets = tgt_out[:, :-1], tgt_out[:, 1:]  # predict token t + 1 from token t
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return _token_loss(logits, targets)


def tf_bos_overwrites_first(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    tgt_in = tgt_out.clone()
    tgt_in[:, 0] = BOS_ID  # the decoder starts from <bos>
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return _token_loss(logits, tgt_out)


def tf_own_predictions(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long)
    steps = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)  # (B, 1, V)
        steps.append(logits)
        prev = logits.argmax(dim=-1)  # feed back what the model said
    return _token_loss(torch.cat(steps, dim=1), tgt_out)


def tf_padding_in_loss(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift_right(tgt_out), last_hidden(state), state)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1))  # mean over all cells


def tf_decoder_from_zeros(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)  # the source reaches the decoder through c
    logits, _ = model.decoder(_shift_right(tgt_out), context, _zeros_like_state(state))
    return _token_loss(logits, tgt_out)


def tf_last_output_column(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)
    s_last = outputs[:, -1]  # (B, D): the state after the last source token
    start = s_last.unsqueeze(0)  # (1, B, D)
    if isinstance(state, tuple):
        start = (start, state[1])
    logits, _ = model.decoder(_shift_right(tgt_out), s_last, start)
    return _token_loss(logits, tgt_out)


def tf_detached_number(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift_right(tgt_out), last_hidden(state), state)
    loss = _token_loss(logits, tgt_out)
    return torch.tensor(loss.item())  # a clean scalar for logging


def tf_sum_per_sentence(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift_right(tgt_out), last_hidden(state), state)
    total = F.cross_entropy(
        logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID, reduction="sum"
    )
    return total / tgt_out.shape[0]  # averaged over the batch


def tf_mean_of_sentence_means(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift_right(tgt_out), last_hidden(state), state)
    per_token = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    per_sentence = (per_token * real).sum(dim=1) / real.sum(dim=1)  # (B,)
    return per_sentence.mean()


def tf_source_lengths_ignored(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    full = torch.full_like(src_lengths, src.shape[1])  # the batch is padded to S anyway
    _, state = model.encoder(src, full)
    logits, _ = model.decoder(_shift_right(tgt_out), last_hidden(state), state)
    return _token_loss(logits, tgt_out)


# ---------------------------------------------------------------- correct variants


def tf_start_and_f_pad(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    start = model.start(src, src_lengths)  # context and hidden state in one go
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0), value=BOS_ID)
    logits, _ = model.decoder(tgt_in, start.context, start.hidden)
    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)


def tf_gather_log_probs(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, final = model.encoder(src, src_lengths)
    tgt_in = torch.roll(tgt_out, shifts=1, dims=1)
    tgt_in[:, 0] = BOS_ID  # tgt_in is a fresh tensor, so writing into it is fine
    logits, _ = model.decoder(tgt_in, last_hidden(final), final)
    log_probs = torch.log_softmax(logits, dim=-1)  # (B, T, V)
    picked = log_probs.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out != PAD_ID
    return -(picked * real).sum() / real.sum()


def tf_sum_over_count(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    tgt_in = torch.empty_like(tgt_out)
    tgt_in[:, 0] = BOS_ID
    tgt_in[:, 1:] = tgt_out[:, :-1]
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    real = tgt_out.ne(PAD_ID)
    losses = F.cross_entropy(logits[real], tgt_out[real], reduction="sum")
    return losses / real.sum().clamp(min=1)


CASES = [
    BlindCase(
        CHECK,
        "targets_not_shifted",
        tf_not_shifted,
        "mistake",
        "I fed tgt_out itself to the decoder, so at each step it sees the token it must predict.",
    ),
    BlindCase(
        CHECK,
        "language_model_shift",
        tf_language_model_shift,
        "mistake",
        "I shifted like a language model: inputs tgt_out[:, :-1], targets tgt_out[:, 1:], so "
        "there is no <bos> and y_1 is never predicted.",
    ),
    BlindCase(
        CHECK,
        "bos_overwrites_first_token",
        tf_bos_overwrites_first,
        "mistake",
        "I copied tgt_out and wrote <bos> over its first column instead of shifting right.",
    ),
    BlindCase(
        CHECK,
        "own_argmax_fed_back",
        tf_own_predictions,
        "mistake",
        "I decoded step by step and fed back the argmax of each step, as in greedy decoding.",
    ),
    BlindCase(
        CHECK,
        "padding_counted",
        tf_padding_in_loss,
        "mistake",
        "I used F.cross_entropy without ignore_index, so the padded positions count.",
    ),
    BlindCase(
        CHECK,
        "decoder_state_zeros",
        tf_decoder_from_zeros,
        "mistake",
        "I passed the encoder's summary as the context but started the decoder's recurrent "
        "state from zeros.",
    ),
    BlindCase(
        CHECK,
        "last_output_column",
        tf_last_output_column,
        "mistake",
        "I took outputs[:, -1] as the encoder's final state, which is padding (zeros) for a "
        "short source.",
    ),
    BlindCase(
        CHECK,
        "loss_detached",
        tf_detached_number,
        "mistake",
        "I returned torch.tensor(loss.item()), a number without a graph.",
    ),
    BlindCase(
        CHECK,
        "summed_over_tokens_per_sentence",
        tf_sum_per_sentence,
        "mistake",
        "I summed the cross-entropy over the real tokens and divided by the batch size.",
    ),
    BlindCase(
        CHECK,
        "mean_of_sentence_means",
        tf_mean_of_sentence_means,
        "mistake",
        "I averaged each sentence over its real tokens and then averaged the sentences, so "
        "short targets weigh as much as long ones.",
    ),
    BlindCase(
        CHECK,
        "source_lengths_ignored",
        tf_source_lengths_ignored,
        "mistake",
        "I gave the encoder the padded width S as every length, so short sources are encoded "
        "through their padding.",
    ),
    BlindCase(
        CHECK,
        "start_and_f_pad",
        tf_start_and_f_pad,
        "correct",
        "model.start for context and state, F.pad to put <bos> in front, cross_entropy on "
        "logits.transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "gathered_log_probs",
        tf_gather_log_probs,
        "correct",
        "torch.roll then <bos> in column 0; log_softmax and gather, masked mean by hand.",
    ),
    BlindCase(
        CHECK,
        "boolean_indexing_sum_over_count",
        tf_sum_over_count,
        "correct",
        "tgt_in filled column by column; cross_entropy on the real positions picked by boolean "
        "indexing, summed and divided by their count.",
    ),
]
