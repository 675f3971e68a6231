"""Blind set B7, check_teacher_forcing_loss (chapter 4): the loss of one teacher-forced step."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.seq2seq import Seq2Seq, last_hidden
from transformer_tutorial.sequences import BOS_ID, EOS_ID, PAD_ID

from .. import BlindCase

CHECK = "check_teacher_forcing_loss"


def _shift_right(tgt_out: Tensor) -> Tensor:
    """``<bos> y_1 .. y_{T-1}``: the decoder's inputs (right, shared by mistakes elsewhere)."""
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=tgt_out.dtype, device=tgt_out.device)
    return torch.cat([bos, tgt_out[:, :-1]], dim=1)


def _logits(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> Tensor:
    """The decoder's logits from the encoder's final state (right)."""
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)
    return logits


# ---------------------------------------------------------------- mistakes


def tf_shift_left(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    bos = torch.full((len(tgt_out), 1), BOS_ID)
    tgt_in = torch.cat([tgt_out[:, 1:], bos], dim=1)  # shifted, but the wrong way
    logits = _logits(model, src, src_lengths, tgt_in)
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


def tf_pad_as_start(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    start = torch.full((len(tgt_out), 1), PAD_ID)  # an empty token to start from
    tgt_in = torch.cat([start, tgt_out[:, :-1]], dim=1)
    logits = _logits(model, src, src_lengths, tgt_in)
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


def tf_eos_as_start(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    start = torch.full((len(tgt_out), 1), EOS_ID)  # the previous sentence ended with <eos>
    tgt_in = torch.cat([start, tgt_out[:, :-1]], dim=1)
    logits = _logits(model, src, src_lengths, tgt_in)
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


def tf_ignore_eos(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=EOS_ID)


def tf_sum_over_batch(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    V = logits.shape[-1]
    total = F.cross_entropy(
        logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD_ID, reduction="sum"
    )
    return total / tgt_out.shape[0]  # the loss per sentence


def tf_mean_of_sentence_means(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    per_token = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_out != PAD_ID).float()
    per_sentence = (per_token * real).sum(1) / real.sum(1)  # (B,)
    return per_sentence.mean()


def tf_mask_from_inputs(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    tgt_in = _shift_right(tgt_out)
    logits = _logits(model, src, src_lengths, tgt_in)
    per_token = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    real = (tgt_in != PAD_ID).float()  # the real tokens of the decoder's input
    return (per_token * real).sum() / real.sum()


def tf_softmax_first(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    probs = logits.softmax(dim=-1)  # cross-entropy compares probabilities
    return F.cross_entropy(probs.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


def tf_nll_on_logits(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    return F.nll_loss(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


def tf_label_smoothing(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    return F.cross_entropy(
        logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID, label_smoothing=0.1
    )


def tf_targets_flattened_time_major(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.t().reshape(-1), ignore_index=PAD_ID)


def tf_reversed_source(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    src = src.flip(1)  # read the source backwards, as Sutskever et al. did
    logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


def tf_state_as_context(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(_shift_right(tgt_out), state, state)  # c is the final state
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


def tf_gather_off_by_one(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)  # (B, S, D)
    context = outputs[torch.arange(len(src)), src_lengths]  # the state at each row's end
    logits, _ = model.decoder(_shift_right(tgt_out), context, state)
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


def tf_no_grad(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    with torch.no_grad():  # the loss is one number; no need to store activations
        logits = _logits(model, src, src_lengths, _shift_right(tgt_out))
        V = logits.shape[-1]
        return F.cross_entropy(logits.view(-1, V), tgt_out.view(-1), ignore_index=PAD_ID)


def tf_mean_context(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    outputs, state = model.encoder(src, src_lengths)
    context = outputs.mean(dim=1)  # summary of the whole source, all states averaged
    logits, _ = model.decoder(_shift_right(tgt_out), context, state)
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


# ---------------------------------------------------------------- correct variants


def tf_class_axis_second(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    B = tgt_out.shape[0]
    tgt_in = torch.cat([tgt_out.new_full((B, 1), BOS_ID), tgt_out[:, :-1]], dim=1)
    outputs, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(tgt_in, last_hidden(state), state)  # (B, T, V)
    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)  # (B, V, T)


def tf_masked_mean_by_hand(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor
) -> Tensor:
    tgt_in = tgt_out.roll(1, dims=1)
    tgt_in[:, 0] = BOS_ID  # roll copies, so writing into it is safe
    _, state = model.encoder(src, src_lengths)
    h = state[0] if isinstance(state, tuple) else state  # an LSTM's state is (h, cell)
    logits, _ = model.decoder(tgt_in, h[-1], state)  # h[-1]: the last layer, (B, D)
    logp = logits.log_softmax(dim=-1)
    nll = -logp.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = tgt_out != PAD_ID
    return nll[real].mean()


def tf_model_forward(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    tgt_in = F.pad(tgt_out[:, :-1], (1, 0), value=BOS_ID)
    logits = model(src, src_lengths, tgt_in)  # Seq2Seq.forward does encoder and decoder
    keep = tgt_out.reshape(-1) != PAD_ID
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1])[keep], tgt_out.reshape(-1)[keep])


def tf_step_by_step(model: Seq2Seq, src: Tensor, src_lengths: Tensor, tgt_out: Tensor) -> Tensor:
    """The decoder called one step at a time with the true previous token (still teacher
    forcing), the state carried by hand."""
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev = torch.full((tgt_out.shape[0], 1), BOS_ID)
    all_logits = []
    for t in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev, context, state)  # (B, 1, V)
        all_logits.append(logits)
        prev = tgt_out[:, t : t + 1]  # the true token, not the argmax
    logits = torch.cat(all_logits, dim=1)
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)


CASES = [
    BlindCase(
        check=CHECK,
        name="shifted_left",
        code=tf_shift_left,
        kind="mistake",
        what="I shifted the targets the wrong way: the decoder reads y_2 .. <eos> <bos>, so at "
        "each step it sees the token after the one it must predict.",
    ),
    BlindCase(
        check=CHECK,
        name="pad_as_start_token",
        code=tf_pad_as_start,
        kind="mistake",
        what="I started the decoder's inputs with PAD_ID instead of BOS_ID.",
    ),
    BlindCase(
        check=CHECK,
        name="eos_as_start_token",
        code=tf_eos_as_start,
        kind="mistake",
        what="I started the decoder's inputs with EOS_ID instead of BOS_ID.",
    ),
    BlindCase(
        check=CHECK,
        name="ignore_index_eos",
        code=tf_ignore_eos,
        kind="mistake",
        what="I passed ignore_index=EOS_ID instead of PAD_ID, so the padding counts and the "
        "<eos> targets do not.",
    ),
    BlindCase(
        check=CHECK,
        name="sum_divided_by_batch",
        code=tf_sum_over_batch,
        kind="mistake",
        what="I summed the token losses and divided by the batch size (a loss per sentence) "
        "instead of averaging over the real tokens.",
    ),
    BlindCase(
        check=CHECK,
        name="mean_of_sentence_means",
        code=tf_mean_of_sentence_means,
        kind="mistake",
        what="I averaged each sentence's tokens first and then averaged the sentences, which "
        "weights short sentences' tokens more.",
    ),
    BlindCase(
        check=CHECK,
        name="mask_from_decoder_inputs",
        code=tf_mask_from_inputs,
        kind="mistake",
        what="I built the loss mask from tgt_in != PAD_ID instead of tgt_out; in the shorter "
        "rows the shifted-in <eos> makes one padded target count.",
    ),
    BlindCase(
        check=CHECK,
        name="softmax_before_cross_entropy",
        code=tf_softmax_first,
        kind="mistake",
        what="I applied a softmax to the logits before F.cross_entropy, which takes its own "
        "log-softmax.",
    ),
    BlindCase(
        check=CHECK,
        name="nll_loss_on_logits",
        code=tf_nll_on_logits,
        kind="mistake",
        what="I used F.nll_loss on the raw logits, without the log_softmax it expects.",
    ),
    BlindCase(
        check=CHECK,
        name="label_smoothing",
        code=tf_label_smoothing,
        kind="mistake",
        what="I added label_smoothing=0.1 to the cross-entropy, as in the Transformer paper.",
    ),
    BlindCase(
        check=CHECK,
        name="targets_flattened_time_major",
        code=tf_targets_flattened_time_major,
        kind="mistake",
        what="I flattened the targets as tgt_out.t().reshape(-1) (time-major) while the logits "
        "are flattened batch-major, so logits and targets are paired wrongly.",
    ),
    BlindCase(
        check=CHECK,
        name="source_reversed",
        code=tf_reversed_source,
        kind="mistake",
        what="I reversed the source with src.flip(1), as Sutskever et al. did, which also puts "
        "the padding first for short sources.",
    ),
    BlindCase(
        check=CHECK,
        name="state_passed_as_context",
        code=tf_state_as_context,
        kind="mistake",
        what="I passed the encoder's final state (1, B, D) itself as the context instead of "
        "last_hidden(state).",
    ),
    BlindCase(
        check=CHECK,
        name="context_gathered_at_length",
        code=tf_gather_off_by_one,
        kind="mistake",
        what="I took the context from the encoder outputs at index src_lengths[b], one past the "
        "last real state (out of range for the longest source).",
    ),
    BlindCase(
        check=CHECK,
        name="computed_under_no_grad",
        code=tf_no_grad,
        kind="mistake",
        what="I computed the loss under torch.no_grad() to save memory, so it cannot be "
        "backpropagated.",
    ),
    BlindCase(
        check=CHECK,
        name="context_mean_of_outputs",
        code=tf_mean_context,
        kind="mistake",
        what="I used the mean of all encoder outputs (zeros at padding included) as the "
        "context instead of the final state.",
    ),
    BlindCase(
        check=CHECK,
        name="class_axis_transposed",
        code=tf_class_axis_second,
        kind="correct",
        what="I gave F.cross_entropy the logits as (B, V, T) with transpose(1, 2) instead of "
        "flattening.",
    ),
    BlindCase(
        check=CHECK,
        name="gather_and_boolean_mean",
        code=tf_masked_mean_by_hand,
        kind="correct",
        what="I built tgt_in with roll and wrote BOS into column 0, took the context as h[-1] "
        "by hand, and averaged -log p of the targets over the real positions by hand.",
    ),
    BlindCase(
        check=CHECK,
        name="seq2seq_forward_filtered",
        code=tf_model_forward,
        kind="correct",
        what="I called model(src, src_lengths, tgt_in) and dropped the padded positions before "
        "the cross-entropy instead of using ignore_index.",
    ),
    BlindCase(
        check=CHECK,
        name="step_by_step_teacher_forcing",
        code=tf_step_by_step,
        kind="correct",
        what="I ran the decoder one step at a time, feeding the true previous token and "
        "carrying the state, then took the masked mean cross-entropy.",
    ),
]
