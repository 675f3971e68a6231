"""Blind set B27, check_kv_cache (chapter 15): one decoder block's key/value cache as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


# ---------------------------------------------------------------- mistakes


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


class CacheCatHeads:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=1)  # after the batch axis
            self.v = torch.cat([self.v, v], dim=1)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CachePrepends:
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


class CacheReorderNoop:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is not None:
            k, v = torch.cat([self.k, k], dim=2), torch.cat([self.v, v], dim=2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> None:
        self.k.index_select(0, index)  # reorders the batch rows
        self.v.index_select(0, index)


class CacheReorderHeads:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is not None:
            k, v = torch.cat([self.k, k], dim=2), torch.cat([self.v, v], dim=2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> None:
        self.k = self.k[:, index]
        self.v = self.v[:, index]


class CacheReorderKeysOnly:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is not None:
            k, v = torch.cat([self.k, k], dim=2), torch.cat([self.v, v], dim=2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> None:
        self.k = self.k.index_select(0, index)


class CacheClassLevelLists:
    keys: list = []  # the positions' keys, in order
    values: list = []

    def __init__(self) -> None:
        pass

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.keys[:] = [k[index] for k in self.keys]
        self.values[:] = [v[index] for v in self.values]


class CacheNeverStores:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
            return k, v
        return torch.cat([self.k, k], dim=2), torch.cat([self.v, v], dim=2)

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
            self.k = k.new_zeros(B, H, 64, Dh)  # room for 64 positions
            self.v = v.new_zeros(B, H, 64, v.shape[-1])
        self.k[:, :, self.length : self.length + T] = k
        self.v[:, :, self.length : self.length + T] = v
        self.length += T
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheScatterReorder:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is not None:
            k, v = torch.cat([self.k, k], dim=2), torch.cat([self.v, v], dim=2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> None:
        new_k, new_v = torch.zeros_like(self.k), torch.zeros_like(self.v)
        new_k[index] = self.k  # row i goes to place index[i]
        new_v[index] = self.v
        self.k, self.v = new_k, new_v


class CacheStacks:
    def __init__(self) -> None:
        self.ks: list[Tensor] = []
        self.vs: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.ks.append(k)
        self.vs.append(v)
        return torch.stack(self.ks, dim=2), torch.stack(self.vs, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.ks = [k[index] for k in self.ks]
        self.vs = [v[index] for v in self.vs]


class CacheNeedsShape:
    def __init__(self, batch_size: int, num_heads: int, head_dim: int) -> None:
        self.k = torch.zeros(batch_size, num_heads, 0, head_dim)
        self.v = torch.zeros(batch_size, num_heads, 0, head_dim)

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = torch.cat([self.k, k], dim=2)
        self.v = torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k, self.v = self.k[index], self.v[index]


class CacheReorderReturns:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is not None:
            k, v = torch.cat([self.k, k], dim=2), torch.cat([self.v, v], dim=2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> tuple[Tensor, Tensor]:
        return self.k.index_select(0, index), self.v.index_select(0, index)


class CacheGrowWithoutCopy:
    def __init__(self) -> None:
        self.k = None
        self.v = None
        self.length = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        end = self.length + T
        if self.k is None or end > self.k.shape[2]:
            size = max(4, end, 0 if self.k is None else 2 * self.k.shape[2])
            self.k = k.new_zeros(B, H, size, Dh)  # a bigger buffer
            self.v = v.new_zeros(B, H, size, v.shape[-1])
        self.k[:, :, self.length : end] = k
        self.v[:, :, self.length : end] = v
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


# ---------------------------------------------------------------- correct variants


class CacheChunks:
    """A list of chunks, concatenated when asked; reorder applies to every chunk."""

    def __init__(self) -> None:
        self.k_chunks: list[Tensor] = []
        self.v_chunks: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k_chunks.append(k)
        self.v_chunks.append(v)
        return torch.cat(self.k_chunks, dim=-2), torch.cat(self.v_chunks, dim=-2)

    def reorder(self, index: Tensor) -> None:
        self.k_chunks = [c.index_select(0, index) for c in self.k_chunks]
        self.v_chunks = [c.index_select(0, index) for c in self.v_chunks]


class CacheDoublingBuffer:
    """Buffers that double when full, written in place; views of the filled part returned."""

    def __init__(self, capacity: int = 2) -> None:
        self.capacity = capacity
        self.filled = 0
        self.keys: Tensor | None = None
        self.values: Tensor | None = None

    def _ensure(self, like_k: Tensor, like_v: Tensor, needed: int) -> None:
        have = 0 if self.keys is None else self.keys.size(2)
        if needed <= have:
            return
        size = max(self.capacity, needed, 2 * have)
        B, H, _, Dk = like_k.shape
        keys = like_k.new_empty(B, H, size, Dk)
        values = like_v.new_empty(B, H, size, like_v.size(-1))
        if self.keys is not None:
            keys[:, :, : self.filled].copy_(self.keys[:, :, : self.filled])
            values[:, :, : self.filled].copy_(self.values[:, :, : self.filled])
        self.keys, self.values = keys, values

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.filled + k.size(2)
        self._ensure(k, v, end)
        self.keys[:, :, self.filled : end] = k
        self.values[:, :, self.filled : end] = v
        self.filled = end
        return self.keys[:, :, :end], self.values[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.keys is None:
            return
        self.keys = self.keys[index]
        self.values = self.values[index]


class CacheWithCrossSlots:
    """torch.cat into attributes; the cross-attention slots of the book's cache and a
    ``cross`` argument too, so that it also fits the book's ``KVCache``."""

    def __init__(self) -> None:
        self.self_k: Tensor | None = None
        self.self_v: Tensor | None = None
        self.cross_k: Tensor | None = None
        self.cross_v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.self_k is None:
            self.self_k, self.self_v = k.clone(), v.clone()
        else:
            self.self_k = torch.cat((self.self_k, k), 2)
            self.self_v = torch.cat((self.self_v, v), 2)
        return self.self_k, self.self_v

    def reorder(self, index: Tensor, cross: bool = True) -> None:
        if self.self_k is not None:
            self.self_k = torch.index_select(self.self_k, 0, index)
            self.self_v = torch.index_select(self.self_v, 0, index)
        if cross and self.cross_k is not None:
            self.cross_k = torch.index_select(self.cross_k, 0, index)
            self.cross_v = torch.index_select(self.cross_v, 0, index)


