"""Blind set B29, check_kv_cache (chapter 15): one decoder block's key/value cache as readers
write it."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


# ---------------------------------------------------------------- mistakes


class CacheCatHeads:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=1)  # "the positions axis"
            self.v = torch.cat([self.v, v], dim=1)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReturnsNew:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return k, v  # the new keys and values

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
        pass  # the rows are reordered by the caller


class CacheReorderTime:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(2, index)
            self.v = self.v.index_select(2, index)


class CacheKeepsLastStep:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            all_k, all_v = k, v
        else:
            all_k, all_v = torch.cat([self.k, k], dim=2), torch.cat([self.v, v], dim=2)
        self.k, self.v = k, v  # remember this step
        return all_k, all_v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheInverseIndex:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            where = index.argsort()  # where each kept row goes
            self.k, self.v = self.k[where], self.v[where]


class CacheClassLists:
    keys: list[Tensor] = []  # filled step by step
    values: list[Tensor] = []

    def __init__(self) -> None:
        self.keys.clear()
        self.values.clear()

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.keys[:] = [k[index] for k in self.keys]
        self.values[:] = [v[index] for v in self.values]


class CacheNewFirst:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([k, self.k], dim=2)
        self.v = v if self.v is None else torch.cat([v, self.v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheWholeBuffer:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None
        self.length = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        end = self.length + T
        if self.k is None or end > self.k.shape[2]:
            size = max(16, end, 0 if self.k is None else 2 * self.k.shape[2])
            new_k, new_v = k.new_zeros(B, H, size, Dh), v.new_zeros(B, H, size, Dh)
            if self.k is not None:
                new_k[:, :, : self.length] = self.k[:, :, : self.length]
                new_v[:, :, : self.length] = self.v[:, :, : self.length]
            self.k, self.v = new_k, new_v
        self.k[:, :, self.length : end] = k
        self.v[:, :, self.length : end] = v
        self.length = end
        return self.k, self.v  # the buffers

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


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
            self.k = self.k.index_select(0, index)


class CacheStack:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.stack([self.k, k], dim=2)
            self.v = torch.stack([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheGather:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.gather(0, index)
            self.v = self.v.gather(0, index)


class CacheReorderHeads:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[:, index]  # the rows of the (B, H, T, Dh) tensor
            self.v = self.v[:, index]


# ---------------------------------------------------------------- correct variants


class CacheConcat:
    """torch.cat along the positions axis; rows reordered by indexing."""

    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat((self.k, k), dim=-2)
            self.v = torch.cat((self.v, v), dim=-2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheChunks:
    """A list of the steps' chunks, joined when asked; an empty cache is two empty lists."""

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


class CacheBuffer:
    """Preallocated buffers that double when full; views of the filled part returned."""

    def __init__(self, capacity: int = 4) -> None:
        self.capacity = capacity
        self.filled = 0
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        n = k.size(2)
        need = self.filled + n
        if self.k is None or need > self.k.size(2):
            size = max(need, self.capacity if self.k is None else 2 * self.k.size(2))
            k_buf = k.new_empty(k.size(0), k.size(1), size, k.size(3))
            v_buf = v.new_empty(v.size(0), v.size(1), size, v.size(3))
            if self.k is not None:
                k_buf[:, :, : self.filled].copy_(self.k[:, :, : self.filled])
                v_buf[:, :, : self.filled].copy_(self.v[:, :, : self.filled])
            self.k, self.v = k_buf, v_buf
        self.k[:, :, self.filled : need].copy_(k)
        self.v[:, :, self.filled : need].copy_(v)
        self.filled = need
        return self.k[:, :, :need], self.v[:, :, :need]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(0, index)
            self.v = self.v.index_select(0, index)


