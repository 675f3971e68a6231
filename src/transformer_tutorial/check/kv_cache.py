"""The key/value cache check (chapters 13 and 15): the reader's cache alone, then in every block
of the book's decoder, against recomputing the whole prefix."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch
from torch import Tensor

from ..sequences import BOS_ID
from ..transformer import KVCache
from .decoding import decoding_case
from .engine import check
from .tensors import MISTAKES as TENSORS
from .tensors import close, randn, unpacks_to
from .verdict import Verdict, Wrong

MISTAKES = {
    "kv-cache-first-only": "after appending {shapes} the {name} returned are the first call's "
    "alone: either the later steps are not added to what is stored, or you return what was "
    "stored before this step's were added. append_self stores torch.cat([stored, new], dim=2) "
    "and returns that, the new step included.",
    "kv-cache-stacked": "the {name} come out {got}: torch.stack puts the steps on a new axis. "
    "Join them along the positions' axis, torch.cat(..., dim=2), {want}.",
    "kv-cache-join-not-kept": "after appending {shapes} the {name} returned are the first "
    "ones and the newest only: the joined tensor is returned but not kept, so every call joins "
    "the new positions to the same first ones. Store it in the cache (self.k = torch.cat(...)) "
    "and return what is stored.",
    "kv-cache-whole-buffer": "a new cache's first append_self of one position returned {got} "
    "positions: return only the positions appended so far, (B, H, T_past + T_new, Dh) -- "
    "attention would read the unfilled rest of a buffer as keys. Slice a preallocated buffer "
    "to its filled length, or concatenate.",
    "kv-cache-shared-history": "two caches share one history: a new cache's first append_self "
    "returned {got} positions, with the keys another cache was given. Make the lists or tensors "
    "in __init__ (self.k = None), not in the class body or as a default argument, which every "
    "instance shares.",
    "kv-cache-zero-start": "a new cache's first append_self of one position returned 2 "
    "positions, the first all zeros: the cache starts with a position of zeros that attention "
    "would read as a key. Start empty (self.k = None, or a tensor with 0 positions) and return "
    "exactly the positions appended.",
    "kv-cache-no-history": "append_self returns only the new {name}, not the history: after "
    "appending {shapes} it must return all of them, {want} -- attention at step t reads the keys "
    "and values of every position 0..t.",
    "kv-cache-drops-newest": "each append loses the newest cached position: after appending "
    "{shapes} yours returns {got}, the history without its last position, then the new {name}; "
    "it must return all of them, {want}. A slice that stops one early (t[:, :, :n - 1] where "
    "t[:, :, :n] is meant) does this.",
    "kv-cache-new-first": "the new {name} are put before the cached ones (after appending "
    "{shapes}): position t must sit at index t along dim 2, so append after the history, "
    "torch.cat([cached, new], dim=2).",
    "kv-cache-returns-before-adding": "a new cache's first append_self returned 0 positions: it "
    "returns what the cache held before the new positions were added, or a slice that stops one "
    "position early. Add them first, then return every position so far, (B, H, T_past + T_new, "
    "Dh).",
    "kv-cache-reorder-rows-lost": "after reorder({order}) the next append_self failed ({error}): "
    "the cache no longer holds {B} batch rows. index may repeat a row (beam search goes on with "
    "one hypothesis in two rows) and says the new order: keep one row per entry, "
    "index_select(0, index) or t[index] -- a boolean mask keeps each row at most once.",
    "kv-cache-reorder-fewer-rows": "reorder({order}), keeping 2 of the {B} rows, broke the cache "
    "({error}): greedy search drops its finished sentences this way, and the next append_self "
    "brings 2 rows. The usual causes: the kept rows copied into the old tensors, a gather whose "
    "index is expanded to the old shape, or a batch size kept from the first append. Select the "
    "rows, t[index] or t.index_select(0, index): new tensors of len(index) rows.",
    "kv-cache-values-are-keys": "append_self returns the keys twice: its second result, the "
    "values, holds the keys. Return (all keys, all values) so far.",
    "kv-cache-history-lost": "appended one position at a time, the keys returned at position "
    "{n} are wrong from position {first} on, though the first positions were "
    "right: your cache loses earlier keys once it holds more than a few positions. When a "
    "buffer grows, copy the old keys and values into the new one (or keep a list of pieces and "
    "torch.cat them).",
    "kv-cache-fixed-length": "the cache stops growing: appending position {t} failed or returned "
    "the wrong length. It must hold every position of the output, however long; grow it "
    "(torch.cat, or a buffer that doubles when full).",
    "kv-cache-no-reorder": "reorder({order}) left the cached {name} as they were: row 0 must now "
    "hold what row {first} held. In beam search a hypothesis that continues another one would "
    "attend to the wrong history, and its next step would differ from recomputing its prefix.",
}
_APPENDED = (
    "the {name} are appended along the {axis} axis (dim {d}): after appending {shapes} yours are "
    "{got}; new positions go on dim 2 of (B, H, T, Dh), giving {want}."
)
_REORDERED = (
    "reorder picks the {name} along the {axis} axis (dim {d}), but it must keep batch rows, dim 0 "
    "of (B, H, T, Dh): after reorder({order}) row 0 holds what row {first} held."
)
MISTAKES |= {  # the axis a reader appends along, or reorders along, instead of the right one
    "kv-cache-batch-axis": _APPENDED,
    "kv-cache-heads-axis": _APPENDED,
    "kv-cache-feature-axis": _APPENDED,
    "kv-cache-reorder-heads": _REORDERED,
    "kv-cache-reorder-t": _REORDERED,
}
_APPEND_AXIS = {0: "kv-cache-batch-axis", 1: "kv-cache-heads-axis", 3: "kv-cache-feature-axis"}
_REORDER_AXIS = {1: "kv-cache-reorder-heads", 2: "kv-cache-reorder-t"}

MESSAGES = {
    "kv-cache-first-append-differs": "a new cache's first append_self of one position returned "
    "{got} positions, not the one appended: it must return exactly the positions appended so "
    "far, here {want} -- attention reads every position returned as a key.",
    "kv-cache-not-tensors": "append_self should return tensors, got {kind} for the {name}.",
    "kv-cache-history-differs": "after appending {shapes} the {name} returned should be all of "
    "them in order along dim 2, {want}; yours differ.",
    "kv-cache-not-a-pair": "append_self should return a pair (all keys, all values) so far.",
    "kv-cache-reorder-differs": "after reorder({order}) and one more append_self the {name} are "
    "not the right rows. reorder must put row index[i] in place i, a gather (old[index], or "
    "index_select along the batch axis), not new[index] = old, which sends row i to place "
    "index[i]; and it must keep every position stored so far, so that the next append_self adds "
    "after them.",
    "kv-cache-decoder-differs": "in the book's decoder with your cache, the logits of step {t} "
    "(the token at position {t}) differ from recomputing the whole prefix by up to {gap:.3g}: the "
    "cache must keep the keys and values of every position for the whole output.",
    "kv-cache-decoder-differs-reordered": "in the book's decoder with your cache, the logits of "
    "step {t} (the token at position {t}) differ from recomputing the whole prefix by up to "
    "{gap:.3g}, after cache.reorder({order}) at step {when}: the cache must keep the keys and "
    "values of every position for the whole output.",
}

# --- the key/value cache ------------------------------------------------------------------------

_AXES = {0: "batch", 1: "heads", 2: "positions", 3: "feature"}


def _history_mistake(name: str, got: object, parts: list[Tensor]) -> Wrong:
    """Why ``got`` is not ``parts`` joined along the positions axis (dim 2)."""
    want = tuple(torch.cat(parts, dim=2).shape)
    shapes = " then ".join(str(tuple(p.shape)) for p in parts)
    if not isinstance(got, Tensor):
        return Wrong.differs(MESSAGES, "kv-cache-not-tensors", kind=type(got).__name__, name=name)
    if len(parts) > 1 and close(got, parts[-1]):
        return Wrong.named(MISTAKES, "kv-cache-no-history", name=name, shapes=shapes, want=want)
    if len(parts) == 2 and close(got, torch.cat([parts[0][:, :, :-1], parts[1]], dim=2)):
        return Wrong.named(MISTAKES, "kv-cache-drops-newest", name=name, shapes=shapes,
                           got=tuple(got.shape), want=want)  # fmt: skip
    if len(parts) > 1 and close(got, parts[0]):
        return Wrong.named(MISTAKES, "kv-cache-first-only", name=name, shapes=shapes)
    if len({p.shape for p in parts}) == 1 and close(got, torch.stack(parts, dim=2)):
        return Wrong.named(MISTAKES, "kv-cache-stacked", name=name, got=tuple(got.shape),
                           want=want)  # fmt: skip
    if len(parts) > 2 and close(got, torch.cat([parts[0], parts[-1]], dim=2)):
        return Wrong.named(MISTAKES, "kv-cache-join-not-kept", name=name, shapes=shapes)
    if len(parts) > 1 and close(got, torch.cat([parts[-1], *parts[:-1]], dim=2)):
        return Wrong.named(MISTAKES, "kv-cache-new-first", name=name, shapes=shapes)
    for d in (0, 1, 3):  # joined on another axis (possible when the parts agree elsewhere)
        others = {tuple(p.shape[:d] + p.shape[d + 1 :]) for p in parts}
        if len(others) == 1 and close(got, torch.cat(parts, dim=d)):
            return Wrong.named(MISTAKES, _APPEND_AXIS[d], name=name, axis=_AXES[d], d=d,
                               shapes=shapes, got=tuple(got.shape), want=want)  # fmt: skip
    return Wrong.differs(MESSAGES, "kv-cache-history-differs", shapes=shapes, name=name, want=want)


_NAMES = ("keys", "values")


def _history_lost_or_cut(cls: type, new: Callable, wrong: Wrong) -> Wrong:
    """``wrong`` (only the new positions returned), confirmed on a history of two positions,
    where returning the new ones alone and losing the last cached one differ."""
    cache, old, latest = cls(), new(2, 50), new(1, 51)
    cache.append_self(*old)
    result = cache.append_self(*latest)
    for i, name in enumerate(_NAMES):  # the keys, then the values: the first that is wrong
        got = result[i] if isinstance(result, (tuple, list)) and len(result) > i else result
        parts = [old[i], latest[i]]
        if isinstance(got, Tensor) and close(got, torch.cat(parts, dim=2)):
            continue
        if isinstance(got, Tensor) and close(got, parts[-1]):
            return wrong  # the new positions alone here too: no history, confirmed
        return _history_mistake(name, got, parts)
    return wrong


def _append(cache, new: tuple, pieces: tuple, explain=_history_mistake) -> None:
    """Call the reader's ``append_self(k, v)``: each of its two results must be the pieces so
    far and the new one joined along the positions; otherwise ``explain`` says why not."""
    result = cache.append_self(*new)
    if not unpacks_to(result, 2):
        raise Wrong.differs(MESSAGES, "kv-cache-not-a-pair")
    keys, values = (
        torch.cat([*parts, latest], dim=2) for parts, latest in zip(pieces, new, strict=True)
    )
    if not close(keys, values) and all(isinstance(t, Tensor) for t in result):
        if close(result[0], values) and close(result[1], keys):
            raise Wrong.named(TENSORS, "pair-reversed", first="keys", second="values")
    for name, got, parts, latest in zip(_NAMES, result, pieces, new, strict=True):
        parts.append(latest)
        if not (isinstance(got, Tensor) and close(got, torch.cat(parts, dim=2))):
            if name == "values" and close(got, result[0]):
                raise Wrong.named(MISTAKES, "kv-cache-values-are-keys")
            raise explain(name, got, parts)


def _reorder_mistake(name: str, got: object, parts: list, before: dict, index: Tensor) -> Wrong:
    """Why the {name} returned by the first ``append_self`` after ``reorder(index)`` are
    ``got``; ``before[name]`` are all of them before the reorder, ``parts[-1]`` the new ones."""
    order, old, new = index.tolist(), before[name], parts[-1]
    if not isinstance(got, Tensor):
        return Wrong.differs(MESSAGES, "kv-cache-not-tensors", kind=type(got).__name__, name=name)
    if close(got, torch.cat([old, new], dim=2)):
        return Wrong.named(MISTAKES, "kv-cache-no-reorder", order=order, name=name, first=order[0])
    for d in (1, 2):
        if close(got, torch.cat([old.index_select(d, index), new], dim=2)):
            return Wrong.named(MISTAKES, _REORDER_AXIS[d], name=name, axis=_AXES[d], d=d,
                               order=order, first=order[0])  # fmt: skip
    return Wrong.differs(MESSAGES, "kv-cache-reorder-differs", order=order, name=name)


class _InDecoder:
    """The reader's cache as one decoder block's ``LayerCache``; the projected memory of
    cross-attention, which the reader does not write, is kept here."""

    def __init__(self, theirs) -> None:
        self.theirs = theirs
        self.cross_k: Tensor | None = None
        self.cross_v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        return self.theirs.append_self(k, v)

    def reorder(self, index: Tensor, cross: bool = True) -> None:
        self.theirs.reorder(index)
        if cross and self.cross_k is not None:
            self.cross_k = self.cross_k.index_select(0, index)
            self.cross_v = self.cross_v.index_select(0, index)


def _decoder_mistake(cls: type) -> Wrong | None:
    """Decode with the reader's cache in the book's decoder, one token a step, then reorder
    the rows; compare every step's logits with recomputing the whole prefix."""
    case = decoding_case()
    model, src = case.model, case.src
    B, V = src.shape[0], model.config.tgt_vocab_size
    g = torch.Generator().manual_seed(4)
    tokens = torch.randint(3, V, (B, 8), generator=g)  # (B, T): what the decoder is fed
    tokens[:, 0] = BOS_ID
    index, when = torch.arange(B).flip(0) // 2 * 2, 4  # (B,): rows repeat, as in beam search
    with torch.no_grad():
        memory = model.encode(src)  # (B, S, D)
        cache = KVCache(layers=[_InDecoder(cls()) for _ in model.decoder.layers])
        for t in range(tokens.shape[1]):
            if t == when:  # reorder, as beam search does: rows take another row's history
                cache.reorder(index)
                tokens, memory, src = tokens[index], memory[index], src[index]
            step = model.decode(tokens[:, t : t + 1], memory, src, cache)[:, -1]  # (B, V)
            again = model.decode(tokens[:, : t + 1], memory, src)[:, -1]  # (B, V)
            if not close(step, again, 1e-4):
                gap = float((step - again).abs().max())
                if t < when:
                    return Wrong.differs(MESSAGES, "kv-cache-decoder-differs", t=t, gap=gap)
                return Wrong.differs(MESSAGES, "kv-cache-decoder-differs-reordered", t=t,
                                     gap=gap, order=index.tolist(), when=when)  # fmt: skip
    return None


