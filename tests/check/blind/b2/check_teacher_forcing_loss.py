"""Blind cases for check_teacher_forcing_loss (chapter 4), written from the chapter's text only."""

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


def _ce(logits: Tensor, target: Tensor, **kw) -> Tensor:
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1), **kw)


# ---- mistakes -------------------------------------------------------------------------------


def not_shifted(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_out, last_hidden(state), state)  # fed the answers themselves
    return _ce(logits, tgt_out, ignore_index=PAD_ID)


def no_bos(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_out[:, :-1], last_hidden(state), state)
    return _ce(logits, tgt_out[:, 1:], ignore_index=PAD_ID)


def padding_counted(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    return _ce(logits, tgt_out)


def decoder_from_zeros(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    zeros = (
        tuple(map(torch.zeros_like, state)) if isinstance(state, tuple) else torch.zeros_like(state)
    )
    logits, _ = model.decoder(_shift(tgt_out), context, zeros)
    return _ce(logits, tgt_out, ignore_index=PAD_ID)


def context_from_last_column(model, src, src_lengths, tgt_out):
    outputs, _ = model.encoder(src, src_lengths)
    last = outputs[:, -1]  # (B, D): the last column of the outputs
    logits, _ = model.decoder(_shift(tgt_out), last, last.unsqueeze(0).contiguous())
    return _ce(logits, tgt_out, ignore_index=PAD_ID)


def detached_loss(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    loss = _ce(logits, tgt_out, ignore_index=PAD_ID)
    return torch.tensor(loss.item())  # a clean float tensor to return


def mean_over_sentences(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    per_token = F.cross_entropy(
        logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID, reduction="none"
    )
    real = (tgt_out != PAD_ID).float()
    per_sentence = (per_token * real).sum(dim=1) / real.sum(dim=1)
    return per_sentence.mean()


def own_predictions_fed_back(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long)
    steps = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)  # (B, 1, V)
        steps.append(logits)
        prev = logits.argmax(dim=-1)  # what the model itself said
    return _ce(torch.cat(steps, dim=1), tgt_out, ignore_index=PAD_ID)


def sum_over_tokens(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    return _ce(logits, tgt_out, ignore_index=PAD_ID, reduction="sum")


# ---- reader's slip ------------------------------------------------------------------------------


def returns_loss_and_logits(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    return _ce(logits, tgt_out, ignore_index=PAD_ID), logits


# ---- correct variants ---------------------------------------------------------------------------


def explicit_parts(model, src, src_lengths, tgt_out):
    memory, final = model.encoder(src, src_lengths)
    c = last_hidden(final)
    tgt_in = torch.cat([torch.full_like(tgt_out[:, :1], BOS_ID), tgt_out[:, :-1]], dim=1)
    logits, _ = model.decoder(tgt_in, c, final)
    V = logits.size(-1)
    return F.cross_entropy(logits.view(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def gather_and_mask(model, src, src_lengths, tgt_out):
    _, state = model.encoder(src, src_lengths)
    tgt_in = tgt_out.roll(1, dims=1)  # the last column wraps to the front ...
    tgt_in[:, 0] = BOS_ID  # ... and is overwritten by <bos>
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    log_probs = logits.log_softmax(dim=-1)
    nll = -log_probs.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out.ne(PAD_ID)
    return nll.masked_select(real).mean()


def weighted_with_ignore_argument(model, src, src_lengths, tgt_out, pad_id: int = PAD_ID):
    _, state = model.encoder(src, src_lengths)
    B, T = tgt_out.shape
    tgt_in = tgt_out.new_full((B, T), BOS_ID)
    tgt_in[:, 1:] = tgt_out[:, :-1]
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    per_token = F.cross_entropy(logits.permute(0, 2, 1), tgt_out, reduction="none")  # (B, T)
    weight = (tgt_out != pad_id).to(per_token.dtype)
    return (per_token * weight).sum() / weight.sum()


CASES = [
    BlindCase(
        CHECK,
        "not_shifted",
        not_shifted,
        "mistake",
        "I fed tgt_out itself to the decoder, so it sees the token it must predict",
    ),
    BlindCase(
        CHECK,
        "no_bos",
        no_bos,
        "mistake",
        "I fed tgt_out[:, :-1] and predicted tgt_out[:, 1:], with no <bos> at the start",
    ),
    BlindCase(
        CHECK,
        "padding_counted",
        padding_counted,
        "mistake",
        "I called cross_entropy without ignore_index, so the padding is counted in the mean",
    ),
    BlindCase(
        CHECK,
        "decoder_from_zeros",
        decoder_from_zeros,
        "mistake",
        "I started the decoder from a zero state and passed the encoder state only as the context",
    ),
    BlindCase(
        CHECK,
        "context_from_last_column",
        context_from_last_column,
        "mistake",
        "I took outputs[:, -1] of the encoder as c and as the start state, which is padding for short sources",
    ),
    BlindCase(
        CHECK,
        "detached_loss",
        detached_loss,
        "mistake",
        "I returned torch.tensor(loss.item()), which cuts the loss from the model",
    ),
    BlindCase(
        CHECK,
        "mean_over_sentences",
        mean_over_sentences,
        "mistake",
        "I averaged each sentence's tokens first and then averaged the sentences",
    ),
    BlindCase(
        CHECK,
        "own_predictions_fed_back",
        own_predictions_fed_back,
        "mistake",
        "I ran the decoder step by step and fed back its own argmax instead of the true previous token",
    ),
    BlindCase(
        CHECK,
        "sum_over_tokens",
        sum_over_tokens,
        "mistake",
        "I used reduction='sum', so the loss is the total over real tokens instead of their mean",
    ),
    BlindCase(
        CHECK,
        "returns_loss_and_logits",
        returns_loss_and_logits,
        "mistake",
        "I returned the pair (loss, logits) instead of the loss alone",
    ),
    BlindCase(
        CHECK,
        "explicit_parts",
        explicit_parts,
        "correct",
        "I built <bos> with full_like and flattened with view, calling the parts by hand",
    ),
    BlindCase(
        CHECK,
        "gather_and_mask",
        gather_and_mask,
        "correct",
        "I shifted with roll and overwrote column 0 with <bos>, then averaged the gathered -log p over the real tokens",
    ),
    BlindCase(
        CHECK,
        "weighted_with_ignore_argument",
        weighted_with_ignore_argument,
        "correct",
        "I computed per-token losses and divided their weighted sum by the number of real tokens, with an optional pad_id argument",
    ),
]
