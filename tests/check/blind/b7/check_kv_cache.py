"""Blind set B7, check_kv_cache (chapter 15): one decoder block's key/value cache."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


# ---------------------------------------------------------------- mistakes


class CacheReturnsOnlyNew:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return k, v  # the new positions only

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheNeverStored:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            return k, v
        return torch.cat([self.k, k], dim=2), torch.cat([self.v, v], dim=2)  # not saved

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheCatOverHeads:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=1)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=1)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReorderOnlyKeys:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(0, index)


class CacheReorderScatters:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is None:
            return
        new_k = self.k.new_zeros((len(index), *self.k.shape[1:]))
        new_v = self.v.new_zeros((len(index), *self.v.shape[1:]))
        new_k[index] = self.k[: len(index)]  # row i goes to place index[i]
        new_v[index] = self.v[: len(index)]
        self.k, self.v = new_k, new_v


class CacheClassLevelLists:
    keys: list = []  # shared by every instance
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


class CacheValuesFromKeys:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, k], dim=2)  # copy-paste: k
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReturnsWholeBuffer:
    def __init__(self, capacity: int = 16) -> None:
        self.capacity, self.length = capacity, 0
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.length + k.shape[2]
        if self.k is None or end > self.k.shape[2]:
            size = max(end, self.capacity, 0 if self.k is None else 2 * self.k.shape[2])
            new_k = k.new_zeros(k.shape[0], k.shape[1], size, k.shape[3])
            new_v = v.new_zeros(v.shape[0], v.shape[1], size, v.shape[3])
            if self.k is not None:
                new_k[:, :, : self.length] = self.k[:, :, : self.length]
                new_v[:, :, : self.length] = self.v[:, :, : self.length]
            self.k, self.v = new_k, new_v
        self.k[:, :, self.length : end] = k
        self.v[:, :, self.length : end] = v
        self.length = end
        return self.k, self.v  # the whole buffer, unfilled zeros included

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheGrowsWithoutCopy:
    def __init__(self, capacity: int = 4) -> None:
        self.capacity, self.length = capacity, 0
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.length + k.shape[2]
        if self.k is None or end > self.k.shape[2]:
            size = max(end, self.capacity, 0 if self.k is None else 2 * self.k.shape[2])
            B, H, _, Dh = k.shape
            self.k = k.new_zeros(B, H, size, Dh)  # a bigger buffer, but the old keys are lost
            self.v = v.new_zeros(B, H, size, v.shape[3])
        self.k[:, :, self.length : end] = k
        self.v[:, :, self.length : end] = v
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]

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
        if self.k is not None:  # in place, to save memory; assumes the batch keeps its size
            self.k.copy_(self.k[index])
            self.v.copy_(self.v[index])


class CacheReorderWrongAxis:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:  # the rows of a (B, H, T, Dh) tensor ... I took dim 2
            self.k = self.k.index_select(2, index)
            self.v = self.v.index_select(2, index)


# ---------------------------------------------------------------- correct variants


class CacheListOfSteps:
    """One tensor per append kept in a list; concatenated on every call."""

    def __init__(self) -> None:
        self.ks: list[Tensor] = []
        self.vs: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.ks.append(k)
        self.vs.append(v)
        return torch.cat(self.ks, dim=-2), torch.cat(self.vs, dim=-2)

    def reorder(self, index: Tensor) -> None:
        self.ks = [k.index_select(0, index) for k in self.ks]
        self.vs = [v.index_select(0, index) for v in self.vs]


class CacheConcat:
    """torch.cat on every append, rows picked with advanced indexing; extra optional size."""

    def __init__(self, max_positions: int | None = None) -> None:
        self.max_positions = max_positions
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k.clone(), v.clone()
        else:
            self.k = torch.cat((self.k, k), dim=2)
            self.v = torch.cat((self.v, v), dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[index.long()]
            self.v = self.v[index.long()]


class CacheDoublingBuffer:
    """A preallocated buffer written in place, doubled (old content copied) when full."""

    def __init__(self, capacity: int = 2) -> None:
        self.capacity, self.length = capacity, 0
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        start, end = self.length, self.length + k.shape[2]
        if self.k is None or end > self.k.shape[2]:
            size = max(end, self.capacity if self.k is None else 2 * self.k.shape[2])
            new_k = k.new_empty(*k.shape[:2], size, k.shape[3])
            new_v = v.new_empty(*v.shape[:2], size, v.shape[3])
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
        "returns_only_new_positions",
        CacheReturnsOnlyNew,
        "mistake",
        "append_self stores the new keys and values but returns only the new ones, not all "
        "positions so far.",
    ),
    BlindCase(
        CHECK,
        "cache_never_updated",
        CacheNeverStored,
        "mistake",
        "append_self returns the concatenation but never assigns it back to self.k / self.v, "
        "so the cache stays empty.",
    ),
    BlindCase(
        CHECK,
        "concatenates_over_heads",
        CacheCatOverHeads,
        "mistake",
        "I concatenate along dim=1 (the heads) instead of dim=2 (the positions).",
    ),
    BlindCase(
        CHECK,
        "reorder_only_keys",
        CacheReorderOnlyKeys,
        "mistake",
        "reorder selects the rows of the keys but forgets the values.",
    ),
    BlindCase(
        CHECK,
        "reorder_scatters_instead_of_gathers",
        CacheReorderScatters,
        "mistake",
        "In reorder I send row i to place index[i] (new[index] = old) instead of taking row "
        "index[i] for place i (new = old[index]).",
    ),
    BlindCase(
        CHECK,
        "class_level_lists_shared",
        CacheClassLevelLists,
        "mistake",
        "I declared keys = [] and values = [] on the class, not in __init__, so every cache "
        "(every block, every new output) shares the same lists.",
    ),
    BlindCase(
        CHECK,
        "values_built_from_keys",
        CacheValuesFromKeys,
        "mistake",
        "Copy-paste slip: the cached values are concatenated with the new keys, "
        "torch.cat([self.v, k]).",
    ),
    BlindCase(
        CHECK,
        "returns_whole_preallocated_buffer",
        CacheReturnsWholeBuffer,
        "mistake",
        "Like the book I preallocate a buffer and write in place, but I return the whole buffer "
        "(unfilled zero positions included) instead of the first length positions.",
    ),
    BlindCase(
        CHECK,
        "buffer_grown_without_copy",
        CacheGrowsWithoutCopy,
        "mistake",
        "When the buffer is full I allocate a bigger one but forget to copy the old keys and "
        "values into it.",
    ),
    BlindCase(
        CHECK,
        "reorder_in_place_copy",
        CacheReorderInPlaceCopy,
        "mistake",
        "reorder copies the selected rows back into the same tensor with copy_, which fails "
        "when the batch shrinks (finished sentences dropped).",
    ),
    BlindCase(
        CHECK,
        "reorder_wrong_axis",
        CacheReorderWrongAxis,
        "mistake",
        "reorder uses index_select(2, index): it picks positions, not batch rows.",
    ),
    BlindCase(
        CHECK,
        "list_of_steps",
        CacheListOfSteps,
        "correct",
        "A Python list of the appended tensors, concatenated on dim -2 on every call; reorder "
        "applies index_select(0, index) to each.",
    ),
    BlindCase(
        CHECK,
        "concat_advanced_indexing",
        CacheConcat,
        "correct",
        "torch.cat on every append (the first one cloned), reorder with self.k[index]; an "
        "unused optional max_positions argument.",
    ),
    BlindCase(
        CHECK,
        "doubling_buffer",
        CacheDoublingBuffer,
        "correct",
        "A preallocated buffer written in place and doubled when full (old positions copied), "
        "returning views of the filled part; reorder keeps only the filled part.",
    ),
]
