"""Blind set B32, check_teacher_forcing_loss (chapter 4): the loss of one teacher-forced step."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import NUM_SPECIALS, last_hidden
from transformer_tutorial.sequences import BOS_ID, EOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shift(tgt_out: Tensor, start: int = BOS_ID) -> Tensor:
    start_col = torch.full_like(tgt_out[:, :1], start)  # (B, 1)
    return torch.cat([start_col, tgt_out[:, :-1]], dim=1)  # (B, T)


def _logits(model, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return logits  # (B, T, V)


def _ce(logits: Tensor, tgt_out: Tensor) -> Tensor:
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


# ---------------------------------------------------------------- mistakes


def tf_sum_not_mean(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    V = logits.shape[-1]
    return F.cross_entropy(
        logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID, reduction="sum"
    )


def tf_mean_per_sentence(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift(tgt_out))  # (B, T, V)
    token_loss = F.cross_entropy(
        logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID, reduction="none"
    )  # (B, T)
    real = (tgt_out != PAD_ID).float()
    per_sentence = (token_loss * real).sum(1) / real.sum(1)  # each sentence's mean
    return per_sentence.mean()  # then the mean over sentences


def tf_mean_encoder_context(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)  # (B, S, D)
    context = outputs.mean(dim=1)  # summary of all encoder states
    logits, _ = model.decoder(_shift(tgt_out), context, state)
    return _ce(logits, tgt_out)


def tf_eos_as_start(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = _shift(tgt_out, start=EOS_ID)  # "end of the previous sentence" as the start token
    return _ce(_logits(model, src, src_lengths, tgt_in), tgt_out)


def tf_pad_as_start(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0))  # shift right; F.pad fills with 0 = <pad>
    return _ce(_logits(model, src, src_lengths, tgt_in), tgt_out)


def tf_bos_replaces_first(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = tgt_out.clone()
    tgt_in[:, 0] = BOS_ID  # put <bos> at the front, overwriting y_1
    return _ce(_logits(model, src, src_lengths, tgt_in), tgt_out)


def tf_lm_shift(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in, targets = tgt_out[:, :-1], tgt_out[:, 1:]  # the usual language-model shift
    return _ce(_logits(model, src, src_lengths, tgt_in), targets)


def tf_nll_on_logits(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    V = logits.shape[-1]
    return F.nll_loss(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def tf_ignores_eos(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    token_loss = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = tgt_out >= NUM_SPECIALS  # only the symbols count, not the special tokens
    return token_loss[real].mean()


def tf_no_encoder_state(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), None)  # rnn starts at zeros
    return _ce(logits, tgt_out)


def tf_first_column_context(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), outputs[:, 0], state)  # the state after token 1
    return _ce(logits, tgt_out)


def tf_unshifted(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    return _ce(_logits(model, src, src_lengths, tgt_out), tgt_out)


def tf_padding_counted(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))


def tf_float_loss(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    loss = _ce(_logits(model, src, src_lengths, _shift(tgt_out)), tgt_out)
    return torch.tensor(loss.item())  # a clean scalar for logging


# ---------------------------------------------------------------- correct variants


def tf_via_forward(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0), value=BOS_ID)
    logits = model(src, src_lengths, tgt_in)  # Seq2Seq.forward does the same wiring
    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)


def tf_gather_log_probs(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = state[0][-1] if isinstance(state, tuple) else state[-1]
    tgt_in = torch.cat([torch.full_like(tgt_out[:, :1], BOS_ID), tgt_out[:, :-1]], dim=1)
    logits, _ = model.decoder(tgt_in, context, state)
    log_probs = logits.log_softmax(dim=-1)  # (B, T, V)
    picked = log_probs.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out != PAD_ID
    return -(picked * real).sum() / real.sum()


def tf_step_loop(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full_like(tgt_out[:, 0], BOS_ID)  # (B,)
    total, count = 0.0, 0
    for t in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev.unsqueeze(1), context, state)  # (B, 1, V)
        y = tgt_out[:, t]
        total = total + F.cross_entropy(logits[:, 0], y, ignore_index=PAD_ID, reduction="sum")
        count += int((y != PAD_ID).sum())
        prev = y  # the true token, whatever the model predicted
    return total / count


def tf_float64_mean(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    token_loss = F.cross_entropy(
        logits.double().transpose(1, 2), tgt_out, reduction="none"
    )  # (B, T)
    real = tgt_out.ne(PAD_ID)
    return token_loss.masked_select(real).mean().to(logits.dtype)


CASES = [
    BlindCase(
        CHECK,
        "sum_not_mean",
        tf_sum_not_mean,
        "mistake",
        "I summed the cross-entropy over the tokens (reduction='sum') instead of averaging.",
    ),
    BlindCase(
        CHECK,
        "mean_per_sentence",
        tf_mean_per_sentence,
        "mistake",
        "I averaged each sentence's tokens first, then the sentences, so short targets weigh "
        "more than in a mean over all real tokens.",
    ),
    BlindCase(
        CHECK,
        "mean_encoder_context",
        tf_mean_encoder_context,
        "mistake",
        "I used the mean of the encoder outputs (padding included) as the context c.",
    ),
    BlindCase(
        CHECK,
        "eos_as_start",
        tf_eos_as_start,
        "mistake",
        "I started the decoder inputs with EOS_ID instead of BOS_ID.",
    ),
    BlindCase(
        CHECK,
        "pad_as_start",
        tf_pad_as_start,
        "mistake",
        "I shifted right with F.pad(tgt_out[:, :-1], (1, 0)), whose fill 0 is <pad>, not <bos>.",
    ),
    BlindCase(
        CHECK,
        "bos_overwrites_first",
        tf_bos_replaces_first,
        "mistake",
        "I wrote <bos> over the first column of tgt_out instead of shifting it right.",
    ),
    BlindCase(
        CHECK,
        "language_model_shift",
        tf_lm_shift,
        "mistake",
        "I fed tgt_out[:, :-1] and predicted tgt_out[:, 1:], the language-model shift, so no "
        "<bos> and y_1 is never predicted.",
    ),
    BlindCase(
        CHECK,
        "nll_on_logits",
        tf_nll_on_logits,
        "mistake",
        "I used F.nll_loss on the raw logits, without log_softmax.",
    ),
    BlindCase(
        CHECK,
        "eos_not_counted",
        tf_ignores_eos,
        "mistake",
        "I averaged only over the symbol tokens, leaving <eos> out of the loss as well as <pad>.",
    ),
    BlindCase(
        CHECK,
        "decoder_state_none",
        tf_no_encoder_state,
        "mistake",
        "I passed the context but state=None to the decoder, so its RNN starts from zeros.",
    ),
    BlindCase(
        CHECK,
        "first_column_context",
        tf_first_column_context,
        "mistake",
        "I took outputs[:, 0] as the context, the state after the first source token.",
    ),
    BlindCase(
        CHECK,
        "unshifted",
        tf_unshifted,
        "mistake",
        "I fed tgt_out itself to the decoder, so it sees the token it must predict.",
    ),
    BlindCase(
        CHECK,
        "padding_counted",
        tf_padding_counted,
        "mistake",
        "I forgot ignore_index=PAD_ID, so the padding is in the mean.",
    ),
    BlindCase(
        CHECK,
        "loss_rewrapped",
        tf_float_loss,
        "mistake",
        "I returned torch.tensor(loss.item()), which has no graph back to the model.",
    ),
    BlindCase(
        CHECK,
        "via_forward",
        tf_via_forward,
        "correct",
        "Shifted with F.pad(value=BOS_ID), called model(...) and cross_entropy on (B, V, T).",
    ),
    BlindCase(
        CHECK,
        "gather_log_probs",
        tf_gather_log_probs,
        "correct",
        "log_softmax, gather of the target log-probabilities and a masked mean.",
    ),
    BlindCase(
        CHECK,
        "step_loop",
        tf_step_loop,
        "correct",
        "The decoder run one step at a time, always fed the true previous token.",
    ),
    BlindCase(
        CHECK,
        "float64_masked_mean",
        tf_float64_mean,
        "correct",
        "Per-token losses in float64, masked_select of the real tokens, mean, cast back.",
    ),
]
