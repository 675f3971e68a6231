"""Blind set B17, check_teacher_forcing_loss (chapter 4): one teacher-forced loss as readers write
it, from the parts of ``Seq2Seq``."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import BOS_ID, EOS_ID, PAD_ID, last_hidden

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shift_right(tgt_out: Tensor) -> Tensor:
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=tgt_out.dtype, device=tgt_out.device)
    return torch.cat([bos, tgt_out[:, :-1]], dim=1)  # (B, T)


def _decode(model, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return logits  # (B, T, V)


def _ce(logits: Tensor, tgt_out: Tensor) -> Tensor:
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD_ID
    )


# ---------------------------------------------------------------- mistakes


def tf_not_shifted(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _decode(model, src, src_lengths, tgt_out)  # the decoder reads the targets
    return _ce(logits, tgt_out)


def tf_pad_instead_of_bos(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0), value=PAD_ID)  # shifted right, padding in front
    return _ce(_decode(model, src, src_lengths, tgt_in), tgt_out)


def tf_lm_shift(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _decode(model, src, src_lengths, tgt_out[:, :-1])  # inputs y_1 .. y_{T-1}
    return _ce(logits, tgt_out[:, 1:])  # targets y_2 .. <eos>, as for a language model


def tf_shift_left(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = F.pad(tgt_out[:, 1:], (0, 1), value=PAD_ID)  # moved one step
    return _ce(_decode(model, src, src_lengths, tgt_in), tgt_out)


def tf_feeds_argmax(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long)
    all_logits = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)  # (B, 1, V)
        all_logits.append(logits)
        prev = logits.argmax(dim=-1)  # the model's own guess is the next input
    return _ce(torch.cat(all_logits, dim=1), tgt_out)


def tf_counts_padding(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _decode(model, src, src_lengths, _shift_right(tgt_out))
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))


def tf_zero_start(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    if isinstance(state, tuple):
        start = tuple(torch.zeros_like(s) for s in state)
    else:
        start = torch.zeros_like(state)  # a fresh decoder; the source comes in through c
    logits, _ = model.decoder(_shift_right(tgt_out), context, start)
    return _ce(logits, tgt_out)


def tf_last_column(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)
    context = outputs[:, -1]  # the last encoder state is the summary
    logits, _ = model.decoder(_shift_right(tgt_out), context, state)
    return _ce(logits, tgt_out)


def tf_detached(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    loss = _ce(_decode(model, src, src_lengths, _shift_right(tgt_out)), tgt_out)
    return torch.tensor(loss.item())  # a plain number to log


def tf_sum_over_batch(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _decode(model, src, src_lengths, _shift_right(tgt_out))
    total = F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]),
        tgt_out.reshape(-1),
        ignore_index=PAD_ID,
        reduction="sum",
    )
    return total / tgt_out.shape[0]  # loss per sentence


def tf_mean_of_sentence_means(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _decode(model, src, src_lengths, _shift_right(tgt_out))  # (B, T, V)
    per_token = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = tgt_out != PAD_ID
    per_sentence = (per_token * real).sum(1) / real.sum(1)  # every sentence counts the same
    return per_sentence.mean()


def tf_time_major_flatten(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _decode(model, src, src_lengths, _shift_right(tgt_out))  # (B, T, V)
    V = logits.shape[-1]
    flat = logits.transpose(0, 1).reshape(-1, V)  # step by step, as the decoder produced them
    return F.cross_entropy(flat, tgt_out.reshape(-1), ignore_index=PAD_ID)


# ---------------------------------------------------------------- correct variants


def tf_class_axis_second(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    """F.pad for the shift, and cross_entropy on (B, V, T) logits without flattening."""
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0), value=BOS_ID)
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)


def tf_log_softmax_gather(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    """The cross-entropy by hand: log_softmax, gather, a mask of the real tokens."""
    tgt_in = tgt_out.roll(1, dims=1)
    tgt_in[:, 0] = BOS_ID  # roll made a new tensor, so this leaves tgt_out alone
    memory, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    logp = logits.log_softmax(dim=-1).gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = (tgt_out != PAD_ID).to(logp.dtype)
    return -(logp * real).sum() / real.sum()


def tf_inputs_like_make_batch(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    """The inputs exactly as make_batch builds them (PAD where tgt_out has <eos>), and an
    nn.CrossEntropyLoss module."""
    shifted = tgt_out[:, :-1].clone()
    shifted[shifted == EOS_ID] = PAD_ID  # <eos> is never an input
    tgt_in = torch.cat([torch.full_like(tgt_out[:, :1], BOS_ID), shifted], dim=1)
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    logits, _ = model.decoder(tgt_in, context, state)
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=PAD_ID)
    return loss_fn(logits.flatten(0, 1), tgt_out.flatten())


def tf_boolean_select(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    """Only the real positions are selected before a plain mean cross-entropy."""
    tgt_in = torch.cat([tgt_out.new_full((len(tgt_out), 1), BOS_ID), tgt_out[:, :-1]], 1)
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    real = tgt_out != PAD_ID
    return F.cross_entropy(logits[real], tgt_out[real])


CASES = [
    BlindCase(
        CHECK,
        "not_shifted",
        tf_not_shifted,
        "mistake",
        "I fed tgt_out itself to the decoder, so at each step it sees the token it must predict.",
    ),
    BlindCase(
        CHECK,
        "pad_instead_of_bos",
        tf_pad_instead_of_bos,
        "mistake",
        "I shifted the targets right with F.pad, which put PAD_ID in front instead of <bos>.",
    ),
    BlindCase(
        CHECK,
        "language_model_shift",
        tf_lm_shift,
        "mistake",
        "I used tgt_out[:, :-1] as inputs and tgt_out[:, 1:] as targets, as for a language "
        "model, so there is no <bos> and y_1 is never predicted.",
    ),
    BlindCase(
        CHECK,
        "shifted_left",
        tf_shift_left,
        "mistake",
        "I shifted the targets the wrong way: the input at step t is y_{t+1}.",
    ),
    BlindCase(
        CHECK,
        "argmax_fed_back",
        tf_feeds_argmax,
        "mistake",
        "I looped over the steps and fed the decoder its own argmax, starting from <bos>.",
    ),
    BlindCase(
        CHECK,
        "padding_in_loss",
        tf_counts_padding,
        "mistake",
        "I forgot ignore_index=PAD_ID, so the padding positions count in the mean.",
    ),
    BlindCase(
        CHECK,
        "decoder_from_zeros",
        tf_zero_start,
        "mistake",
        "I started the decoder from a zero state; the source only reaches it through c.",
    ),
    BlindCase(
        CHECK,
        "context_last_column",
        tf_last_column,
        "mistake",
        "I took c = outputs[:, -1], the last column of the encoder's outputs (zeros for a short "
        "padded source).",
    ),
    BlindCase(
        CHECK,
        "loss_detached",
        tf_detached,
        "mistake",
        "I returned torch.tensor(loss.item()), so the loss has no graph back to the model.",
    ),
    BlindCase(
        CHECK,
        "sum_per_sentence",
        tf_sum_over_batch,
        "mistake",
        "I summed the token losses and divided by the batch size (a loss per sentence) instead "
        "of averaging over the real tokens.",
    ),
    BlindCase(
        CHECK,
        "mean_of_sentence_means",
        tf_mean_of_sentence_means,
        "mistake",
        "I averaged each sentence's tokens first and then the sentences, so short sentences "
        "weigh as much as long ones.",
    ),
    BlindCase(
        CHECK,
        "time_major_flatten",
        tf_time_major_flatten,
        "mistake",
        "I flattened the logits time-major (transpose(0, 1)) but the targets batch-major, so they "
        "no longer line up.",
    ),
    BlindCase(
        CHECK,
        "class_axis_second",
        tf_class_axis_second,
        "correct",
        "F.pad with value=BOS_ID for the shift; cross_entropy on (B, V, T) logits.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_gather",
        tf_log_softmax_gather,
        "correct",
        "roll for the shift, then log_softmax, gather and a mask of the real tokens by hand.",
    ),
    BlindCase(
        CHECK,
        "inputs_like_make_batch",
        tf_inputs_like_make_batch,
        "correct",
        "The decoder inputs exactly as make_batch builds them (<eos> replaced by PAD_ID) and an "
        "nn.CrossEntropyLoss module.",
    ),
    BlindCase(
        CHECK,
        "boolean_select",
        tf_boolean_select,
        "correct",
        "Selected the real positions with a boolean index, then a plain mean cross-entropy.",
    ),
]
