"""Blind set B21, check_teacher_forcing_loss (chapter 4): the loss of one teacher-forced step."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import Seq2Seq, last_hidden
from transformer_tutorial.sequences import BOS_ID, EOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shift(tgt_out: Tensor) -> Tensor:
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=tgt_out.dtype, device=tgt_out.device)
    return torch.cat([bos, tgt_out[:, :-1]], dim=1)  # (B, T)


def _ce(logits: Tensor, tgt_out: Tensor) -> Tensor:
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def _zeros_like_state(state):
    if isinstance(state, tuple):
        return tuple(torch.zeros_like(s) for s in state)
    return torch.zeros_like(state)


# ---------------------------------------------------------------- mistakes


def tf_not_shifted(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_out, last_hidden(state), state)  # the targets as inputs
    return _ce(logits, tgt_out)


def tf_pad_first(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0), value=PAD_ID)  # shifted right, a pad in front
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return _ce(logits, tgt_out)


def tf_shifted_left(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    tgt_in = F.pad(tgt_out[:, 1:], (0, 1), value=PAD_ID)  # shift by one position
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return _ce(logits, tgt_out)


def tf_feeds_argmax(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full((src.shape[0], 1), BOS_ID, dtype=torch.long)
    all_logits = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)  # (B, 1, V)
        all_logits.append(logits)
        prev = logits.argmax(dim=-1)  # what the model said comes next
    return _ce(torch.cat(all_logits, dim=1), tgt_out)


def tf_counts_padding(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1))


def tf_decoder_from_zeros(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), _zeros_like_state(state))
    return _ce(logits, tgt_out)


def tf_last_output_column(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)
    context = outputs[:, -1]  # (B, D): the encoder's last state
    logits, _ = model.decoder(_shift(tgt_out), context, state)
    return _ce(logits, tgt_out)


def tf_loss_as_number(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    return torch.tensor(_ce(logits, tgt_out).item())


def tf_mean_per_sentence(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    V = logits.shape[-1]
    total = F.cross_entropy(
        logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID, reduction="sum"
    )
    return total / tgt_out.shape[0]  # loss per sentence


def tf_divides_by_all_positions(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    losses = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = tgt_out != PAD_ID
    return (losses * real).sum() / real.numel()


def tf_eos_first(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    start = torch.full((tgt_out.shape[0], 1), EOS_ID, dtype=torch.long)  # <eos> as the start
    tgt_in = torch.cat([start, tgt_out[:, :-1]], dim=1)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return _ce(logits, tgt_out)


def tf_context_mean_of_outputs(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)
    context = outputs.mean(dim=1)  # (B, D): a summary of all the encoder states
    logits, _ = model.decoder(_shift(tgt_out), context, state)
    return _ce(logits, tgt_out)


# ---------------------------------------------------------------- correct variants


def tf_roll(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, final = model.encoder(src, src_lengths)
    tgt_in = tgt_out.roll(1, dims=1)
    tgt_in[:, 0] = BOS_ID
    logits, _ = model.decoder(tgt_in, last_hidden(final), final)
    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)


def tf_masked_mean(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    tgt_in = torch.cat([torch.full_like(tgt_out[:, :1], BOS_ID), tgt_out[:, :-1]], dim=1)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)  # (B, T, V)
    log_probs = logits.log_softmax(dim=-1)
    nll = -log_probs.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = (tgt_out != PAD_ID).float()
    return (nll * real).sum() / real.sum()


def tf_make_batch_inputs(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    # the decoder inputs as make_batch builds them: <bos> y_1 .. y_n, then padding (no <eos>)
    tgt_in = _shift(tgt_out)
    tgt_in = tgt_in.masked_fill(tgt_in == EOS_ID, PAD_ID)
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    real = tgt_out != PAD_ID
    return F.cross_entropy(logits[real], tgt_out[real])


def tf_via_start(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    start = model.start(src, src_lengths)  # context = last_hidden(s_S), hidden = s_S
    logits, _ = model.decoder(_shift(tgt_out), start.context, start.hidden)
    return F.nll_loss(
        F.log_softmax(logits, -1).flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID
    )


CASES = [
    BlindCase(
        CHECK,
        "not_shifted",
        tf_not_shifted,
        "mistake",
        "I fed tgt_out itself to the decoder, so each step sees the token it must predict.",
    ),
    BlindCase(
        CHECK,
        "pad_first_not_bos",
        tf_pad_first,
        "mistake",
        "I shifted right with F.pad, which put PAD_ID in front instead of <bos>.",
    ),
    BlindCase(
        CHECK,
        "shifted_left",
        tf_shifted_left,
        "mistake",
        "I shifted the targets the wrong way (tgt_out[:, 1:] then a pad), so the decoder sees "
        "the token after the one it must predict.",
    ),
    BlindCase(
        CHECK,
        "feeds_argmax",
        tf_feeds_argmax,
        "mistake",
        "I looped over the steps and fed back the model's argmax instead of the true tokens.",
    ),
    BlindCase(
        CHECK,
        "counts_padding",
        tf_counts_padding,
        "mistake",
        "I forgot ignore_index=PAD_ID, so padded positions count in the mean.",
    ),
    BlindCase(
        CHECK,
        "decoder_from_zeros",
        tf_decoder_from_zeros,
        "mistake",
        "I gave the decoder a zero initial state; only the context carries the source.",
    ),
    BlindCase(
        CHECK,
        "context_last_output_column",
        tf_last_output_column,
        "mistake",
        "I took the context as outputs[:, -1], the last column of the encoder's outputs.",
    ),
    BlindCase(
        CHECK,
        "loss_as_number",
        tf_loss_as_number,
        "mistake",
        "I returned torch.tensor(loss.item()), which has no gradient.",
    ),
    BlindCase(
        CHECK,
        "sum_over_batch_size",
        tf_mean_per_sentence,
        "mistake",
        "I summed the token losses and divided by the number of sentences B.",
    ),
    BlindCase(
        CHECK,
        "divides_by_all_positions",
        tf_divides_by_all_positions,
        "mistake",
        "I masked the padding out of the sum but divided by B * T, all positions.",
    ),
    BlindCase(
        CHECK,
        "eos_as_start",
        tf_eos_first,
        "mistake",
        "I used <eos> as the start token of the decoder's inputs.",
    ),
    BlindCase(
        CHECK,
        "context_mean_of_outputs",
        tf_context_mean_of_outputs,
        "mistake",
        "I made the context the mean of all encoder outputs instead of the final state.",
    ),
    BlindCase(
        CHECK,
        "roll_and_transpose",
        tf_roll,
        "correct",
        "tgt_out.roll(1) with column 0 set to BOS_ID; cross_entropy on logits.transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "gather_masked_mean",
        tf_masked_mean,
        "correct",
        "log_softmax and gather, then a masked mean over the real tokens.",
    ),
    BlindCase(
        CHECK,
        "make_batch_inputs_boolean_index",
        tf_make_batch_inputs,
        "correct",
        "Decoder inputs as make_batch builds them (<eos> replaced by padding); the loss on "
        "logits[real] only.",
    ),
    BlindCase(
        CHECK,
        "via_model_start",
        tf_via_start,
        "correct",
        "model.start for the context and state, nll_loss of log_softmax.",
    ),
]
