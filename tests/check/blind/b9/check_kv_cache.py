"""Blind set B9, check_kv_cache (chapter 15): one decoder block's key/value cache as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


# ---------------------------------------------------------------- mistakes


class CacheReturnsOnlyNew:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return k, v  # returned the new positions instead of self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheNeverStored:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            return k, v  # forgot to keep the first step
        return torch.cat([self.k, k], dim=2), torch.cat([self.v, v], dim=2)

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheCatOnHeads:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=1)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=1)
        return self.k, self.v

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
        self.k.index_select(0, index)  # result thrown away
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
        if self.k is not None:
            self.k = self.k[:, index]
            self.v = self.v[:, index]


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


class CacheNewFirst:
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


class CacheClassLevelLists:
    keys: list = []  # shared by every instance: every layer's cache is the same list
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


class CacheFixedBuffer:
    def __init__(self) -> None:
        self.k = None
        self.v = None
        self.length = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        if self.k is None:
            self.k = k.new_zeros(B, H, 8, Dh)  # room for 8 positions, "enough"
            self.v = v.new_zeros(B, H, 8, v.shape[-1])
        end = min(self.length + T, 8)
        self.k[:, :, self.length : end] = k[:, :, : end - self.length]
        self.v[:, :, self.length : end] = v[:, :, : end - self.length]
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]

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


class CacheValuesFromKeys:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, k], dim=2)  # copy-paste: k
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


# ---------------------------------------------------------------- correct variants


class CacheChunkList:
    def __init__(self) -> None:
        self.k_chunks: list[Tensor] = []
        self.v_chunks: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k_chunks.append(k)
        self.v_chunks.append(v)
        return torch.cat(self.k_chunks, dim=2), torch.cat(self.v_chunks, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.k_chunks = [c.index_select(0, index) for c in self.k_chunks]
        self.v_chunks = [c.index_select(0, index) for c in self.v_chunks]


class CacheGrowingBuffer:
    def __init__(self, capacity: int = 4) -> None:
        self.capacity = capacity
        self.k = self.v = None
        self.length = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, _ = k.shape
        end = self.length + T
        if self.k is None or end > self.k.shape[2]:
            size = max(end, 2 * (0 if self.k is None else self.k.shape[2]), self.capacity)
            new_k = k.new_zeros(B, H, size, k.shape[-1])
            new_v = v.new_zeros(B, H, size, v.shape[-1])
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
            if len(index) == self.k.shape[0]:
                self.k.copy_(self.k[index])  # same size: copy the gathered rows back in place
                self.v.copy_(self.v[index])
            else:
                self.k, self.v = self.k[index], self.v[index]


class CacheTimeFirstLayout:
    """Stores (T, B, H, Dh) and transposes back when asked."""

    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        k_t, v_t = k.permute(2, 0, 1, 3), v.permute(2, 0, 1, 3)  # (T, B, H, Dh)
        self.k = k_t if self.k is None else torch.cat([self.k, k_t], dim=0)
        self.v = v_t if self.v is None else torch.cat([self.v, v_t], dim=0)
        return self.k.permute(1, 2, 0, 3), self.v.permute(1, 2, 0, 3)

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[:, index]
            self.v = self.v[:, index]


CASES = [
    BlindCase(
        CHECK,
        "returns_only_new",
        CacheReturnsOnlyNew,
        "mistake",
        "append_self stores the concatenation but returns only the new keys and values",
    ),
    BlindCase(
        CHECK,
        "first_step_not_stored",
        CacheNeverStored,
        "mistake",
        "append_self returns the concatenation but never assigns it to self.k / self.v",
    ),
    BlindCase(
        CHECK,
        "cat_on_heads_axis",
        CacheCatOnHeads,
        "mistake",
        "I concatenate along dim=1 (the heads) instead of dim=2 (the positions)",
    ),
    BlindCase(
        CHECK,
        "reorder_result_discarded",
        CacheReorderNoop,
        "mistake",
        "reorder calls index_select but throws the result away, so nothing moves",
    ),
    BlindCase(
        CHECK,
        "reorder_on_heads",
        CacheReorderHeads,
        "mistake",
        "reorder indexes dim 1 (self.k[:, index]) instead of the batch rows",
    ),
    BlindCase(
        CHECK,
        "reorder_boolean_rows",
        CacheReorderUnique,
        "mistake",
        "reorder turns index into a boolean mask of rows to keep: repeated rows collapse and "
        "the order is lost (right when index is sorted without repeats)",
    ),
    BlindCase(
        CHECK,
        "new_positions_first",
        CacheNewFirst,
        "mistake",
        "I concatenate [new, old], so the positions come back in reverse order of arrival",
    ),
    BlindCase(
        CHECK,
        "class_level_lists",
        CacheClassLevelLists,
        "mistake",
        "keys and values are class attributes (keys: list = []), so every cache instance, one "
        "per layer, shares one list",
    ),
    BlindCase(
        CHECK,
        "fixed_buffer_8",
        CacheFixedBuffer,
        "mistake",
        "a preallocated buffer of 8 positions that never grows: later positions are dropped",
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
        "values_from_keys",
        CacheValuesFromKeys,
        "mistake",
        "copy-paste slip: the value cache is extended with k instead of v",
    ),
    BlindCase(
        CHECK,
        "chunk_list",
        CacheChunkList,
        "correct",
        "a list of chunks concatenated on every call; reorder index_selects each chunk",
    ),
    BlindCase(
        CHECK,
        "growing_buffer",
        CacheGrowingBuffer,
        "correct",
        "a buffer that doubles when full, written in place; reorder copies the gathered rows "
        "back in place when the batch size stays the same",
    ),
    BlindCase(
        CHECK,
        "time_first_layout",
        CacheTimeFirstLayout,
        "correct",
        "stored as (T, B, H, Dh), permuted back to (B, H, T, Dh) on return",
    ),
]
