"""Blind set B18, check_kv_cache (chapter 15): the key/value cache of one decoder block as
readers write it."""

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
            self.k = torch.cat([self.k, k], dim=1)  # (B, H, T, Dh): the T is dim 1?
            self.v = torch.cat([self.v, v], dim=1)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CachePrepend:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is not None:
            k = torch.cat([k, self.k], dim=2)  # the new positions first
            v = torch.cat([v, self.v], dim=2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReorderNoop:
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
        self.k[index]  # noqa: B018, I thought indexing was in place
        self.v[index]  # noqa: B018


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
            self.k = self.k.index_select(0, index)  # and the values? forgot them


class CacheReorderHeadAxis:
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
            self.k = self.k[:, index]  # rows ... along the wrong axis
            self.v = self.v[:, index]


class CacheReturnsNewOnly:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=2)
            self.v = torch.cat([self.v, v], dim=2)
        return k, v  # the new ones: those are the ones the step computes

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheKeepsFirstOnly:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
            return k, v
        return torch.cat([self.k, k], dim=2), torch.cat([self.v, v], dim=2)  # never stored

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheSwapsKV:
    def __init__(self) -> None:
        self.keys: list[Tensor] = []
        self.values: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.values, dim=2), torch.cat(self.keys, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.keys = [k[index] for k in self.keys]
        self.values = [v[index] for v in self.values]


class CacheInverseReorder:
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
        new_k, new_v = self.k.clone(), self.v.clone()
        new_k[index] = self.k  # row i goes to place index[i]
        new_v[index] = self.v
        self.k, self.v = new_k, new_v


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
        if self.k is not None:
            keep = torch.zeros(self.k.shape[0], dtype=torch.bool, device=index.device)
            keep[index] = True  # the rows that survive, as a mask
            self.k, self.v = self.k[keep], self.v[keep]


class CacheWholeBuffer:
    """A preallocated buffer written in place; append_self hands back all of it."""

    def __init__(self, capacity: int = 32) -> None:
        self.capacity = capacity
        self.k = None
        self.v = None
        self.length = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        if self.k is None:
            self.k = k.new_zeros(B, H, self.capacity, Dh)
            self.v = v.new_zeros(B, H, self.capacity, v.shape[-1])
        self.k[:, :, self.length : self.length + T] = k
        self.v[:, :, self.length : self.length + T] = v
        self.length += T
        return self.k, self.v  # the unfilled positions are zeros, so they do not matter

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


# ---------------------------------------------------------------- correct variants


class CacheLists:
    """Lists of per-step tensors, concatenated when asked."""

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


class CacheGrowingBuffer:
    """Preallocated buffers written in place and doubled when full, as the book describes;
    an extra ``capacity`` argument with a default, and a ``length`` attribute."""

    def __init__(self, capacity: int = 4) -> None:
        self.capacity = capacity
        self.length = 0
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def _grow(self, like_k: Tensor, like_v: Tensor, needed: int) -> None:
        B, H, _, _ = like_k.shape
        size = max(needed, self.capacity if self.k is None else 2 * self.k.shape[2])
        k = like_k.new_zeros(B, H, size, like_k.shape[-1])
        v = like_v.new_zeros(B, H, size, like_v.shape[-1])
        if self.k is not None:
            k[:, :, : self.length] = self.k[:, :, : self.length]
            v[:, :, : self.length] = self.v[:, :, : self.length]
        self.k, self.v = k, v

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.length + k.shape[2]
        if self.k is None or end > self.k.shape[2]:
            self._grow(k, v, end)
        self.k[:, :, self.length : end] = k
        self.v[:, :, self.length : end] = v
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[index].contiguous()
            self.v = self.v[index].contiguous()


class CacheDictState:
    """State in one dict; reorder with torch.index_select; an extra ``cross`` argument."""

    def __init__(self) -> None:
        self.state: dict[str, Tensor] = {}

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        for name, new in (("k", k), ("v", v)):
            old = self.state.get(name)
            self.state[name] = new if old is None else torch.cat((old, new), dim=2)
        return self.state["k"], self.state["v"]

    def reorder(self, index: Tensor, cross: bool = True) -> None:
        self.state = {name: torch.index_select(t, 0, index) for name, t in self.state.items()}

    def __len__(self) -> int:
        return 0 if "k" not in self.state else self.state["k"].shape[2]


CASES = [
    BlindCase(
        CHECK,
        "concatenates_along_heads",
        CacheCatHeads,
        "mistake",
        "I concatenated the new keys and values along dim=1, the heads, instead of the positions.",
    ),
    BlindCase(
        CHECK,
        "new_positions_first",
        CachePrepend,
        "mistake",
        "I put the new keys and values before the cached ones: torch.cat([k, self.k]).",
    ),
    BlindCase(
        CHECK,
        "reorder_does_nothing",
        CacheReorderNoop,
        "mistake",
        "My reorder indexes the tensors but never assigns the result.",
    ),
    BlindCase(
        CHECK,
        "reorder_keys_only",
        CacheReorderKeysOnly,
        "mistake",
        "reorder selects the rows of the keys and forgets the values.",
    ),
    BlindCase(
        CHECK,
        "reorder_along_heads",
        CacheReorderHeadAxis,
        "mistake",
        "reorder indexes dim 1 (self.k[:, index]) instead of the batch rows.",
    ),
    BlindCase(
        CHECK,
        "returns_new_only",
        CacheReturnsNewOnly,
        "mistake",
        "append_self stores everything but returns only the new positions' keys and values.",
    ),
    BlindCase(
        CHECK,
        "never_stores_after_first",
        CacheKeepsFirstOnly,
        "mistake",
        "append_self returns the concatenation but never stores it, so the cache keeps only "
        "the first step.",
    ),
    BlindCase(
        CHECK,
        "returns_values_then_keys",
        CacheSwapsKV,
        "mistake",
        "I return (values, keys) instead of (keys, values).",
    ),
    BlindCase(
        CHECK,
        "reorder_inverse_permutation",
        CacheInverseReorder,
        "mistake",
        "In reorder I scattered: new[index] = old, sending row i to place index[i], instead of "
        "taking row index[i] into place i.",
    ),
    BlindCase(
        CHECK,
        "reorder_as_mask",
        CacheUniqueRows,
        "mistake",
        "reorder turns index into a mask of the surviving rows, so repeated rows appear once "
        "and the order is lost.",
    ),
    BlindCase(
        CHECK,
        "returns_whole_buffer",
        CacheWholeBuffer,
        "mistake",
        "A preallocated buffer of 32 positions; append_self returns all of it, thinking the "
        "unfilled zeros do not count (a zero key still gets score 0 and a share of the weight).",
    ),
    BlindCase(
        CHECK,
        "lists_of_steps",
        CacheLists,
        "correct",
        "Keeps a list of each step's keys and values and concatenates on dim=-2 when asked.",
    ),
    BlindCase(
        CHECK,
        "growing_buffer",
        CacheGrowingBuffer,
        "correct",
        "Preallocated buffers written in place and doubled when full; a capacity argument "
        "with a default.",
    ),
    BlindCase(
        CHECK,
        "dict_state",
        CacheDictState,
        "correct",
        "State in a dict, torch.index_select in reorder, an extra cross argument and __len__.",
    ),
]
