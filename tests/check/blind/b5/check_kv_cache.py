"""Blind set B5, check_kv_cache (chapter 15): one decoder block's key/value cache, as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


# ---------------------------------------------------------------- mistakes


class CacheReturnsNewOnly:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return k, v  # returned what came in, not what is stored

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheCatOnHeads:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        # dim=1 thinking of (B, T, D) tensors; here axis 1 is the heads
        self.k = k if self.k is None else torch.cat([self.k, k], dim=1)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=1)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReorderTime:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:  # index_select on the time axis, as the append
            self.k = self.k.index_select(2, index)
            self.v = self.v.index_select(2, index)


class CacheReorderKeysOnly:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(0, index)  # the values are left as they were


class CacheSharedClassLists:
    keys: list[Tensor] = []  # class attributes: every block's cache shares these two lists
    values: list[Tensor] = []

    def __init__(self) -> None:
        self.keys.clear()
        self.values.clear()

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.keys[:] = [k[index] for k in self.keys]
        self.values[:] = [v[index] for v in self.values]


class CacheFixedBuffer:
    def __init__(self) -> None:
        self.size = 16  # room for 16 positions, never grown
        self.k: Tensor | None = None
        self.v: Tensor | None = None
        self.length = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        if self.k is None:
            self.k = k.new_zeros(B, H, self.size, Dh)
            self.v = v.new_zeros(B, H, self.size, v.shape[-1])
        end = self.length + T
        self.k[:, :, self.length : end] = k
        self.v[:, :, self.length : end] = v
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CachePrepends:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        # newest first: attention does not care about the order of the keys, I thought
        self.k = k if self.k is None else torch.cat([k, self.k], dim=2)
        self.v = v if self.v is None else torch.cat([v, self.v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReorderInPlaceCopy:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:  # written back into the same tensors, to save memory
            self.k.copy_(self.k[index])
            self.v.copy_(self.v[index])


class CacheReorderReturnsCopy:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> CacheReorderReturnsCopy:
        new = CacheReorderReturnsCopy()  # a reordered copy; this cache itself is unchanged
        if self.k is not None:
            new.k, new.v = self.k[index], self.v[index]
        return new


class CacheReorderAsKeepMask:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:  # "keep these rows": a mask, so order and repeats are lost
            keep = torch.zeros(self.k.shape[0], dtype=torch.bool, device=self.k.device)
            keep[index] = True
            self.k, self.v = self.k[keep], self.v[keep]


class CacheKeysTwice:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.k  # copy-paste slip: the keys twice

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


# ---------------------------------------------------------------- correct variants


class CacheChunkList:
    """Each step's keys and values kept as separate chunks, concatenated when asked."""

    def __init__(self) -> None:
        self.k_chunks: list[Tensor] = []
        self.v_chunks: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k_chunks.append(k)
        self.v_chunks.append(v)
        return torch.cat(self.k_chunks, dim=2), torch.cat(self.v_chunks, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.k_chunks = [k.index_select(0, index) for k in self.k_chunks]
        self.v_chunks = [v.index_select(0, index) for v in self.v_chunks]


class CacheDoublingBuffer:
    """A buffer written in place, doubled when full; the filled part is returned as a view."""

    def __init__(self, capacity: int = 4) -> None:
        self.capacity = capacity
        self.filled = 0
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def _grow(self, k: Tensor, v: Tensor, needed: int) -> None:
        size = max(needed, self.capacity)
        if self.k is not None:
            size = max(size, 2 * self.k.shape[2])
        B, H, _, Dh = k.shape
        new_k = k.new_zeros(B, H, size, Dh)
        new_v = v.new_zeros(B, H, size, v.shape[-1])
        if self.k is not None:
            new_k[:, :, : self.filled] = self.k[:, :, : self.filled]
            new_v[:, :, : self.filled] = self.v[:, :, : self.filled]
        self.k, self.v = new_k, new_v

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.filled + k.shape[2]
        if self.k is None or end > self.k.shape[2]:
            self._grow(k, v, end)
        self.k[:, :, self.filled : end] = k
        self.v[:, :, self.filled : end] = v
        self.filled = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[index].clone()
            self.v = self.v[index].clone()


CASES = [
    BlindCase(
        CHECK,
        "returns_new_only",
        CacheReturnsNewOnly,
        "mistake",
        "append_self stores everything but returns only the keys and values that came in.",
    ),
    BlindCase(
        CHECK,
        "cat_on_heads_axis",
        CacheCatOnHeads,
        "mistake",
        "I concatenated on dim=1, the heads axis, instead of dim=2, the positions.",
    ),
    BlindCase(
        CHECK,
        "reorder_on_time_axis",
        CacheReorderTime,
        "mistake",
        "reorder selects along dim 2, the positions, instead of the batch rows.",
    ),
    BlindCase(
        CHECK,
        "reorder_keys_only",
        CacheReorderKeysOnly,
        "mistake",
        "reorder moves the keys but leaves the values in their old rows.",
    ),
    BlindCase(
        CHECK,
        "class_level_lists",
        CacheSharedClassLists,
        "mistake",
        "I kept the keys and values in lists declared as class attributes, so all the "
        "blocks' caches share them and each new cache clears the others.",
    ),
    BlindCase(
        CHECK,
        "fixed_buffer_of_16",
        CacheFixedBuffer,
        "mistake",
        "I preallocated room for 16 positions and never grow it, so a longer output fails.",
    ),
    BlindCase(
        CHECK,
        "newest_prepended",
        CachePrepends,
        "mistake",
        "I put the new positions in front of the old ones, thinking the order of the keys "
        "does not matter; it does once a padding mask is laid over them.",
    ),
    BlindCase(
        CHECK,
        "reorder_copy_into_old",
        CacheReorderInPlaceCopy,
        "mistake",
        "reorder copies the selected rows back into the existing tensors with copy_, which "
        "fails when the index has fewer rows than the cache.",
    ),
    BlindCase(
        CHECK,
        "reorder_returns_copy",
        CacheReorderReturnsCopy,
        "mistake",
        "reorder returns a reordered new cache and leaves the cache it was called on unchanged.",
    ),
    BlindCase(
        CHECK,
        "reorder_as_keep_mask",
        CacheReorderAsKeepMask,
        "mistake",
        "reorder turns the index into a boolean keep-mask, which loses the order and the "
        "repeated rows.",
    ),
    BlindCase(
        CHECK,
        "keys_returned_twice",
        CacheKeysTwice,
        "mistake",
        "append_self returns the keys twice (self.k, self.k) instead of keys and values.",
    ),
    BlindCase(
        CHECK,
        "chunk_list",
        CacheChunkList,
        "correct",
        "Every step's keys and values kept as chunks in a list, concatenated on each call; "
        "reorder index_selects every chunk.",
    ),
    BlindCase(
        CHECK,
        "doubling_buffer",
        CacheDoublingBuffer,
        "correct",
        "A preallocated buffer written in place and doubled when full, with an optional "
        "capacity argument; reorder clones the selected rows.",
    ),
]