@dataclass
class CacheDataclass:
    """A dataclass with empty (B, H, 0, Dh)-style tensors made at the first append; reorder
    takes an optional flag for projected memory."""

    self_k: Tensor | None = None
    self_v: Tensor | None = None
    cross_k: Tensor | None = None
    cross_v: Tensor | None = None
    steps: list[int] = field(default_factory=list)

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.self_k is None:
            self.self_k = k[:, :, :0]
            self.self_v = v[:, :, :0]
        self.self_k = torch.cat([self.self_k, k], 2)
        self.self_v = torch.cat([self.self_v, v], 2)
        self.steps.append(k.shape[2])
        return self.self_k, self.self_v

    def reorder(self, index: Tensor, cross: bool = True) -> None:
        for name in ("self_k", "self_v") + (("cross_k", "cross_v") if cross else ()):
            t = getattr(self, name)
            if t is not None:
                setattr(self, name, t[index])


CASES = [
    BlindCase(
        CHECK,
        "cat_along_heads",
        CacheCatHeads,
        "mistake",
        "I concatenated the new keys along dim=1, thinking that is the positions axis.",
    ),
    BlindCase(
        CHECK,
        "returns_only_new",
        CacheReturnsNew,
        "mistake",
        "append_self stores everything but returns only the new keys and values.",
    ),
    BlindCase(
        CHECK,
        "reorder_does_nothing",
        CacheReorderNoop,
        "mistake",
        "I left reorder empty, thinking the caller reorders the rows.",
    ),
    BlindCase(
        CHECK,
        "reorder_time_axis",
        CacheReorderTime,
        "mistake",
        "reorder uses index_select on dim 2, the positions, instead of the batch rows.",
    ),
    BlindCase(
        CHECK,
        "keeps_last_step_only",
        CacheKeepsLastStep,
        "mistake",
        "I return the old keys joined with the new ones, but store only this step's keys.",
    ),
    BlindCase(
        CHECK,
        "inverse_permutation",
        CacheInverseIndex,
        "mistake",
        "In reorder I used index.argsort(), as if index said where each row goes.",
    ),
    BlindCase(
        CHECK,
        "class_level_lists",
        CacheClassLists,
        "mistake",
        "I declared the key and value lists as class attributes, so every block's cache shares "
        "them.",
    ),
    BlindCase(
        CHECK,
        "new_keys_first",
        CacheNewFirst,
        "mistake",
        "I concatenated [new, old] instead of [old, new].",
    ),
    BlindCase(
        CHECK,
        "whole_buffer_returned",
        CacheWholeBuffer,
        "mistake",
        "I preallocate buffers and write in place, but return the whole buffer instead of the "
        "filled part.",
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
        "stack_not_cat",
        CacheStack,
        "mistake",
        "I used torch.stack instead of torch.cat to join the old and the new keys.",
    ),
    BlindCase(
        CHECK,
        "gather_for_rows",
        CacheGather,
        "mistake",
        "I reordered with tensor.gather(0, index), which needs an index of the tensor's shape.",
    ),
    BlindCase(
        CHECK,
        "reorder_heads_axis",
        CacheReorderHeads,
        "mistake",
        "reorder indexes k[:, index], the heads axis, instead of the batch rows.",
    ),
    BlindCase(
        CHECK,
        "concat_dim_minus_2",
        CacheConcat,
        "correct",
        "torch.cat along dim=-2, rows reordered with k[index].",
    ),
    BlindCase(
        CHECK,
        "chunk_lists",
        CacheChunks,
        "correct",
        "Python lists of per-step chunks joined with torch.cat when asked; reorder on every chunk.",
    ),
    BlindCase(
        CHECK,
        "doubling_buffer",
        CacheBuffer,
        "correct",
        "Preallocated buffers written with copy_, doubled when full, views of the filled part "
        "returned; a capacity argument with a default.",
    ),
    BlindCase(
        CHECK,
        "dataclass_with_cross",
        CacheDataclass,
        "correct",
        "A dataclass starting from empty slices, with cross_k/cross_v fields and reorder(index, "
        "cross=True).",
    ),
]
