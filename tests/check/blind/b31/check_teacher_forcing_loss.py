"""Blind set B31, check_teacher_forcing_loss (chapter 4): one teacher-forced loss of Seq2Seq."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import BOS_ID, EOS_ID, PAD_ID, Seq2Seq, last_hidden

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shift_right(tgt_out: Tensor, first: int = BOS_ID) -> Tensor:
    start = torch.full((tgt_out.shape[0], 1), first, dtype=tgt_out.dtype, device=tgt_out.device)
    return torch.cat([start, tgt_out[:, :-1]], dim=1)  # (B, T)


def _logits(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return logits  # (B, T, V)


def _mean_ce(logits: Tensor, tgt_out: Tensor) -> Tensor:
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


# ---------------------------------------------------------------- mistakes


def tf_not_shifted(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    return _mean_ce(_logits(model, src, src_lengths, tgt_out), tgt_out)  # inputs = targets


def tf_roll(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = torch.roll(tgt_out, shifts=1, dims=1)  # shift right by one
    return _mean_ce(_logits(model, src, src_lengths, tgt_in), tgt_out)


def tf_pad_as_start(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = _shift_right(tgt_out, first=PAD_ID)  # F.pad(tgt_out, (1, 0)) puts a 0 first
    return _mean_ce(_logits(model, src, src_lengths, tgt_in), tgt_out)


def tf_language_model_shift(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    logits = _logits(model, src, src_lengths, tgt_out)  # read the targets ...
    return _mean_ce(logits[:, :-1], tgt_out[:, 1:])  # ... and predict the next one, as in ch. 2


def tf_argmax_fed_back(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long, device=tgt_out.device)
    steps = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)  # (B, 1, V)
        steps.append(logits)
        prev = logits.argmax(-1)  # what the model said
    return _mean_ce(torch.cat(steps, dim=1), tgt_out)


def tf_padding_in_loss(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten())


def tf_zero_start(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    zeros = torch.zeros_like(context).unsqueeze(0)  # the decoder starts fresh
    logits, _ = model.decoder(_shift_right(tgt_out), context, zeros)
    return _mean_ce(logits, tgt_out)


def tf_last_column(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    outputs, _ = model.encoder(src, src_lengths)
    c = outputs[:, -1]  # the last encoder state
    logits, _ = model.decoder(_shift_right(tgt_out), c, c.unsqueeze(0).contiguous())
    return _mean_ce(logits, tgt_out)


def tf_mean_of_outputs(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)
    c = outputs.mean(dim=1)  # a summary of all the states, not just the last
    logits, _ = model.decoder(_shift_right(tgt_out), c, state)
    return _mean_ce(logits, tgt_out)


def tf_full_source_length(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    full = torch.full_like(src_lengths, src.shape[1])  # every row as long as the batch
    return _mean_ce(_logits(model, src, full, _shift_right(tgt_out)), tgt_out)


def tf_detached(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    loss = _mean_ce(_logits(model, src, src_lengths, _shift_right(tgt_out)), tgt_out)
    return torch.tensor(loss.item())  # a clean scalar to print


def tf_sum(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    return F.cross_entropy(
        logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID, reduction="sum"
    )


def tf_mean_of_sentence_means(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    per_token = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    return ((per_token * real).sum(1) / real.sum(1)).mean()  # each sentence counts the same


def tf_softmax_then_ce(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    probs = _logits(model, src, src_lengths, _shift_right(tgt_out)).softmax(-1)
    return _mean_ce(probs, tgt_out)  # cross-entropy of the probabilities


def tf_eos_not_counted(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    per_token = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")
    real = (tgt_out != PAD_ID) & (tgt_out != EOS_ID)  # only the real symbols
    return per_token[real].mean()


# ---------------------------------------------------------------- correct variants


def tf_transposed_logits(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    bos = tgt_out.new_full((tgt_out.size(0), 1), BOS_ID)
    tgt_in = torch.cat((bos, tgt_out[:, :-1]), 1)
    _, final = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(final), final)
    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)  # (B, V, T)


def tf_masked_nll(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    logp = logits.log_softmax(-1).gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out != PAD_ID
    return -(logp * real).sum() / real.sum()


def tf_eos_replaced_by_pad(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    """Decoder inputs exactly as make_batch builds them: no <eos> among them, pad after."""
    tgt_in = _shift_right(tgt_out).masked_fill(tgt_out == PAD_ID, PAD_ID)
    tgt_in = tgt_in.masked_fill(tgt_in == EOS_ID, PAD_ID)
    return _mean_ce(_logits(model, src, src_lengths, tgt_in), tgt_out)


def tf_model_forward(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor, smoothing: float = 0.0
) -> Tensor:
    logits = model(src, src_lengths, _shift_right(tgt_out))
    V = logits.shape[-1]
    return F.cross_entropy(
        logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID, label_smoothing=smoothing
    )


def tf_log_softmax_then_ce(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    logp = _logits(model, src, src_lengths, _shift_right(tgt_out)).log_softmax(-1)
    return F.nll_loss(logp.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


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
        "roll_instead_of_bos",
        tf_roll,
        "mistake",
        "I shifted with torch.roll(tgt_out, 1, dims=1), so the first input is the last column "
        "(<eos> or padding), not <bos>.",
    ),
    BlindCase(
        CHECK,
        "pad_as_start_token",
        tf_pad_as_start,
        "mistake",
        "I shifted right with a 0 in front (F.pad style), which is <pad>, not <bos>.",
    ),
    BlindCase(
        CHECK,
        "language_model_shift",
        tf_language_model_shift,
        "mistake",
        "I fed tgt_out and compared logits[:, :-1] with tgt_out[:, 1:], as for chapter 2's "
        "language model, so y_1 is never predicted and there is no <bos>.",
    ),
    BlindCase(
        CHECK,
        "argmax_fed_back",
        tf_argmax_fed_back,
        "mistake",
        "I looped over the steps and fed back the model's own argmax.",
    ),
    BlindCase(
        CHECK,
        "padding_in_loss",
        tf_padding_in_loss,
        "mistake",
        "I forgot ignore_index=PAD_ID, so padding positions count in the mean.",
    ),
    BlindCase(
        CHECK,
        "decoder_from_zeros",
        tf_zero_start,
        "mistake",
        "I started the decoder from a zero state and passed c only as the context.",
    ),
    BlindCase(
        CHECK,
        "last_output_column",
        tf_last_column,
        "mistake",
        "I took c and the start state from outputs[:, -1], the encoder's last column.",
    ),
    BlindCase(
        CHECK,
        "mean_of_encoder_outputs",
        tf_mean_of_outputs,
        "mistake",
        "I used the mean of all encoder outputs (padding zeros included) as the context c.",
    ),
    BlindCase(
        CHECK,
        "source_lengths_ignored",
        tf_full_source_length,
        "mistake",
        "I passed the full width S as every source length, so the encoder reads the padding.",
    ),
    BlindCase(
        CHECK,
        "loss_as_new_tensor",
        tf_detached,
        "mistake",
        "I returned torch.tensor(loss.item()), a new scalar without a graph.",
    ),
    BlindCase(
        CHECK,
        "summed_loss",
        tf_sum,
        "mistake",
        "I summed the token losses (reduction='sum') instead of averaging them.",
    ),
    BlindCase(
        CHECK,
        "mean_of_sentence_means",
        tf_mean_of_sentence_means,
        "mistake",
        "I averaged within each sentence, then over sentences, so short targets weigh more.",
    ),
    BlindCase(
        CHECK,
        "softmax_before_cross_entropy",
        tf_softmax_then_ce,
        "mistake",
        "I applied softmax to the logits before F.cross_entropy.",
    ),
    BlindCase(
        CHECK,
        "eos_not_counted",
        tf_eos_not_counted,
        "mistake",
        "I left <eos> out of the loss as well as the padding.",
    ),
    BlindCase(
        CHECK,
        "transposed_logits",
        tf_transposed_logits,
        "correct",
        "cross_entropy on logits.transpose(1, 2), shape (B, V, T), with ignore_index.",
    ),
    BlindCase(
        CHECK,
        "masked_nll_by_hand",
        tf_masked_nll,
        "correct",
        "log_softmax, gather of the targets, masked sum divided by the number of real tokens.",
    ),
    BlindCase(
        CHECK,
        "inputs_as_make_batch",
        tf_eos_replaced_by_pad,
        "correct",
        "Decoder inputs as make_batch builds them: <eos> and trailing inputs replaced by <pad>.",
    ),
    BlindCase(
        CHECK,
        "model_forward_with_smoothing_arg",
        tf_model_forward,
        "correct",
        "model(src, src_lengths, tgt_in) and cross_entropy, with an extra label_smoothing "
        "argument that defaults to 0.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_then_nll",
        tf_log_softmax_then_ce,
        "correct",
        "log_softmax followed by F.nll_loss with ignore_index.",
    ),
]