CASES = [
    BlindCase(
        CHECK,
        "returns_new_only",
        CacheReturnsNewOnly,
        "mistake",
        "append_self stores the new keys but returns only them, not every position so far.",
    ),
    BlindCase(
        CHECK,
        "cat_on_heads_axis",
        CacheCatHeads,
        "mistake",
        "I concatenated along dim=1, which is the heads axis, not the positions.",
    ),
    BlindCase(
        CHECK,
        "prepends",
        CachePrepends,
        "mistake",
        "I put the new keys and values in front of the cached ones.",
    ),
    BlindCase(
        CHECK,
        "reorder_result_discarded",
        CacheReorderNoop,
        "mistake",
        "reorder calls index_select but does not assign the result.",
    ),
    BlindCase(
        CHECK,
        "reorder_heads_axis",
        CacheReorderHeads,
        "mistake",
        "reorder indexes dim 1 (self.k[:, index]) instead of the batch rows.",
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
        CacheClassLevelLists,
        "mistake",
        "I declared the lists of keys and values on the class, so every block's cache shares them.",
    ),
    BlindCase(
        CHECK,
        "never_stores",
        CacheNeverStores,
        "mistake",
        "append_self returns the concatenation but only stores the first step's keys.",
    ),
    BlindCase(
        CHECK,
        "whole_buffer_returned",
        CacheWholeBuffer,
        "mistake",
        "I preallocate 64 positions and return the whole buffer, empty positions included.",
    ),
    BlindCase(
        CHECK,
        "reorder_scatters",
        CacheScatterReorder,
        "mistake",
        "reorder writes row i to place index[i] (new[index] = old) instead of taking rows index.",
    ),
    BlindCase(
        CHECK,
        "stacks_steps",
        CacheStacks,
        "mistake",
        "I keep one tensor per step and torch.stack them on dim 2 instead of concatenating.",
    ),
    BlindCase(
        CHECK,
        "init_needs_shape",
        CacheNeedsShape,
        "mistake",
        "My __init__ takes batch_size, num_heads and head_dim to make empty tensors.",
    ),
    BlindCase(
        CHECK,
        "reorder_returns_tensors",
        CacheReorderReturns,
        "mistake",
        "reorder returns the reordered keys and values instead of keeping them.",
    ),
    BlindCase(
        CHECK,
        "grow_without_copy",
        CacheGrowWithoutCopy,
        "mistake",
        "When the buffer is full I allocate a twice as long one but forget to copy the old "
        "positions into it.",
    ),
    BlindCase(
        CHECK,
        "list_of_chunks",
        CacheChunks,
        "correct",
        "A list of chunks concatenated on dim -2 when asked; index_select on each chunk.",
    ),
    BlindCase(
        CHECK,
        "doubling_buffer",
        CacheDoublingBuffer,
        "correct",
        "Buffers written in place that double when full, starting at 2 positions (an optional "
        "capacity argument).",
    ),
    BlindCase(
        CHECK,
        "with_cross_slots",
        CacheWithCrossSlots,
        "correct",
        "torch.cat into self_k/self_v, plus cross_k/cross_v slots and an optional cross "
        "argument to reorder.",
    ),
]
