"""Blind set B29, check_teacher_forcing_loss (chapter 4): the loss of one teacher-forced step."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import Seq2Seq, last_hidden
from transformer_tutorial.sequences import BOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shifted(tgt_out: Tensor, bos: int = BOS_ID) -> Tensor:
    """``<bos> y_1 .. y_{T-1}``: the targets moved one step to the right."""
    start = torch.full_like(tgt_out[:, :1], bos)  # (B, 1)
    return torch.cat([start, tgt_out[:, :-1]], dim=1)  # (B, T)


def _decode(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)  # (B, T, V)
    return logits


def _ce(logits: Tensor, tgt_out: Tensor, **kwargs) -> Tensor:
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), **kwargs)


# ---------------------------------------------------------------- mistakes


def tf_not_shifted(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _decode(model, src, src_lengths, tgt_out)  # the true tokens as inputs
    return _ce(logits, tgt_out, ignore_index=PAD_ID)


def tf_shift_inside_target(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    logits = _decode(model, src, src_lengths, tgt_out[:, :-1])  # y_t predicts y_{t+1}
    return _ce(logits, tgt_out[:, 1:], ignore_index=PAD_ID)


def tf_bos_is_one(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = _shifted(tgt_out, bos=1)  # "0 is padding, 1 is <bos>, 2 is <eos>"
    return _ce(_decode(model, src, src_lengths, tgt_in), tgt_out, ignore_index=PAD_ID)


def tf_feeds_own_argmax(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full_like(tgt_out[:, :1], BOS_ID)  # (B, 1)
    steps = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)  # (B, 1, V)
        steps.append(logits)
        prev = logits.argmax(dim=-1)  # the model's own guess is the next input
    return _ce(torch.cat(steps, dim=1), tgt_out, ignore_index=PAD_ID)


def tf_padding_in_loss(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _decode(model, src, src_lengths, _shifted(tgt_out))
    return _ce(logits, tgt_out)  # every position of the batch


def tf_decoder_from_zeros(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    start = (
        torch.zeros_like(state)
        if isinstance(state, Tensor)
        else tuple(map(torch.zeros_like, state))
    )
    logits, _ = model.decoder(_shifted(tgt_out), context, start)
    return _ce(logits, tgt_out, ignore_index=PAD_ID)


def tf_context_is_mean_state(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)  # (B, S, D)
    context = outputs.mean(dim=1)  # a summary of every state
    logits, _ = model.decoder(_shifted(tgt_out), context, state)
    return _ce(logits, tgt_out, ignore_index=PAD_ID)


def tf_mean_per_sentence(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    logits = _decode(model, src, src_lengths, _shifted(tgt_out))
    total = _ce(logits, tgt_out, ignore_index=PAD_ID, reduction="sum")
    return total / tgt_out.shape[0]  # averaged over the batch


def tf_mask_from_inputs(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    tgt_in = _shifted(tgt_out)
    logits = _decode(model, src, src_lengths, tgt_in)
    nll = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_in != PAD_ID).float()  # the positions the decoder reads
    return (nll * real).sum() / real.sum()


def tf_label_smoothing(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _decode(model, src, src_lengths, _shifted(tgt_out))
    return _ce(logits, tgt_out, ignore_index=PAD_ID, label_smoothing=0.1)  # as in the paper


def tf_class_axis_last(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _decode(model, src, src_lengths, _shifted(tgt_out))  # (B, T, V)
    return F.cross_entropy(logits, tgt_out, ignore_index=PAD_ID)


def tf_returns_float(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> float:
    logits = _decode(model, src, src_lengths, _shifted(tgt_out))
    return _ce(logits, tgt_out, ignore_index=PAD_ID).item()  # a number to print


# ---------------------------------------------------------------- correct variants


def tf_forward_and_class_axis(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    """The whole model's forward on the shifted targets; cross_entropy on (B, V, T)."""
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=tgt_out.dtype, device=tgt_out.device)
    logits = model(src, src_lengths, torch.cat([bos, tgt_out[:, :-1]], dim=1))
    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)


