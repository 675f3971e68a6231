"""Blind set B20, check_kv_cache (chapters 13 and 15): one decoder block's key/value cache as
readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


# ---------------------------------------------------------------- mistakes


class CacheReturnsNewOnly:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=2)
            self.v = torch.cat([self.v, v], dim=2)
        return k, v  # returned the new positions only

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheCatOnHeads:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=1)  # dim 1 is H, not T
            self.v = torch.cat([self.v, v], dim=1)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheNewFirst:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is not None:
            k = torch.cat([k, self.k], dim=2)  # new positions in front of the old ones
            v = torch.cat([v, self.v], dim=2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReorderNoop:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is not None:
            k, v = torch.cat([self.k, k], 2), torch.cat([self.v, v], 2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> None:
        self.k.index_select(0, index)  # result thrown away
        self.v.index_select(0, index)


class CacheReorderHeads:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is not None:
            k, v = torch.cat([self.k, k], 2), torch.cat([self.v, v], 2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> None:
        self.k = self.k[:, index]  # indexed the head axis
        self.v = self.v[:, index]


class CacheReorderKeysOnly:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is not None:
            k, v = torch.cat([self.k, k], 2), torch.cat([self.v, v], 2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> None:
        self.k = self.k.index_select(0, index)  # forgot the values


class CacheReturnsOld:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
            return k, v
        past_k, past_v = self.k, self.v
        self.k, self.v = torch.cat([self.k, k], 2), torch.cat([self.v, v], 2)
        return torch.cat([past_k, k], 2)[:, :, :-1], past_v  # returned the cache before the write


class CacheSharedClassList:
    ks: list = []  # class attributes: every block's cache shares them
    vs: list = []

    def __init__(self) -> None:
        self.ks.clear()
        self.vs.clear()

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.ks.append(k)
        self.vs.append(v)
        return torch.cat(self.ks, 2), torch.cat(self.vs, 2)

    def reorder(self, index: Tensor) -> None:
        self.ks[:] = [k[index] for k in self.ks]
        self.vs[:] = [v[index] for v in self.vs]


class CacheWholeBuffer:
    def __init__(self) -> None:
        self.k = self.v = None
        self.length = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        if self.k is None:
            self.k = k.new_zeros(B, H, 64, Dh)
            self.v = v.new_zeros(B, H, 64, v.shape[-1])
        self.k[:, :, self.length : self.length + T] = k
        self.v[:, :, self.length : self.length + T] = v
        self.length += T
        return self.k, self.v  # the whole buffer, unfilled positions included

    def reorder(self, index: Tensor) -> None:
        self.k, self.v = self.k[index], self.v[index]


class CacheGrowNoCopy:
    def __init__(self) -> None:
        self.k = self.v = None
        self.length = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        end = self.length + T
        if self.k is None or end > self.k.shape[2]:
            size = max(end, 4, 0 if self.k is None else 2 * self.k.shape[2])
            self.k = k.new_zeros(B, H, size, Dh)  # a bigger buffer, but the old keys not copied
            self.v = v.new_zeros(B, H, size, v.shape[-1])
        self.k[:, :, self.length : end] = k
        self.v[:, :, self.length : end] = v
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        self.k, self.v = self.k[index], self.v[index]


class CacheReorderInPlace:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is not None:
            k, v = torch.cat([self.k, k], 2), torch.cat([self.v, v], 2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> None:
        n = len(index)
        self.k[:n] = self.k[index]  # in place; the rows past n are left behind
        self.v[:n] = self.v[index]


class CacheSortedIndex:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], 2)
            self.v = torch.cat([self.v, v], 2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        # sorted the index first, "to keep the batch in order"
        index = index.sort().values
        self.k, self.v = self.k[index], self.v[index]


# ---------------------------------------------------------------- correct


class CacheCat:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat((self.k, k), dim=-2)
            self.v = torch.cat((self.v, v), dim=-2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[index]
            self.v = self.v[index]


class CacheChunks:
    """A list of the steps' chunks, concatenated when asked."""

    def __init__(self) -> None:
        self.chunks: list[tuple[Tensor, Tensor]] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.chunks.append((k, v))
        return (
            torch.cat([c[0] for c in self.chunks], dim=2),
            torch.cat([c[1] for c in self.chunks], dim=2),
        )

    def reorder(self, index: Tensor) -> None:
        self.chunks = [(k.index_select(0, index), v.index_select(0, index)) for k, v in self.chunks]


