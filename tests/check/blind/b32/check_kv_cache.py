"""Blind set B32, check_kv_cache (chapter 15): one decoder block's key/value cache."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


class _CatCache:
    """Keys and values concatenated along the time axis, dim 2 of (B, H, T, Dh)."""

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


class CacheCatOnHeads(_CatCache):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=1)  # "the sequence axis" of (B, T, ...)
            self.v = torch.cat([self.v, v], dim=1)
        return self.k, self.v


class CacheReturnsNewOnly(_CatCache):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        super().append_self(k, v)
        return k, v  # what was just added


class CacheReturnsBeforeAppend(_CatCache):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
            return k, v
        old_k, old_v = self.k, self.v
        self.k = torch.cat([self.k, k], dim=2)
        self.v = torch.cat([self.v, v], dim=2)
        return torch.cat([old_k, k[:, :, :0]], 2), torch.cat([old_v, v[:, :, :0]], 2)


class CachePrepends(_CatCache):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([k, self.k], dim=2)  # newest first
            self.v = torch.cat([v, self.v], dim=2)
        return self.k, self.v


class CacheKeysForValues(_CatCache):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        super().append_self(k, v)
        return self.k, self.k  # copy-paste slip


class CacheReturnsSwapped(_CatCache):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        super().append_self(k, v)
        return self.v, self.k


class CacheReorderNoop(_CatCache):
    def reorder(self, index: Tensor) -> None:
        pass  # the rows stay where they are


class CacheReorderWrongAxis(_CatCache):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(2, index)  # along the positions
            self.v = self.v.index_select(2, index)


class CacheReorderKeysOnly(_CatCache):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[index]


class CacheReorderInPlaceLoop(_CatCache):
    def reorder(self, index: Tensor) -> None:
        if self.k is None:
            return
        for row, source in enumerate(index.tolist()):  # overwrites rows it still has to read
            self.k[row] = self.k[source]
            self.v[row] = self.v[source]
        self.k, self.v = self.k[: len(index)], self.v[: len(index)]


class CacheReorderInverse(_CatCache):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            where = torch.zeros_like(index)
            where[index] = torch.arange(len(index), device=index.device)  # row i goes to index[i]
            self.k, self.v = self.k[where], self.v[where]


class CacheClassLevelList:
    """Chunks kept in lists made once, at class level: every cache shares them."""

    keys: list[Tensor] = []
    values: list[Tensor] = []

    def __init__(self) -> None:
        pass

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.keys[:] = [k[index] for k in self.keys]
        self.values[:] = [v[index] for v in self.values]


class CacheFixedCapacity:
    """A buffer of 16 positions, the chapter's capacity, that never grows."""

    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None
        self.length = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        if self.k is None:
            self.k = k.new_zeros(B, H, 16, Dh)
            self.v = v.new_zeros(B, H, 16, v.shape[-1])
        end = min(self.length + T, 16)
        self.k[:, :, self.length : end] = k[:, :, : end - self.length]
        self.v[:, :, self.length : end] = v[:, :, : end - self.length]
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheBufferLengthOffByOne:
    """A doubling buffer whose returned view stops one short of what was written."""

    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None
        self.length = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        start, end = self.length, self.length + k.shape[2]
        if self.k is None or end > self.k.shape[2]:
            size = max(end, 2 * (0 if self.k is None else self.k.shape[2]), 8)
            new_k = k.new_zeros(k.shape[0], k.shape[1], size, k.shape[3])
            new_v = v.new_zeros(v.shape[0], v.shape[1], size, v.shape[3])
            if self.k is not None:
                new_k[:, :, :start] = self.k[:, :, :start]
                new_v[:, :, :start] = self.v[:, :, :start]
            self.k, self.v = new_k, new_v
        self.k[:, :, start:end] = k
        self.v[:, :, start:end] = v
        self.length = end
        return self.k[:, :, : end + 1], self.v[:, :, : end + 1]  # "up to and including end"

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


# ---------------------------------------------------------------- correct variants


class CacheConcat(_CatCache):
    """torch.cat along dim 2 at every step; reorder by fancy indexing."""


