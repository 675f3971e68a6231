"""The key/value cache check (chapters 13 and 15): the reader's cache alone, then in every block
of the book's decoder, against recomputing the whole prefix."""

from __future__ import annotations

from functools import partial

import torch
from torch import Tensor

from ..sequences import BOS_ID
from ..transformer import KVCache
from .decoding import decoding_case
from .engine import check
from .tensors import close, randn
from .verdict import Verdict, Wrong

MISTAKES = {
    "kv-cache-whole-buffer": "a new cache's first append_self of one position returned {got} "
    "positions: return only the positions appended so far, (B, H, T_past + T_new, Dh) -- "
    "attention would read the unfilled rest of a buffer as keys. Slice a preallocated buffer "
    "to its filled length, or concatenate.",
}

# --- the key/value cache ------------------------------------------------------------------------

_AXES = {0: "batch", 1: "heads", 2: "positions", 3: "feature"}


def _history_mistake(name: str, got: object, parts: list[Tensor]) -> str:
    """Why ``got`` is not ``parts`` joined along the positions axis (dim 2)."""
    want = torch.cat(parts, dim=2)
    shapes = " then ".join(str(tuple(p.shape)) for p in parts)
    if not isinstance(got, Tensor):
        return f"append_self should return tensors, got {type(got).__name__} for the {name}."
    if len(parts) > 1 and close(got, parts[-1]):
        return (f"append_self returns only the new {name}, not the history: after appending "
                f"{shapes} it must return all of them, {tuple(want.shape)} -- attention at "
                "step t reads the keys and values of every position 0..t.")  # fmt: skip
    for d in (0, 1, 3):
        if close(got, torch.cat(parts, dim=d)):
            return (f"the {name} are appended along the {_AXES[d]} axis (dim {d}): after "
                    f"appending {shapes} yours are {tuple(got.shape)}; new positions go on "
                    f"dim 2 of (B, H, T, Dh), giving {tuple(want.shape)}.")  # fmt: skip
    return (f"after appending {shapes} the {name} returned should be all of them in order "
            f"along dim 2, {tuple(want.shape)}; yours differ.")  # fmt: skip


_NAMES = ("keys", "values")


def _append(cache, new: tuple, pieces: tuple, explain=_history_mistake) -> None:
    """Call the reader's ``append_self(k, v)``: each of its two results must be the pieces so
    far and the new one joined along the positions; otherwise ``explain`` says why not."""
    result = cache.append_self(*new)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise Wrong("append_self should return a pair (all keys, all values) so far.")
    for name, got, parts, latest in zip(_NAMES, result, pieces, new, strict=True):
        parts.append(latest)
        if not (isinstance(got, Tensor) and close(got, torch.cat(parts, dim=2))):
            raise Wrong(explain(name, got, parts))


def _reorder_mistake(name: str, got: object, parts: list, before: dict, index: Tensor) -> str:
    """Why the {name} returned by the first ``append_self`` after ``reorder(index)`` are
    ``got``; ``before[name]`` are all of them before the reorder, ``parts[-1]`` the new ones."""
    order, old, new = index.tolist(), before[name], parts[-1]
    if not isinstance(got, Tensor):
        return f"append_self should return tensors, got {type(got).__name__} for the {name}."
    if close(got, torch.cat([old, new], dim=2)):
        return (f"reorder({order}) left the cached {name} as they were: row 0 must now hold "
                f"what row {order[0]} held. In beam search a hypothesis that continues another "
                "one would attend to the wrong history, and its next step would differ from "
                "recomputing its prefix.")  # fmt: skip
    for d in (1, 2):
        if close(got, torch.cat([old.index_select(d, index), new], dim=2)):
            return (f"reorder picks the {name} along the {_AXES[d]} axis (dim {d}), but it "
                    f"must keep batch rows, dim 0 of (B, H, T, Dh): after reorder({order}) row "
                    f"0 holds what row {order[0]} held.")  # fmt: skip
    return f"after reorder({order}) and one more append_self the {name} are not the right rows."


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


def _decoder_mistake(cls: type) -> str | None:
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
                moved = f", after cache.reorder({index.tolist()}) at step {when}" * (t >= when)
                return (f"in the book's decoder with your cache, the logits of step {t} (the "
                        f"token at position {t}) differ from recomputing the whole prefix by up "
                        f"to {float((step - again).abs().max()):.3g}{moved}: the cache must keep "
                        "the keys and values of every position for the whole output.")  # fmt: skip
    return None


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
    keys = second.append_self(*new(1, 41))
    if isinstance(keys, tuple) and isinstance(keys[0], Tensor) and keys[0].shape[2] not in (1, 2):
        raise Wrong.named(MISTAKES, "kv-cache-whole-buffer", got=keys[0].shape[2])
    if isinstance(keys, tuple) and isinstance(keys[0], Tensor) and keys[0].shape[2] == 2:
        raise Wrong(
            "two caches share one history: a new cache's first append_self returned "
            f"{keys[0].shape[2]} positions, with the keys another cache was given. Make "
            "the lists or tensors in __init__ (self.k = None), not in the class body or as "
            "a default argument, which every instance shares."
        )
    cache, pieces = cls(), ([], [])
    for step, T_new in enumerate((1, 1, 2)):  # 4 positions: (B, H, 4, Dh)
        _append(cache, new(T_new, step), pieces)
    index = torch.tensor([2, 0, 0])  # beam 2 goes on in row 0, beam 0 in rows 1 and 2
    cache.reorder(index)
    before = {name: torch.cat(parts, dim=2) for name, parts in zip(_NAMES, pieces, strict=True)}
    pieces = tuple([old.index_select(0, index)] for old in before.values())
    _append(cache, new(1, 30), pieces, partial(_reorder_mistake, before=before, index=index))
    words = _decoder_mistake(cls)
    if words:
        raise Wrong(words)
    return (
        "append_self keeps every position's keys and values, reorder follows the batch "
        "rows, and the book's decoder with your cache gives the logits of recomputing."
    )
