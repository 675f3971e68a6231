"""Mistakes in the encoder-decoder: the loss with teacher forcing (chapter 4) and one step of the
Bahdanau decoder (chapter 7)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from transformer_tutorial import check
from transformer_tutorial.seq2seq import last_hidden, sequence_loss
from transformer_tutorial.sequences import BOS_ID, EOS_ID, PAD_ID

from . import Correct, Mistake

# --- the loss with teacher forcing ----------------------------------------------------------------


def shifted(tgt_out, first=BOS_ID):
    return torch.cat([torch.full((len(tgt_out), 1), first), tgt_out[:, :-1]], dim=1)


def tf_loss(model, src, src_lengths, tgt_out):
    return sequence_loss(model(src, src_lengths, shifted(tgt_out)), tgt_out)


def tf_by_parts(model, src, src_lengths, tgt_out, *, first=BOS_ID, zero_state=False):
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    if zero_state:
        state = torch.zeros_like(state)
    logits, _ = model.decoder(shifted(tgt_out, first), context, state)
    return sequence_loss(logits, tgt_out)


def tf_step_by_step(model, src, src_lengths, tgt_out):
    """One decoder step at a time, each fed the gold previous token; the mean by hand."""
    _, state = model.encoder(src, src_lengths)
    context = last_hidden(state)
    prev, total = torch.full((len(src),), BOS_ID), 0.0
    for t in range(tgt_out.shape[1]):
        logits, state = model.decoder(prev[:, None], context, state)
        real = tgt_out[:, t] != PAD_ID
        losses = F.cross_entropy(logits[:, 0], tgt_out[:, t], reduction="none")
        total = total + losses[real].sum()
        prev = tgt_out[:, t]  # the gold token, whatever the model predicted
    return total / (tgt_out != PAD_ID).sum()


def tf_no_shift(model, src, src_lengths, tgt_out):
    return sequence_loss(model(src, src_lengths, tgt_out), tgt_out)


def tf_no_bos(model, src, src_lengths, tgt_out):
    return sequence_loss(model(src, src_lengths, tgt_out[:, :-1]), tgt_out[:, 1:])


def tf_pad_first(model, src, src_lengths, tgt_out):
    return tf_by_parts(model, src, src_lengths, tgt_out, first=PAD_ID)


def tf_own_argmax(model, src, src_lengths, tgt_out):
    state = model.start(src, src_lengths)
    prev, all_logits = torch.full((len(src),), BOS_ID), []
    for _ in range(tgt_out.shape[1]):
        logits, state = model.decode_step(prev, state)
        all_logits.append(logits)
        prev = logits.argmax(-1)  # its own prediction, not the gold token
    return sequence_loss(torch.stack(all_logits, dim=1), tgt_out)


def tf_padding_in_loss(model, src, src_lengths, tgt_out):
    logits = model(src, src_lengths, shifted(tgt_out))
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))


def tf_zero_state(model, src, src_lengths, tgt_out):
    return tf_by_parts(model, src, src_lengths, tgt_out, zero_state=True)


def tf_last_column(model, src, src_lengths, tgt_out):
    outputs, _ = model.encoder(src, src_lengths)
    last = outputs[:, -1]  # (B, D)
    logits, _ = model.decoder(shifted(tgt_out), last, last[None].contiguous())
    return sequence_loss(logits, tgt_out)


def tf_bos_overwrites(model, src, src_lengths, tgt_out):
    tgt_in = tgt_out.clone()
    tgt_in[:, 0] = BOS_ID  # written over y_1, not shifted
    return sequence_loss(model(src, src_lengths, tgt_in), tgt_out)


def tf_context_first_output(model, src, src_lengths, tgt_out):
    outputs, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(shifted(tgt_out), outputs[:, 0], state)
    return sequence_loss(logits, tgt_out)


def tf_eos_not_trained(model, src, src_lengths, tgt_out):
    return sequence_loss(model(src, src_lengths, shifted(tgt_out)),
                         tgt_out.masked_fill(tgt_out == EOS_ID, PAD_ID))  # fmt: skip


def tf_mask_from_inputs(model, src, src_lengths, tgt_out):
    tgt_in = shifted(tgt_out)
    logits = model(src, src_lengths, tgt_in)
    losses = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")
    return losses[tgt_in != PAD_ID].mean()


def tf_softmax_first(model, src, src_lengths, tgt_out):
    return sequence_loss(model(src, src_lengths, shifted(tgt_out)).softmax(-1), tgt_out)


def tf_sum_per_sentence(model, src, src_lengths, tgt_out):
    logits = model(src, src_lengths, shifted(tgt_out))
    losses = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")
    return losses[tgt_out != PAD_ID].sum() / len(src)


def tf_encoder_frozen(model, src, src_lengths, tgt_out):
    with torch.no_grad():
        _, state = model.encoder(src, src_lengths)
    logits, _ = model.decoder(shifted(tgt_out), last_hidden(state), state)
    return sequence_loss(logits, tgt_out)


def tf_item(model, src, src_lengths, tgt_out):
    return torch.tensor(tf_loss(model, src, src_lengths, tgt_out).item())


# --- one step of the Bahdanau decoder --------------------------------------------------------------


def attend(decoder, query, memory, src_mask, mask=True):
    """Additive attention written out: scores (B, S), masked, softmax over the positions."""
    att = decoder.attention
    scores = att.w_v(torch.tanh(att.W_q(query)[:, None] + att.W_k(memory))).squeeze(-1)  # (B, S)
    if mask:
        scores = scores.masked_fill(~src_mask, float("-inf"))
    weights = scores.softmax(dim=-1)  # (B, S)
    return (weights[:, :, None] * memory).sum(1), weights  # (B, D), (B, S)


def step_by_hand(decoder, prev, state, memory, src_mask):
    context, weights = attend(decoder, state[-1], memory, src_mask)
    y = decoder.embedding(prev)  # (B, E)
    output, state = decoder.rnn(torch.cat([y, context], -1)[:, None], state)  # (B, 1, D)
    logits = decoder.out(torch.cat([output[:, 0], context], -1))
    return logits, state, weights


def step_with_module(decoder, prev, state, memory, src_mask):
    query = state[-1][:, None]  # (B, 1, D)
    context, weights = decoder.attention(query, memory, memory, mask=src_mask[:, None])
    y = decoder.embedding(prev)[:, None]  # (B, 1, E)
    output, state = decoder.rnn(torch.cat([y, context], -1), state)
    return decoder.out(torch.cat([output, context], -1))[:, 0], state, weights[:, 0]


def step_luong(decoder, prev, state, memory, src_mask):
    context, _ = attend(decoder, state[-1], memory, src_mask)
    y = decoder.embedding(prev)
    output, state = decoder.rnn(torch.cat([y, context], -1)[:, None], state)
    context, weights = attend(decoder, state[-1], memory, src_mask)  # asks with the new state
    return decoder.out(torch.cat([output[:, 0], context], -1)), state, weights


def step_no_mask(decoder, prev, state, memory, src_mask):
    context, weights = attend(decoder, state[-1], memory, src_mask, mask=False)
    y = decoder.embedding(prev)
    output, state = decoder.rnn(torch.cat([y, context], -1)[:, None], state)
    return decoder.out(torch.cat([output[:, 0], context], -1)), state, weights


def step_context_not_fed(decoder, prev, state, memory, src_mask):
    context, weights = attend(decoder, state[-1], memory, src_mask)
    y = decoder.embedding(prev)
    output, state = decoder.rnn(torch.cat([y, torch.zeros_like(context)], -1)[:, None], state)
    return decoder.out(torch.cat([output[:, 0], context], -1)), state, weights


def step_state_fed_for_context(decoder, prev, state, memory, src_mask):
    context, weights = attend(decoder, state[-1], memory, src_mask)
    y = decoder.embedding(prev)
    output, state2 = decoder.rnn(torch.cat([y, state[-1]], -1)[:, None], state)
    return decoder.out(torch.cat([output[:, 0], context], -1)), state2, weights


def step_softmax_trailing_axis(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    scores = att.w_v(torch.tanh(att.W_q(state[-1])[:, None] + att.W_k(memory)))  # (B, S, 1)
    scores = scores.masked_fill(~src_mask[..., None], float("-inf"))
    weights = scores.softmax(dim=-1)  # over the axis of size 1: every weight is 1
    context = (weights * memory).sum(1)
    y = decoder.embedding(prev)
    output, state = decoder.rnn(torch.cat([y, context], -1)[:, None], state)
    return decoder.out(torch.cat([output[:, 0], context], -1)), state, weights[..., 0]


def step_softmax_over_batch(decoder, prev, state, memory, src_mask):
    att = decoder.attention
    scores = att.w_v(torch.tanh(att.W_q(state[-1])[:, None] + att.W_k(memory))).squeeze(-1)
    weights = scores.masked_fill(~src_mask, float("-inf")).softmax(dim=0)  # over the batch
    context = (weights[..., None] * memory).sum(1)
    y = decoder.embedding(prev)
    output, state = decoder.rnn(torch.cat([y, context], -1)[:, None], state)
    return decoder.out(torch.cat([output[:, 0], context], -1)), state, weights


def step_logits_without_context(decoder, prev, state, memory, src_mask):
    context, weights = attend(decoder, state[-1], memory, src_mask)
    y = decoder.embedding(prev)
    output, state = decoder.rnn(torch.cat([y, context], -1)[:, None], state)
    return decoder.out(torch.cat([output[:, 0], output[:, 0]], -1)), state, weights


def step_logits_context_of_new_state(decoder, prev, state, memory, src_mask):
    """The logits from a context asked anew by the new state (as Luong's attention does)."""
    context, weights = attend(decoder, state[-1], memory, src_mask)
    y = decoder.embedding(prev)
    output, state = decoder.rnn(torch.cat([y, context], -1)[:, None], state)
    new_context, _ = attend(decoder, state[-1], memory, src_mask)
    return decoder.out(torch.cat([output[:, 0], new_context], -1)), state, weights


def step_softmax_logits(decoder, prev, state, memory, src_mask):
    context, weights = attend(decoder, state[-1], memory, src_mask)
    y = decoder.embedding(prev)
    output, state = decoder.rnn(torch.cat([y, context], -1)[:, None], state)
    logits = decoder.out(torch.cat([output[:, 0], context], -1))
    return logits.softmax(-1), state, weights  # probabilities, not logits


def step_logits_from_old_state(decoder, prev, state, memory, src_mask):
    context, weights = attend(decoder, state[-1], memory, src_mask)
    y = decoder.embedding(prev)
    _, new_state = decoder.rnn(torch.cat([y, context], -1)[:, None], state)
    return decoder.out(torch.cat([state[-1], context], -1)), new_state, weights


TF, STEP = check.check_teacher_forcing_loss, check.check_bahdanau_step

MISTAKES = [
    Mistake(TF, "tf-no-shift", tf_no_shift, "the decoder is fed the token it must predict"),
    Mistake(TF, "tf-no-bos", tf_no_bos, "never learns to predict the first token"),
    Mistake(TF, "tf-pad-first", tf_pad_first, "the first input is <pad>, not <bos>"),
    Mistake(TF, "tf-own-argmax", tf_own_argmax, "fed its own argmax predictions"),
    Mistake(TF, "tf-padding-in-loss", tf_padding_in_loss, "padding positions count in the loss"),
    Mistake(TF, "tf-zero-state", tf_zero_state, "the decoder starts from a zero state"),
    Mistake(TF, "tf-last-column", tf_last_column, "the encoder's output at the last column"),
    Mistake(TF, "tf-detached", tf_item, "the loss is detached from the model"),
    Mistake(TF, "tf-no-gradient", tf_encoder_frozen, "no gradient reaches encoder."),
    Mistake(TF, "tf-bos-overwrites-first-target", tf_bos_overwrites, "instead of shifting"),
    Mistake(TF, "tf-context-first-output", tf_context_first_output, "at the first position"),
    Mistake(TF, "tf-eos-not-trained", tf_eos_not_trained, "never learns to stop"),
    Mistake(TF, "tf-mask-from-inputs", tf_mask_from_inputs, "tgt_out != PAD_ID"),
    Mistake(TF, "tf-softmax-before-loss", tf_softmax_first, "pass the raw logits"),
    Mistake(TF, "tf-per-sentence", tf_sum_per_sentence, "11 / 3 = 3.67", "loss-per-sentence"),
    Mistake(STEP, "bahdanau-luong-query", step_luong, "the query is the new state s'_t"),
    Mistake(STEP, "bahdanau-no-mask", step_no_mask, "padding gets weight"),
    Mistake(STEP, "bahdanau-context-not-fed", step_context_not_fed, "is not fed to the recurrent"),
    Mistake(
        STEP,
        "bahdanau-state-for-context",
        step_state_fed_for_context,
        "[y_{t-1}; c_t]",
        mistake="bahdanau-context-not-fed",
    ),
    Mistake(STEP, "bahdanau-softmax-size-1", step_softmax_trailing_axis, "an axis of size 1"),
    Mistake(STEP, "bahdanau-softmax-batch", step_softmax_over_batch, "sum to 1 over the batch"),
    Mistake(
        STEP,
        "bahdanau-logits-no-context",
        step_logits_without_context,
        "the logits leave the context out",
    ),
    Mistake(STEP, "bahdanau-logits", step_logits_context_of_new_state, "out([s'_t; c_t])"),
    Mistake(STEP, "bahdanau-logits-normalised", step_softmax_logits, "the softmax of the right"),
    Mistake(STEP, "bahdanau-logits-old-state", step_logits_from_old_state, "the state you were"),
]

CORRECT = [
    Correct(TF, "tf-through-forward", tf_loss),
    Correct(TF, "tf-by-parts", tf_by_parts),
    Correct(TF, "tf-step-by-step", tf_step_by_step),
    Correct(STEP, "bahdanau-step-by-hand", step_by_hand),
    Correct(STEP, "bahdanau-step-with-module", step_with_module),
]
