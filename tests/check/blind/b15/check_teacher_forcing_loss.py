"""Blind set B15, check_teacher_forcing_loss (chapter 4): the loss of one teacher-forced step."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import BOS_ID, EOS_ID, PAD_ID, last_hidden

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shift(tgt_out: Tensor, first: int = BOS_ID) -> Tensor:
    start = torch.full((tgt_out.shape[0], 1), first, dtype=tgt_out.dtype, device=tgt_out.device)
    return torch.cat([start, tgt_out[:, :-1]], dim=1)


def _ce(logits: Tensor, tgt_out: Tensor, **kw) -> Tensor:
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), **kw)


# ---------------------------------------------------------------- mistakes


def tf_not_shifted(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_out, last_hidden(state), state)
    return _ce(logits, tgt_out, ignore_index=PAD_ID)


def tf_no_bos(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    tgt_in = tgt_out[:, :-1]  # inputs y_1 .. y_{T-1}
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return _ce(logits, tgt_out[:, 1:], ignore_index=PAD_ID)  # predict y_2 .. <eos>


def tf_eos_first(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out, EOS_ID), last_hidden(state), state)
    return _ce(logits, tgt_out, ignore_index=PAD_ID)


def tf_own_argmax(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long)
    steps = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)
        steps.append(logits)
        prev = logits.argmax(-1)
    return _ce(torch.cat(steps, dim=1), tgt_out, ignore_index=PAD_ID)


def tf_counts_padding(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    return _ce(logits, tgt_out)


def tf_zero_start(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    if isinstance(state, tuple):
        start = tuple(torch.zeros_like(s) for s in state)
    else:
        start = torch.zeros_like(state)
    logits, _ = model.decoder(_shift(tgt_out), context, start)
    return _ce(logits, tgt_out, ignore_index=PAD_ID)


def tf_last_column(model, src, src_lengths, tgt_out):
    outputs, state = model.encoder(src, src_lengths)
    last = outputs[:, -1]  # (B, D): the last position of every row
    start = (last[None], state[1]) if isinstance(state, tuple) else last[None].contiguous()
    logits, _ = model.decoder(_shift(tgt_out), last, start)
    return _ce(logits, tgt_out, ignore_index=PAD_ID)


def tf_detached(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    return _ce(logits, tgt_out, ignore_index=PAD_ID).detach()  # just the number


def tf_sum(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    return _ce(logits, tgt_out, ignore_index=PAD_ID, reduction="sum")


def tf_mean_of_sentences(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    nll = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    return ((nll * real).sum(1) / real.sum(1)).mean()  # each sentence counts the same


def tf_zero_context(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    h = last_hidden(state)
    logits, _ = model.decoder(_shift(tgt_out), torch.zeros_like(h), state)  # c only starts it
    return _ce(logits, tgt_out, ignore_index=PAD_ID)


# ---------------------------------------------------------------- correct variants


def tf_start_and_model(model, src, src_lengths, tgt_out):
    """model.start for the context and state, and a one-liner shift with F.pad."""
    start = model.start(src, src_lengths)
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0), value=BOS_ID)
    logits, _ = model.decoder(tgt_in, start.context, start.hidden)
    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)


def tf_manual_nll(model, src, src_lengths, tgt_out):
    """log_softmax, gather and a masked mean over the real tokens."""
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    logp = logits.log_softmax(-1).gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)
    real = tgt_out != PAD_ID
    return -(logp * real).sum() / real.sum()


def tf_step_by_step(model, src, src_lengths, tgt_out):
    """One decoder call per step, fed the true previous token (still teacher forcing)."""
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    tgt_in = _shift(tgt_out)
    steps = []
    for t in range(tgt_in.shape[1]):
        logits, state = model.decoder(tgt_in[:, t : t + 1], context, state)
        steps.append(logits)
    logits = torch.cat(steps, dim=1)
    keep = tgt_out != PAD_ID
    return F.cross_entropy(logits[keep], tgt_out[keep])


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
        "no_bos_shift_left",
        tf_no_bos,
        "mistake",
        "No <bos>: I fed y_1..y_{T-1} and scored against y_2..<eos>.",
    ),
    BlindCase(
        CHECK,
        "eos_as_start",
        tf_eos_first,
        "mistake",
        "I started the decoder inputs with EOS_ID instead of BOS_ID.",
    ),
    BlindCase(
        CHECK,
        "own_argmax_fed_back",
        tf_own_argmax,
        "mistake",
        "I fed the decoder its own argmax at each step, as at inference.",
    ),
    BlindCase(
        CHECK,
        "padding_in_loss",
        tf_counts_padding,
        "mistake",
        "I forgot ignore_index=PAD_ID, so padding counts in the mean.",
    ),
    BlindCase(
        CHECK,
        "decoder_from_zeros",
        tf_zero_start,
        "mistake",
        "I started the decoder from a zero state (the context is still s_S).",
    ),
    BlindCase(
        CHECK,
        "last_encoder_column",
        tf_last_column,
        "mistake",
        "I took outputs[:, -1] as the final encoder state, padding for short sources.",
    ),
    BlindCase(
        CHECK,
        "loss_detached",
        tf_detached,
        "mistake",
        "I returned loss.detach(), so no gradient reaches the model.",
    ),
    BlindCase(
        CHECK,
        "sum_not_mean",
        tf_sum,
        "mistake",
        "I used reduction='sum' instead of the mean over real tokens.",
    ),
    BlindCase(
        CHECK,
        "mean_of_sentence_means",
        tf_mean_of_sentences,
        "mistake",
        "I averaged each sentence's tokens first and then the sentences.",
    ),
    BlindCase(
        CHECK,
        "zero_context",
        tf_zero_context,
        "mistake",
        "I passed zeros as the context, thinking the state alone carries the source.",
    ),
    BlindCase(
        CHECK,
        "start_and_fpad",
        tf_start_and_model,
        "correct",
        "model.start for context and state; F.pad for the shift; cross_entropy on (B, V, T).",
    ),
    BlindCase(
        CHECK,
        "manual_nll",
        tf_manual_nll,
        "correct",
        "log_softmax + gather and a masked mean written by hand.",
    ),
    BlindCase(
        CHECK,
        "step_by_step",
        tf_step_by_step,
        "correct",
        "A loop of one-step decoder calls with the true previous tokens; loss on the "
        "real positions selected by a boolean index.",
    ),
]
