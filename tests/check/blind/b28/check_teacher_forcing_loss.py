"""Blind set B28, check_teacher_forcing_loss (chapter 4): the loss of one teacher-forced step as
readers assemble it from the encoder and the decoder."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import last_hidden
from transformer_tutorial.sequences import BOS_ID, EOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shifted(tgt_out: Tensor, bos: int = BOS_ID) -> Tensor:
    """<bos> y_1 .. y_{T-1}: the targets shifted one step to the right."""
    start = torch.full((tgt_out.shape[0], 1), bos, dtype=tgt_out.dtype, device=tgt_out.device)
    return torch.cat([start, tgt_out[:, :-1]], dim=1)


def _logits(model, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return logits  # (B, T, V)


# ---------------------------------------------------------------- mistakes


def tf_bos_id_from_prose(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    bos = 1  # "0 is padding, 1 is <bos>, 2 is <eos>"
    logits = _logits(model, src, src_lengths, _shifted(tgt_out, bos))
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


def tf_eos_as_start(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shifted(tgt_out, EOS_ID))  # mixed up the two ids
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


def tf_shift_left(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    pad = torch.full_like(tgt_out[:, :1], PAD_ID)
    tgt_in = torch.cat([tgt_out[:, 1:], pad], dim=1)  # shifted by one
    logits = _logits(model, src, src_lengths, tgt_in)
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


def tf_skips_first_target(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    # inputs y_1 .. y_{T-1}, targets y_2 .. <eos>: the shift done inside tgt_out
    logits = _logits(model, src, src_lengths, tgt_out[:, :-1])
    return F.cross_entropy(logits.flatten(0, 1), tgt_out[:, 1:].flatten(), ignore_index=PAD_ID)


def tf_sum_not_mean(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))
    return F.cross_entropy(
        logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID, reduction="sum"
    )


def tf_mean_per_sentence(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))
    per_token = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    per_sentence = (per_token * real).sum(1) / real.sum(1)  # each sentence counts the same
    return per_sentence.mean()


def tf_logits_not_transposed(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))  # (B, T, V)
    return F.cross_entropy(logits, tgt_out, ignore_index=PAD_ID)


def tf_softmax_then_ce(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    probs = _logits(model, src, src_lengths, _shifted(tgt_out)).softmax(dim=-1)
    return F.cross_entropy(probs.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


def tf_nll_on_logits(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))
    return F.nll_loss(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


def tf_context_is_mean(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)
    context = outputs.mean(dim=1)  # a summary of all the states, not just the last
    logits, _ = model.decoder(_shifted(tgt_out), context, state)
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


def tf_context_from_first_row(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)
    context = outputs[:, 0]  # s_1, the state after the first source token
    logits, _ = model.decoder(_shifted(tgt_out), context, state)
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


def tf_eval_inside(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    with torch.no_grad():  # the encoder only reads the source
        _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shifted(tgt_out), last_hidden(state), state)
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


# ---------------------------------------------------------------- correct variants


def tf_log_softmax_gather(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shifted(tgt_out), last_hidden(state), state)
    logp = logits.log_softmax(dim=-1).gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out != PAD_ID
    return -(logp * real).sum() / real.sum()


def tf_step_by_step(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    """One decoder call per step, always feeding the true previous token."""
    _, state = model.encoder(src, src_lengths)
    context, hidden = last_hidden(state), state
    prev = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long, device=tgt_out.device)
    total, count = 0.0, 0
    for t in range(tgt_out.shape[1]):
        logits, hidden = model.decoder(prev, context, hidden)  # (B, 1, V)
        real = tgt_out[:, t] != PAD_ID
        total = total + F.cross_entropy(logits[:, 0], tgt_out[:, t], reduction="none")[real].sum()
        count += int(real.sum())
        prev = tgt_out[:, t : t + 1]
    return total / count


def tf_make_batch_inputs(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    """The decoder inputs as make_batch builds them: <eos> turned into padding."""
    shifted = _shifted(tgt_out)
    tgt_in = shifted.masked_fill(shifted == EOS_ID, PAD_ID)
    logits = model(src, src_lengths, tgt_in)
    V = logits.size(-1)
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def tf_transposed_ce(
    model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor, pad_id: int = PAD_ID
) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)
    del outputs
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0), value=BOS_ID)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return F.cross_entropy(logits.permute(0, 2, 1), tgt_out, ignore_index=pad_id)


CASES = [
    BlindCase(
        CHECK,
        "bos_id_one",
        tf_bos_id_from_prose,
        "mistake",
        "I hard-coded <bos> as 1, from the sentence '0 is padding, 1 is <bos>', instead of "
        "using BOS_ID.",
    ),
    BlindCase(
        CHECK,
        "eos_as_start_token",
        tf_eos_as_start,
        "mistake",
        "I started the decoder's inputs with EOS_ID instead of BOS_ID.",
    ),
    BlindCase(
        CHECK,
        "shifted_left",
        tf_shift_left,
        "mistake",
        "I shifted the targets to the left (y_2 .. <eos> pad) instead of to the right.",
    ),
    BlindCase(
        CHECK,
        "first_target_dropped",
        tf_skips_first_target,
        "mistake",
        "I fed tgt_out[:, :-1] and scored tgt_out[:, 1:], so y_1 is never predicted and no "
        "<bos> is fed.",
    ),
    BlindCase(
        CHECK,
        "summed_not_averaged",
        tf_sum_not_mean,
        "mistake",
        "I used reduction='sum', the total over the real tokens rather than their mean.",
    ),
    BlindCase(
        CHECK,
        "mean_per_sentence",
        tf_mean_per_sentence,
        "mistake",
        "I averaged each sentence's tokens, then averaged the sentences, so short sentences "
        "weigh as much as long ones.",
    ),
    BlindCase(
        CHECK,
        "logits_not_transposed",
        tf_logits_not_transposed,
        "mistake",
        "I passed the (B, T, V) logits straight to cross_entropy, which wants the classes on "
        "dim 1.",
    ),
    BlindCase(
        CHECK,
        "softmax_before_ce",
        tf_softmax_then_ce,
        "mistake",
        "I took the softmax of the logits before cross_entropy.",
    ),
    BlindCase(
        CHECK,
        "nll_on_logits",
        tf_nll_on_logits,
        "mistake",
        "I used F.nll_loss on the raw logits, without a log_softmax.",
    ),
    BlindCase(
        CHECK,
        "context_mean_of_states",
        tf_context_is_mean,
        "mistake",
        "I gave the decoder the mean of the encoder's outputs as the context, padding included.",
    ),
    BlindCase(
        CHECK,
        "context_first_state",
        tf_context_from_first_row,
        "mistake",
        "I took outputs[:, 0] as the context, the state after the first token, not s_S.",
    ),
    BlindCase(
        CHECK,
        "encoder_under_no_grad",
        tf_eval_inside,
        "mistake",
        "I ran the encoder under torch.no_grad(), so the encoder gets no gradient.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_gather",
        tf_log_softmax_gather,
        "correct",
        "log_softmax and gather for the right tokens, masked and averaged by hand.",
    ),
    BlindCase(
        CHECK,
        "one_step_at_a_time",
        tf_step_by_step,
        "correct",
        "A loop over the steps that calls the decoder with one true token at a time.",
    ),
    BlindCase(
        CHECK,
        "make_batch_style_inputs",
        tf_make_batch_inputs,
        "correct",
        "The decoder inputs with <eos> replaced by padding, as make_batch builds them, and "
        "the model's own forward.",
    ),
    BlindCase(
        CHECK,
        "f_pad_and_permute",
        tf_transposed_ce,
        "correct",
        "<bos> put in front with F.pad, cross_entropy on logits permuted to (B, V, T); an "
        "extra pad_id argument with a default.",
    ),
]
