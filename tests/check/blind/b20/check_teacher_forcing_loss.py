"""Blind set B20, check_teacher_forcing_loss (chapter 4): the teacher-forced loss as readers
write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import last_hidden
from transformer_tutorial.sequences import BOS_ID, EOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shift(tgt_out: Tensor) -> Tensor:
    """<bos> y_1 .. y_{T-1}: the right decoder inputs."""
    bos = torch.full_like(tgt_out[:, :1], BOS_ID)
    return torch.cat([bos, tgt_out[:, :-1]], dim=1)


def _loss(logits: Tensor, tgt_out: Tensor) -> Tensor:
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


# ---------------------------------------------------------------- mistakes


def tf_not_shifted(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_out, last_hidden(state), state)  # teacher = the targets
    return _loss(logits, tgt_out)


def tf_pad_first(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0), value=PAD_ID)  # shift right, fill with padding
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return _loss(logits, tgt_out)


def tf_eos_first(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    start = torch.full((tgt_out.shape[0], 1), EOS_ID, dtype=torch.long)  # the start symbol
    tgt_in = torch.cat([start, tgt_out[:, :-1]], dim=1)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return _loss(logits, tgt_out)


def tf_padding_in_loss(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1))


def tf_zero_state(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    if isinstance(state, tuple):
        start = tuple(torch.zeros_like(s) for s in state)
    else:
        start = torch.zeros_like(state)  # the decoder starts fresh; c carries the source
    logits, _ = model.decoder(_shift(tgt_out), context, start)
    return _loss(logits, tgt_out)


def tf_last_output_column(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)
    context = outputs[:, -1]  # the encoder's last state s_S
    logits, _ = model.decoder(_shift(tgt_out), context, state)
    return _loss(logits, tgt_out)


def tf_loss_as_float(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    return torch.tensor(_loss(logits, tgt_out).item())  # a plain number for logging


def tf_dropped_first_target(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long)
    tgt_in = torch.cat([bos, tgt_out[:, 1:]], dim=1)  # replace the first token by <bos>
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return _loss(logits, tgt_out)


def tf_summed(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    V = logits.shape[-1]
    return F.cross_entropy(
        logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID, reduction="sum"
    )


def tf_mean_of_sentences(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    per_token = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    per_sentence = (per_token * real).sum(1) / real.sum(1)  # each sentence's mean
    return per_sentence.mean()


def tf_log_softmax_wrong_axis(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)  # (B, T, V)
    logp = torch.log_softmax(logits, dim=1)
    V = logits.shape[-1]
    return F.nll_loss(logp.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def tf_feeds_argmax(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long)
    steps = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)  # (B, 1, V)
        steps.append(logits)
        prev = logits.argmax(-1)  # the decoder's own guess is its next input
    return _loss(torch.cat(steps, dim=1), tgt_out)


# ---------------------------------------------------------------- correct variants


def tf_transpose_classes(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, final = model.encoder(src, src_lengths)
    B = tgt_out.size(0)
    tgt_in = torch.cat([tgt_out.new_full((B, 1), BOS_ID), tgt_out[:, :-1]], dim=1)
    logits, _ = model.decoder(tgt_in, last_hidden(final), final)
    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)  # (B, V, T)


def tf_gather_masked_mean(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    tgt_in = tgt_out.roll(1, dims=1)
    tgt_in[:, 0] = BOS_ID
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    logp = logits.log_softmax(-1).gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out != PAD_ID
    return -(logp * real).sum() / real.sum()


def tf_step_by_step(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full((tgt_out.shape[0],), BOS_ID, dtype=torch.long)
    all_logits = []
    for t in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev[:, None], context, state)
        all_logits.append(logits[:, 0])
        prev = tgt_out[:, t]  # teacher forcing: the true token goes in next
    logits = torch.stack(all_logits, dim=1)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt_out.reshape(-1), ignore_index=0)


def tf_via_forward(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = F.pad(tgt_out, (1, 0), value=BOS_ID)[:, :-1]
    logits = model(src, src_lengths, tgt_in)  # Seq2Seq.forward does encoder + decoder
    keep = tgt_out.ne(PAD_ID)
    return F.cross_entropy(logits[keep], tgt_out[keep])


CASES = [
    BlindCase(
        CHECK,
        "not_shifted",
        tf_not_shifted,
        "mistake",
        "I fed tgt_out itself to the decoder.",
    ),
    BlindCase(
        CHECK,
        "pad_instead_of_bos",
        tf_pad_first,
        "mistake",
        "I shifted right with F.pad, which put <pad> where <bos> goes.",
    ),
    BlindCase(
        CHECK,
        "eos_as_start",
        tf_eos_first,
        "mistake",
        "I started the decoder inputs with <eos> instead of <bos>.",
    ),
    BlindCase(
        CHECK,
        "padding_counted",
        tf_padding_in_loss,
        "mistake",
        "I forgot ignore_index, so padding counts in the mean.",
    ),
    BlindCase(
        CHECK,
        "decoder_from_zeros",
        tf_zero_state,
        "mistake",
        "I started the decoder from a zero state and passed the source only as c.",
    ),
    BlindCase(
        CHECK,
        "context_last_column",
        tf_last_output_column,
        "mistake",
        "I took c as outputs[:, -1], the last column of the encoder outputs.",
    ),
    BlindCase(
        CHECK,
        "loss_item",
        tf_loss_as_float,
        "mistake",
        "I wrapped loss.item() back into a tensor.",
    ),
    BlindCase(
        CHECK,
        "first_target_overwritten",
        tf_dropped_first_target,
        "mistake",
        "I overwrote the first target with <bos> instead of shifting the row.",
    ),
    BlindCase(
        CHECK,
        "summed",
        tf_summed,
        "mistake",
        "I summed the cross-entropy instead of averaging it.",
    ),
    BlindCase(
        CHECK,
        "mean_of_sentence_means",
        tf_mean_of_sentences,
        "mistake",
        "I averaged each sentence over its tokens and then averaged the sentences.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_time",
        tf_log_softmax_wrong_axis,
        "mistake",
        "I took log_softmax over dim=1 (time) before nll_loss.",
    ),
    BlindCase(
        CHECK,
        "argmax_fed_back",
        tf_feeds_argmax,
        "mistake",
        "I fed the decoder its own argmax at every step.",
    ),
    BlindCase(
        CHECK,
        "classes_second",
        tf_transpose_classes,
        "correct",
        "cross_entropy on logits transposed to (B, V, T), with ignore_index.",
    ),
    BlindCase(
        CHECK,
        "roll_gather",
        tf_gather_masked_mean,
        "correct",
        "roll to shift, <bos> in column 0, log_softmax + gather, masked mean.",
    ),
    BlindCase(
        CHECK,
        "one_step_at_a_time",
        tf_step_by_step,
        "correct",
        "A loop of decoder steps of length 1, each fed the true previous token.",
    ),
    BlindCase(
        CHECK,
        "seq2seq_forward",
        tf_via_forward,
        "correct",
        "model(src, src_lengths, tgt_in) and cross-entropy on the real positions only.",
    ),
]
