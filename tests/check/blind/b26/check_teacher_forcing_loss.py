"""Blind set B26, check_teacher_forcing_loss (chapter 4): the loss of one teacher-forced step as
readers write it from the parts of Seq2Seq."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import Seq2Seq, last_hidden
from transformer_tutorial.sequences import BOS_ID, EOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shift(tgt_out: Tensor) -> Tensor:
    """<bos> y_1 .. y_{T-1}: right, shared by the mistakes that are elsewhere."""
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=tgt_out.dtype, device=tgt_out.device)
    return torch.cat([bos, tgt_out[:, :-1]], dim=1)


def _ce(logits: Tensor, tgt_out: Tensor) -> Tensor:
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD_ID
    )


# ---------------------------------------------------------------- mistakes


def tf_bos_appended(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    bos = torch.full((len(tgt_out), 1), BOS_ID)
    tgt_in = torch.cat([tgt_out[:, :-1], bos], dim=1)  # the targets, then <bos>
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return _ce(logits, tgt_out)


def tf_starts_with_eos(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    start = torch.full((len(tgt_out), 1), EOS_ID)  # the end of the source starts the target
    tgt_in = torch.cat([start, tgt_out[:, :-1]], dim=1)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return _ce(logits, tgt_out)


def tf_mask_from_inputs(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    tgt_in = _shift(tgt_out)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    losses = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = tgt_in != PAD_ID  # the decoder's real inputs
    return (losses * real).sum() / real.sum()


def tf_per_sentence_sum(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    V = logits.shape[-1]
    total = F.cross_entropy(
        logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID, reduction="sum"
    )
    return total / len(tgt_out)  # loss per sentence


def tf_mean_of_row_means(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    losses = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    per_row = (losses * real).sum(1) / real.sum(1)
    return per_row.mean()  # every sentence counts the same


def tf_context_mean_of_states(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)  # (B, S, D)
    context = outputs.sum(1) / src_lengths[:, None]  # the summary of all the states
    logits, _ = model.decoder(_shift(tgt_out), context, state)
    return _ce(logits, tgt_out)


def tf_context_first_state(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), outputs[:, 0], state)  # s_1
    return _ce(logits, tgt_out)


def tf_state_none(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), None)  # c carries the source
    return _ce(logits, tgt_out)


def tf_time_major_logits(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)  # (B, T, V)
    V = logits.shape[-1]
    flat = logits.transpose(0, 1).reshape(-1, V)  # step by step
    return F.cross_entropy(flat, tgt_out.reshape(-1), ignore_index=PAD_ID)


def tf_returns_float(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> float:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    return _ce(logits, tgt_out).item()


def tf_full_lengths(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    S = src.shape[1]
    _, state = model.encoder(src, torch.full_like(src_lengths, S))  # the batch is S wide
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    return _ce(logits, tgt_out)


def tf_encoder_no_grad(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    with torch.no_grad():  # the encoder only reads the source
        _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    return _ce(logits, tgt_out)


def tf_targets_include_bos(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    tgt_in = _shift(tgt_out)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return _ce(logits, tgt_in)  # what went in is what should come out


# ---------------------------------------------------------------- correct variants


def tf_drop_last_logit(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    bos = tgt_out.new_full((tgt_out.size(0), 1), BOS_ID)
    logits, _ = model.decoder(torch.cat([bos, tgt_out], 1), last_hidden(state), state)
    logits = logits[:, :-1]  # the step after the last target predicts nothing we score
    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)


def tf_gather_log_probs(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, final = model.encoder(src, src_lengths)
    tgt_in = torch.empty_like(tgt_out)
    tgt_in[:, 0] = BOS_ID
    tgt_in[:, 1:] = tgt_out[:, :-1]
    logits, _ = model.decoder(tgt_in, last_hidden(final), final)
    log_probs = logits.log_softmax(-1)
    nll = -log_probs.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out.ne(PAD_ID)
    return nll[real].mean()


def tf_step_by_step(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long)
    total, count = 0.0, 0
    for t in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)  # (B, 1, V)
        target = tgt_out[:, t]
        real = target != PAD_ID
        total = total + F.cross_entropy(logits[:, 0], target, reduction="none")[real].sum()
        count += int(real.sum())
        prev = target.unsqueeze(1)  # the true token, not the prediction
    return total / count


CASES = [
    BlindCase(
        CHECK,
        "bos_appended",
        tf_bos_appended,
        "mistake",
        "I put <bos> at the end of the decoder inputs instead of the start.",
    ),
    BlindCase(
        CHECK,
        "starts_with_eos",
        tf_starts_with_eos,
        "mistake",
        "I started the decoder inputs with EOS_ID instead of BOS_ID.",
    ),
    BlindCase(
        CHECK,
        "mask_from_decoder_inputs",
        tf_mask_from_inputs,
        "mistake",
        "I built the mask of real tokens from tgt_in rather than tgt_out, so one padding "
        "target per short row is counted.",
    ),
    BlindCase(
        CHECK,
        "sum_per_sentence",
        tf_per_sentence_sum,
        "mistake",
        "I summed the token losses and divided by the number of sentences, not of tokens.",
    ),
    BlindCase(
        CHECK,
        "mean_of_sentence_means",
        tf_mean_of_row_means,
        "mistake",
        "I averaged each sentence's loss first and then averaged the sentences.",
    ),
    BlindCase(
        CHECK,
        "context_mean_of_states",
        tf_context_mean_of_states,
        "mistake",
        "I used the mean of the encoder's states over the real positions as the context c.",
    ),
    BlindCase(
        CHECK,
        "context_first_state",
        tf_context_first_state,
        "mistake",
        "I took outputs[:, 0], the first encoder state, as c.",
    ),
    BlindCase(
        CHECK,
        "decoder_state_none",
        tf_state_none,
        "mistake",
        "I passed None as the decoder's initial state, since the context already carries the "
        "source.",
    ),
    BlindCase(
        CHECK,
        "time_major_logits",
        tf_time_major_logits,
        "mistake",
        "I flattened the logits time-first but the targets batch-first.",
    ),
    BlindCase(
        CHECK,
        "returns_float",
        tf_returns_float,
        "mistake",
        "I return loss.item(), a Python float.",
    ),
    BlindCase(
        CHECK,
        "encoder_full_lengths",
        tf_full_lengths,
        "mistake",
        "I gave the encoder the padded width S as every length, so it reads the padding.",
    ),
    BlindCase(
        CHECK,
        "encoder_under_no_grad",
        tf_encoder_no_grad,
        "mistake",
        "I ran the encoder under torch.no_grad(), so the loss trains only the decoder.",
    ),
    BlindCase(
        CHECK,
        "targets_are_inputs",
        tf_targets_include_bos,
        "mistake",
        "I scored the logits against tgt_in, the shifted sequence with <bos>, not tgt_out.",
    ),
    BlindCase(
        CHECK,
        "drop_last_logit",
        tf_drop_last_logit,
        "correct",
        "The decoder reads <bos> and all of tgt_out; the last step's logits are dropped.",
    ),
    BlindCase(
        CHECK,
        "gather_log_probs",
        tf_gather_log_probs,
        "correct",
        "log_softmax, gather of the target's log-probability, mean over the real tokens.",
    ),
    BlindCase(
        CHECK,
        "step_by_step",
        tf_step_by_step,
        "correct",
        "The decoder run one step at a time, fed the true previous token, the losses summed "
        "and divided by the number of real tokens.",
    ),
]
