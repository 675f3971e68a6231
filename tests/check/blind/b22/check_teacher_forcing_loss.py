"""Blind set B22, check_teacher_forcing_loss (chapter 4): the teacher-forced loss as readers write
it from the parts of Seq2Seq."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import Seq2Seq, last_hidden, sequence_loss
from transformer_tutorial.sequences import BOS_ID, EOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shift(tgt_out: Tensor, start: int = BOS_ID) -> Tensor:
    first = torch.full((tgt_out.shape[0], 1), start, dtype=tgt_out.dtype, device=tgt_out.device)
    return torch.cat([first, tgt_out[:, :-1]], dim=1)


def _logits(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return logits


def _ce(logits: Tensor, tgt_out: Tensor) -> Tensor:
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD_ID
    )


# ---------------------------------------------------------------- mistakes


def tf_not_shifted(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    return _ce(_logits(model, src, src_lengths, tgt_out), tgt_out)  # the targets are the inputs


def tf_pad_as_start(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = _shift(tgt_out, start=PAD_ID)  # shifted right, but the first slot left as padding
    return _ce(_logits(model, src, src_lengths, tgt_in), tgt_out)


def tf_eos_as_start(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = _shift(tgt_out, start=EOS_ID)  # "end of the source" as the start signal
    return _ce(_logits(model, src, src_lengths, tgt_in), tgt_out)


def tf_padding_counted(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))


def tf_zero_start(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    zero = (
        tuple(torch.zeros_like(s) for s in state)
        if isinstance(state, tuple)
        else torch.zeros_like(state)
    )
    logits, _ = model.decoder(_shift(tgt_out), last_hidden(state), zero)  # fresh decoder state
    return _ce(logits, tgt_out)


def tf_last_column(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)
    context = outputs[:, -1]  # the last encoder output as c
    logits, _ = model.decoder(_shift(tgt_out), context, state)
    return _ce(logits, tgt_out)


def tf_mean_context(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)
    context = outputs.mean(dim=1)  # c = the average encoder state
    logits, _ = model.decoder(_shift(tgt_out), context, state)
    return _ce(logits, tgt_out)


def tf_free_running(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long)
    all_logits = []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)
        all_logits.append(logits)
        prev = logits.argmax(dim=-1)  # feed back my own prediction
    return _ce(torch.cat(all_logits, dim=1), tgt_out)


def tf_detached(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    with torch.no_grad():  # the loss is just a number to log
        return _ce(_logits(model, src, src_lengths, _shift(tgt_out)), tgt_out)


def tf_drops_first(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=torch.long)
    tgt_in = torch.cat([bos, tgt_out[:, 1:]], dim=1)  # cut the wrong end
    return _ce(_logits(model, src, src_lengths, tgt_in), tgt_out)


def tf_sum_loss(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]),
        tgt_out.reshape(-1),
        ignore_index=PAD_ID,
        reduction="sum",
    )


def tf_mean_of_sentence_means(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift(tgt_out))
    losses = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = tgt_out != PAD_ID
    return ((losses * real).sum(1) / real.sum(1)).mean()  # each sentence weighs the same


def tf_first_column(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift(tgt_out), outputs[:, 0], state)  # c = s_1
    return _ce(logits, tgt_out)


# ---------------------------------------------------------------- correct variants


def tf_model_forward_masked(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    tgt_in = tgt_out.roll(1, dims=1)
    tgt_in[:, 0] = BOS_ID
    logits = model(src, src_lengths, tgt_in)
    losses = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    return (losses * real).sum() / real.sum()


def tf_gather(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, final = model.encoder(src, src_lengths)
    c = last_hidden(final)
    logits, _ = model.decoder(_shift(tgt_out), c, final)
    logp = logits.log_softmax(-1).gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out.ne(PAD_ID)
    return -logp[real].mean()


def tf_step_by_step(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    tgt_in = _shift(tgt_out)
    steps = []
    for t in range(tgt_in.shape[1]):  # one decoder call per step, still fed the true tokens
        logits, state = model.decoder(tgt_in[:, t : t + 1], context, state)
        steps.append(logits)
    return sequence_loss(torch.cat(steps, dim=1), tgt_out)


CASES = [
    BlindCase(
        CHECK,
        "not_shifted",
        tf_not_shifted,
        "mistake",
        "I fed tgt_out itself as the decoder input.",
    ),
    BlindCase(
        CHECK,
        "pad_as_start",
        tf_pad_as_start,
        "mistake",
        "I shifted right but put PAD_ID in the first slot instead of BOS_ID.",
    ),
    BlindCase(
        CHECK,
        "eos_as_start",
        tf_eos_as_start,
        "mistake",
        "I started the decoder inputs with EOS_ID instead of BOS_ID.",
    ),
    BlindCase(
        CHECK,
        "padding_counted",
        tf_padding_counted,
        "mistake",
        "I forgot ignore_index=PAD_ID in the cross-entropy.",
    ),
    BlindCase(
        CHECK,
        "zero_start",
        tf_zero_start,
        "mistake",
        "I started the decoder from a zero state (c was still s_S).",
    ),
    BlindCase(
        CHECK,
        "last_column",
        tf_last_column,
        "mistake",
        "I took c = outputs[:, -1], the last column of the encoder outputs.",
    ),
    BlindCase(
        CHECK,
        "mean_context",
        tf_mean_context,
        "mistake",
        "I used the mean of the encoder outputs as c.",
    ),
    BlindCase(
        CHECK,
        "free_running",
        tf_free_running,
        "mistake",
        "I fed the decoder's own argmax back in at each step.",
    ),
    BlindCase(
        CHECK, "detached", tf_detached, "mistake", "I computed the loss under torch.no_grad()."
    ),
    BlindCase(
        CHECK,
        "drops_first",
        tf_drops_first,
        "mistake",
        "I built <bos> + tgt_out[:, 1:], dropping the first target instead of the last.",
    ),
    BlindCase(
        CHECK,
        "sum_loss",
        tf_sum_loss,
        "mistake",
        "I summed the cross-entropy instead of averaging it.",
    ),
    BlindCase(
        CHECK,
        "mean_of_sentence_means",
        tf_mean_of_sentence_means,
        "mistake",
        "I averaged each sentence's loss, then averaged the sentences.",
    ),
    BlindCase(
        CHECK,
        "first_column",
        tf_first_column,
        "mistake",
        "I took the first encoder state outputs[:, 0] as c.",
    ),
    BlindCase(
        CHECK,
        "model_forward_masked",
        tf_model_forward_masked,
        "correct",
        "roll the targets right, set column 0 to BOS, model(...), masked mean of the losses.",
    ),
    BlindCase(
        CHECK,
        "gather_log_softmax",
        tf_gather,
        "correct",
        "log_softmax + gather, mean over the real tokens.",
    ),
    BlindCase(
        CHECK,
        "step_by_step",
        tf_step_by_step,
        "correct",
        "I ran the decoder one step at a time with the true previous tokens.",
    ),
]
