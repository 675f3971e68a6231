"""Blind cases for check_kv_cache (chapter 15), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


# ---- mistakes -------------------------------------------------------------------------------


class ReturnsOnlyNew:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k, v):
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return k, v  # meant to return self.k, self.v

    def reorder(self, index):
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class ConcatOverHeads:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k, v):
        self.k = k if self.k is None else torch.cat([self.k, k], dim=1)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=1)
        return self.k, self.v

    def reorder(self, index):
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class ReorderIgnored:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k, v):
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index):
        pass  # the rows stay where they are, I thought nothing needs doing


class ReorderOverTime:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k, v):
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index):
        if self.k is not None:
            self.k = self.k.index_select(2, index)
            self.v = self.v.index_select(2, index)


class ReorderKeysOnly:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k, v):
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index):
        if self.k is not None:
            self.k = self.k[index]


class SharedClassLists:
    keys: list = []  # class attributes: shared by every cache object
    values: list = []

    def __init__(self) -> None:
        pass

    def append_self(self, k, v):
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index):
        for i in range(len(self.keys)):
            self.keys[i] = self.keys[i][index]
            self.values[i] = self.values[i][index]


class ReorderThroughBooleanMask:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k, v):
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index):
        if self.k is not None:
            keep = torch.zeros(self.k.shape[0], dtype=torch.bool)
            keep[index] = True  # rows to keep
            self.k, self.v = self.k[keep], self.v[keep]


class NewPositionsFirst:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k, v):
        self.k = k if self.k is None else torch.cat([k, self.k], dim=2)
        self.v = v if self.v is None else torch.cat([v, self.v], dim=2)
        return self.k, self.v

    def reorder(self, index):
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class KeysReturnedTwice:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k, v):
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.k

    def reorder(self, index):
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


# ---- reader's slip ------------------------------------------------------------------------------


class _SimpleCache:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k, v):
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index):
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


_one_cache_object = _SimpleCache()


# ---- correct variants ---------------------------------------------------------------------------


class ConcatAndIndexSelect:
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

    def reorder(self, index: Tensor, cross: bool = True) -> None:
        if self.k is not None:
            self.k = self.k.index_select(0, index)
            self.v = self.v.index_select(0, index)


class ChunkLists:
    def __init__(self) -> None:
        self.k_chunks: list[Tensor] = []
        self.v_chunks: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k_chunks.append(k)
        self.v_chunks.append(v)
        return torch.cat(self.k_chunks, dim=2), torch.cat(self.v_chunks, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.k_chunks = [c[index] for c in self.k_chunks]
        self.v_chunks = [c[index] for c in self.v_chunks]


class PreallocatedBuffer:
    def __init__(self) -> None:
        self.buf_k = self.buf_v = None
        self.n = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        need = self.n + T
        if self.buf_k is None or need > self.buf_k.shape[2]:
            size = max(8, need, 0 if self.buf_k is None else 2 * self.buf_k.shape[2])
            new_k = k.new_zeros(B, H, size, Dh)
            new_v = v.new_zeros(B, H, size, v.shape[-1])
            if self.buf_k is not None:
                new_k[:, :, : self.n] = self.buf_k[:, :, : self.n]
                new_v[:, :, : self.n] = self.buf_v[:, :, : self.n]
            self.buf_k, self.buf_v = new_k, new_v
        self.buf_k[:, :, self.n : need] = k
        self.buf_v[:, :, self.n : need] = v
        self.n = need
        return self.buf_k[:, :, :need], self.buf_v[:, :, :need]

    def reorder(self, index: Tensor) -> None:
        if self.buf_k is not None:
            self.buf_k = self.buf_k[index].contiguous()
            self.buf_v = self.buf_v[index].contiguous()


CASES = [
    BlindCase(
        CHECK,
        "returns_only_new",
        ReturnsOnlyNew,
        "mistake",
        "I stored everything but returned only the new keys and values",
    ),
    BlindCase(
        CHECK,
        "concat_over_heads",
        ConcatOverHeads,
        "mistake",
        "I concatenated along dim 1, the heads, instead of dim 2, the positions",
    ),
    BlindCase(CHECK, "reorder_ignored", ReorderIgnored, "mistake", "I left reorder empty"),
    BlindCase(
        CHECK,
        "reorder_over_time",
        ReorderOverTime,
        "mistake",
        "I applied the index to dim 2, the positions, instead of dim 0, the batch rows",
    ),
    BlindCase(
        CHECK,
        "reorder_keys_only",
        ReorderKeysOnly,
        "mistake",
        "I reordered the keys and forgot the values",
    ),
    BlindCase(
        CHECK,
        "shared_class_lists",
        SharedClassLists,
        "mistake",
        "I declared the key and value lists as class attributes, so every cache object shares them",
    ),
    BlindCase(
        CHECK,
        "reorder_through_boolean_mask",
        ReorderThroughBooleanMask,
        "mistake",
        "I turned index into a boolean mask of rows to keep, which loses repeated rows and the order",
    ),
    BlindCase(
        CHECK,
        "new_positions_first",
        NewPositionsFirst,
        "mistake",
        "I concatenated the new positions before the old ones",
    ),
    BlindCase(
        CHECK,
        "keys_returned_twice",
        KeysReturnedTwice,
        "mistake",
        "I returned the keys twice instead of (keys, values)",
    ),
    BlindCase(
        CHECK,
        "one_cache_object",
        _one_cache_object,
        "mistake",
        "I passed one cache object I had built instead of the class",
    ),
    BlindCase(
        CHECK,
        "concat_and_index_select",
        ConcatAndIndexSelect,
        "correct",
        "I concatenated on dim -2 and reordered with index_select, with an optional cross argument",
    ),
    BlindCase(
        CHECK,
        "chunk_lists",
        ChunkLists,
        "correct",
        "I kept a list of per-step chunks, concatenated them on each append and reordered every chunk",
    ),
    BlindCase(
        CHECK,
        "preallocated_buffer",
        PreallocatedBuffer,
        "correct",
        "I wrote into preallocated buffers that double when full and return views of the filled part",
    ),
]
