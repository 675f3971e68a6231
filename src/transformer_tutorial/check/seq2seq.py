"""Encoder-decoder checks: the training loss with teacher forcing (chapter 4) and one step of
the Bahdanau decoder (chapter 7)."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from ..bahdanau import BahdanauDecoder
from ..seq2seq import NUM_SPECIALS, Seq2Seq, Seq2SeqConfig, last_hidden, sequence_loss
from ..sequences import BOS_ID, EOS_ID, PAD_ID, pad_sequences, padding_mask
from .diagnoses import MISTAKES as LOSS_MISTAKES
from .diagnoses import counts, loss_described, masking_mistake, normalisation_named
from .engine import check
from .tensors import close, expect_tensor, unpacks_to
from .verdict import Verdict, Wrong, say

# --- the loss with teacher forcing (chapter 4) ----------------------------------------------------


def _shift_right(tgt_out: Tensor, first: int = BOS_ID) -> Tensor:
    """The decoder's inputs: ``first`` (``<bos>``), then the gold tokens one step late."""
    start = torch.full((tgt_out.shape[0], 1), first, dtype=torch.long)  # (B, 1)
    return torch.cat([start, tgt_out[:, :-1]], dim=1)  # (B, T)


def _teacher_forcing_variants(model: Seq2Seq, src: Tensor, lengths: Tensor, tgt_out: Tensor):
    """The right loss and the loss of each typical mistake, on the same model and batch."""
    outputs, state = model.encoder(src, lengths)  # (B, S, D), (1, B, D)
    context = last_hidden(state)  # (B, D)
    tgt_in = _shift_right(tgt_out)  # (B, T)

    def loss_of(inputs: Tensor, c: Tensor = context, s: Tensor = state) -> Tensor:
        return sequence_loss(model.decoder(inputs, c, s)[0], tgt_out[:, : inputs.shape[1]])

    logits, _ = model.decoder(tgt_in, context, state)  # (B, T, V)
    real = tgt_out != PAD_ID  # (B, T)
    per_token = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    # free running: the decoder is fed its own argmax, as at inference
    prev, s, free = torch.full((len(src),), BOS_ID), state, []
    for _ in range(tgt_out.shape[1]):
        step_logits, s = model.decoder(prev[:, None], context, s)  # (B, 1, V)
        free.append(step_logits)
        prev = step_logits[:, 0].argmax(-1)  # (B,)
    last_column = outputs[:, -1]  # (B, D): padding for every row shorter than S
    no_bos_logits, _ = model.decoder(tgt_out[:, :-1], context, state)  # (B, T - 1, V)
    return {
        "right": loss_of(tgt_in),
        "no-shift": loss_of(tgt_out),
        "no-bos": sequence_loss(no_bos_logits, tgt_out[:, 1:]),
        "pad-first": loss_of(_shift_right(tgt_out, PAD_ID)),
        "free-running": sequence_loss(torch.cat(free, dim=1), tgt_out),
        "padding-counted": F.cross_entropy(logits.transpose(1, 2), tgt_out),
        "padding-zero-mean": per_token.masked_fill(~real, 0).mean(),
        "sum": per_token[real].sum(),
        "zero-state": loss_of(tgt_in, context, torch.zeros_like(state)),
        "zero-context": loss_of(tgt_in, torch.zeros_like(context), state),
        "last-column": loss_of(tgt_in, last_column, last_column[None].contiguous()),
    }


