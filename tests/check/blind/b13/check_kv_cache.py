"""Blind set B13, check_kv_cache (chapter 15): a decoder block's key/value cache as readers write it."""

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
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return k, v  # the new positions

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheCatLastDim:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=-1)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=-1)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheCatHeadDim:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=1)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=1)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheNoReorder:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        pass  # the rows stay where they are


class CacheReorderKeysOnly:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(0, index)


class CacheReorderWrongDim:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(1, index)  # dim 1 of (B, H, T, Dh)
            self.v = self.v.index_select(1, index)


class CacheSwapsKV:
    def __init__(self) -> None:
        self.cache: list[Tensor] | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.cache is None:
            self.cache = [k, v]
        else:
            self.cache = [torch.cat([self.cache[0], k], 2), torch.cat([self.cache[1], v], 2)]
        values, keys = self.cache  # unpacked in the wrong order
        return keys, values

    def reorder(self, index: Tensor) -> None:
        if self.cache is not None:
            self.cache = [t[index] for t in self.cache]


class CachePrepends:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([k, self.k], dim=2)  # newest first
        self.v = v if self.v is None else torch.cat([v, self.v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheClassLevelLists:
    keys: list[Tensor] = []  # shared by every instance
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


class CacheReorderLastChunk:
    def __init__(self) -> None:
        self.keys: list[Tensor] = []
        self.values: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index: Tensor) -> None:
        if self.keys:  # the newest step is the one that moved
            self.keys[-1] = self.keys[-1][index]
            self.values[-1] = self.values[-1][index]


class CacheReorderUnique:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            keep = index.unique()  # no need to copy a row twice
            self.k, self.v = self.k[keep], self.v[keep]


# ---------------------------------------------------------------- correct variants


class CacheChunkList:
    """A list of chunks per step, concatenated on demand; reorder applied to every chunk."""

    def __init__(self) -> None:
        self.keys: list[Tensor] = []
        self.values: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=-2), torch.cat(self.values, dim=-2)

    def reorder(self, index: Tensor) -> None:
        self.keys = [t.index_select(0, index) for t in self.keys]
        self.values = [t.index_select(0, index) for t in self.values]

    def __len__(self) -> int:
        return sum(t.shape[2] for t in self.keys)


class CacheDoublingBuffer:
    """A preallocated buffer that doubles when full, with a length counter."""

    def __init__(self, capacity: int = 4) -> None:
        self.capacity, self.length = capacity, 0
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.length + k.shape[2]
        if self.k is None or end > self.k.shape[2]:
            size = max(end, self.capacity, 0 if self.k is None else 2 * self.k.shape[2])
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

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheDictState:
    """State in a dict; torch.cat with an empty start tensor avoided by a None check."""

    def __init__(self) -> None:
        self.state: dict[str, Tensor] = {}

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        for name, new in (("k", k), ("v", v)):
            old = self.state.get(name)
            self.state[name] = new if old is None else torch.cat((old, new), dim=2)
        return self.state["k"], self.state["v"]

    def reorder(self, index: Tensor) -> None:
        self.state = {name: t[index.long()] for name, t in self.state.items()}


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
        "cat_last_dim",
        CacheCatLastDim,
        "mistake",
        "I concatenated along the last dimension instead of the time axis.",
    ),
    BlindCase(
        CHECK,
        "cat_head_dim",
        CacheCatHeadDim,
        "mistake",
        "I concatenated along dim=1, thinking (B, T, ...) like the model's inputs.",
    ),
    BlindCase(
        CHECK,
        "reorder_does_nothing",
        CacheNoReorder,
        "mistake",
        "I left reorder empty; greedy search never needs it, I thought.",
    ),
    BlindCase(
        CHECK,
        "reorder_keys_only",
        CacheReorderKeysOnly,
        "mistake",
        "reorder reorders the keys but I forgot the values.",
    ),
    BlindCase(
        CHECK,
        "reorder_wrong_dim",
        CacheReorderWrongDim,
        "mistake",
        "reorder uses index_select on dim 1 (heads) instead of the batch.",
    ),
    BlindCase(
        CHECK,
        "keys_values_swapped",
        CacheSwapsKV,
        "mistake",
        "I unpacked my [k, v] list as values, keys and returned them swapped.",
    ),
    BlindCase(
        CHECK,
        "prepends_new",
        CachePrepends,
        "mistake",
        "I concatenated the new positions in front of the cached ones.",
    ),
    BlindCase(
        CHECK,
        "class_level_lists",
        CacheClassLevelLists,
        "mistake",
        "My lists are class attributes, so every block's cache shares them.",
    ),
    BlindCase(
        CHECK,
        "reorder_last_chunk",
        CacheReorderLastChunk,
        "mistake",
        "I kept one chunk per step and reordered only the newest chunk.",
    ),
    BlindCase(
        CHECK,
        "reorder_unique_rows",
        CacheReorderUnique,
        "mistake",
        "reorder keeps index.unique(), thinking a row need not be copied twice.",
    ),
    BlindCase(
        CHECK,
        "chunk_list",
        CacheChunkList,
        "correct",
        "One chunk per step, concatenated on demand; every chunk reordered; __len__ helper.",
    ),
    BlindCase(
        CHECK,
        "doubling_buffer",
        CacheDoublingBuffer,
        "correct",
        "A zero-filled buffer that doubles when full (capacity argument with a default).",
    ),
    BlindCase(
        CHECK,
        "dict_state",
        CacheDictState,
        "correct",
        "State in a dict; reorder by fancy indexing.",
    ),
]
