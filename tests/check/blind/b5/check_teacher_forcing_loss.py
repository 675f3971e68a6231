"""Chapter 4, "Your turn": ``teacher_forcing_loss(model, src, src_lengths, tgt_out) -> scalar``.

Encode, shift the targets right behind ``<bos>``, run the decoder from the encoder's final state
with ``c = last_hidden(state)``, and average the cross-entropy over the real target tokens.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import Seq2Seq, last_hidden
from transformer_tutorial.sequences import BOS_ID, EOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shifted(tgt_out: Tensor) -> Tensor:
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=tgt_out.dtype, device=tgt_out.device)
    return torch.cat([bos, tgt_out[:, :-1]], dim=1)  # (B, T)


def _logits(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return logits  # (B, T, V)


# --- mistakes ---------------------------------------------------------------------------------


def summed_over_tokens_per_sentence(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))
    V = logits.shape[-1]
    total = F.cross_entropy(
        logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID, reduction="sum"
    )
    return total / tgt_out.shape[0]  # loss per sentence: divided by B


def mean_of_sentence_means(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))
    per_token = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    per_sentence = (per_token * real).sum(dim=1) / real.sum(dim=1)  # (B,)
    return per_sentence.mean()  # every sentence counts the same, whatever its length


def context_is_mean_of_encoder_states(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)  # (B, S, D)
    context = outputs.mean(dim=1)  # an average of all source states as c
    logits, _ = model.decoder(_shifted(tgt_out), context, state)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def context_indexed_at_length(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)
    rows = torch.arange(src.shape[0])
    context = outputs[rows, src_lengths.clamp(max=src.shape[1] - 1)]  # should be lengths - 1
    logits, _ = model.decoder(_shifted(tgt_out), context, state)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def bos_written_over_first_token(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    tgt_in = tgt_out.clone()
    tgt_in[:, 0] = BOS_ID  # <bos> put in place of y_1 rather than in front of it
    logits = _logits(model, src, src_lengths, tgt_in)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def loss_against_decoder_inputs(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    tgt_in = _shifted(tgt_out)
    logits = _logits(model, src, src_lengths, tgt_in)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_in.reshape(-1), ignore_index=PAD_ID)


def masked_but_divided_by_all_cells(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))
    per_token = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    return (per_token * (tgt_out != PAD_ID)).mean()  # the mean over B * T cells


def eos_not_counted(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))
    per_token = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")
    real = (tgt_out != PAD_ID) & (tgt_out != EOS_ID)  # <eos> is not a word, so I left it out
    return per_token[real].mean()


def encoder_state_detached(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    state = state.detach()  # keep the decoder's graph from reaching into the encoder
    logits, _ = model.decoder(_shifted(tgt_out), last_hidden(state), state)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def softmax_before_cross_entropy(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))
    probs = logits.softmax(dim=-1)  # probabilities first, then the cross-entropy
    V = probs.shape[-1]
    return F.cross_entropy(probs.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def logits_not_moved_to_dim_1(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    logits = _logits(model, src, src_lengths, _shifted(tgt_out))  # (B, T, V)
    return F.cross_entropy(logits, tgt_out, ignore_index=PAD_ID)  # wants (B, V, T)


# --- correct variants -------------------------------------------------------------------------


def from_the_parts(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    bos = torch.full_like(tgt_out[:, :1], BOS_ID)
    tgt_in = torch.cat([bos, tgt_out[:, :-1]], dim=1)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID)


def gathered_log_probs(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = tgt_out.roll(1, dims=1)  # shift right; the wrapped-around last token is replaced
    tgt_in[:, 0] = BOS_ID
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    log_probs = logits.log_softmax(dim=-1)  # (B, T, V)
    picked = log_probs.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out != PAD_ID
    return -(picked * real).sum() / real.sum()


def nll_on_real_positions(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    h = state[0] if isinstance(state, tuple) else state  # an LSTM's state is (h, cell)
    context = h[-1]  # (B, D): the last layer of the final state
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0), value=BOS_ID)
    logits, _ = model.decoder(tgt_in, context, state)
    real = tgt_out != PAD_ID
    return F.nll_loss(F.log_softmax(logits[real], dim=-1), tgt_out[real])


CASES = [
    BlindCase(
        CHECK,
        "summed_over_tokens_per_sentence",
        summed_over_tokens_per_sentence,
        "mistake",
        "I summed the token losses and divided by the batch size, a loss per sentence instead of "
        "per token.",
    ),
    BlindCase(
        CHECK,
        "mean_of_sentence_means",
        mean_of_sentence_means,
        "mistake",
        "I averaged each sentence's tokens first and then averaged the sentences, so short "
        "sentences weigh as much as long ones.",
    ),
    BlindCase(
        CHECK,
        "context_is_mean_of_encoder_states",
        context_is_mean_of_encoder_states,
        "mistake",
        "I used the mean of all encoder outputs (padding zeros included) as the context c instead "
        "of last_hidden(state).",
    ),
    BlindCase(
        CHECK,
        "context_indexed_at_length",
        context_indexed_at_length,
        "mistake",
        "I picked the context from the encoder outputs at index src_lengths instead of "
        "src_lengths - 1 (clamped so it does not crash).",
    ),
    BlindCase(
        CHECK,
        "bos_written_over_first_token",
        bos_written_over_first_token,
        "mistake",
        "I made tgt_in by overwriting the first column of tgt_out with <bos> instead of shifting "
        "the targets right.",
    ),
    BlindCase(
        CHECK,
        "loss_against_decoder_inputs",
        loss_against_decoder_inputs,
        "mistake",
        "I computed the cross-entropy against tgt_in (the shifted inputs) instead of tgt_out.",
    ),
    BlindCase(
        CHECK,
        "masked_but_divided_by_all_cells",
        masked_but_divided_by_all_cells,
        "mistake",
        "I zeroed the padding's losses with the mask but then took .mean() over all B*T cells.",
    ),
    BlindCase(
        CHECK,
        "eos_not_counted",
        eos_not_counted,
        "mistake",
        "I left the <eos> positions out of the loss along with the padding.",
    ),
    BlindCase(
        CHECK,
        "encoder_state_detached",
        encoder_state_detached,
        "mistake",
        "I detached the encoder's final state before the decoder, so no gradient reaches the "
        "encoder.",
    ),
    BlindCase(
        CHECK,
        "softmax_before_cross_entropy",
        softmax_before_cross_entropy,
        "mistake",
        "I passed softmax probabilities to F.cross_entropy, which applies its own log-softmax.",
    ),
    BlindCase(
        CHECK,
        "logits_not_moved_to_dim_1",
        logits_not_moved_to_dim_1,
        "mistake",
        "I passed the (B, T, V) logits straight to F.cross_entropy, which wants the classes on "
        "dim 1.",
    ),
    BlindCase(
        CHECK,
        "from_the_parts",
        from_the_parts,
        "correct",
        "I built <bos> with full_like, encoded, decoded from the final state and used "
        "cross_entropy with ignore_index.",
    ),
    BlindCase(
        CHECK,
        "gathered_log_probs",
        gathered_log_probs,
        "correct",
        "I shifted with roll and overwrote column 0 with <bos>, then gathered log-probabilities "
        "and averaged them over the real tokens by hand.",
    ),
    BlindCase(
        CHECK,
        "nll_on_real_positions",
        nll_on_real_positions,
        "correct",
        "I shifted with F.pad, took state[-1] as the context, and used nll_loss on the real "
        "positions selected by a boolean index.",
    ),
]
