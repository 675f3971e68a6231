"""Blind set B11, check_kv_cache (chapter 15): one decoder block's key/value cache as readers
write it."""

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
            self.k = torch.cat([self.k, k], dim=1)  # dim 1: I counted (B, T, ...) from memory
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
        return k, v  # the new positions' keys and values

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheNewFirst:
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


class CacheNoReorder:
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
        pass  # the cache is per layer, the rows stay where they are


class CacheReorderTime:
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
            self.k = self.k.index_select(2, index)  # along the positions
            self.v = self.v.index_select(2, index)


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
            self.k = self.k[index]


class CacheSharedClassList:
    keys: list = []  # one list for the whole class (every layer's cache)
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


class CacheUniqueRows:
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
        if self.k is None:
            return
        keep = torch.zeros(self.k.shape[0], dtype=torch.bool, device=self.k.device)
        keep[index] = True  # a boolean mask of the rows to keep
        self.k, self.v = self.k[keep], self.v[keep]


class CacheLastPositionOnly:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        k, v = k[:, :, -1:], v[:, :, -1:]  # one new token per step
        if self.k is not None:
            k = torch.cat([self.k, k], dim=2)
            v = torch.cat([self.v, v], dim=2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheWholeBuffer:
    def __init__(self) -> None:
        self.k = None
        self.v = None
        self.length = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        if self.k is None:
            self.k = k.new_zeros(B, H, 64, Dh)
            self.v = v.new_zeros(B, H, 64, v.shape[-1])
        self.k[:, :, self.length : self.length + T] = k
        self.v[:, :, self.length : self.length + T] = v
        self.length += T
        return self.k, self.v  # the buffer (zeros after length)

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReorderHeads:
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
            B = self.k.shape[0]
            flat_k = self.k.reshape(-1, *self.k.shape[2:])  # (B*H, T, Dh)
            flat_v = self.v.reshape(-1, *self.v.shape[2:])
            # "rows" of the flattened batch: I treated index as rows of B*H
            self.k = flat_k[index].reshape(len(index) // B * B, -1, *self.k.shape[2:])
            self.v = flat_v[index].reshape(len(index) // B * B, -1, *self.v.shape[2:])


# ---------------------------------------------------------------- correct variants


class CacheChunks:
    """A list of the pieces appended, concatenated when asked; reorder applies to each piece."""

    def __init__(self) -> None:
        self.k_chunks: list[Tensor] = []
        self.v_chunks: list[Tensor] = []

    def __len__(self) -> int:
        return sum(c.shape[2] for c in self.k_chunks)

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k_chunks.append(k)
        self.v_chunks.append(v)
        return torch.cat(self.k_chunks, dim=2), torch.cat(self.v_chunks, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.k_chunks = [c.index_select(0, index) for c in self.k_chunks]
        self.v_chunks = [c.index_select(0, index) for c in self.v_chunks]


class CacheDoublingBuffer:
    """A preallocated buffer that doubles when full; returns views of the filled part."""

    def __init__(self, capacity: int = 4) -> None:
        self.capacity = capacity
        self.k = None
        self.v = None
        self.n = 0

    def _ensure(self, k: Tensor, v: Tensor, needed: int) -> None:
        if self.k is not None and needed <= self.k.shape[2]:
            return
        size = max(needed, self.capacity if self.k is None else 2 * self.k.shape[2])
        nk = k.new_empty(k.shape[0], k.shape[1], size, k.shape[3])
        nv = v.new_empty(v.shape[0], v.shape[1], size, v.shape[3])
        if self.k is not None:
            nk[:, :, : self.n] = self.k[:, :, : self.n]
            nv[:, :, : self.n] = self.v[:, :, : self.n]
        self.k, self.v = nk, nv

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.n + k.shape[2]
        self._ensure(k, v, end)
        self.k[:, :, self.n : end] = k
        self.v[:, :, self.n : end] = v
        self.n = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[index]
            self.v = self.v[index]


class CacheDictClone:
    """State in a dict, each step's tensors cloned; reorder by advanced indexing on dim 0."""

    def __init__(self) -> None:
        self.state: dict[str, Tensor] = {}

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        for name, new in (("k", k), ("v", v)):
            old = self.state.get(name)
            self.state[name] = new.clone() if old is None else torch.cat((old, new), dim=-2)
        return self.state["k"], self.state["v"]

    def reorder(self, index: Tensor) -> None:
        self.state = {name: t[index.long()] for name, t in self.state.items()}

    def clear(self) -> None:
        self.state = {}


CASES = [
    BlindCase(
        CHECK,
        "cat_on_heads_axis",
        CacheCatHeads,
        "mistake",
        "I concatenated along dim=1, the heads, instead of dim=2, the positions.",
    ),
    BlindCase(
        CHECK,
        "returns_new_only",
        CacheReturnsNewOnly,
        "mistake",
        "I store everything but return only the new positions' keys and values.",
    ),
    BlindCase(
        CHECK,
        "new_positions_first",
        CacheNewFirst,
        "mistake",
        "I put the new keys and values in front of the cached ones.",
    ),
    BlindCase(
        CHECK,
        "reorder_does_nothing",
        CacheNoReorder,
        "mistake",
        "My reorder is a no-op: I did not see why a cache needs it.",
    ),
    BlindCase(
        CHECK,
        "reorder_along_time",
        CacheReorderTime,
        "mistake",
        "I applied index_select on dim 2 (the positions) instead of the batch.",
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
        "class_level_lists",
        CacheSharedClassList,
        "mistake",
        "I made the lists class attributes, so every cache (every layer, every search) shares "
        "them.",
    ),
    BlindCase(
        CHECK,
        "reorder_by_boolean_mask",
        CacheUniqueRows,
        "mistake",
        "reorder builds a boolean mask of the kept rows, which loses repeated rows and their "
        "order.",
    ),
    BlindCase(
        CHECK,
        "last_position_only",
        CacheLastPositionOnly,
        "mistake",
        "I assumed one new token per call and kept only k[:, :, -1:], so a prefix fed at once "
        "loses its earlier positions.",
    ),
    BlindCase(
        CHECK,
        "returns_whole_buffer",
        CacheWholeBuffer,
        "mistake",
        "I preallocate 64 positions and return the whole buffer, zeros after the filled part.",
    ),
    BlindCase(
        CHECK,
        "reorder_flattened_heads",
        CacheReorderHeads,
        "mistake",
        "I flattened (B, H) to one axis before indexing, so index picks (batch, head) rows.",
    ),
    BlindCase(
        CHECK,
        "list_of_chunks",
        CacheChunks,
        "correct",
        "Keeps a list of the appended pieces and concatenates them on each call; a __len__.",
    ),
    BlindCase(
        CHECK,
        "doubling_buffer",
        CacheDoublingBuffer,
        "correct",
        "A preallocated buffer that doubles when full (an optional capacity argument); returns "
        "views of the filled part.",
    ),
    BlindCase(
        CHECK,
        "dict_state_clone",
        CacheDictClone,
        "correct",
        "The tensors in a dict, concatenated on dim=-2; reorder by advanced indexing; an extra "
        "clear method.",
    ),
]
