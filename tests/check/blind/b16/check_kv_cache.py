"""Blind set B16, check_kv_cache (chapter 15): one decoder block's key/value cache as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


class _Cat:
    """A right cache, for the mistakes that are elsewhere."""

    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=2)
            self.v = torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


# ---------------------------------------------------------------- mistakes


class KvCatOnHeads(_Cat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=1)  # (B, H, T, Dh): I took dim=1 for time
            self.v = torch.cat([self.v, v], dim=1)
        return self.k, self.v


class KvReturnsNewOnly(_Cat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        super().append_self(k, v)
        return k, v  # the new positions' keys and values


class KvReorderSecondAxis(_Cat):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(1, index)
            self.v = self.v.index_select(1, index)


class KvReorderNoop(_Cat):
    def reorder(self, index: Tensor) -> None:
        pass  # the keys stay where they are; the caller reorders the tokens


class KvReorderBooleanKeep(_Cat):
    def reorder(self, index: Tensor) -> None:
        if self.k is None:
            return
        keep = torch.zeros(self.k.shape[0], dtype=torch.bool, device=index.device)
        keep[index] = True  # the rows to keep
        self.k, self.v = self.k[keep], self.v[keep]


class KvClassLevelLists:
    keys: list[Tensor] = []  # noqa: RUF012 -- the slip: one list for every instance
    values: list[Tensor] = []  # noqa: RUF012

    def __init__(self) -> None:
        pass  # the lists are already there, empty

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.keys[:] = [k[index] for k in self.keys]
        self.values[:] = [v[index] for v in self.values]


class KvSwappedReturn(_Cat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        keys, values = super().append_self(k, v)
        return values, keys


class KvReorderKeysOnly(_Cat):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[index]  # the values follow the keys, I thought


class KvWholeBuffer:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None
        self.length = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        if self.k is None:
            self.k, self.v = k.new_zeros(B, H, 64, Dh), v.new_zeros(B, H, 64, v.shape[-1])
        self.k[:, :, self.length : self.length + T] = k
        self.v[:, :, self.length : self.length + T] = v
        self.length += T
        return self.k, self.v  # the buffer, unfilled places included

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class KvNewFirst(_Cat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([k, self.k], dim=2)  # newest first
            self.v = torch.cat([v, self.v], dim=2)
        return self.k, self.v


class KvStartsWithZeros(_Cat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:  # an empty start of the right shape
            self.k, self.v = torch.zeros_like(k[:, :, :1]), torch.zeros_like(v[:, :, :1])
        self.k = torch.cat([self.k, k], dim=2)
        self.v = torch.cat([self.v, v], dim=2)
        return self.k, self.v


# ---------------------------------------------------------------- correct variants


class KvChunkList:
    """Keeps every step's keys and values in a list and concatenates them when asked."""

    def __init__(self) -> None:
        self.k_chunks: list[Tensor] = []
        self.v_chunks: list[Tensor] = []

    def __len__(self) -> int:
        return sum(k.shape[2] for k in self.k_chunks)

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k_chunks.append(k)
        self.v_chunks.append(v)
        return torch.cat(self.k_chunks, dim=-2), torch.cat(self.v_chunks, dim=-2)

    def reorder(self, index: Tensor) -> None:
        self.k_chunks = [k.index_select(0, index) for k in self.k_chunks]
        self.v_chunks = [v.index_select(0, index) for v in self.v_chunks]


class KvGrowingBuffer:
    """A buffer written in place, doubled when full; returns views of the filled part."""

    def __init__(self, capacity: int = 4) -> None:
        self.capacity = capacity
        self.length = 0
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def _grow(self, k: Tensor, v: Tensor, needed: int) -> None:
        size = max(needed, self.capacity, 2 * (0 if self.k is None else self.k.shape[2]))
        new_k = k.new_zeros(*k.shape[:2], size, k.shape[3])
        new_v = v.new_zeros(*v.shape[:2], size, v.shape[3])
        if self.k is not None:
            new_k[:, :, : self.length] = self.k[:, :, : self.length]
            new_v[:, :, : self.length] = self.v[:, :, : self.length]
        self.k, self.v = new_k, new_v

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.length + k.shape[2]
        if self.k is None or end > self.k.shape[2]:
            self._grow(k, v, end)
        self.k[:, :, self.length : end] = k
        self.v[:, :, self.length : end] = v
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = torch.index_select(self.k, 0, index)
            self.v = torch.index_select(self.v, 0, index)


