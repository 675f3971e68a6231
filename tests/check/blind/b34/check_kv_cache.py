"""Blind set B34, check_kv_cache (chapter 15): one block's key/value cache as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


# ---------------------------------------------------------------- mistakes


class CacheCatHeads:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=1)  # dim 1 grows
            self.v = torch.cat([self.v, v], dim=1)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReturnsNewOnly:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return k, v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReorderNoop:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k.index_select(0, index)  # I thought this worked in place
        self.v.index_select(0, index)


class CacheReorderTime:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(2, index)  # rows of the sequence
            self.v = self.v.index_select(2, index)


class CachePrepends:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([k, self.k], dim=2)
        self.v = v if self.v is None else torch.cat([v, self.v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheValuesAreKeys:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, k], dim=2)  # copy-paste slip
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheSharedClassList:
    keys: list = []  # one list for every cache, as a class attribute
    values: list = []

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


class CacheReturnsSwapped:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.v, self.k

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReorderUnique:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        keep = torch.zeros(self.k.shape[0], dtype=torch.bool)
        keep[index] = True  # a boolean mask of the rows to keep
        self.k, self.v = self.k[keep], self.v[keep]


class CacheReorderIntoSameBuffer:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        n = len(index)
        for row, source in enumerate(index.tolist()):  # row by row, in place, to save memory
            self.k[row] = self.k[source]
            self.v[row] = self.v[source]
        self.k, self.v = self.k[:n], self.v[:n]


class CacheFixedBuffer:
    def __init__(self) -> None:
        self.k = None
        self.v = None
        self.n = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            B, H, _, Dh = k.shape
            self.k, self.v = k.new_zeros(B, H, 8, Dh), v.new_zeros(B, H, 8, Dh)  # 8 is plenty
        T = k.shape[2]
        end = min(self.n + T, 8)
        self.k[:, :, self.n : end] = k[:, :, : end - self.n]
        self.v[:, :, self.n : end] = v[:, :, : end - self.n]
        self.n = end
        return self.k[:, :, : self.n], self.v[:, :, : self.n]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheFirstStepOnly:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:  # the keys of the prefix, computed once
            self.k, self.v = k, v
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


# ---------------------------------------------------------------- correct variants


class CacheCat:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=-2)
            self.v = torch.cat([self.v, v], dim=-2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[index]
            self.v = self.v[index]


class CacheChunks:
    def __init__(self) -> None:
        self.ks: list[Tensor] = []
        self.vs: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.ks.append(k)
        self.vs.append(v)
        return torch.cat(self.ks, dim=2), torch.cat(self.vs, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.ks = [k.index_select(0, index) for k in self.ks]
        self.vs = [v.index_select(0, index) for v in self.vs]


class CacheGrowingBuffer:
    def __init__(self) -> None:
        self.k = self.v = None
        self.length = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.length + k.shape[2]
        if self.k is None or end > self.k.shape[2]:
            size = max(end, 4, 0 if self.k is None else 2 * self.k.shape[2])
            B, H, _, Dh = k.shape
            nk, nv = k.new_empty(B, H, size, Dh), v.new_empty(B, H, size, v.shape[-1])
            if self.k is not None:
                nk[:, :, : self.length] = self.k[:, :, : self.length]
                nv[:, :, : self.length] = self.v[:, :, : self.length]
            self.k, self.v = nk, nv
        self.k[:, :, self.length : end] = k
        self.v[:, :, self.length : end] = v
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(0, index)
            self.v = self.v.index_select(0, index)


CASES = [
    BlindCase(
        CHECK,
        "cat_heads",
        CacheCatHeads,
        "mistake",
        "I concatenated along dim=1 instead of the time axis",
    ),
    BlindCase(
        CHECK,
        "returns_new_only",
        CacheReturnsNewOnly,
        "mistake",
        "append_self returns the k, v it was given rather than the whole cache",
    ),
    BlindCase(
        CHECK,
        "reorder_noop",
        CacheReorderNoop,
        "mistake",
        "in reorder I called index_select but did not assign the result",
    ),
    BlindCase(
        CHECK,
        "reorder_time",
        CacheReorderTime,
        "mistake",
        "I reordered along dim 2, the positions, instead of the batch rows",
    ),
    BlindCase(
        CHECK, "prepends", CachePrepends, "mistake", "I put the new keys in front: cat([k, self.k])"
    ),
    BlindCase(
        CHECK,
        "values_are_keys",
        CacheValuesAreKeys,
        "mistake",
        "a copy-paste slip: I appended k to the values too",
    ),
    BlindCase(
        CHECK,
        "shared_class_list",
        CacheSharedClassList,
        "mistake",
        "I declared the lists at class level, so all caches share them",
    ),
    BlindCase(
        CHECK,
        "returns_swapped",
        CacheReturnsSwapped,
        "mistake",
        "append_self returns (values, keys)",
    ),
    BlindCase(
        CHECK,
        "reorder_boolean_mask",
        CacheReorderUnique,
        "mistake",
        "I turned index into a boolean mask of rows to keep",
    ),
    BlindCase(
        CHECK,
        "reorder_in_place",
        CacheReorderIntoSameBuffer,
        "mistake",
        "I copied the rows one by one into the same tensor to save memory",
    ),
    BlindCase(
        CHECK,
        "fixed_buffer",
        CacheFixedBuffer,
        "mistake",
        "I preallocated 8 positions and never grow the buffer",
    ),
    BlindCase(
        CHECK,
        "first_step_only",
        CacheFirstStepOnly,
        "mistake",
        "I store the keys once at the first step and return them afterwards",
    ),
    BlindCase(
        CHECK,
        "cat",
        CacheCat,
        "correct",
        "torch.cat on dim -2, indexing with index for the reorder",
    ),
    BlindCase(
        CHECK,
        "chunks",
        CacheChunks,
        "correct",
        "a list of chunks, concatenated at every call, each reordered",
    ),
    BlindCase(
        CHECK,
        "growing_buffer",
        CacheGrowingBuffer,
        "correct",
        "a buffer that doubles when full, written in place at the current length",
    ),
]
