"""Blind set B18, check_teacher_forcing_loss (chapter 4): the loss of one teacher-forced step as
readers write it from the encoder and decoder."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import Seq2Seq, last_hidden
from transformer_tutorial.sequences import BOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shifted(tgt_out: Tensor) -> Tensor:
    """``<bos> y_1 .. y_{T-1}``: the right decoder inputs."""
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=tgt_out.dtype, device=tgt_out.device)
    return torch.cat([bos, tgt_out[:, :-1]], dim=1)


def _logits(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return logits  # (B, T, V)


# ---------------------------------------------------------------- mistakes


def tf_not_shifted(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_out, last_hidden(state), state)  # the targets as inputs
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def tf_lm_shift_no_bos(model, src, src_lengths, tgt_out):
    tgt_in, targets = tgt_out[:, :-1], tgt_out[:, 1:]  # next-token shift, as in chapter 2
    logits = _logits(model, src, src_lengths, tgt_in)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), ignore_index=PAD_ID)


def tf_feeds_argmax(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long)
    steps = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)  # (B, 1, V)
        steps.append(logits)
        prev = logits.argmax(dim=-1)  # what the model said comes next
    logits = torch.cat(steps, dim=1)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def tf_counts_padding(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1))  # every position


def tf_decoder_from_zeros(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    if isinstance(state, tuple):
        start = tuple(torch.zeros_like(s) for s in state)
    else:
        start = torch.zeros_like(state)  # the decoder has its own fresh state
    logits, _ = model.decoder(_shifted(tgt_out), context, start)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def tf_context_last_column(model, src, src_lengths, tgt_out):
    outputs, state = model.encoder(src, src_lengths)
    context = outputs[:, -1]  # the encoder's last step, s_S
    logits, _ = model.decoder(_shifted(tgt_out), context, state)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def tf_detached(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))
    V = logits.shape[-1]
    loss = F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)
    return loss.detach()  # a plain number to print and plot


def tf_mean_of_sentence_means(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))
    losses = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    per_sentence = (losses * real).sum(dim=1) / real.sum(dim=1)  # (B,)
    return per_sentence.mean()


def tf_sum_over_batch(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))
    V = logits.shape[-1]
    total = F.cross_entropy(
        logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID, reduction="sum"
    )
    return total / tgt_out.shape[0]  # per sentence


def tf_nll_on_logits(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))
    V = logits.shape[-1]
    return F.nll_loss(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def tf_mask_from_inputs(model, src, src_lengths, tgt_out):
    tgt_in = _shifted(tgt_out)
    logits = _logits(model, src, src_lengths, tgt_in)
    losses = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    mask = tgt_in != PAD_ID  # the real decoder inputs
    return (losses * mask).sum() / mask.sum()


def tf_starts_with_pad(model, src, src_lengths, tgt_out):
    start = torch.zeros(tgt_out.shape[0], 1, dtype=torch.long)  # the start token
    tgt_in = torch.cat([start, tgt_out[:, :-1]], dim=1)
    logits = _logits(model, src, src_lengths, tgt_in)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


# ---------------------------------------------------------------- correct variants


def tf_bos_then_cut_logits(model, src, src_lengths, tgt_out):
    """<bos> + the whole target, then the last step's logits dropped."""
    B = tgt_out.size(0)
    tgt_in = torch.cat([tgt_out.new_full((B, 1), BOS_ID), tgt_out], dim=1)  # (B, T + 1)
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)  # (B, T + 1, V)
    logits = logits[:, :-1]
    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)


def tf_manual_masked_mean(model, src, src_lengths, tgt_out):
    """log_softmax and gather, then the mean over the real targets."""
    outputs, state = model.encoder(src, src_lengths)
    tgt_in = tgt_out.roll(1, dims=1)
    tgt_in[:, 0] = BOS_ID
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    logp = logits.log_softmax(dim=-1).gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out.ne(PAD_ID)
    return -(logp * real).sum() / real.sum()