MISTAKES = {
    "tf-eos-first": "the decoder's first input is <eos>, not <bos>: the inputs are <bos> y_1 ... "
    "y_(T-1), the targets shifted right by one with BOS_ID in front.",
    "tf-shifted-left": "the targets are shifted the wrong way: your decoder reads y_2 ... "
    "(the token after the one it must predict). The inputs are <bos> y_1 ... y_(T-1): shift "
    "right, torch.cat([bos, tgt_out[:, :-1]], dim=1).",
    "tf-ignore-eos": "you ignore <eos> (ignore_index=EOS_ID) instead of the padding: the model "
    "never learns to stop, and the padding counts. Use ignore_index=PAD_ID.",
    "tf-source-reversed": "you read the source backwards (src.flip(1)): with padding at the end "
    "of each row, the flipped rows start with padding. Chapter 4's encoder reads the source as "
    "it is.",
    "tf-label-smoothing": "your loss is label-smoothed (label_smoothing=0.1): chapter 4's loss is "
    "the plain cross-entropy of the target tokens; label smoothing comes with the Transformer's "
    "training, in chapter 14.",
    "tf-targets-by-column": "the targets are flattened column by column (tgt_out.t()) and the "
    "logits row by row, so each logit is scored against another position's target: flatten both "
    "the same way, logits.reshape(-1, V) with tgt_out.reshape(-1).",
    "tf-logits-by-column": "the logits are flattened column by column (time first, "
    "logits.transpose(0, 1)) and the targets row by row, so each logit is scored against another "
    "position's target: flatten both the same way, logits.reshape(-1, V) with "
    "tgt_out.reshape(-1).",
    "tf-no-gradient": "the loss is right, but no gradient reaches {names}: part of the model ran "
    "without autograd (torch.no_grad(), .detach() or .item() on the way), so training would "
    "never change it. Compute the whole forward pass with gradients.",
    "tf-bos-overwrites-first-target": "you write <bos> over the first target instead of "
    "shifting the targets right: the decoder is never fed y_1 and is asked to predict it from "
    "<bos> at step 0 and again at step 1. Inputs are <bos> y_1 .. y_{{T-1}}: "
    "torch.cat([bos, tgt_out[:, :-1]], dim=1).",
    "tf-context-last-column": "the context is outputs[:, -1], the encoder's output in the last "
    "column: for a sentence shorter than the longest that column is padding (zeros, from the "
    "packed sequence), not its last word. c = s_S is each sentence's own final state, "
    "last_hidden(state).",
    "tf-context-mean": "the context is the mean of the encoder's outputs over the positions "
    "(padding included); chapter 4's context is the final state, c = s_S = last_hidden(state) "
    "-- the mean over the positions, by weights, is what attention will do (chapter 5).",
    "tf-context-first-output": "the context is the encoder's output at the first position; c "
    "is the encoder's final state s_S (last_hidden of what the encoder returns), which has read "
    "the whole source.",
    "tf-eos-not-trained": "<eos> is not a target (you replaced it by padding, or left it out of "
    "the loss's mask, e.g. (tgt_out != PAD_ID) & (tgt_out != EOS_ID)): the model never learns to "
    "stop. <eos> is the last real target token of each sentence.",
    "tf-mask-from-inputs": "the real-token mask counts one padding position after each <eos>: it "
    "comes from the decoder's inputs rather than from tgt_out, or from the lengths compared with "
    "<= (or < lengths + 1). Build it as tgt_out != PAD_ID.",
    "tf-softmax-before-loss": "the logits go through a softmax before the cross-entropy, which "
    "takes a log_softmax itself: pass the raw logits (cross_entropy = log_softmax + "
    "nll_loss).",
}

