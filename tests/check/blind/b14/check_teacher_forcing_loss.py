"""Blind set B14, check_teacher_forcing_loss (chapter 4): the loss of one teacher-forced step."""

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


def _logits(model, src, src_lengths, tgt_in):
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return logits


def _loss(logits: Tensor, targets: Tensor) -> Tensor:
    return F.cross_entropy(logits.transpose(1, 2), targets, ignore_index=PAD_ID)


# ---------------------------------------------------------------- mistakes


def tf_not_shifted(model, src, src_lengths, tgt_out):
    return _loss(_logits(model, src, src_lengths, tgt_out), tgt_out)  # feed the targets as-is


def tf_shift_left_no_bos(model, src, src_lengths, tgt_out):
    tgt_in, targets = tgt_out[:, :-1], tgt_out[:, 1:]  # the usual LM shift, no <bos>
    return _loss(_logits(model, src, src_lengths, tgt_in), targets)


def tf_counts_padding(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))


def tf_zero_start(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    start = (
        tuple(torch.zeros_like(s) for s in state)
        if isinstance(state, tuple)
        else torch.zeros_like(state)
    )  # the decoder starts fresh; it gets the source through c
    logits, _ = model.decoder(_shift(tgt_out), context, start)
    return _loss(logits, tgt_out)


def tf_last_column_context(model, src, src_lengths, tgt_out):
    outputs, state = model.encoder(src, src_lengths)
    context = outputs[:, -1]  # the encoder's output at the last time step
    logits, _ = model.decoder(_shift(tgt_out), context, state)
    return _loss(logits, tgt_out)


def tf_item_loss(model, src, src_lengths, tgt_out):
    loss = _loss(_logits(model, src, src_lengths, _shift(tgt_out)), tgt_out)
    return torch.tensor(loss.item())  # a clean scalar tensor


def tf_free_running(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full_like(tgt_out[:, :1], BOS_ID)
    all_logits = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)  # (B, 1, V)
        all_logits.append(logits)
        prev = logits.argmax(dim=-1)  # feed back the model's prediction
    return _loss(torch.cat(all_logits, dim=1), tgt_out)


def tf_sum_per_sentence(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    total = F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID, reduction="sum")
    return total / tgt_out.shape[0]  # average over sentences


def tf_drops_eos_target(model, src, src_lengths, tgt_out):
    tgt_in = _shift(tgt_out)
    logits = _logits(model, src, src_lengths, tgt_in)
    return _loss(logits[:, :-1], tgt_out[:, :-1])  # the last column is only <eos> or padding


def tf_flatten_mismatch(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))  # (B, T, V)
    V = logits.shape[-1]
    flat = logits.transpose(0, 1).reshape(-1, V)  # time-major, as in the RNN chapter
    return F.cross_entropy(flat, tgt_out.reshape(-1), ignore_index=PAD_ID)


def tf_context_is_state(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), None)  # let the GRU start
    return _loss(logits, tgt_out)


# ---------------------------------------------------------------- correct variants


def tf_fpad_nll(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0), value=BOS_ID)  # <bos> on the left
    outputs, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    log_probs = logits.log_softmax(dim=-1)
    nll = -log_probs.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out != PAD_ID
    return nll[real].mean()


def tf_roll(model, src, src_lengths, tgt_out, label_smoothing: float = 0.0):
    tgt_in = tgt_out.roll(1, dims=1).clone()
    tgt_in[:, 0] = BOS_ID
    start = model.start(src, src_lengths)
    logits, _ = model.decoder(tgt_in, start.context, start.hidden)
    V = logits.size(-1)
    return F.cross_entropy(
        logits.view(-1, V),
        tgt_out.reshape(-1),
        ignore_index=PAD_ID,
        label_smoothing=label_smoothing,
    )


def tf_masked_weighted(model, src, src_lengths, tgt_out):
    B = tgt_out.size(0)
    tgt_in = torch.cat([tgt_out.new_full((B, 1), BOS_ID), tgt_out[:, :-1]], dim=1)
    _, final = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(final), final)
    per_token = F.cross_entropy(logits.permute(0, 2, 1), tgt_out, reduction="none")  # (B, T)
    weight = (tgt_out != PAD_ID).to(per_token.dtype)
    return (per_token * weight).sum() / weight.sum()


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
        "shift_left_no_bos",
        tf_shift_left_no_bos,
        "mistake",
        "I used the language-model shift: inputs tgt_out[:, :-1], targets tgt_out[:, 1:], "
        "no <bos>.",
    ),
    BlindCase(
        CHECK,
        "counts_padding",
        tf_counts_padding,
        "mistake",
        "I forgot ignore_index=PAD_ID, so padding positions count in the mean.",
    ),
    BlindCase(
        CHECK,
        "zero_start_state",
        tf_zero_start,
        "mistake",
        "I started the decoder from a zero state, passing the source only through c.",
    ),
    BlindCase(
        CHECK,
        "last_column_context",
        tf_last_column_context,
        "mistake",
        "I took c as the encoder's outputs[:, -1], the padding column of short sources.",
    ),
    BlindCase(
        CHECK,
        "loss_item",
        tf_item_loss,
        "mistake",
        "I returned torch.tensor(loss.item()), a number cut from the model.",
    ),
    BlindCase(
        CHECK,
        "free_running",
        tf_free_running,
        "mistake",
        "I fed back the argmax of each step instead of the true previous token.",
    ),
    BlindCase(
        CHECK,
        "sum_per_sentence",
        tf_sum_per_sentence,
        "mistake",
        "I summed the token losses and divided by the batch size.",
    ),
    BlindCase(
        CHECK,
        "drops_eos_target",
        tf_drops_eos_target,
        "mistake",
        "I dropped the last column of the targets, which loses the <eos> of the longest sentence.",
    ),
    BlindCase(
        CHECK,
        "flatten_time_major",
        tf_flatten_mismatch,
        "mistake",
        "I flattened the logits time-major but the targets batch-major.",
    ),
    BlindCase(
        CHECK,
        "no_start_state",
        tf_context_is_state,
        "mistake",
        "I passed None as the decoder's start state, thinking c already carries the source.",
    ),
    BlindCase(
        CHECK,
        "fpad_gather_nll",
        tf_fpad_nll,
        "correct",
        "F.pad for the <bos> shift, log_softmax and gather, the mean over non-pad tokens.",
    ),
    BlindCase(
        CHECK,
        "roll_and_start",
        tf_roll,
        "correct",
        "roll(1) with column 0 set to <bos>, model.start for c and the state; an extra "
        "label_smoothing argument defaulting to 0.",
    ),
    BlindCase(
        CHECK,
        "weighted_mean",
        tf_masked_weighted,
        "correct",
        "reduction='none' and a float weight of the real tokens, summed and divided.",
    ),
]