def _expect_fewer_rows(cache, new: Callable, B: int) -> None:
    """reorder may keep fewer rows than the batch has (greedy search drops finished sentences)."""
    index = torch.tensor([1, 0])  # two of the B rows
    try:
        cache.reorder(index)
        keys, _ = cache.append_self(*(t[:2] for t in new(1, 31)))
    except RuntimeError as err:
        raise Wrong.named(MISTAKES, "kv-cache-reorder-fewer-rows", order=index.tolist(), B=B,
                          error=str(err).split("\n")[0]) from err  # fmt: skip
    if not (isinstance(keys, Tensor) and keys.shape[0] == 2):
        raise Wrong.named(MISTAKES, "kv-cache-reorder-fewer-rows", order=index.tolist(), B=B,
                          error=f"keys {tuple(getattr(keys, 'shape', ()))}")  # fmt: skip


def _expect_long_history(cls: type, new: Callable, steps: int = 40) -> None:
    """A cache grows with the output, position by position, as long as decoding goes on."""
    cache, history = cls(), []
    for t in range(steps):
        k, v = new(1, 100 + t)
        history.append(k)
        try:
            keys, _ = cache.append_self(k.clone(), v)  # history keeps its own copy
        except RuntimeError as err:
            raise Wrong.named(MISTAKES, "kv-cache-fixed-length", t=t) from err
        if not (isinstance(keys, Tensor) and keys.shape[2] == t + 1):
            raise Wrong.named(MISTAKES, "kv-cache-fixed-length", t=t)
        want = torch.cat(history, dim=2)
        if not close(keys, want):
            first = next(i for i in range(t + 1) if not close(keys[:, :, i], want[:, :, i]))
            raise Wrong.named(MISTAKES, "kv-cache-history-lost", n=t + 1, first=first)