MISTAKES |= {
    "tf-no-shift": "the decoder is fed the token it must predict (tgt_out itself), so it learns to "
    "copy its input: shift the targets right, <bos> first, so that step t sees y_1 .. y_{{t-1}}.",
    "tf-no-bos": "the inputs start at y_1 and the first target is dropped, so the decoder never "
    "learns to predict the first token: start the inputs with <bos> (BOS_ID) and keep every "
    "target.",
    "tf-pad-first": "the first input is <pad>, not <bos>: at inference the decoder starts from "
    "<bos> (BOS_ID = {bos}), so it must learn to start from it.",
    "tf-own-argmax": "the decoder is fed its own argmax predictions: with teacher forcing it is "
    "fed the gold previous token y_{{t-1}} (that is what inference does, not training).",
    "tf-padding-in-loss": "padding positions count in the loss: cross-entropy over the real "
    "target tokens only (ignore_index=PAD_ID, as sequence_loss does).",
    "tf-zero-state": "the decoder starts from a zero state: its initial state is the encoder's "
    "final state s_S (what the encoder returns), which carries the source.",
    "tf-last-column": "you took the encoder's output at the last column, which is padding (zeros) "
    "for every source shorter than the batch: use the final state the encoder returns, taken at "
    "each row's real end.",
    "tf-detached": "the value is right but the loss is detached from the model (.item(), "
    ".detach() or no_grad): it cannot be trained.",
    "bahdanau-softmax-size-1": "every weight is 1: the softmax ran over an axis of size 1 (the "
    "trailing axis of scores (B, S, 1), or the query axis of (B, 1, S)); it runs over the S "
    "source positions.",
    "bahdanau-softmax-batch": "the weights sum to 1 over the batch (softmax over axis 0); each row "
    "must sum to 1 over the source positions.",
    "bahdanau-no-mask": "padding gets weight: the source mask is not used, so a sentence's context "
    "depends on its neighbours' lengths. Pass src_mask (True = real token) to the attention, so "
    "padded positions get weight exactly 0.",
    "bahdanau-luong-query": "the query is the new state s'_t (Luong's order); Bahdanau's decoder "
    "asks with the previous state s'_{{t-1}}, before the recurrent step, and feeds the context c_t "
    "into that step.",
    "bahdanau-context-not-fed": "the context c_t is not fed to the recurrent layer: its input is "
    "[y_{{t-1}}; c_t], the embedding of the previous token beside the context.",
    "bahdanau-output-as-state": "the new state has shape ({B}, 1, {D}), the recurrent layer's "
    "output for this one step (batch first), and holds the new state's values: return the state "
    "the layer gives back, (1, B, D) (`output, state = self.rnn(...)`), not its output, nor the "
    "state with axes 0 and 1 swapped.",
    "bahdanau-weights-query-axis": "the weights have shape ({B}, 1, {S}), expected ({B}, {S}): "
    "the attention is asked by one query, so its weights keep a query axis of size 1. Drop it "
    "(w[:, 0] or w.squeeze(1)): the decoder stacks the steps' weights into (B, T, S).",
    "bahdanau-projected-values": "the context has {A} features, the size of the projected keys "
    "W_k s_i, not the encoder's {D}: the values are the encoder states themselves (memory), "
    "not their projection. W_k only makes the keys that the query is compared with.",
    "bahdanau-query-from-encoder": "the weights are the attention asked by {query}, not by the "
    "decoder's previous state s'_{{t-1}}: in Bahdanau's decoder the query is the state the "
    "decoder carries (`last_hidden(state)`); the encoder states are the keys and values.",
    "bahdanau-old-state-returned": "the weights and the logits are right, but the state you "
    "return is the one you were given, s'_{{t-1}}: return the new state s'_t that the recurrent "
    "layer computed.",
    "bahdanau-rnn-without-state": "the new state is what the recurrent layer computes from a zero "
    "state: the call leaves out s'_{{t-1}}. Pass it as the initial state, rnn(input, state).",
    "bahdanau-state-order": "the recurrent layer is fed [c_t; y_{{t-1}}], the context first: "
    "its input is [y_{{t-1}}; c_t], the embedding of the previous token, then the context. The "
    "sizes add up either way, so nothing fails; the weights are learnt for one order.",
    "bahdanau-logits-order": "the logits come from out([c_t; s'_t]), the context first: the "
    "output layer reads [s'_t; c_t], the new state, then the context. The sizes add up either "
    "way, so nothing fails; the weights are learnt for one order.",
    "bahdanau-logits": "the state is right but the logits are not: they come from out([s'_t; "
    "c_t]), the new state beside the context.",
    "bahdanau-logits-normalised": "your logits are the {how} of the right logits: return the "
    "output layer's scores, out([s'_t; c_t]), as they are (the loss and the decoding take the "
    "softmax themselves).",
    "bahdanau-logits-old-state": "the logits come from out([s'_{{t-1}}; c_t]), the state you were "
    "given: they come from the new state, out([s'_t; c_t]).",
}

