"""Blind set B8, check_teacher_forcing_loss (chapter 4): the loss of one teacher-forced step."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import Seq2Seq, last_hidden
from transformer_tutorial.sequences import BOS_ID, EOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shift(tgt_out: Tensor, first: int = BOS_ID) -> Tensor:
    start = torch.full((tgt_out.shape[0], 1), first, dtype=tgt_out.dtype)
    return torch.cat([start, tgt_out[:, :-1]], dim=1)  # (B, T)


def _logits(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return logits  # (B, T, V)


def _ce(logits: Tensor, targets: Tensor) -> Tensor:
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), ignore_index=PAD_ID)


# ---------------------------------------------------------------- mistakes


def targets_not_shifted(model, src, src_lengths, tgt_out):
    return _ce(_logits(model, src, src_lengths, tgt_out), tgt_out)


def lm_style_shift_no_bos(model, src, src_lengths, tgt_out):
    # next-token shift within tgt_out itself: input y_1..y_{T-1}, target y_2..<eos>
    return _ce(_logits(model, src, src_lengths, tgt_out[:, :-1]), tgt_out[:, 1:])


def padding_counted(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))


def decoder_from_zeros(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    c = last_hidden(state)
    if isinstance(state, tuple):
        zero = (torch.zeros_like(state[0]), torch.zeros_like(state[1]))
    else:
        zero = torch.zeros_like(state)
    logits, _ = model.decoder(_shift(tgt_out), c, zero)
    return _ce(logits, tgt_out)


def context_from_last_output_column(model, src, src_lengths, tgt_out):
    outputs, state = model.encoder(src, src_lengths)
    c = outputs[:, -1]  # (B, D): "the last state"
    logits, _ = model.decoder(_shift(tgt_out), c, state)
    return _ce(logits, tgt_out)


def feeds_own_argmax(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    c = last_hidden(state)
    prev = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long)
    steps = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, c, state)  # (B, 1, V)
        steps.append(logits)
        prev = logits.argmax(-1)
    return _ce(torch.cat(steps, dim=1), tgt_out)


def loss_detached(model, src, src_lengths, tgt_out):
    loss = _ce(_logits(model, src, src_lengths, _shift(tgt_out)), tgt_out)
    return torch.tensor(loss.item())


def summed_not_averaged(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    V = logits.shape[-1]
    return F.cross_entropy(
        logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID, reduction="sum"
    )


def mean_of_sentence_means(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    per_token = F.cross_entropy(
        logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID, reduction="none"
    )  # (B, T), 0 at padding
    real = (tgt_out != PAD_ID).float()
    return (per_token.sum(1) / real.sum(1)).mean()


def eos_as_start_token(model, src, src_lengths, tgt_out):
    return _ce(_logits(model, src, src_lengths, _shift(tgt_out, first=EOS_ID)), tgt_out)


def bos_hard_coded_zero(model, src, src_lengths, tgt_out):
    # I assumed <bos> is id 0 (it is <pad>)
    return _ce(_logits(model, src, src_lengths, _shift(tgt_out, first=0)), tgt_out)


# ---------------------------------------------------------------- correct variants


def class_axis_second(model, src, src_lengths, tgt_out):
    tgt_in = torch.cat([torch.full_like(tgt_out[:, :1], BOS_ID), tgt_out[:, :-1]], dim=1)
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return F.cross_entropy(logits.permute(0, 2, 1), tgt_out, ignore_index=PAD_ID)


def manual_log_softmax_gather(model, src, src_lengths, tgt_out):
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0), value=BOS_ID)
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    logp = logits.log_softmax(-1).gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out != PAD_ID
    return -(logp * real).sum() / real.sum()


def roll_then_set_bos(model, src, src_lengths, tgt_out):
    tgt_in = tgt_out.roll(1, dims=1).clone()
    tgt_in[:, 0] = BOS_ID
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    keep = tgt_out != PAD_ID
    return F.cross_entropy(logits[keep], tgt_out[keep])


CASES = [
    BlindCase(
        CHECK,
        "targets_not_shifted",
        targets_not_shifted,
        "mistake",
        "I fed tgt_out itself to the decoder and compared with tgt_out (no shift)",
    ),
    BlindCase(
        CHECK,
        "lm_style_shift_no_bos",
        lm_style_shift_no_bos,
        "mistake",
        "I shifted like a language model: input tgt_out[:, :-1], target tgt_out[:, 1:], "
        "so there is no <bos> and y_1 is never predicted",
    ),
    BlindCase(
        CHECK,
        "padding_counted",
        padding_counted,
        "mistake",
        "I called F.cross_entropy without ignore_index=PAD_ID, so padding counts",
    ),
    BlindCase(
        CHECK,
        "decoder_from_zeros",
        decoder_from_zeros,
        "mistake",
        "I passed c = s_S as the context but started the decoder from a zero state",
    ),
    BlindCase(
        CHECK,
        "context_from_last_output_column",
        context_from_last_output_column,
        "mistake",
        "I took c as outputs[:, -1] of the encoder, the last column, instead of last_hidden",
    ),
    BlindCase(
        CHECK,
        "feeds_own_argmax",
        feeds_own_argmax,
        "mistake",
        "I ran the decoder step by step and fed back its own argmax, not the targets",
    ),
    BlindCase(
        CHECK,
        "loss_detached",
        loss_detached,
        "mistake",
        "I returned torch.tensor(loss.item()), which is cut off from the model",
    ),
    BlindCase(
        CHECK,
        "summed_not_averaged",
        summed_not_averaged,
        "mistake",
        "I used reduction='sum', so the loss is a sum over tokens, not their mean",
    ),
    BlindCase(
        CHECK,
        "mean_of_sentence_means",
        mean_of_sentence_means,
        "mistake",
        "I averaged each sentence's loss over its real tokens, then averaged the "
        "sentences, which weights short sentences more",
    ),
    BlindCase(
        CHECK,
        "eos_as_start_token",
        eos_as_start_token,
        "mistake",
        "I put EOS_ID in front of the shifted targets instead of BOS_ID",
    ),
    BlindCase(
        CHECK,
        "bos_hard_coded_zero",
        bos_hard_coded_zero,
        "mistake",
        "I hard-coded the start token as id 0, thinking <bos> comes first (0 is <pad>)",
    ),
    BlindCase(
        CHECK,
        "class_axis_second",
        class_axis_second,
        "correct",
        "cross_entropy on logits.permute(0, 2, 1) (classes second) instead of flattening",
    ),
    BlindCase(
        CHECK,
        "manual_log_softmax_gather",
        manual_log_softmax_gather,
        "correct",
        "F.pad for the shift, log_softmax + gather, masked mean over real tokens",
    ),
    BlindCase(
        CHECK,
        "roll_then_set_bos",
        roll_then_set_bos,
        "correct",
        "roll(1) then column 0 set to BOS_ID; loss on the real tokens selected by a mask",
    ),
]
