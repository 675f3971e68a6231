"""Blind set B33, check_teacher_forcing_loss (chapter 4): the loss of one teacher-forced step as
readers assemble it from the encoder and the decoder."""

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


def _encode(model, src: Tensor, src_lengths: Tensor):
    _, state = model.encoder(src, src_lengths)
    return last_hidden(state), state


def _ce(logits: Tensor, tgt_out: Tensor) -> Tensor:
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def _zeros_like_state(state):
    if isinstance(state, tuple):
        return tuple(torch.zeros_like(s) for s in state)
    return torch.zeros_like(state)


# ---------------------------------------------------------------- mistakes


def tf_not_shifted(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    context, state = _encode(model, src, src_lengths)
    logits, _ = model.decoder(tgt_out, context, state)  # the decoder reads the targets
    return _ce(logits, tgt_out)


def tf_no_bos(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    context, state = _encode(model, src, src_lengths)
    logits, _ = model.decoder(tgt_out[:, :-1], context, state)  # y_t predicts y_{t+1}
    return _ce(logits, tgt_out[:, 1:])


def tf_feeds_own_argmax(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    context, state = _encode(model, src, src_lengths)
    prev = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long)
    all_logits = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)  # (B, 1, V)
        all_logits.append(logits)
        prev = logits.argmax(dim=-1)  # the next input is what the model said
    return _ce(torch.cat(all_logits, dim=1), tgt_out)


def tf_counts_padding(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    context, state = _encode(model, src, src_lengths)
    logits, _ = model.decoder(_shift_right(tgt_out), context, state)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1))


