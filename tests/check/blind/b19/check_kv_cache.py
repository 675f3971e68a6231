"""Blind set B19, check_kv_cache (chapter 15): one decoder block's key/value cache as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


# ---------------------------------------------------------------- mistakes


class CacheConcatHeads:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=1)  # dim 1 is the heads of (B, H, T, Dh)
            self.v = torch.cat([self.v, v], dim=1)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


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


class CacheReturnsBeforeAppend:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        past_k = k if self.k is None else self.k
        past_v = v if self.v is None else self.v
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return past_k, past_v  # what was cached, then stored the new ones

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheNewFirst:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is not None:
            k, v = torch.cat([k, self.k], dim=2), torch.cat([v, self.v], dim=2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReorderNoop:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is not None:
            k, v = torch.cat([self.k, k], dim=2), torch.cat([self.v, v], dim=2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k.index_select(0, index)  # I thought index_select works in place
            self.v.index_select(0, index)


class CacheReorderTimeAxis:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is not None:
            k, v = torch.cat([self.k, k], dim=2), torch.cat([self.v, v], dim=2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            keep = index[index < self.k.shape[2]]
            self.k = self.k.index_select(2, keep)  # along the positions
            self.v = self.v.index_select(2, keep)


class CacheReorderKeysOnly:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is not None:
            k, v = torch.cat([self.k, k], dim=2), torch.cat([self.v, v], dim=2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[index]  # forgot the values


class CacheReorderUnique:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is not None:
            k, v = torch.cat([self.k, k], dim=2), torch.cat([self.v, v], dim=2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            mask = torch.zeros(self.k.shape[0], dtype=torch.bool)
            mask[index] = True  # the rows to keep
            self.k, self.v = self.k[mask], self.v[mask]


class CacheSharedClassState:
    keys: list[Tensor] = []  # one list for the cache
    values: list[Tensor] = []

    def __init__(self) -> None:
        self.keys.clear()
        self.values.clear()

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index: Tensor) -> None:
        for i in range(len(self.keys)):
            self.keys[i] = self.keys[i][index]
            self.values[i] = self.values[i][index]


class CacheReorderLeavesPrefix:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is not None:
            k, v = torch.cat([self.k, k], dim=2), torch.cat([self.v, v], dim=2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[: len(index)], self.v[: len(index)]  # drop the finished rows


class CacheBufferNoGrow:
    def __init__(self, capacity: int = 4) -> None:
        self.capacity = capacity
        self.k = self.v = None
        self.length = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        if self.k is None:
            self.k = k.new_zeros(B, H, self.capacity, Dh)
            self.v = v.new_zeros(B, H, self.capacity, v.shape[-1])
        end = min(self.length + T, self.capacity)  # a full buffer: nothing more fits
        self.k[:, :, self.length : end] = k[:, :, : end - self.length]
        self.v[:, :, self.length : end] = v[:, :, : end - self.length]
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


# ---------------------------------------------------------------- correct variants


class CacheConcat:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is not None:
            k = torch.cat([self.k, k], dim=-2)
            v = torch.cat([self.v, v], dim=-2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(0, index)
            self.v = self.v.index_select(0, index)


class CacheChunks:
    """Keeps every appended chunk and concatenates on demand."""

    def __init__(self) -> None:
        self.k_chunks: list[Tensor] = []
        self.v_chunks: list[Tensor] = []

    def __len__(self) -> int:
        return sum(c.shape[2] for c in self.k_chunks)

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k_chunks.append(k)
        self.v_chunks.append(v)
        return torch.cat(self.k_chunks, 2), torch.cat(self.v_chunks, 2)

    def reorder(self, index: Tensor) -> None:
        self.k_chunks = [c[index] for c in self.k_chunks]
        self.v_chunks = [c[index] for c in self.v_chunks]


class CacheGrowingBuffer:
    def __init__(self, capacity: int = 2) -> None:
        self.capacity = capacity
        self.length = 0
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.length + k.shape[2]
        if self.k is None or end > self.k.shape[2]:
            size = max(end, 2 * (0 if self.k is None else self.k.shape[2]), self.capacity)
            new_k = k.new_zeros(k.shape[0], k.shape[1], size, k.shape[3])
            new_v = v.new_zeros(v.shape[0], v.shape[1], size, v.shape[3])
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
            self.k = self.k[index]
            self.v = self.v[index]


CASES = [
    BlindCase(
        CHECK,
        "concat_on_heads",
        CacheConcatHeads,
        "mistake",
        "I concatenated along dim=1, the heads, instead of the positions (dim=2).",
    ),
    BlindCase(
        CHECK,
        "returns_new_only",
        CacheReturnsNewOnly,
        "mistake",
        "append_self stores the new keys but returns only them; I also never wrote reorder.",
    ),
    BlindCase(
        CHECK,
        "returns_before_append",
        CacheReturnsBeforeAppend,
        "mistake",
        "I returned what was cached before this step, then stored the new positions.",
    ),
    BlindCase(
        CHECK,
        "new_positions_first",
        CacheNewFirst,
        "mistake",
        "I concatenated [new, cached] instead of [cached, new].",
    ),
    BlindCase(
        CHECK,
        "reorder_noop",
        CacheReorderNoop,
        "mistake",
        "My reorder calls index_select without assigning the result, as if it worked in place.",
    ),
    BlindCase(
        CHECK,
        "reorder_time_axis",
        CacheReorderTimeAxis,
        "mistake",
        "I applied index_select along the positions (dim 2) instead of the batch.",
    ),
    BlindCase(
        CHECK,
        "reorder_keys_only",
        CacheReorderKeysOnly,
        "mistake",
        "reorder reorders the keys and forgets the values.",
    ),
    BlindCase(
        CHECK,
        "reorder_boolean_mask",
        CacheReorderUnique,
        "mistake",
        "I turned index into a boolean mask of rows to keep, which loses repeated rows and "
        "the order.",
    ),
    BlindCase(
        CHECK,
        "class_level_lists",
        CacheSharedClassState,
        "mistake",
        "I kept the keys in lists defined on the class, so every block's cache shares them.",
    ),
    BlindCase(
        CHECK,
        "reorder_truncates",
        CacheReorderLeavesPrefix,
        "mistake",
        "reorder keeps the first len(index) rows instead of the rows index names.",
    ),
    BlindCase(
        CHECK,
        "buffer_never_grows",
        CacheBufferNoGrow,
        "mistake",
        "A preallocated buffer of 4 positions that silently stops storing when full.",
    ),
    BlindCase(
        CHECK,
        "concat_index_select",
        CacheConcat,
        "correct",
        "torch.cat along dim=-2 and index_select(0, index).",
    ),
    BlindCase(
        CHECK,
        "list_of_chunks",
        CacheChunks,
        "correct",
        "Keeps a list of chunks, concatenated at every call; reorder indexes each chunk; an "
        "extra __len__.",
    ),
    BlindCase(
        CHECK,
        "growing_buffer",
        CacheGrowingBuffer,
        "correct",
        "A buffer that doubles when full, written in place, returning views.",
    ),
]
