"""Blind set B6, check_teacher_forcing_loss (chapter 4): the loss of one teacher-forced step."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import Seq2Seq, last_hidden
from transformer_tutorial.sequences import BOS_ID, EOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shifted(tgt_out: Tensor) -> Tensor:
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=tgt_out.dtype, device=tgt_out.device)
    return torch.cat([bos, tgt_out[:, :-1]], dim=1)


# ---------------------------------------------------------------- mistakes


def tf_loss_not_shifted(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_out, last_hidden(state), state)  # the targets as inputs
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def tf_loss_lm_shift(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    tgt_in, targets = tgt_out[:, :-1], tgt_out[:, 1:]  # shift as for a language model
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), ignore_index=PAD_ID)


def tf_loss_counts_padding(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shifted(tgt_out), last_hidden(state), state)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1))  # every position


def tf_loss_zero_start(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    logits, _ = model.decoder(_shifted(tgt_out), context, torch.zeros_like(state))  # fresh start
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def tf_loss_last_column(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    outputs, _ = model.encoder(src, src_lengths)  # (B, S, D)
    s_last = outputs[:, -1]  # the last encoder state
    logits, _ = model.decoder(_shifted(tgt_out), s_last, s_last.unsqueeze(0).contiguous())
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def tf_loss_item(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shifted(tgt_out), last_hidden(state), state)
    V = logits.shape[-1]
    loss = F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)
    return torch.tensor(loss.item())  # a clean number to log


def tf_loss_mean_of_sentences(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shifted(tgt_out), last_hidden(state), state)
    per_token = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    per_sentence = (per_token * real).sum(1) / real.sum(1)  # each sentence's mean
    return per_sentence.mean()


def tf_loss_argmax_fed_back(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long)
    steps = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)  # (B, 1, V)
        steps.append(logits)
        prev = logits.argmax(-1)  # what the model said goes in next
    logits = torch.cat(steps, dim=1)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def tf_loss_targets_flattened_by_column(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shifted(tgt_out), last_hidden(state), state)
    V = logits.shape[-1]
    targets = tgt_out.t().reshape(-1)  # .t() so that reshape works on a contiguous tensor
    return F.cross_entropy(logits.reshape(-1, V), targets, ignore_index=PAD_ID)


def tf_loss_label_smoothing(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shifted(tgt_out), last_hidden(state), state)
    V = logits.shape[-1]
    return F.cross_entropy(
        logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID, label_smoothing=0.1
    )  # as in the Transformer paper


# ---------------------------------------------------------------- correct variants


def tf_loss_class_axis(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    """Logits transposed to (B, V, T), the layout cross_entropy takes without flattening."""
    _, final = model.encoder(src, src_lengths)
    B = tgt_out.size(0)
    tgt_in = torch.cat([tgt_out.new_full((B, 1), BOS_ID), tgt_out[:, :-1]], dim=1)
    logits, _ = model.decoder(tgt_in, last_hidden(final), final)  # (B, T, V)
    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)


def tf_loss_eos_input_padded(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    """Decoder inputs built as make_batch does, <eos> never fed in (it would be ignored anyway)."""
    tgt_in = _shifted(tgt_out).masked_fill(_shifted(tgt_out) == EOS_ID, PAD_ID)
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def tf_loss_gather(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    """log_softmax, gather the target's log-probability, average over the real tokens."""
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shifted(tgt_out), last_hidden(state), state)
    logp = logits.log_softmax(-1).gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out != PAD_ID
    return -(logp * real).sum() / real.sum()


CASES = [
    BlindCase(
        CHECK,
        "inputs_not_shifted",
        tf_loss_not_shifted,
        "mistake",
        "I fed tgt_out itself to the decoder, so at each step it sees the token it must predict.",
    ),
    BlindCase(
        CHECK,
        "language_model_shift",
        tf_loss_lm_shift,
        "mistake",
        "I shifted inside the targets like a language model (inputs tgt_out[:, :-1], targets "
        "tgt_out[:, 1:]): no <bos> first, and y_1 is never predicted.",
    ),
    BlindCase(
        CHECK,
        "padding_counted",
        tf_loss_counts_padding,
        "mistake",
        "I forgot ignore_index=PAD_ID, so the padded positions count in the mean.",
    ),
    BlindCase(
        CHECK,
        "decoder_starts_from_zeros",
        tf_loss_zero_start,
        "mistake",
        "I gave the decoder a zero initial state and passed the encoder's state only as the "
        "context.",
    ),
    BlindCase(
        CHECK,
        "last_column_of_outputs",
        tf_loss_last_column,
        "mistake",
        "I took the encoder's last output column, outputs[:, -1], as c and as the start state; "
        "for a short source that column is padding.",
    ),
    BlindCase(
        CHECK,
        "loss_via_item",
        tf_loss_item,
        "mistake",
        "I returned torch.tensor(loss.item()), a number cut off from the model's graph.",
    ),
    BlindCase(
        CHECK,
        "mean_of_sentence_means",
        tf_loss_mean_of_sentences,
        "mistake",
        "I averaged each sentence's loss over its own tokens and then averaged the sentences, "
        "instead of one mean over all real tokens.",
    ),
    BlindCase(
        CHECK,
        "argmax_fed_back",
        tf_loss_argmax_fed_back,
        "mistake",
        "I decoded step by step and fed the model's own argmax back in instead of the true "
        "previous token.",
    ),
    BlindCase(
        CHECK,
        "targets_flattened_by_column",
        tf_loss_targets_flattened_by_column,
        "mistake",
        "I flattened the targets with tgt_out.t().reshape(-1), column by column, while the "
        "logits are flattened row by row, so they no longer line up.",
    ),
    BlindCase(
        CHECK,
        "label_smoothing",
        tf_loss_label_smoothing,
        "mistake",
        "I added label_smoothing=0.1 to the cross-entropy, as the Transformer paper does.",
    ),
    BlindCase(
        CHECK,
        "class_axis_transposed",
        tf_loss_class_axis,
        "correct",
        "cross_entropy on logits.transpose(1, 2) (B, V, T) against tgt_out (B, T), no flattening.",
    ),
    BlindCase(
        CHECK,
        "eos_input_replaced_by_pad",
        tf_loss_eos_input_padded,
        "correct",
        "After shifting I replace an <eos> among the inputs by <pad>, as make_batch's tgt_in has "
        "it; that position's target is padding anyway.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_gather",
        tf_loss_gather,
        "correct",
        "log_softmax, gather of the targets' log-probabilities, and the sum over real tokens "
        "divided by their number.",
    ),
]