MESSAGES = {
    "tf-padding-zero-mean": "padding positions count in the mean (their loss is zeroed but they "
    "are still in the denominator): average over the real target tokens only.",
    "tf-sum": "the loss is the sum over the target tokens; use their mean (as sequence_loss "
    "does), so that the step size does not grow with the batch.",
    "tf-zero-context": "the context c is zero, so the decoder never sees the source: c = s_S, the "
    "encoder's final state (last_hidden of it).",
    "tf-not-a-number": "return the loss as one number in a tensor (a 0-dimensional tensor, so "
    "that loss.backward() can train the model); got {kind}.",
    "tf-not-a-number-shaped": "return the loss as one number in a tensor (a 0-dimensional tensor, "
    "so that loss.backward() can train the model); got {kind} of shape {shape}.",
    "bahdanau-row-sums": "each row of weights should sum to 1 over the source positions; the sums "
    "are {sums}.",
    "bahdanau-padding-weight": "padded source positions get weight; they must get exactly 0.",
    "bahdanau-weights-differ": "the weights should be the additive attention of the previous state "
    "s'_{{t-1}} (query) over the encoder states (keys and values): check the query you pass "
    "(the state the decoder carries, not an encoder state or the new state) and the scores "
    "v^T tanh(W_q q + W_k k).",
    "bahdanau-state-differs": "the weights are right but the new state is not: s'_t = "
    "rnn([y_{{t-1}}; c_t], s'_{{t-1}}).",
    "query-last": "the encoder's last position, memory[:, -1]",
    "query-first": "the encoder's first position, memory[:, 0]",
    "query-last-real": "each sentence's last real encoder state",
    "query-mean": "the mean of the encoder states",
    "query-mean-real": "the mean of the real encoder states",
    "bahdanau-not-a-triple": "return three things: (logits (B, V), the new state (1, B, D), the "
    "attention weights (B, S)).",
}

_TEACHER_FORCING_MISTAKES = {  # each variant of _teacher_forcing_variants: its message's id
    "no-shift": "tf-no-shift",
    "no-bos": "tf-no-bos",
    "pad-first": "tf-pad-first",
    "free-running": "tf-own-argmax",
    "padding-counted": "tf-padding-in-loss",
    "padding-zero-mean": "tf-padding-zero-mean",
    "sum": "tf-sum",
    "zero-state": "tf-zero-state",
    "zero-context": "tf-zero-context",
    "last-column": "tf-last-column",
}


@check("loss with teacher forcing", call="fn(model, src, src_lengths, tgt_out)")
def check_teacher_forcing_loss(fn: Callable[..., Tensor]) -> Verdict:
    """``fn(model, src, src_lengths, tgt_out) -> loss``: the training loss of chapter 4's
    ``Seq2Seq`` with teacher forcing. ``tgt_out`` ``(B, T)`` holds ``y_1 .. y_n <eos>``, padded
    with ``PAD_ID``; the decoder's inputs are ``<bos> y_1 .. y_{T-1}`` (the targets shifted right),
    it starts from the encoder's final state with ``c = s_S``, and the loss is the mean
    cross-entropy over the real target tokens."""
    model, src, lengths, tgt_out = _tf_case(0, (5, 2, 4), (3, 1, 4))
    with torch.no_grad():
        variants = _teacher_forcing_variants(model, src, lengths, tgt_out)
    got = fn(model, src.clone(), lengths.clone(), tgt_out.clone())
    if not isinstance(got, Tensor) or got.numel() != 1:
        if isinstance(got, Tensor):
            raise Wrong.differs(MESSAGES, "tf-not-a-number-shaped", kind=type(got).__name__,
                                shape=tuple(got.shape))  # fmt: skip
        raise Wrong.differs(MESSAGES, "tf-not-a-number", kind=type(got).__name__)
    value = got.detach().double().reshape(())
    for name, loss in variants.items():
        if close(value, loss.double(), 1e-5):
            if name != "right":
                key = _TEACHER_FORCING_MISTAKES[name]
                raise Wrong.named_or_differs(MISTAKES, MESSAGES, key, bos=BOS_ID)
            if not got.requires_grad:
                raise Wrong.named(MISTAKES, "tf-detached")
            _expect_gradients_everywhere(model, got)
            return ("<bos> first, the gold tokens shifted right, the encoder's final state, "
                    "and the mean over the real target tokens are right.")  # fmt: skip
    named = _confirmed_other_loss(fn, value, (model, src, lengths, tgt_out))
    if named is not None:
        raise named
    real = tgt_out != PAD_ID
    raise Wrong(loss_described(value.item(), variants["right"].item(), real))


