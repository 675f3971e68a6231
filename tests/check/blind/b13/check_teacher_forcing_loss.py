"""Blind set B13, check_teacher_forcing_loss (chapter 4): the loss of one teacher-forced step."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import Seq2Seq, last_hidden
from transformer_tutorial.sequences import BOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shift(tgt_out: Tensor) -> Tensor:
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=tgt_out.dtype, device=tgt_out.device)
    return torch.cat([bos, tgt_out[:, :-1]], dim=1)


def _logits(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return logits


def _ce(logits: Tensor, tgt_out: Tensor) -> Tensor:
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD_ID
    )


# ---------------------------------------------------------------- mistakes


def tf_not_shifted(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    return _ce(_logits(model, src, src_lengths, tgt_out), tgt_out)  # inputs = targets


def tf_no_bos(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = tgt_out[:, :-1]  # y_1 .. y_{T-1}
    return _ce(_logits(model, src, src_lengths, tgt_in), tgt_out[:, 1:])


def tf_feeds_argmax(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full((src.shape[0], 1), BOS_ID, dtype=torch.long)
    steps = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)  # (B, 1, V)
        steps.append(logits)
        prev = logits.argmax(-1)  # the model's own guess as the next input
    return _ce(torch.cat(steps, dim=1), tgt_out)


def tf_counts_padding(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))


def tf_zero_start(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    if isinstance(state, tuple):
        start = tuple(torch.zeros_like(s) for s in state)
    else:
        start = torch.zeros_like(state)  # a fresh decoder; the source comes in through c
    logits, _ = model.decoder(_shift(tgt_out), context, start)
    return _ce(logits, tgt_out)


def tf_last_column(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)
    context = outputs[:, -1]  # the encoder's last output = its final state, I thought
    h0 = context.unsqueeze(0).contiguous()
    start = (h0, torch.zeros_like(h0)) if isinstance(state, tuple) else h0
    logits, _ = model.decoder(_shift(tgt_out), context, start)
    return _ce(logits, tgt_out)


def tf_item(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    loss = _ce(_logits(model, src, src_lengths, _shift(tgt_out)), tgt_out)
    return loss.item()  # a plain number to print


def tf_encoder_no_grad(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    with torch.no_grad():  # the encoder only reads, so no graph needed there
        _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    return _ce(logits, tgt_out)


def tf_shift_left(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    pad = torch.full((tgt_out.shape[0], 1), PAD_ID, dtype=torch.long)
    tgt_in = torch.cat([tgt_out[:, 1:], pad], dim=1)  # shifted the other way
    return _ce(_logits(model, src, src_lengths, tgt_in), tgt_out)


def tf_pad_as_start(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0))  # F.pad fills with 0, which is <pad>, not <bos>
    return _ce(_logits(model, src, src_lengths, tgt_in), tgt_out)


def tf_sum_over_batch(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    total = F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]),
        tgt_out.reshape(-1),
        ignore_index=PAD_ID,
        reduction="sum",
    )
    return total / tgt_out.shape[0]  # loss per sentence


def tf_mean_of_sentence_means(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    per_token = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    return ((per_token * real).sum(1) / real.sum(1)).mean()  # each sentence counts the same


def tf_reshape_for_class_axis(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    B, T, V = logits.shape
    return F.cross_entropy(logits.reshape(B, V, T), tgt_out, ignore_index=PAD_ID)


# ---------------------------------------------------------------- correct variants


def tf_class_axis(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = model(src, src_lengths, _shift(tgt_out))
    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)


def tf_manual_masked_mean(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, final = model.encoder(src, src_lengths)
    tgt_in = tgt_out.roll(1, dims=1)
    tgt_in[:, 0] = BOS_ID  # in place on my own copy
    logits, _ = model.decoder(tgt_in, last_hidden(final), final)
    logp = logits.log_softmax(-1).gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out != PAD_ID
    return -(logp * real).sum() / real.sum()


def tf_reduction_none(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    B = tgt_out.shape[0]
    tgt_in = torch.cat([tgt_out.new_full((B, 1), BOS_ID), tgt_out[:, :-1]], 1)
    memory, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    losses = F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), reduction="none")
    return losses[tgt_out.flatten() != PAD_ID].mean()


def tf_start_then_nll(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    start = model.start(src, src_lengths)  # the same encoder call, through start
    logits, _ = model.decoder(_shift(tgt_out), start.context, start.hidden)
    return F.nll_loss(
        F.log_softmax(logits, -1).view(-1, logits.size(-1)),
        tgt_out.view(-1),
        ignore_index=PAD_ID,
    )


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
        "no_bos",
        tf_no_bos,
        "mistake",
        "I fed y_1 .. y_{T-1} and predicted y_2 .. <eos>, with no <bos> first.",
    ),
    BlindCase(
        CHECK,
        "feeds_argmax",
        tf_feeds_argmax,
        "mistake",
        "I looped and fed the decoder its own argmax at every step.",
    ),
    BlindCase(
        CHECK,
        "counts_padding",
        tf_counts_padding,
        "mistake",
        "I forgot ignore_index=PAD_ID, so the padding counts in the loss.",
    ),
    BlindCase(
        CHECK,
        "zero_start",
        tf_zero_start,
        "mistake",
        "I started the decoder from a zero state and passed the source only as context.",
    ),
    BlindCase(
        CHECK,
        "last_output_column",
        tf_last_column,
        "mistake",
        "I took outputs[:, -1] as the final state, which is padding for short sources.",
    ),
    BlindCase(
        CHECK, "returns_item", tf_item, "mistake", "I returned loss.item(), a float with no graph."
    ),
    BlindCase(
        CHECK,
        "encoder_no_grad",
        tf_encoder_no_grad,
        "mistake",
        "I ran the encoder under torch.no_grad(), so it gets no gradient.",
    ),
    BlindCase(
        CHECK,
        "shifted_left",
        tf_shift_left,
        "mistake",
        "I shifted the targets to the left (tgt_out[:, 1:] then a pad) instead of right.",
    ),
    BlindCase(
        CHECK,
        "pad_instead_of_bos",
        tf_pad_as_start,
        "mistake",
        "I shifted with F.pad(tgt_out[:, :-1], (1, 0)), which puts <pad> (0) first.",
    ),
    BlindCase(
        CHECK,
        "sum_over_batch",
        tf_sum_over_batch,
        "mistake",
        "I summed the token losses and divided by the batch size.",
    ),
    BlindCase(
        CHECK,
        "mean_of_sentence_means",
        tf_mean_of_sentence_means,
        "mistake",
        "I averaged each sentence's tokens, then averaged the sentences.",
    ),
    BlindCase(
        CHECK,
        "reshape_class_axis",
        tf_reshape_for_class_axis,
        "mistake",
        "I used logits.reshape(B, V, T) to put the classes second for cross_entropy.",
    ),
    BlindCase(
        CHECK,
        "class_axis_transpose",
        tf_class_axis,
        "correct",
        "model(...) for the logits and cross_entropy on logits.transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "manual_masked_mean",
        tf_manual_masked_mean,
        "correct",
        "roll + an in-place <bos>; log_softmax, gather and a mean over the real tokens.",
    ),
    BlindCase(
        CHECK,
        "reduction_none",
        tf_reduction_none,
        "correct",
        "reduction='none' then the mean of the losses at non-pad targets.",
    ),
    BlindCase(
        CHECK,
        "start_and_nll",
        tf_start_then_nll,
        "correct",
        "model.start for the context and state; log_softmax + nll_loss.",
    ),
]
