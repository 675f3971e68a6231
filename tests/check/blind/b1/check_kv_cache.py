"""Blind cases for check_kv_cache (chapter 15)."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


class KVReplaces:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k, v):
        self.k, self.v = k, v  # keeps only the newest positions
        return self.k, self.v

    def reorder(self, index):
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class KVCatHeads:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k, v):
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=1)  # dim 1 is the heads axis
            self.v = torch.cat([self.v, v], dim=1)
        return self.k, self.v

    def reorder(self, index):
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class KVCatNewFirst:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k, v):
        if self.k is not None:
            k, v = torch.cat([k, self.k], dim=2), torch.cat([v, self.v], dim=2)  # new in front
        self.k, self.v = k, v
        return k, v

    def reorder(self, index):
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class KVReorderNoop:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k, v):
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index):
        pass  # thought the rows stay where they are


class KVReorderTimeAxis:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k, v):
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index):
        if self.k is not None:
            self.k = self.k.index_select(2, index.clamp(max=self.k.shape[2] - 1))  # wrong axis
            self.v = self.v.index_select(2, index.clamp(max=self.v.shape[2] - 1))


class KVClassLevelLists:
    keys: list = []  # shared by every instance
    values: list = []

    def __init__(self) -> None:
        pass

    def append_self(self, k, v):
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index):
        self.keys[:] = [k[index] for k in self.keys]
        self.values[:] = [v[index] for v in self.values]


class KVReorderUnique:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k, v):
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index):
        if self.k is not None:
            mask = torch.zeros(self.k.shape[0], dtype=torch.bool)
            mask[index] = True  # keeps each row once, in its old order
            self.k, self.v = self.k[mask], self.v[mask]


class KVOnlyKeysReordered:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k, v):
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index):
        if self.k is not None:
            self.k = self.k[index]  # forgot the values


class KVInPlaceBufferAliased:
    def __init__(self) -> None:
        self.buf_k = self.buf_v = None
        self.n = 0

    def append_self(self, k, v):
        B, H, T, Dh = k.shape
        if self.buf_k is None:
            self.buf_k, self.buf_v = k.new_zeros(B, H, 64, Dh), v.new_zeros(B, H, 64, Dh)
        self.buf_k[:, :, self.n : self.n + T] = k
        self.buf_v[:, :, self.n : self.n + T] = v
        self.n += T
        return self.buf_k, self.buf_v  # returns the whole buffer, zeros after n included

    def reorder(self, index):
        if self.buf_k is not None:
            self.buf_k, self.buf_v = self.buf_k[index], self.buf_v[index]


class KVMethodRenamed:
    def __init__(self) -> None:
        self.k = self.v = None

    def append(self, k, v):  # named append, not append_self
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index):
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class KVChunkList:
    def __init__(self) -> None:
        self.k_chunks: list[Tensor] = []
        self.v_chunks: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k_chunks.append(k)
        self.v_chunks.append(v)
        return torch.cat(self.k_chunks, dim=-2), torch.cat(self.v_chunks, dim=-2)

    def reorder(self, index: Tensor, cross: bool = True) -> None:
        self.k_chunks = [c.index_select(0, index) for c in self.k_chunks]
        self.v_chunks = [c.index_select(0, index) for c in self.v_chunks]


class KVGrowingBuffer:
    def __init__(self, capacity: int = 4) -> None:
        self.capacity, self.length = capacity, 0
        self.k = self.v = None

    def append_self(self, k, v):
        end = self.length + k.shape[2]
        if self.k is None or end > self.k.shape[2]:
            size = max(end, 2 * (0 if self.k is None else self.k.shape[2]), self.capacity)
            new_k = k.new_zeros(*k.shape[:2], size, k.shape[3])
            new_v = v.new_zeros(*v.shape[:2], size, v.shape[3])
            if self.k is not None:
                new_k[:, :, : self.length] = self.k[:, :, : self.length]
                new_v[:, :, : self.length] = self.v[:, :, : self.length]
            self.k, self.v = new_k, new_v
        self.k[:, :, self.length : end] = k
        self.v[:, :, self.length : end] = v
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index):
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


CASES = [
    BlindCase(
        CHECK,
        "replaces_instead_of_appending",
        KVReplaces,
        "mistake",
        "stores only the newest keys and values instead of appending them to the old ones",
    ),
    BlindCase(
        CHECK,
        "concatenates_on_heads_axis",
        KVCatHeads,
        "mistake",
        "concatenates along dim=1 (the heads) instead of dim=2 (the positions)",
    ),
    BlindCase(
        CHECK,
        "new_positions_in_front",
        KVCatNewFirst,
        "mistake",
        "concatenates the new keys and values before the cached ones",
    ),
    BlindCase(
        CHECK,
        "reorder_does_nothing",
        KVReorderNoop,
        "mistake",
        "leaves reorder empty, so the cache does not follow the surviving rows",
    ),
    BlindCase(
        CHECK,
        "reorder_on_time_axis",
        KVReorderTimeAxis,
        "mistake",
        "reorders with index_select on dim 2 (positions) instead of dim 0 (batch rows)",
    ),
    BlindCase(
        CHECK,
        "class_level_lists",
        KVClassLevelLists,
        "mistake",
        "keeps the chunks in lists defined on the class, so every cache instance shares them",
    ),
    BlindCase(
        CHECK,
        "reorder_with_bool_mask",
        KVReorderUnique,
        "mistake",
        "reorders through a boolean mask of the index, which drops repeated rows and ignores the order",
    ),
    BlindCase(
        CHECK,
        "values_not_reordered",
        KVOnlyKeysReordered,
        "mistake",
        "reorders the keys but forgets the values",
    ),
    BlindCase(
        CHECK,
        "returns_whole_buffer",
        KVInPlaceBufferAliased,
        "mistake",
        "writes into a preallocated 64-position buffer and returns all of it, unfilled zeros included",
    ),
    BlindCase(
        CHECK,
        "slip_method_named_append",
        KVMethodRenamed,
        "mistake",
        "names the method append instead of append_self",
    ),
    BlindCase(
        CHECK,
        "list_of_chunks",
        KVChunkList,
        "correct",
        "keeps a list of chunks, concatenates on dim -2 on every call, and accepts an extra cross argument in reorder",
    ),
    BlindCase(
        CHECK,
        "doubling_buffer",
        KVGrowingBuffer,
        "correct",
        "writes into a preallocated buffer that doubles when full and returns views of the filled part",
    ),
]