def _expect_gradients_everywhere(model: Seq2Seq, loss: Tensor) -> None:
    """Every parameter of the model gets a gradient from the loss (the encoder's too)."""
    model.zero_grad()
    loss.backward()
    cut = [name for name, p in model.named_parameters() if p.grad is None or not p.grad.any()]
    if cut:
        raise Wrong.named(MISTAKES, "tf-no-gradient", names=", ".join(cut[:3]))


def _tf_case(seed: int, sources: tuple, targets: tuple) -> tuple:
    """A small untrained ``Seq2Seq`` and a padded batch: ``(model, src, src_lengths,
    tgt_out)``, the sources and targets of the given lengths (each target with its <eos>)."""
    V = NUM_SPECIALS + 6
    torch.manual_seed(seed)
    model = Seq2Seq(Seq2SeqConfig(vocab_size=V, embed_dim=6, hidden_dim=8))
    g = torch.Generator().manual_seed(seed + 1)

    def symbols(n: int) -> Tensor:
        return torch.randint(NUM_SPECIALS, V, (n,), generator=g)

    src, lengths = pad_sequences([symbols(n) for n in sources], pad_value=PAD_ID)
    eos = torch.tensor([EOS_ID])
    tgt_out, _ = pad_sequences([torch.cat([symbols(n), eos]) for n in targets], PAD_ID)
    return model, src, lengths, tgt_out


def _other_losses(value: Tensor, model: Seq2Seq, src, lengths, tgt_out) -> tuple[Tensor, set]:
    """The right per-token losses ``(B, T)``, and the ids of the other mistakes that give the
    loss ``value``: wrong normalisations of them, or a wrong decoder input, context, target or
    loss function."""
    with torch.no_grad():
        per_token, candidates = _more_teacher_forcing_variants(model, src, lengths, tgt_out)
    found = {k for k, loss in candidates.items() if close(value, loss.double(), 1e-5)}
    named = normalisation_named(value, per_token, tgt_out != PAD_ID)
    return per_token, found | {named} if named else found


def _confirmed_other_loss(fn: Callable, value: Tensor, case: tuple) -> Wrong | None:
    """The other mistake that gives the reader's loss ``value`` on ``case`` and on a second
    batch of other lengths too (one number alone can match a mistake by chance), named."""
    per_token, keys = _other_losses(value, *case)
    if not keys:
        return None
    other = _tf_case(1, (3, 6, 2, 4), (5, 2, 3, 1))
    try:  # the reader's code on a second batch; if it fails there, nothing is named
        again = fn(*(t.clone() if isinstance(t, Tensor) else t for t in other))
    except Exception:  # noqa: BLE001 (any error of theirs: the name is just not confirmed)
        return None
    if not (isinstance(again, Tensor) and again.numel() == 1):
        return None
    keys &= _other_losses(again.detach().double().reshape(()), *other)[1]
    if len(keys) != 1:
        return None
    key, real = keys.pop(), case[3] != PAD_ID
    table = LOSS_MISTAKES if key in LOSS_MISTAKES else MISTAKES
    return Wrong.named(table, key, ratio=value.item() / per_token[real].mean().item(),
                       **counts(real))  # fmt: skip


