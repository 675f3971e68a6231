"""Blind set B19, check_teacher_forcing_loss (chapter 4): the loss of one teacher-forced step."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import Seq2Seq, last_hidden
from transformer_tutorial.sequences import BOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shift_right(tgt_out: Tensor) -> Tensor:
    """``<bos> y_1 .. y_{T-1}``: the right decoder inputs, shared by the mistakes elsewhere."""
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=tgt_out.dtype, device=tgt_out.device)
    return torch.cat([bos, tgt_out[:, :-1]], dim=1)


def _logits(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return logits  # (B, T, V)


# ---------------------------------------------------------------- mistakes


def tf_not_shifted(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, tgt_out)  # the decoder reads the targets as they are
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def tf_no_bos(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in, target = tgt_out[:, :-1], tgt_out[:, 1:]  # predict the next target from the previous
    logits = _logits(model, src, src_lengths, tgt_in)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)


def tf_feeds_argmax(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long)
    steps = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)  # (B, 1, V)
        steps.append(logits)
        prev = logits.argmax(dim=-1)  # the model's guess is the next input
    logits = torch.cat(steps, dim=1)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def tf_counts_padding(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten())  # every position counts


def tf_zero_start(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    logits, _ = model.decoder(_shift_right(tgt_out), context, torch.zeros_like(state))
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def tf_last_column(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    outputs, _ = model.encoder(src, src_lengths)
    s_S = outputs[:, -1]  # (B, D): the encoder's last step
    logits, _ = model.decoder(_shift_right(tgt_out), s_S, s_S.unsqueeze(0).contiguous())
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def tf_item(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    V = logits.shape[-1]
    loss = F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)
    return torch.tensor(loss.item())  # a clean number to log


def tf_sum(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    V = logits.shape[-1]
    return F.cross_entropy(
        logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID, reduction="sum"
    )


def tf_mean_of_sentences(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    nll = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    per_sentence = (nll * real).sum(1) / real.sum(1)  # the mean of each sentence
    return per_sentence.mean()


def tf_pad_as_start(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0), value=PAD_ID)  # shifted right, a pad in front
    logits = _logits(model, src, src_lengths, tgt_in)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def tf_softmax_first(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    probs = _logits(model, src, src_lengths, _shift_right(tgt_out)).softmax(dim=-1)
    V = probs.shape[-1]
    return F.cross_entropy(probs.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


# ---------------------------------------------------------------- correct variants


def tf_log_softmax_gather(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    """log_softmax, gather of the target's log-probability, mean over the real tokens."""
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    logp = logits.log_softmax(dim=-1).gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out != PAD_ID
    return -(logp * real).sum() / real.sum()


def tf_bos_then_all(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    """Feeds <bos> and the whole of tgt_out, then drops the last step's logits."""
    _, h = model.encoder(src, src_lengths)
    bos = torch.full_like(tgt_out[:, :1], BOS_ID)
    logits, _ = model.decoder(torch.cat([bos, tgt_out], 1), last_hidden(h), h)  # (B, T + 1, V)
    logits = logits[:, :-1]
    return F.nll_loss(logits.log_softmax(-1).transpose(1, 2), tgt_out, ignore_index=PAD_ID)


def tf_masked_select(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    """tgt_in by roll and an overwritten first column; the loss on the real positions only."""
    tgt_in = tgt_out.roll(1, dims=1).clone()
    tgt_in[:, 0] = BOS_ID
    logits = _logits(model, src, src_lengths, tgt_in)
    real = tgt_out != PAD_ID  # (B, T)
    return F.cross_entropy(logits[real], tgt_out[real])


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
        "no_bos",
        tf_no_bos,
        "mistake",
        "I fed tgt_out[:, :-1] and predicted tgt_out[:, 1:], with no <bos>, so y_1 is never "
        "predicted.",
    ),
    BlindCase(
        CHECK,
        "feeds_argmax",
        tf_feeds_argmax,
        "mistake",
        "I ran the decoder one step at a time and fed back its own argmax.",
    ),
    BlindCase(
        CHECK,
        "counts_padding",
        tf_counts_padding,
        "mistake",
        "I forgot ignore_index=PAD_ID, so the padding counts in the mean.",
    ),
    BlindCase(
        CHECK,
        "zero_start_state",
        tf_zero_start,
        "mistake",
        "I started the decoder from a zero state, passing only c.",
    ),
    BlindCase(
        CHECK,
        "last_column",
        tf_last_column,
        "mistake",
        "I took s_S as the last column of the encoder's outputs, which is padding for short "
        "sources.",
    ),
    BlindCase(
        CHECK,
        "item_detached",
        tf_item,
        "mistake",
        "I returned torch.tensor(loss.item()), which cuts the loss off from the model.",
    ),
    BlindCase(
        CHECK, "sum_not_mean", tf_sum, "mistake", "I summed the token losses instead of averaging."
    ),
    BlindCase(
        CHECK,
        "mean_of_sentence_means",
        tf_mean_of_sentences,
        "mistake",
        "I averaged each sentence's tokens, then averaged the sentences.",
    ),
    BlindCase(
        CHECK,
        "pad_instead_of_bos",
        tf_pad_as_start,
        "mistake",
        "I shifted right with F.pad, which puts PAD_ID first instead of BOS_ID.",
    ),
    BlindCase(
        CHECK,
        "softmax_before_cross_entropy",
        tf_softmax_first,
        "mistake",
        "I turned the logits into probabilities before F.cross_entropy.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_gather",
        tf_log_softmax_gather,
        "correct",
        "log_softmax and gather, the negative mean over the real tokens by hand.",
    ),
    BlindCase(
        CHECK,
        "bos_then_all_drop_last",
        tf_bos_then_all,
        "correct",
        "Feeds <bos> and all of tgt_out, drops the last logits; nll_loss on (B, V, T).",
    ),
    BlindCase(
        CHECK,
        "roll_and_boolean_index",
        tf_masked_select,
        "correct",
        "tgt_in by roll with <bos> written into column 0; cross-entropy on logits[real].",
    ),
]
