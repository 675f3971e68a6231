"""Blind set B9, check_teacher_forcing_loss (chapter 4): one teacher-forced loss."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import last_hidden
from transformer_tutorial.sequences import BOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shift(tgt_out: Tensor) -> Tensor:
    """<bos> y_1 .. y_{T-1}: the right decoder inputs, shared by mistakes that are elsewhere."""
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=tgt_out.dtype)
    return torch.cat([bos, tgt_out[:, :-1]], dim=1)


def _logits(model, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return logits


# ---------------------------------------------------------------- mistakes


def tf_not_shifted(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, tgt_out)  # the decoder reads what it must predict
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


def tf_language_model_shift(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in, target = tgt_out[:, :-1], tgt_out[:, 1:]  # shift as for a language model, no <bos>
    logits = _logits(model, src, src_lengths, tgt_in)
    return F.cross_entropy(logits.flatten(0, 1), target.flatten(), ignore_index=PAD_ID)


def tf_pad_counted(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten())  # no ignore_index


def tf_zero_start(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    if isinstance(state, tuple):
        start = tuple(torch.zeros_like(s) for s in state)
    else:
        start = torch.zeros_like(state)  # a fresh decoder starts from zeros
    logits, _ = model.decoder(_shift(tgt_out), context, start)
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


def tf_last_output_column(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)
    context = outputs[:, -1]  # the last encoder output as c
    logits, _ = model.decoder(_shift(tgt_out), context, state)
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


def tf_detached(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    loss = F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)
    return torch.tensor(loss.item())  # a clean number to log


def tf_feeds_argmax(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long)
    steps = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)  # (B, 1, V)
        steps.append(logits)
        prev = logits.argmax(-1)  # feed back what the model predicted
    logits = torch.cat(steps, dim=1)
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


def tf_per_sentence_sum(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    total = F.cross_entropy(
        logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID, reduction="sum"
    )
    return total / tgt_out.shape[0]  # average per sentence


def tf_mean_of_sentence_means(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    nll = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    per_sentence = (nll * real).sum(1) / real.sum(1)
    return per_sentence.mean()  # every sentence weighs the same, whatever its length


def tf_pad_as_start(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    start = torch.full((tgt_out.shape[0], 1), PAD_ID, dtype=tgt_out.dtype)
    tgt_in = torch.cat([start, tgt_out[:, :-1]], dim=1)  # shifted right, filled with <pad>
    logits = _logits(model, src, src_lengths, tgt_in)
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


def tf_logits_unflattened(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift(tgt_out))  # (B, T, V)
    return F.cross_entropy(logits, tgt_out, ignore_index=PAD_ID)


# ---------------------------------------------------------------- correct variants


def tf_transpose_class_axis(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    bos = torch.full((len(tgt_out), 1), BOS_ID, dtype=torch.long)
    tgt_in = torch.cat([bos, tgt_out[:, :-1]], dim=1)
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)


def tf_roll_and_manual_mean(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = tgt_out.roll(1, dims=1).clone()
    tgt_in[:, 0] = BOS_ID
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    logp = logits.log_softmax(-1).gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out != PAD_ID
    return -(logp * real).sum() / real.sum()


def tf_nll_loss(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    B, T = tgt_out.shape
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0), value=BOS_ID)
    outputs, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    logits, _ = model.decoder(tgt_in, context, state)
    logp = F.log_softmax(logits.reshape(B * T, -1), dim=-1)
    return F.nll_loss(logp, tgt_out.reshape(B * T), ignore_index=PAD_ID)


def tf_select_real_tokens(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = torch.cat([torch.full_like(tgt_out[:, :1], BOS_ID), tgt_out[:, :-1]], dim=1)
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    real = tgt_out != PAD_ID
    return F.cross_entropy(logits[real], tgt_out[real])


CASES = [
    BlindCase(
        CHECK,
        "targets_not_shifted",
        tf_not_shifted,
        "mistake",
        "I fed tgt_out itself to the decoder, so at each step it reads the token it must predict.",
    ),
    BlindCase(
        CHECK,
        "language_model_shift",
        tf_language_model_shift,
        "mistake",
        "I shifted like a language model (inputs tgt_out[:, :-1], targets tgt_out[:, 1:]) "
        "with no <bos>, so the first token is never predicted.",
    ),
    BlindCase(
        CHECK,
        "padding_in_loss",
        tf_pad_counted,
        "mistake",
        "I forgot ignore_index=PAD_ID, so the padded positions count in the mean.",
    ),
    BlindCase(
        CHECK,
        "decoder_starts_from_zeros",
        tf_zero_start,
        "mistake",
        "I gave the decoder a zero initial state (c is still the encoder's final state).",
    ),
    BlindCase(
        CHECK,
        "context_last_output_column",
        tf_last_output_column,
        "mistake",
        "I took c as outputs[:, -1], the encoder's last column, which is padding for "
        "short sources.",
    ),
    BlindCase(
        CHECK,
        "loss_detached_via_item",
        tf_detached,
        "mistake",
        "I returned torch.tensor(loss.item()), which cuts the loss off the model.",
    ),
    BlindCase(
        CHECK,
        "feeds_own_argmax",
        tf_feeds_argmax,
        "mistake",
        "I ran the decoder step by step feeding back its own argmax instead of the true "
        "previous tokens.",
    ),
    BlindCase(
        CHECK,
        "sum_over_tokens_per_sentence",
        tf_per_sentence_sum,
        "mistake",
        "I summed the token losses and divided by the batch size (a per-sentence loss) "
        "instead of averaging over the real tokens.",
    ),
    BlindCase(
        CHECK,
        "mean_of_sentence_means",
        tf_mean_of_sentence_means,
        "mistake",
        "I averaged the loss within each sentence, then over sentences, so short "
        "sentences weigh as much as long ones.",
    ),
    BlindCase(
        CHECK,
        "pad_as_start_token",
        tf_pad_as_start,
        "mistake",
        "I shifted the targets right but put <pad> in the first column instead of <bos>.",
    ),
    BlindCase(
        CHECK,
        "logits_not_flattened",
        tf_logits_unflattened,
        "mistake",
        "I passed the (B, T, V) logits straight to F.cross_entropy, which wants the "
        "classes on axis 1.",
    ),
    BlindCase(
        CHECK,
        "classes_on_axis_one",
        tf_transpose_class_axis,
        "correct",
        "I moved the vocabulary to axis 1 with logits.transpose(1, 2) instead of flattening.",
    ),
    BlindCase(
        CHECK,
        "roll_and_manual_mean",
        tf_roll_and_manual_mean,
        "correct",
        "I built the inputs with roll then set column 0 to <bos>, and averaged the "
        "log-probabilities of the real tokens myself.",
    ),
    BlindCase(
        CHECK,
        "pad_left_and_nll_loss",
        tf_nll_loss,
        "correct",
        "I built the inputs with F.pad(value=BOS_ID) and used log_softmax + nll_loss.",
    ),
    BlindCase(
        CHECK,
        "select_real_tokens",
        tf_select_real_tokens,
        "correct",
        "I picked the real positions with a boolean index and took the plain mean "
        "cross-entropy over them.",
    ),
]