class CacheChunkList:
    """The chunks kept in a per-instance list and concatenated when asked."""

    def __init__(self) -> None:
        self.keys: list[Tensor] = []
        self.values: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=-2), torch.cat(self.values, dim=-2)

    def reorder(self, index: Tensor) -> None:
        self.keys = [k.index_select(0, index) for k in self.keys]
        self.values = [v.index_select(0, index) for v in self.values]


class CacheDoublingBuffer:
    """A preallocated buffer, written in place, doubled when full (as the chapter's)."""

    def __init__(self, capacity: int = 4) -> None:
        self.capacity = capacity
        self.k: Tensor | None = None
        self.v: Tensor | None = None
        self.length = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        start, end = self.length, self.length + k.shape[2]
        if self.k is None or end > self.k.shape[2]:
            old = 0 if self.k is None else self.k.shape[2]
            size = max(end, self.capacity, 2 * old)
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
            self.k = self.k[:, :, : self.length].index_select(0, index)
            self.v = self.v[:, :, : self.length].index_select(0, index)


CASES = [
    BlindCase(
        CHECK,
        "cat_on_heads_axis",
        CacheCatOnHeads,
        "mistake",
        "I concatenated along dim=1, thinking of (B, T, D), but the tensors are (B, H, T, Dh).",
    ),
    BlindCase(
        CHECK,
        "returns_new_only",
        CacheReturnsNewOnly,
        "mistake",
        "I stored the new keys and values but returned only k and v as given.",
    ),
    BlindCase(
        CHECK,
        "returns_before_append",
        CacheReturnsBeforeAppend,
        "mistake",
        "I returned the keys and values as they were before this step's were added.",
    ),
    BlindCase(
        CHECK,
        "prepends_new",
        CachePrepends,
        "mistake",
        "I concatenated the new positions in front of the old ones.",
    ),
    BlindCase(
        CHECK,
        "keys_returned_as_values",
        CacheKeysForValues,
        "mistake",
        "A copy-paste slip: I return (self.k, self.k).",
    ),
    BlindCase(
        CHECK,
        "returns_values_keys",
        CacheReturnsSwapped,
        "mistake",
        "I return (values, keys) instead of (keys, values).",
    ),
    BlindCase(
        CHECK,
        "reorder_noop",
        CacheReorderNoop,
        "mistake",
        "I left reorder empty, thinking greedy search never needs it.",
    ),
    BlindCase(
        CHECK,
        "reorder_wrong_axis",
        CacheReorderWrongAxis,
        "mistake",
        "I reordered with index_select on dim 2, the positions, instead of dim 0.",
    ),
    BlindCase(
        CHECK,
        "reorder_keys_only",
        CacheReorderKeysOnly,
        "mistake",
        "reorder moves the keys and forgets the values.",
    ),
    BlindCase(
        CHECK,
        "reorder_in_place_loop",
        CacheReorderInPlaceLoop,
        "mistake",
        "I reordered in place with a loop self.k[i] = self.k[index[i]], overwriting rows "
        "that later entries still read.",
    ),
    BlindCase(
        CHECK,
        "reorder_inverse_permutation",
        CacheReorderInverse,
        "mistake",
        "I read index as 'row i moves to index[i]' and applied the inverse permutation.",
    ),
    BlindCase(
        CHECK,
        "class_level_lists",
        CacheClassLevelList,
        "mistake",
        "I declared keys: list = [] on the class, so every layer's cache shares one list.",
    ),
    BlindCase(
        CHECK,
        "fixed_capacity_16",
        CacheFixedCapacity,
        "mistake",
        "I preallocated 16 positions, the chapter's capacity, and never grew the buffer.",
    ),
    BlindCase(
        CHECK,
        "buffer_view_one_too_long",
        CacheBufferLengthOffByOne,
        "mistake",
        "I return the buffer up to end + 1, one unwritten (zero) position too many.",
    ),
    BlindCase(
        CHECK,
        "concat",
        CacheConcat,
        "correct",
        "torch.cat along dim 2 at every step; reorder with k[index].",
    ),
    BlindCase(
        CHECK,
        "chunk_list",
        CacheChunkList,
        "correct",
        "A list of chunks per instance, concatenated on dim -2 when asked; reorder with "
        "index_select on every chunk.",
    ),
    BlindCase(
        CHECK,
        "doubling_buffer",
        CacheDoublingBuffer,
        "correct",
        "A preallocated buffer written in place and doubled when full; capacity as an "
        "optional argument.",
    ),
]