def _expect_one_position(result: object, given: Tensor, other: Tensor) -> None:
    """A new cache's first ``append_self`` of one position returns it alone: ``given`` are its
    keys, ``other`` the keys another cache was given just before."""
    if not (isinstance(result, (tuple, list)) and result and isinstance(result[0], Tensor)):
        return  # the probes that follow say what is wrong
    keys, n = result[0], result[0].shape[2]
    if n == 0:
        raise Wrong.named(MISTAKES, "kv-cache-returns-before-adding")
    if n == 1 or keys.dim() != 4:
        return
    if any(close(keys[:, :, i : i + 1], other) for i in range(n)):
        raise Wrong.named(MISTAKES, "kv-cache-shared-history", got=n)
    if n == 2 and not keys[:, :, :1].any() and close(keys[:, :, 1:], given):
        raise Wrong.named(MISTAKES, "kv-cache-zero-start")
    if close(keys[:, :, :1], given) and not keys[:, :, 1:].any():  # the rest of a buffer
        raise Wrong.named(MISTAKES, "kv-cache-whole-buffer", got=n)
    raise Wrong.differs(MESSAGES, "kv-cache-first-append-differs", got=n, want=tuple(given.shape))


@check("key/value cache", build="cls()", call="",
       methods=("cache.append_self(k, v)", "cache.reorder(index)"))  # fmt: skip
