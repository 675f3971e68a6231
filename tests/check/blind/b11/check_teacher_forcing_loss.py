"""Blind set B11, check_teacher_forcing_loss (chapter 4): the teacher-forced loss as readers write
it from the encoder and decoder of ``Seq2Seq``."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import last_hidden
from transformer_tutorial.sequences import BOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shift(tgt_out: Tensor) -> Tensor:
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=tgt_out.dtype, device=tgt_out.device)
    return torch.cat([bos, tgt_out[:, :-1]], dim=1)


def _logits(model, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return logits


def _ce(logits: Tensor, tgt_out: Tensor) -> Tensor:
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD_ID
    )


# ---------------------------------------------------------------- mistakes


def tf_not_shifted(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, tgt_out)  # the decoder reads the targets
    return _ce(logits, tgt_out)


def tf_no_bos(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = tgt_out[:, :-1]  # y_1 .. y_{T-1}
    logits = _logits(model, src, src_lengths, tgt_in)
    return _ce(logits, tgt_out[:, 1:])  # predict the next one


def tf_pad_first(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    start = torch.full_like(tgt_out[:, :1], PAD_ID)  # an empty token to start with
    tgt_in = torch.cat([start, tgt_out[:, :-1]], dim=1)
    return _ce(_logits(model, src, src_lengths, tgt_in), tgt_out)


def tf_own_argmax(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long)
    steps = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)  # (B, 1, V)
        steps.append(logits)
        prev = logits.argmax(-1)  # feed back what it said
    return _ce(torch.cat(steps, dim=1), tgt_out)


def tf_counts_padding(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))


def tf_zero_start(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    zeros = torch.zeros_like(state)  # the decoder starts fresh; c carries the source
    logits, _ = model.decoder(_shift(tgt_out), context, zeros)
    return _ce(logits, tgt_out)


def tf_last_column(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    outputs, _ = model.encoder(src, src_lengths)  # (B, S, D)
    context = outputs[:, -1]  # the state after the last token
    logits, _ = model.decoder(_shift(tgt_out), context, context.unsqueeze(0).contiguous())
    return _ce(logits, tgt_out)


def tf_item(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    loss = _ce(_logits(model, src, src_lengths, _shift(tgt_out)), tgt_out)
    return torch.tensor(loss.item())  # a clean number to log


def tf_shift_left(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    bos = torch.full_like(tgt_out[:, :1], BOS_ID)
    tgt_in = torch.cat([tgt_out[:, 1:], bos], dim=1)  # shifted, bos at the end
    return _ce(_logits(model, src, src_lengths, tgt_in), tgt_out)


def tf_sum_over_batch(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    V = logits.shape[-1]
    total = F.cross_entropy(
        logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID, reduction="sum"
    )
    return total / tgt_out.shape[0]  # loss per sentence


def tf_mean_per_sentence(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    nll = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    per_sentence = (nll * real).sum(1) / real.sum(1)
    return per_sentence.mean()  # every sentence counts the same


def tf_shift_in_place(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = tgt_out
    tgt_in[:, 1:] = tgt_out[:, :-1].clone()  # shift right
    tgt_in[:, 0] = BOS_ID
    return _ce(_logits(model, src, src_lengths, tgt_in), tgt_out)


# ---------------------------------------------------------------- correct variants


def tf_roll(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = tgt_out.roll(1, dims=1)  # a copy
    tgt_in[:, 0] = BOS_ID
    memory, final = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(final), final)
    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)


def tf_masked_nll(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0), value=BOS_ID)
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    logp = logits.log_softmax(dim=-1)
    nll = -logp.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out != PAD_ID
    return nll[real].mean()


def tf_new_full_and_nll_loss(
    model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor, label_smoothing: float = 0.0
) -> Tensor:
    B, T = tgt_out.shape
    tgt_in = tgt_out.new_full((B, T), PAD_ID)
    tgt_in[:, 0] = BOS_ID
    tgt_in[:, 1:] = tgt_out[:, :-1]
    encoder_outputs, encoder_state = model.encoder(src, src_lengths)
    context = last_hidden(encoder_state)
    logits, _ = model.decoder(tgt_in, context, encoder_state)
    return F.cross_entropy(
        logits.flatten(0, 1),
        tgt_out.flatten(),
        ignore_index=PAD_ID,
        label_smoothing=label_smoothing,
    )


CASES = [
    BlindCase(
        CHECK,
        "not_shifted",
        tf_not_shifted,
        "mistake",
        "I fed tgt_out itself to the decoder, so at each step it reads the token it must predict.",
    ),
    BlindCase(
        CHECK,
        "no_bos_drop_first",
        tf_no_bos,
        "mistake",
        "I fed y_1 .. y_{T-1} and predicted y_2 .. <eos>; no <bos>, and y_1 is never predicted.",
    ),
    BlindCase(
        CHECK,
        "pad_instead_of_bos",
        tf_pad_first,
        "mistake",
        "I shifted right but put PAD_ID in front instead of BOS_ID.",
    ),
    BlindCase(
        CHECK,
        "own_argmax_fed_back",
        tf_own_argmax,
        "mistake",
        "I ran the decoder one step at a time feeding back its own argmax, as at inference.",
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
        "I started the decoder from a zero state, passing the source only through c.",
    ),
    BlindCase(
        CHECK,
        "last_column_of_outputs",
        tf_last_column,
        "mistake",
        "I took c and the start state from outputs[:, -1], the encoder's last column.",
    ),
    BlindCase(
        CHECK,
        "loss_as_number",
        tf_item,
        "mistake",
        "I returned torch.tensor(loss.item()), a number cut off from the model.",
    ),
    BlindCase(
        CHECK,
        "shifted_left",
        tf_shift_left,
        "mistake",
        "I shifted the targets the wrong way: y_2 .. y_T then <bos>.",
    ),
    BlindCase(
        CHECK,
        "sum_divided_by_batch",
        tf_sum_over_batch,
        "mistake",
        "I summed the token losses and divided by the batch size (a loss per sentence).",
    ),
    BlindCase(
        CHECK,
        "mean_of_sentence_means",
        tf_mean_per_sentence,
        "mistake",
        "I averaged each sentence over its real tokens, then averaged the sentences.",
    ),
    BlindCase(
        CHECK,
        "shift_in_place",
        tf_shift_in_place,
        "mistake",
        "I shifted by writing into tgt_in = tgt_out, which is the same tensor, so the targets "
        "are shifted too.",
    ),
    BlindCase(
        CHECK,
        "roll_and_transpose",
        tf_roll,
        "correct",
        "tgt_out.roll(1) with <bos> written in column 0; cross_entropy on (B, V, T) logits.",
    ),
    BlindCase(
        CHECK,
        "gather_masked_mean",
        tf_masked_nll,
        "correct",
        "F.pad adds <bos>; log_softmax and gather, then the mean over the real tokens.",
    ),
    BlindCase(
        CHECK,
        "new_full_with_option",
        tf_new_full_and_nll_loss,
        "correct",
        "tgt_in built with new_full and slices; an extra label_smoothing=0.0 argument.",
    ),
]