def _more_teacher_forcing_variants(model: Seq2Seq, src, lengths, tgt_out):
    """The right per-token losses ``(B, T)``, and the loss of each mistake of ``MISTAKES``."""
    outputs, state = model.encoder(src, lengths)  # (B, S, D), (1, B, D)
    context, tgt_in = last_hidden(state), _shift_right(tgt_out)  # (B, D), (B, T)
    logits = model.decoder(tgt_in, context, state)[0]  # (B, T, V)
    per_token = F.cross_entropy(logits.transpose(1, 2), tgt_out, reduction="none")  # (B, T)
    overwritten = tgt_out.clone()
    overwritten[:, 0] = BOS_ID  # (B, T): <bos> written over y_1
    no_eos = tgt_out.masked_fill(tgt_out == EOS_ID, PAD_ID)
    inputs_real = tgt_in != PAD_ID  # one position too many after each <eos>
    eos_first = _shift_right(tgt_out, EOS_ID)  # (B, T): <eos> where <bos> belongs
    left = torch.cat([tgt_out[:, 1:], torch.full_like(tgt_out[:, :1], BOS_ID)], dim=1)
    flipped = model.encoder(src.flip(1), lengths)[1]  # (1, B, D): the source read backwards
    return per_token, {
        "tf-bos-overwrites-first-target": sequence_loss(
            model.decoder(overwritten, context, state)[0], tgt_out
        ),
        "tf-context-first-output": sequence_loss(
            model.decoder(tgt_in, outputs[:, 0], state)[0], tgt_out
        ),
        "tf-context-last-column": sequence_loss(
            model.decoder(tgt_in, outputs[:, -1], state)[0], tgt_out
        ),
        "tf-context-mean": sequence_loss(model.decoder(tgt_in, outputs.mean(1), state)[0], tgt_out),
        "tf-eos-not-trained": sequence_loss(logits, no_eos),
        "tf-mask-from-inputs": per_token[inputs_real].mean(),
        "tf-softmax-before-loss": sequence_loss(logits.softmax(-1), tgt_out),
        "tf-label-smoothing": F.cross_entropy(
            logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID, label_smoothing=0.1
        ),
        "tf-targets-by-column": F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), tgt_out.t().reshape(-1), ignore_index=PAD_ID
        ),
        "tf-logits-by-column": F.cross_entropy(
            logits.transpose(0, 1).reshape(-1, logits.shape[-1]),
            tgt_out.reshape(-1),
            ignore_index=PAD_ID,
        ),
        "tf-eos-first": sequence_loss(model.decoder(eos_first, context, state)[0], tgt_out),
        "tf-shifted-left": sequence_loss(model.decoder(left, context, state)[0], tgt_out),
        "tf-ignore-eos": F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=EOS_ID),
        "tf-source-reversed": sequence_loss(
            model.decoder(tgt_in, last_hidden(flipped), flipped)[0], tgt_out
        ),  # fmt: skip
    }


# --- one step of the Bahdanau decoder (chapter 7) -------------------------------------------------


