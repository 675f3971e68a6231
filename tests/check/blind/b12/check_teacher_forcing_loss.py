"""Blind set B12, check_teacher_forcing_loss (chapter 4): the loss of one teacher-forced step."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import last_hidden
from transformer_tutorial.sequences import BOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shift(tgt_out: Tensor) -> Tensor:
    bos = torch.full_like(tgt_out[:, :1], BOS_ID)
    return torch.cat([bos, tgt_out[:, :-1]], dim=1)


def _logits(model, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return logits


def _ce(logits: Tensor, tgt_out: Tensor) -> Tensor:
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


# ---------------------------------------------------------------- mistakes


def tf_not_shifted(model, src, src_lengths, tgt_out):
    return _ce(_logits(model, src, src_lengths, tgt_out), tgt_out)  # inputs = targets


def tf_pad_instead_of_bos(model, src, src_lengths, tgt_out):
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0), value=PAD_ID)  # shifted right, padded in front
    return _ce(_logits(model, src, src_lengths, tgt_in), tgt_out)


def tf_lm_shift(model, src, src_lengths, tgt_out):
    tgt_in, target = tgt_out[:, :-1], tgt_out[:, 1:]  # predict the next token, as a language model
    return _ce(_logits(model, src, src_lengths, tgt_in), target)


def tf_counts_padding(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))


def tf_zero_state(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    logits, _ = model.decoder(_shift(tgt_out), context, torch.zeros_like(state))
    return _ce(logits, tgt_out)


def tf_last_column(model, src, src_lengths, tgt_out):
    outputs, _ = model.encoder(src, src_lengths)
    last = outputs[:, -1]  # the encoder's last output is the summary
    logits, _ = model.decoder(_shift(tgt_out), last, last.unsqueeze(0).contiguous())
    return _ce(logits, tgt_out)


def tf_detached(model, src, src_lengths, tgt_out):
    loss = _ce(_logits(model, src, src_lengths, _shift(tgt_out)), tgt_out)
    return torch.tensor(loss.item())  # a plain number to log


def tf_own_predictions(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full_like(tgt_out[:, 0], BOS_ID)
    steps = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev.unsqueeze(1), context, state)
        steps.append(logits)
        prev = logits[:, -1].argmax(-1)  # feed back what the model said
    return _ce(torch.cat(steps, dim=1), tgt_out)


def tf_sum(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    return F.cross_entropy(
        logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID, reduction="sum"
    )


def tf_mean_of_sentences(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    nll = F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID, reduction="none")
    real = (tgt_out != PAD_ID).float()
    return ((nll * real).sum(1) / real.sum(1)).mean()  # each sentence counts the same


def tf_flatten_mismatch(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.T.reshape(-1), ignore_index=PAD_ID)


# ---------------------------------------------------------------- correct variants


def tf_class_axis(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    bos = tgt_out.new_full((tgt_out.shape[0], 1), BOS_ID)
    logits, _ = model.decoder(torch.cat((bos, tgt_out[:, :-1]), 1), last_hidden(state), state)
    return F.cross_entropy(logits.permute(0, 2, 1), tgt_out, ignore_index=PAD_ID)


def tf_manual_nll(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    logp = logits.log_softmax(-1).gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out != PAD_ID
    return -(logp * real).sum() / real.sum()


def tf_roll_in_place(model, src, src_lengths, tgt_out):
    tgt_in = tgt_out.roll(1, dims=1)  # a new tensor
    tgt_in[:, 0] = BOS_ID  # in place on its own copy
    logits = _logits(model, src, src_lengths, tgt_in)
    real = tgt_out.ne(PAD_ID)
    return F.cross_entropy(logits[real], tgt_out[real])


CASES = [
    BlindCase(
        CHECK,
        "not_shifted",
        tf_not_shifted,
        "mistake",
        "I fed tgt_out itself to the decoder, so it sees the token it must predict.",
    ),
    BlindCase(
        CHECK,
        "pad_instead_of_bos",
        tf_pad_instead_of_bos,
        "mistake",
        "I shifted the targets right but put PAD_ID in front instead of BOS_ID.",
    ),
    BlindCase(
        CHECK,
        "language_model_shift",
        tf_lm_shift,
        "mistake",
        "I used tgt_out[:, :-1] as inputs and tgt_out[:, 1:] as targets, as for a language "
        "model, so no <bos> and y_1 is never predicted.",
    ),
    BlindCase(
        CHECK,
        "counts_padding",
        tf_counts_padding,
        "mistake",
        "I called F.cross_entropy without ignore_index, so padding is in the mean.",
    ),
    BlindCase(
        CHECK,
        "zero_start_state",
        tf_zero_state,
        "mistake",
        "I started the decoder from zeros and passed the encoder's state only as context.",
    ),
    BlindCase(
        CHECK,
        "last_output_column",
        tf_last_column,
        "mistake",
        "I took outputs[:, -1] of the encoder as context and start state, padding for "
        "short sources.",
    ),
    BlindCase(
        CHECK,
        "detached_loss",
        tf_detached,
        "mistake",
        "I returned torch.tensor(loss.item()), which has no graph.",
    ),
    BlindCase(
        CHECK,
        "own_predictions",
        tf_own_predictions,
        "mistake",
        "I fed the decoder its own argmax at each step instead of the true previous token.",
    ),
    BlindCase(
        CHECK,
        "summed_loss",
        tf_sum,
        "mistake",
        "I summed the cross-entropy over the tokens instead of averaging.",
    ),
    BlindCase(
        CHECK,
        "mean_of_sentence_means",
        tf_mean_of_sentences,
        "mistake",
        "I averaged within each sentence, then over sentences, so short sentences weigh "
        "more per token.",
    ),
    BlindCase(
        CHECK,
        "flatten_mismatch",
        tf_flatten_mismatch,
        "mistake",
        "I flattened the logits batch-first but the targets after a transpose, so they no "
        "longer line up.",
    ),
    BlindCase(
        CHECK,
        "class_axis_permute",
        tf_class_axis,
        "correct",
        "cross_entropy on logits permuted to (B, V, T), with ignore_index.",
    ),
    BlindCase(
        CHECK,
        "manual_nll",
        tf_manual_nll,
        "correct",
        "log_softmax, gather and a masked mean written out.",
    ),
    BlindCase(
        CHECK,
        "roll_and_select",
        tf_roll_in_place,
        "correct",
        "Inputs by roll then BOS written in place into that copy; the loss on the real "
        "positions selected with a boolean mask.",
    ),
]
