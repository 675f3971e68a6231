"""Blind cases for check_teacher_forcing_loss (chapter 4), written from the chapter's text only."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from transformer_tutorial.seq2seq import last_hidden
from transformer_tutorial.sequences import BOS_ID, EOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shift_right(tgt_out):
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=tgt_out.dtype, device=tgt_out.device)
    return torch.cat([bos, tgt_out[:, :-1]], dim=1)  # (B, T)


def _logits(model, src, src_lengths, tgt_in):
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return logits  # (B, T, V)


def _ce(logits, tgt_out, **kwargs):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), **kwargs)


def not_shifted(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, tgt_out)
    return _ce(logits, tgt_out, ignore_index=PAD_ID)


def dropped_first_token(model, src, src_lengths, tgt_out):
    tgt_in = tgt_out[:, :-1]  # y_1 .. y_{T-1}, no <bos>
    logits = _logits(model, src, src_lengths, tgt_in)
    return _ce(logits, tgt_out[:, 1:], ignore_index=PAD_ID)


def eos_instead_of_bos(model, src, src_lengths, tgt_out):
    first = torch.full((len(tgt_out), 1), EOS_ID, dtype=torch.long)
    tgt_in = torch.cat([first, tgt_out[:, :-1]], dim=1)
    logits = _logits(model, src, src_lengths, tgt_in)
    return _ce(logits, tgt_out, ignore_index=PAD_ID)


def padding_in_loss(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    return _ce(logits, tgt_out)


def decoder_from_zeros(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    logits, _ = model.decoder(_shift_right(tgt_out), context, torch.zeros_like(state))
    return _ce(logits, tgt_out, ignore_index=PAD_ID)


def context_from_last_column(model, src, src_lengths, tgt_out):
    outputs, state = model.encoder(src, src_lengths)
    context = outputs[:, -1]  # (B, D): the "last" encoder state
    logits, _ = model.decoder(_shift_right(tgt_out), context, state)
    return _ce(logits, tgt_out, ignore_index=PAD_ID)


def summed_not_averaged(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    return _ce(logits, tgt_out, ignore_index=PAD_ID, reduction="sum")


def mean_of_sentence_means(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    per_token = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    per_sentence = (per_token * real).sum(dim=1) / real.sum(dim=1)  # (B,)
    return per_sentence.mean()


def eos_not_counted(model, src, src_lengths, tgt_out):
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    per_token = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    words = (tgt_out != PAD_ID) & (tgt_out != EOS_ID)  # only the real words
    return per_token[words].mean()


def feeds_own_argmax(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full((len(tgt_out), 1), BOS_ID, dtype=torch.long)
    all_logits = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)  # (B, 1, V)
        all_logits.append(logits)
        prev = logits.argmax(dim=-1)  # (B, 1)
    return _ce(torch.cat(all_logits, dim=1), tgt_out, ignore_index=PAD_ID)


def encoder_without_grad(model, src, src_lengths, tgt_out):
    with torch.no_grad():  # only the decoder is taught by the targets
        _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift_right(tgt_out), last_hidden(state), state)
    return _ce(logits, tgt_out, ignore_index=PAD_ID)


def cross_entropy_on_class_axis(model, src, src_lengths, tgt_out):
    bos = torch.full_like(tgt_out[:, :1], BOS_ID)
    tgt_in = torch.cat((bos, tgt_out[:, :-1]), dim=1)
    outputs, final = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(final), final)
    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)


def roll_and_gather(model, src, src_lengths, tgt_out):
    tgt_in = tgt_out.roll(1, dims=1)
    tgt_in[:, 0] = BOS_ID
    logits = _logits(model, src, src_lengths, tgt_in)
    log_probs = logits.log_softmax(dim=-1)  # (B, T, V)
    nll = -log_probs.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out.ne(PAD_ID)
    return (nll * real).sum() / real.sum()


def with_model_start(model, src, src_lengths, tgt_out, pad_id=PAD_ID):
    start = model.start(src, src_lengths)  # c = s_S and s'_0 = s_S
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0), value=BOS_ID)
    logits, _ = model.decoder(tgt_in, start.context, start.hidden)
    mask = tgt_out != pad_id
    return F.cross_entropy(logits[mask], tgt_out[mask])


CASES = [
    BlindCase(
        CHECK,
        "not_shifted",
        not_shifted,
        "mistake",
        "I fed tgt_out itself to the decoder, not shifted, so it sees the token it must predict",
    ),
    BlindCase(
        CHECK,
        "dropped_first_token",
        dropped_first_token,
        "mistake",
        "instead of putting <bos> first I fed y_1 .. y_{T-1} and predicted tgt_out[:, 1:], so "
        "there is no <bos> and y_1 is never predicted",
    ),
    BlindCase(
        CHECK,
        "eos_instead_of_bos",
        eos_instead_of_bos,
        "mistake",
        "I put EOS_ID instead of BOS_ID in front of the shifted targets",
    ),
    BlindCase(
        CHECK,
        "padding_in_loss",
        padding_in_loss,
        "mistake",
        "I forgot ignore_index=PAD_ID, so the padded positions count in the loss",
    ),
    BlindCase(
        CHECK,
        "decoder_from_zeros",
        decoder_from_zeros,
        "mistake",
        "I started the decoder from a zero state instead of the encoder's final state",
    ),
    BlindCase(
        CHECK,
        "context_from_last_column",
        context_from_last_column,
        "mistake",
        "I took the context c from outputs[:, -1], the encoder's last column (padding for a "
        "short source), instead of last_hidden(state)",
    ),
    BlindCase(
        CHECK,
        "summed_not_averaged",
        summed_not_averaged,
        "mistake",
        "I used reduction='sum', so the loss is the total over the real tokens, not the mean",
    ),
    BlindCase(
        CHECK,
        "mean_of_sentence_means",
        mean_of_sentence_means,
        "mistake",
        "I averaged each sentence's loss over its own tokens, then averaged the sentences "
        "(short targets weigh more than in the mean over all real tokens)",
    ),
    BlindCase(
        CHECK,
        "eos_not_counted",
        eos_not_counted,
        "mistake",
        "I left the <eos> positions out of the loss as well as the padding",
    ),
    BlindCase(
        CHECK,
        "feeds_own_argmax",
        feeds_own_argmax,
        "mistake",
        "I ran the decoder step by step and fed back its own argmax instead of the true tokens",
    ),
    BlindCase(
        CHECK,
        "encoder_without_grad",
        encoder_without_grad,
        "mistake",
        "I ran the encoder under torch.no_grad(), so no gradient reaches the encoder",
    ),
    BlindCase(
        CHECK,
        "cross_entropy_on_class_axis",
        cross_entropy_on_class_axis,
        "correct",
        "I called cross_entropy on logits.transpose(1, 2), (B, V, T), instead of flattening",
    ),
    BlindCase(
        CHECK,
        "roll_and_gather",
        roll_and_gather,
        "correct",
        "shifted with roll and set column 0 to BOS; log_softmax, gather and a masked mean",
    ),
    BlindCase(
        CHECK,
        "with_model_start",
        with_model_start,
        "correct",
        "I used model.start for c and s'_0, F.pad to put <bos> in front, and indexed the "
        "logits with the mask of real tokens; pad_id is an extra argument",
    ),
]
