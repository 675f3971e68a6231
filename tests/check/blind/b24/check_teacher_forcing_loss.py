"""Blind set B24, check_teacher_forcing_loss (chapter 4): the loss of one teacher-forced step."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import Seq2Seq, last_hidden
from transformer_tutorial.sequences import BOS_ID, EOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shifted(tgt_out: Tensor, first: int = BOS_ID) -> Tensor:
    """``first`` then the targets without their last column: (B, T)."""
    start = torch.full((tgt_out.shape[0], 1), first, dtype=tgt_out.dtype, device=tgt_out.device)
    return torch.cat([start, tgt_out[:, :-1]], dim=1)


def _logits(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)  # (B, T, V)
    return logits


def _ce(logits: Tensor, tgt_out: Tensor) -> Tensor:
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


# ---------------------------------------------------------------- mistakes


def tf_not_shifted(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    return _ce(_logits(model, src, src_lengths, tgt_out), tgt_out)  # the targets are the inputs


def tf_pad_first(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = _shifted(tgt_out, first=PAD_ID)  # shifted right, the hole filled with padding
    return _ce(_logits(model, src, src_lengths, tgt_in), tgt_out)


def tf_eos_first(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = _shifted(tgt_out, first=EOS_ID)
    return _ce(_logits(model, src, src_lengths, tgt_in), tgt_out)


def tf_padding_in_loss(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))


def tf_ignores_eos(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=EOS_ID)


def tf_zero_start(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    logits, _ = model.decoder(_shifted(tgt_out), context, torch.zeros_like(state))
    return _ce(logits, tgt_out)


def tf_last_column(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    outputs, _ = model.encoder(src, src_lengths)  # (B, S, D)
    s_S = outputs[:, -1]  # the encoder's last state
    logits, _ = model.decoder(_shifted(tgt_out), s_S, s_S.unsqueeze(0).contiguous())
    return _ce(logits, tgt_out)


def tf_greedy_inputs(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long)
    steps = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)  # (B, 1, V)
        steps.append(logits)
        prev = logits.argmax(-1)  # what the model said comes next
    return _ce(torch.cat(steps, dim=1), tgt_out)


def tf_item(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    loss = _ce(_logits(model, src, src_lengths, _shifted(tgt_out)), tgt_out)
    return torch.tensor(loss.item())  # a clean scalar tensor


def tf_summed(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))
    return F.cross_entropy(
        logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID, reduction="sum"
    )


def tf_mean_of_sentences(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))
    per_token = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    per_sentence = (per_token * real).sum(1) / real.sum(1)  # (B,)
    return per_sentence.mean()


def tf_shifted_twice(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))
    return _ce(logits[:, :-1], tgt_out[:, 1:])  # predict the next token, as the language model


def tf_aliased_targets(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = tgt_out  # shift in place
    tgt_in[:, 1:] = tgt_out[:, :-1].clone()
    tgt_in[:, 0] = BOS_ID
    return _ce(_logits(model, src, src_lengths, tgt_in), tgt_out)


# ---------------------------------------------------------------- correct variants


def tf_roll(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = tgt_out.roll(1, dims=1)  # a copy; its first column is overwritten
    tgt_in[:, 0] = BOS_ID
    memory, final = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(final), final)
    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)


def tf_masked_mean(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0), value=BOS_ID)  # (B, T)
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    log_probs = logits.log_softmax(dim=-1)  # (B, T, V)
    nll = -log_probs.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out.ne(PAD_ID)
    return nll.masked_select(real).mean()


def tf_forward(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    bos = tgt_out.new_full((tgt_out.size(0), 1), BOS_ID)
    logits = model(src, src_lengths, torch.cat((bos, tgt_out[:, :-1]), 1))  # Seq2Seq.forward
    real = (tgt_out != PAD_ID).to(logits.dtype)
    losses = F.cross_entropy(logits.permute(0, 2, 1), tgt_out, reduction="none")
    return (losses * real).sum() / real.sum()


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
        "pad_instead_of_bos",
        tf_pad_first,
        "mistake",
        "I shifted the targets right but filled the first column with PAD_ID, not BOS_ID.",
    ),
    BlindCase(
        CHECK,
        "eos_instead_of_bos",
        tf_eos_first,
        "mistake",
        "I put EOS_ID in front of the shifted targets instead of BOS_ID.",
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
        "ignores_eos",
        tf_ignores_eos,
        "mistake",
        "I passed ignore_index=EOS_ID, mixing up the special ids; padding counts and <eos> "
        "does not.",
    ),
    BlindCase(
        CHECK,
        "decoder_from_zeros",
        tf_zero_start,
        "mistake",
        "I started the decoder from a zero state; only the context is the encoder's.",
    ),
    BlindCase(
        CHECK,
        "last_encoder_column",
        tf_last_column,
        "mistake",
        "I took s_S as outputs[:, -1], the last column of the encoder outputs.",
    ),
    BlindCase(
        CHECK,
        "own_argmax_fed_back",
        tf_greedy_inputs,
        "mistake",
        "I stepped the decoder myself and fed it its own argmax each step.",
    ),
    BlindCase(
        CHECK,
        "loss_from_item",
        tf_item,
        "mistake",
        "I returned torch.tensor(loss.item()), which is cut from the model's graph.",
    ),
    BlindCase(
        CHECK,
        "summed_not_mean",
        tf_summed,
        "mistake",
        "I used reduction='sum', the total and not the mean over the real tokens.",
    ),
    BlindCase(
        CHECK,
        "mean_of_sentence_means",
        tf_mean_of_sentences,
        "mistake",
        "I averaged each sentence over its real tokens, then averaged the sentences.",
    ),
    BlindCase(
        CHECK,
        "shifted_twice",
        tf_shifted_twice,
        "mistake",
        "Besides the <bos> shift I also compared logits[:, :-1] with tgt_out[:, 1:], as for the "
        "language model of chapter 2.",
    ),
    BlindCase(
        CHECK,
        "aliased_targets",
        tf_aliased_targets,
        "mistake",
        "I shifted with tgt_in = tgt_out and slice assignments, which rewrote tgt_out itself.",
    ),
    BlindCase(
        CHECK,
        "roll_and_class_axis",
        tf_roll,
        "correct",
        "roll(1) then BOS_ID in column 0; cross_entropy on logits transposed to (B, V, T).",
    ),
    BlindCase(
        CHECK,
        "gather_nll_masked_mean",
        tf_masked_mean,
        "correct",
        "F.pad for the shift; log_softmax and gather, then the mean over the real tokens.",
    ),
    BlindCase(
        CHECK,
        "model_forward_weighted_sum",
        tf_forward,
        "correct",
        "Seq2Seq.forward for the logits; per-token losses times the real-token mask, divided "
        "by their count.",
    ),
]
