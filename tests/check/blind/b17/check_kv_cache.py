"""Blind set B17, check_kv_cache (chapter 15): one decoder block's key/value cache as readers
write it."""

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
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return k, v  # the new ones: the earlier ones are in the cache already

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CachePrepends:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is not None:
            k = torch.cat([k, self.k], dim=2)  # newest first
            v = torch.cat([v, self.v], dim=2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReorderNoop:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is not None:
            k = torch.cat([self.k, k], dim=2)
            v = torch.cat([self.v, v], dim=2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> None:
        self.k.index_select(0, index)  # (the result is thrown away)
        self.v.index_select(0, index)


class CacheReorderKeysOnly:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is not None:
            k = torch.cat([self.k, k], dim=2)
            v = torch.cat([self.v, v], dim=2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(0, index)  # forgot the values


class CacheReorderUnique:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is not None:
            k = torch.cat([self.k, k], dim=2)
            v = torch.cat([self.v, v], dim=2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            mask = torch.zeros(self.k.shape[0], dtype=torch.bool)
            mask[index] = True  # which rows to keep
            self.k, self.v = self.k[mask], self.v[mask]


class CacheSharedClassList:
    keys: list[Tensor] = []  # class attributes, so that __init__ has nothing to do
    values: list[Tensor] = []

    def __init__(self) -> None:
        pass

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index: Tensor) -> None:
        for i in range(len(self.keys)):
            self.keys[i] = self.keys[i][index]
            self.values[i] = self.values[i][index]


class CacheChunksReorderLastOnly:
    def __init__(self) -> None:
        self.keys: list[Tensor] = []
        self.values: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index: Tensor) -> None:
        if self.keys:  # the newest step's keys and values follow the beams
            self.keys[-1] = self.keys[-1][index]
            self.values[-1] = self.values[-1][index]


class CacheReturnsKeysTwice:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.k

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReorderGather:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat((self.k, k), dim=-2)
        self.v = v if self.v is None else torch.cat((self.v, v), dim=-2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            # gather along the batch axis, the index broadcast to the cache's shape
            self.k = self.k.gather(0, index.view(-1, 1, 1, 1).expand_as(self.k))
            self.v = self.v.gather(0, index.view(-1, 1, 1, 1).expand_as(self.v))


class CacheOverwrites:
    def __init__(self) -> None:
        self.k = None
        self.v = None
        self.length = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k[:, :, : self.length - 1], k], dim=2)  # off by one
            self.v = torch.cat([self.v[:, :, : self.length - 1], v], dim=2)
        self.length = self.k.shape[2]
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


# ---------------------------------------------------------------- correct variants


class CacheConcat:
    """The simplest right cache: torch.cat along the time axis, index_select to reorder."""

    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat((self.k, k), dim=2)
            self.v = torch.cat((self.v, v), dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(0, index)
            self.v = self.v.index_select(0, index)


class CacheChunks:
    """A list of per-step chunks, concatenated on demand; every chunk follows a reorder;
    helpers __len__ and clear."""

    def __init__(self) -> None:
        self.chunks: list[tuple[Tensor, Tensor]] = []

    def __len__(self) -> int:
        return sum(k.shape[2] for k, _ in self.chunks)

    def clear(self) -> None:
        self.chunks = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.chunks.append((k, v))
        keys = torch.cat([c[0] for c in self.chunks], dim=-2)
        values = torch.cat([c[1] for c in self.chunks], dim=-2)
        return keys, values

    def reorder(self, index: Tensor) -> None:
        self.chunks = [(k[index], v[index]) for k, v in self.chunks]


class CacheBuffer:
    """Preallocated buffers written in place, doubled when full (as the book describes)."""

    def __init__(self, capacity: int = 4) -> None:
        self.capacity = capacity
        self.length = 0
        self.k_buf: Tensor | None = None
        self.v_buf: Tensor | None = None

    def _ensure(self, k: Tensor, v: Tensor, needed: int) -> None:
        if self.k_buf is not None and needed <= self.k_buf.shape[2]:
            return
        size = max(needed, self.capacity, 2 * (0 if self.k_buf is None else self.k_buf.shape[2]))
        B, H, _, Dk = k.shape
        new_k = k.new_zeros(B, H, size, Dk)
        new_v = v.new_zeros(B, H, size, v.shape[-1])
        if self.k_buf is not None:
            new_k[:, :, : self.length] = self.k_buf[:, :, : self.length]
            new_v[:, :, : self.length] = self.v_buf[:, :, : self.length]
        self.k_buf, self.v_buf = new_k, new_v

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.length + k.shape[2]
        self._ensure(k, v, end)
        self.k_buf[:, :, self.length : end] = k
        self.v_buf[:, :, self.length : end] = v
        self.length = end
        return self.k_buf[:, :, :end], self.v_buf[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.k_buf is not None:
            self.k_buf = self.k_buf[index].contiguous()
            self.v_buf = self.v_buf[index].contiguous()


CASES = [
    BlindCase(
        CHECK,
        "returns_new_only",
        CacheReturnsNewOnly,
        "mistake",
        "append_self stores the new keys and values but returns only them, not the whole history.",
    ),
    BlindCase(
        CHECK,
        "new_keys_prepended",
        CachePrepends,
        "mistake",
        "I concatenated the new keys before the old ones (torch.cat([k, self.k])), so the "
        "positions are out of order for the masks.",
    ),
    BlindCase(
        CHECK,
        "reorder_result_discarded",
        CacheReorderNoop,
        "mistake",
        "In reorder I called index_select but did not assign the result, thinking it works "
        "in place.",
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
        "reorder_as_boolean_mask",
        CacheReorderUnique,
        "mistake",
        "I turned index into a boolean mask of the rows to keep, which drops repeats and "
        "ignores the order.",
    ),
    BlindCase(
        CHECK,
        "class_level_lists",
        CacheSharedClassList,
        "mistake",
        "I made the key and value lists class attributes, so every layer's cache (every "
        "instance) appends to the same lists.",
    ),
    BlindCase(
        CHECK,
        "chunks_reorder_last_only",
        CacheChunksReorderLastOnly,
        "mistake",
        "I keep a list of per-step chunks and reorder only the newest chunk.",
    ),
    BlindCase(
        CHECK,
        "returns_keys_twice",
        CacheReturnsKeysTwice,
        "mistake",
        "A copy-paste slip: append_self returns (self.k, self.k).",
    ),
    BlindCase(
        CHECK,
        "reorder_gather_expand_as",
        CacheReorderGather,
        "mistake",
        "reorder gathers along the batch axis with index.view(-1, 1, 1, 1).expand_as(self.k), "
        "which only works while the number of rows stays the same (not when finished rows are "
        "dropped).",
    ),
    BlindCase(
        CHECK,
        "drops_last_position",
        CacheOverwrites,
        "mistake",
        "An off-by-one slice: each append keeps self.k[:, :, :length - 1], losing the newest "
        "cached position.",
    ),
    BlindCase(
        CHECK,
        "concat",
        CacheConcat,
        "correct",
        "torch.cat along the time axis; index_select(0, index) to reorder.",
    ),
    BlindCase(
        CHECK,
        "chunk_list",
        CacheChunks,
        "correct",
        "A list of per-step chunks, concatenated on each call; every chunk reordered; extra "
        "__len__ and clear helpers.",
    ),
    BlindCase(
        CHECK,
        "preallocated_buffer",
        CacheBuffer,
        "correct",
        "Preallocated buffers written in place and doubled when full; an optional capacity "
        "argument.",
    ),
]