def _expect_weights(weights: Tensor, want: Tensor, attend: Callable, states: tuple,
                    src_mask: Tensor) -> None:  # fmt: skip
    """The weights: a distribution over the real source positions, asked by s'_{t-1}
    (``states``: s'_{t-1}, the reader's s'_t and the encoder states)."""
    state, new_state, memory = states
    B, S = src_mask.shape
    if not close(weights, want):  # a masking mistake, on the scores up to a constant per row
        wrong = masking_mistake(weights, attend(last_hidden(state), None)[1].log(), src_mask)
        if wrong.mistake not in (None, "softmax-ignores-mask"):  # that one: bahdanau-no-mask
            raise wrong
    sums = weights.sum(-1)  # (B,)
    if not close(sums, torch.ones(B)):
        real = weights.masked_select(src_mask)  # (NaN where one -inf was softmaxed alone)
        if close(real, torch.ones_like(real)):
            raise Wrong.named(MISTAKES, "bahdanau-softmax-size-1")
        if close(weights.sum(0), torch.ones(S)):
            raise Wrong.named(MISTAKES, "bahdanau-softmax-batch")
        raise Wrong.differs(
            MESSAGES, "bahdanau-row-sums", sums=[round(x, 4) for x in sums.tolist()]
        )
    if (weights.masked_select(~src_mask).abs() > 1e-7).any():
        if close(weights, attend(last_hidden(state), None)[1]):
            raise Wrong.named(MISTAKES, "bahdanau-no-mask")
        raise Wrong.differs(MESSAGES, "bahdanau-padding-weight")
    if not close(weights, want):
        if close(weights, attend(new_state[-1])[1]):
            raise Wrong.named(MISTAKES, "bahdanau-luong-query")
        for query, asked in _encoder_queries(memory, src_mask).items():
            if close(weights, attend(asked)[1]):
                raise Wrong.named(MISTAKES, "bahdanau-query-from-encoder",
                                  query=say(MESSAGES, query))  # fmt: skip
        raise Wrong.differs(MESSAGES, "bahdanau-weights-differ")


def _encoder_queries(memory: Tensor, src_mask: Tensor) -> dict[str, Tensor]:
    """The encoder states a reader may ask with in the place of s'_{t-1}: each ``(B, D)``."""
    real = src_mask[..., None].to(memory.dtype)  # (B, S, 1)
    last_real = src_mask.sum(-1) - 1  # (B,)
    return {
        "query-last": memory[:, -1],
        "query-first": memory[:, 0],
        "query-last-real": memory[torch.arange(len(memory)), last_real],
        "query-mean": memory.mean(1),
        "query-mean-real": (memory * real).sum(1) / real.sum(1),
    }


def _expect_state_and_logits(decoder, prev: Tensor, state: Tensor, attend: Callable,
                             got: tuple[Tensor, Tensor], want: tuple[Tensor, Tensor]) -> None:  # fmt: skip
    """The new state from [y_{t-1}; c_t], the logits from [s'_t; c_t]."""
    new_state, logits = got
    want_state, want_logits = want
    context, _ = attend(last_hidden(state))  # (B, 1, D)
    with torch.no_grad():
        y = decoder.embedding(prev)[:, None]  # (B, 1, E)
        without = [decoder.rnn(torch.cat([y, c], -1), state)[1] for c in
                   (torch.zeros_like(context), last_hidden(state)[:, None])]  # fmt: skip
    if not close(new_state, want_state):
        if any(close(new_state, s) for s in without):
            raise Wrong.named(MISTAKES, "bahdanau-context-not-fed")
        if close(new_state, state) and close(logits, want_logits):
            raise Wrong.named(MISTAKES, "bahdanau-old-state-returned")
        with torch.no_grad():
            from_zero = decoder.rnn(torch.cat([y, context], -1))[1]  # no initial state
        if close(new_state, from_zero):
            raise Wrong.named(MISTAKES, "bahdanau-rnn-without-state")
        with torch.no_grad():
            swapped = decoder.rnn(torch.cat([context, y], -1), state)[1]  # [c_t; y_{t-1}]
        if close(new_state, swapped):
            raise Wrong.named(MISTAKES, "bahdanau-state-order")
        raise Wrong.differs(MESSAGES, "bahdanau-state-differs")
    if not close(logits, want_logits):
        with torch.no_grad():  # [c_t; s'_t]
            swapped = decoder.out(torch.cat([context, last_hidden(want_state)[:, None]], -1))
        if close(logits, swapped[:, 0]):
            raise Wrong.named(MISTAKES, "bahdanau-logits-order")
        for how, normalised in (("softmax", want_logits.softmax(-1)),
                                ("log_softmax", want_logits.log_softmax(-1))):  # fmt: skip
            if close(logits, normalised):
                raise Wrong.named(MISTAKES, "bahdanau-logits-normalised", how=how)
        with torch.no_grad():  # out([s'_{t-1}; c_t])
            old = decoder.out(torch.cat([last_hidden(state)[:, None], context], -1))[:, 0]
        if close(logits, old):
            raise Wrong.named(MISTAKES, "bahdanau-logits-old-state")
        raise Wrong.named(MISTAKES, "bahdanau-logits")


