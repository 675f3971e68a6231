"""Blind cases for check_teacher_forcing_loss (chapter 4)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import last_hidden
from transformer_tutorial.sequences import BOS_ID, EOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shift(tgt_out):
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=tgt_out.dtype)
    return torch.cat([bos, tgt_out[:, :-1]], dim=1)


def tf_sum_over_tokens(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    V = logits.shape[-1]
    return (
        F.cross_entropy(
            logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID, reduction="sum"
        )
        / tgt_out.shape[0]
    )  # per sentence, not per token


def tf_bos_replaces_first(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    tgt_in = tgt_out.clone()
    tgt_in[:, 0] = BOS_ID  # overwrites y_1 with <bos> instead of shifting
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)


def tf_context_first_output(model, src, src_lengths, tgt_out):
    outputs, state = model.encoder(src, src_lengths)
    context = outputs[:, 0]  # the state after the first source token
    logits, _ = model.decoder(_shift(tgt_out), context, state)
    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)


def tf_mask_from_inputs(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    tgt_in = _shift(tgt_out)
    mask = tgt_in != PAD_ID
    losses = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")
    return losses[mask].mean()


def tf_eos_dropped(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    target = tgt_out.masked_fill(tgt_out == EOS_ID, PAD_ID)  # does not train <eos>
    return F.cross_entropy(logits.transpose(1, 2), target, ignore_index=PAD_ID)


def tf_state_from_zeros_context_ok(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), None)  # decoder starts from 0
    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)


def tf_mean_of_row_means(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    losses = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    mask = (tgt_out != PAD_ID).float()
    return ((losses * mask).sum(1) / mask.sum(1)).mean()  # each sentence weighs the same


def tf_returns_logits_too(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    loss = F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)
    return loss, logits


def tf_masked_manual(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:  # noqa: F821
    _, state = model.encoder(src, src_lengths)
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0), value=BOS_ID)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    logp = torch.log_softmax(logits, dim=-1)
    nll = -logp.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out != PAD_ID
    return nll[real].sum() / real.sum()


def tf_via_start(model, src, src_lengths, tgt_out, label_smoothing: float = 0.0):
    start = model.start(src, src_lengths)
    tgt_in = torch.roll(tgt_out, shifts=1, dims=1)
    tgt_in[:, 0] = BOS_ID
    logits, _ = model.decoder(tgt_in, start.context, start.hidden)
    return F.cross_entropy(
        logits.permute(0, 2, 1), tgt_out, ignore_index=PAD_ID, label_smoothing=label_smoothing
    )


CASES = [
    BlindCase(
        CHECK,
        "sum_divided_by_batch",
        tf_sum_over_tokens,
        "mistake",
        "sums the cross-entropy over the real tokens and divides by the batch size instead of the number of tokens",
    ),
    BlindCase(
        CHECK,
        "bos_overwrites_first_target",
        tf_bos_replaces_first,
        "mistake",
        "copies tgt_out and writes <bos> over its first column instead of shifting it right",
    ),
    BlindCase(
        CHECK,
        "context_is_first_output",
        tf_context_first_output,
        "mistake",
        "takes the context as the encoder's output at the first position instead of its final state",
    ),
    BlindCase(
        CHECK,
        "mask_from_decoder_inputs",
        tf_mask_from_inputs,
        "mistake",
        "builds the padding mask from the shifted decoder inputs instead of from tgt_out, so one padding position after each <eos> is counted",
    ),
    BlindCase(
        CHECK,
        "eos_not_trained",
        tf_eos_dropped,
        "mistake",
        "replaces <eos> by PAD_ID in the targets, so the loss never teaches the model to stop",
    ),
    BlindCase(
        CHECK,
        "decoder_state_none",
        tf_state_from_zeros_context_ok,
        "mistake",
        "passes the right context but None as the decoder's initial state, so it starts from zeros",
    ),
    BlindCase(
        CHECK,
        "mean_of_sentence_means",
        tf_mean_of_row_means,
        "mistake",
        "averages the loss over each sentence first and then over the sentences, instead of over all real tokens",
    ),
    BlindCase(
        CHECK,
        "slip_returns_loss_and_logits",
        tf_returns_logits_too,
        "mistake",
        "returns the pair (loss, logits) instead of the loss alone",
    ),
    BlindCase(
        CHECK,
        "gather_log_softmax",
        tf_masked_manual,
        "correct",
        "shifts with F.pad, gathers the log-probabilities by hand and divides by the count of real tokens",
    ),
    BlindCase(
        CHECK,
        "model_start_and_roll",
        tf_via_start,
        "correct",
        "uses model.start for context and state, builds tgt_in with torch.roll, and takes an optional label_smoothing=0",
    ),
]
