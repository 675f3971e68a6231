"""Blind set B14, check_kv_cache (chapter 15): one decoder block's key/value cache."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


class _Cat:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None


# ---------------------------------------------------------------- mistakes


class CacheReturnsNewOnly(_Cat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return k, v  # the new positions only

    def reorder(self, index: Tensor) -> None:
        self.k, self.v = self.k[index], self.v[index]


class CacheCatHeads(_Cat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=1)  # dim 1 = heads
        self.v = v if self.v is None else torch.cat([self.v, v], dim=1)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k, self.v = self.k[index], self.v[index]


class CacheNewFirst(_Cat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([k, self.k], dim=2)
        self.v = v if self.v is None else torch.cat([v, self.v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k, self.v = self.k[index], self.v[index]


class CacheReorderNoop(_Cat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        pass  # the new tokens already come in the right order


class CacheReorderKeysOnly(_Cat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k = self.k.index_select(0, index)


class CacheReorderMask(_Cat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        keep = torch.isin(torch.arange(self.k.shape[0]), index)  # rows to keep, as a mask
        self.k, self.v = self.k[keep], self.v[keep]


class CacheReorderTruncate(_Cat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        n = len(index)  # keep as many rows as asked for
        self.k, self.v = self.k[:n], self.v[:n]


class CacheDoubleAppend(_Cat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return torch.cat([self.k, k], dim=2), torch.cat([self.v, v], dim=2)

    def reorder(self, index: Tensor) -> None:
        self.k, self.v = self.k[index], self.v[index]


class CacheSharedClassList:
    keys: list = []  # class attributes: one list for every instance
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


class CacheReorderHeadAxis(_Cat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k, self.v = self.k[:, index], self.v[:, index]  # the hypotheses axis, I thought


# ---------------------------------------------------------------- correct variants


class CacheChunks:
    """A list of chunks, concatenated on every call; reorder indexes each chunk."""

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


class CacheBuffer:
    """A preallocated buffer grown by 8 positions at a time, views returned."""

    def __init__(self) -> None:
        self.buf_k: Tensor | None = None
        self.buf_v: Tensor | None = None
        self.n = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.n + k.shape[2]
        if self.buf_k is None or end > self.buf_k.shape[2]:
            B, H, _, D = k.shape
            new_k = k.new_zeros(B, H, end + 8, D)
            new_v = v.new_zeros(B, H, end + 8, v.shape[-1])
            if self.buf_k is not None:
                new_k[:, :, : self.n] = self.buf_k[:, :, : self.n]
                new_v[:, :, : self.n] = self.buf_v[:, :, : self.n]
            self.buf_k, self.buf_v = new_k, new_v
        self.buf_k[:, :, self.n : end] = k
        self.buf_v[:, :, self.n : end] = v
        self.n = end
        return self.buf_k[:, :, :end], self.buf_v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.buf_k is not None:
            self.buf_k, self.buf_v = self.buf_k[index], self.buf_v[index]


class CacheExtras:
    """Plain concatenation plus cross_k/cross_v slots, __len__ and a reset helper."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.self_k = self.self_v = self.cross_k = self.cross_v = None

    def __len__(self) -> int:
        return 0 if self.self_k is None else self.self_k.shape[2]

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.self_k is not None:
            k = torch.cat((self.self_k, k), 2)
            v = torch.cat((self.self_v, v), 2)
        self.self_k, self.self_v = k, v
        return k, v

    def reorder(self, index: Tensor, cross: bool = True) -> None:
        for name in ("self_k", "self_v") + (("cross_k", "cross_v") if cross else ()):
            t = getattr(self, name)
            if t is not None:
                setattr(self, name, t[index])


CASES = [
    BlindCase(
        CHECK,
        "returns_new_only",
        CacheReturnsNewOnly,
        "mistake",
        "append_self stores everything but returns only the new keys and values.",
    ),
    BlindCase(
        CHECK,
        "cat_on_heads",
        CacheCatHeads,
        "mistake",
        "I concatenated on dim=1, which is the heads axis, not time.",
    ),
    BlindCase(
        CHECK,
        "new_positions_first",
        CacheNewFirst,
        "mistake",
        "I concatenated [new, old], so the positions come out in the wrong order.",
    ),
    BlindCase(CHECK, "reorder_noop", CacheReorderNoop, "mistake", "I left reorder empty."),
    BlindCase(
        CHECK,
        "reorder_keys_only",
        CacheReorderKeysOnly,
        "mistake",
        "reorder moves the keys but forgets the values.",
    ),
    BlindCase(
        CHECK,
        "reorder_as_mask",
        CacheReorderMask,
        "mistake",
        "reorder keeps the rows whose number is in index, with a boolean mask.",
    ),
    BlindCase(
        CHECK,
        "reorder_truncates",
        CacheReorderTruncate,
        "mistake",
        "reorder keeps the first len(index) rows.",
    ),
    BlindCase(
        CHECK,
        "new_appended_twice",
        CacheDoubleAppend,
        "mistake",
        "I append to the cache and then concatenate the new keys once more.",
    ),
    BlindCase(
        CHECK,
        "class_level_lists",
        CacheSharedClassList,
        "mistake",
        "The lists are class attributes, so every block's cache shares them.",
    ),
    BlindCase(
        CHECK,
        "reorder_head_axis",
        CacheReorderHeadAxis,
        "mistake",
        "reorder indexes dim 1 instead of the batch axis.",
    ),
    BlindCase(
        CHECK,
        "list_of_chunks",
        CacheChunks,
        "correct",
        "Keeps a list of chunks and concatenates them on each call.",
    ),
    BlindCase(
        CHECK,
        "growing_buffer",
        CacheBuffer,
        "correct",
        "A preallocated buffer grown 8 positions at a time, returning views.",
    ),
    BlindCase(
        CHECK,
        "extras_and_cross_slots",
        CacheExtras,
        "correct",
        "Concatenation plus cross slots, __len__, reset and an optional cross flag.",
    ),
]
