"""Blind set B26, check_kv_cache (chapter 15): one decoder block's key/value cache as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


# ---------------------------------------------------------------- mistakes


class CacheCatHeads:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=1)  # (B, H, T, Dh): along T
            self.v = torch.cat([self.v, v], dim=1)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReturnsNew:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return k, v  # the new positions' keys and values

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReturnsPast:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
            return k, v
        past_k, past_v = self.k, self.v
        self.k = torch.cat([self.k, k], dim=2)
        self.v = torch.cat([self.v, v], dim=2)
        return past_k, past_v  # the keys it can attend to: the earlier ones

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheNewFirst:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is not None:
            k, v = torch.cat([k, self.k], dim=2), torch.cat([v, self.v], dim=2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReorderNoop:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k.index_select(0, index)  # result not assigned
        self.v.index_select(0, index)


class CacheReorderHeads:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k = self.k[:, index]  # index the rows
        self.v = self.v[:, index]


class CacheReorderScatter:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        new_k = torch.zeros(len(index), *self.k.shape[1:], dtype=self.k.dtype)
        new_v = torch.zeros(len(index), *self.v.shape[1:], dtype=self.v.dtype)
        new_k[index] = self.k[: len(index)]  # row i goes to place index[i]
        new_v[index] = self.v[: len(index)]
        self.k, self.v = new_k, new_v


class CacheClassList:
    keys: list = []  # noqa: RUF012
    values: list = []  # noqa: RUF012

    def __init__(self) -> None:
        pass  # the lists are already there

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index: Tensor) -> None:
        for i in range(len(self.keys)):
            self.keys[i] = self.keys[i][index]
            self.values[i] = self.values[i][index]


class CacheKeysTwice:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.k

    def reorder(self, index: Tensor) -> None:
        self.k, self.v = self.k[index], self.v[index]


class CacheStack:
    def __init__(self) -> None:
        self.ks, self.vs = [], []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.ks.append(k)
        self.vs.append(v)
        return torch.stack(self.ks, dim=2), torch.stack(self.vs, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.ks = [k[index] for k in self.ks]
        self.vs = [v[index] for v in self.vs]


class CacheNeedsCapacity:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k, self.v = self.k[index], self.v[index]


class CacheReorderReturnsNew:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> CacheReorderReturnsNew:
        new = CacheReorderReturnsNew()
        new.k, new.v = self.k[index], self.v[index]
        return new


class CacheFixedBuffer:
    """A buffer of 16 positions, written in place, as the chapter describes; it never grows."""

    def __init__(self) -> None:
        self.k = self.v = None
        self.length = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        if self.k is None:
            self.k = k.new_zeros(B, H, 16, Dh)
            self.v = v.new_zeros(B, H, 16, v.shape[-1])
        self.k[:, :, self.length : self.length + T] = k
        self.v[:, :, self.length : self.length + T] = v
        self.length += T
        return self.k[:, :, : self.length], self.v[:, :, : self.length]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheGrowNoCopy:
    """A buffer that doubles when full, but the old positions are not copied over."""

    def __init__(self) -> None:
        self.k = self.v = None
        self.length = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        end = self.length + T
        if self.k is None or end > self.k.shape[2]:
            size = max(end, 4, 2 * (0 if self.k is None else self.k.shape[2]))
            self.k = k.new_zeros(B, H, size, Dh)
            self.v = v.new_zeros(B, H, size, v.shape[-1])
        self.k[:, :, self.length : end] = k
        self.v[:, :, self.length : end] = v
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReorderKeysOnly:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k = self.k.index_select(0, index)


# ---------------------------------------------------------------- correct variants


class CacheChunks:
    """A list of chunks, concatenated when asked; reorder indexes every chunk."""

    def __init__(self) -> None:
        self.k_chunks: list[Tensor] = []
        self.v_chunks: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k_chunks.append(k)
        self.v_chunks.append(v)
        return torch.cat(self.k_chunks, dim=-2), torch.cat(self.v_chunks, dim=-2)

    def reorder(self, index: Tensor) -> None:
        self.k_chunks = [c.index_select(0, index) for c in self.k_chunks]
        self.v_chunks = [c.index_select(0, index) for c in self.v_chunks]


class CacheConcat:
    """Plain torch.cat on every step; the first step stores a copy."""

    def __init__(self) -> None:
        self.keys: Tensor | None = None
        self.values: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.keys is None:
            self.keys, self.values = k.clone(), v.clone()
        else:
            self.keys = torch.cat((self.keys, k), dim=2)
            self.values = torch.cat((self.values, v), dim=2)
        return self.keys, self.values

    def reorder(self, index: Tensor) -> None:
        if self.keys is not None:
            self.keys = self.keys[index]
            self.values = self.values[index]


class CacheDoubling:
    """Buffers that double when full, written in place; the projected memory kept too, with an
    optional cross argument to reorder."""

    def __init__(self, capacity: int = 2) -> None:
        self.capacity, self.length = capacity, 0
        self.self_k = self.self_v = None
        self.cross_k = self.cross_v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.length + k.size(2)
        if self.self_k is None or end > self.self_k.size(2):
            size = max(end, self.capacity, 2 * (0 if self.self_k is None else self.self_k.size(2)))
            new_k = k.new_empty(*k.shape[:2], size, k.size(3))
            new_v = v.new_empty(*v.shape[:2], size, v.size(3))
            if self.self_k is not None:
                new_k[:, :, : self.length] = self.self_k[:, :, : self.length]
                new_v[:, :, : self.length] = self.self_v[:, :, : self.length]
            self.self_k, self.self_v = new_k, new_v
        self.self_k[:, :, self.length : end] = k
        self.self_v[:, :, self.length : end] = v
        self.length = end
        return self.self_k[:, :, :end], self.self_v[:, :, :end]

    def reorder(self, index: Tensor, cross: bool = True) -> None:
        if self.self_k is not None:
            self.self_k = self.self_k[index]
            self.self_v = self.self_v[index]
        if cross and self.cross_k is not None:
            self.cross_k, self.cross_v = self.cross_k[index], self.cross_v[index]


class CacheDict:
    """A dict with "k" and "v"; index_select for the reorder."""

    def __init__(self) -> None:
        self.store: dict[str, Tensor] = {}

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        for name, new in (("k", k), ("v", v)):
            old = self.store.get(name)
            self.store[name] = new if old is None else torch.cat([old, new], dim=2)
        return self.store["k"], self.store["v"]

    def reorder(self, index: Tensor) -> None:
        self.store = {name: t.index_select(0, index) for name, t in self.store.items()}


CASES = [
    BlindCase(
        CHECK,
        "cat_along_heads",
        CacheCatHeads,
        "mistake",
        "I concatenated along dim=1, thinking of (B, T, ...), but that is the heads axis.",
    ),
    BlindCase(
        CHECK,
        "returns_only_new",
        CacheReturnsNew,
        "mistake",
        "append_self stores everything but returns only the new positions' k and v.",
    ),
    BlindCase(
        CHECK,
        "returns_past_only",
        CacheReturnsPast,
        "mistake",
        "append_self returns the keys and values from before this step, without the new ones.",
    ),
    BlindCase(
        CHECK,
        "new_positions_first",
        CacheNewFirst,
        "mistake",
        "I wrote torch.cat([k, self.k]): the new positions end up before the old ones.",
    ),
    BlindCase(
        CHECK,
        "reorder_result_dropped",
        CacheReorderNoop,
        "mistake",
        "reorder calls index_select but does not assign the result back.",
    ),
    BlindCase(
        CHECK,
        "reorder_on_heads_axis",
        CacheReorderHeads,
        "mistake",
        "reorder indexes dim 1 (self.k[:, index]) instead of the batch rows.",
    ),
    BlindCase(
        CHECK,
        "reorder_scatter_not_gather",
        CacheReorderScatter,
        "mistake",
        "reorder sends row i to place index[i] (new[index] = old) instead of taking row "
        "index[i] for place i.",
    ),
    BlindCase(
        CHECK,
        "class_level_lists",
        CacheClassList,
        "mistake",
        "I declared keys = [] and values = [] on the class, so every cache shares the same lists.",
    ),
    BlindCase(
        CHECK,
        "keys_returned_twice",
        CacheKeysTwice,
        "mistake",
        "append_self returns (self.k, self.k): a typo, the values are never returned.",
    ),
    BlindCase(
        CHECK,
        "stack_not_cat",
        CacheStack,
        "mistake",
        "I keep a list of steps and return torch.stack(..., dim=2) instead of torch.cat.",
    ),
    BlindCase(
        CHECK,
        "init_needs_capacity",
        CacheNeedsCapacity,
        "mistake",
        "My __init__ takes a capacity argument with no default.",
    ),
    BlindCase(
        CHECK,
        "reorder_returns_new_cache",
        CacheReorderReturnsNew,
        "mistake",
        "reorder returns a new reordered cache and leaves self as it was.",
    ),
    BlindCase(
        CHECK,
        "buffer_never_grows",
        CacheFixedBuffer,
        "mistake",
        "A buffer of 16 positions written in place; it never grows, so a 17th position fails.",
    ),
    BlindCase(
        CHECK,
        "grow_without_copy",
        CacheGrowNoCopy,
        "mistake",
        "The buffer doubles when full, but I forgot to copy the positions already cached into "
        "the new one.",
    ),
    BlindCase(
        CHECK,
        "reorder_keys_only",
        CacheReorderKeysOnly,
        "mistake",
        "reorder moves the keys but I forgot the values.",
    ),
    BlindCase(
        CHECK,
        "list_of_chunks",
        CacheChunks,
        "correct",
        "A list of chunks concatenated when asked; reorder indexes every chunk.",
    ),
    BlindCase(
        CHECK,
        "cat_each_step",
        CacheConcat,
        "correct",
        "torch.cat at every step, a clone at the first; reorder with self.keys[index].",
    ),
    BlindCase(
        CHECK,
        "doubling_buffers",
        CacheDoubling,
        "correct",
        "Buffers that double when full, written in place; an optional capacity, cross_k/cross_v "
        "kept and an optional cross argument to reorder.",
    ),
    BlindCase(
        CHECK,
        "dict_store",
        CacheDict,
        "correct",
        'A dict with "k" and "v", index_select in reorder.',
    ),
]