def tf_masked_mean(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    """log_softmax and gather, averaged with the mask of the real targets."""
    logits = _decode(model, src, src_lengths, _shifted(tgt_out))
    logp = logits.log_softmax(dim=-1).gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out != PAD_ID
    return -(logp * real).sum() / real.sum()


def tf_bos_then_everything(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    """The decoder reads <bos> and the whole of tgt_out; the last step's logits are dropped."""
    tgt_in = torch.cat([torch.full_like(tgt_out[:, :1], BOS_ID), tgt_out], dim=1)  # (B, T + 1)
    logits = _decode(model, src, src_lengths, tgt_in)[:, :-1]  # (B, T, V)
    return _ce(logits, tgt_out, ignore_index=PAD_ID)


def tf_step_by_step(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    """One decoder call per step, always fed the true previous token."""
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    tgt_in = _shifted(tgt_out)
    steps = []
    for t in range(tgt_in.shape[1]):
        logits, state = model.decoder(tgt_in[:, t : t + 1], context, state)  # (B, 1, V)
        steps.append(logits)
    return _ce(torch.cat(steps, dim=1), tgt_out, ignore_index=PAD_ID)


CASES = [
    BlindCase(
        CHECK,
        "targets_not_shifted",
        tf_not_shifted,
        "mistake",
        "I fed tgt_out itself to the decoder, so at each step it reads the token it must predict.",
    ),
    BlindCase(
        CHECK,
        "shift_inside_target",
        tf_shift_inside_target,
        "mistake",
        "I shifted inside the target, inputs tgt_out[:, :-1] and labels tgt_out[:, 1:], with no "
        "<bos>, so the first token is never predicted.",
    ),
    BlindCase(
        CHECK,
        "bos_hardcoded_one",
        tf_bos_is_one,
        "mistake",
        "I started every row with id 1 because the text says '1 is <bos>', instead of BOS_ID.",
    ),
    BlindCase(
        CHECK,
        "feeds_own_argmax",
        tf_feeds_own_argmax,
        "mistake",
        "I ran the decoder one step at a time feeding back its own argmax, which is greedy "
        "decoding, not teacher forcing.",
    ),
    BlindCase(
        CHECK,
        "padding_in_loss",
        tf_padding_in_loss,
        "mistake",
        "I forgot ignore_index=PAD_ID, so the padded positions count in the mean.",
    ),
    BlindCase(
        CHECK,
        "decoder_from_zeros",
        tf_decoder_from_zeros,
        "mistake",
        "I passed c as the context but started the decoder's state from zeros.",
    ),
    BlindCase(
        CHECK,
        "context_mean_of_outputs",
        tf_context_is_mean_state,
        "mistake",
        "I used the mean of all the encoder outputs over S as the context c, padding included.",
    ),
    BlindCase(
        CHECK,
        "sum_over_tokens_per_sentence",
        tf_mean_per_sentence,
        "mistake",
        "I summed the cross-entropy over the real tokens and divided by the batch size, reading "
        "'averaged over the batch' literally.",
    ),
    BlindCase(
        CHECK,
        "mask_from_decoder_inputs",
        tf_mask_from_inputs,
        "mistake",
        "I built the mask of real positions from tgt_in != PAD_ID; the shifted inputs still hold "
        "<eos> of short rows, so one padded target per short row is counted.",
    ),
    BlindCase(
        CHECK,
        "label_smoothing",
        tf_label_smoothing,
        "mistake",
        "I added label_smoothing=0.1 to the cross-entropy, as the Transformer paper does.",
    ),
    BlindCase(
        CHECK,
        "class_axis_last",
        tf_class_axis_last,
        "mistake",
        "I passed the (B, T, V) logits straight to F.cross_entropy, which wants the classes on "
        "axis 1.",
    ),
    BlindCase(
        CHECK,
        "returns_python_float",
        tf_returns_float,
        "mistake",
        "I returned loss.item(), a Python number, so there is nothing to call backward on.",
    ),
    BlindCase(
        CHECK,
        "forward_class_axis_one",
        tf_forward_and_class_axis,
        "correct",
        "model(src, src_lengths, tgt_in) for the logits and F.cross_entropy on "
        "logits.transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "gather_masked_mean",
        tf_masked_mean,
        "correct",
        "log_softmax and gather, then a mean over the real targets with an explicit mask.",
    ),
    BlindCase(
        CHECK,
        "bos_plus_full_target",
        tf_bos_then_everything,
        "correct",
        "The decoder reads <bos> followed by the whole tgt_out, and I drop the last step's logits.",
    ),
    BlindCase(
        CHECK,
        "loop_over_steps",
        tf_step_by_step,
        "correct",
        "One decoder call per step, always fed the true previous token, state carried along.",
    ),
]
