"""Blind set B31, check_kv_cache (chapter 15): one decoder block's key/value cache."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


class _CatCache:
    """The plain concatenating cache most readers start from."""

    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[index]
            self.v = self.v[index]


# ---------------------------------------------------------------- mistakes


class CacheCatOverHeads(_CatCache):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=1)  # dim 1 is H, not time
            self.v = torch.cat([self.v, v], dim=1)
        return self.k, self.v


class CacheReturnsNewOnly(_CatCache):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=2)
            self.v = torch.cat([self.v, v], dim=2)
        return k, v


class CacheOverwrites(_CatCache):
    """Stores only the latest step's keys and values."""

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k, self.v = k, v
        return self.k, self.v


class CacheReorderNoop(_CatCache):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        pass  # the rows are reordered by the caller anyway, I thought


class CacheReorderTime(_CatCache):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(2, index)  # the time axis
            self.v = self.v.index_select(2, index)


class CacheReorderInverse(_CatCache):
    """Sorted the rows by index (argsort) instead of taking rows index."""

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            order = index.argsort()
            self.k, self.v = self.k[order], self.v[order]


class CacheKeysAsValues(_CatCache):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = k if self.v is None else torch.cat([self.v, k], dim=2)  # copy-paste slip
        return self.k, self.v


class CacheNewFirst(_CatCache):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([k, self.k], dim=2)
        self.v = v if self.v is None else torch.cat([v, self.v], dim=2)
        return self.k, self.v


class CacheGrowWithoutCopy:
    """A buffer that doubles when full, but the new buffer does not get the old contents."""

    def __init__(self, capacity: int = 4) -> None:
        self.capacity = capacity
        self.length = 0
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.length + k.shape[2]
        if self.k is None or end > self.k.shape[2]:
            B, H, _, Dh = k.shape
            size = max(end, self.capacity, 2 * (0 if self.k is None else self.k.shape[2]))
            self.k = k.new_zeros(B, H, size, Dh)
            self.v = v.new_zeros(B, H, size, v.shape[-1])
        self.k[:, :, self.length : end] = k
        self.v[:, :, self.length : end] = v
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheWholeBuffer:
    """Returns the whole preallocated buffer, unfilled positions included."""

    def __init__(self, capacity: int = 64) -> None:
        self.capacity = capacity
        self.length = 0
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        if self.k is None:
            self.k = k.new_zeros(B, H, self.capacity, Dh)
            self.v = v.new_zeros(B, H, self.capacity, v.shape[-1])
        self.k[:, :, self.length : self.length + T] = k
        self.v[:, :, self.length : self.length + T] = v
        self.length += T
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReorderInPlaceLoop(_CatCache):
    """Reordered row by row into the same tensor, overwriting rows still to be read."""

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k.clone() if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v.clone() if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is None:
            return
        for row, src in enumerate(index.tolist()):
            self.k[row] = self.k[src]
            self.v[row] = self.v[src]


class CacheLengthPlusOne:
    """A buffer whose length grows by one per call, whatever the number of new positions."""

    def __init__(self) -> None:
        self.length = 0
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        if self.k is None:
            self.k = k.new_zeros(B, H, 256, Dh)
            self.v = v.new_zeros(B, H, 256, v.shape[-1])
        self.k[:, :, self.length : self.length + T] = k
        self.v[:, :, self.length : self.length + T] = v
        self.length += 1  # one token per decoding step
        return self.k[:, :, : self.length], self.v[:, :, : self.length]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReorderKeysOnly(_CatCache):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(0, index)


# ---------------------------------------------------------------- correct variants


class CacheConcat(_CatCache):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=-2)
            self.v = torch.cat([self.v, v], dim=-2)
        return self.k, self.v


class CacheChunkList:
    """A list of per-step chunks, concatenated when asked; reorder applies to every chunk."""

    def __init__(self) -> None:
        self.keys: list[Tensor] = []
        self.values: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.keys = [k.index_select(0, index) for k in self.keys]
        self.values = [v.index_select(0, index) for v in self.values]


