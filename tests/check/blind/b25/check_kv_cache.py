"""Blind set B25, check_kv_cache (chapter 15): the key/value cache of one decoder block as
readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


class _Concat:
    """A right cache by concatenation; the mistakes below change one method."""

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


# ---------------------------------------------------------------- mistakes


class CacheReturnsNewOnly(_Concat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        super().append_self(k, v)
        return k, v  # the new keys and values


class CacheConcatHeads(_Concat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=1)  # (B, H, T, Dh): add along T
            self.v = torch.cat([self.v, v], dim=1)
        return self.k, self.v


class CacheNewFirst(_Concat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([k, self.k], dim=2)
            self.v = torch.cat([v, self.v], dim=2)
        return self.k, self.v


class CacheReorderNoop(_Concat):
    def reorder(self, index: Tensor) -> None:
        pass  # the keys of a row do not change when rows move


class CacheReorderHeads(_Concat):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(1, index)
            self.v = self.v.index_select(1, index)


class CacheReorderKeysOnly(_Concat):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[index]


class CacheReorderTruncates(_Concat):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:  # finished rows leave the batch
            self.k, self.v = self.k[: len(index)], self.v[: len(index)]


class CacheReorderGather(_Concat):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = torch.gather(self.k, 0, index)
            self.v = torch.gather(self.v, 0, index)


class CacheReorderReturnsCopy(_Concat):
    def reorder(self, index: Tensor) -> _Concat:
        new = type(self)()
        if self.k is not None:
            new.k, new.v = self.k[index], self.v[index]
        return new


class CacheSharedClassList:
    keys: list = []  # noqa: RUF012
    values: list = []  # noqa: RUF012

    def __init__(self) -> None:
        pass  # the lists start empty

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.keys[:] = [k[index] for k in self.keys]
        self.values[:] = [v[index] for v in self.values]


class CacheFixedBuffer:
    def __init__(self) -> None:
        self.capacity, self.length = 16, 0
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        if self.k is None:
            self.k = k.new_zeros(B, H, self.capacity, Dh)
            self.v = v.new_zeros(B, H, self.capacity, v.shape[-1])
        self.k[:, :, self.length : self.length + T] = k
        self.v[:, :, self.length : self.length + T] = v
        self.length += T
        return self.k[:, :, : self.length], self.v[:, :, : self.length]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheWholeBuffer:
    def __init__(self) -> None:
        self.length = 0
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.length + k.shape[2]
        if self.k is None or end > self.k.shape[2]:
            size = max(16, 2 * end)
            new_k = k.new_zeros(*k.shape[:2], size, k.shape[3])
            new_v = v.new_zeros(*v.shape[:2], size, v.shape[3])
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


class CacheNeedsCapacity(_Concat):
    def __init__(self, capacity: int) -> None:
        super().__init__()
        self.capacity = capacity


# ---------------------------------------------------------------- correct variants


class CacheChunkList:
    def __init__(self) -> None:
        self.keys: list[Tensor] = []
        self.values: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        if len(self.keys) > 1:  # keep one chunk, so the next step concatenates two
            self.keys = [torch.cat(self.keys, dim=-2)]
            self.values = [torch.cat(self.values, dim=-2)]
        return self.keys[0], self.values[0]

    def reorder(self, index: Tensor) -> None:
        self.keys = [k.index_select(0, index) for k in self.keys]
        self.values = [v.index_select(0, index) for v in self.values]


class CacheGrowingBuffer:
    def __init__(self, capacity: int = 4) -> None:
        self.capacity = capacity
        self.length = 0
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.length + k.size(2)
        if self.k is None:
            size = max(self.capacity, end)
            self.k = k.new_empty(k.size(0), k.size(1), size, k.size(3))
            self.v = v.new_empty(v.size(0), v.size(1), size, v.size(3))
        elif end > self.k.size(2):
            extra = max(end, 2 * self.k.size(2)) - self.k.size(2)
            self.k = torch.cat([self.k, self.k.new_empty(*self.k.shape[:2], extra, k.size(3))], 2)
            self.v = torch.cat([self.v, self.v.new_empty(*self.v.shape[:2], extra, v.size(3))], 2)
        self.k[:, :, self.length : end] = k
        self.v[:, :, self.length : end] = v
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[index]
            self.v = self.v[index]


class CacheDict:
    def __init__(self) -> None:
        self.state: dict[str, Tensor] = {}

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        for name, new in (("k", k), ("v", v)):
            old = self.state.get(name)
            self.state[name] = new if old is None else torch.cat((old, new), dim=2)
        return self.state["k"], self.state["v"]

    def reorder(self, index: Tensor) -> None:
        self.state = {name: t[index.to(t.device)] for name, t in self.state.items()}


CASES = [
    BlindCase(
        CHECK,
        "returns_new_positions_only",
        CacheReturnsNewOnly,
        "mistake",
        "append_self stores everything but returns only the keys and values just added.",
    ),
    BlindCase(
        CHECK,
        "concatenated_on_heads",
        CacheConcatHeads,
        "mistake",
        "I concatenated along dim=1, thinking of (B, T, ...), which is the heads axis here.",
    ),
    BlindCase(
        CHECK,
        "new_positions_first",
        CacheNewFirst,
        "mistake",
        "torch.cat([k, self.k]): the new keys put before the old ones.",
    ),
    BlindCase(
        CHECK,
        "reorder_does_nothing",
        CacheReorderNoop,
        "mistake",
        "I left reorder empty: I thought a row's keys stay where they are.",
    ),
    BlindCase(
        CHECK,
        "reorder_on_heads",
        CacheReorderHeads,
        "mistake",
        "reorder with index_select(1, index), along the heads instead of the batch.",
    ),
    BlindCase(
        CHECK,
        "reorder_keys_only",
        CacheReorderKeysOnly,
        "mistake",
        "reorder moves the keys and forgets the values.",
    ),
    BlindCase(
        CHECK,
        "reorder_truncates",
        CacheReorderTruncates,
        "mistake",
        "reorder keeps the first len(index) rows, as if rows only ever left from the end.",
    ),
    BlindCase(
        CHECK,
        "reorder_with_gather",
        CacheReorderGather,
        "mistake",
        "reorder with torch.gather(self.k, 0, index), which needs an index of the same shape.",
    ),
    BlindCase(
        CHECK,
        "reorder_returns_new_cache",
        CacheReorderReturnsCopy,
        "mistake",
        "reorder returns a new reordered cache and leaves this one as it was.",
    ),
    BlindCase(
        CHECK,
        "class_level_lists",
        CacheSharedClassList,
        "mistake",
        "I declared keys = [] and values = [] in the class body, so every block's cache "
        "shares the same lists.",
    ),
    BlindCase(
        CHECK,
        "fixed_buffer_of_16",
        CacheFixedBuffer,
        "mistake",
        "A buffer of 16 positions, written in place, that never grows.",
    ),
    BlindCase(
        CHECK,
        "returns_whole_buffer",
        CacheWholeBuffer,
        "mistake",
        "A growing buffer, but append_self returns the whole buffer, unfilled positions included.",
    ),
    BlindCase(
        CHECK,
        "capacity_required",
        CacheNeedsCapacity,
        "mistake",
        "__init__ takes a capacity argument without a default.",
    ),
    BlindCase(
        CHECK,
        "one_chunk_list",
        CacheChunkList,
        "correct",
        "Lists of chunks merged with cat along dim -2; index_select in reorder.",
    ),
    BlindCase(
        CHECK,
        "growing_buffer",
        CacheGrowingBuffer,
        "correct",
        "A preallocated buffer that doubles when full, returning views of the filled part; "
        "an optional capacity.",
    ),
    BlindCase(
        CHECK,
        "dict_of_tensors",
        CacheDict,
        "correct",
        "The keys and values in a dict, concatenated with a loop over the two names.",
    ),
]
