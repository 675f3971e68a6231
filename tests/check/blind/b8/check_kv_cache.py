"""Blind set B8, check_kv_cache (chapter 15): one decoder block's key/value cache as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


# ---------------------------------------------------------------- mistakes


class CacheNotStored:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            return k, v
        return torch.cat([self.k, k], dim=2), torch.cat([self.v, v], dim=2)  # never saved

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheOverwritten:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k, self.v = k, v  # keeps only the newest positions
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheCatOnHeads:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=1)  # dim 1 is H, not the time axis
            self.v = torch.cat([self.v, v], dim=1)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheNewFirst:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([k, self.k], dim=2)  # newest first
            self.v = torch.cat([v, self.v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReorderNoop:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k[index]  # I thought indexing works in place  # noqa: B018
        self.v[index]  # noqa: B018


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
            self.k = self.k.index_select(0, index)  # forgot the values


class CacheReorderScatter:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            # row i goes to place index[i]: the inverse of keeping rows `index`
            new_k, new_v = self.k.clone(), self.v.clone()
            new_k[index] = self.k
            new_v[index] = self.v
            self.k, self.v = new_k, new_v


class CacheReorderTimeAxis:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(2, index)  # reordered the positions, not the rows
            self.v = self.v.index_select(2, index)


class CacheZeroStart:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:  # start from one empty (zero) position, then concatenate
            self.k = torch.zeros_like(k[:, :, :1])
            self.v = torch.zeros_like(v[:, :, :1])
        self.k = torch.cat([self.k, k], dim=2)
        self.v = torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k, self.v = self.k[index], self.v[index]


class CacheFixedBuffer:
    def __init__(self, capacity: int = 16) -> None:
        self.capacity = capacity
        self.length = 0
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        if self.k is None:  # room for `capacity` positions, never grown
            self.k = k.new_zeros(B, H, self.capacity, Dh)
            self.v = v.new_zeros(B, H, self.capacity, v.shape[-1])
        end = min(self.length + T, self.capacity)
        self.k[:, :, self.length : end] = k[:, :, : end - self.length]
        self.v[:, :, self.length : end] = v[:, :, : end - self.length]
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReorderUnique:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            keep = index.unique()  # no row twice, I thought; but unique also sorts
            self.k, self.v = self.k[keep], self.v[keep]


# ---------------------------------------------------------------- correct variants


class CacheChunks:
    def __init__(self) -> None:
        self.keys: list[Tensor] = []
        self.values: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.keys = [k[index] for k in self.keys]
        self.values = [v[index] for v in self.values]


class CacheGrowingBuffer:
    def __init__(self, capacity: int = 4) -> None:
        self.capacity = capacity
        self.length = 0
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, _ = k.shape
        end = self.length + T
        if self.k is None or end > self.k.shape[2]:
            size = max(end, 2 * (0 if self.k is None else self.k.shape[2]), self.capacity)
            new_k = k.new_empty(B, H, size, k.shape[-1])
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
            self.k = self.k.index_select(0, index)
            self.v = self.v.index_select(0, index)


class CacheTimeFirstLayout:
    """Stores (T, B, H, Dh), appends along dim 0, hands back (B, H, T, Dh)."""

    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        k_t, v_t = k.permute(2, 0, 1, 3), v.permute(2, 0, 1, 3)
        self.k = k_t if self.k is None else torch.cat([self.k, k_t], 0)
        self.v = v_t if self.v is None else torch.cat([self.v, v_t], 0)
        return self.k.permute(1, 2, 0, 3), self.v.permute(1, 2, 0, 3)

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[:, index]
            self.v = self.v[:, index]


def _case(name: str, code, kind: str, what: str) -> BlindCase:
    return BlindCase(check=CHECK, name=name, code=code, kind=kind, what=what)


CASES = [
    _case(
        "concatenation_not_saved",
        CacheNotStored,
        "mistake",
        "append_self returns past + new but never assigns the concatenation back, so the cache "
        "stays empty after the first step.",
    ),
    _case(
        "only_newest_kept",
        CacheOverwritten,
        "mistake",
        "append_self replaces the stored keys and values with the new ones and returns only those.",
    ),
    _case(
        "cat_on_head_axis",
        CacheCatOnHeads,
        "mistake",
        "I concatenated along dim=1, which is the head axis of (B, H, T, Dh), not time.",
    ),
    _case(
        "new_positions_first",
        CacheNewFirst,
        "mistake",
        "torch.cat([k, self.k]): the new positions are put before the cached ones.",
    ),
    _case(
        "reorder_result_discarded",
        CacheReorderNoop,
        "mistake",
        "reorder evaluates self.k[index] and self.v[index] but never assigns them, thinking the "
        "indexing works in place.",
    ),
    _case(
        "reorder_keys_only",
        CacheReorderKeysOnly,
        "mistake",
        "reorder selects the rows of the keys but forgets the values.",
    ),
    _case(
        "reorder_scatters",
        CacheReorderScatter,
        "mistake",
        "reorder writes row i to place index[i] (new[index] = old) instead of taking row index[i] "
        "into place i; only right when index is its own inverse.",
    ),
    _case(
        "reorder_on_time_axis",
        CacheReorderTimeAxis,
        "mistake",
        "reorder calls index_select(2, index), the positions, instead of the batch rows (dim 0).",
    ),
    _case(
        "zero_position_at_start",
        CacheZeroStart,
        "mistake",
        "I initialise the cache with one zero position and concatenate onto it, so there is an "
        "extra all-zero key and value in front.",
    ),
    _case(
        "fixed_buffer_never_grows",
        CacheFixedBuffer,
        "mistake",
        "A preallocated buffer of 16 positions written in place; past 16 positions it silently "
        "drops the new keys and values.",
    ),
    _case(
        "reorder_unique_rows",
        CacheReorderUnique,
        "mistake",
        "reorder keeps index.unique() to avoid copying a row twice; that drops repeated rows "
        "and sorts the rest, right only when index is increasing without repeats.",
    ),
    _case(
        "list_of_chunks",
        CacheChunks,
        "correct",
        "Keeps a list of the appended chunks, concatenates on return, reorders every chunk.",
    ),
    _case(
        "growing_buffer",
        CacheGrowingBuffer,
        "correct",
        "A preallocated buffer written in place that doubles when full, reordered with "
        "index_select; capacity is an optional argument.",
    ),
    _case(
        "time_first_layout",
        CacheTimeFirstLayout,
        "correct",
        "Stores keys and values as (T, B, H, Dh), concatenates along time and permutes back on "
        "return.",
    ),
]