def tf_zero_start(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    context, state = _encode(model, src, src_lengths)
    logits, _ = model.decoder(_shift_right(tgt_out), context, _zeros_like_state(state))
    return _ce(logits, tgt_out)  # c carries the source; the decoder starts fresh


def tf_last_output_column(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)  # (B, S, D)
    last = outputs[:, -1]  # (B, D): the last encoder step
    if isinstance(state, tuple):
        start = (last.unsqueeze(0).contiguous(), state[1])
    else:
        start = last.unsqueeze(0).contiguous()
    logits, _ = model.decoder(_shift_right(tgt_out), last, start)
    return _ce(logits, tgt_out)


def tf_loss_as_number(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    context, state = _encode(model, src, src_lengths)
    logits, _ = model.decoder(_shift_right(tgt_out), context, state)
    return torch.tensor(_ce(logits, tgt_out).item())  # a clean scalar tensor


def tf_encoder_no_grad(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    with torch.no_grad():  # the source is only read, no need for its graph
        context, state = _encode(model, src, src_lengths)
    logits, _ = model.decoder(_shift_right(tgt_out), context, state)
    return _ce(logits, tgt_out)


def tf_summed(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    context, state = _encode(model, src, src_lengths)
    logits, _ = model.decoder(_shift_right(tgt_out), context, state)
    V = logits.shape[-1]
    return F.cross_entropy(
        logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID, reduction="sum"
    )


def tf_mean_per_sentence(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    context, state = _encode(model, src, src_lengths)
    logits, _ = model.decoder(_shift_right(tgt_out), context, state)
    losses = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    per_sentence = (losses * real).sum(dim=1) / real.sum(dim=1)  # each sentence's mean
    return per_sentence.mean()


def tf_softmax_then_ce(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    context, state = _encode(model, src, src_lengths)
    logits, _ = model.decoder(_shift_right(tgt_out), context, state)
    probs = logits.softmax(dim=-1)  # probabilities of the next token
    return _ce(probs, tgt_out)


def tf_pad_as_start(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    context, state = _encode(model, src, src_lengths)
    start = tgt_out.new_zeros(tgt_out.shape[0], 1)  # an empty first input
    tgt_in = torch.cat([start, tgt_out[:, :-1]], dim=1)
    logits, _ = model.decoder(tgt_in, context, state)
    return _ce(logits, tgt_out)


def tf_skips_eos(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    context, state = _encode(model, src, src_lengths)
    logits, _ = model.decoder(_shift_right(tgt_out), context, state)
    targets = tgt_out.masked_fill(tgt_out == EOS_ID, PAD_ID)  # only the real words count
    return _ce(logits, targets)


def tf_whole_state_as_context(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift_right(tgt_out), state, state)  # c = s_S, the final state
    return _ce(logits, tgt_out)


# ---------------------------------------------------------------- correct variants


def tf_masked_mean(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    """Per-token losses, a mask of the real targets, and the mean over the mask by hand."""
    _, final = model.encoder(src, src_lengths)
    context = last_hidden(final)
    bos = torch.full_like(tgt_out[:, :1], BOS_ID)
    tgt_in = torch.cat((bos, tgt_out[:, :-1]), dim=1)
    logits, _ = model.decoder(tgt_in, context, final)  # (B, T, V)
    losses = F.cross_entropy(logits.permute(0, 2, 1), tgt_out, reduction="none")  # (B, T)
    real = tgt_out != PAD_ID
    return losses[real].sum() / real.sum()


def tf_full_target_drop_last(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    """<bos> then the whole target as input; the logits after the last input are dropped."""
    context, state = _encode(model, src, src_lengths)
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long)
    logits, _ = model.decoder(torch.cat([bos, tgt_out], dim=1), context, state)  # (B, T+1, V)
    return _ce(logits[:, :-1], tgt_out)


def tf_step_by_step(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    """Teacher forcing one step at a time: each step is fed the true previous token."""
    context, state = _encode(model, src, src_lengths)
    tgt_in = _shift_right(tgt_out)
    steps = []
    for t in range(tgt_in.shape[1]):
        logits, state = model.decoder(tgt_in[:, t : t + 1], context, state)  # (B, 1, V)
        steps.append(logits)
    return _ce(torch.cat(steps, dim=1), tgt_out)


def tf_log_softmax_gather(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    """log_softmax and gather of the target's log-probability, averaged over real tokens."""
    _, state = model.encoder(src, src_lengths)
    c = last_hidden(state)
    logits, _ = model.decoder(_shift_right(tgt_out), c, state)
    logp = logits.log_softmax(dim=-1).gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = (tgt_out != PAD_ID).to(logp.dtype)
    return -(logp * real).sum() / real.sum()


CASES = [
    BlindCase(
        CHECK,
        "not_shifted",
        tf_not_shifted,
        "mistake",
        "I fed tgt_out itself to the decoder as its inputs, without shifting it.",
    ),
    BlindCase(
        CHECK,
        "no_bos",
        tf_no_bos,
        "mistake",
        "I fed tgt_out[:, :-1] and predicted tgt_out[:, 1:], with no <bos> in front.",
    ),
    BlindCase(
        CHECK,
        "feeds_own_argmax",
        tf_feeds_own_argmax,
        "mistake",
        "I looped over the steps feeding back the argmax of the previous logits.",
    ),
    BlindCase(
        CHECK,
        "counts_padding",
        tf_counts_padding,
        "mistake",
        "I used F.cross_entropy without ignore_index, so the padding is averaged in.",
    ),
    BlindCase(
        CHECK,
        "zero_start",
        tf_zero_start,
        "mistake",
        "I passed c as the context but started the decoder from a zero state.",
    ),
    BlindCase(
        CHECK,
        "last_output_column",
        tf_last_output_column,
        "mistake",
        "I took the encoder's outputs[:, -1] as s_S, for the context and the start state.",
    ),
    BlindCase(
        CHECK,
        "loss_as_number",
        tf_loss_as_number,
        "mistake",
        "I returned torch.tensor(loss.item()) to get a clean scalar.",
    ),
    BlindCase(
        CHECK,
        "encoder_no_grad",
        tf_encoder_no_grad,
        "mistake",
        "I ran the encoder under torch.no_grad(), since the source is only read.",
    ),
    BlindCase(
        CHECK,
        "summed",
        tf_summed,
        "mistake",
        "I used reduction='sum' in the cross-entropy instead of the mean.",
    ),
    BlindCase(
        CHECK,
        "mean_per_sentence",
        tf_mean_per_sentence,
        "mistake",
        "I averaged the loss within each sentence first and then over the sentences.",
    ),
    BlindCase(
        CHECK,
        "softmax_then_ce",
        tf_softmax_then_ce,
        "mistake",
        "I took the softmax of the logits and gave the probabilities to F.cross_entropy.",
    ),
    BlindCase(
        CHECK,
        "pad_as_start",
        tf_pad_as_start,
        "mistake",
        "I shifted the targets right with a column of zeros in front instead of BOS_ID.",
    ),
    BlindCase(
        CHECK,
        "skips_eos",
        tf_skips_eos,
        "mistake",
        "I treated <eos> like padding in the loss, so only the real words count.",
    ),
    BlindCase(
        CHECK,
        "whole_state_as_context",
        tf_whole_state_as_context,
        "mistake",
        "I passed the encoder's final state itself as the context, without last_hidden.",
    ),
    BlindCase(
        CHECK,
        "masked_mean",
        tf_masked_mean,
        "correct",
        "Per-token losses with reduction='none', then the sum over the real targets divided by "
        "their count.",
    ),
    BlindCase(
        CHECK,
        "full_target_drop_last",
        tf_full_target_drop_last,
        "correct",
        "I fed <bos> followed by the whole tgt_out and dropped the last step's logits.",
    ),
    BlindCase(
        CHECK,
        "step_by_step",
        tf_step_by_step,
        "correct",
        "A loop over the steps, each fed the true previous token, the state carried along.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_gather",
        tf_log_softmax_gather,
        "correct",
        "log_softmax, gather of the target's log-probability, and the masked mean by hand.",
    ),
]