class KvDict:
    """The tensors in a dict; reorder with fancy indexing, the index moved to their device."""

    def __init__(self) -> None:
        self.store: dict[str, Tensor] = {}

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        for name, new in (("k", k), ("v", v)):
            old = self.store.get(name)
            self.store[name] = new if old is None else torch.cat((old, new), dim=2)
        return self.store["k"], self.store["v"]

    def reorder(self, index: Tensor) -> None:
        for name, t in self.store.items():
            self.store[name] = t[index.to(t.device)]


CASES = [
    BlindCase(
        CHECK,
        "cat_on_heads_axis",
        KvCatOnHeads,
        "mistake",
        "I concatenated the new keys and values along dim=1, the heads, instead of dim=2.",
    ),
    BlindCase(
        CHECK,
        "returns_new_only",
        KvReturnsNewOnly,
        "mistake",
        "append_self stores everything but returns only the new positions' keys and values.",
    ),
    BlindCase(
        CHECK,
        "reorder_second_axis",
        KvReorderSecondAxis,
        "mistake",
        "reorder selects along dim 1 instead of the batch axis.",
    ),
    BlindCase(
        CHECK,
        "reorder_does_nothing",
        KvReorderNoop,
        "mistake",
        "I left reorder empty, thinking the caller reorders the tokens and that is enough.",
    ),
    BlindCase(
        CHECK,
        "reorder_boolean_keep",
        KvReorderBooleanKeep,
        "mistake",
        "reorder turns the index into a boolean keep-mask, which loses repeated rows and the "
        "order of the index.",
    ),
    BlindCase(
        CHECK,
        "class_level_lists",
        KvClassLevelLists,
        "mistake",
        "I declared the key and value lists at class level, so every block's cache shares them.",
    ),
    BlindCase(
        CHECK,
        "returns_values_first",
        KvSwappedReturn,
        "mistake",
        "append_self returns (values, keys) instead of (keys, values).",
    ),
    BlindCase(
        CHECK,
        "reorder_keys_only",
        KvReorderKeysOnly,
        "mistake",
        "reorder reorders the keys but forgets the values.",
    ),
    BlindCase(
        CHECK,
        "returns_whole_buffer",
        KvWholeBuffer,
        "mistake",
        "I preallocated a 64-position buffer and return all of it, the unfilled zero positions "
        "included.",
    ),
    BlindCase(
        CHECK,
        "newest_first",
        KvNewFirst,
        "mistake",
        "I concatenated the new keys in front of the old ones, so the positions are out of order.",
    ),
    BlindCase(
        CHECK,
        "starts_with_zero_position",
        KvStartsWithZeros,
        "mistake",
        "On the first call I start the cache with one zero position of the right shape and "
        "concatenate onto it, so there is an extra all-zero key and value.",
    ),
    BlindCase(
        CHECK,
        "chunk_list",
        KvChunkList,
        "correct",
        "A list of every step's chunks, concatenated with dim=-2 at each call; reorder applies "
        "index_select to each chunk; an extra __len__.",
    ),
    BlindCase(
        CHECK,
        "growing_buffer",
        KvGrowingBuffer,
        "correct",
        "A preallocated buffer written in place and doubled when full, with an optional "
        "capacity argument; it returns views of the filled part.",
    ),
    BlindCase(
        CHECK,
        "dict_store",
        KvDict,
        "correct",
        "The keys and values in a dict, reorder by fancy indexing with the index moved to the "
        "tensors' device.",
    ),
]
