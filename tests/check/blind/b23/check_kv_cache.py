"""Blind set B23, check_kv_cache (chapter 15): one decoder block's key/value cache as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


class _CatCache:
    """A right cache that concatenates; the mistakes below change one method each."""

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
            self.k = self.k.index_select(0, index)
            self.v = self.v.index_select(0, index)


# ---------------------------------------------------------------- mistakes


class CacheReturnsOnlyNew(_CatCache):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        super().append_self(k, v)
        return k, v  # I returned what came in, not everything so far


class CacheNewBeforeOld(_CatCache):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([k, self.k], dim=2)  # the new positions in front
            self.v = torch.cat([v, self.v], dim=2)
        return self.k, self.v


class CacheReorderNotStored(_CatCache):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            k = self.k.index_select(0, index)  # computed, but never written back to self
            v = self.v.index_select(0, index)
            del k, v


class CacheReorderKeysOnly(_CatCache):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[index]  # forgot the values


class CacheReorderTimeAxis(_CatCache):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(2, index)  # the position axis instead of the batch
            self.v = self.v.index_select(2, index)


class CacheSharedClassLists:
    keys: list = []  # class attributes: one list shared by every instance
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


class CacheWholeBuffer:
    def __init__(self, capacity: int = 64) -> None:
        self.capacity = capacity
        self.k: Tensor | None = None
        self.v: Tensor | None = None
        self.length = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        if self.k is None:
            self.k = k.new_zeros(B, H, self.capacity, Dh)
            self.v = v.new_zeros(B, H, self.capacity, v.shape[-1])
        self.k[:, :, self.length : self.length + T] = k
        self.v[:, :, self.length : self.length + T] = v
        self.length += T
        return self.k, self.v  # the whole buffer, zeros after `length` included

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheInversePermutation(_CatCache):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            new_k, new_v = torch.empty_like(self.k), torch.empty_like(self.v)
            new_k[index] = self.k  # row i goes TO index[i] (the inverse of what is asked)
            new_v[index] = self.v
            self.k, self.v = new_k, new_v


class CacheValuesAreKeys(_CatCache):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        keys, values = super().append_self(k, v)
        return keys, keys  # typo: keys returned twice


class CacheOnePositionPerCall:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None
        self.t = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, _, Dh = k.shape
        if self.k is None:
            self.k = k.new_zeros(B, H, 256, Dh)
            self.v = v.new_zeros(B, H, 256, v.shape[-1])
        self.k[:, :, self.t] = k[:, :, -1]  # I assumed one new position per call
        self.v[:, :, self.t] = v[:, :, -1]
        self.t += 1
        return self.k[:, :, : self.t], self.v[:, :, : self.t]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheCatOnHeads(_CatCache):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=1)  # dim=1 is the heads, not the positions
            self.v = torch.cat([self.v, v], dim=1)
        return self.k, self.v


# ---------------------------------------------------------------- correct variants


class CacheListOfChunks:
    """Every append kept as a chunk in a list; concatenated on return."""

    def __init__(self) -> None:
        self.k_chunks: list[Tensor] = []
        self.v_chunks: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k_chunks.append(k)
        self.v_chunks.append(v)
        return torch.cat(self.k_chunks, dim=-2), torch.cat(self.v_chunks, dim=-2)

    def reorder(self, index: Tensor) -> None:
        self.k_chunks = [c[index] for c in self.k_chunks]
        self.v_chunks = [c[index] for c in self.v_chunks]


class CacheDoublingBuffer:
    """A buffer that starts at 4 positions and doubles; returns views of the filled part."""

    def __init__(self, capacity: int = 4) -> None:
        self.capacity = capacity
        self.k: Tensor | None = None
        self.v: Tensor | None = None
        self.n = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.n + k.size(2)
        if self.k is None or end > self.k.size(2):
            size = max(end, self.capacity if self.k is None else 2 * self.k.size(2))
            new_k = k.new_zeros(*k.shape[:2], size, k.size(3))
            new_v = v.new_zeros(*v.shape[:2], size, v.size(3))
            if self.k is not None:
                new_k[:, :, : self.n] = self.k[:, :, : self.n]
                new_v[:, :, : self.n] = self.v[:, :, : self.n]
            self.k, self.v = new_k, new_v
        self.k[:, :, self.n : end] = k
        self.v[:, :, self.n : end] = v
        self.n = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[index.long()]
            self.v = self.v[index.long()]


class CacheEmptyTensors:
    """Starts from empty tensors instead of None; cat every time; reorder with index_select."""

    def __init__(self) -> None:
        self.k = torch.empty(0)
        self.v = torch.empty(0)

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k.numel() == 0:
            self.k, self.v = k.clone(), v.clone()
        else:
            self.k = torch.cat((self.k, k), 2)
            self.v = torch.cat((self.v, v), 2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k.numel():
            self.k = torch.index_select(self.k, 0, index)
            self.v = torch.index_select(self.v, 0, index)


CASES = [
    BlindCase(
        CHECK,
        "returns_only_new",
        CacheReturnsOnlyNew,
        "mistake",
        "append_self stored everything but returned only the new k and v",
    ),
    BlindCase(
        CHECK,
        "new_positions_first",
        CacheNewBeforeOld,
        "mistake",
        "I concatenated [new, old] instead of [old, new] along the positions",
    ),
    BlindCase(
        CHECK,
        "reorder_not_stored",
        CacheReorderNotStored,
        "mistake",
        "reorder computed the selected rows into local variables and never stored them",
    ),
    BlindCase(
        CHECK,
        "reorder_keys_only",
        CacheReorderKeysOnly,
        "mistake",
        "reorder moved the keys but forgot the values",
    ),
    BlindCase(
        CHECK,
        "reorder_on_time_axis",
        CacheReorderTimeAxis,
        "mistake",
        "reorder used index_select on dim 2 (positions) instead of dim 0 (batch)",
    ),
    BlindCase(
        CHECK,
        "class_level_lists",
        CacheSharedClassLists,
        "mistake",
        "I declared keys = [] and values = [] on the class, so all blocks share one list",
    ),
    BlindCase(
        CHECK,
        "whole_buffer_returned",
        CacheWholeBuffer,
        "mistake",
        "a zero buffer of 64 positions; I returned all of it, not the filled part",
    ),
    BlindCase(
        CHECK,
        "inverse_permutation",
        CacheInversePermutation,
        "mistake",
        "reorder wrote new[index] = old, which sends row i to index[i]",
    ),
    BlindCase(
        CHECK,
        "keys_returned_as_values",
        CacheValuesAreKeys,
        "mistake",
        "append_self returned (keys, keys): a typo for (keys, values)",
    ),
    BlindCase(
        CHECK,
        "one_position_per_call",
        CacheOnePositionPerCall,
        "mistake",
        "I assumed one new position per call and stored only k[:, :, -1]",
    ),
    BlindCase(
        CHECK,
        "cat_on_heads_axis",
        CacheCatOnHeads,
        "mistake",
        "I concatenated on dim=1 (the heads) instead of dim=2 (the positions)",
    ),
    BlindCase(
        CHECK,
        "list_of_chunks",
        CacheListOfChunks,
        "correct",
        "a list of chunks, concatenated on return; reorder indexes every chunk",
    ),
    BlindCase(
        CHECK,
        "doubling_buffer",
        CacheDoublingBuffer,
        "correct",
        "a buffer of 4 positions that doubles when full; views of the filled part returned",
    ),
    BlindCase(
        CHECK,
        "empty_tensor_start",
        CacheEmptyTensors,
        "correct",
        "starts from torch.empty(0) instead of None; cat on every append",
    ),
]
