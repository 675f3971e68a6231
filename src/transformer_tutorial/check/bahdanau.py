"""The Bahdanau decoder step check (chapter 7): attention over the encoder's outputs, then the recurrent step and the logits."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from ..bahdanau import BahdanauDecoder
from ..seq2seq import NUM_SPECIALS, last_hidden
from ..sequences import BOS_ID, padding_mask
from .diagnoses import masking_mistake
from .engine import check
from .tensors import NAMES as TENSOR_NAMES
from .tensors import close, expect_tensor, unpacks_to
from .verdict import Verdict, Wrong, say

MISTAKES = {
    "bahdanau-no-gradient-to-attention": "the values are right, but no gradient reaches the "
    "attention's weights (W_q, W_k, w_v): the context (or the weights) is detached, or computed "
    "under torch.no_grad(), before it feeds the recurrent step and the logits. Keep it in the "
    "graph, so that training can teach the decoder where to look.",
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
    "bahdanau-mean-context": "the recurrent layer is fed the mean of the encoder's outputs, "
    "chapter 4's fixed summary, in place of this step's context: its input is [y_{{t-1}}; c_t], "
    "with c_t the attention-weighted sum of the memory computed just before.",
    "bahdanau-logits-no-context": "the logits leave the context out: a state stands where c_t "
    "belongs (out([s'_t; s'_t]) or out([s'_t; s'_{{t-1}}])), or zeros. They come from out([s'_t; c_t]), the new state "
    "beside this step's context.",
    "bahdanau-logits": "the state is right but the logits are not: they come from out([s'_t; "
    "c_t]), the new state beside the context.",
    "bahdanau-logits-normalised": "your logits are the {how} of the right logits: return the "
    "output layer's scores, out([s'_t; c_t]), as they are (the loss and the decoding take the "
    "softmax themselves).",
    "bahdanau-logits-old-state": "the logits come from out([s'_{{t-1}}; c_t]), the state you were "
    "given: they come from the new state, out([s'_t; c_t]).",
}

MESSAGES = {
    "bahdanau-gradients-differ": "the values are right, but the gradients of {names} differ "
    "from the book's step: something is detached, or computed outside the graph.",
    "query-last": "the encoder's last position, memory[:, -1]",
    "query-first": "the encoder's first position, memory[:, 0]",
    "query-last-real": "each sentence's last real encoder state",
    "query-mean": "the mean of the encoder states",
    "query-mean-real": "the mean of the real encoder states",
    "bahdanau-row-sums": "each row of weights should sum to 1 over the source positions; the sums "
    "are {sums}.",
    "bahdanau-padding-weight": "padded source positions get weight; they must get exactly 0.",
    "bahdanau-weights-differ": "the weights should be the additive attention of the previous state "
    "s'_{{t-1}} (query) over the encoder states (keys and values): check the query you pass "
    "(the state the decoder carries, not an encoder state or the new state) and the scores "
    "v^T tanh(W_q q + W_k k).",
    "bahdanau-state-differs": "the weights are right but the new state is not: s'_t = "
    "rnn([y_{{t-1}}; c_t], s'_{{t-1}}).",
    "bahdanau-not-a-triple": "return three things: (logits (B, V), the new state (1, B, D), the "
    "attention weights (B, S)).",
}


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
                             got: tuple[Tensor, Tensor], want: tuple[Tensor, Tensor],
                             memory: Tensor) -> None:  # fmt: skip
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
        with torch.no_grad():  # chapter 4's fixed summary in place of c_t
            mean = decoder.rnn(torch.cat([y, memory.mean(1, keepdim=True)], -1), state)[1]
        if close(new_state, mean):
            raise Wrong.named(MISTAKES, "bahdanau-mean-context")
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
        s_t = last_hidden(want_state)[:, None]  # (B, 1, D)
        with torch.no_grad():  # out([s'_t; s'_t]), out([s'_t; s'_{t-1}]), out([s'_t; 0])
            no_context = [decoder.out(torch.cat([s_t, other], -1))[:, 0] for other in
                          (s_t, last_hidden(state)[:, None], torch.zeros_like(s_t))]  # fmt: skip
        if any(close(logits, n) for n in no_context):
            raise Wrong.named(MISTAKES, "bahdanau-logits-no-context")
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
    logits = expect_tensor(got[0], TENSOR_NAMES["logits"], (B, V)).detach().float()
    if getattr(got[1], "shape", None) == (B, 1, D) and close(got[1].transpose(0, 1), want_state):
        raise Wrong.named(MISTAKES, "bahdanau-output-as-state", B=B, D=D)
    new_state = expect_tensor(got[1], TENSOR_NAMES["new-state"], (1, B, D)).detach().float()
    weights = got[2]
    if isinstance(weights, Tensor) and tuple(weights.shape) == (B, 1, S):
        raise Wrong.named(MISTAKES, "bahdanau-weights-query-axis", B=B, S=S)
    weights = expect_tensor(weights, TENSOR_NAMES["weights"], (B, S)).detach().float()

    def attend(query: Tensor, mask: Tensor | None = src_mask) -> tuple[Tensor, Tensor]:
        with torch.no_grad():
            context, w = decoder.attention(
                query[:, None], memory, memory, mask=None if mask is None else mask[:, None]
            )  # (B, 1, D), (B, 1, S)
        return context, w[:, 0]

    _expect_weights(weights, want_weights, attend, (state, new_state, memory), src_mask)
    _expect_state_and_logits(decoder, prev, state, attend, (new_state, logits),
                             (want_state, want_logits), memory)  # fmt: skip
    _expect_gradients(fn, decoder, (prev, state, memory, src_mask))
    return ("the previous state asks, padding gets weight 0, [y_{t-1}; c_t] feeds the "
            "recurrent step and the logits come from [s'_t; c_t].")  # fmt: skip


def _expect_gradients(fn: Callable, decoder: torch.nn.Module, args: tuple) -> None:
    """The step trains as the book's does: the same gradients for every weight of the decoder
    and for the memory, from the logits and the new state."""

    def gradients(step: Callable) -> dict[str, Tensor]:
        decoder.zero_grad()
        prev, state, memory, src_mask = (a.clone() for a in args)
        memory.requires_grad_()
        logits, new_state, _ = step(prev, state, memory, src_mask)
        (logits.sum() + new_state.sum()).backward()
        found = {n: p.grad for n, p in decoder.named_parameters()} | {"memory": memory.grad}
        return {n: torch.zeros(()) if g is None else g.clone() for n, g in found.items()}

    want = gradients(decoder.step)
    got = gradients(lambda *a: fn(decoder, *a))
    decoder.zero_grad()
    differ = [n for n in want if not close(got[n].expand_as(want[n]), want[n])]
    if not differ:
        return
    attention = [n for n in differ if n.startswith("attention.")]
    if attention and not any(got[n].any() for n in attention):
        raise Wrong.named(MISTAKES, "bahdanau-no-gradient-to-attention")
    raise Wrong.differs(MESSAGES, "bahdanau-gradients-differ", names=", ".join(differ[:4]))