def check_kv_cache(cls: type) -> Verdict:
    """``cls()``: an empty cache of one decoder block's self-attention keys and values.
    ``cache.append_self(k, v)`` takes the new positions' keys and values ``(B, H, T_new, Dh)``
    and returns all of them so far, ``(B, H, T_past + T_new, Dh)`` each; ``cache.reorder(index)``
    keeps batch rows ``index`` (a 1-D long tensor, rows may repeat), as beam search needs."""
    B, H, Dh = 3, 3, 4  # B = H: a reorder along the wrong axis still runs

    def new(T_new: int, seed: int) -> tuple[Tensor, Tensor]:
        """New keys and values ``(B, H, T_new, Dh)`` each, float32 as in the model."""
        k, v = randn(2, B, H, T_new, Dh, seed=seed).float()
        return k, v

    first, second = cls(), cls()  # two blocks' caches: each has its own history
    first.append_self(*new(1, 40))
    _expect_one_position(second.append_self(*new(1, 41)), new(1, 41)[0], new(1, 40)[0])
    cache, pieces = cls(), ([], [])
    for step, T_new in enumerate((1, 1, 2)):  # 4 positions: (B, H, 4, Dh)
        try:
            _append(cache, new(T_new, step), pieces)
        except Wrong as wrong:  # one position each so far: losing its last one looks alike
            if wrong.mistake != "kv-cache-no-history":
                raise
            raise _history_lost_or_cut(cls, new, wrong) from None
    _expect_long_history(cls, new)  # longer than the probes' 4 positions, before a reorder
    index = torch.tensor([2, 0, 0])  # beam 2 goes on in row 0, beam 0 in rows 1 and 2
    cache.reorder(index)
    before = {name: torch.cat(parts, dim=2) for name, parts in zip(_NAMES, pieces, strict=True)}
    pieces = tuple([old.index_select(0, index)] for old in before.values())
    try:
        _append(cache, new(1, 30), pieces, partial(_reorder_mistake, before=before, index=index))
    except RuntimeError as err:  # a reorder that kept fewer rows than index asks for
        if "Sizes of tensors must match" not in str(err):
            raise
        raise Wrong.named(MISTAKES, "kv-cache-reorder-rows-lost", order=index.tolist(), B=B,
                          error=str(err).split("\n")[0]) from err  # fmt: skip
    _expect_fewer_rows(cache, new, B)
    wrong = _decoder_mistake(cls)
    if wrong:
        raise wrong
    return (
        "append_self keeps every position's keys and values, reorder follows the batch "
        "rows, and the book's decoder with your cache gives the logits of recomputing."
    )