def tf_step_by_step(model, src, src_lengths, tgt_out):
    """The decoder called one step at a time, always fed the true previous token."""
    outputs, state = model.encoder(src, src_lengths)
    B = outputs.shape[0]
    context = outputs[torch.arange(B), src_lengths - 1]  # the state at each real last token
    prev = torch.full((B, 1), BOS_ID, dtype=torch.long)
    losses, counts = 0.0, 0
    for t in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)  # (B, 1, V)
        target = tgt_out[:, t]
        real = target != PAD_ID
        losses = losses + F.cross_entropy(logits[:, 0], target, reduction="none")[real].sum()
        counts += int(real.sum())
        prev = target.unsqueeze(1)
    return losses / counts


CASES = [
    BlindCase(
        CHECK,
        "not_shifted",
        tf_not_shifted,
        "mistake",
        "I fed tgt_out itself to the decoder, so at each step it sees the token it must predict.",
    ),
    BlindCase(
        CHECK,
        "lm_shift_no_bos",
        tf_lm_shift_no_bos,
        "mistake",
        "I shifted as in chapter 2: inputs tgt_out[:, :-1], targets tgt_out[:, 1:]; no <bos>, "
        "and y_1 is never predicted.",
    ),
    BlindCase(
        CHECK,
        "feeds_argmax",
        tf_feeds_argmax,
        "mistake",
        "I looped over the steps and fed back the model's own argmax after <bos>.",
    ),
    BlindCase(
        CHECK,
        "counts_padding",
        tf_counts_padding,
        "mistake",
        "I used plain F.cross_entropy without ignore_index, so the padded targets count.",
    ),
    BlindCase(
        CHECK,
        "decoder_from_zeros",
        tf_decoder_from_zeros,
        "mistake",
        "I passed c as the context but started the decoder's recurrence from zeros.",
    ),
    BlindCase(
        CHECK,
        "context_last_column",
        tf_context_last_column,
        "mistake",
        "I took c = outputs[:, -1], the last column of the encoder outputs (padding for a short "
        "source).",
    ),
    BlindCase(
        CHECK,
        "detached",
        tf_detached,
        "mistake",
        "I returned loss.detach() so that it is a plain number to log.",
    ),
    BlindCase(
        CHECK,
        "mean_of_sentence_means",
        tf_mean_of_sentence_means,
        "mistake",
        "I averaged each sentence's real tokens first and then averaged the sentences, so short "
        "sentences weigh more.",
    ),
    BlindCase(
        CHECK,
        "sum_per_sentence",
        tf_sum_over_batch,
        "mistake",
        "I summed the token losses and divided by the batch size instead of the number of real "
        "tokens.",
    ),
    BlindCase(
        CHECK,
        "nll_on_logits",
        tf_nll_on_logits,
        "mistake",
        "I used F.nll_loss directly on the logits, without log_softmax.",
    ),
    BlindCase(
        CHECK,
        "mask_from_decoder_inputs",
        tf_mask_from_inputs,
        "mistake",
        "I masked the loss with tgt_in != PAD_ID, which counts one padded target after <eos>.",
    ),
    BlindCase(
        CHECK,
        "starts_with_pad_token",
        tf_starts_with_pad,
        "mistake",
        "I started the decoder inputs with a column of zeros, which is <pad>, not <bos>.",
    ),
    BlindCase(
        CHECK,
        "bos_then_cut_logits",
        tf_bos_then_cut_logits,
        "correct",
        "<bos> prepended to the whole target (T + 1 inputs), then the last step's logits cut.",
    ),
    BlindCase(
        CHECK,
        "manual_masked_mean",
        tf_manual_masked_mean,
        "correct",
        "Inputs by roll and writing <bos>; log_softmax, gather and a masked mean by hand.",
    ),
    BlindCase(
        CHECK,
        "step_by_step",
        tf_step_by_step,
        "correct",
        "The decoder run one step at a time on the true previous tokens; c taken from the "
        "encoder outputs at each source's last real token.",
    ),
]
