"""Blind set B23, check_teacher_forcing_loss (chapter 4): one teacher-forced loss, by readers."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import last_hidden
from transformer_tutorial.sequences import BOS_ID, EOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shift(tgt_out: Tensor, start: int = BOS_ID) -> Tensor:
    bos = torch.full((tgt_out.shape[0], 1), start, dtype=tgt_out.dtype, device=tgt_out.device)
    return torch.cat([bos, tgt_out[:, :-1]], dim=1)  # (B, T)


def _loss(logits: Tensor, tgt_out: Tensor) -> Tensor:
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


# ---------------------------------------------------------------- mistakes


def tf_not_shifted(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_out, last_hidden(state), state)  # the targets are the inputs
    return _loss(logits, tgt_out)


def tf_shift_left_no_bos(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    tgt_in = tgt_out[:, :-1]  # y_1 .. y_{T-1} as inputs
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return _loss(logits, tgt_out[:, 1:])  # predict the next one


def tf_bos_replaces_first(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    bos = torch.full((len(tgt_out), 1), BOS_ID)
    tgt_in = torch.cat([bos, tgt_out[:, 1:]], dim=1)  # <bos> and then the rest
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return _loss(logits, tgt_out)


def tf_eos_as_start(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out, EOS_ID), last_hidden(state), state)  # start token
    return _loss(logits, tgt_out)


def tf_greedy_inputs(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full((len(tgt_out),), BOS_ID)
    all_logits = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev[:, None], context, state)  # (B, 1, V)
        all_logits.append(logits)
        prev = logits[:, 0].argmax(-1)  # feed the prediction to the next step
    return _loss(torch.cat(all_logits, dim=1), tgt_out)


def tf_counts_padding(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1))


def tf_mask_from_inputs(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    tgt_in = _shift(tgt_out)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    nll = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = tgt_in != PAD_ID  # the real tokens of the batch
    return (nll * real).sum() / real.sum()


def tf_zero_start(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    if isinstance(state, tuple):
        start = tuple(torch.zeros_like(s) for s in state)
    else:
        start = torch.zeros_like(state)  # s'_0 = 0, as for any RNN
    logits, _ = model.decoder(_shift(tgt_out), context, start)
    return _loss(logits, tgt_out)


def tf_last_output_column(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)
    context = outputs[:, -1]  # (B, D): the state after the last source token
    logits, _ = model.decoder(_shift(tgt_out), context, state)
    return _loss(logits, tgt_out)


def tf_ignores_src_lengths(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    full = torch.full_like(src_lengths, src.shape[1])  # the batch is padded to S anyway
    _, state = model.encoder(src, full)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    return _loss(logits, tgt_out)


def tf_mean_of_sentence_means(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    nll = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    per_sentence = (nll * real).sum(1) / real.sum(1)  # mean over each sentence
    return per_sentence.mean()


def tf_sum_reduction(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
    V = logits.shape[-1]
    return F.cross_entropy(
        logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID, reduction="sum"
    )


def tf_under_no_grad(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    with torch.no_grad():  # computing a loss needs no graph
        _, state = model.encoder(src, src_lengths)
        logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), state)
        return _loss(logits, tgt_out)


# ---------------------------------------------------------------- correct variants


def tf_model_forward(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0), value=BOS_ID)  # <bos> y_1 .. y_{T-1}
    logits = model(src, src_lengths, tgt_in)  # (B, T, V)
    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)


def tf_step_loop(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full((tgt_out.shape[0],), BOS_ID, dtype=torch.long, device=tgt_out.device)
    total, count = 0.0, 0
    for t in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev.unsqueeze(1), context, state)  # (B, 1, V)
        real = tgt_out[:, t] != PAD_ID
        nll = F.cross_entropy(logits[:, 0], tgt_out[:, t], reduction="none")  # (B,)
        total = total + nll[real].sum()
        count += int(real.sum())
        prev = tgt_out[:, t]  # the true token, not the prediction
    return total / count


def tf_log_softmax_gather(model, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    tgt_in = torch.roll(tgt_out, shifts=1, dims=1)  # the last column comes round to the front
    tgt_in[:, 0] = BOS_ID
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    logp = torch.log_softmax(logits, dim=-1)  # (B, T, V)
    picked = logp.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out.ne(PAD_ID)
    return -(picked[real]).mean()


CASES = [
    BlindCase(
        CHECK, "not_shifted", tf_not_shifted, "mistake", "I fed tgt_out itself to the decoder"
    ),
    BlindCase(
        CHECK,
        "shift_left_no_bos",
        tf_shift_left_no_bos,
        "mistake",
        "I fed y_1..y_{T-1} and predicted y_2..<eos>: no <bos>, y_1 never predicted",
    ),
    BlindCase(
        CHECK,
        "bos_replaces_first",
        tf_bos_replaces_first,
        "mistake",
        "I wrote <bos> + tgt_out[:, 1:] instead of tgt_out[:, :-1]",
    ),
    BlindCase(
        CHECK,
        "eos_as_start",
        tf_eos_as_start,
        "mistake",
        "I started the decoder inputs with EOS_ID instead of BOS_ID",
    ),
    BlindCase(
        CHECK,
        "greedy_inputs",
        tf_greedy_inputs,
        "mistake",
        "I fed the decoder its own argmax at each step",
    ),
    BlindCase(
        CHECK,
        "counts_padding",
        tf_counts_padding,
        "mistake",
        "I forgot ignore_index=PAD_ID, so the padding is in the mean",
    ),
    BlindCase(
        CHECK,
        "mask_from_inputs",
        tf_mask_from_inputs,
        "mistake",
        "I took the real positions from tgt_in != PAD_ID instead of tgt_out",
    ),
    BlindCase(
        CHECK,
        "zero_start",
        tf_zero_start,
        "mistake",
        "I started the decoder from a zero state, the context only as input",
    ),
    BlindCase(
        CHECK,
        "last_output_column",
        tf_last_output_column,
        "mistake",
        "I took the context from outputs[:, -1] of the encoder",
    ),
    BlindCase(
        CHECK,
        "ignores_src_lengths",
        tf_ignores_src_lengths,
        "mistake",
        "I encoded the sources as if all S positions were real",
    ),
    BlindCase(
        CHECK,
        "mean_of_sentence_means",
        tf_mean_of_sentence_means,
        "mistake",
        "I averaged the loss over each sentence, then over the sentences",
    ),
    BlindCase(
        CHECK,
        "sum_reduction",
        tf_sum_reduction,
        "mistake",
        "I summed the cross-entropy over the tokens instead of averaging",
    ),
    BlindCase(
        CHECK,
        "under_no_grad",
        tf_under_no_grad,
        "mistake",
        "I computed the loss under torch.no_grad()",
    ),
    BlindCase(
        CHECK,
        "model_forward",
        tf_model_forward,
        "correct",
        "F.pad for the shift, model(...) for the logits, cross-entropy on (B, V, T)",
    ),
    BlindCase(
        CHECK,
        "step_loop",
        tf_step_loop,
        "correct",
        "one decoder step at a time with the true previous token, masked sum / count",
    ),
    BlindCase(
        CHECK,
        "log_softmax_gather",
        tf_log_softmax_gather,
        "correct",
        "torch.roll for the shift with <bos> written in; log_softmax, gather, masked mean",
    ),
]
