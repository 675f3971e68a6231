"""Blind set B10, check_teacher_forcing_loss (chapter 4): one teacher-forced loss, as readers
write it from the parts of ``Seq2Seq``."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import Seq2Seq, last_hidden
from transformer_tutorial.sequences import BOS_ID, EOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shift_right(tgt_out: Tensor, bos: int = BOS_ID) -> Tensor:
    """``<bos> y_1 .. y_{T-1}``: the right decoder inputs, shared by the mistakes made elsewhere."""
    first = torch.full((tgt_out.shape[0], 1), bos, dtype=tgt_out.dtype, device=tgt_out.device)
    return torch.cat([first, tgt_out[:, :-1]], dim=1)


def _run(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> Tensor:
    """Encoder, then decoder from the final state with c = s_S: logits (B, T, V)."""
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return logits


def _ce(logits: Tensor, tgt_out: Tensor) -> Tensor:
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD_ID
    )


# ---------------------------------------------------------------- mistakes


def tf_not_shifted(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_out, last_hidden(state), state)  # the targets are the inputs
    return _ce(logits, tgt_out)


def tf_language_model_shift(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    tgt_in, targets = tgt_out[:, :-1], tgt_out[:, 1:]  # as in chapter 2's character model
    return _ce(_run(model, src, src_lengths, tgt_in), targets)


def tf_argmax_fed_back(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long)
    steps = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)  # (B, 1, V)
        steps.append(logits)
        prev = logits.argmax(dim=-1)  # the model's own guess goes in next
    return _ce(torch.cat(steps, dim=1), tgt_out)


def tf_padding_counted(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _run(model, src, src_lengths, _shift_right(tgt_out))
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))


def tf_decoder_from_zeros(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, enc_state = model.encoder(src, src_lengths)
    context = last_hidden(enc_state)
    if isinstance(enc_state, tuple):
        state = tuple(torch.zeros_like(s) for s in enc_state)
    else:
        state = torch.zeros_like(enc_state)  # a fresh decoder, s'_0 = 0
    logits, _ = model.decoder(_shift_right(tgt_out), context, state)
    return _ce(logits, tgt_out)


def tf_last_output_column(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)
    last = outputs[:, -1]  # (B, D): the encoder's last step
    if isinstance(state, tuple):
        state = (last.unsqueeze(0).contiguous(), state[1])
    else:
        state = last.unsqueeze(0).contiguous()
    logits, _ = model.decoder(_shift_right(tgt_out), last, state)
    return _ce(logits, tgt_out)


def tf_loss_as_float(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _run(model, src, src_lengths, _shift_right(tgt_out))
    loss = _ce(logits, tgt_out)
    return torch.tensor(loss.item())  # a clean scalar to print


def tf_bos_is_one(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = _shift_right(tgt_out, bos=1)  # "0 is padding, 1 is <bos>, 2 is <eos>"
    return _ce(_run(model, src, src_lengths, tgt_in), tgt_out)


def tf_sum_over_tokens(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _run(model, src, src_lengths, _shift_right(tgt_out))
    V = logits.shape[-1]
    return F.cross_entropy(
        logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID, reduction="sum"
    )


def tf_mean_per_sentence(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    logits = _run(model, src, src_lengths, _shift_right(tgt_out))
    nll = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    per_sentence = (nll * real).sum(dim=1) / real.sum(dim=1)  # each sentence's mean
    return per_sentence.mean()


def tf_softmax_then_cross_entropy(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    logits = _run(model, src, src_lengths, _shift_right(tgt_out))
    probs = torch.softmax(logits, dim=-1)  # probabilities of the next token
    return F.cross_entropy(
        probs.reshape(-1, probs.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD_ID
    )


def tf_lengths_ignored(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    full = torch.full_like(src_lengths, src.shape[1])  # every source as long as the batch
    return _ce(_run(model, src, full, _shift_right(tgt_out)), tgt_out)


# ---------------------------------------------------------------- correct variants


def tf_transpose_for_cross_entropy(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    B = tgt_out.size(0)
    bos = tgt_out.new_full((B, 1), BOS_ID)
    tgt_in = torch.cat((bos, tgt_out[:, :-1]), dim=1)
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)  # (B, T, V)
    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)  # (B, V, T)


def tf_masked_log_softmax(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    tgt_in = tgt_out.roll(1, dims=1)
    tgt_in[:, 0] = BOS_ID  # roll moved the last column to the front; overwrite it
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    log_probs = torch.log_softmax(logits, dim=-1)
    picked = log_probs.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out != PAD_ID
    return -(picked * real).sum() / real.sum()


def tf_make_batch_inputs(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    """Decoder inputs exactly as make_batch builds them (the <eos> turned into padding), and
    model.start for the encoder."""
    shifted = tgt_out[:, :-1].masked_fill(tgt_out[:, :-1] == EOS_ID, PAD_ID)
    tgt_in = torch.cat([torch.full_like(tgt_out[:, :1], BOS_ID), shifted], dim=1)
    start = model.start(src, src_lengths)
    logits, _ = model.decoder(tgt_in, start.context, start.hidden)
    real = tgt_out.ne(PAD_ID)
    return F.cross_entropy(logits[real], tgt_out[real])


def tf_forward_and_nll(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0), value=BOS_ID)
    logits = model(src, src_lengths, tgt_in)  # Seq2Seq.forward does encoder + decoder
    log_probs = F.log_softmax(logits, dim=-1).flatten(0, 1)
    return F.nll_loss(log_probs, tgt_out.flatten(), ignore_index=PAD_ID)


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
        "language_model_shift",
        tf_language_model_shift,
        "mistake",
        "I shifted as in chapter 2: inputs tgt_out[:, :-1], targets tgt_out[:, 1:], no <bos>.",
    ),
    BlindCase(
        CHECK,
        "argmax_fed_back",
        tf_argmax_fed_back,
        "mistake",
        "I looped over the steps and fed the decoder its own argmax, starting from <bos>.",
    ),
    BlindCase(
        CHECK,
        "padding_counted",
        tf_padding_counted,
        "mistake",
        "I called F.cross_entropy without ignore_index, so padded targets count in the mean.",
    ),
    BlindCase(
        CHECK,
        "decoder_from_zeros",
        tf_decoder_from_zeros,
        "mistake",
        "I started the decoder from a zero state (c is still the encoder's last state).",
    ),
    BlindCase(
        CHECK,
        "last_output_column",
        tf_last_output_column,
        "mistake",
        "I took outputs[:, -1] of the encoder as c and as the first state; for a short "
        "source that column is padding.",
    ),
    BlindCase(
        CHECK,
        "loss_item_tensor",
        tf_loss_as_float,
        "mistake",
        "I returned torch.tensor(loss.item()), which has no graph back to the model.",
    ),
    BlindCase(
        CHECK,
        "bos_hard_coded_1",
        tf_bos_is_one,
        "mistake",
        "I hard-coded <bos> as id 1, as the chapter's prose lists it, instead of using BOS_ID.",
    ),
    BlindCase(
        CHECK,
        "sum_not_mean",
        tf_sum_over_tokens,
        "mistake",
        "I used reduction='sum', so the loss is the total over the real tokens, not the mean.",
    ),
    BlindCase(
        CHECK,
        "mean_per_sentence",
        tf_mean_per_sentence,
        "mistake",
        "I averaged each sentence over its real tokens and then averaged the sentences, so "
        "short sentences weigh more.",
    ),
    BlindCase(
        CHECK,
        "softmax_then_cross_entropy",
        tf_softmax_then_cross_entropy,
        "mistake",
        "I applied softmax to the logits before F.cross_entropy, which applies it again.",
    ),
    BlindCase(
        CHECK,
        "source_lengths_ignored",
        tf_lengths_ignored,
        "mistake",
        "I gave the encoder the padded width as every source length, so it runs over padding.",
    ),
    BlindCase(
        CHECK,
        "transpose_for_cross_entropy",
        tf_transpose_for_cross_entropy,
        "correct",
        "F.cross_entropy on logits.transpose(1, 2), shape (B, V, T), instead of flattening.",
    ),
    BlindCase(
        CHECK,
        "roll_and_masked_log_softmax",
        tf_masked_log_softmax,
        "correct",
        "Inputs by roll with column 0 set to <bos>; loss from log_softmax, gather and a masked "
        "mean.",
    ),
    BlindCase(
        CHECK,
        "make_batch_inputs_and_start",
        tf_make_batch_inputs,
        "correct",
        "The decoder inputs with <eos> replaced by padding, as make_batch has them; model.start "
        "for the encoder; cross-entropy on the real positions picked with a boolean index.",
    ),
    BlindCase(
        CHECK,
        "forward_and_nll_loss",
        tf_forward_and_nll,
        "correct",
        "F.pad to put <bos> in front, Seq2Seq.forward for the logits, log_softmax with F.nll_loss.",
    ),
]
