"""Blind set B30, check_kv_cache (chapter 15): the key/value cache of one decoder block as
readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


# ---------------------------------------------------------------- mistakes


class CacheReturnsNew:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return k, v  # the new positions

    def reorder(self, index: Tensor) -> None:
        self.k, self.v = self.k[index], self.v[index]


class CacheCatHeads:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=1)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=1)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k, self.v = self.k[index], self.v[index]


class CacheNewFirst:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is not None:
            k, v = torch.cat([k, self.k], dim=2), torch.cat([v, self.v], dim=2)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: Tensor) -> None:
        self.k, self.v = self.k[index], self.v[index]


class CacheReorderKeysOnly:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k = self.k.index_select(0, index)


class CacheReorderHeads:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k = self.k[:, index]
        self.v = self.v[:, index]


class CacheReorderNotAssigned:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k.index_select(0, index)
        self.v.index_select(0, index)


class CacheSharedClassList:
    keys: list = []  # noqa: RUF012
    values: list = []  # noqa: RUF012

    def __init__(self) -> None:
        pass

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.keys[:] = [k[index] for k in self.keys]
        self.values[:] = [v[index] for v in self.values]


class CacheUniqueRows:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        keep = index.unique()  # the rows that survive
        self.k, self.v = self.k[keep], self.v[keep]


class CacheFixedBuffer:
    def __init__(self) -> None:
        self.length = 0
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        if self.k is None:
            self.k = k.new_zeros(B, H, 16, Dh)  # room for 16 positions
            self.v = v.new_zeros(B, H, 16, v.shape[-1])
        self.k[:, :, self.length : self.length + T] = k
        self.v[:, :, self.length : self.length + T] = v
        self.length += T
        return self.k[:, :, : self.length], self.v[:, :, : self.length]

    def reorder(self, index: Tensor) -> None:
        self.k, self.v = self.k[index], self.v[index]


class CacheReturnsValuesFirst:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.v, self.k

    def reorder(self, index: Tensor) -> None:
        self.k, self.v = self.k[index], self.v[index]


class CacheLastStepOnly:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:  # one new token per step: add its column
            self.k = torch.cat([self.k, k[:, :, -1:]], dim=2)
            self.v = torch.cat([self.v, v[:, :, -1:]], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k, self.v = self.k[index], self.v[index]


# ---------------------------------------------------------------- correct variants


class CacheChunkList:
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


class CacheGrowingBuffer:
    def __init__(self) -> None:
        self.filled = 0
        self.k_buf: Tensor | None = None
        self.v_buf: Tensor | None = None

    def _room(self, k: Tensor, v: Tensor, needed: int) -> None:
        size = 0 if self.k_buf is None else self.k_buf.shape[2]
        if needed <= size:
            return
        size = max(needed, 2 * size, 8)
        B, H = k.shape[:2]
        new_k = k.new_zeros(B, H, size, k.shape[-1])
        new_v = v.new_zeros(B, H, size, v.shape[-1])
        if self.k_buf is not None:
            new_k[:, :, : self.filled] = self.k_buf[:, :, : self.filled]
            new_v[:, :, : self.filled] = self.v_buf[:, :, : self.filled]
        self.k_buf, self.v_buf = new_k, new_v

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.filled + k.shape[2]
        self._room(k, v, end)
        self.k_buf[:, :, self.filled : end] = k
        self.v_buf[:, :, self.filled : end] = v
        self.filled = end
        return self.k_buf[:, :, :end], self.v_buf[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.k_buf is not None:
            self.k_buf = self.k_buf[index]
            self.v_buf = self.v_buf[index]


class CacheWithCrossSlots:
    """Keys and values of self-attention; also slots for the projected memory."""

    def __init__(self) -> None:
        self.self_k: Tensor | None = None
        self.self_v: Tensor | None = None
        self.cross_k: Tensor | None = None
        self.cross_v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.self_k is None:
            self.self_k, self.self_v = k.clone(), v.clone()
        else:
            self.self_k = torch.cat((self.self_k, k), dim=2)
            self.self_v = torch.cat((self.self_v, v), dim=2)
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
        CacheReturnsNew,
        "mistake",
        "append_self stores everything but returns only the new keys and values.",
    ),
    BlindCase(
        CHECK,
        "cat_on_heads_axis",
        CacheCatHeads,
        "mistake",
        "I concatenated along dim=1, thinking of (B, T, D), but that is the heads axis here.",
    ),
    BlindCase(
        CHECK,
        "new_before_old",
        CacheNewFirst,
        "mistake",
        "I wrote torch.cat([k, self.k]), so the new positions come first.",
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
        "reorder_on_heads",
        CacheReorderHeads,
        "mistake",
        "reorder indexes [:, index], the heads axis, instead of the batch axis.",
    ),
    BlindCase(
        CHECK,
        "reorder_result_dropped",
        CacheReorderNotAssigned,
        "mistake",
        "reorder calls index_select but never assigns the result back.",
    ),
    BlindCase(
        CHECK,
        "class_level_lists",
        CacheSharedClassList,
        "mistake",
        "I declared keys = [] and values = [] in the class body, so every layer's cache "
        "shares the same lists.",
    ),
    BlindCase(
        CHECK,
        "reorder_unique_rows",
        CacheUniqueRows,
        "mistake",
        "reorder keeps index.unique(), so a row chosen twice is kept once and the order is lost.",
    ),
    BlindCase(
        CHECK,
        "fixed_buffer_no_growth",
        CacheFixedBuffer,
        "mistake",
        "I allocated a buffer of 16 positions once and never grow it.",
    ),
    BlindCase(
        CHECK,
        "returns_values_first",
        CacheReturnsValuesFirst,
        "mistake",
        "append_self returns (values, keys).",
    ),
    BlindCase(
        CHECK,
        "appends_last_position_only",
        CacheLastStepOnly,
        "mistake",
        "After the first call I append only k[:, :, -1:], assuming one new token per step.",
    ),
    BlindCase(
        CHECK,
        "chunk_list",
        CacheChunkList,
        "correct",
        "A list of the chunks appended so far, concatenated on return; reorder applies "
        "index_select to every chunk.",
    ),
    BlindCase(
        CHECK,
        "growing_buffer",
        CacheGrowingBuffer,
        "correct",
        "A preallocated buffer that doubles when full; returns views of the filled part.",
    ),
    BlindCase(
        CHECK,
        "cross_slots_and_flag",
        CacheWithCrossSlots,
        "correct",
        "torch.cat on dim 2 with the first chunk cloned; extra cross_k/cross_v slots and a "
        "cross argument to reorder that defaults to True.",
    ),
]
