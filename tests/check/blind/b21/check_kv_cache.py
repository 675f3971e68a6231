"""Blind set B21, check_kv_cache (chapter 13/15): one decoder block's key/value cache."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


# ---------------------------------------------------------------- mistakes


class CacheReturnsNew:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return k, v  # the new positions only

    def reorder(self, index: Tensor) -> None:
        self.k, self.v = self.k[index], self.v[index]


class CacheCatLastDim:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=-1)  # the feature axis
        self.v = v if self.v is None else torch.cat([self.v, v], dim=-1)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k, self.v = self.k[index], self.v[index]


class CacheReorderDiscarded:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k.index_select(0, index)  # thought index_select works in place
        self.v.index_select(0, index)


class CacheReorderHeads:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k = self.k[:, index]  # the second axis
        self.v = self.v[:, index]


class CacheValuesAreKeys:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, k], dim=2)  # k pasted twice
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k, self.v = self.k[index], self.v[index]


class CachePrepends:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([k, self.k], dim=2)  # newest first
        self.v = v if self.v is None else torch.cat([v, self.v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
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
        self.k = self.k.index_select(0, index)  # forgot the values


class CacheWholeBuffer:
    def __init__(self) -> None:
        self.k = None
        self.v = None
        self.length = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        end = self.length + T
        if self.k is None or end > self.k.shape[2]:
            size = max(16, 2 * end)
            new_k, new_v = k.new_zeros(B, H, size, Dh), v.new_zeros(B, H, size, Dh)
            if self.k is not None:
                new_k[:, :, : self.length] = self.k[:, :, : self.length]
                new_v[:, :, : self.length] = self.v[:, :, : self.length]
            self.k, self.v = new_k, new_v
        self.k[:, :, self.length : end] = k
        self.v[:, :, self.length : end] = v
        self.length = end
        return self.k, self.v  # the whole buffer, unfilled rows included

    def reorder(self, index: Tensor) -> None:
        self.k, self.v = self.k[index], self.v[index]


class CacheSharedClassList:
    keys: list = []  # a class attribute: every instance appends to the same lists
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


class CacheReorderLastChunk:
    def __init__(self) -> None:
        self.keys: list[Tensor] = []
        self.values: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.keys[-1] = self.keys[-1][index]  # only the newest chunk
        self.values[-1] = self.values[-1][index]


class CacheReorderUnique:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        index = torch.unique(index)  # "rows to keep": duplicates removed, sorted
        self.k, self.v = self.k[index], self.v[index]


class CacheReorderScatter:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        # row i goes to place index[i] (the inverse of what was asked)
        new_k, new_v = torch.empty_like(self.k), torch.empty_like(self.v)
        new_k[index], new_v[index] = self.k, self.v
        self.k, self.v = new_k, new_v


# ---------------------------------------------------------------- correct variants


class CacheChunks:
    """A list of chunks per tensor; concatenated on return; every chunk reordered."""

    def __init__(self) -> None:
        self.keys: list[Tensor] = []
        self.values: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=-2), torch.cat(self.values, dim=-2)

    def reorder(self, index: Tensor) -> None:
        self.keys = [c.index_select(0, index) for c in self.keys]
        self.values = [c.index_select(0, index) for c in self.values]


class CacheBuffer:
    """A preallocated buffer that doubles when full; returns views of the filled part."""

    def __init__(self) -> None:
        self.k = self.v = None
        self.n = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.n + k.shape[2]
        if self.k is None or end > self.k.shape[2]:
            grown_k = k.new_empty(*k.shape[:2], max(8, 2 * end), k.shape[3])
            grown_v = v.new_empty(*v.shape[:2], max(8, 2 * end), v.shape[3])
            if self.k is not None:
                grown_k[:, :, : self.n].copy_(self.k[:, :, : self.n])
                grown_v[:, :, : self.n].copy_(self.v[:, :, : self.n])
            self.k, self.v = grown_k, grown_v
        self.k[:, :, self.n : end] = k
        self.v[:, :, self.n : end] = v
        self.n = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        self.k = self.k[index]
        self.v = self.v[index]


class CacheEmptyStart:
    """Starts from empty (B, H, 0, Dh) tensors made at the first call; torch.cat each step."""

    def __init__(self) -> None:
        self.state: dict[str, Tensor] = {}

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if not self.state:
            self.state = {"k": k[:, :, :0], "v": v[:, :, :0]}
        self.state["k"] = torch.cat((self.state["k"], k), dim=2)
        self.state["v"] = torch.cat((self.state["v"], v), dim=2)
        return self.state["k"], self.state["v"]

    def reorder(self, index: Tensor) -> None:
        self.state = {name: t[index.long()] for name, t in self.state.items()}


CASES = [
    BlindCase(
        CHECK,
        "returns_new_only",
        CacheReturnsNew,
        "mistake",
        "append_self returns only the new keys and values",
    ),
    BlindCase(
        CHECK,
        "cat_last_dim",
        CacheCatLastDim,
        "mistake",
        "I concatenated along dim=-1, the features, not the positions",
    ),
    BlindCase(
        CHECK,
        "reorder_discarded",
        CacheReorderDiscarded,
        "mistake",
        "reorder calls index_select but never stores the result",
    ),
    BlindCase(
        CHECK,
        "reorder_heads",
        CacheReorderHeads,
        "mistake",
        "reorder indexes the second axis (heads) instead of the batch",
    ),
    BlindCase(
        CHECK,
        "values_are_keys",
        CacheValuesAreKeys,
        "mistake",
        "I appended k to the values as well (copy-paste)",
    ),
    BlindCase(
        CHECK,
        "prepends",
        CachePrepends,
        "mistake",
        "torch.cat([k, self.k]): the newest positions come first",
    ),
    BlindCase(
        CHECK,
        "reorder_keys_only",
        CacheReorderKeysOnly,
        "mistake",
        "reorder moves the keys but forgets the values",
    ),
    BlindCase(
        CHECK,
        "whole_buffer",
        CacheWholeBuffer,
        "mistake",
        "a growing buffer, but I return all of it, unfilled rows included",
    ),
    BlindCase(
        CHECK,
        "shared_class_list",
        CacheSharedClassList,
        "mistake",
        "lists as class attributes, so every cache instance shares them",
    ),
    BlindCase(
        CHECK,
        "reorder_last_chunk",
        CacheReorderLastChunk,
        "mistake",
        "a list of chunks, but reorder only reindexes the newest chunk",
    ),
    BlindCase(
        CHECK,
        "reorder_unique",
        CacheReorderUnique,
        "mistake",
        "reorder takes torch.unique(index): repeated rows collapse and get sorted",
    ),
    BlindCase(
        CHECK,
        "reorder_scatter",
        CacheReorderScatter,
        "mistake",
        "reorder sends row i to place index[i] (the inverse permutation)",
    ),
    BlindCase(
        CHECK,
        "chunk_list",
        CacheChunks,
        "correct",
        "a list of chunks concatenated on return; reorder reindexes every chunk",
    ),
    BlindCase(
        CHECK,
        "doubling_buffer",
        CacheBuffer,
        "correct",
        "a preallocated buffer that doubles; views of the filled part returned",
    ),
    BlindCase(
        CHECK,
        "empty_start_dict",
        CacheEmptyStart,
        "correct",
        "a dict of tensors started empty, torch.cat at every step, fancy indexing",
    ),
]
