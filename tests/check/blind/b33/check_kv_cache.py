"""Blind set B33, check_kv_cache (chapter 15): one decoder block's key/value cache as readers write
it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


# ---------------------------------------------------------------- mistakes


class CacheReturnsNewOnly:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=2)
            self.v = torch.cat([self.v, v], dim=2)
        return k, v  # the new keys and values

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheCatOverHeads:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=1)  # (B, H, T, Dh): the sequence axis
            self.v = torch.cat([self.v, v], dim=1)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReorderKeysOnly:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(0, index)


class CacheReorderNoOp:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        for cached in (self.k, self.v):
            cached = cached.index_select(0, index)


class CacheReorderHeadsAxis:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k = self.k.index_select(1, index)
        self.v = self.v.index_select(1, index)


class CacheGrowWithoutCopy:
    """Preallocated buffers that double when full, but the old keys are not copied over."""

    def __init__(self) -> None:
        self.k = None
        self.v = None
        self.length = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.length + k.shape[2]
        if self.k is None or end > self.k.shape[2]:
            size = max(end, 4, 2 * (0 if self.k is None else self.k.shape[2]))
            B, H, _, Dh = k.shape
            self.k = k.new_zeros(B, H, size, Dh)
            self.v = v.new_zeros(B, H, size, v.shape[-1])
        self.k[:, :, self.length : end] = k
        self.v[:, :, self.length : end] = v
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        self.k = self.k[index]
        self.v = self.v[index]


class CacheLengthNotAdvanced:
    def __init__(self) -> None:
        self.k = None
        self.v = None
        self.length = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        if self.k is None:
            self.k = k.new_zeros(B, H, 512, Dh)
            self.v = v.new_zeros(B, H, 512, v.shape[-1])
        self.k[:, :, self.length : self.length + T] = k
        self.v[:, :, self.length : self.length + T] = v
        return self.k[:, :, : self.length + T], self.v[:, :, : self.length + T]

    def reorder(self, index: Tensor) -> None:
        self.k = self.k[index]
        self.v = self.v[index]


class CacheFirstCallOnly:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:  # the first step fills the cache
            self.k = k
            self.v = v
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k = self.k[index]
        self.v = self.v[index]


class CacheReturnsKeysTwice:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.k

    def reorder(self, index: Tensor) -> None:
        self.k = self.k[index]
        self.v = self.v[index]


class CacheReorderUnique:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        index = torch.unique(index)  # a row only once
        self.k = self.k[index]
        self.v = self.v[index]


class CacheStack:
    def __init__(self) -> None:
        self.keys: list[Tensor] = []
        self.values: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.stack(self.keys, dim=2), torch.stack(self.values, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.keys = [k[index] for k in self.keys]
        self.values = [v[index] for v in self.values]


class CacheListReorderLastOnly:
    def __init__(self) -> None:
        self.keys: list[Tensor] = []
        self.values: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.keys[-1] = self.keys[-1][index]  # the newest step is the one that moved
        self.values[-1] = self.values[-1][index]


class CacheReorderSortedIndex:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        keep = torch.zeros(self.k.shape[0], dtype=torch.bool)
        keep[index] = True  # the rows to keep
        self.k = self.k[keep]
        self.v = self.v[keep]


# ---------------------------------------------------------------- correct variants


class CacheConcat:
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
            self.k = self.k.index_select(0, index)
            self.v = self.v.index_select(0, index)


class CacheDoublingBuffer:
    def __init__(self, capacity: int = 8) -> None:
        self.capacity = capacity
        self.length = 0
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        start, end = self.length, self.length + k.shape[2]
        if self.k is None or end > self.k.shape[2]:
            size = max(end, self.capacity, 2 * (0 if self.k is None else self.k.shape[2]))
            new_k = k.new_empty(k.shape[0], k.shape[1], size, k.shape[3])
            new_v = v.new_empty(v.shape[0], v.shape[1], size, v.shape[3])
            if self.k is not None:
                new_k[:, :, :start] = self.k[:, :, :start]
                new_v[:, :, :start] = self.v[:, :, :start]
            self.k, self.v = new_k, new_v
        self.k[:, :, start:end] = k
        self.v[:, :, start:end] = v
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[index]
            self.v = self.v[index]


class CacheChunkList:
    def __init__(self) -> None:
        self.chunks: list[tuple[Tensor, Tensor]] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.chunks.append((k, v))
        keys = torch.cat([c[0] for c in self.chunks], dim=2)
        values = torch.cat([c[1] for c in self.chunks], dim=2)
        self.chunks = [(keys, values)]  # merge, so the list stays short
        return keys, values

    def reorder(self, index: Tensor) -> None:
        self.chunks = [(k[index], v[index]) for k, v in self.chunks]


CASES = [
    BlindCase(
        CHECK,
        "returns_new_only",
        CacheReturnsNewOnly,
        "mistake",
        "append_self stores everything but returns only the new keys and values.",
    ),
    BlindCase(
        CHECK,
        "cat_on_dim_1",
        CacheCatOverHeads,
        "mistake",
        "I concatenated along dim=1, thinking it is the sequence axis as in (B, T, D).",
    ),
    BlindCase(
        CHECK,
        "reorder_keys_only",
        CacheReorderKeysOnly,
        "mistake",
        "reorder re-indexes the keys and forgets the values.",
    ),
    BlindCase(
        CHECK,
        "reorder_result_dropped",
        CacheReorderNoOp,
        "mistake",
        "In reorder I computed the index_select results but never assigned them back.",
    ),
    BlindCase(
        CHECK,
        "reorder_heads_axis",
        CacheReorderHeadsAxis,
        "mistake",
        "reorder selects along dim 1 instead of the batch dim 0.",
    ),
    BlindCase(
        CHECK,
        "grow_without_copy",
        CacheGrowWithoutCopy,
        "mistake",
        "My buffers double when full, but I forgot to copy the old keys and values into the "
        "new ones.",
    ),
    BlindCase(
        CHECK,
        "length_not_advanced",
        CacheLengthNotAdvanced,
        "mistake",
        "I write into a preallocated buffer at self.length but never increase self.length.",
    ),
    BlindCase(
        CHECK,
        "first_call_only",
        CacheFirstCallOnly,
        "mistake",
        "append_self fills the cache at the first call and afterwards only returns it.",
    ),
    BlindCase(
        CHECK,
        "returns_keys_twice",
        CacheReturnsKeysTwice,
        "mistake",
        "I return self.k, self.k (a typo for self.k, self.v).",
    ),
    BlindCase(
        CHECK,
        "reorder_unique_rows",
        CacheReorderUnique,
        "mistake",
        "In reorder I applied torch.unique to the index first, to avoid duplicate rows.",
    ),
    BlindCase(
        CHECK,
        "stack_instead_of_cat",
        CacheStack,
        "mistake",
        "I kept a list of the steps and joined them with torch.stack(dim=2).",
    ),
    BlindCase(
        CHECK,
        "list_reorder_last_only",
        CacheListReorderLastOnly,
        "mistake",
        "I keep a list of the steps' tensors and in reorder only re-index the newest one.",
    ),
    BlindCase(
        CHECK,
        "reorder_boolean_keep",
        CacheReorderSortedIndex,
        "mistake",
        "I turned the index into a boolean mask of the rows to keep, which loses the order and "
        "the repeats.",
    ),
    BlindCase(
        CHECK,
        "concat_index_select",
        CacheConcat,
        "correct",
        "torch.cat on dim -2 at each step, index_select(0, index) in reorder.",
    ),
    BlindCase(
        CHECK,
        "doubling_buffer",
        CacheDoublingBuffer,
        "correct",
        "Preallocated buffers written in place, doubled (with a copy) when full, as in the "
        "chapter.",
    ),
    BlindCase(
        CHECK,
        "chunk_list_merged",
        CacheChunkList,
        "correct",
        "A list of (k, v) chunks merged into one at every append; reorder indexes every chunk.",
    ),
]
