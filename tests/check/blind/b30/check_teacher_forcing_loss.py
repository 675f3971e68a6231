"""Blind set B30, check_teacher_forcing_loss (chapter 4): the loss of one teacher-forced step of
the encoder-decoder, as readers put it together."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import Seq2Seq, last_hidden, sequence_loss
from transformer_tutorial.sequences import BOS_ID, EOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shifted(tgt_out: Tensor) -> Tensor:
    """<bos> y_1 .. y_{T-1}: the right decoder inputs, shared by the mistakes made elsewhere."""
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=tgt_out.dtype, device=tgt_out.device)
    return torch.cat([bos, tgt_out[:, :-1]], dim=1)


def _logits(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return logits


# ---------------------------------------------------------------- mistakes


def tf_not_shifted(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, tgt_out)  # the targets are the inputs
    return sequence_loss(logits, tgt_out)


def tf_eos_as_start(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    start = torch.full((len(tgt_out), 1), EOS_ID)  # the end of the source starts the target
    tgt_in = torch.cat([start, tgt_out[:, :-1]], dim=1)
    return sequence_loss(_logits(model, src, src_lengths, tgt_in), tgt_out)


def tf_no_bos(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in, targets = tgt_out[:, :-1], tgt_out[:, 1:]  # predict y_{t+1} from y_t
    return sequence_loss(_logits(model, src, src_lengths, tgt_in), targets)


def tf_padding_counted(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))


def tf_zero_state(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    logits, _ = model.decoder(_shifted(tgt_out), context, torch.zeros_like(state))
    return sequence_loss(logits, tgt_out)


def tf_last_column(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    outputs, _ = model.encoder(src, src_lengths)
    s_last = outputs[:, -1]  # (B, D): the last encoder state
    logits, _ = model.decoder(_shifted(tgt_out), s_last, s_last.unsqueeze(0).contiguous())
    return sequence_loss(logits, tgt_out)


def tf_returns_float(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> float:
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))
    return sequence_loss(logits, tgt_out).item()


def tf_summed(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))
    return F.cross_entropy(
        logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID, reduction="sum"
    )


def tf_mean_of_sentence_means(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))
    per_token = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    per_sentence = (per_token * real).sum(1) / real.sum(1)
    return per_sentence.mean()  # every sentence counts the same


def tf_time_major_flatten(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))  # (B, T, V)
    V = logits.shape[-1]
    flat = logits.transpose(0, 1).reshape(-1, V)  # time first, as in the RNN chapters
    return F.cross_entropy(flat, tgt_out.reshape(-1), ignore_index=PAD_ID)


def tf_feeds_argmax(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full((len(tgt_out), 1), BOS_ID)
    steps = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)  # (B, 1, V)
        steps.append(logits)
        prev = logits.argmax(-1)  # what the model said goes in next
    return sequence_loss(torch.cat(steps, dim=1), tgt_out)


def tf_lengths_ignored(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    full = torch.full_like(src_lengths, src.shape[1])  # the batch is already padded
    return sequence_loss(_logits(model, src, full, _shifted(tgt_out)), tgt_out)


def tf_label_smoothing(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))
    return F.cross_entropy(
        logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID, label_smoothing=0.1
    )


# ---------------------------------------------------------------- correct variants


def tf_pad_and_transpose(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    """F.pad puts <bos> in front; cross_entropy over (B, V, T) logits."""
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0), value=BOS_ID)
    _, final = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(final), final)
    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)


def tf_masked_mean_by_hand(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    """Log-probabilities gathered at the targets, averaged over the real tokens by hand."""
    tgt_in = tgt_out.roll(1, dims=1)
    tgt_in[:, 0] = BOS_ID
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    logp = logits.log_softmax(-1).gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out.ne(PAD_ID)
    return -(logp * real).sum() / real.sum()


def tf_start_and_nll(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    """model.start for c and s'_0, then nll_loss on log_softmax."""
    begin = model.start(src, src_lengths)
    tgt_in = torch.column_stack([torch.full_like(tgt_out[:, 0], BOS_ID), tgt_out[:, :-1]])
    logits, _ = model.decoder(tgt_in, begin.context, begin.hidden)
    logp = F.log_softmax(logits, dim=-1)
    return F.nll_loss(logp.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


CASES = [
    BlindCase(
        CHECK,
        "targets_not_shifted",
        tf_not_shifted,
        "mistake",
        "I fed tgt_out itself to the decoder, so at each step it sees the token it must predict.",
    ),
    BlindCase(
        CHECK,
        "eos_as_start_token",
        tf_eos_as_start,
        "mistake",
        "I shifted right but put EOS_ID in front instead of BOS_ID.",
    ),
    BlindCase(
        CHECK,
        "no_bos",
        tf_no_bos,
        "mistake",
        "I dropped <bos>: the decoder reads y_1 .. y_{T-1} and predicts y_2 .. <eos>, so y_1 "
        "is never predicted.",
    ),
    BlindCase(
        CHECK,
        "padding_in_loss",
        tf_padding_counted,
        "mistake",
        "I called cross_entropy without ignore_index, so the padding counts in the mean.",
    ),
    BlindCase(
        CHECK,
        "decoder_from_zeros",
        tf_zero_state,
        "mistake",
        "I started the decoder from a zero state; the encoder reaches it only through c.",
    ),
    BlindCase(
        CHECK,
        "last_column_of_outputs",
        tf_last_column,
        "mistake",
        "I took the encoder's outputs[:, -1] as c and as the start state, which is padding for "
        "a short source.",
    ),
    BlindCase(
        CHECK,
        "returns_item",
        tf_returns_float,
        "mistake",
        "I return loss.item(), a Python float, so there is nothing to call backward on.",
    ),
    BlindCase(
        CHECK,
        "summed_not_averaged",
        tf_summed,
        "mistake",
        "I summed the token losses (reduction='sum') instead of averaging them.",
    ),
    BlindCase(
        CHECK,
        "mean_of_sentence_means",
        tf_mean_of_sentence_means,
        "mistake",
        "I averaged each sentence over its real tokens and then averaged the sentences, so "
        "short sentences weigh more than their tokens.",
    ),
    BlindCase(
        CHECK,
        "time_major_flatten",
        tf_time_major_flatten,
        "mistake",
        "I flattened the logits time first but the targets batch first, so they do not line up.",
    ),
    BlindCase(
        CHECK,
        "feeds_own_argmax",
        tf_feeds_argmax,
        "mistake",
        "I decoded step by step and fed back the model's argmax, as in generation.",
    ),
    BlindCase(
        CHECK,
        "source_lengths_ignored",
        tf_lengths_ignored,
        "mistake",
        "I passed the padded width as every source length, so the encoder reads the padding.",
    ),
    BlindCase(
        CHECK,
        "label_smoothing",
        tf_label_smoothing,
        "mistake",
        "I added label_smoothing=0.1 to the cross-entropy, as good translators do.",
    ),
    BlindCase(
        CHECK,
        "f_pad_and_class_axis",
        tf_pad_and_transpose,
        "correct",
        "<bos> put in front with F.pad; cross_entropy on logits transposed to (B, V, T).",
    ),
    BlindCase(
        CHECK,
        "roll_and_masked_mean",
        tf_masked_mean_by_hand,
        "correct",
        "tgt_out rolled right by one with <bos> written into column 0; log-probabilities "
        "gathered and averaged over the real tokens by hand.",
    ),
    BlindCase(
        CHECK,
        "model_start_nll",
        tf_start_and_nll,
        "correct",
        "model.start gives c and the start state; nll_loss on log_softmax.",
    ),
]