class CacheDoublingBuffer:
    """Preallocated buffers written in place, doubled (with a copy) when full."""

    def __init__(self, capacity: int = 2) -> None:
        self.capacity = capacity
        self.length = 0
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.length + k.shape[2]
        if self.k is None or end > self.k.shape[2]:
            B, H, _, Dh = k.shape
            size = max(end, self.capacity, 0 if self.k is None else 2 * self.k.shape[2])
            new_k = k.new_empty(B, H, size, Dh)
            new_v = v.new_empty(B, H, size, v.shape[-1])
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
            self.k = self.k[index].contiguous()
            self.v = self.v[index].contiguous()


CASES = [
    BlindCase(
        CHECK,
        "concat_over_heads",
        CacheCatOverHeads,
        "mistake",
        "I concatenated along dim=1, which is the heads, not the positions.",
    ),
    BlindCase(
        CHECK,
        "returns_new_only",
        CacheReturnsNewOnly,
        "mistake",
        "append_self stores everything but returns only the new keys and values.",
    ),
    BlindCase(
        CHECK,
        "overwrites_instead_of_appending",
        CacheOverwrites,
        "mistake",
        "Each append replaces the stored keys and values with the new ones.",
    ),
    BlindCase(
        CHECK,
        "reorder_does_nothing",
        CacheReorderNoop,
        "mistake",
        "My reorder is empty: I thought the caller reorders the rows.",
    ),
    BlindCase(
        CHECK,
        "reorder_along_time",
        CacheReorderTime,
        "mistake",
        "I applied index_select on dim 2 (positions) instead of dim 0 (batch rows).",
    ),
    BlindCase(
        CHECK,
        "reorder_by_argsort",
        CacheReorderInverse,
        "mistake",
        "I reordered with index.argsort(), as if index said where each row should go.",
    ),
    BlindCase(
        CHECK,
        "keys_stored_as_values",
        CacheKeysAsValues,
        "mistake",
        "A copy-paste slip: the value cache is built from k.",
    ),
    BlindCase(
        CHECK,
        "new_positions_first",
        CacheNewFirst,
        "mistake",
        "torch.cat([k, self.k]): the new positions go before the old ones.",
    ),
    BlindCase(
        CHECK,
        "grow_without_copy",
        CacheGrowWithoutCopy,
        "mistake",
        "My buffer doubles when full, but I forgot to copy the old keys into the new buffer.",
    ),
    BlindCase(
        CHECK,
        "returns_whole_buffer",
        CacheWholeBuffer,
        "mistake",
        "I return the whole preallocated buffer, the unfilled positions included.",
    ),
    BlindCase(
        CHECK,
        "reorder_in_place_row_loop",
        CacheReorderInPlaceLoop,
        "mistake",
        "I reordered in place, row by row, overwriting rows that later rows still read.",
    ),
    BlindCase(
        CHECK,
        "length_plus_one_per_call",
        CacheLengthPlusOne,
        "mistake",
        "My length counter adds 1 per call, assuming one new token, even when T_new > 1.",
    ),
    BlindCase(
        CHECK,
        "reorder_keys_only",
        CacheReorderKeysOnly,
        "mistake",
        "reorder selects the rows of the keys but forgets the values.",
    ),
    BlindCase(
        CHECK,
        "concat_dim_minus_2",
        CacheConcat,
        "correct",
        "torch.cat along dim=-2; reorder by fancy indexing.",
    ),
    BlindCase(
        CHECK,
        "list_of_chunks",
        CacheChunkList,
        "correct",
        "A list of per-call chunks, concatenated on return; reorder applies to every chunk.",
    ),
    BlindCase(
        CHECK,
        "doubling_buffer",
        CacheDoublingBuffer,
        "correct",
        "A buffer written in place and doubled (old contents copied) when full.",
    ),
]
