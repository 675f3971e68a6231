"""Blind set B25, check_teacher_forcing_loss (chapter 4): the loss of one teacher-forced step."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import Seq2Seq, last_hidden
from transformer_tutorial.sequences import BOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shift(tgt_out: Tensor) -> Tensor:
    """The right decoder inputs: <bos> y_1 .. y_{T-1}."""
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=tgt_out.dtype, device=tgt_out.device)
    return torch.cat([bos, tgt_out[:, :-1]], dim=1)


def _logits(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return logits


def _mean_ce(logits: Tensor, tgt_out: Tensor) -> Tensor:
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


# ---------------------------------------------------------------- mistakes


def tf_bos_replaces_first(model, src, src_lengths, tgt_out):
    tgt_in = tgt_out.clone()
    tgt_in[:, 0] = BOS_ID  # the first input is <bos>, the rest are the targets
    return _mean_ce(_logits(model, src, src_lengths, tgt_in), tgt_out)


def tf_pad_instead_of_bos(model, src, src_lengths, tgt_out):
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0), value=PAD_ID)  # shifted right by one
    return _mean_ce(_logits(model, src, src_lengths, tgt_in), tgt_out)


def tf_double_shift(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    # logits at t predict the token at t + 1
    return _mean_ce(logits[:, :-1], tgt_out[:, 1:])


def tf_sum_reduction(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    V = logits.shape[-1]
    return F.cross_entropy(
        logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID, reduction="sum"
    )


def tf_mean_of_sentence_means(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    token_loss = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    per_sentence = (token_loss * real).sum(1) / real.sum(1)
    return per_sentence.mean()  # every sentence counts the same


def tf_nll_on_logits(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    return F.nll_loss(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


def tf_context_mean_of_outputs(model, src, src_lengths, tgt_out):
    outputs, state = model.encoder(src, src_lengths)  # (B, S, D)
    context = outputs.mean(dim=1)  # a summary of every source state
    logits, _ = model.decoder(_shift(tgt_out), context, state)
    return _mean_ce(logits, tgt_out)


def tf_source_lengths_full(model, src, src_lengths, tgt_out):
    full = torch.full_like(src_lengths, src.shape[1])  # the batch is padded to S anyway
    _, state = model.encoder(src, full)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    return _mean_ce(logits, tgt_out)


def tf_eos_ignored(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    targets = tgt_out[:, :-1]  # the last column is <eos> or padding
    return _mean_ce(logits[:, :-1], targets)


def tf_state_from_zeros(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    start = torch.zeros_like(state)  # the decoder gets the source through c
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), start)
    return _mean_ce(logits, tgt_out)


def tf_returns_float(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    return _mean_ce(logits, tgt_out).item()  # a number to print


def tf_no_shift(model, src, src_lengths, tgt_out):
    return _mean_ce(_logits(model, src, src_lengths, tgt_out), tgt_out)


def tf_padding_counted(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten())


def tf_greedy_fed_back(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    context, hidden = last_hidden(state), state
    prev = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long)
    steps = []
    for _ in range(tgt_out.shape[1]):
        logits, hidden = model.decoder(prev, context, hidden)  # (B, 1, V)
        steps.append(logits)
        prev = logits.argmax(-1)  # feed back what the model said
    return _mean_ce(torch.cat(steps, dim=1), tgt_out)


# ---------------------------------------------------------------- correct variants


def tf_masked_mean(model, src, src_lengths, tgt_out):
    start = model.start(src, src_lengths)
    tgt_in = F.pad(tgt_out, (1, 0), value=BOS_ID)[:, :-1]
    logits, _ = model.decoder(tgt_in, start.context, start.hidden)
    log_probs = logits.log_softmax(dim=-1)  # (B, T, V)
    picked = -log_probs.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out.ne(PAD_ID)
    return picked[real].sum() / real.sum()


def tf_step_by_step(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    tgt_in = _shift(tgt_out)
    total, count = 0.0, 0
    for t in range(tgt_in.shape[1]):  # the true previous token at every step
        logits, state = model.decoder(tgt_in[:, t : t + 1], context, state)  # (B, 1, V)
        target = tgt_out[:, t]
        real = target != PAD_ID
        if real.any():
            total = total + F.cross_entropy(logits[:, 0][real], target[real], reduction="sum")
            count += int(real.sum())
    return total / count


def tf_roll(model, src, src_lengths, tgt_out):
    tgt_in = torch.roll(tgt_out, shifts=1, dims=1)
    tgt_in[:, 0] = BOS_ID  # the rolled-in last column is replaced by <bos>
    logits = model(src, src_lengths, tgt_in)
    return F.cross_entropy(logits.permute(0, 2, 1), tgt_out, ignore_index=PAD_ID)


CASES = [
    BlindCase(
        CHECK,
        "bos_replaces_first_target",
        tf_bos_replaces_first,
        "mistake",
        "I copied tgt_out and wrote <bos> over its first column instead of shifting it right.",
    ),
    BlindCase(
        CHECK,
        "pad_instead_of_bos",
        tf_pad_instead_of_bos,
        "mistake",
        "I shifted the targets right with F.pad, which put PAD_ID, not <bos>, in front.",
    ),
    BlindCase(
        CHECK,
        "double_shift",
        tf_double_shift,
        "mistake",
        "I shifted the inputs and then also compared logits[:, :-1] with tgt_out[:, 1:], as in "
        "language-model code.",
    ),
    BlindCase(
        CHECK,
        "sum_not_mean",
        tf_sum_reduction,
        "mistake",
        "I used reduction='sum', so the loss is a total over the tokens, not their mean.",
    ),
    BlindCase(
        CHECK,
        "mean_of_sentence_means",
        tf_mean_of_sentence_means,
        "mistake",
        "I averaged the loss within each sentence, then over the sentences, so a short "
        "sentence's tokens weigh more.",
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
        "context_mean_of_outputs",
        tf_context_mean_of_outputs,
        "mistake",
        "I used the mean of the encoder's outputs as the context c instead of the final state.",
    ),
    BlindCase(
        CHECK,
        "source_lengths_all_full",
        tf_source_lengths_full,
        "mistake",
        "I passed the padded width S as every source length, so the encoder reads the padding.",
    ),
    BlindCase(
        CHECK,
        "eos_left_out",
        tf_eos_ignored,
        "mistake",
        "I dropped the last column from the loss, thinking it only holds <eos> or padding.",
    ),
    BlindCase(
        CHECK,
        "decoder_from_zeros",
        tf_state_from_zeros,
        "mistake",
        "I started the decoder from a zero state, since the source reaches it through c.",
    ),
    BlindCase(
        CHECK,
        "returns_float",
        tf_returns_float,
        "mistake",
        "I returned loss.item(), a Python float, instead of the loss tensor.",
    ),
    BlindCase(
        CHECK,
        "no_shift",
        tf_no_shift,
        "mistake",
        "I fed tgt_out itself to the decoder as its inputs.",
    ),
    BlindCase(
        CHECK,
        "padding_in_loss",
        tf_padding_counted,
        "mistake",
        "I forgot ignore_index=PAD_ID, so the padded positions count in the mean.",
    ),
    BlindCase(
        CHECK,
        "argmax_fed_back",
        tf_greedy_fed_back,
        "mistake",
        "I ran the decoder one step at a time and fed back its own argmax.",
    ),
    BlindCase(
        CHECK,
        "gather_masked_mean",
        tf_masked_mean,
        "correct",
        "model.start for the state; log_softmax and gather, then the mean over the real tokens.",
    ),
    BlindCase(
        CHECK,
        "step_by_step",
        tf_step_by_step,
        "correct",
        "A loop over the steps, feeding the true previous token; losses summed and divided by "
        "the number of real tokens.",
    ),
    BlindCase(
        CHECK,
        "roll_and_forward",
        tf_roll,
        "correct",
        "torch.roll by one with <bos> written in front, model's forward, and cross-entropy on "
        "(B, V, T) logits.",
    ),
]
