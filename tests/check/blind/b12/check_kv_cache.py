"""Blind set B12, check_kv_cache (chapter 15): one decoder block's key/value cache as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


class _Cat:
    """A right cache by concatenation; the mistakes change one method."""

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


class CacheReturnsNew(_Cat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        super().append_self(k, v)
        return k, v  # returned the new keys only


class CacheCatOnFeatures(_Cat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=-1)  # -1, thinking of "the end"
            self.v = torch.cat([self.v, v], dim=-1)
        return self.k, self.v


class CacheNoReorder(_Cat):
    def reorder(self, index: Tensor) -> None:
        pass  # the beams stay in their rows, I thought


class CacheReorderKeysOnly(_Cat):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[index]  # forgot the values


class CacheReorderHeads(_Cat):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[:, index]  # (B, H, ...): picked along dim 1
            self.v = self.v[:, index]


class CacheSharedClassList(_Cat):
    keys: list = []  # class attributes: every instance shares these lists
    values: list = []

    def __init__(self) -> None:
        pass

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index: Tensor) -> None:
        for i in range(len(self.keys)):
            self.keys[i] = self.keys[i][index]
            self.values[i] = self.values[i][index]


class CachePrepends(_Cat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([k, self.k], dim=2)  # newest first
            self.v = torch.cat([v, self.v], dim=2)
        return self.k, self.v


class CacheInverseIndex(_Cat):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            inverse = index.argsort()  # "undo" the permutation
            self.k, self.v = self.k[inverse], self.v[inverse]


class CacheLastPositionOnly(_Cat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        # one new token per step, so I kept the last position only
        return super().append_self(k[:, :, -1:], v[:, :, -1:])


class CacheSortedIndex(_Cat):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            rows = index.unique()  # the rows to keep, each once, in order
            self.k, self.v = self.k[rows], self.v[rows]


class CacheOverwrite(_Cat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k.clone(), v.clone()
        else:
            T = k.shape[2]
            self.k = torch.cat([self.k[:, :, T:], k], 2)  # a sliding window of fixed length
            self.v = torch.cat([self.v[:, :, T:], v], 2)
        return self.k, self.v


# ---------------------------------------------------------------- correct variants


class CacheLists(_Cat):
    """Lists of chunks per instance, concatenated when asked; reorder on every chunk."""

    def __init__(self) -> None:
        self.ks: list[Tensor] = []
        self.vs: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.ks.append(k)
        self.vs.append(v)
        return torch.cat(self.ks, dim=-2), torch.cat(self.vs, dim=-2)

    def reorder(self, index: Tensor) -> None:
        self.ks = [k[index] for k in self.ks]
        self.vs = [v[index] for v in self.vs]


class CacheBuffer:
    """A preallocated buffer that doubles when full, written in place; cross_k/cross_v kept
    for the book's decoder and an extra capacity argument."""

    def __init__(self, capacity: int = 4) -> None:
        self.capacity = capacity
        self.length = 0
        self.k: Tensor | None = None
        self.v: Tensor | None = None
        self.cross_k: Tensor | None = None
        self.cross_v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.length + k.shape[2]
        if self.k is None or end > self.k.shape[2]:
            size = max(end, self.capacity, 2 * (0 if self.k is None else self.k.shape[2]))
            B, H, _, D = k.shape
            nk, nv = k.new_zeros(B, H, size, D), v.new_zeros(B, H, size, v.shape[-1])
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
        if self.cross_k is not None:
            self.cross_k, self.cross_v = self.cross_k[index], self.cross_v[index]


class CacheDict:
    """A dict of tensors, torch.cat along dim=-2 and torch.index_select; a __len__ helper."""

    def __init__(self) -> None:
        self.store: dict[str, Tensor] = {}

    def __len__(self) -> int:
        return 0 if "k" not in self.store else self.store["k"].shape[-2]

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        for name, new in (("k", k), ("v", v)):
            old = self.store.get(name)
            self.store[name] = new if old is None else torch.cat((old, new), dim=-2)
        return self.store["k"], self.store["v"]

    def reorder(self, index: Tensor) -> None:
        self.store = {n: torch.index_select(t, 0, index) for n, t in self.store.items()}


CASES = [
    BlindCase(
        CHECK,
        "returns_only_new",
        CacheReturnsNew,
        "mistake",
        "append_self stores everything but returns only the new keys and values.",
    ),
    BlindCase(
        CHECK,
        "cat_on_feature_axis",
        CacheCatOnFeatures,
        "mistake",
        "I concatenated along dim=-1 (the features) instead of the time axis.",
    ),
    BlindCase(
        CHECK,
        "reorder_does_nothing",
        CacheNoReorder,
        "mistake",
        "reorder does nothing; I thought the rows did not move.",
    ),
    BlindCase(
        CHECK,
        "reorder_keys_only",
        CacheReorderKeysOnly,
        "mistake",
        "reorder reindexes the keys and forgets the values.",
    ),
    BlindCase(
        CHECK,
        "reorder_along_heads",
        CacheReorderHeads,
        "mistake",
        "reorder indexes dim 1 (heads) instead of the batch.",
    ),
    BlindCase(
        CHECK,
        "class_level_lists",
        CacheSharedClassList,
        "mistake",
        "I kept the keys in class-level lists, so all layers' caches share them.",
    ),
    BlindCase(
        CHECK,
        "new_positions_first",
        CachePrepends,
        "mistake",
        "I put the new keys before the old ones in torch.cat.",
    ),
    BlindCase(
        CHECK,
        "inverse_permutation",
        CacheInverseIndex,
        "mistake",
        "reorder applies index.argsort(), thinking it must undo a permutation.",
    ),
    BlindCase(
        CHECK,
        "keeps_last_position_only",
        CacheLastPositionOnly,
        "mistake",
        "append_self keeps only the last new position (one token per step, I assumed).",
    ),
    BlindCase(
        CHECK,
        "unique_rows",
        CacheSortedIndex,
        "mistake",
        "reorder keeps index.unique(), so repeated rows are lost and the order sorted.",
    ),
    BlindCase(
        CHECK,
        "fixed_length_window",
        CacheOverwrite,
        "mistake",
        "I drop as many old positions as I add, a fixed-size window.",
    ),
    BlindCase(
        CHECK,
        "chunk_lists",
        CacheLists,
        "correct",
        "Per-instance lists of chunks, concatenated on demand; reorder on each chunk.",
    ),
    BlindCase(
        CHECK,
        "doubling_buffer",
        CacheBuffer,
        "correct",
        "A preallocated doubling buffer written in place, views returned; cross_k/cross_v "
        "and an extra capacity argument.",
    ),
    BlindCase(
        CHECK,
        "dict_store",
        CacheDict,
        "correct",
        "A dict of tensors, cat along dim=-2, index_select; a __len__ helper.",
    ),
]
