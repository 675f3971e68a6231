"""Blind cases for check_kv_cache (chapter 15), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


class _Concat:
    """An empty cache that concatenates; the subclasses change one thing."""

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


class ReturnsOnlyNew(_Concat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        super().append_self(k, v)
        return k, v


class NewPositionsFirst(_Concat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([k, self.k], dim=2)
            self.v = torch.cat([v, self.v], dim=2)
        return self.k, self.v


class ReorderDoesNothing(_Concat):
    def reorder(self, index: Tensor) -> None:
        pass  # I thought the decoder reorders its own inputs


class ReorderAlongHeads(_Concat):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[:, index], self.v[:, index]


class ReorderWithBooleanMask(_Concat):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            keep = torch.zeros(self.k.shape[0], dtype=torch.bool, device=self.k.device)
            keep[index] = True
            self.k, self.v = self.k[keep], self.v[keep]


class ReorderKeysOnly(_Concat):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(0, index)


class SharedClassList:
    keys: list = []  # a class attribute: shared by every instance
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


class ReturnsBeforeAdding(_Concat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        past_k = k[:, :, :0] if self.k is None else self.k
        past_v = v[:, :, :0] if self.v is None else self.v
        super().append_self(k, v)
        return past_k, past_v


class ChunkList:
    """Correct: a list of chunks per instance, concatenated on demand."""

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


class GrowingBuffer:
    """Correct: preallocated buffers written in place, doubled when full."""

    def __init__(self, capacity: int = 4) -> None:
        self.capacity = capacity
        self.length = 0
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.length + k.shape[2]
        if self.k is None or end > self.k.shape[2]:
            size = max(end, self.capacity, 2 * (0 if self.k is None else self.k.shape[2]))
            new_k = k.new_zeros(*k.shape[:2], size, k.shape[3])
            new_v = v.new_zeros(*v.shape[:2], size, v.shape[3])
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
            self.k = self.k[index].clone()
            self.v = self.v[index].clone()


CASES = [
    BlindCase(
        CHECK,
        "returns_only_new",
        ReturnsOnlyNew,
        "mistake",
        "I stored the concatenation but returned only the new keys and values",
    ),
    BlindCase(
        CHECK,
        "new_positions_first",
        NewPositionsFirst,
        "mistake",
        "I concatenated the new positions before the cached ones",
    ),
    BlindCase(
        CHECK,
        "reorder_does_nothing",
        ReorderDoesNothing,
        "mistake",
        "I left reorder empty, thinking the decoder reorders its own inputs",
    ),
    BlindCase(
        CHECK,
        "reorder_along_heads",
        ReorderAlongHeads,
        "mistake",
        "I indexed dimension 1 in reorder (k[:, index]), the heads, not the batch",
    ),
    BlindCase(
        CHECK,
        "reorder_with_boolean_mask",
        ReorderWithBooleanMask,
        "mistake",
        "I turned index into a boolean mask over the rows, so repeated rows appear once "
        "and the order is lost",
    ),
    BlindCase(
        CHECK,
        "reorder_keys_only",
        ReorderKeysOnly,
        "mistake",
        "reorder moves the keys but I forgot the values",
    ),
    BlindCase(
        CHECK,
        "shared_class_list",
        SharedClassList,
        "mistake",
        "I kept the keys and values in lists defined on the class, so every block's cache "
        "shares them",
    ),
    BlindCase(
        CHECK,
        "returns_before_adding",
        ReturnsBeforeAdding,
        "mistake",
        "I returned what the cache held before the new positions were added",
    ),
    BlindCase(
        CHECK,
        "chunk_list",
        ChunkList,
        "correct",
        "a list of chunks per instance, torch.cat on every call, index_select to reorder",
    ),
    BlindCase(
        CHECK,
        "growing_buffer",
        GrowingBuffer,
        "correct",
        "preallocated buffers written in place and doubled when full, an optional "
        "capacity argument",
    ),
]
