"""Blind set B22, check_kv_cache (chapters 13 and 15): one decoder block's key/value cache."""

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
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=2)
            self.v = torch.cat([self.v, v], dim=2)
        return k, v

    def reorder(self, index: Tensor) -> None:
        self.k = self.k.index_select(0, index)
        self.v = self.v.index_select(0, index)


class CacheCatOnHeads:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=1)
            self.v = torch.cat([self.v, v], dim=1)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k = self.k[index]
        self.v = self.v[index]


class CacheNeverSaved:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
            return k, v
        return torch.cat([self.k, k], dim=2), torch.cat([self.v, v], dim=2)

    def reorder(self, index: Tensor) -> None:
        self.k = self.k[index]
        self.v = self.v[index]


class CacheKeepsOnlyLast:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            all_k, all_v = k, v
        else:
            all_k, all_v = torch.cat([self.k, k], dim=2), torch.cat([self.v, v], dim=2)
        self.k, self.v = k, v  # remember the new positions
        return all_k, all_v

    def reorder(self, index: Tensor) -> None:
        self.k = self.k[index]
        self.v = self.v[index]


class CacheReorderNoop:
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


class CacheReorderKeysOnly:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k = self.k[index]


class CacheReorderHeads:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k = self.k.index_select(1, index)
        self.v = self.v.index_select(1, index)


class CacheSharedClassLists:
    keys: list[Tensor] = []
    values: list[Tensor] = []

    def __init__(self) -> None:
        pass  # the lists are declared on the class

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.keys = [k[index] for k in self.keys]
        self.values = [v[index] for v in self.values]


class CacheReorderUnique:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        index = torch.unique(index)  # no row twice
        self.k = self.k[index]
        self.v = self.v[index]


class CacheReturnsSwapped:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.v, self.k

    def reorder(self, index: Tensor) -> None:
        self.k = self.k[index]
        self.v = self.v[index]


class CacheNewFirst:
    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([k, self.k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k = self.k[index]
        self.v = self.v[index]


class CacheNeedsBatchSize:
    def __init__(self, batch_size: int) -> None:
        self.batch_size = batch_size
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k = self.k[index]
        self.v = self.v[index]


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


class CacheDoublingBuffer:
    def __init__(self) -> None:
        self.k_buf: Tensor | None = None
        self.v_buf: Tensor | None = None
        self.n = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.n + k.shape[2]
        if self.k_buf is None or end > self.k_buf.shape[2]:
            size = max(end, 4, 0 if self.k_buf is None else 2 * self.k_buf.shape[2])
            new_k = k.new_zeros(k.shape[0], k.shape[1], size, k.shape[3])
            new_v = v.new_zeros(v.shape[0], v.shape[1], size, v.shape[3])
            if self.k_buf is not None:
                new_k[:, :, : self.n] = self.k_buf[:, :, : self.n]
                new_v[:, :, : self.n] = self.v_buf[:, :, : self.n]
            self.k_buf, self.v_buf = new_k, new_v
        self.k_buf[:, :, self.n : end] = k
        self.v_buf[:, :, self.n : end] = v
        self.n = end
        return self.k_buf[:, :, :end], self.v_buf[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.k_buf is not None:
            self.k_buf = self.k_buf[index]
            self.v_buf = self.v_buf[index]


class CacheDictEmptyStart:
    def __init__(self) -> None:
        self.store: dict[str, Tensor] = {}

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        for name, new in (("k", k), ("v", v)):
            old = self.store.get(name, new[:, :, :0])
            self.store[name] = torch.cat((old, new), dim=2)
        return self.store["k"], self.store["v"]

    def reorder(self, index: Tensor) -> None:
        for name in list(self.store):
            self.store[name] = torch.index_select(self.store[name], 0, index.long())


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
        CacheCatOnHeads,
        "mistake",
        "I concatenated on dim=1, thinking it is the time axis.",
    ),
    BlindCase(
        CHECK,
        "never_saved",
        CacheNeverSaved,
        "mistake",
        "I return the concatenation but never store it, so the cache keeps only the first step.",
    ),
    BlindCase(
        CHECK,
        "keeps_only_last",
        CacheKeepsOnlyLast,
        "mistake",
        "After each call I store only the newest keys and values, not the concatenation.",
    ),
    BlindCase(
        CHECK,
        "reorder_result_discarded",
        CacheReorderNoop,
        "mistake",
        "reorder calls index_select but throws the result away (I thought it was in place).",
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
        "reorder_on_heads",
        CacheReorderHeads,
        "mistake",
        "reorder selects along dim 1 (the heads) instead of the batch.",
    ),
    BlindCase(
        CHECK,
        "shared_class_lists",
        CacheSharedClassLists,
        "mistake",
        "I declared the key and value lists on the class, so every instance (every decoder "
        "block) appends to the same lists.",
    ),
    BlindCase(
        CHECK,
        "reorder_unique",
        CacheReorderUnique,
        "mistake",
        "reorder applies torch.unique to the index first, so a row that should appear twice "
        "appears once.",
    ),
    BlindCase(
        CHECK,
        "returns_v_k",
        CacheReturnsSwapped,
        "mistake",
        "append_self returns (values, keys), the other order.",
    ),
    BlindCase(
        CHECK,
        "keys_new_first",
        CacheNewFirst,
        "mistake",
        "For the keys I wrote torch.cat([k, self.k]): the new keys go in front of the old "
        "ones while the values are appended behind.",
    ),
    BlindCase(
        CHECK,
        "needs_batch_size",
        CacheNeedsBatchSize,
        "mistake",
        "My __init__ takes the batch size as a required argument.",
    ),
    BlindCase(
        CHECK,
        "chunk_list",
        CacheChunkList,
        "correct",
        "Lists of chunks concatenated on dim=-2 at every call; reorder indexes each chunk.",
    ),
    BlindCase(
        CHECK,
        "doubling_buffer",
        CacheDoublingBuffer,
        "correct",
        "A preallocated buffer that doubles when full; append writes in place and returns "
        "views of the filled part.",
    ),
    BlindCase(
        CHECK,
        "dict_empty_start",
        CacheDictEmptyStart,
        "correct",
        "A dict of tensors starting from an empty (B, H, 0, Dh) slice; torch.index_select.",
    ),
]
