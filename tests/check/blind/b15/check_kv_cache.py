"""Blind set B15, check_kv_cache (chapter 15): a decoder block's key/value cache as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


class _Cat:
    """A right cache by torch.cat; the mistakes override one method."""

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


class CacheCatWrongDim(_Cat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:  # concatenate along the last axis
            self.k = torch.cat([self.k, k], dim=-1)
            self.v = torch.cat([self.v, v], dim=-1)
        return self.k, self.v


class CacheNewFirst(_Cat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([k, self.k], dim=2)
            self.v = torch.cat([v, self.v], dim=2)
        return self.k, self.v


class CacheReturnsNewOnly(_Cat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        super().append_self(k, v)
        return k, v


class CacheReturnsOld(_Cat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        old = (k, v) if self.k is None else (self.k, self.v)
        super().append_self(k, v)
        return old  # what was there before this step


class CacheReorderNoop(_Cat):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k[index], self.v[index]  # noqa: B018 - forgot to assign


class CacheReorderWrongAxis(_Cat):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(1, index)
            self.v = self.v.index_select(1, index)


class CacheReorderKeysOnly(_Cat):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[index]


class CacheReorderScatter(_Cat):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:  # put row i where index says
            new_k, new_v = torch.empty_like(self.k), torch.empty_like(self.v)
            new_k[index], new_v[index] = self.k, self.v
            self.k, self.v = new_k, new_v


class CacheSharedClassState:
    k: list = []  # a class attribute: every cache shares it
    v: list = []

    def __init__(self) -> None:
        pass

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k.append(k)
        self.v.append(v)
        return torch.cat(self.k, dim=2), torch.cat(self.v, dim=2)

    def reorder(self, index: Tensor) -> None:
        CacheSharedClassState.k = [t[index] for t in self.k]
        CacheSharedClassState.v = [t[index] for t in self.v]


class CacheBufferInPlaceInput(_Cat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=2)
            self.v = torch.cat([self.v, k], dim=2)  # copy-paste slip: k twice
        return self.k, self.v


# ---------------------------------------------------------------- correct variants


class CacheLists:
    """Python lists of the steps' tensors, concatenated on demand; reorder keeps the lists."""

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

    def __len__(self) -> int:
        return sum(k.shape[2] for k in self.keys)


class CachePreallocated:
    """A buffer that doubles when full, returned as slices; a capacity argument."""

    def __init__(self, capacity: int = 4) -> None:
        self.capacity, self.length = capacity, 0
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.length + k.shape[2]
        if self.k is None or end > self.k.shape[2]:
            size = max(end, self.capacity, 0 if self.k is None else 2 * self.k.shape[2])
            B, H, _, Dh = k.shape
            nk, nv = k.new_zeros(B, H, size, Dh), v.new_zeros(B, H, size, v.shape[-1])
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
            self.k, self.v = self.k[index], self.v[index]


class CacheDict:
    """A dict of tensors, torch.cat with dim=2, torch.index_select for the reorder."""

    def __init__(self) -> None:
        self.store: dict[str, Tensor] = {}

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        for name, new in (("k", k), ("v", v)):
            old = self.store.get(name)
            self.store[name] = new if old is None else torch.cat((old, new), 2)
        return self.store["k"], self.store["v"]

    def reorder(self, index: Tensor) -> None:
        self.store = {n: torch.index_select(t, 0, index) for n, t in self.store.items()}


CASES = [
    BlindCase(
        CHECK,
        "cat_last_axis",
        CacheCatWrongDim,
        "mistake",
        "I concatenated along dim=-1 (the head dimension) instead of the time axis, dim=2.",
    ),
    BlindCase(
        CHECK,
        "new_positions_first",
        CacheNewFirst,
        "mistake",
        "I put the new keys before the cached ones: torch.cat([k, self.k]).",
    ),
    BlindCase(
        CHECK,
        "returns_new_only",
        CacheReturnsNewOnly,
        "mistake",
        "append_self stores everything but returns only the new k and v.",
    ),
    BlindCase(
        CHECK,
        "returns_before_append",
        CacheReturnsOld,
        "mistake",
        "I return what the cache held before this step's keys were added.",
    ),
    BlindCase(
        CHECK,
        "reorder_not_assigned",
        CacheReorderNoop,
        "mistake",
        "reorder indexes the tensors but never assigns the result back.",
    ),
    BlindCase(
        CHECK,
        "reorder_heads_axis",
        CacheReorderWrongAxis,
        "mistake",
        "reorder selects along dim 1 (the heads) instead of the batch dim 0.",
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
        "reorder_scatter",
        CacheReorderScatter,
        "mistake",
        "reorder writes row i to position index[i] (new[index] = old) instead of new = old[index].",
    ),
    BlindCase(
        CHECK,
        "class_level_lists",
        CacheSharedClassState,
        "mistake",
        "I declared the lists as class attributes, so every cache (every block) shares them.",
    ),
    BlindCase(
        CHECK,
        "values_are_keys",
        CacheBufferInPlaceInput,
        "mistake",
        "A copy-paste slip: the new keys are appended to the values too.",
    ),
    BlindCase(
        CHECK,
        "list_of_steps",
        CacheLists,
        "correct",
        "Lists of per-step tensors concatenated on every call; a __len__ helper.",
    ),
    BlindCase(
        CHECK,
        "preallocated_buffer",
        CachePreallocated,
        "correct",
        "A preallocated buffer that doubles when full, returning slices; capacity argument.",
    ),
    BlindCase(
        CHECK,
        "dict_store",
        CacheDict,
        "correct",
        "A dict of tensors with torch.cat and torch.index_select.",
    ),
]
