"""Blind set B34, check_teacher_forcing_loss (chapter 4): the loss of one teacher-forced step."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import last_hidden
from transformer_tutorial.sequences import BOS_ID, EOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shift(tgt_out: Tensor) -> Tensor:
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=tgt_out.dtype, device=tgt_out.device)
    return torch.cat([bos, tgt_out[:, :-1]], dim=1)


def _logits(model, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return logits


def _ce(logits: Tensor, tgt_out: Tensor) -> Tensor:
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


# ---------------------------------------------------------------- mistakes


def tf_not_shifted(model, src, src_lengths, tgt_out):
    return _ce(_logits(model, src, src_lengths, tgt_out), tgt_out)  # the targets are the inputs


def tf_no_bos(model, src, src_lengths, tgt_out):
    tgt_in = torch.cat([tgt_out[:, :-1], torch.full_like(tgt_out[:, :1], PAD_ID)], dim=1)
    return _ce(_logits(model, src, src_lengths, tgt_in), tgt_out)  # shifted left, no <bos>


def tf_eos_first(model, src, src_lengths, tgt_out):
    eos = torch.full_like(tgt_out[:, :1], EOS_ID)  # the end of the previous sentence
    tgt_in = torch.cat([eos, tgt_out[:, :-1]], dim=1)
    return _ce(_logits(model, src, src_lengths, tgt_in), tgt_out)


def tf_counts_padding(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))


def tf_zero_state(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    zeros = torch.zeros_like(state)  # the decoder starts fresh, the context carries the source
    logits, _ = model.decoder(_shift(tgt_out), context, zeros)
    return _ce(logits, tgt_out)


def tf_last_column(model, src, src_lengths, tgt_out):
    outputs, _ = model.encoder(src, src_lengths)
    last = outputs[:, -1]  # (B, D): the state after the last position
    logits, _ = model.decoder(_shift(tgt_out), last, last.unsqueeze(0).contiguous())
    return _ce(logits, tgt_out)


def tf_greedy_feedback(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long)
    all_logits = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)
        all_logits.append(logits)
        prev = logits.argmax(-1)  # feed what the model said
    return _ce(torch.cat(all_logits, dim=1), tgt_out)


def tf_detached(model, src, src_lengths, tgt_out):
    with torch.no_grad():  # no need for gradients while computing a loss value
        logits = _logits(model, src, src_lengths, _shift(tgt_out))
    return _ce(logits, tgt_out)


def tf_sum_not_mean(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    return F.cross_entropy(
        logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID, reduction="sum"
    )


def tf_mean_per_sentence(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    nll = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    return ((nll * real).sum(1) / real.sum(1)).mean()  # each sentence counts the same


def tf_context_from_first_state(model, src, src_lengths, tgt_out):
    outputs, state = model.encoder(src, src_lengths)
    context = outputs[:, 0]  # c = s_1
    logits, _ = model.decoder(_shift(tgt_out), context, state)
    return _ce(logits, tgt_out)


def tf_label_smoothing(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    return F.cross_entropy(
        logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID, label_smoothing=0.1
    )


# ---------------------------------------------------------------- correct variants


def tf_masked_mean(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    tgt_in = torch.cat([torch.full_like(tgt_out[:, :1], BOS_ID), tgt_out[:, :-1]], dim=1)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    logp = logits.log_softmax(-1).gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out != PAD_ID
    return -(logp * real).sum() / real.sum()


def tf_nll_loss(model, src, src_lengths, tgt_out):
    outputs, state = model.encoder(src, src_lengths)
    tgt_in = tgt_out.roll(1, dims=1)
    tgt_in[:, 0] = BOS_ID
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return F.nll_loss(F.log_softmax(logits, dim=-1).permute(0, 2, 1), tgt_out, ignore_index=PAD_ID)


def tf_boolean_select(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0), value=BOS_ID)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    real = tgt_out != PAD_ID
    return F.cross_entropy(logits[real], tgt_out[real])


CASES = [
    BlindCase(
        CHECK,
        "inputs_are_targets",
        tf_not_shifted,
        "mistake",
        "I fed tgt_out to the decoder as its inputs, without shifting",
    ),
    BlindCase(
        CHECK,
        "shift_left_no_bos",
        tf_no_bos,
        "mistake",
        "I shifted the targets left and padded the end instead of putting <bos> first",
    ),
    BlindCase(
        CHECK,
        "eos_as_start",
        tf_eos_first,
        "mistake",
        "I started the decoder inputs with <eos> instead of <bos>",
    ),
    BlindCase(
        CHECK,
        "padding_in_loss",
        tf_counts_padding,
        "mistake",
        "I forgot ignore_index, so the padding counts in the mean",
    ),
    BlindCase(
        CHECK,
        "decoder_from_zeros",
        tf_zero_state,
        "mistake",
        "I started the decoder from a zero state and only passed the context",
    ),
    BlindCase(
        CHECK,
        "last_output_column",
        tf_last_column,
        "mistake",
        "I took the encoder's outputs[:, -1] as the final state",
    ),
    BlindCase(
        CHECK,
        "argmax_fed_back",
        tf_greedy_feedback,
        "mistake",
        "I fed the decoder its own argmax at every step",
    ),
    BlindCase(
        CHECK,
        "no_grad",
        tf_detached,
        "mistake",
        "I ran the model under torch.no_grad() to compute the loss",
    ),
    BlindCase(
        CHECK,
        "sum_reduction",
        tf_sum_not_mean,
        "mistake",
        "I summed the cross-entropy instead of averaging it",
    ),
    BlindCase(
        CHECK,
        "mean_per_sentence",
        tf_mean_per_sentence,
        "mistake",
        "I averaged each sentence first and then averaged the sentences",
    ),
    BlindCase(
        CHECK,
        "context_first_state",
        tf_context_from_first_state,
        "mistake",
        "I took the first encoder output as the context c",
    ),
    BlindCase(
        CHECK,
        "label_smoothing",
        tf_label_smoothing,
        "mistake",
        "I added label_smoothing=0.1 to the cross-entropy, as the Transformer paper does",
    ),
    BlindCase(
        CHECK,
        "gather_masked_mean",
        tf_masked_mean,
        "correct",
        "I gathered the log-probabilities and averaged them over the real tokens",
    ),
    BlindCase(
        CHECK,
        "roll_and_nll",
        tf_nll_loss,
        "correct",
        "I rolled the targets right, wrote <bos> in column 0, and used nll_loss",
    ),
    BlindCase(
        CHECK,
        "boolean_select",
        tf_boolean_select,
        "correct",
        "I padded <bos> in front with F.pad and selected the real positions",
    ),
]