@check("Bahdanau decoder step", call="fn(decoder, prev, state, memory, src_mask)")
def check_bahdanau_step(fn: Callable[..., tuple]) -> Verdict:
    """``fn(decoder, prev, state, memory, src_mask) -> (logits, state, weights)``: one step of
    chapter 7's ``BahdanauDecoder`` (its ``step`` method, ``decoder`` in the place of ``self``).

    prev ``(B,)`` the previous tokens, state ``(1, B, D)`` the decoder state ``s'_{t-1}``,
    memory ``(B, S, D)`` the encoder states, src_mask ``(B, S)`` bool (True = a real source
    token); returns logits ``(B, V)``, the new state ``(1, B, D)`` and the weights ``(B, S)``."""
    V, E, D, A, B, S = NUM_SPECIALS + 6, 6, 8, 4, 3, 5  # A != S: the two errors of a size differ
    torch.manual_seed(0)
    decoder = BahdanauDecoder(V, E, D, attn_dim=A)
    g = torch.Generator().manual_seed(1)
    lengths = torch.tensor([5, 2, 3])  # the first row is full, so no column is all padding
    src_mask = padding_mask(lengths, S)  # (B, S)
    memory = torch.randn(B, S, D, generator=g)  # random at the padding too: it must not count
    state = torch.randn(1, B, D, generator=g)  # s'_{t-1}
    prev = torch.tensor([NUM_SPECIALS, NUM_SPECIALS + 3, BOS_ID])  # (B,)
    with torch.no_grad():
        want_logits, want_state, want_weights = decoder.step(prev, state, memory, src_mask)
        try:
            got = fn(decoder, prev.clone(), state.clone(), memory.clone(), src_mask.clone())
        except RuntimeError as err:  # the context of the projected keys: E + A, not E + D
            if f"Expected {E + D}, got {E + A}" not in str(err):
                raise
            raise Wrong.named(MISTAKES, "bahdanau-projected-values", A=A, D=D) from err
    if not unpacks_to(got, 3):
        raise Wrong.differs(MESSAGES, "bahdanau-not-a-triple")
    logits = expect_tensor(got[0], "the logits", (B, V)).detach().float()
    if getattr(got[1], "shape", None) == (B, 1, D) and close(got[1].transpose(0, 1), want_state):
        raise Wrong.named(MISTAKES, "bahdanau-output-as-state", B=B, D=D)
    new_state = expect_tensor(got[1], "the new state", (1, B, D)).detach().float()
    weights = got[2]
    if isinstance(weights, Tensor) and tuple(weights.shape) == (B, 1, S):
        raise Wrong.named(MISTAKES, "bahdanau-weights-query-axis", B=B, S=S)
    weights = expect_tensor(weights, "the weights", (B, S)).detach().float()

    def attend(query: Tensor, mask: Tensor | None = src_mask) -> tuple[Tensor, Tensor]:
        with torch.no_grad():
            context, w = decoder.attention(
                query[:, None], memory, memory, mask=None if mask is None else mask[:, None]
            )  # (B, 1, D), (B, 1, S)
        return context, w[:, 0]

    _expect_weights(weights, want_weights, attend, (state, new_state, memory), src_mask)
    _expect_state_and_logits(decoder, prev, state, attend, (new_state, logits),
                             (want_state, want_logits))  # fmt: skip
    return ("the previous state asks, padding gets weight 0, [y_{t-1}; c_t] feeds the "
            "recurrent step and the logits come from [s'_t; c_t].")  # fmt: skip