class CacheDoublingBuffer:
    """Preallocated buffers written in place, doubled when full."""

    def __init__(self) -> None:
        self.k = self.v = None
        self.n = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        T = k.shape[2]
        if self.k is None or self.n + T > self.k.shape[2]:
            size = max(2, self.n + T, 0 if self.k is None else 2 * self.k.shape[2])
            new_k = k.new_empty(*k.shape[:2], size, k.shape[3])
            new_v = v.new_empty(*v.shape[:2], size, v.shape[3])
            if self.k is not None:
                new_k[:, :, : self.n] = self.k[:, :, : self.n]
                new_v[:, :, : self.n] = self.v[:, :, : self.n]
            self.k, self.v = new_k, new_v
        self.k[:, :, self.n : self.n + T] = k
        self.v[:, :, self.n : self.n + T] = v
        self.n += T
        return self.k[:, :, : self.n], self.v[:, :, : self.n]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[index].contiguous()
            self.v = self.v[index].contiguous()


class CacheDict:
    """Keys and values in one dict, index_select on reorder."""

    def __init__(self) -> None:
        self.store: dict[str, Tensor] = {}

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        for name, new in (("k", k), ("v", v)):
            old = self.store.get(name)
            self.store[name] = new.clone() if old is None else torch.cat([old, new], dim=2)
        return self.store["k"], self.store["v"]

    def reorder(self, index: Tensor) -> None:
        self.store = {name: t.index_select(0, index.long()) for name, t in self.store.items()}


CASES = [
    BlindCase(
        CHECK,
        "returns_new_only",
        CacheReturnsNewOnly,
        "mistake",
        "append_self stores the concatenation but returns only the new k, v",
    ),
    BlindCase(CHECK, "cat_on_heads", CacheCatOnHeads, "mistake", "torch.cat on dim=1 (heads)"),
    BlindCase(
        CHECK, "new_first", CacheNewFirst, "mistake", "torch.cat([new, old]) instead of [old, new]"
    ),
    BlindCase(
        CHECK,
        "reorder_noop",
        CacheReorderNoop,
        "mistake",
        "reorder calls index_select but does not assign the result",
    ),
    BlindCase(
        CHECK, "reorder_heads", CacheReorderHeads, "mistake", "reorder indexes dim 1 (heads)"
    ),
    BlindCase(
        CHECK,
        "reorder_keys_only",
        CacheReorderKeysOnly,
        "mistake",
        "reorder moves the keys but not the values",
    ),
    BlindCase(
        CHECK,
        "returns_old",
        CacheReturnsOld,
        "mistake",
        "returned the cache as it was before this step's write",
    ),
    BlindCase(
        CHECK,
        "shared_class_list",
        CacheSharedClassList,
        "mistake",
        "lists as class attributes, so every block's cache is one list",
    ),
    BlindCase(
        CHECK,
        "whole_buffer",
        CacheWholeBuffer,
        "mistake",
        "preallocated 64 positions and returned the whole buffer, unfilled slots included",
    ),
    BlindCase(
        CHECK,
        "grow_no_copy",
        CacheGrowNoCopy,
        "mistake",
        "when the buffer is full, made a bigger one but did not copy the old keys",
    ),
    BlindCase(
        CHECK,
        "reorder_in_place",
        CacheReorderInPlace,
        "mistake",
        "reorder writes k[:n] = k[index] in place, dropped rows stay",
    ),
    BlindCase(
        CHECK,
        "reorder_sorted_index",
        CacheSortedIndex,
        "mistake",
        "sorted the index before reordering",
    ),
    BlindCase(CHECK, "cat", CacheCat, "correct", "torch.cat on dim -2, fancy indexing"),
    BlindCase(CHECK, "chunks", CacheChunks, "correct", "a list of per-step chunks, cat on return"),
    BlindCase(
        CHECK,
        "doubling_buffer",
        CacheDoublingBuffer,
        "correct",
        "preallocated buffers written in place, doubled when full",
    ),
    BlindCase(CHECK, "dict", CacheDict, "correct", "a dict of tensors, clone on the first step"),
]
