"""Blind set B27, check_teacher_forcing_loss (chapter 4): the loss of one teacher-forced step as
readers write it from the parts of Seq2Seq."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import BOS_ID, PAD_ID, Seq2Seq, last_hidden

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shift_right(tgt_out: Tensor) -> Tensor:
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=tgt_out.dtype, device=tgt_out.device)
    return torch.cat([bos, tgt_out[:, :-1]], dim=1)  # <bos> y_1 .. y_{T-1}


def _logits(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return logits


def _loss(logits: Tensor, tgt_out: Tensor) -> Tensor:
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


# ---------------------------------------------------------------- mistakes


def tf_roll_wraps_around(model, src, src_lengths, tgt_out) -> Tensor:
    tgt_in = torch.roll(tgt_out, shifts=1, dims=1)  # shift right by one
    tgt_in[:, 0] = torch.where(tgt_in[:, 0] == PAD_ID, BOS_ID, tgt_in[:, 0])  # the pad becomes bos
    return _loss(_logits(model, src, src_lengths, tgt_in), tgt_out)


def tf_pad_as_start_token(model, src, src_lengths, tgt_out) -> Tensor:
    start = torch.full((tgt_out.shape[0], 1), PAD_ID)  # an empty token before the first word
    tgt_in = torch.cat([start, tgt_out[:, :-1]], dim=1)
    return _loss(_logits(model, src, src_lengths, tgt_in), tgt_out)


def tf_logits_sliced_wrong_end(model, src, src_lengths, tgt_out) -> Tensor:
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID)
    tgt_in = torch.cat([bos, tgt_out], dim=1)  # (B, T + 1)
    logits = _logits(model, src, src_lengths, tgt_in)  # (B, T + 1, V)
    return _loss(logits[:, 1:], tgt_out)  # drop the logit of <bos>


def tf_mask_from_inputs(model, src, src_lengths, tgt_out) -> Tensor:
    tgt_in = _shift_right(tgt_out)
    logits = _logits(model, src, src_lengths, tgt_in)
    per_token = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = tgt_in != PAD_ID  # the real tokens of the decoder's input
    return (per_token * real).sum() / real.sum()


def tf_mean_of_sentence_means(model, src, src_lengths, tgt_out) -> Tensor:
    tgt_in = _shift_right(tgt_out)
    logits = _logits(model, src, src_lengths, tgt_in)
    per_token = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    per_sentence = (per_token * real).sum(dim=1) / real.sum(dim=1)
    return per_sentence.mean()  # every sentence counts the same


def tf_summed_loss(model, src, src_lengths, tgt_out) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    V = logits.shape[-1]
    return F.cross_entropy(
        logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID, reduction="sum"
    )


def tf_double_softmax(model, src, src_lengths, tgt_out) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    probs = logits.softmax(dim=-1)  # probabilities of the next token
    return F.cross_entropy(probs.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


def tf_nll_on_logits(model, src, src_lengths, tgt_out) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    return F.nll_loss(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


def tf_all_lengths_full(model, src, src_lengths, tgt_out) -> Tensor:
    full = torch.full_like(src_lengths, src.shape[1])  # the batch is padded to S anyway
    return _loss(_logits(model, src, full, _shift_right(tgt_out)), tgt_out)


def tf_context_is_mean_state(model, src, src_lengths, tgt_out) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)  # (B, S, D)
    context = outputs.mean(dim=1)  # a summary of all the encoder's states
    logits, _ = model.decoder(_shift_right(tgt_out), context, state)
    return _loss(logits, tgt_out)


def tf_state_as_context(model, src, src_lengths, tgt_out) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift_right(tgt_out), state, state)  # c = s_S
    return _loss(logits, tgt_out)


def tf_ignore_bos(model, src, src_lengths, tgt_out) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=BOS_ID)


def tf_under_no_grad(model, src, src_lengths, tgt_out) -> Tensor:
    with torch.no_grad():  # no need to keep the encoder's graph for a loss value
        _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift_right(tgt_out), last_hidden(state), state)
    return _loss(logits, tgt_out)


def tf_targets_shifted_too(model, src, src_lengths, tgt_out) -> Tensor:
    tgt_in = _shift_right(tgt_out)
    logits = _logits(model, src, src_lengths, tgt_in)
    return _loss(logits[:, :-1], tgt_out[:, 1:])  # predict the next token


# ---------------------------------------------------------------- correct variants


def tf_step_by_step(model, src, src_lengths, tgt_out) -> Tensor:
    """The decoder run one step at a time, always fed the true previous token."""
    _, state = model.encoder(src, src_lengths)
    context, hidden = last_hidden(state), state
    prev = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long)
    all_logits = []
    for t in range(tgt_out.shape[1]):
        logits, hidden = model.decoder(prev, context, hidden)  # (B, 1, V)
        all_logits.append(logits)
        prev = tgt_out[:, t : t + 1]
    logits = torch.cat(all_logits, dim=1)
    return F.cross_entropy(logits.permute(0, 2, 1), tgt_out, ignore_index=PAD_ID)


def tf_log_softmax_gather(model, src, src_lengths, tgt_out) -> Tensor:
    """Log-probabilities gathered at the targets, averaged over a mask of real targets."""
    tgt_in = tgt_out.roll(1, dims=1)
    tgt_in[:, 0] = BOS_ID
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    logp = torch.log_softmax(logits, dim=-1)
    picked = logp.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out.ne(PAD_ID)
    return -(picked * real).sum() / real.sum()


def tf_bos_plus_all_targets(model, src, src_lengths, tgt_out) -> Tensor:
    """<bos> before the whole of tgt_out, then the last logit dropped."""
    bos = tgt_out.new_full((tgt_out.size(0), 1), BOS_ID)
    logits = model(src, src_lengths, torch.cat([bos, tgt_out], dim=1))  # (B, T + 1, V)
    logits = logits[:, :-1]
    keep = tgt_out != PAD_ID
    return F.cross_entropy(logits[keep], tgt_out[keep])


CASES = [
    BlindCase(
        CHECK,
        "roll_wraps_around",
        tf_roll_wraps_around,
        "mistake",
        "I shifted with torch.roll(tgt_out, 1) and replaced the first column by <bos> only "
        "where it was padding, so a full-length row starts with its own <eos>.",
    ),
    BlindCase(
        CHECK,
        "pad_as_start_token",
        tf_pad_as_start_token,
        "mistake",
        "I shifted the targets right but put PAD_ID in front instead of <bos>.",
    ),
    BlindCase(
        CHECK,
        "sliced_wrong_end",
        tf_logits_sliced_wrong_end,
        "mistake",
        "I fed <bos> + all of tgt_out and dropped the first logit instead of the last, so each "
        "position sees the token it must predict.",
    ),
    BlindCase(
        CHECK,
        "mask_from_decoder_inputs",
        tf_mask_from_inputs,
        "mistake",
        "I built the mask of real tokens from tgt_in, not tgt_out, so the padding right after "
        "<eos> counts.",
    ),
    BlindCase(
        CHECK,
        "mean_of_sentence_means",
        tf_mean_of_sentence_means,
        "mistake",
        "I averaged the loss within each sentence, then over the sentences, so short sentences "
        "weigh more per token.",
    ),
    BlindCase(
        CHECK,
        "summed_not_averaged",
        tf_summed_loss,
        "mistake",
        "I used reduction='sum', the total over the real tokens instead of their mean.",
    ),
    BlindCase(
        CHECK,
        "softmax_then_cross_entropy",
        tf_double_softmax,
        "mistake",
        "I applied softmax to the logits before F.cross_entropy.",
    ),
    BlindCase(
        CHECK,
        "nll_loss_on_logits",
        tf_nll_on_logits,
        "mistake",
        "I used F.nll_loss on the raw logits, without log_softmax.",
    ),
    BlindCase(
        CHECK,
        "source_lengths_all_full",
        tf_all_lengths_full,
        "mistake",
        "I told the encoder every source is S long, so the final state is read after the padding.",
    ),
    BlindCase(
        CHECK,
        "context_mean_of_states",
        tf_context_is_mean_state,
        "mistake",
        "I used the mean of all encoder outputs as the context c instead of the final state.",
    ),
    BlindCase(
        CHECK,
        "state_passed_as_context",
        tf_state_as_context,
        "mistake",
        "I passed the encoder's state (1, B, D) as the context without last_hidden.",
    ),
    BlindCase(
        CHECK,
        "ignore_index_bos",
        tf_ignore_bos,
        "mistake",
        "I set ignore_index=BOS_ID, mixing up which special token to skip, so padding counts.",
    ),
    BlindCase(
        CHECK,
        "encoder_under_no_grad",
        tf_under_no_grad,
        "mistake",
        "I ran the encoder under torch.no_grad(), so the loss gives it no gradient.",
    ),
    BlindCase(
        CHECK,
        "targets_shifted_twice",
        tf_targets_shifted_too,
        "mistake",
        "After shifting the inputs I also compared logits[:, :-1] with tgt_out[:, 1:], shifting "
        "a second time.",
    ),
    BlindCase(
        CHECK,
        "step_by_step_decoder",
        tf_step_by_step,
        "correct",
        "The decoder called one step at a time on the true previous token, logits concatenated.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_gather",
        tf_log_softmax_gather,
        "correct",
        "roll with column 0 set to <bos>; log_softmax, gather at the targets, masked mean.",
    ),
    BlindCase(
        CHECK,
        "bos_plus_all_then_drop_last",
        tf_bos_plus_all_targets,
        "correct",
        "<bos> before all of tgt_out through model(...), the last logit dropped, cross-entropy "
        "on the real positions selected by a boolean index.",
    ),
]
