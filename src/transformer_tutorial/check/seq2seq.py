"""Encoder-decoder check: the training loss with teacher forcing (chapter 4); one step of the
Bahdanau decoder (chapter 7) has its own module, bahdanau.py."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from ..seq2seq import NUM_SPECIALS, Seq2Seq, Seq2SeqConfig, last_hidden, sequence_loss
from ..sequences import BOS_ID, EOS_ID, PAD_ID, pad_sequences
from .diagnoses import MISTAKES as LOSS_MISTAKES
from .diagnoses import counts, loss_described, normalisation_named
from .engine import check
from .tensors import close
from .verdict import Verdict, Wrong

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
    "tf-shifted-twice": "the targets are shifted once more: the decoder's inputs already start "
    "with <bos> (tgt_in is tgt_out shifted right), so the logits at t predict tgt_out[:, t]. "
    "Comparing logits[:, :-1] with tgt_out[:, 1:] asks each position for the token after the "
    "one it should predict.",
    "tf-last-target-dropped": "the last column of the targets is left out (logits[:, :-1] "
    "against tgt_out[:, :-1]): that column holds the <eos> of the longest sentences, which the "
    "model must learn to predict too. Compare all T positions, padding ignored.",
    "tf-source-lengths-ignored": "the encoder runs with every source at full length, so it reads "
    "the padding of the shorter sources as words, and their last state is taken after the "
    "padding: pass src_lengths, as chapter 4's encoder(src, src_lengths) does.",
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
    full = model.encoder(src, torch.full_like(lengths, src.shape[1]))[1]  # padding read as words
    return (
        per_token,
        {
            "tf-bos-overwrites-first-target": sequence_loss(
                model.decoder(overwritten, context, state)[0], tgt_out
            ),
            "tf-context-first-output": sequence_loss(
                model.decoder(tgt_in, outputs[:, 0], state)[0], tgt_out
            ),
            "tf-context-last-column": sequence_loss(
                model.decoder(tgt_in, outputs[:, -1], state)[0], tgt_out
            ),
            "tf-context-mean": sequence_loss(
                model.decoder(tgt_in, outputs.mean(1), state)[0], tgt_out
            ),
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
            "tf-shifted-twice": sequence_loss(logits[:, :-1], tgt_out[:, 1:]),
            "tf-last-target-dropped": sequence_loss(logits[:, :-1], tgt_out[:, :-1]),
            "tf-source-lengths-ignored": sequence_loss(
                model.decoder(tgt_in, last_hidden(full), full)[0], tgt_out
            ),
        },
    )
